// Standard kernel lookup and launch, and the (empty) module support:
// cpu_ref loads no driver-native code, so module_load is UNSUPPORTED for
// every format and no module handle is ever live.
#include "kernels/kernel.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "device.h"
#include "kit/dtype.h"
#include "stream.h"

namespace cpu_ref {
namespace {

// Every family's kernels, in this order; one line per family.
constexpr KernelList (*kFamilies[])() = {
    ElementwiseKernels, ReductionKernels, LinalgKernels, NnKernels,
    IndexingKernels,    ConvKernels,      RandomKernels, OptimKernels,
};

const Kernel& GetKernel(const hal_kernel* handle) {
  if (handle == nullptr) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "kernel handle is NULL");
  }
  for (const auto& device : Devices()) {
    if (const Kernel* kernel = ElementOfHandle(device->kernels(), handle)) {
      return *kernel;
    }
  }
  Fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not a cpu_ref kernel handle",
       static_cast<const void*>(handle));
}

// Bytes of tensor data a launch reads and writes, counted as every tensor
// argument's elements (an upper bound: broadcast elements count each time).
// Called after the kernel validated its arguments.
uint64_t TensorBytes(const hal_arg* args, uint32_t num_args) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < num_args; ++i) {
    if (args[i].kind != HAL_ARG_TENSOR) {
      continue;
    }
    const hal_tensor& tensor = args[i].value.tensor;
    auto bytes = static_cast<uint64_t>(driver_kit::DtypeSize(tensor.dtype));
    for (int32_t d = 0; d < tensor.rank; ++d) {
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(tensor.sizes[d]),
                                 &bytes)) {
        return Stream::kNeverInline;
      }
    }
    if (__builtin_add_overflow(total, bytes, &total)) {
      return Stream::kNeverInline;
    }
  }
  return total;
}

}  // namespace

std::vector<Kernel> MakeStandardKernels(const Device* device) {
  std::vector<Kernel> kernels;
  for (KernelList (*family)() : kFamilies) {
    for (const KernelDef* def : family()) {
      kernels.push_back({device, def});
    }
  }
  return kernels;
}

hal_status* module_load(hal_device* device, const char* format,
                        const void* data, uint64_t size,
                        hal_module** out_module) {
  return Guard("module_load", [&] {
    GetDevice(device);
    RequireNonNull(format, "format");
    RequireNonNull(out_module, "out_module");
    if (data == nullptr && size != 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "data is NULL");
    }
    Fail(HAL_STATUS_UNSUPPORTED,
         "module format \"{}\" is not supported; cpu_ref offers only the "
         "standard "
         "kernel set",
         format);
  });
}

hal_status* module_unload(hal_module* module) {
  return Guard("module_unload", [&] {
    RequireNonNull(module, "module");
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} is not a live module (cpu_ref loads none)",
         static_cast<const void*>(module));
  });
}

hal_status* kernel_lookup(hal_device* device_handle, hal_module* module,
                          const char* name, hal_kernel** out_kernel) {
  return Guard("kernel_lookup", [&] {
    Device& device = GetDevice(device_handle);
    RequireNonNull(name, "name");
    RequireNonNull(out_kernel, "out_kernel");
    if (module != nullptr) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{} is not a live module (cpu_ref loads none)",
           static_cast<const void*>(module));
    }
    for (const Kernel& kernel : device.kernels()) {
      if (std::strcmp(kernel.def->name, name) == 0) {
        *out_kernel = kernel.handle();
        return;
      }
    }
    Fail(HAL_STATUS_NOT_FOUND, "no standard kernel named \"{}\"", name);
  });
}

hal_status* launch(hal_stream* stream_handle, hal_kernel* kernel_handle,
                   const hal_arg* args, uint32_t num_args) {
  return Guard("launch", [&] {
    std::shared_ptr<Stream> stream = GetStream(stream_handle);
    const Kernel& kernel = GetKernel(kernel_handle);
    if (kernel.device != stream->device()) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "kernel {} of device {} cannot run on a stream of device {}",
           kernel.def->name, kernel.device->ordinal(),
           stream->device()->ordinal());
    }
    // prepare() validates the arguments TensorBytes() reads.
    Stream::Operation operation =
        kernel.def->prepare(*kernel.device, args, num_args);
    stream->Enqueue(std::move(operation), TensorBytes(args, num_args));
  });
}

}  // namespace cpu_ref
