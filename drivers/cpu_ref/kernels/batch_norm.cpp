// batch_norm and batch_norm_backward over the channel dim (dim 1) of
// [N, C, ...], matching torch's native_batch_norm(_backward) on CPU.
//
// One job per channel: its statistics are double sums in row-major order
// of (n, spatial), two passes (mean, then the squared deviations), so
// results do not depend on the thread count. Per-channel tensors (weight,
// bias, running and saved statistics) may have any floating dtype; torch
// keeps them in f32 for f16/bf16 inputs.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/parallel.h"

namespace cpu_ref {
namespace {

struct ChannelLayout {
  int64_t batch = 0, channels = 0, spatial = 1;
  int64_t Count() const { return batch * spatial; }  // values per channel
  size_t At(int64_t n, int64_t c, int64_t s) const {
    return static_cast<size_t>((n * channels + c) * spatial + s);
  }
};

ChannelLayout CheckInput(const ArgChecker& check, const TensorArg& in) {
  if (in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: in must have rank >= 2 ([N, C, ...]), got {}", check.kernel(),
         in.rank());
  }
  if (!IsFloatingDtype(in.dtype())) {
    check.Unsupported(in, "in", "f32, f64, f16, bf16");
  }
  ChannelLayout layout;
  layout.batch = in.tensor.sizes[0];
  layout.channels = in.tensor.sizes[1];
  for (int d = 2; d < in.rank(); ++d) {
    layout.spatial *= in.tensor.sizes[d];
  }
  return layout;
}

// A per-channel tensor: [C], any floating dtype.
std::optional<TensorArg> ChannelTensor(const ArgChecker& check, uint32_t index,
                                       const char* name, int64_t channels) {
  std::optional<TensorArg> tensor = check.OptionalTensor(index, name);
  if (tensor) {
    if (!IsFloatingDtype(tensor->dtype())) {
      check.Unsupported(*tensor, name, "f32, f64, f16, bf16");
    }
    RequireSizes(check, *tensor, name, {channels});
  }
  return tensor;
}

std::vector<double> ReadOr(const std::optional<TensorArg>& tensor,
                           int64_t count, double fallback) {
  return tensor ? ReadDense(*tensor)
                : std::vector<double>(static_cast<size_t>(count), fallback);
}

void WriteIf(const std::optional<TensorArg>& tensor,
             const std::vector<double>& values) {
  if (tensor) {
    WriteDense(*tensor, values);
  }
}

// Outputs are written one after another, so none may overlap another.
void RequireDisjointOutputs(
    const ArgChecker& check,
    std::initializer_list<std::pair<const std::optional<TensorArg>*,
                                    const char*>> outputs) {
  for (auto a = outputs.begin(); a != outputs.end(); ++a) {
    for (auto b = outputs.begin(); b != a; ++b) {
      if (*a->first && *b->first && (*a->first)->Overlaps(**b->first)) {
        Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: outputs {} and {} overlap",
             check.kernel(), b->second, a->second);
      }
    }
  }
}

bool TrainingFlag(const ArgChecker& check, uint32_t index) {
  const int64_t training = check.Int(index, "training");
  if (training != 0 && training != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: training must be 0 or 1, got {}",
         check.kernel(), training);
  }
  return training != 0;
}

struct BatchNormArgs {
  std::optional<TensorArg> out, save_mean, save_invstd;
  TensorArg in;
  std::optional<TensorArg> weight, bias, running_mean, running_var;
  bool training;
  double momentum, eps;
  ChannelLayout layout;
};

