// conv2d, conv2d_backward_input and conv2d_backward_weight (direct loops),
// the conv family's list, and the dense staging helpers of conv.h.
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

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/parallel.h"

namespace cpu_ref {

std::vector<double> ReadDense(const TensorArg& tensor) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(tensor.num_elements));
  VisitDtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachElement<1>(
        tensor.shape(), {Operand(tensor)}, [&](ElementPointers<1> p) {
          values.push_back(static_cast<double>(Widen(Load<T>(p[0]))));
        });
  });
  return values;
}

void WriteDense(const TensorArg& tensor, const std::vector<double>& values) {
  VisitDtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    size_t next = 0;
    ForEachElement<1>(tensor.shape(), {Operand(tensor)},
                      [&](ElementPointers<1> p) {
                        Store(p[0], ConvertTo<T>(values[next++]));
                      });
  });
}

namespace {

// The outputs o in [0, out_size) whose tap at kernel offset `tap` (already
// times the dilation) reads an input position inside [0, size).
std::pair<int64_t, int64_t> ValidRange(int64_t tap, int64_t pad, int64_t stride,
                                       int64_t size, int64_t out_size) {
  // o * stride - pad + tap in [0, size)
  const int64_t shift = tap - pad;
  const int64_t low = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t high = size - shift <= 0 ? 0 : (size - 1 - shift) / stride + 1;
  return {std::min(low, out_size), std::clamp<int64_t>(high, 0, out_size)};
}

void RunConv2d(const Conv2dArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> in = ReadDense(args.in);
  const std::vector<double> weight = ReadDense(args.weight);
  const std::vector<double> bias =
      args.bias ? ReadDense(*args.bias) : std::vector<double>();
  std::vector<double> out(
      static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w));
  RunParallel(
      static_cast<size_t>(g.batch * g.out_channels), g.Flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.out_channels;
          const int64_t oc = static_cast<int64_t>(job) % g.out_channels;
          const int64_t first_channel = oc / g.GroupOut() * g.GroupIn();
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            double* acc =
                &out[((n * g.out_channels + oc) * g.out_h + oh) * g.out_w];
            for (int64_t cl = 0; cl < g.GroupIn(); ++cl) {
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
                      weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) *
                                 g.kernel_w +
                             j];
                  const int64_t tap = j * g.dilation_w;
                  const auto [low, high] =
                      ValidRange(tap, g.pad_w, g.stride_w, g.width, g.out_w);
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
  WriteDense(args.out, out);
}

Stream::Operation PrepareConv2d(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  return [conv = CheckConv2d(device, args, num_args)] { RunConv2d(conv); };
}

void RunConv2dBackwardInput(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  const std::vector<double> weight = ReadDense(args.other);
  std::vector<double> grad_in(
      static_cast<size_t>(g.batch * g.in_channels * g.height * g.width));
  RunParallel(
      static_cast<size_t>(g.batch * g.in_channels), g.Flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.in_channels;
          const int64_t c = static_cast<int64_t>(job) % g.in_channels;
          const int64_t group = c / g.GroupIn();
          const int64_t cl = c % g.GroupIn();
          for (int64_t ih = 0; ih < g.height; ++ih) {
            double* acc =
                &grad_in[((n * g.in_channels + c) * g.height + ih) * g.width];
            for (int64_t ol = 0; ol < g.GroupOut(); ++ol) {
              const int64_t oc = group * g.GroupOut() + ol;
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
                      weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) *
                                 g.kernel_w +
                             j];
                  const int64_t tap = j * g.dilation_w;
                  const auto [low, high] =
                      ValidRange(tap, g.pad_w, g.stride_w, g.width, g.out_w);
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
  WriteDense(args.grad, grad_in);
}

void RunConv2dBackwardWeight(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  const std::vector<double> in = ReadDense(args.other);
  std::vector<double> grad_weight(static_cast<size_t>(
      g.out_channels * g.GroupIn() * g.kernel_h * g.kernel_w));
  RunParallel(
      static_cast<size_t>(g.out_channels * g.GroupIn()), g.Flops(),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t oc = static_cast<int64_t>(job) / g.GroupIn();
          const int64_t cl = static_cast<int64_t>(job) % g.GroupIn();
          const int64_t c = oc / g.GroupOut() * g.GroupIn() + cl;
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const int64_t tap = j * g.dilation_w;
              const auto [low, high] =
                  ValidRange(tap, g.pad_w, g.stride_w, g.width, g.out_w);
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
              grad_weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) *
                              g.kernel_w +
                          j] = acc;
            }
          }
        }
      });
  WriteDense(args.grad, grad_weight);
}

Stream::Operation PrepareConv2dBackwardInput(const Device& device,
                                             const hal_arg* args,
                                             uint32_t num_args) {
  return [conv = CheckConv2dBackwardInput(device, args, num_args)] {
    RunConv2dBackwardInput(conv);
  };
}

Stream::Operation PrepareConv2dBackwardWeight(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args) {
  return [conv = CheckConv2dBackwardWeight(device, args, num_args)] {
    RunConv2dBackwardWeight(conv);
  };
}

}  // namespace

const KernelDef kConv2dKernel{HAL_KERNEL_CONV2D, PrepareConv2d};
const KernelDef kConv2dBackwardInputKernel{HAL_KERNEL_CONV2D_BACKWARD_INPUT,
                                           PrepareConv2dBackwardInput};
const KernelDef kConv2dBackwardWeightKernel{HAL_KERNEL_CONV2D_BACKWARD_WEIGHT,
                                            PrepareConv2dBackwardWeight};

KernelList ConvKernels() {
  static constexpr const KernelDef* kKernels[] = {&kConv2dKernel,
                                                  &kConv2dBackwardInputKernel,
                                                  &kConv2dBackwardWeightKernel,
                                                  &kMaxPool2dKernel,
                                                  &kMaxPool2dBackwardKernel,
                                                  &kBatchNormKernel,
                                                  &kBatchNormBackwardKernel};
  return kKernels;
}

}  // namespace cpu_ref
