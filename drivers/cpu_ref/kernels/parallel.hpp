// Fork-join over a persistent pool, for kernels whose jobs are independent
// and write disjoint outputs. Jobs are split statically: participant p of
// T runs jobs [p * J / T, (p + 1) * J / T). Which thread runs a job never
// changes its result, so kernels stay deterministic whatever the thread
// count (HAL_CPU_REF_THREADS).
//
// The pool (kernel_threads() - 1 helper threads, started on first use and
// kept until the process exits) serves one kernel at a time; a kernel that
// finds it busy (another stream's kernel, or a nested call) runs all its
// jobs on its own thread, which gives the same bits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace cpu_ref {

// Work below this many flops per thread is not worth waking a helper.
inline constexpr double kMinFlopsPerThread = 4e6;

// The number of threads kernels run on (device.hpp's kernel_threads()).
size_t hardware_threads();

// Runs task(p) for p in [0, participants): p = 0 on the calling thread,
// the others on pool helpers, or all on the calling thread when the pool
// is busy or has too few helpers. Returns when every call has returned;
// the first exception any call threw is then rethrown.
void run_on_pool(size_t participants,
                 const std::function<void(size_t participant)>& task);

// Calls body(next_job) once per participant (at most hardware_threads(),
// num_jobs, and one per kMinFlopsPerThread of `flops`); next_job(job)
// yields that participant's static share of job indices, then false.
// An exception from any body (e.g. allocating scratch memory) fails the
// whole kernel once every participant has returned.
template <typename Body>
void run_parallel(size_t num_jobs, double flops, Body&& body) {
  const auto by_work =
      static_cast<size_t>(std::max(1.0, flops / kMinFlopsPerThread));
  const size_t participants =
      std::max<size_t>(1, std::min({hardware_threads(), num_jobs, by_work}));
  run_on_pool(participants, [&](size_t participant) {
    size_t next = num_jobs * participant / participants;
    const size_t end = num_jobs * (participant + 1) / participants;
    const std::function<bool(size_t&)> next_job = [&](size_t& job) {
      job = next++;
      return job < end;
    };
    body(next_job);
  });
}

// Elements per job when a map over elements is split across threads.
inline constexpr int64_t kElementsPerJob = int64_t{1} << 15;

// Calls body(begin, end) on consecutive ranges covering [0, count), split
// into jobs of kElementsPerJob or more for run_parallel.
template <typename Body>
void for_each_range_parallel(int64_t count, double flops_per_element,
                             const Body& body) {
  const int64_t jobs = std::max<int64_t>(1, count / kElementsPerJob);
  if (jobs <= 1) {
    body(int64_t{0}, count);
    return;
  }
  run_parallel(static_cast<size_t>(jobs),
               static_cast<double>(count) * flops_per_element,
               [&](const auto& next_job) {
                 size_t job;
                 while (next_job(job)) {
                   const auto j = static_cast<int64_t>(job);
                   body(count * j / jobs, count * (j + 1) / jobs);
                 }
               });
}

}  // namespace cpu_ref
