// A fork-join loop for kernels whose jobs are independent and write
// disjoint outputs. Which thread runs a job never changes its result, so
// kernels stay deterministic whatever the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace cpu_ref {

// Work below this many flops per thread is not worth a thread start.
inline constexpr double kMinFlopsPerThread = 4e6;

// std::thread::hardware_concurrency(), read once: glibc answers it by
// reading /sys/devices/system/cpu/online, three system calls that cost
// more than a small kernel on every launch.
inline size_t hardware_threads() {
  static const size_t count = std::max(1u, std::thread::hardware_concurrency());
  return count;
}

// Calls body(next_job) on the calling thread and on up to
// hardware_concurrency - 1 helpers; each call pulls job indices with
// next_job(index) until it returns false. Returns when all jobs are done.
// A helper that cannot start, or whose body throws before pulling a job
// (e.g. allocating scratch memory; body must not throw after that), leaves
// the jobs to the others; the calling thread's errors propagate once every
// helper has been joined.
template <typename Body>
void run_parallel(size_t num_jobs, double flops, Body&& body) {
  std::atomic<size_t> next{0};
  const std::function<bool(size_t&)> next_job = [&](size_t& job) {
    job = next.fetch_add(1, std::memory_order_relaxed);
    return job < num_jobs;
  };
  const size_t by_work =
      static_cast<size_t>(std::max(1.0, flops / kMinFlopsPerThread));
  const size_t threads =
      std::min<size_t>({hardware_threads(), num_jobs, by_work});
  std::vector<std::thread> helpers;
  struct JoinAll {
    std::vector<std::thread>& threads;
    ~JoinAll() {
      for (std::thread& thread : threads) {
        thread.join();
      }
    }
  } join_all{helpers};
  try {
    helpers.reserve(threads);
    for (size_t i = 1; i < threads; ++i) {
      helpers.emplace_back([&] {
        try {
          body(next_job);
        } catch (...) {
        }
      });
    }
  } catch (const std::exception&) {
    // Out of threads or memory: the threads that did start share the jobs.
  }
  body(next_job);
}

}  // namespace cpu_ref
