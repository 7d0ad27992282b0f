#include "distributed/process_group_hal.hpp"

#include <ATen/core/ivalue.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/context.hpp"

namespace torch_hal {
namespace {

// TORCH_HAL_DISTRIBUTED_STAGING=copy stages through pinned copies even where
// the device's memory is host memory (to test the path other drivers take).
bool uses_host_memory(c10::DeviceIndex index) {
  static const bool copies_forced = [] {
    const char* staging = std::getenv("TORCH_HAL_DISTRIBUTED_STAGING");
    return staging != nullptr && std::string_view(staging) == "copy";
  }();
  return !copies_forced &&
         device(index).properties().has(HAL_CAP_HOST_MAPPED_MEMORY);
}

bool on_hal(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// A collective's Work: completed by the staging thread, with a Future whose
// value is the collective's outputs (as gloo's and NCCL's are).
class StagedWork final : public c10d::Work {
 public:
  StagedWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
             std::vector<c10::Device> devices)
      : Work(rank, type),
        outputs_(std::move(outputs)),
        future_(c10::make_intrusive<c10::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()),
            std::move(devices))) {}

  void complete(const std::exception_ptr& error) {
    if (error) {
      future_->setError(error);
    } else {
      future_->markCompleted(c10::IValue(outputs_));
    }
    finish(error);
  }

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    return future_;
  }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// How a c10d ReduceOp runs on a host backend that knows only the plain ones
// (gloo has no AVG and no PREMUL_SUM): a SUM of inputs scaled first (by the
// factor, or for a floating AVG by 1/size, as NCCL does, so that f16 sums do
// not overflow), or for an integer AVG a SUM divided after.
struct HostReduction {
  c10d::ReduceOp op;
  std::optional<c10d::PreMulSumSupplement> premul;
  bool average = false;

  explicit HostReduction(const c10d::ReduceOp& requested) : op(requested) {
    if (requested == c10d::ReduceOp::AVG) {
      op = c10d::ReduceOp(c10d::ReduceOp::SUM);
      average = true;
    } else if (requested == c10d::ReduceOp::PREMUL_SUM) {
      auto* factor =
          dynamic_cast<c10d::PreMulSumSupplement*>(requested.supplement_.get());
      TORCH_CHECK(factor != nullptr,
                  "hal: ReduceOp.PREMUL_SUM without a factor");
      premul = *factor;
      op = c10d::ReduceOp(c10d::ReduceOp::SUM);
    }
  }

  bool scales_inputs() const { return premul.has_value() || average; }

  void scale(at::Tensor& t, int size) const {
    if (premul && premul->tensor_factor.defined()) {
      t.mul_(premul->tensor_factor.to(t.device()));
    } else if (premul) {
      t.mul_(premul->double_factor);
    } else if (average && at::isFloatingType(t.scalar_type())) {
      t.mul_(1.0 / size);
    }
  }

  void finish(at::Tensor& t, int size) const {
    if (average && !at::isFloatingType(t.scalar_type())) {
      t.div_(size, "trunc");  // NCCL's integer average truncates
    }
  }
};

// What a twin of an input may be: the tensor's own memory (kShared), or
// always a copy, left as it is (kPrivate: a non-root reduce, which gloo
// uses as scratch) or scaled by the reduction first (kScaled).
enum class Twin { kShared, kPrivate, kScaled };

}  // namespace

// The host side of one collective: pinned twins of its hal tensors, the copies
// between them, and the call on the host backend.
struct ProcessGroupHAL::Job {
  std::string name;
  c10d::OpType type;
  std::vector<at::Tensor> keep_alive;     // the caller's tensors and the twins
  std::vector<at::Tensor> scaled_inputs;  // twins PREMUL_SUM scales first
  std::vector<at::Tensor> averaged_outputs;  // twins AVG divides after
  std::vector<std::pair<at::Tensor, at::Tensor>>
      copy_back;                    // (hal output, twin)
  std::vector<at::Tensor> results;  // the outputs, the Work's result
  std::optional<c10::DeviceIndex> device;
  bool host_mapped = false;  // the device's memory is host memory
  std::optional<c10::Event> inputs_ready;
  std::function<c10::intrusive_ptr<c10d::Work>()> run_on_host;
  std::optional<HostReduction> reduction;
  c10::intrusive_ptr<StagedWork> work;
  // What every rank must agree on (the collective, its reduction, the dtypes
  // and shapes that have to match), compared before the host backend runs:
  // gloo given mismatched tensors crashes or corrupts instead of failing.
  std::string signature;
  // Point-to-point: no agreement to check; posted in order by the staging
  // thread, then waited for by the completion thread, so that an isend/irecv
  // exchange between two ranks (gloo's send waits for the peer's recv)
  // cannot deadlock.
  bool point_to_point = false;
  c10::intrusive_ptr<c10d::Work> host_work;
  bool copies_enqueued = false;

