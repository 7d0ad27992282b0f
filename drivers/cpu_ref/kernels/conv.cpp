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
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/parallel.h"

namespace cpu_ref {

std::vector<double> ReadDense(const TensorArg& tensor) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(tensor.num_elements));
  VisitDtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachElement<1>(tensor.shape(), {tensor.operand()},
                      [&](ElementPointers<1> p) {
                        values.push_back(static_cast<double>(Widen(Load<T>(p[0]))));
                      });
  });
  return values;
}

void WriteDense(const TensorArg& tensor, const std::vector<double>& values) {
  VisitDtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    size_t next = 0;
    ForEachElement<1>(tensor.shape(), {tensor.operand()},
                      [&](ElementPointers<1> p) {
                        Store(p[0], ConvertTo<T>(values[next++]));
                      });
  });
}

void RequireSizes(const ArgChecker& check, const TensorArg& tensor,
                  const char* name, std::initializer_list<int64_t> sizes) {
  const hal_tensor& t = tensor.tensor;
  if (t.rank == static_cast<int>(sizes.size()) &&
      std::equal(sizes.begin(), sizes.end(), t.sizes)) {
    return;
  }
  Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has shape [{}], expected [{}]",
       check.kernel(), name, fmt::join(t.sizes, t.sizes + t.rank, ", "),
       fmt::join(sizes, ", "));
}

void RequireSameFloating(const ArgChecker& check, const TensorArg& tensor,
                         const char* name, const TensorArg& reference,
                         const char* reference_name) {
  check.SameDtype(tensor, name, reference, reference_name);
  if (!IsFloatingDtype(tensor.dtype())) {
    check.Unsupported(tensor, name, "f32, f64, f16, bf16");
  }
}

int64_t IntAtLeast(const ArgChecker& check, uint32_t index, const char* name,
                   int64_t minimum) {
  const int64_t value = check.Int(index, name);
  // The upper bound keeps index arithmetic far from overflow.
  constexpr int64_t kMaximum = int64_t{1} << 31;
  if (value < minimum || value > kMaximum) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {}, outside [{}, {}]",
         check.kernel(), name, value, minimum, kMaximum);
  }
  return value;
}

namespace {

struct ConvGeometry {
  int64_t batch, in_channels, height, width;   // input [N, C, H, W]
  int64_t out_channels, kernel_h, kernel_w;    // weight [O, C/g, kH, kW]
  int64_t out_h, out_w;                        // output [N, O, oH, oW]
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;

  int64_t GroupIn() const { return in_channels / groups; }
  int64_t GroupOut() const { return out_channels / groups; }
  double Flops() const {
    return 2.0 * static_cast<double>(batch) * out_channels * out_h * out_w *
           GroupIn() * kernel_h * kernel_w;
  }
  // The outputs o in [0, out_size) whose tap at kernel offset `tap` (already
  // times the dilation) reads an input position inside [0, size).
  static std::pair<int64_t, int64_t> ValidRange(int64_t tap, int64_t pad,
                                                int64_t stride, int64_t size,
                                                int64_t out_size) {
    // o * stride - pad + tap in [0, size)
    const int64_t shift = tap - pad;
    const int64_t low = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
    const int64_t high =
        size - shift <= 0 ? 0 : (size - 1 - shift) / stride + 1;
    return {std::min(low, out_size), std::clamp<int64_t>(high, 0, out_size)};
  }
};

int64_t ConvOutputSize(const ArgChecker& check, const char* dim, int64_t size,
                       int64_t pad, int64_t dilation, int64_t kernel,
                       int64_t stride) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: the kernel ({} taps, dilation {}) is larger than the padded "
         "input ({} + 2 * {}) along {}",
         check.kernel(), kernel, dilation, size, pad, dim);
  }
  return span / stride + 1;
}

