// batch_norm and batch_norm_backward over the channel dim (dim 1) of
// [N, C, ...], matching torch's native_batch_norm(_backward) on CPU.
//
// One job per channel: its statistics are double sums, two passes (mean,
// then the squared deviations); each (n, c) run of trailing values is
// summed in reduce.hpp's blocked lanes (which vectorize) and the run totals
// are added in n order, so results do not depend on the thread count.
// Per-channel tensors (weight, bias, running and saved statistics) may have any
// floating dtype; torch keeps them in f32 for f16/bf16 inputs.
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/parallel.hpp"
#include "kernels/reduce.hpp"

namespace cpu_ref {

using driver_kit::BatchNormArgs;
using driver_kit::BatchNormBackwardArgs;
using driver_kit::ChannelLayout;
using driver_kit::check_batch_norm;
using driver_kit::check_batch_norm_backward;
namespace {

std::vector<double> read_or(const std::optional<TensorArg>& tensor,
                            int64_t count, double fallback) {
  return tensor ? read_dense(*tensor)
                : std::vector<double>(static_cast<size_t>(count), fallback);
}

void write_if(const std::optional<TensorArg>& tensor,
              const std::vector<double>& values) {
  if (tensor) {
    write_dense(*tensor, values);
  }
}

// Σ term(at) over the offsets `at` of channel c's values: per n, the run of
// l.spatial values as one blocked sum (through `scratch`, l.spatial long),
// the run totals added in increasing n.
template <typename Term>
double channel_sum(const ChannelLayout& l, int64_t c,
                   std::vector<double>& scratch, Term term) {
  double total = 0;
  for (int64_t n = 0; n < l.batch; ++n) {
    const size_t first = l.at(n, c, 0);
    for (int64_t s = 0; s < l.spatial; ++s) {
      scratch[s] = term(first + s);
    }
    total += dense_blocked_sum(scratch.data(), l.spatial);
  }
  return total;
}

// Runs body(c, scratch) for every channel c, channels split across
// threads, with one l.spatial-long scratch run per thread for channel_sum.
template <typename Body>
void for_each_channel(const ChannelLayout& l, double flops, Body&& body) {
  run_parallel(static_cast<size_t>(l.channels), flops,
               [&](const auto& next_job) {
                 std::vector<double> scratch(static_cast<size_t>(l.spatial));
                 size_t job;
                 while (next_job(job)) {
                   body(static_cast<int64_t>(job), scratch);
                 }
               });
}

void run_batch_norm(const BatchNormArgs& args) {
  const ChannelLayout& l = args.layout;
  const std::vector<double> in = read_dense(args.in);
  const std::vector<double> weight = read_or(args.weight, l.channels, 1);
  const std::vector<double> bias = read_or(args.bias, l.channels, 0);
  std::vector<double> running_mean = read_or(args.running_mean, l.channels, 0);
  std::vector<double> running_var = read_or(args.running_var, l.channels, 0);
  std::vector<double> mean(static_cast<size_t>(l.channels));
  std::vector<double> invstd(static_cast<size_t>(l.channels));
  std::vector<double> out(in.size());
  const double count = static_cast<double>(l.count());
  for_each_channel(
      l, 8.0 * in.size(), [&](int64_t c, std::vector<double>& scratch) {
        if (args.training) {
          const double sum =
              channel_sum(l, c, scratch, [&](size_t at) { return in[at]; });
          const double mu = sum / count;
          mean[c] = mu;
          const double var_sum = channel_sum(l, c, scratch, [&](size_t at) {
            const double deviation = in[at] - mu;
            return deviation * deviation;
          });
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
            const size_t at = l.at(n, c, s);
            out[at] = (in[at] - mean[c]) * invstd[c] * weight[c] + bias[c];
          }
        }
      });
  write_dense(*args.out, out);
  write_if(args.save_mean, mean);
  write_if(args.save_invstd, invstd);
  if (args.training) {
    write_if(args.running_mean, running_mean);
    write_if(args.running_var, running_var);
  }
}

void run_batch_norm_backward(const BatchNormBackwardArgs& args) {
  const ChannelLayout& l = args.layout;
  const std::vector<double> in = read_dense(args.in);
  const std::vector<double> grad_out = read_dense(args.grad_out);
  const std::vector<double> weight = read_or(args.weight, l.channels, 1);
  std::vector<double> mean, invstd;
  if (args.training) {
    mean = read_dense(*args.save_mean);
    invstd = read_dense(*args.save_invstd);
  } else {
    mean = read_dense(*args.running_mean);
    invstd = read_dense(*args.running_var);
    for (double& value : invstd) {
      value = 1 / std::sqrt(value + args.eps);
    }
  }
  std::vector<double> grad_in(args.grad_in ? in.size() : 0);
  std::vector<double> grad_weight(static_cast<size_t>(l.channels));
  std::vector<double> grad_bias(static_cast<size_t>(l.channels));
  const double count = static_cast<double>(l.count());
  for_each_channel(
      l, 10.0 * in.size(), [&](int64_t c, std::vector<double>& scratch) {
        const double mu = mean[c];
        const double sum =
            channel_sum(l, c, scratch, [&](size_t at) { return grad_out[at]; });
        const double dot = channel_sum(l, c, scratch, [&](size_t at) {
          return (in[at] - mu) * grad_out[at];
        });
        grad_weight[c] = dot * invstd[c];
        grad_bias[c] = sum;
        if (grad_in.empty()) {
          return;
        }
        const double k = dot * invstd[c] * invstd[c] / count;
        const double grad_mean = sum / count;
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t s = 0; s < l.spatial; ++s) {
            const size_t at = l.at(n, c, s);
            grad_in[at] =
                args.training
                    ? (grad_out[at] - grad_mean - (in[at] - mean[c]) * k) *
                          invstd[c] * weight[c]
                    : grad_out[at] * invstd[c] * weight[c];
          }
        }
      });
  write_if(args.grad_in, grad_in);
  write_if(args.grad_weight, grad_weight);
  write_if(args.grad_bias, grad_bias);
}

}  // namespace

Stream::Operation prepare_batch_norm(const Device& device, const hal_arg* args,
                                     uint32_t num_args) {
  return
      [bn = check_batch_norm(device, args, num_args)] { run_batch_norm(bn); };
}

Stream::Operation prepare_batch_norm_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args) {
  return [bn = check_batch_norm_backward(device, args, num_args)] {
    run_batch_norm_backward(bn);
  };
}

}  // namespace cpu_ref
