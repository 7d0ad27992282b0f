// hal_kernel_bench: standard kernels of one HAL driver ($HAL_DRIVER, default
// cpu_ref) against torch's own CPU implementation of the same op, both
// measured in this process on the same input values, so their ratio means
// the same on any machine.
//
// Each case is a pair of benchmarks, <family>/<case>/hal_<driver> (launch +
// Stream::synchronize, data already in device memory) and
// <family>/<case>/torch_cpu (the equivalent ATen call). Both write into
// outputs allocated before timing: torch through its out= variant where
// ATen has one (every case but conv2d). torch gets as many intra-op threads
// as the device has compute units (cpu_ref: HAL_CPU_REF_THREADS).
// bench/report.py turns the output into the ratio table of
// docs/performance.md.
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/add.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/full.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/nll_loss_forward.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/var.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "hal/hal.hpp"

namespace {

using hal_bench::add;
using hal_bench::bench_device;

constexpr int64_t kElements = int64_t{1} << 20;

// Device copies of torch tensors, made before timing for a workload's HAL
// arguments; the copies live as long as this object.
class DeviceCopies {
 public:
  explicit DeviceCopies(const hal::Device& device)
      : device_(device), stream_(device.create_stream()) {}

  // The argument for a device copy of `host` (contiguous f32 or i64).
  hal_arg operator()(const at::Tensor& host) {
    return view(host, host.sizes(), {});
  }

  // The same, seen through other sizes and element strides (a broadcast
  // bias, a transposed weight).
  hal_arg view(const at::Tensor& host, at::IntArrayRef sizes,
               at::IntArrayRef strides) {
    if (!host.is_contiguous()) {
      throw std::invalid_argument("DeviceCopies: host tensor not contiguous");
    }
    const uint64_t bytes = host.nbytes();
    hal::Buffer buffer = device_.allocate(bytes);
    stream_.copy_to_device(buffer.ptr(), host.data_ptr(), bytes);
    const hal_arg arg = hal::tensor_arg(
        buffer.ptr(), dtype_of(host), std::span(sizes.data(), sizes.size()),
        std::span(strides.data(), strides.size()));
    buffers_.push_back(std::move(buffer));
    return arg;
  }

 private:
  static hal_dtype dtype_of(const at::Tensor& host) {
    switch (host.scalar_type()) {
      case at::kFloat:
        return HAL_DTYPE_F32;
      case at::kLong:
        return HAL_DTYPE_I64;
      default:
        throw std::invalid_argument(
            std::string("DeviceCopies: no HAL dtype for ") +
            std::string(host.dtype().name()));
    }
  }

  hal::Device device_;
  hal::Stream stream_;
  std::vector<hal::Buffer> buffers_;
};

// One op ready to run both ways on the same inputs: the standard kernel's
// arguments over device copies, and the equivalent ATen call over the host
// tensors (which it keeps alive).
struct Workload {
  std::vector<hal_arg> hal_args;
  std::function<void()> torch_op;
};

hal_arg arg(int64_t value) { return hal::scalar_arg(value); }
hal_arg arg(double value) { return hal::scalar_arg(value); }

// --- elementwise: 1M f32 ---------------------------------------------------

Workload add_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  at::Tensor a = at::randn({kElements});
  at::Tensor b = at::randn({kElements});
  return {{dev(out), dev(a), dev(b), arg(1.0)},
          [=]() mutable { at::add_out(out, a, b); }};
}

Workload mul_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  at::Tensor a = at::randn({kElements});
  at::Tensor b = at::randn({kElements});
  return {{dev(out), dev(a), dev(b)},
          [=]() mutable { at::mul_out(out, a, b); }};
}

Workload gelu_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  at::Tensor in = at::randn({kElements});
  return {{dev(out), dev(in), arg(int64_t{0})},  // 0: exact (erf)
          [=]() mutable { at::gelu_out(out, in); }};
}

Workload exp_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  at::Tensor in = at::randn({kElements});
  return {{dev(out), dev(in)}, [=]() mutable { at::exp_out(out, in); }};
}

// --- reduction: [1024, 1024] f32 along dim 1 --------------------------------

constexpr int64_t kRows = 1024;
constexpr int64_t kCols = 1024;

Workload sum_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kRows, 1});
  at::Tensor in = at::randn({kRows, kCols});
  return {{dev(out), dev(in)},
          [=]() mutable { at::sum_out(out, in, {1}, /*keepdim=*/true); }};
}

