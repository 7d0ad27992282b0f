// Instance creation, device selection and the device entries.
#include "device.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "hal/standard_kernels.h"
#include "kernels/kernel.hpp"
#include "kit/handles.hpp"
#include "module.hpp"
#include "shaders/shader_table.hpp"
#include "stream.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;
using driver_kit::log;

std::atomic<uint64_t> g_validation_messages{0};

// True when environment variable `name` is "1".
bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::string_view(value) == "1";
}

bool validation_requested() { return env_flag("HAL_VULKAN_VALIDATION"); }

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  g_validation_messages.fetch_add(1);
  log(HAL_LOG_ERROR,
      fmt::format("vulkan validation: {}",
                  data->pMessage ? data->pMessage : "(no text)"));
  return VK_FALSE;
}

struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Device>> devices;
};

VkInstance create_instance() {
  uint32_t version = VK_API_VERSION_1_0;
  vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2) {
    log(HAL_LOG_WARN,
        "vulkan: the Vulkan loader is older than 1.2; no devices");
    return VK_NULL_HANDLE;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "hal";
  app.pEngineName = "hal_driver_vulkan";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;

  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkDebugUtilsMessengerCreateInfoEXT messenger{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = on_validation_message;
  const bool validate = validation_requested();
  if (validate) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    if (std::none_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& p) {
                       return std::strcmp(p.layerName, layer) == 0;
                     })) {
      fail(HAL_STATUS_UNAVAILABLE,
           "HAL_VULKAN_VALIDATION=1 but {} is not installed "
           "(Debian: vulkan-validationlayers)",
           layer);
    }
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &extension;
    // The messenger chained here also covers instance creation; the one
    // created below covers the rest.
    messenger.pNext = &features;
    info.pNext = &messenger;
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = vkCreateInstance(&info, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    log(HAL_LOG_INFO, "vulkan: no Vulkan driver (ICD) installed; no devices");
    return VK_NULL_HANDLE;
  }
  check_vk(result, "vkCreateInstance");
  if (validate) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerEXT handle;
    messenger.pNext = nullptr;
    check_vk(create(instance, &messenger, nullptr, &handle),
             "vkCreateDebugUtilsMessengerEXT");
  }
  return instance;
}

// Why `physical` cannot be a HAL device, or "" when it can.
std::string missing_requirement(VkPhysicalDevice physical) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) {
    return "Vulkan 1.2 is required";
  }
  VkPhysicalDeviceVulkan11Features v11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v11};
  VkPhysicalDeviceFeatures2 features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
  vkGetPhysicalDeviceFeatures2(physical, &features);
  std::vector<std::string> missing;
  if (!v12.bufferDeviceAddress) missing.push_back("bufferDeviceAddress");
  if (!v12.timelineSemaphore) missing.push_back("timelineSemaphore");
  if (!features.features.shaderInt64) missing.push_back("shaderInt64");
  if (!v12.storageBuffer8BitAccess)
    missing.push_back("storageBuffer8BitAccess");
  if (!v12.shaderInt8) missing.push_back("shaderInt8");
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  if (std::none_of(families.begin(), families.end(),
                   [](const VkQueueFamilyProperties& f) {
                     return f.queueFlags & VK_QUEUE_COMPUTE_BIT;
                   })) {
    missing.push_back("a compute queue");
  }
  if (missing.empty()) {
    return "";
  }
  std::string reason = "lacks";
  for (const std::string& m : missing) {
    reason += " " + m;
  }
  return reason;
}

