// max_pool2d (values and torch's flat indices) and max_pool2d_backward.
//
// Windows follow torch's CPU kernel exactly: a window's maximum is the
// first largest value in row-major window order, a NaN replaces whatever
// came before it (so the last NaN wins), and an all -inf window reports its
// first in-bounds position. The backward pass validates every index before
// writing anything; an index outside its plane is the stream's asynchronous
// INVALID_ARGUMENT.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/parallel.hpp"

namespace cpu_ref {

using driver_kit::check_max_pool2d;
using driver_kit::check_max_pool2d_backward;
using driver_kit::MaxPool2dArgs;
using driver_kit::MaxPool2dBackwardArgs;
using driver_kit::PoolGeometry;
namespace {

void run_max_pool2d(const MaxPool2dArgs& args) {
  const PoolGeometry& g = args.g;
  const std::vector<double> in = read_dense(args.in);
  const size_t count = static_cast<size_t>(g.planes * g.out_h * g.out_w);
  std::vector<double> values(count);
  std::vector<int64_t> indices(count);
  run_parallel(
      static_cast<size_t>(g.planes),
      static_cast<double>(count) * g.kernel_h * g.kernel_w,
      [&](const auto& next_job) {
        size_t plane;
        while (next_job(plane)) {
          const double* src =
              &in[static_cast<int64_t>(plane) * g.height * g.width];
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            int64_t h0 = oh * g.stride_h - g.pad_h;
            const int64_t h1 =
                std::min(h0 + (g.kernel_h - 1) * g.dilation_h + 1, g.height);
            while (h0 < 0) {
              h0 += g.dilation_h;
            }
            for (int64_t ow = 0; ow < g.out_w; ++ow) {
              int64_t w0 = ow * g.stride_w - g.pad_w;
              const int64_t w1 =
                  std::min(w0 + (g.kernel_w - 1) * g.dilation_w + 1, g.width);
              while (w0 < 0) {
                w0 += g.dilation_w;
              }
              int64_t best_index = h0 * g.width + w0;
              double best = -std::numeric_limits<double>::infinity();
              for (int64_t h = h0; h < h1; h += g.dilation_h) {
                for (int64_t w = w0; w < w1; w += g.dilation_w) {
                  const double value = src[h * g.width + w];
                  if (value > best || std::isnan(value)) {
                    best = value;
                    best_index = h * g.width + w;
                  }
                }
              }
              const size_t at =
                  (static_cast<int64_t>(plane) * g.out_h + oh) * g.out_w + ow;
              values[at] = best;
              indices[at] = best_index;
            }
          }
        }
      });
  write_dense(args.out, values);
  size_t next = 0;
  for_each_element<1>(
      args.indices.shape(), {strided_operand(args.indices)},
      [&](ElementPointers<1> p) { store(p[0], indices[next++]); });
}

void run_max_pool2d_backward(const MaxPool2dBackwardArgs& args) {
  const std::vector<double> grad_out = read_dense(args.grad_out);
  std::vector<int64_t> indices;
  indices.reserve(grad_out.size());
  for_each_element<1>(
      args.indices.shape(), {strided_operand(args.indices)},
      [&](ElementPointers<1> p) { indices.push_back(load<int64_t>(p[0])); });
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= args.plane_size) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "max_pool2d_backward: index {} at position {} is outside its "
           "plane of {} elements",
           indices[i], i, args.plane_size);
    }
  }
  std::vector<double> grad_in(
      static_cast<size_t>(args.planes * args.plane_size));
  for (int64_t plane = 0; plane < args.planes; ++plane) {
    double* dst = &grad_in[plane * args.plane_size];
    for (int64_t k = plane * args.window_count;
         k < (plane + 1) * args.window_count; ++k) {
      dst[indices[k]] += grad_out[k];
    }
  }
  write_dense(args.grad_in, grad_in);
}

}  // namespace

Stream::Operation prepare_max_pool2d(const Device& device, const hal_arg* args,
                                     uint32_t num_args) {
  return [pool = check_max_pool2d(device, args, num_args)] {
    run_max_pool2d(pool);
  };
}

Stream::Operation prepare_max_pool2d_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args) {
  return [pool = check_max_pool2d_backward(device, args, num_args)] {
    run_max_pool2d_backward(pool);
  };
}

}  // namespace cpu_ref