void RunBatchNorm(const BatchNormArgs& args) {
  const ChannelLayout& l = args.layout;
  const std::vector<double> in = ReadDense(args.in);
  const std::vector<double> weight = ReadOr(args.weight, l.channels, 1);
  const std::vector<double> bias = ReadOr(args.bias, l.channels, 0);
  std::vector<double> running_mean = ReadOr(args.running_mean, l.channels, 0);
  std::vector<double> running_var = ReadOr(args.running_var, l.channels, 0);
  std::vector<double> mean(static_cast<size_t>(l.channels));
  std::vector<double> invstd(static_cast<size_t>(l.channels));
  std::vector<double> out(in.size());
  const double count = static_cast<double>(l.Count());
  RunParallel(static_cast<size_t>(l.channels), 8.0 * in.size(),
              [&](const auto& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t c = static_cast<int64_t>(job);
      if (args.training) {
        double sum = 0;
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t s = 0; s < l.spatial; ++s) {
            sum += in[l.At(n, c, s)];
          }
        }
        mean[c] = sum / count;
        double var_sum = 0;
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t s = 0; s < l.spatial; ++s) {
            const double deviation = in[l.At(n, c, s)] - mean[c];
            var_sum += deviation * deviation;
          }
        }
        invstd[c] = 1 / std::sqrt(var_sum / count + args.eps);
        running_mean[c] =
            args.momentum * mean[c] + (1 - args.momentum) * running_mean[c];
        running_var[c] = args.momentum * (var_sum / (count - 1)) +
                         (1 - args.momentum) * running_var[c];
      } else {
        mean[c] = running_mean[c];
        invstd[c] = 1 / std::sqrt(running_var[c] + args.eps);
      }
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t s = 0; s < l.spatial; ++s) {
          const size_t at = l.At(n, c, s);
          out[at] = (in[at] - mean[c]) * invstd[c] * weight[c] + bias[c];
        }
      }
    }
  });
  WriteDense(*args.out, out);
  WriteIf(args.save_mean, mean);
  WriteIf(args.save_invstd, invstd);
  if (args.training) {
    WriteIf(args.running_mean, running_mean);
    WriteIf(args.running_var, running_var);
  }
}

Stream::Operation PrepareBatchNorm(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BATCH_NORM, device, args, num_args, 11);
  BatchNormArgs bn;
  bn.out = check.Tensor(0, "out");
  bn.in = check.Tensor(3, "in");
  bn.layout = CheckInput(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.SameDtype(*bn.out, "out", bn.in, "in");
  check.SameShape(*bn.out, "out", bn.in, "in");
  bn.save_mean = ChannelTensor(check, 1, "save_mean", channels);
  bn.save_invstd = ChannelTensor(check, 2, "save_invstd", channels);
  bn.weight = ChannelTensor(check, 4, "weight", channels);
  bn.bias = ChannelTensor(check, 5, "bias", channels);
  bn.running_mean = ChannelTensor(check, 6, "running_mean", channels);
  bn.running_var = ChannelTensor(check, 7, "running_var", channels);
  bn.training = TrainingFlag(check, 8);
  bn.momentum = check.Float(9, "momentum");
  bn.eps = check.Float(10, "eps");
  if (!(bn.eps >= 0) || !std::isfinite(bn.momentum)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm: needs eps >= 0 and a finite momentum (got {}, {})",
         bn.eps, bn.momentum);
  }
  if (bn.training) {
    if (channels > 0 && bn.layout.Count() == 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: training needs at least one value per channel");
    }
  } else {
    if (!bn.running_mean || !bn.running_var) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: evaluation (training 0) needs running_mean and "
           "running_var");
    }
    if (bn.save_mean || bn.save_invstd) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: save_mean and save_invstd must be NONE in "
           "evaluation (training 0)");
    }
  }
  RequireDisjointOutputs(check, {{&bn.out, "out"},
                                 {&bn.save_mean, "save_mean"},
                                 {&bn.save_invstd, "save_invstd"},
                                 {&bn.running_mean, "running_mean"},
                                 {&bn.running_var, "running_var"}});
  return [bn] { RunBatchNorm(bn); };
}

struct BatchNormBackwardArgs {
  std::optional<TensorArg> grad_in, grad_weight, grad_bias;
  TensorArg grad_out, in;
  std::optional<TensorArg> weight, running_mean, running_var, save_mean,
      save_invstd;
  bool training;
  double eps;
  ChannelLayout layout;
};

