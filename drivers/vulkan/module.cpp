// Kernel lookup and launch; custom SPIR-V modules.
#include "module.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "device.hpp"
#include "kit/handles.hpp"
#include "stream.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kExecutionModelGLCompute = 5;

driver_kit::HandleRegistry<Module, hal_module>& module_registry() {
  static auto* registry =
      new driver_kit::HandleRegistry<Module, hal_module>("module");
  return *registry;
}

// Custom kernels by handle (standard ones are found by address range).
std::mutex g_custom_mutex;
std::unordered_map<const hal_kernel*, Kernel*>& custom_kernels() {
  static auto* kernels = new std::unordered_map<const hal_kernel*, Kernel*>;
  return *kernels;
}

// The GLCompute entry point names of a SPIR-V module (INVALID_ARGUMENT if
// it is not SPIR-V).
std::vector<std::string> entry_points(const uint32_t* words, size_t count) {
  if (count < 5 || words[0] != kSpirvMagic) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "data is not a SPIR-V module (bad magic or size)");
  }
  std::vector<std::string> entries;
  for (size_t at = 5; at < count;) {
    const uint32_t length = words[at] >> 16;
    const uint32_t opcode = words[at] & 0xffff;
    if (length == 0 || at + length > count) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "truncated SPIR-V instruction at word {}", at);
    }
    if (opcode == kOpEntryPoint && length >= 4 &&
        words[at + 1] == kExecutionModelGLCompute) {
      const char* name = reinterpret_cast<const char*>(&words[at + 3]);
      entries.emplace_back(name, strnlen(name, size_t{length - 3} * 4));
    }
    at += length;
  }
  return entries;
}

const Kernel& get_kernel(const hal_kernel* handle) {
  if (handle == nullptr) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "kernel handle is NULL");
  }
  for (const auto& device : devices()) {
    if (const Kernel* kernel =
            driver_kit::element_of_handle(device->kernels(), handle)) {
      return *kernel;
    }
  }
  std::lock_guard lock(g_custom_mutex);
  auto it = custom_kernels().find(handle);
  if (it == custom_kernels().end()) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not a live vulkan kernel handle",
         static_cast<const void*>(handle));
  }
  return *it->second;
}

std::string pipeline_prefix(const Module& module) {
  return fmt::format("module {}:", static_cast<const void*>(&module));
}

// The custom-kernel launch convention of module.hpp.
void launch_custom(Stream& stream, const Kernel& kernel, const hal_arg* args,
                   uint32_t num_args) {
  Device& device = stream.device();
  driver_kit::ArgChecker check(kernel.entry.c_str(), device, args, num_args,
                               num_args);
  ArgBlock block;
  uint64_t count = 1;
  bool counted = false;
  for (uint32_t i = 0; i < num_args; ++i) {
    switch (check.kind(i)) {
      case HAL_ARG_TENSOR: {
        const driver_kit::TensorArg tensor = check.tensor(i, "tensor");
        if (!counted) {
          count = static_cast<uint64_t>(tensor.num_elements);
          counted = true;
        }
        block.tensor(tensor);
        break;
      }
      case HAL_ARG_I64:
        block.i64(check.int_value(i, "scalar"));
        break;
      case HAL_ARG_F64:
        block.f64(check.float_value(i, "scalar"));
        break;
      default:
        fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: argument {} has kind {}, not tensor, i64 or f64",
             kernel.entry, i, check.kind(i));
    }
  }
  block.u64(count);
  const VkPipeline pipeline =
      device.pipeline(pipeline_prefix(*kernel.module) + kernel.entry,
                      kernel.module->shader, kernel.entry.c_str(), {});
  stream.record_dispatch(pipeline, block.slots(), count);
}

}  // namespace

hal_status* module_load(hal_device* device_handle, const char* format,
                        const void* data, uint64_t size,
                        hal_module** out_module) {
  return driver_kit::guard("module_load", [&] {
    Device& device = get_device(device_handle);
    driver_kit::require_non_null(format, "format");
    driver_kit::require_non_null(out_module, "out_module");
    if (data == nullptr && size != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "data is NULL");
    }
    if (std::strcmp(format, "spirv") != 0) {
      fail(HAL_STATUS_UNSUPPORTED,
           "module format \"{}\" is not supported; vulkan loads \"spirv\"",
           format);
    }
    if (size % 4 != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "SPIR-V size {} is not a multiple of 4",
           size);
    }
    std::vector<uint32_t> words(size / 4);
    if (size != 0) std::memcpy(words.data(), data, size);
    auto module = std::make_shared<Module>();
    module->device = &device;
    module->entries = entry_points(words.data(), words.size());
    module->shader = device.create_module(words.data(), size);
    *out_module = module_registry().add(std::move(module));
  });
}

hal_status* module_unload(hal_module* handle) {
  return driver_kit::guard("module_unload", [&] {
    std::shared_ptr<Module> module = module_registry().remove(handle);
    {
      std::lock_guard lock(g_custom_mutex);
      for (const auto& [name, kernel] : module->kernels) {
        custom_kernels().erase(kernel->handle());
      }
    }
    module->device->drop_pipelines(pipeline_prefix(*module));
    vkDestroyShaderModule(module->device->vk(), module->shader, nullptr);
  });
}

hal_status* kernel_lookup(hal_device* device_handle, hal_module* module_handle,
                          const char* name, hal_kernel** out_kernel) {
  return driver_kit::guard("kernel_lookup", [&] {
    Device& device = get_device(device_handle);
    driver_kit::require_non_null(name, "name");
    driver_kit::require_non_null(out_kernel, "out_kernel");
    if (module_handle == nullptr) {
      for (const Kernel& kernel : device.kernels()) {
        if (std::strcmp(kernel.def->name, name) == 0) {
          *out_kernel = kernel.handle();
          return;
        }
      }
      fail(HAL_STATUS_NOT_FOUND, "no standard kernel named \"{}\"", name);
    }
    std::shared_ptr<Module> module = module_registry().get(module_handle);
    if (module->device != &device) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "module belongs to another device");
    }
    std::lock_guard lock(g_custom_mutex);
    auto it = module->kernels.find(name);
    if (it == module->kernels.end()) {
      if (std::find(module->entries.begin(), module->entries.end(), name) ==
          module->entries.end()) {
        fail(HAL_STATUS_NOT_FOUND, "module has no compute entry point \"{}\"",
             name);
      }
      auto kernel = std::make_unique<Kernel>(
          Kernel{&device, nullptr, module.get(), name});
      custom_kernels()[kernel->handle()] = kernel.get();
      it = module->kernels.emplace(name, std::move(kernel)).first;
    }
    *out_kernel = it->second->handle();
  });
}

hal_status* launch(hal_stream* stream_handle, hal_kernel* kernel_handle,
                   const hal_arg* args, uint32_t num_args) {
  return driver_kit::guard("launch", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    const Kernel& kernel = get_kernel(kernel_handle);
    if (kernel.device != &stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "kernel of device {} cannot run on a stream of device {}",
           kernel.device->ordinal(), stream->device().ordinal());
    }
    if (kernel.def != nullptr) {
      KernelLaunch launch(*stream, kernel.def->name);
      kernel.def->prepare(launch, args, num_args);
    } else {
      launch_custom(*stream, kernel, args, num_args);
    }
    stream->end_operation();
  });
}

}  // namespace vulkan