  Job(std::string op_name, c10d::OpType op_type)
      : name(std::move(op_name)), type(op_type), signature(name) {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // A job dropped before the staging thread waited for its D2H copies (an
  // argument error after the first copy, an aborted group) must not free
  // pinned twins the stream is still writing.
  ~Job() {
    if (!copies_enqueued) return;
    try {
      if (inputs_ready) {
        inputs_ready->synchronize();
      } else {
        current_stream(*device).synchronize();
      }
    } catch (const std::exception& e) {
      TORCH_WARN("hal: ", name, ": waiting for its staging copies: ", e.what());
    }
  }

  // `opts` with the reduction the host backend runs in place of the
  // requested one (kept in `reduction` for the scaling around it).
  template <class Options>
  Options reduce_with(Options opts) {
    signature += c10::str(" op ", static_cast<int>(opts.reduceOp.op_));
    opts.reduceOp = reduction.emplace(opts.reduceOp).op;
    return opts;
  }
  Twin reduced_input() const {
    return reduction->scales_inputs() ? Twin::kScaled : Twin::kShared;
  }
  // In-place reduction twins: scaled first where the reduction says so, and
  // finished (an integer AVG) after.
  std::vector<at::Tensor> reduced_inouts(const std::vector<at::Tensor>& ts) {
    std::vector<at::Tensor> twins = inouts(ts);
    if (reduction->scales_inputs()) scaled_inputs = twins;
    average(twins);
    return twins;
  }

  void describe(const std::vector<at::Tensor>& ts) {
    for (const auto& t : ts)
      signature += c10::str(" ", t.scalar_type(), t.sizes());
  }
  void describe(const std::vector<std::vector<at::Tensor>>& lists) {
    for (const auto& ts : lists) describe(ts);
  }
  void describe_root(int64_t root) { signature += c10::str(" root ", root); }
  void describe_dtypes(const std::vector<at::Tensor>& ts) {
    for (const auto& t : ts) signature += c10::str(" ", t.scalar_type());
  }

  // The twin the host backend reads: a pinned copy of a hal tensor, made in
  // the caller's stream order, or the tensor's own memory seen from the host
  // when the device's memory is host memory; a CPU tensor itself. kPrivate
  // and kScaled twins are always copies (the caller's input stays as it is).
  at::Tensor input(const at::Tensor& t, Twin kind = Twin::kShared) {
    keep_alive.push_back(t);
    at::Tensor twin = t;
    if (on_hal(t)) use_device(t);
    if (on_hal(t) && (!host_mapped || kind != Twin::kShared)) {
      twin = pinned_like(t);
      twin.copy_(t, /*non_blocking=*/true);
      copies_enqueued = true;
    } else if (on_hal(t)) {
      twin = host_view(t);
    } else if (kind != Twin::kShared) {
      twin = t.clone();
    }
    if (kind == Twin::kScaled) scaled_inputs.push_back(twin);
    keep_alive.push_back(twin);
    return twin;
  }

  // The twin the host backend writes, copied back to `t` when it is done
  // (unless it is `t`'s own memory).
  at::Tensor output(const at::Tensor& t) {
    keep_alive.push_back(t);
    results.push_back(t);
    if (!on_hal(t)) return t;
    use_device(t);
    if (host_mapped) return host_view(t);
    at::Tensor twin = pinned_like(t);
    copy_back.emplace_back(t, twin);
    keep_alive.push_back(twin);
    return twin;
  }

  // Both: in-place collectives (all_reduce, broadcast).
  at::Tensor inout(const at::Tensor& t) {
    at::Tensor twin = input(t);
    results.push_back(t);
    if (on_hal(t) && !host_mapped) copy_back.emplace_back(t, twin);
    return twin;
  }

  std::vector<at::Tensor> inputs(const std::vector<at::Tensor>& ts,
                                 Twin kind = Twin::kShared) {
    std::vector<at::Tensor> twins;
    twins.reserve(ts.size());
    for (const auto& t : ts) twins.push_back(input(t, kind));
    return twins;
  }
  std::vector<at::Tensor> outputs(const std::vector<at::Tensor>& ts) {
    std::vector<at::Tensor> twins;
    twins.reserve(ts.size());
    for (const auto& t : ts) twins.push_back(output(t));
    return twins;
  }
  std::vector<at::Tensor> inouts(const std::vector<at::Tensor>& ts) {
    std::vector<at::Tensor> twins;
    twins.reserve(ts.size());
    for (const auto& t : ts) twins.push_back(inout(t));
    return twins;
  }
  std::vector<std::vector<at::Tensor>> outputs(
      const std::vector<std::vector<at::Tensor>>& ts) {
    std::vector<std::vector<at::Tensor>> twins;
    twins.reserve(ts.size());
    for (const auto& list : ts) twins.push_back(outputs(list));
    return twins;
  }
  std::vector<std::vector<at::Tensor>> inputs(
      const std::vector<std::vector<at::Tensor>>& ts,
      Twin kind = Twin::kShared) {
    std::vector<std::vector<at::Tensor>> twins;
    twins.reserve(ts.size());
    for (const auto& list : ts) twins.push_back(inputs(list, kind));
    return twins;
  }

  void average(const std::vector<at::Tensor>& twins) {
    averaged_outputs.insert(averaged_outputs.end(), twins.begin(), twins.end());
  }

 private:
  void use_device(const at::Tensor& t) {
    TORCH_CHECK(
        !device || *device == t.device().index(), "hal: ", name,
        " got tensors on more than one hal device (hal:", device.value_or(-1),
        " and ", t.device(), "); a process uses one device per process group");
    if (!device) host_mapped = uses_host_memory(t.device().index());
    device = t.device().index();
  }

  // A CPU tensor over a hal tensor's memory, for a device whose addresses
  // are host addresses (HAL_CAP_HOST_MAPPED_MEMORY): no staging copies.
  static at::Tensor host_view(const at::Tensor& t) {
    return at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
                         t.options().device(at::kCPU));
  }