void RunBatchNormBackward(const BatchNormBackwardArgs& args) {
  const ChannelLayout& l = args.layout;
  const std::vector<double> in = ReadDense(args.in);
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  const std::vector<double> weight = ReadOr(args.weight, l.channels, 1);
  std::vector<double> mean, invstd;
  if (args.training) {
    mean = ReadDense(*args.save_mean);
    invstd = ReadDense(*args.save_invstd);
  } else {
    mean = ReadDense(*args.running_mean);
    invstd = ReadDense(*args.running_var);
    for (double& value : invstd) {
      value = 1 / std::sqrt(value + args.eps);
    }
  }
  std::vector<double> grad_in(args.grad_in ? in.size() : 0);
  std::vector<double> grad_weight(static_cast<size_t>(l.channels));
  std::vector<double> grad_bias(static_cast<size_t>(l.channels));
  const double count = static_cast<double>(l.Count());
  RunParallel(static_cast<size_t>(l.channels), 10.0 * in.size(),
              [&](const auto& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t c = static_cast<int64_t>(job);
      double sum = 0, dot = 0;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t s = 0; s < l.spatial; ++s) {
          const size_t at = l.At(n, c, s);
          sum += grad_out[at];
          dot += (in[at] - mean[c]) * grad_out[at];
        }
      }
      grad_weight[c] = dot * invstd[c];
      grad_bias[c] = sum;
      if (grad_in.empty()) {
        continue;
      }
      const double k = dot * invstd[c] * invstd[c] / count;
      const double grad_mean = sum / count;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t s = 0; s < l.spatial; ++s) {
          const size_t at = l.At(n, c, s);
          grad_in[at] =
              args.training
                  ? (grad_out[at] - grad_mean - (in[at] - mean[c]) * k) *
                        invstd[c] * weight[c]
                  : grad_out[at] * invstd[c] * weight[c];
        }
      }
    }
  });
  WriteIf(args.grad_in, grad_in);
  WriteIf(args.grad_weight, grad_weight);
  WriteIf(args.grad_bias, grad_bias);
}

Stream::Operation PrepareBatchNormBackward(const Device& device,
                                           const hal_arg* args,
                                           uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BATCH_NORM_BACKWARD, device, args, num_args, 12);
  BatchNormBackwardArgs bn;
  bn.grad_out = check.Tensor(3, "grad_out");
  bn.in = check.Tensor(4, "in");
  bn.layout = CheckInput(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.SameDtype(bn.grad_out, "grad_out", bn.in, "in");
  check.SameShape(bn.grad_out, "grad_out", bn.in, "in");
  bn.grad_in = check.OptionalTensor(0, "grad_in");
  if (bn.grad_in) {
    check.SameDtype(*bn.grad_in, "grad_in", bn.in, "in");
    check.SameShape(*bn.grad_in, "grad_in", bn.in, "in");
  }
  bn.grad_weight = ChannelTensor(check, 1, "grad_weight", channels);
  bn.grad_bias = ChannelTensor(check, 2, "grad_bias", channels);
  bn.weight = ChannelTensor(check, 5, "weight", channels);
  bn.running_mean = ChannelTensor(check, 6, "running_mean", channels);
  bn.running_var = ChannelTensor(check, 7, "running_var", channels);
  bn.save_mean = ChannelTensor(check, 8, "save_mean", channels);
  bn.save_invstd = ChannelTensor(check, 9, "save_invstd", channels);
  bn.training = TrainingFlag(check, 10);
  bn.eps = check.Float(11, "eps");
  if (bn.training && (!bn.save_mean || !bn.save_invstd)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: training needs save_mean and save_invstd");
  }
  if (!bn.training && (!bn.running_mean || !bn.running_var)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: evaluation needs running_mean and running_var");
  }
  RequireDisjointOutputs(check, {{&bn.grad_in, "grad_in"},
                                 {&bn.grad_weight, "grad_weight"},
                                 {&bn.grad_bias, "grad_bias"}});
  return [bn] { RunBatchNormBackward(bn); };
}

}  // namespace

const KernelDef kBatchNormKernel{HAL_KERNEL_BATCH_NORM, PrepareBatchNorm};
const KernelDef kBatchNormBackwardKernel{HAL_KERNEL_BATCH_NORM_BACKWARD,
                                         PrepareBatchNormBackward};

}  // namespace cpu_ref
