// The functions torch.hal calls, registered as the operator namespace
// torch.ops.hal. Going through the dispatcher instead of a CPython module
// keeps libtorch_hal free of libtorch_python, and turns C++ errors into the
// right Python exceptions (torch.OutOfMemoryError, IndexError, ...).
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"
#include "runtime/context.hpp"
#include "runtime/generator.hpp"
#include "runtime/graph.hpp"

namespace torch_hal {
namespace {

int64_t py_device_count() { return device_count(); }

void py_init() { ensure_initialized(); }

std::string py_driver() { return driver_description(); }

int64_t py_current_device() { return current_device(); }

void py_set_device(int64_t index) {
  set_device(static_cast<c10::DeviceIndex>(index));
}

int64_t py_exchange_device(int64_t index) {
  return exchange_device(static_cast<c10::DeviceIndex>(index));
}

void py_synchronize(int64_t index) {
  synchronize_device(static_cast<c10::DeviceIndex>(index));
}

std::string py_device_name(int64_t index) {
  return device(static_cast<c10::DeviceIndex>(index)).properties().name;
}

c10::Dict<std::string, int64_t> py_device_properties(int64_t index) {
  const hal::DeviceProperties& p =
      device(static_cast<c10::DeviceIndex>(index)).properties();
  c10::Dict<std::string, int64_t> d;
  d.insert("total_memory", static_cast<int64_t>(p.total_memory));
  d.insert("max_allocation_size", static_cast<int64_t>(p.max_allocation_size));
  d.insert("compute_units", p.compute_units);
  d.insert("dtypes", p.dtypes);
  d.insert("capabilities", static_cast<int64_t>(p.capabilities));
  d.insert("kernel_set_version", p.kernel_set_version);
  d.insert("min_alignment", p.min_alignment);
  return d;
}

c10::Dict<std::string, int64_t> py_memory_stats(int64_t index) {
  const hal::AllocatorStats s =
      allocator(static_cast<c10::DeviceIndex>(index)).stats();
  c10::Dict<std::string, int64_t> d;
  auto put = [&d](const char* key, uint64_t v) {
    d.insert(key, static_cast<int64_t>(v));
  };
  put("allocated_bytes.all.current", s.allocated_bytes);
  put("allocated_bytes.all.peak", s.peak_allocated_bytes);
  put("reserved_bytes.all.current", s.reserved_bytes);
  put("reserved_bytes.all.peak", s.peak_reserved_bytes);
  put("requested_bytes.all.current", s.requested_bytes);
  put("allocation.all.allocated", s.num_allocs);
  put("allocation.all.freed", s.num_frees);
  put("allocation.all.current", s.num_allocs - s.num_frees);
  put("segment.all.allocated", s.num_driver_allocs);
  put("segment.all.freed", s.num_driver_frees);
  put("segment.all.current", s.num_driver_allocs - s.num_driver_frees);
  put("num_ooms", s.num_ooms);
  put("num_alloc_retries", s.num_cache_flushes);
  return d;
}

void py_empty_cache() {
  for (c10::DeviceIndex i = 0; i < device_count(); ++i)
    allocator(i).empty_cache();
}

void py_reset_peak_memory_stats(int64_t index) {
  allocator(static_cast<c10::DeviceIndex>(index)).reset_peak_stats();
}

std::vector<int64_t> py_mem_get_info(int64_t index) {
  const hal::MemoryInfo info =
      device(static_cast<c10::DeviceIndex>(index)).memory_info();
  return {static_cast<int64_t>(info.free), static_cast<int64_t>(info.total)};
}

bool py_supports_dtype(int64_t index, at::ScalarType dtype) {
  return device_supports(static_cast<c10::DeviceIndex>(index), dtype);
}

void py_manual_seed(int64_t index, int64_t value) {
  manual_seed(static_cast<c10::DeviceIndex>(index),
              static_cast<uint64_t>(value));
}

void py_manual_seed_all(int64_t value) {
  manual_seed_all(static_cast<uint64_t>(value));
}

int64_t py_seed(int64_t index) {
  return static_cast<int64_t>(seed(static_cast<c10::DeviceIndex>(index)));
}

int64_t py_initial_seed(int64_t index) {
  return static_cast<int64_t>(
      initial_seed(static_cast<c10::DeviceIndex>(index)));
}

at::Tensor py_get_rng_state(int64_t index) {
  return get_rng_state(static_cast<c10::DeviceIndex>(index));
}

void py_set_rng_state(int64_t index, const at::Tensor& state) {
  set_rng_state(static_cast<c10::DeviceIndex>(index), state);
}

c10::Dict<std::string, int64_t> py_fallback_stats() {
  c10::Dict<std::string, int64_t> d;
  for (const auto& [op, n] : fallback_counts()) d.insert(op, n);
  return d;
}

void py_reset_fallback_stats() { reset_fallback_counts(); }

int64_t py_new_graph_pool(int64_t index) {
  return new_graph_pool(static_cast<c10::DeviceIndex>(index));
}

bool py_is_capturing(int64_t index) {
  return is_capturing(static_cast<c10::DeviceIndex>(index));
}

}  // namespace

TORCH_LIBRARY(hal, m) {
  m.class_<CapturedGraph>("Graph")
      .def(torch::init<>())
      .def("capture_begin", &CapturedGraph::capture_begin)
      .def("capture_end", &CapturedGraph::capture_end)
      .def("replay", &CapturedGraph::replay)
      .def("reset", &CapturedGraph::reset)
      .def("pool", &CapturedGraph::pool)
      .def("is_captured", &CapturedGraph::is_captured);
  m.def("new_graph_pool(int device) -> int", &py_new_graph_pool);
  m.def("is_capturing(int device) -> bool", &py_is_capturing);
  m.def("device_count() -> int", &py_device_count);
  m.def("init() -> ()", &py_init);
  m.def("driver() -> str", &py_driver);
  m.def("current_device() -> int", &py_current_device);
  m.def("set_device(int device) -> ()", &py_set_device);
  m.def("exchange_device(int device) -> int", &py_exchange_device);
  m.def("synchronize(int device) -> ()", &py_synchronize);
  m.def("device_name(int device) -> str", &py_device_name);
  m.def("device_properties(int device) -> Dict(str, int)",
        &py_device_properties);
  m.def("memory_stats(int device) -> Dict(str, int)", &py_memory_stats);
  m.def("empty_cache() -> ()", &py_empty_cache);
  m.def("reset_peak_memory_stats(int device) -> ()",
        &py_reset_peak_memory_stats);
  m.def("mem_get_info(int device) -> int[]", &py_mem_get_info);
  m.def("supports_dtype(int device, ScalarType dtype) -> bool",
        &py_supports_dtype);
  m.def("manual_seed(int device, int seed) -> ()", &py_manual_seed);
  m.def("manual_seed_all(int seed) -> ()", &py_manual_seed_all);
  m.def("seed(int device) -> int", &py_seed);
  m.def("initial_seed(int device) -> int", &py_initial_seed);
  m.def("get_rng_state(int device) -> Tensor", &py_get_rng_state);
  m.def("set_rng_state(int device, Tensor state) -> ()", &py_set_rng_state);
  m.def("fallback_stats() -> Dict(str, int)", &py_fallback_stats);
  m.def("reset_fallback_stats() -> ()", &py_reset_fallback_stats);
}

}  // namespace torch_hal