Workload softmax_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kRows, kCols});
  at::Tensor in = at::randn({kRows, kCols});
  return {{dev(out), dev(in), arg(int64_t{1})},
          [=]() mutable { at::_softmax_out(out, in, 1, false); }};
}

Workload var_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kRows, 1});
  at::Tensor in = at::randn({kRows, kCols});
  return {{dev(out), dev(in), arg(1.0)},  // correction 1: unbiased
          [=]() mutable {
            at::var_out(out, in, {1}, at::Scalar(1), /*keepdim=*/true);
          }};
}

// --- linalg ----------------------------------------------------------------

Workload matmul_workload(DeviceCopies& dev, int64_t n) {
  at::Tensor out = at::empty({n, n});
  at::Tensor a = at::randn({n, n});
  at::Tensor b = at::randn({n, n});
  // torch's matmul of two matrices is mm.
  return {{dev(out), dev(a), dev(b)}, [=]() mutable { at::mm_out(out, a, b); }};
}

// nn.Linear(512, 512) on a batch of 64: out = bias + x @ weight^T, what
// torch's linear calls for 2-D input with a bias.
Workload addmm_workload(DeviceCopies& dev) {
  constexpr int64_t kBatch = 64, kIn = 512, kOut = 512;
  at::Tensor out = at::empty({kBatch, kOut});
  at::Tensor x = at::randn({kBatch, kIn});
  at::Tensor weight = at::randn({kOut, kIn});
  at::Tensor bias = at::randn({kOut});
  return {{dev(out), dev.view(bias, {kBatch, kOut}, {0, 1}), dev(x),
           dev.view(weight, {kIn, kOut}, {1, kIn}), arg(1.0), arg(1.0)},
          [=]() mutable { at::addmm_out(out, bias, x, weight.t()); }};
}

// --- nn --------------------------------------------------------------------

Workload layer_norm_workload(DeviceCopies& dev) {
  constexpr int64_t kBatch = 64, kFeatures = 512;
  constexpr double kEps = 1e-5;
  at::Tensor out = at::empty({kBatch, kFeatures});
  at::Tensor mean = at::empty({kBatch, 1});
  at::Tensor rstd = at::empty({kBatch, 1});
  at::Tensor in = at::randn({kBatch, kFeatures});
  at::Tensor weight = at::randn({kFeatures});
  at::Tensor bias = at::randn({kFeatures});
  return {{dev(out), dev(mean), dev(rstd), dev(in), dev(weight), dev(bias),
           arg(int64_t{1}), arg(kEps)},
          [=]() mutable {
            at::native_layer_norm_out(out, mean, rstd, in, {kFeatures}, weight,
                                      bias, kEps);
          }};
}

// Mean loss over 4096 samples of 1000 classes, no class weights.
Workload nll_loss_workload(DeviceCopies& dev) {
  constexpr int64_t kSamples = 4096, kClasses = 1000;
  constexpr int64_t kMean = 1, kIgnoreIndex = -100;
  at::Tensor out = at::empty({});
  at::Tensor total_weight = at::empty({});
  at::Tensor in = at::randn({kSamples, kClasses});
  at::Tensor target = at::randint(kClasses, {kSamples});
  return {{dev(out), dev(total_weight), dev(in), dev(target), hal::none_arg(),
           arg(kMean), arg(kIgnoreIndex)},
          [=]() mutable {
            at::nll_loss_forward_out(out, total_weight, in, target, {}, kMean,
                                     kIgnoreIndex);
          }};
}

// --- conv: a [8, 16, 32, 32] batch through a 3x3 convolution to 32 channels,
// and that layer's pooling and batch norm ------------------------------------

constexpr int64_t kImages = 8, kSide = 32, kConvIn = 16, kConvOut = 32;

Workload conv2d_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kImages, kConvOut, kSide, kSide});
  at::Tensor in = at::randn({kImages, kConvIn, kSide, kSide});
  at::Tensor weight = at::randn({kConvOut, kConvIn, 3, 3});
  at::Tensor bias = at::randn({kConvOut});
  const int64_t one = 1;
  // conv2d has no out= variant: torch allocates its output each call.
  return {
      {dev(out), dev(in), dev(weight), dev(bias), arg(one), arg(one), arg(one),
       arg(one), arg(one), arg(one), arg(one)},
      [=] { benchmark::DoNotOptimize(at::conv2d(in, weight, bias, 1, 1)); }};
}