  static at::Tensor pinned_like(const at::Tensor& t) {
    return at::empty(t.sizes(),
                     t.options().device(at::kCPU).pinned_memory(true));
  }
};

ProcessGroupHAL::ProcessGroupHAL(c10::intrusive_ptr<c10d::Backend> host,
                                 int rank, int size)
    : Backend(rank, size), host_(std::move(host)) {
  TORCH_CHECK(host_, "hal: the process group needs a host backend");
  staging_thread_ = std::thread([this] { run_staging_thread(); });
  completion_thread_ = std::thread([this] { run_completion_thread(); });
}

ProcessGroupHAL::~ProcessGroupHAL() { shutdown(); }

void ProcessGroupHAL::shutdown() {
  // Once, and every caller returns only when the threads are gone (a
  // destructor racing an abort() must not destroy a joinable thread).
  std::call_once(shutdown_once_, [this] {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread* thread : {&staging_thread_, &completion_thread_}) {
      if (!thread->joinable()) continue;
      if (thread->get_id() == std::this_thread::get_id()) {
        thread->detach();  // the last reference dropped by a Future callback
      } else {
        thread->join();
      }
    }
    host_->shutdown();
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.clear();
  });
}

void ProcessGroupHAL::abort() {
  std::deque<std::unique_ptr<Job>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(queue_);
  }
  for (auto& job : dropped) {
    job->work->complete(failure(*job, "the process group was aborted"));
  }
  host_->abort();
  shutdown();
}

