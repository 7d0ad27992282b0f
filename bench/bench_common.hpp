// What the benchmark programs of bench/ share: the device they measure, the
// registration that turns a thrown error into one failed benchmark, and the
// start-up that names the driver in the output's context (bench/report.py
// prints it with every table).
//
// No fmt here: hal_kernel_bench compiles against torch's headers, whose
// bundled fmt shadows the system one it links.
#pragma once

#include <cstdio>
#include <exception>
#include <string>

#include <benchmark/benchmark.h>

#include "hal/hal.hpp"

namespace hal_bench {

// The driver named by $HAL_DRIVER (default cpu_ref), loaded once.
inline const hal::Runtime& bench_runtime() {
  static const hal::Runtime runtime = hal::Runtime::open();
  return runtime;
}

// Device 0 of that driver.
inline const hal::Device& bench_device() {
  static const hal::Device device = bench_runtime().device(0);
  return device;
}

// Registers body(state, args...) as a real-time benchmark: the work runs on
// driver (or torch) threads, so the calling thread's CPU time says nothing.
// An exception (a driver without a kernel, out of memory, a torch error)
// fails that benchmark with its message instead of the whole run.
template <typename Body, typename... Args>
benchmark::internal::Benchmark* add(const std::string& name, Body body,
                                    Args... args) {
  return benchmark::RegisterBenchmark(name.c_str(),
                                      [body, args...](benchmark::State& state) {
                                        try {
                                          body(state, args...);
                                        } catch (const std::exception& error) {
                                          state.SkipWithError(error.what());
                                        }
                                      })
      ->UseRealTime();
}

// Opens the bench device and records the driver and device in the output's
// context. Returns false, having said why on stderr, when there is none.
inline bool add_device_context(const char* program) {
  try {
    const hal::DriverInfo& driver = bench_runtime().driver();
    benchmark::AddCustomContext(
        "hal_driver",
        driver.name + " " + driver.version + " (" + driver.path + ")");
    benchmark::AddCustomContext("hal_device", bench_device().properties().name);
    return true;
  } catch (const hal::Error& error) {
    std::fprintf(stderr, "%s: cannot open a device: %s\n", program,
                 error.what());
    return false;
  }
}

}  // namespace hal_bench
