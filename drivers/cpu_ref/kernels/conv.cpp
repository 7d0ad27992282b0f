// conv2d, conv2d_backward_input and conv2d_backward_weight as GEMMs on
// im2col buffers (gemm.hpp), and the conv family's list.
//
// For one sample n and group g, im2col lays the input out as a matrix
// cols[K = (c', i, j)][L = (y, x)]: row (c', i, j) holds, for every output
// position, the input element the tap (i, j) of channel c' reads there (0
// where it reads padding). Then
//   conv2d:          out[n, g] = weight[g] · cols (+ bias), K in (c', i, j)
//                    order, as table/conv.json states;
//   backward_input:  cols = weight[g]ᵀ · grad_out[n, g] (each term a sum
//                    over o in increasing order), then col2im adds the
//                    terms of each input element in increasing (c', i, j);
//   backward_weight: grad_weight[g] = Σ_n grad_out[n, g] · colsᵀ, each
//                    element summed over n, then (y, x).
// Padding terms are products with 0, which leave a finite sum unchanged.
// Every sum is in the accumulate type (float for f32, f16 and bf16) at the
// dot-product rounding of the ISA level (isa.hpp). Jobs write disjoint
// parts of a dense result, each element computed whole by one job, so the
// thread count never changes a bit; results are stored once all jobs are
// done, so outputs may overlap inputs.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/gemm.hpp"
#include "kernels/parallel.hpp"

namespace cpu_ref {

using driver_kit::check_conv2d;
using driver_kit::check_conv2d_backward_input;
using driver_kit::check_conv2d_backward_weight;
using driver_kit::Conv2dArgs;
using driver_kit::Conv2dBackwardArgs;
using driver_kit::ConvGeometry;

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

// Sizes of one group's matrices.
struct GroupShape {
  int64_t rows;       // K = C/groups * kH * kW
  int64_t positions;  // L = oH * oW
};

GroupShape group_shape(const ConvGeometry& g) {
  return {g.group_in() * g.kernel_h * g.kernel_w, g.out_h * g.out_w};
}

// Walks rows [row0, row1) of the im2col matrix of `planes` (the C/groups
// input planes of one sample and group, dense H x W each, const or not):
// for each row and output row y, calls visit(row, y, input_row or nullptr
// where the row reads padding, shift, low, high), output x in [low, high)
// reading input_row[x * stride_w + shift].
template <typename Pointer, typename Visit>
void for_each_im2col_row(const ConvGeometry& g, Pointer planes, int64_t row0,
                         int64_t row1, Visit&& visit) {
  for (int64_t row = row0; row < row1; ++row) {
    const int64_t j = row % g.kernel_w;
    const int64_t i = row / g.kernel_w % g.kernel_h;
    const int64_t channel = row / (g.kernel_w * g.kernel_h);
    const int64_t tap = j * g.dilation_w;
    const auto [low, high] =
        valid_range(tap, g.pad_w, g.stride_w, g.width, g.out_w);
    for (int64_t y = 0; y < g.out_h; ++y) {
      const int64_t ih = y * g.stride_h - g.pad_h + i * g.dilation_h;
      const Pointer input_row =
          ih < 0 || ih >= g.height
              ? nullptr
              : planes + (channel * g.height + ih) * g.width;
      visit(row, y, input_row, tap - g.pad_w, low, high);
    }
  }
}

// cols[(row - row0) * row_step + (y * oW + x) * col_step] for rows
// [row0, row1): row_step, col_step pick cols or its transpose.
template <typename Acc>
void im2col(const ConvGeometry& g, const Acc* planes, int64_t row0,
            int64_t row1, Acc* cols, int64_t row_step, int64_t col_step) {
  for_each_im2col_row(
      g, planes, row0, row1,
      [&](int64_t row, int64_t y, const Acc* input_row, int64_t shift,
          int64_t low, int64_t high) {
        Acc* out = cols + (row - row0) * row_step + y * g.out_w * col_step;
        if (input_row == nullptr) {
          low = high = g.out_w;
        }
        for (int64_t x = 0; x < low; ++x) {
          out[x * col_step] = Acc{0};
        }
        if (col_step == 1 && g.stride_w == 1) {
          std::copy(input_row + low + shift, input_row + high + shift,
                    out + low);
        } else {
          for (int64_t x = low; x < high; ++x) {
            out[x * col_step] = input_row[x * g.stride_w + shift];
          }
        }
        for (int64_t x = high; x < g.out_w; ++x) {
          out[x * col_step] = Acc{0};
        }
      });
}

template <typename Acc>
void run_conv2d_as(const Conv2dArgs& args) {
  const ConvGeometry& g = args.g;
  const GroupShape s = group_shape(g);
  const DenseInput<Acc> in(args.in);
  const DenseInput<Acc> weight(args.weight);
  const std::vector<Acc> bias =
      args.bias ? read_dense<Acc>(*args.bias) : std::vector<Acc>();
  DenseOutput<Acc> out(
      args.out, {&args.in, &args.weight, args.bias ? &*args.bias : nullptr});
  const int64_t plane = g.height * g.width;
  run_parallel(
      static_cast<size_t>(g.batch * g.groups), g.flops(),
      [&](const auto& next_job) {
        std::vector<Acc> cols(static_cast<size_t>(s.rows * s.positions));
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.groups;
          const int64_t group = static_cast<int64_t>(job) % g.groups;
          const Acc* planes =
              in.data() + (n * g.in_channels + group * g.group_in()) * plane;
          im2col(g, planes, 0, s.rows, cols.data(), s.positions, 1);
          const int64_t first_out = group * g.group_out();
          Acc* result =
              out.data() + (n * g.out_channels + first_out) * s.positions;
          const auto element = static_cast<int64_t>(sizeof(Acc));
          gemm<Acc, Acc>(g.group_out(), s.positions, s.rows,
                         {reinterpret_cast<const char*>(weight.data() +
                                                        first_out * s.rows),
                          s.rows * element, element},
                         {reinterpret_cast<const char*>(cols.data()),
                          s.positions * element, element},
                         result, s.positions, /*accumulate=*/false);
          if (!bias.empty()) {
            for (int64_t o = 0; o < g.group_out(); ++o) {
              for (int64_t l = 0; l < s.positions; ++l) {
                result[o * s.positions + l] += bias[first_out + o];
              }
            }
          }
        }
      });
  out.finish();
}

