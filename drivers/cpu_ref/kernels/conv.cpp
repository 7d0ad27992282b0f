// conv2d, conv2d_backward_input and conv2d_backward_weight (direct loops),
// the conv family's list, and the dense staging helpers of conv.hpp.
//
// Every output element is one double accumulator that sees its terms in the
// order table/conv.json defines; jobs (one per output plane or weight
// slice) write disjoint parts of a dense result, so the thread count never
// changes a bit. Inner loops run along a row (w), where both the input and
// the output are contiguous in the dense buffers.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/parallel.hpp"

namespace cpu_ref {

using driver_kit::check_conv2d;
using driver_kit::check_conv2d_backward_input;
using driver_kit::check_conv2d_backward_weight;
using driver_kit::Conv2dArgs;
using driver_kit::Conv2dBackwardArgs;
using driver_kit::ConvGeometry;

std::vector<double> read_dense(const TensorArg& tensor) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(tensor.num_elements));
  visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_element<1>(
        tensor.shape(), {strided_operand(tensor)}, [&](ElementPointers<1> p) {
          values.push_back(static_cast<double>(widen(load<T>(p[0]))));
        });
  });
  return values;
}

void write_dense(const TensorArg& tensor, const std::vector<double>& values) {
  visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    size_t next = 0;
    for_each_element<1>(tensor.shape(), {strided_operand(tensor)},
                        [&](ElementPointers<1> p) {
                          store(p[0], convert_to<T>(values[next++]));
                        });
  });
}

namespace {

// The outputs o in [0, out_size) whose tap at kernel offset `tap` (already
// times the dilation) reads an input position inside [0, size).
std::pair<int64_t, int64_t> valid_range(int64_t tap, int64_t pad,
                                        int64_t stride, int64_t size,
                                        int64_t out_size) {
  // o * stride - pad + tap in [0, size)
  const int64_t shift = tap - pad;
  const int64_t low = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t high = size - shift <= 0 ? 0 : (size - 1 - shift) / stride + 1;
  return {std::min(low, out_size), std::clamp<int64_t>(high, 0, out_size)};
}

void run_conv2d(const Conv2dArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> in = read_dense(args.in);
  const std::vector<double> weight = read_dense(args.weight);
  const std::vector<double> bias =
      args.bias ? read_dense(*args.bias) : std::vector<double>();
  std::vector<double> out(
      static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w));
  run_parallel(
      static_cast<size_t>(g.batch * g.out_channels), g.flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.out_channels;
          const int64_t oc = static_cast<int64_t>(job) % g.out_channels;
          const int64_t first_channel = oc / g.group_out() * g.group_in();
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            double* acc =
                &out[((n * g.out_channels + oc) * g.out_h + oh) * g.out_w];
            for (int64_t cl = 0; cl < g.group_in(); ++cl) {
              const int64_t c = first_channel + cl;
              for (int64_t i = 0; i < g.kernel_h; ++i) {
                const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilation_h;
                if (ih < 0 || ih >= g.height) {
                  continue;
                }
                const double* row =
                    &in[((n * g.in_channels + c) * g.height + ih) * g.width];
                for (int64_t j = 0; j < g.kernel_w; ++j) {
                  const double w =
                      weight[((oc * g.group_in() + cl) * g.kernel_h + i) *
                                 g.kernel_w +
                             j];
                  const int64_t tap = j * g.dilation_w;
                  const auto [low, high] =
                      valid_range(tap, g.pad_w, g.stride_w, g.width, g.out_w);
                  const double* src = row + tap - g.pad_w;
                  for (int64_t ow = low; ow < high; ++ow) {
                    acc[ow] += w * src[ow * g.stride_w];
                  }
                }
              }
            }
            if (!bias.empty()) {
              for (int64_t ow = 0; ow < g.out_w; ++ow) {
                acc[ow] += bias[oc];
              }
            }
          }
        }
      });
  write_dense(args.out, out);
}

Stream::Operation prepare_conv2d(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  return [conv = check_conv2d(device, args, num_args)] { run_conv2d(conv); };
}