// 2x2, stride 2, with indices (the kernel always computes them).
Workload max_pool2d_workload(DeviceCopies& dev) {
  constexpr int64_t kHalf = kSide / 2;
  at::Tensor out = at::empty({kImages, kConvOut, kHalf, kHalf});
  at::Tensor indices = at::empty({kImages, kConvOut, kHalf, kHalf}, at::kLong);
  at::Tensor in = at::randn({kImages, kConvOut, kSide, kSide});
  const int64_t two = 2, zero = 0, one = 1;
  return {{dev(out), dev(indices), dev(in), arg(two), arg(two), arg(two),
           arg(two), arg(zero), arg(zero), arg(one), arg(one), arg(zero)},
          [=]() mutable {
            at::max_pool2d_with_indices_out(out, indices, in, {2, 2}, {2, 2});
          }};
}

// Training mode: batch statistics, running statistics updated.
Workload batch_norm_workload(DeviceCopies& dev) {
  constexpr double kMomentum = 0.1, kEps = 1e-5;
  at::Tensor out = at::empty({kImages, kConvOut, kSide, kSide});
  at::Tensor save_mean = at::empty({kConvOut});
  at::Tensor save_invstd = at::empty({kConvOut});
  at::Tensor in = at::randn({kImages, kConvOut, kSide, kSide});
  at::Tensor weight = at::randn({kConvOut});
  at::Tensor bias = at::randn({kConvOut});
  at::Tensor running_mean = at::zeros({kConvOut});
  at::Tensor running_var = at::ones({kConvOut});
  return {{dev(out), dev(save_mean), dev(save_invstd), dev(in), dev(weight),
           dev(bias), dev(running_mean), dev(running_var), arg(int64_t{1}),
           arg(kMomentum), arg(kEps)},
          [=]() mutable {
            at::native_batch_norm_out(out, save_mean, save_invstd, in, weight,
                                      bias, running_mean, running_var,
                                      /*training=*/true, kMomentum, kEps);
          }};
}

// --- indexing --------------------------------------------------------------

// An embedding lookup: 4096 rows of a [16384, 256] table (torch's embedding
// is index_select on dim 0).
Workload index_select_workload(DeviceCopies& dev) {
  constexpr int64_t kTable = 16384, kWidth = 256, kLookups = 4096;
  at::Tensor out = at::empty({kLookups, kWidth});
  at::Tensor table = at::randn({kTable, kWidth});
  at::Tensor index = at::randint(kTable, {kLookups});
  return {{dev(out), dev(table), arg(int64_t{0}), dev(index)},
          [=]() mutable { at::index_select_out(out, table, 0, index); }};
}

// 1M values added into 1024 rows along dim 0 (a segment sum).
Workload scatter_add_workload(DeviceCopies& dev) {
  constexpr int64_t kTargets = 1024, kSources = 4096, kWidth = 256;
  at::Tensor self = at::zeros({kTargets, kWidth});
  at::Tensor src = at::randn({kSources, kWidth});
  at::Tensor index = at::randint(kTargets, {kSources, kWidth});
  return {{dev(self), arg(int64_t{0}), dev(index), dev(src)},
          [=]() mutable { self.scatter_add_(0, index, src); }};
}

// --- random: 1M f32 (HAL: counter-based Philox; torch: its default CPU
// generator, mt19937) ---------------------------------------------------------

constexpr int64_t kSeed = 42, kOffset = 0;

Workload uniform_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  return {{dev(out), arg(kSeed), arg(kOffset), arg(0.0), arg(1.0)},
          [=]() mutable { out.uniform_(0, 1); }};
}

Workload bernoulli_workload(DeviceCopies& dev) {
  at::Tensor out = at::empty({kElements});
  return {{dev(out), arg(kSeed), arg(kOffset), arg(0.5)},
          [=]() mutable { out.bernoulli_(0.5); }};
}

// --- optim: one Adam step on 1M parameters; torch's fused CPU Adam
// (torch.optim.Adam(fused=True)) ----------------------------------------------

Workload adam_step_workload(DeviceCopies& dev) {
  constexpr double kStep = 10, kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999,
                   kEps = 1e-8, kWeightDecay = 0;
  at::Tensor param = at::randn({kElements});
  at::Tensor grad = at::randn({kElements});
  at::Tensor exp_avg = at::zeros({kElements});
  at::Tensor exp_avg_sq = at::zeros({kElements});
  at::Tensor step = at::full({}, kStep);
  const int64_t no = 0;
  return {{dev(param), dev(grad), dev(exp_avg), dev(exp_avg_sq),
           hal::none_arg(), arg(kStep), arg(kLr), arg(kBeta1), arg(kBeta2),
           arg(kEps), arg(kWeightDecay), arg(no), arg(no), arg(no)},
          [=] {
            at::_fused_adam_({param}, {grad}, {exp_avg}, {exp_avg_sq}, {},
                             {step}, kLr, kBeta1, kBeta2, kWeightDecay, kEps,
                             /*amsgrad=*/false, /*maximize=*/false);
          }};
}