Instance& get_instance() {
  // Created once, never destroyed: a driver library is not unloaded, and
  // tearing devices down in static destructors races with the ICD's own.
  static Instance* instance = [] {
    auto* created = new Instance;
    created->instance = create_instance();
    if (created->instance == VK_NULL_HANDLE) {
      return created;
    }
    uint32_t count = 0;
    check_vk(vkEnumeratePhysicalDevices(created->instance, &count, nullptr),
             "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> physical(count);
    check_vk(
        vkEnumeratePhysicalDevices(created->instance, &count, physical.data()),
        "vkEnumeratePhysicalDevices");
    for (VkPhysicalDevice device : physical) {
      VkPhysicalDeviceProperties props;
      vkGetPhysicalDeviceProperties(device, &props);
      const std::string reason = missing_requirement(device);
      if (!reason.empty()) {
        log(HAL_LOG_WARN, fmt::format("vulkan: {} is not a HAL device: {}",
                                      props.deviceName, reason));
        continue;
      }
      const auto ordinal = static_cast<int32_t>(created->devices.size());
      created->devices.push_back(std::make_unique<Device>(ordinal, device));
    }
    return created;
  }();
  return *instance;
}

const char* vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x106B:
      return "Apple";
    case 0x10005:
      return "Mesa";
    default:
      return "unknown";
  }
}