void run_conv2d_backward_input(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = read_dense(args.grad_out);
  const std::vector<double> weight = read_dense(args.other);
  std::vector<double> grad_in(
      static_cast<size_t>(g.batch * g.in_channels * g.height * g.width));
  run_parallel(
      static_cast<size_t>(g.batch * g.in_channels), g.flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.in_channels;
          const int64_t c = static_cast<int64_t>(job) % g.in_channels;
          const int64_t group = c / g.group_in();
          const int64_t cl = c % g.group_in();
          for (int64_t ih = 0; ih < g.height; ++ih) {
            double* acc =
                &grad_in[((n * g.in_channels + c) * g.height + ih) * g.width];
            for (int64_t ol = 0; ol < g.group_out(); ++ol) {
              const int64_t oc = group * g.group_out() + ol;
              for (int64_t i = 0; i < g.kernel_h; ++i) {
                const int64_t t = ih + g.pad_h - i * g.dilation_h;
                if (t < 0 || t % g.stride_h != 0 || t / g.stride_h >= g.out_h) {
                  continue;
                }
                const double* row =
                    &grad_out[((n * g.out_channels + oc) * g.out_h +
                               t / g.stride_h) *
                              g.out_w];
                for (int64_t j = 0; j < g.kernel_w; ++j) {
                  const double w =
                      weight[((oc * g.group_in() + cl) * g.kernel_h + i) *
                                 g.kernel_w +
                             j];
                  const int64_t tap = j * g.dilation_w;
                  const auto [low, high] =
                      valid_range(tap, g.pad_w, g.stride_w, g.width, g.out_w);
                  double* dst = acc + tap - g.pad_w;
                  for (int64_t ow = low; ow < high; ++ow) {
                    dst[ow * g.stride_w] += row[ow] * w;
                  }
                }
              }
            }
          }
        }
      });
  write_dense(args.grad, grad_in);
}

void run_conv2d_backward_weight(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = read_dense(args.grad_out);
  const std::vector<double> in = read_dense(args.other);
  std::vector<double> grad_weight(static_cast<size_t>(
      g.out_channels * g.group_in() * g.kernel_h * g.kernel_w));
  run_parallel(
      static_cast<size_t>(g.out_channels * g.group_in()), g.flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t oc = static_cast<int64_t>(job) / g.group_in();
          const int64_t cl = static_cast<int64_t>(job) % g.group_in();
          const int64_t c = oc / g.group_out() * g.group_in() + cl;
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const int64_t tap = j * g.dilation_w;
              const auto [low, high] =
                  valid_range(tap, g.pad_w, g.stride_w, g.width, g.out_w);
              double acc = 0;
              for (int64_t n = 0; n < g.batch; ++n) {
                for (int64_t oh = 0; oh < g.out_h; ++oh) {
                  const int64_t ih =
                      oh * g.stride_h - g.pad_h + i * g.dilation_h;
                  if (ih < 0 || ih >= g.height) {
                    continue;
                  }
                  const double* go =
                      &grad_out[((n * g.out_channels + oc) * g.out_h + oh) *
                                g.out_w];
                  const double* src =
                      &in[((n * g.in_channels + c) * g.height + ih) * g.width] +
                      tap - g.pad_w;
                  for (int64_t ow = low; ow < high; ++ow) {
                    acc += go[ow] * src[ow * g.stride_w];
                  }
                }
              }
              grad_weight[((oc * g.group_in() + cl) * g.kernel_h + i) *
                              g.kernel_w +
                          j] = acc;
            }
          }
        }
      });
  write_dense(args.grad, grad_weight);
}

Stream::Operation prepare_conv2d_backward_input(const Device& device,
                                                const hal_arg* args,
                                                uint32_t num_args) {
  return [conv = check_conv2d_backward_input(device, args, num_args)] {
    run_conv2d_backward_input(conv);
  };
}

Stream::Operation prepare_conv2d_backward_weight(const Device& device,
                                                 const hal_arg* args,
                                                 uint32_t num_args) {
  return [conv = check_conv2d_backward_weight(device, args, num_args)] {
    run_conv2d_backward_weight(conv);
  };
}

}  // namespace

KernelList conv_kernels() {
  return driver_kit::conv_kernel_list<KernelDef>({
      .conv2d = prepare_conv2d,
      .conv2d_backward_input = prepare_conv2d_backward_input,
      .conv2d_backward_weight = prepare_conv2d_backward_weight,
      .max_pool2d = prepare_max_pool2d,
      .max_pool2d_backward = prepare_max_pool2d_backward,
      .batch_norm = prepare_batch_norm,
      .batch_norm_backward = prepare_batch_norm_backward,
  });
}

}  // namespace cpu_ref
