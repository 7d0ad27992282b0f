// ProcessGroupHAL: the c10d backend of the hal device ("hal" in
// init_process_group). It runs every collective through a host backend (gloo)
// on host twins of its hal tensors:
//
//   caller's thread:  a twin per hal tensor (a CPU view of the tensor when the
//                     device's memory is host memory, else pinned memory
//                     filled by a D2H copy on the caller's stream), an event
//   staging thread:   waits for the event, checks that every rank called the
//                     same collective on the same dtypes and shapes, runs the
//                     host collective, copies pinned results back to the hal
//                     outputs on a pool stream, then completes the Work
//
// The caller's thread only enqueues the copies and an event, so a collective
// returns at once and DDP's bucketed all-reduce overlaps backward compute.
// One staging thread per backend keeps the collectives in the order they
// were issued, which every rank must share; point-to-point operations it
// posts in that order and a completion thread waits for. CPU tensors go to the
// host backend directly, so one "hal" process group serves both devices.
//
// Ownership: the backend owns its two threads and shares the host backend
// with the Python object that created it. A job owns the twins and the
// caller's tensors until it completes and is then destroyed on a caller's
// thread (the next submit, or shutdown), never on ours: it may hold the last
// reference to a tensor whose Python object needs the GIL. A Work's Future
// holds the outputs.
//
// Replacing the staging: a driver with native collectives would implement
// the collectives on device memory behind the same Work (complete in stream
// order, Future of the outputs); this class is where that choice is made
// (docs/distributed.md, "A driver's own collectives").
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace torch_hal {

class ProcessGroupHAL final : public c10d::Backend {
 public:
  ProcessGroupHAL(c10::intrusive_ptr<c10d::Backend> host, int rank, int size);
  ~ProcessGroupHAL() override;

  const std::string getBackendName() const override { return "hal"; }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output, at::Tensor& input,
      std::vector<int64_t>& output_split_sizes,
      std::vector<int64_t>& input_split_sizes,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors,
                                      int dst_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors,
                                      int src_rank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts) override;

  void shutdown() override;
  void abort() override;

  // One collective on its way through the staging thread
  // (process_group_hal.cpp).
  struct Job;

 private:
  c10::intrusive_ptr<c10d::Work> submit(std::unique_ptr<Job> job);
  std::unique_ptr<Job> next(std::deque<std::unique_ptr<Job>>& queue,
                            const bool& closed);
  void run_staging_thread();
  void run_completion_thread();
  void check_ranks_agree(const Job& job);
  void finish_outputs(Job& job);
  void retire(std::unique_ptr<Job> job, const std::exception_ptr& error);
  std::exception_ptr failure(const Job& job, const std::string& why) const;

  c10::intrusive_ptr<c10d::Backend> host_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Job>> queue_;           // for the staging thread
  std::deque<std::unique_ptr<Job>> point_to_point_;  // posted, to complete
  std::vector<std::unique_ptr<Job>> finished_;       // destroyed by the caller
  bool stopping_ = false;
  bool staging_done_ = false;
  std::once_flag shutdown_once_;
  std::thread staging_thread_;
  std::thread completion_thread_;
};

}  // namespace torch_hal
