// The validating table: one set of C entries per validated driver library,
// each forwarding to that library's validation::Layer, and the leak report
// at exit.
//
// A C function pointer carries no context, so (as with the host table's log
// entry in driver_library.cpp) each library gets a slot and entries that are
// distinct functions bound to it. A process validates a handful of drivers;
// past kSlots, a driver is loaded without the layer, with a warning.
#include "table.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../driver_call.hpp"
#include "hal/log.hpp"
#include "layer.hpp"

namespace hal::validation {
namespace {

constexpr size_t kSlots = 16;
std::array<std::atomic<Layer*>, kSlots> g_layers;

struct Registry {
  std::mutex mutex;
  std::vector<Layer*> layers;  // never destroyed: libraries are never unloaded
};

Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

// Entry `Method` of the layer in `Slot`, as a C function. An exception (a
// failed allocation in the layer's records) becomes INTERNAL, never a throw
// into the caller's C frame.
template <size_t Slot, auto Method>
struct Thunk;
template <size_t Slot, typename... Args, hal_status* (Layer::*Method)(Args...)>
struct Thunk<Slot, Method> {
  static hal_status* call(Args... args) noexcept {
    try {
      return (g_layers[Slot].load(std::memory_order_acquire)->*Method)(args...);
    } catch (const std::exception& error) {
      return detail::make_status(
          HAL_STATUS_INTERNAL,
          fmt::format("validation layer failed: {}", error.what()));
    }
  }
};

// The layer's method for table entry `entry`, or nullptr for an entry the
// layer has no check for (one added to the ABI after it): such an entry goes
// straight to the driver.
#define HAL_LAYER_METHOD(entry)              \
  template <typename L>                      \
  constexpr auto layer_method_##entry() {    \
    if constexpr (requires { &L::entry; }) { \
      return &L::entry;                      \
    } else {                                 \
      return nullptr;                        \
    }                                        \
  }
HAL_DRIVER_API_ENTRIES(HAL_LAYER_METHOD)
#undef HAL_LAYER_METHOD

// The driver's table with each non-NULL entry the layer checks replaced by
// the slot's thunk; a NULL entry stays NULL (the core reports it
// UNSUPPORTED).
template <size_t Slot>
hal_driver_api make_table(const hal_driver_api& driver) {
  hal_driver_api table = driver;
  auto route = [&driver, &table ]<auto Entry, auto Method>() {
    if constexpr (!std::is_same_v<decltype(Method), std::nullptr_t>) {
      if (driver.*Entry != nullptr) table.*Entry = &Thunk<Slot, Method>::call;
    }
  };
#define HAL_ROUTE(entry) \
  route.template         \
  operator()<&hal_driver_api::entry, layer_method_##entry<Layer>()>();
  HAL_DRIVER_API_ENTRIES(HAL_ROUTE)
#undef HAL_ROUTE
  return table;
}

template <size_t... Slots>
constexpr auto make_table_makers(std::index_sequence<Slots...>) {
  return std::array<hal_driver_api (*)(const hal_driver_api&), kSlots>{
      &make_table<Slots>...};
}
constexpr auto kTableMakers =
    make_table_makers(std::make_index_sequence<kSlots>());

// At exit, after the program's last call and before the drivers' own
// static destructors (registered earlier, when they were loaded).
void report_at_exit() {
  std::lock_guard lock(registry().mutex);
  for (Layer* layer : registry().layers) {
    const std::vector<Leak> found = layer->leaks();
    if (found.empty()) {
      logger().info("validation: driver {}: no leaks", layer->name());
      continue;
    }
    logger().error("validation: driver {}: {} leak(s) at exit", layer->name(),
                   found.size());
    for (const Leak& leak : found) {
      logger().error("validation: {}", leak.message);
    }
  }
  logger().flush();
}

}  // namespace

int level() {
  const char* value = std::getenv("HAL_VALIDATION");
  if (value == nullptr || *value == '\0' || std::string_view(value) == "0") {
    return 0;
  }
  if (std::string_view(value) == "1") return 1;
  if (std::string_view(value) == "2") return 2;
  logger().warn("HAL_VALIDATION={} is not 0, 1 or 2; validating at level 1",
                value);
  return 1;
}

hal_driver_api wrap(const hal_driver_api& driver, const std::string& path,
                    int level) {
  Registry& state = registry();
  std::lock_guard lock(state.mutex);
  const size_t slot = state.layers.size();
  if (slot >= kSlots) {
    logger().warn(
        "validation: more than {} drivers; {} runs without the "
        "validation layer",
        kSlots, path);
    return driver;
  }
  if (slot == 0) std::atexit(&report_at_exit);
  auto* layer = new Layer(driver, path, level);
  state.layers.push_back(layer);
  g_layers[slot].store(layer, std::memory_order_release);
  logger().info("validation layer (level {}) on driver {} ({})", level,
                driver.name, path);
  return kTableMakers[slot](driver);
}

std::vector<Leak> leaks(const Runtime& runtime) {
  Layer* found = nullptr;
  {
    std::lock_guard lock(registry().mutex);
    for (Layer* layer : registry().layers) {
      if (layer->path() == runtime.driver().path) found = layer;
    }
  }
  return found ? found->leaks() : std::vector<Leak>{};
}

}  // namespace hal::validation