std::exception_ptr ProcessGroupHAL::failure(const Job& job,
                                            const std::string& why) const {
  return std::make_exception_ptr(c10::DistBackendError(
      c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
      c10::str("hal: ", job.name, " failed on rank ", getRank(), " of ",
               getSize(), ": ", why)));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::submit(
    std::unique_ptr<Job> job) {
  std::vector<c10::Device> devices;
  if (job->device) {
    devices.emplace_back(c10::DeviceType::PrivateUse1, *job->device);
    // The D2H copies were enqueued on the caller's stream; the staging
    // thread waits for them before the host backend reads the twins.
    job->inputs_ready.emplace(c10::DeviceType::PrivateUse1);
    job->inputs_ready->record(current_stream(*job->device));
  }
  job->work = c10::make_intrusive<StagedWork>(getRank(), job->type,
                                              job->results, std::move(devices));
  auto work = job->work;
  // Jobs the threads finished are destroyed here, on the caller's thread: a
  // job may hold the last reference to a tensor whose Python object died,
  // and dropping it takes the GIL, which a thread of ours must never wait
  // for (at interpreter exit that wait ends the thread mid-destructor).
  std::vector<std::unique_ptr<Job>> finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TORCH_CHECK(!stopping_, "hal: ", job->name,
                " on a process group that was shut down");
    queue_.push_back(std::move(job));
    finished.swap(finished_);
  }
  wake_.notify_all();
  return work;
}

void ProcessGroupHAL::check_ranks_agree(const Job& job) {
  // Each rank's signature as text (cut to fit) after a hash of all of it,
  // so that long signatures (coalesced collectives) are compared whole.
  constexpr int64_t kLength = 256;
  auto text = [](const at::Tensor& t) {
    const char* chars = static_cast<const char*>(t.const_data_ptr());
    return std::string(chars, strnlen(chars, kLength));
  };
  std::string signature =
      c10::str(std::hash<std::string>{}(job.signature), " ", job.signature)
          .substr(0, kLength - 1);
  at::Tensor mine = at::zeros({kLength}, at::kChar);
  std::memcpy(mine.mutable_data_ptr(), signature.data(), signature.size());
  std::vector<at::Tensor> in{mine};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int rank = 0; rank < getSize(); ++rank) {
    out[0].push_back(at::empty({kLength}, at::kChar));
  }
  host_->allgather(out, in)->wait();
  bool agree = true;
  for (const auto& theirs : out[0]) agree = agree && text(theirs) == signature;
  if (agree) return;
  std::string calls;
  for (int rank = 0; rank < getSize(); ++rank) {
    std::string call = text(out[0][rank]);
    calls += c10::str("\n  rank ", rank, ": ", call.substr(call.find(' ') + 1));
  }
  TORCH_CHECK(
      false,
      "the ranks called different collectives, or the same one with tensors "
      "whose dtypes or shapes differ:",
      calls);
}

void ProcessGroupHAL::finish_outputs(Job& job) {
  for (auto& twin : job.averaged_outputs)
    job.reduction->finish(twin, getSize());
  if (job.copy_back.empty()) return;
  c10::Stream copies = pool_stream(*job.device, /*high_priority=*/false);
  c10::StreamGuard on_copies(copies);
  for (auto& [hal_output, twin] : job.copy_back) {
    hal_output.copy_(twin, /*non_blocking=*/true);
  }
  copies.synchronize();
}

void ProcessGroupHAL::retire(std::unique_ptr<Job> job,
                             const std::exception_ptr& error) {
  {
    // The Future's callbacks (DDP's) run here, on the job's device.
    c10::OptionalDeviceGuard on_device;
    if (job->device) {
      on_device.reset_device(
          c10::Device(c10::DeviceType::PrivateUse1, *job->device));
    }
    job->work->complete(error);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  finished_.push_back(std::move(job));
}

std::unique_ptr<ProcessGroupHAL::Job> ProcessGroupHAL::next(
    std::deque<std::unique_ptr<Job>>& queue, const bool& closed) {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [&] { return closed || !queue.empty(); });
  if (queue.empty()) return nullptr;
  std::unique_ptr<Job> job = std::move(queue.front());
  queue.pop_front();
  return job;
}