template <typename Acc>
void run_conv2d_backward_input_as(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const GroupShape s = group_shape(g);
  const DenseInput<Acc> grad_out(args.grad_out);
  const DenseInput<Acc> weight(args.other);
  const int64_t plane = g.height * g.width;
  DenseOutput<Acc> grad_in(args.grad, {&args.grad_out, &args.other});
  run_parallel(
      static_cast<size_t>(g.batch * g.groups), g.flops(),
      [&](const auto& next_job) {
        std::vector<Acc> cols(static_cast<size_t>(s.rows * s.positions));
        size_t job;
        while (next_job(job)) {
          const int64_t n = static_cast<int64_t>(job) / g.groups;
          const int64_t group = static_cast<int64_t>(job) % g.groups;
          const int64_t first_out = group * g.group_out();
          const auto element = static_cast<int64_t>(sizeof(Acc));
          // cols[K, L] = weight[g]ᵀ [K, O/groups] · grad_out[n, g]
          gemm<Acc, Acc>(s.rows, s.positions, g.group_out(),
                         {reinterpret_cast<const char*>(weight.data() +
                                                        first_out * s.rows),
                          element, s.rows * element},
                         {reinterpret_cast<const char*>(
                              grad_out.data() +
                              (n * g.out_channels + first_out) * s.positions),
                          s.positions * element, element},
                         cols.data(), s.positions, /*accumulate=*/false);
          Acc* planes = grad_in.data() +
                        (n * g.in_channels + group * g.group_in()) * plane;
          // col2im: the same walk as im2col, adding instead of reading.
          for_each_im2col_row(g, planes, 0, s.rows,
                              [&](int64_t row, int64_t y, Acc* input_row,
                                  int64_t shift, int64_t low, int64_t high) {
                                if (input_row == nullptr) {
                                  return;
                                }
                                const Acc* terms = cols.data() +
                                                   row * s.positions +
                                                   y * g.out_w;
                                for (int64_t x = low; x < high; ++x) {
                                  input_row[x * g.stride_w + shift] += terms[x];
                                }
                              });
        }
      });
  grad_in.finish();
}