struct KernelCase {
  const char* family;
  const char* name;    // the kernel, plus its shape where it has several
  const char* kernel;  // the standard kernel
  std::function<Workload(DeviceCopies&)> make;
};

const std::vector<KernelCase>& kernel_cases() {
  static const std::vector<KernelCase> cases = {
      {"elementwise", "add", HAL_KERNEL_ADD, add_workload},
      {"elementwise", "mul", HAL_KERNEL_MUL, mul_workload},
      {"elementwise", "gelu", HAL_KERNEL_GELU, gelu_workload},
      {"elementwise", "exp", HAL_KERNEL_EXP, exp_workload},
      {"reduction", "sum", HAL_KERNEL_SUM, sum_workload},
      {"reduction", "softmax", HAL_KERNEL_SOFTMAX, softmax_workload},
      {"reduction", "var", HAL_KERNEL_VAR, var_workload},
      {"linalg", "matmul/256", HAL_KERNEL_MATMUL,
       [](DeviceCopies& dev) { return matmul_workload(dev, 256); }},
      {"linalg", "matmul/512", HAL_KERNEL_MATMUL,
       [](DeviceCopies& dev) { return matmul_workload(dev, 512); }},
      {"linalg", "addmm", HAL_KERNEL_ADDMM, addmm_workload},
      {"nn", "layer_norm", HAL_KERNEL_LAYER_NORM, layer_norm_workload},
      {"nn", "nll_loss", HAL_KERNEL_NLL_LOSS, nll_loss_workload},
      {"conv", "conv2d", HAL_KERNEL_CONV2D, conv2d_workload},
      {"conv", "max_pool2d", HAL_KERNEL_MAX_POOL2D, max_pool2d_workload},
      {"conv", "batch_norm", HAL_KERNEL_BATCH_NORM, batch_norm_workload},
      {"indexing", "index_select", HAL_KERNEL_INDEX_SELECT,
       index_select_workload},
      {"indexing", "scatter_add", HAL_KERNEL_SCATTER_ADD, scatter_add_workload},
      {"random", "uniform", HAL_KERNEL_UNIFORM, uniform_workload},
      {"random", "bernoulli", HAL_KERNEL_BERNOULLI, bernoulli_workload},
      {"optim", "adam_step", HAL_KERNEL_ADAM_STEP, adam_step_workload},
  };
  return cases;
}

// Launch + synchronize of the case's kernel on inputs already on the device.
void bm_hal(benchmark::State& state, const KernelCase* kernel_case) {
  const hal::Device& device = bench_device();
  DeviceCopies copies(device);
  const Workload workload = kernel_case->make(copies);
  const hal::Kernel kernel = device.kernel(kernel_case->kernel);
  const hal::Stream stream = device.create_stream();
  // Warm-up; a launch error surfaces here, before timing.
  stream.launch(kernel, workload.hal_args);
  stream.synchronize();
  for (auto _ : state) {
    stream.launch(kernel, workload.hal_args);
    stream.synchronize();
  }
}

// The equivalent ATen call, on host tensors with the same values.
void bm_torch(benchmark::State& state, const KernelCase* kernel_case) {
  DeviceCopies copies(bench_device());
  const Workload workload = kernel_case->make(copies);
  workload.torch_op();
  for (auto _ : state) {
    workload.torch_op();
  }
}

void register_benchmarks(const std::string& driver) {
  for (const KernelCase& kernel_case : kernel_cases()) {
    const std::string prefix =
        std::string(kernel_case.family) + "/" + kernel_case.name;
    add(prefix + "/hal_" + driver, bm_hal, &kernel_case)
        ->Unit(benchmark::kMicrosecond);
    add(prefix + "/torch_cpu", bm_torch, &kernel_case)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!hal_bench::add_device_context("hal_kernel_bench")) return 1;
  // torch gets as many threads as the device has compute units: cpu_ref's
  // kernel threads (HAL_CPU_REF_THREADS, default the online CPUs).
  const int threads = static_cast<int>(
      std::max(1u, hal_bench::bench_device().properties().compute_units));
  at::set_num_threads(threads);
  benchmark::AddCustomContext("torch_threads",
                              std::to_string(at::get_num_threads()) +
                                  " intra-op (= the device's compute units; "
                                  "cpu_ref: its kernel threads)");
  register_benchmarks(hal_bench::bench_runtime().driver().name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
