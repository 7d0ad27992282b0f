// Standard kernel lookup and launch, and the (empty) module support:
// cpu_ref loads no driver-native code, so module_load is UNSUPPORTED for
// every format and no module handle is ever live.
#include "kernels/kernel.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#include "device.hpp"
#include "kit/dtype.hpp"
#include "stream.hpp"

namespace cpu_ref {
namespace {

// Every family's kernels, in this order; one line per family.
constexpr KernelList (*kFamilies[])() = {
    elementwise_kernels, reduction_kernels, linalg_kernels, nn_kernels,
    indexing_kernels,    conv_kernels,      random_kernels, optim_kernels,
};

const Kernel& get_kernel(const hal_kernel* handle) {
  if (handle == nullptr) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "kernel handle is NULL");
  }
  for (const auto& device : devices()) {
    if (const Kernel* kernel = element_of_handle(device->kernels(), handle)) {
      return *kernel;
    }
  }
  fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not a cpu_ref kernel handle",
       static_cast<const void*>(handle));
}

// Bytes of tensor data a launch reads and writes, counted as every tensor
// argument's elements (an upper bound: broadcast elements count each time).
// Called after the kernel validated its arguments.
uint64_t tensor_bytes(const hal_arg* args, uint32_t num_args) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < num_args; ++i) {
    if (args[i].kind != HAL_ARG_TENSOR) {
      continue;
    }
    const hal_tensor& tensor = args[i].value.tensor;
    auto bytes = static_cast<uint64_t>(driver_kit::dtype_size(tensor.dtype));
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

std::vector<Kernel> make_standard_kernels(const Device* device) {
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
  return guard("module_load", [&] {
    get_device(device);
    require_non_null(format, "format");
    require_non_null(out_module, "out_module");
    if (data == nullptr && size != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "data is NULL");
    }
    fail(HAL_STATUS_UNSUPPORTED,
         "module format \"{}\" is not supported; cpu_ref offers only the "
         "standard "
         "kernel set",
         format);
  });
}

hal_status* module_unload(hal_module* module) {
  return guard("module_unload", [&] {
    require_non_null(module, "module");
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} is not a live module (cpu_ref loads none)",
         static_cast<const void*>(module));
  });
}

hal_status* kernel_lookup(hal_device* device_handle, hal_module* module,
                          const char* name, hal_kernel** out_kernel) {
  return guard("kernel_lookup", [&] {
    Device& device = get_device(device_handle);
    require_non_null(name, "name");
    require_non_null(out_kernel, "out_kernel");
    if (module != nullptr) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{} is not a live module (cpu_ref loads none)",
           static_cast<const void*>(module));
    }
    for (const Kernel& kernel : device.kernels()) {
      if (std::strcmp(kernel.def->name, name) == 0) {
        *out_kernel = kernel.handle();
        return;
      }
    }
    fail(HAL_STATUS_NOT_FOUND, "no standard kernel named \"{}\"", name);
  });
}

hal_status* launch(hal_stream* stream_handle, hal_kernel* kernel_handle,
                   const hal_arg* args, uint32_t num_args) {
  return guard("launch", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    const Kernel& kernel = get_kernel(kernel_handle);
    if (kernel.device != stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "kernel {} of device {} cannot run on a stream of device {}",
           kernel.def->name, kernel.device->ordinal(),
           stream->device()->ordinal());
    }
    // prepare() validates the arguments tensor_bytes() reads.
    Stream::Operation operation =
        kernel.def->prepare(*kernel.device, args, num_args);
    stream->enqueue(std::move(operation), tensor_bytes(args, num_args));
  });
}

}  // namespace cpu_ref