template <typename Acc>
void run_conv2d_backward_weight_as(const Conv2dBackwardArgs& args) {
  const ConvGeometry& g = args.g;
  const GroupShape s = group_shape(g);
  const DenseInput<Acc> grad_out(args.grad_out);
  const DenseInput<Acc> in(args.other);
  const int64_t plane = g.height * g.width;
  DenseOutput<Acc> grad_weight(args.grad, {&args.grad_out, &args.other});
  // Jobs are (group, block of K columns of grad_weight): any blocking gives
  // the same bits, so the blocks are sized for the thread count.
  constexpr int64_t kAlign = 16;
  const auto threads = static_cast<int64_t>(hardware_threads());
  const int64_t block =
      std::max(kAlign, (s.rows + threads - 1) / threads / kAlign * kAlign);
  const int64_t blocks = (s.rows + block - 1) / block;
  run_parallel(
      static_cast<size_t>(g.groups * blocks), g.flops(),
      [&](const auto& next_job) {
        // colsᵀ [L, block] of one sample
        std::vector<Acc> cols(static_cast<size_t>(s.positions * block));
        size_t job;
        while (next_job(job)) {
          const int64_t group = static_cast<int64_t>(job) / blocks;
          const int64_t row0 = static_cast<int64_t>(job) % blocks * block;
          const int64_t rows = std::min(block, s.rows - row0);
          const int64_t first_out = group * g.group_out();
          const auto element = static_cast<int64_t>(sizeof(Acc));
          for (int64_t n = 0; n < g.batch; ++n) {
            const Acc* planes =
                in.data() + (n * g.in_channels + group * g.group_in()) * plane;
            im2col(g, planes, row0, row0 + rows, cols.data(), 1, rows);
            gemm<Acc, Acc>(g.group_out(), rows, s.positions,
                           {reinterpret_cast<const char*>(
                                grad_out.data() +
                                (n * g.out_channels + first_out) * s.positions),
                            s.positions * element, element},
                           {reinterpret_cast<const char*>(cols.data()),
                            rows * element, element},
                           grad_weight.data() + first_out * s.rows + row0,
                           s.rows,
                           /*accumulate=*/n > 0);
          }
        }
      });
  grad_weight.finish();
}

// Calls run(Acc{}) with the accumulate type of a
// floating dtype.
template <typename Run>
void with_accumulate_type(int32_t dtype, Run&& run) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloating<T>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      run(Acc{});
    }
  });
}

Stream::Operation prepare_conv2d(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  return [conv = check_conv2d(device, args, num_args)] {
    with_accumulate_type(conv.out.dtype(),
                         [&](auto acc) { run_conv2d_as<decltype(acc)>(conv); });
  };
}

Stream::Operation prepare_conv2d_backward_input(const Device& device,
                                                const hal_arg* args,
                                                uint32_t num_args) {
  return [conv = check_conv2d_backward_input(device, args, num_args)] {
    with_accumulate_type(conv.grad.dtype(), [&](auto acc) {
      run_conv2d_backward_input_as<decltype(acc)>(conv);
    });
  };
}

Stream::Operation prepare_conv2d_backward_weight(const Device& device,
                                                 const hal_arg* args,
                                                 uint32_t num_args) {
  return [conv = check_conv2d_backward_weight(device, args, num_args)] {
    with_accumulate_type(conv.grad.dtype(), [&](auto acc) {
      run_conv2d_backward_weight_as<decltype(acc)>(conv);
    });
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
