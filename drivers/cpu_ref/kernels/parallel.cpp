// The kernels' thread pool (parallel.hpp).
#include "kernels/parallel.hpp"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "device.hpp"

namespace cpu_ref {
namespace {

// Helpers sleep on a condition variable between kernels: the pool serves
// kernels of at least kMinFlopsPerThread (about a millisecond), so a
// wake-up of a few microseconds is cheap, and spinning would take a core
// from the stream workers on a small machine.
class ThreadPool {
 public:
  // Runs task over `participants`, or returns false (nothing run) when
  // the pool is busy or too small.
  bool try_run(size_t participants, const std::function<void(size_t)>& task) {
    const std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || !start_helpers(participants - 1)) {
      return false;
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      participants_ = participants;
      pending_ = participants - 1;
      error_ = nullptr;
      ++generation_;
    }
    work_ready_.notify_all();
    run_one(task, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    all_done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) {
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
    return true;
  }

 private:
  // Starts helpers up to `count` (called with busy_ held). False if none
  // could be started at all and some are needed.
  bool start_helpers(size_t count) {
    try {
      while (helper_count_ < count) {
        const size_t index = helper_count_ + 1;
        std::thread([this, index] { helper_loop(index); }).detach();
        helper_count_ = index;
      }
    } catch (const std::system_error&) {
      // Out of threads: kernels run on the caller until more are needed.
    }
    return helper_count_ >= count;
  }

  void helper_loop(size_t index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (index >= participants_) {
        continue;
      }
      const std::function<void(size_t)>& task = *task_;
      lock.unlock();
      run_one(task, index);
      lock.lock();
      if (--pending_ == 0) {
        all_done_.notify_one();
      }
    }
  }

  void run_one(const std::function<void(size_t)>& task, size_t index) {
    try {
      task(index);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) {
        error_ = std::current_exception();
      }
    }
  }

  std::mutex busy_;          // held by the kernel the pool serves
  size_t helper_count_ = 0;  // helper i (1-based) is participant i
  std::mutex mutex_;
  std::condition_variable work_ready_, all_done_;
  uint64_t generation_ = 0;
  const std::function<void(size_t)>* task_ = nullptr;
  size_t participants_ = 0;
  size_t pending_ = 0;
  std::exception_ptr error_;
};

}  // namespace

size_t hardware_threads() { return static_cast<size_t>(kernel_threads()); }

void run_on_pool(size_t participants,
                 const std::function<void(size_t participant)>& task) {
  // Never destroyed: detached helpers may still wait on it at exit.
  static auto* const pool = new ThreadPool();
  if (participants > 1 && pool->try_run(participants, task)) {
    return;
  }
  std::exception_ptr error;
  for (size_t p = 0; p < participants; ++p) {
    try {
      task(p);
    } catch (...) {
      if (!error) {
        error = std::current_exception();
      }
    }
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

}  // namespace cpu_ref