// Reads the seven ints starting at `first` and checks input and weight
// sizes against them.
ConvGeometry CheckGeometry(const ArgChecker& check, uint32_t first,
                           const TensorArg& input, const char* input_name,
                           const TensorArg& weight, const char* weight_name) {
  if (input.rank() != 4 || weight.rank() != 4) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} and {} must have rank 4 (got {} and {})", check.kernel(),
         input_name, weight_name, input.rank(), weight.rank());
  }
  ConvGeometry g;
  g.stride_h = IntAtLeast(check, first, "stride_h", 1);
  g.stride_w = IntAtLeast(check, first + 1, "stride_w", 1);
  g.pad_h = IntAtLeast(check, first + 2, "pad_h", 0);
  g.pad_w = IntAtLeast(check, first + 3, "pad_w", 0);
  g.dilation_h = IntAtLeast(check, first + 4, "dilation_h", 1);
  g.dilation_w = IntAtLeast(check, first + 5, "dilation_w", 1);
  g.groups = IntAtLeast(check, first + 6, "groups", 1);
  const int64_t* in = input.tensor.sizes;
  const int64_t* w = weight.tensor.sizes;
  g.batch = in[0];
  g.in_channels = in[1];
  g.height = in[2];
  g.width = in[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  if (g.in_channels % g.groups != 0 || g.out_channels % g.groups != 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: groups {} must divide the {} input and {} output channels",
         check.kernel(), g.groups, g.in_channels, g.out_channels);
  }
  if (w[1] != g.GroupIn()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} has {} channels per group in dim 1, expected {} ({} / {} "
         "groups)",
         check.kernel(), weight_name, w[1], g.GroupIn(), g.in_channels,
         g.groups);
  }
  if (g.kernel_h < 1 || g.kernel_w < 1 || g.kernel_h > (int64_t{1} << 31) ||
      g.kernel_w > (int64_t{1} << 31) || g.height > (int64_t{1} << 40) ||
      g.width > (int64_t{1} << 40)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: kernel size {}x{} must be at least 1x1 (input {}x{})",
         check.kernel(), g.kernel_h, g.kernel_w, g.height, g.width);
  }
  g.out_h = ConvOutputSize(check, "h", g.height, g.pad_h, g.dilation_h,
                           g.kernel_h, g.stride_h);
  g.out_w = ConvOutputSize(check, "w", g.width, g.pad_w, g.dilation_w,
                           g.kernel_w, g.stride_w);
  return g;
}

struct ConvForwardArgs {
  TensorArg out, in, weight;
  std::optional<TensorArg> bias;
  ConvGeometry g;
};