void copy_string(char* out, size_t capacity, std::string_view text) {
  const size_t n = std::min(capacity - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

uint64_t validation_message_count() { return g_validation_messages.load(); }

void check_vk(VkResult result, const char* what) {
  switch (result) {
    case VK_SUCCESS:
      return;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_TOO_MANY_OBJECTS:
      fail(HAL_STATUS_OUT_OF_MEMORY, "{} failed: out of memory (VkResult {})",
           what, static_cast<int>(result));
    case VK_ERROR_DEVICE_LOST:
      fail(HAL_STATUS_DEVICE_LOST, "{} failed: device lost", what);
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      fail(HAL_STATUS_UNSUPPORTED, "{} failed: not supported (VkResult {})",
           what, static_cast<int>(result));
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      fail(HAL_STATUS_UNAVAILABLE,
           "{} failed: initialization failed (VkResult {})", what,
           static_cast<int>(result));
    default:
      fail(HAL_STATUS_INTERNAL, "{} failed: VkResult {}", what,
           static_cast<int>(result));
  }
}

Device::Device(int32_t ordinal, VkPhysicalDevice physical)
    : ordinal_(ordinal), physical_(physical) {
  VkPhysicalDeviceVulkan12Properties props12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &props12};
  vkGetPhysicalDeviceProperties2(physical, &props2);
  properties_ = props2.properties;
  driver_info_ = fmt::format("{} {}", props12.driverName, props12.driverInfo);

  VkPhysicalDeviceVulkan11Features v11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v11};
  VkPhysicalDeviceFeatures2 available{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
  vkGetPhysicalDeviceFeatures2(physical, &available);

  // Enable exactly what the shaders may use.
  VkPhysicalDeviceVulkan11Features on11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  on11.storageBuffer16BitAccess = v11.storageBuffer16BitAccess;
  VkPhysicalDeviceVulkan12Features on12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &on11};
  on12.bufferDeviceAddress = VK_TRUE;
  on12.timelineSemaphore = VK_TRUE;
  on12.storageBuffer8BitAccess = VK_TRUE;
  on12.shaderInt8 = VK_TRUE;
  on12.shaderFloat16 = v12.shaderFloat16;
  VkPhysicalDeviceFeatures2 enabled{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &on12};
  enabled.features.shaderInt64 = VK_TRUE;
  enabled.features.shaderInt16 = available.features.shaderInt16;
  enabled.features.shaderFloat64 = available.features.shaderFloat64;

  dtypes_ = HAL_DTYPES_REQUIRED | HAL_DTYPE_BIT(HAL_DTYPE_I8) |
            HAL_DTYPE_BIT(HAL_DTYPE_U8);
  if (available.features.shaderFloat64) dtypes_ |= HAL_DTYPE_BIT(HAL_DTYPE_F64);
  if (v12.shaderFloat16 && v11.storageBuffer16BitAccess) {
    dtypes_ |= HAL_DTYPE_BIT(HAL_DTYPE_F16);
  }
  if (available.features.shaderInt16 && v11.storageBuffer16BitAccess) {
    dtypes_ |= HAL_DTYPE_BIT(HAL_DTYPE_I16);
  }

  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  // A compute-only family first (it runs beside graphics on GPUs), else any
  // family with compute.
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    const bool compute_only = !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (best == UINT32_MAX ||
        (compute_only && (families[best].queueFlags & VK_QUEUE_GRAPHICS_BIT))) {
      best = i;
    }
  }
  queue_family_ = best;
  timestamp_bits_ = families[best].timestampValidBits;
  if (timestamp_bits_ > 0 && properties_.limits.timestampPeriod > 0) {
    timestamp_period_ns_ = properties_.limits.timestampPeriod;
  }
  gpu_tuned_ = !is_cpu() || env_flag("HAL_VULKAN_GPU_TUNING");
  workgroup_size_ = gpu_tuned_ ? 256 : 64;
  workgroup_size_ =
      std::min(workgroup_size_, properties_.limits.maxComputeWorkGroupSize[0]);
  compute_units_ =
      is_cpu() ? std::max(1u, std::thread::hardware_concurrency()) : 1;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enabled};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  check_vk(vkCreateDevice(physical, &info, nullptr, &device_),
           "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 16};
  VkPipelineLayoutCreateInfo layout{
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &range;
  check_vk(vkCreatePipelineLayout(device_, &layout, nullptr, &pipeline_layout_),
           "vkCreatePipelineLayout");

  memory_ = std::make_unique<MemoryManager>(physical, device_);
  default_stream_ = std::make_shared<Stream>(*this);
  register_default_stream(default_stream_);
  kernels_ = std::make_unique<std::vector<Kernel>>(make_standard_kernels(this));
}

Device::~Device() = default;  // never runs: devices live until exit

void Device::submit(const VkSubmitInfo& submit) {
  std::lock_guard lock(queue_mutex_);
  check_vk(vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
}

VkShaderModule Device::create_module(const uint32_t* words, size_t bytes) {
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = bytes;
  info.pCode = words;
  VkShaderModule module;
  check_vk(vkCreateShaderModule(device_, &info, nullptr, &module),
           "vkCreateShaderModule");
  return module;
}

VkShaderModule Device::builtin_module(std::string_view variant) {
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = builtin_modules_.find(variant); it != builtin_modules_.end()) {
    return it->second;
  }
  const std::span<const ShaderBinary> binaries = shaders();
  auto it = std::lower_bound(binaries.begin(), binaries.end(), variant,
                             [](const ShaderBinary& s, std::string_view name) {
                               return std::string_view(s.name) < name;
                             });
  if (it == binaries.end() || variant != it->name) {
    return VK_NULL_HANDLE;
  }
  VkShaderModule module = create_module(it->words, it->size);
  builtin_modules_.emplace(std::string(variant), module);
  return module;
}

void Device::wait_idle() {
  std::lock_guard lock(queue_mutex_);
  check_vk(vkQueueWaitIdle(queue_), "vkQueueWaitIdle");
}

void Device::drop_pipelines(std::string_view prefix) {
  wait_idle();
  std::lock_guard lock(pipeline_mutex_);
  for (auto it = pipelines_.lower_bound(prefix);
       it != pipelines_.end() &&
       std::string_view(it->first).starts_with(prefix);) {
    vkDestroyPipeline(device_, it->second, nullptr);
    it = pipelines_.erase(it);
  }
}

VkPipeline Device::pipeline(const std::string& key, VkShaderModule module,
                            const char* entry,
                            std::span<const uint32_t> specialization) {
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) {
    return it->second;
  }
  std::vector<uint32_t> constants{workgroup_size_};
  constants.insert(constants.end(), specialization.begin(),
                   specialization.end());
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < constants.size(); ++i) {
    entries.push_back({i, i * 4, 4});
  }
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()),
                            entries.data(), constants.size() * 4,
                            constants.data()};
  VkComputePipelineCreateInfo info{
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = entry;
  info.stage.pSpecializationInfo = &spec;
  info.layout = pipeline_layout_;
  VkPipeline pipeline;
  check_vk(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr,
                                    &pipeline),
           "vkCreateComputePipelines");
  pipelines_.emplace(key, pipeline);
  return pipeline;
}