void ProcessGroupHAL::run_staging_thread() {
  while (std::unique_ptr<Job> job = next(queue_, stopping_)) {
    try {
      if (job->inputs_ready) job->inputs_ready->synchronize();
      if (!job->point_to_point) check_ranks_agree(*job);
      for (auto& twin : job->scaled_inputs) {
        job->reduction->scale(twin, getSize());
      }
      job->host_work = job->run_on_host();
      if (job->point_to_point) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          point_to_point_.push_back(std::move(job));
        }
        wake_.notify_all();
        continue;
      }
      job->host_work->wait();
      finish_outputs(*job);
    } catch (const std::exception& e) {
      std::exception_ptr error = failure(*job, e.what());
      retire(std::move(job), error);
      continue;
    }
    retire(std::move(job), nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    staging_done_ = true;
  }
  wake_.notify_all();
}

void ProcessGroupHAL::run_completion_thread() {
  while (std::unique_ptr<Job> job = next(point_to_point_, staging_done_)) {
    std::exception_ptr error;
    try {
      job->host_work->wait();
      finish_outputs(*job);
    } catch (const std::exception& e) {
      error = failure(*job, e.what());
    }
    retire(std::move(job), error);
  }
}

// ---- the collectives: twins for the arguments, the same call on the host ----

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  auto job = std::make_unique<Job>("broadcast", c10d::OpType::BROADCAST);
  job->describe_root(opts.rootRank);
  job->describe(tensors);
  job->run_on_host = [this, twins = job->inouts(tensors), opts]() mutable {
    return host_->broadcast(twins, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  auto job = std::make_unique<Job>("allreduce", c10d::OpType::ALLREDUCE);
  job->describe(tensors);
  c10d::AllreduceOptions host_opts = job->reduce_with(opts);
  job->run_on_host = [this, host_opts,
                      twins = job->reduced_inouts(tensors)]() mutable {
    return host_->allreduce(twins, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::allreduce_coalesced(
    std::vector<at::Tensor>& tensors,
    const c10d::AllreduceCoalescedOptions& opts) {
  auto job = std::make_unique<Job>("allreduce_coalesced",
                                   c10d::OpType::ALLREDUCE_COALESCED);
  job->describe(tensors);
  c10d::AllreduceCoalescedOptions host_opts = job->reduce_with(opts);
  job->run_on_host = [this, host_opts,
                      twins = job->reduced_inouts(tensors)]() mutable {
    return host_->allreduce_coalesced(twins, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::reduce(
    std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  auto job = std::make_unique<Job>("reduce", c10d::OpType::REDUCE);
  job->describe(tensors);
  job->describe_root(opts.rootRank);
  c10d::ReduceOptions host_opts = job->reduce_with(opts);
  std::vector<at::Tensor> twins;
  if (getRank() == opts.rootRank) {
    twins = job->reduced_inouts(tensors);
  } else {
    // gloo's reduce leaves partial sums in the other ranks' buffers; NCCL
    // leaves their tensors as they were, so gloo gets copies.
    twins =
        job->inputs(tensors, job->reduction->scales_inputs() ? Twin::kScaled
                                                             : Twin::kPrivate);
    job->results = tensors;
  }
  job->run_on_host = [this, twins, host_opts]() mutable {
    return host_->reduce(twins, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::allgather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  auto job = std::make_unique<Job>("allgather", c10d::OpType::ALLGATHER);
  job->describe(inputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs), opts]() mutable {
    return host_->allgather(out, in, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  auto job =
      std::make_unique<Job>("_allgather_base", c10d::OpType::_ALLGATHER_BASE);
  job->describe({input});
  job->run_on_host = [this, out = job->output(output), in = job->input(input),
                      opts]() mutable {
    return host_->_allgather_base(out, in, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  auto job = std::make_unique<Job>("allgather_coalesced",
                                   c10d::OpType::ALLGATHER_COALESCED);
  job->describe(inputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs), opts]() mutable {
    return host_->allgather_coalesced(out, in, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  auto job = std::make_unique<Job>("allgather_into_tensor_coalesced",
                                   c10d::OpType::COALESCED);
  job->describe(inputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs), opts]() mutable {
    return host_->allgather_into_tensor_coalesced(out, in, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::gather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  auto job = std::make_unique<Job>("gather", c10d::OpType::GATHER);
  job->describe_root(opts.rootRank);
  job->describe(inputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs),
                      opts]() mutable { return host_->gather(out, in, opts); };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  auto job = std::make_unique<Job>("scatter", c10d::OpType::SCATTER);
  job->describe_root(opts.rootRank);
  job->describe(outputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs),
                      opts]() mutable { return host_->scatter(out, in, opts); };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::reduce_scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  auto job =
      std::make_unique<Job>("reduce_scatter", c10d::OpType::REDUCE_SCATTER);
  job->describe(inputs);
  c10d::ReduceScatterOptions host_opts = job->reduce_with(opts);
  auto out = job->outputs(outputs);
  job->average(out);
  job->run_on_host = [this, out, in = job->inputs(inputs, job->reduced_input()),
                      host_opts]() mutable {
    return host_->reduce_scatter(out, in, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input,
    const c10d::ReduceScatterOptions& opts) {
  auto job = std::make_unique<Job>("_reduce_scatter_base",
                                   c10d::OpType::_REDUCE_SCATTER_BASE);
  job->describe({input});
  c10d::ReduceScatterOptions host_opts = job->reduce_with(opts);
  at::Tensor out = job->output(output);
  job->average({out});
  job->run_on_host = [this, out, in = job->input(input, job->reduced_input()),
                      host_opts]() mutable {
    return host_->_reduce_scatter_base(out, in, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  auto job = std::make_unique<Job>("reduce_scatter_tensor_coalesced",
                                   c10d::OpType::COALESCED);
  job->describe(inputs);
  c10d::ReduceScatterOptions host_opts = job->reduce_with(opts);
  auto out = job->outputs(outputs);
  job->average(out);
  job->run_on_host = [this, out, in = job->inputs(inputs, job->reduced_input()),
                      host_opts]() mutable {
    return host_->reduce_scatter_tensor_coalesced(out, in, host_opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::alltoall_base(
    at::Tensor& output, at::Tensor& input,
    std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes,
    const c10d::AllToAllOptions& opts) {
  auto job =
      std::make_unique<Job>("alltoall_base", c10d::OpType::ALLTOALL_BASE);
  job->describe_dtypes({input});
  job->run_on_host = [this, out = job->output(output), in = job->input(input),
                      output_split_sizes, input_split_sizes, opts]() mutable {
    return host_->alltoall_base(out, in, output_split_sizes, input_split_sizes,
                                opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::alltoall(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions& opts) {
  auto job = std::make_unique<Job>("alltoall", c10d::OpType::ALLTOALL);
  job->describe_dtypes(inputs);
  job->run_on_host = [this, out = job->outputs(outputs),
                      in = job->inputs(inputs), opts]() mutable {
    return host_->alltoall(out, in, opts);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::send(
    std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  auto job = std::make_unique<Job>("send", c10d::OpType::SEND);
  job->point_to_point = true;
  job->run_on_host = [this, twins = job->inputs(tensors), dst_rank,
                      tag]() mutable {
    return host_->send(twins, dst_rank, tag);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::recv(
    std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  auto job = std::make_unique<Job>("recv", c10d::OpType::RECV);
  job->point_to_point = true;
  job->run_on_host = [this, twins = job->outputs(tensors), src_rank,
                      tag]() mutable {
    return host_->recv(twins, src_rank, tag);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::recvAnysource(
    std::vector<at::Tensor>& tensors, int tag) {
  auto job =
      std::make_unique<Job>("recvAnysource", c10d::OpType::RECVANYSOURCE);
  job->point_to_point = true;
  job->run_on_host = [this, twins = job->outputs(tensors), tag]() mutable {
    return host_->recvAnysource(twins, tag);
  };
  return submit(std::move(job));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHAL::barrier(
    const c10d::BarrierOptions& opts) {
  auto job = std::make_unique<Job>("barrier", c10d::OpType::BARRIER);
  job->run_on_host = [this, opts] { return host_->barrier(opts); };
  return submit(std::move(job));
}

}  // namespace torch_hal