void RunConv2d(const ConvForwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> in = ReadDense(args.in);
  const std::vector<double> weight = ReadDense(args.weight);
  const std::vector<double> bias =
      args.bias ? ReadDense(*args.bias) : std::vector<double>();
  std::vector<double> out(
      static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w));
  RunParallel(static_cast<size_t>(g.batch * g.out_channels), g.Flops(),
              [&](const auto& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t n = static_cast<int64_t>(job) / g.out_channels;
      const int64_t oc = static_cast<int64_t>(job) % g.out_channels;
      const int64_t first_channel = oc / g.GroupOut() * g.GroupIn();
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        double* acc = &out[((n * g.out_channels + oc) * g.out_h + oh) * g.out_w];
        for (int64_t cl = 0; cl < g.GroupIn(); ++cl) {
          const int64_t c = first_channel + cl;
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilation_h;
            if (ih < 0 || ih >= g.height) {
              continue;
            }
            const double* row = &in[((n * g.in_channels + c) * g.height + ih) *
                                     g.width];
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const double w =
                  weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) *
                             g.kernel_w + j];
              const int64_t tap = j * g.dilation_w;
              const auto [low, high] = ConvGeometry::ValidRange(
                  tap, g.pad_w, g.stride_w, g.width, g.out_w);
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
  ArgChecker check(HAL_KERNEL_CONV2D, device, args, num_args, 11);
  ConvForwardArgs conv{check.Tensor(0, "out"), check.Tensor(1, "in"),
                       check.Tensor(2, "weight"),
                       check.OptionalTensor(3, "bias"), {}};
  RequireSameFloating(check, conv.in, "in", conv.out, "out");
  RequireSameFloating(check, conv.weight, "weight", conv.out, "out");
  conv.g = CheckGeometry(check, 4, conv.in, "in", conv.weight, "weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.out, "out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  if (conv.bias) {
    RequireSameFloating(check, *conv.bias, "bias", conv.out, "out");
    RequireSizes(check, *conv.bias, "bias", {g.out_channels});
  }
  return [conv] { RunConv2d(conv); };
}

struct ConvBackwardArgs {
  TensorArg grad, grad_out, other;  // other: weight or in
  ConvGeometry g;
};

void RunConv2dBackwardInput(const ConvBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  const std::vector<double> weight = ReadDense(args.other);
  std::vector<double> grad_in(
      static_cast<size_t>(g.batch * g.in_channels * g.height * g.width));
  RunParallel(static_cast<size_t>(g.batch * g.in_channels), g.Flops(),
              [&](const auto& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t n = static_cast<int64_t>(job) / g.in_channels;
      const int64_t c = static_cast<int64_t>(job) % g.in_channels;
      const int64_t group = c / g.GroupIn();
      const int64_t cl = c % g.GroupIn();
      for (int64_t ih = 0; ih < g.height; ++ih) {
        double* acc = &grad_in[((n * g.in_channels + c) * g.height + ih) *
                               g.width];
        for (int64_t ol = 0; ol < g.GroupOut(); ++ol) {
          const int64_t oc = group * g.GroupOut() + ol;
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            const int64_t t = ih + g.pad_h - i * g.dilation_h;
            if (t < 0 || t % g.stride_h != 0 || t / g.stride_h >= g.out_h) {
              continue;
            }
            const double* row =
                &grad_out[((n * g.out_channels + oc) * g.out_h +
                           t / g.stride_h) * g.out_w];
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const double w =
                  weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) *
                             g.kernel_w + j];
              const int64_t tap = j * g.dilation_w;
              const auto [low, high] = ConvGeometry::ValidRange(
                  tap, g.pad_w, g.stride_w, g.width, g.out_w);
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

void RunConv2dBackwardWeight(const ConvBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  const std::vector<double> in = ReadDense(args.other);
  std::vector<double> grad_weight(static_cast<size_t>(
      g.out_channels * g.GroupIn() * g.kernel_h * g.kernel_w));
  RunParallel(static_cast<size_t>(g.out_channels * g.GroupIn()), g.Flops(),
              [&](const auto& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t oc = static_cast<int64_t>(job) / g.GroupIn();
      const int64_t cl = static_cast<int64_t>(job) % g.GroupIn();
      const int64_t c = oc / g.GroupOut() * g.GroupIn() + cl;
      for (int64_t i = 0; i < g.kernel_h; ++i) {
        for (int64_t j = 0; j < g.kernel_w; ++j) {
          const int64_t tap = j * g.dilation_w;
          const auto [low, high] = ConvGeometry::ValidRange(
              tap, g.pad_w, g.stride_w, g.width, g.out_w);
          double acc = 0;
          for (int64_t n = 0; n < g.batch; ++n) {
            for (int64_t oh = 0; oh < g.out_h; ++oh) {
              const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilation_h;
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
          grad_weight[((oc * g.GroupIn() + cl) * g.kernel_h + i) * g.kernel_w +
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
  ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_INPUT, device, args, num_args,
                   10);
  ConvBackwardArgs conv{check.Tensor(0, "grad_in"), check.Tensor(1, "grad_out"),
                        check.Tensor(2, "weight"), {}};
  RequireSameFloating(check, conv.grad_out, "grad_out", conv.grad, "grad_in");
  RequireSameFloating(check, conv.other, "weight", conv.grad, "grad_in");
  conv.g = CheckGeometry(check, 3, conv.grad, "grad_in", conv.other, "weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.grad_out, "grad_out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  return [conv] { RunConv2dBackwardInput(conv); };
}

Stream::Operation PrepareConv2dBackwardWeight(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_WEIGHT, device, args, num_args,
                   10);
  ConvBackwardArgs conv{check.Tensor(0, "grad_weight"),
                        check.Tensor(1, "grad_out"), check.Tensor(2, "in"), {}};
  RequireSameFloating(check, conv.grad_out, "grad_out", conv.grad,
                      "grad_weight");
  RequireSameFloating(check, conv.other, "in", conv.grad, "grad_weight");
  conv.g = CheckGeometry(check, 3, conv.other, "in", conv.grad, "grad_weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.grad_out, "grad_out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  return [conv] { RunConv2dBackwardWeight(conv); };
}

}  // namespace

const KernelDef kConv2dKernel{HAL_KERNEL_CONV2D, PrepareConv2d};
const KernelDef kConv2dBackwardInputKernel{HAL_KERNEL_CONV2D_BACKWARD_INPUT,
                                           PrepareConv2dBackwardInput};
const KernelDef kConv2dBackwardWeightKernel{HAL_KERNEL_CONV2D_BACKWARD_WEIGHT,
                                            PrepareConv2dBackwardWeight};

KernelList ConvKernels() {
  static constexpr const KernelDef* kKernels[] = {
      &kConv2dKernel,        &kConv2dBackwardInputKernel,
      &kConv2dBackwardWeightKernel, &kMaxPool2dKernel,
      &kMaxPool2dBackwardKernel,    &kBatchNormKernel,
      &kBatchNormBackwardKernel};
  return kKernels;
}

}  // namespace cpu_ref