const std::vector<std::unique_ptr<Device>>& devices() {
  return get_instance().devices;
}

Device& get_device(const hal_device* handle) {
  return driver_kit::device_of_handle(devices(), handle, kDriverName);
}

hal_status* device_count(int32_t* out_count) {
  return driver_kit::guard("device_count", [&] {
    driver_kit::require_non_null(out_count, "out_count");
    *out_count = static_cast<int32_t>(devices().size());
  });
}

hal_status* device_open(int32_t ordinal, hal_device** out_device) {
  return driver_kit::guard("device_open", [&] {
    driver_kit::require_non_null(out_device, "out_device");
    *out_device = driver_kit::device_at_ordinal(devices(), ordinal).handle();
  });
}

hal_status* device_properties(hal_device* handle, hal_device_properties* out) {
  return driver_kit::guard("device_properties", [&] {
    Device& device = get_device(handle);
    driver_kit::require_non_null(out, "out_properties");
    using P = hal_device_properties;
    const VkPhysicalDeviceProperties& props = device.properties();
    if (HAL_STRUCT_HAS(out, P, name))
      copy_string(out->name, sizeof(out->name), props.deviceName);
    if (HAL_STRUCT_HAS(out, P, vendor)) {
      copy_string(out->vendor, sizeof(out->vendor),
                  vendor_name(props.vendorID));
    }
    if (HAL_STRUCT_HAS(out, P, driver_version)) {
      copy_string(out->driver_version, sizeof(out->driver_version),
                  fmt::format("{} (Vulkan {}.{}.{}; {})", kDriverVersion,
                              VK_API_VERSION_MAJOR(props.apiVersion),
                              VK_API_VERSION_MINOR(props.apiVersion),
                              VK_API_VERSION_PATCH(props.apiVersion),
                              device.driver_info()));
    }
    if (HAL_STRUCT_HAS(out, P, total_memory))
      out->total_memory = device.memory().total();
    if (HAL_STRUCT_HAS(out, P, max_allocation_size)) {
      out->max_allocation_size = device.memory().max_allocation();
    }
    if (HAL_STRUCT_HAS(out, P, compute_units))
      out->compute_units = device.compute_units();
    if (HAL_STRUCT_HAS(out, P, dtypes)) out->dtypes = device.dtypes();
    if (HAL_STRUCT_HAS(out, P, capabilities)) {
      out->capabilities = device.has_timestamps() ? HAL_CAP_TIMING_EVENTS : 0;
    }
    if (HAL_STRUCT_HAS(out, P, kernel_set_version)) {
      out->kernel_set_version = HAL_KERNEL_SET_VERSION;
    }
    if (HAL_STRUCT_HAS(out, P, min_alignment))
      out->min_alignment = kMinAlignment;
    if (HAL_STRUCT_HAS(out, P, stream_priority_low))
      out->stream_priority_low = kPriorityLow;
    if (HAL_STRUCT_HAS(out, P, stream_priority_high)) {
      out->stream_priority_high = kPriorityHigh;
    }
  });
}

hal_status* memory_info(hal_device* handle, uint64_t* out_free,
                        uint64_t* out_total) {
  return driver_kit::guard("memory_info", [&] {
    Device& device = get_device(handle);
    driver_kit::require_non_null(out_free, "out_free");
    driver_kit::require_non_null(out_total, "out_total");
    *out_total = device.memory().total();
    *out_free = device.memory().total() - device.memory().used();
  });
}

}  // namespace vulkan
