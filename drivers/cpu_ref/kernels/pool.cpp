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

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/parallel.h"

namespace cpu_ref {
namespace {

struct PoolGeometry {
  int64_t planes, height, width, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h,
      dilation_w;
};

// torch's pooling_output_shape.
int64_t PoolOutputSize(const ArgChecker& check, const char* dim, int64_t size,
                       int64_t kernel, int64_t stride, int64_t pad,
                       int64_t dilation, bool ceil_mode) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (span + (ceil_mode ? stride - 1 : 0) < 0) {
    out = 0;  // floor division of a negative numerator
  }
  if (ceil_mode && out > 0 && (out - 1) * stride >= size + pad) {
    --out;  // the last window would start in the right padding
  }
  if (out < 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: output size along {} would be {} (input {}, kernel {}, "
         "stride {}, pad {}, dilation {})",
         check.kernel(), dim, out, size, kernel, stride, pad, dilation);
  }
  return out;
}

// Leading dims of `tensor` flattened into planes; the last two are H, W.
int64_t Planes(const TensorArg& tensor) {
  int64_t planes = 1;
  for (int d = 0; d + 2 < tensor.rank(); ++d) {
    planes *= tensor.tensor.sizes[d];
  }
  return planes;
}

void RequirePlanesOf(const ArgChecker& check, const TensorArg& tensor,
                     const char* name, const TensorArg& reference,
                     const char* reference_name, int64_t h, int64_t w) {
  bool same = tensor.rank() == reference.rank() &&
              tensor.tensor.sizes[tensor.rank() - 2] == h &&
              tensor.tensor.sizes[tensor.rank() - 1] == w;
  for (int d = 0; same && d + 2 < tensor.rank(); ++d) {
    same = tensor.tensor.sizes[d] == reference.tensor.sizes[d];
  }
  if (!same) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must have {}'s leading sizes and spatial size {}x{}",
         check.kernel(), name, reference_name, h, w);
  }
}

struct MaxPoolArgs {
  TensorArg out, indices, in;
  PoolGeometry g;
};

void RunMaxPool2d(const MaxPoolArgs& args) {
  const PoolGeometry& g = args.g;
  const std::vector<double> in = ReadDense(args.in);
  const size_t count = static_cast<size_t>(g.planes * g.out_h * g.out_w);
  std::vector<double> values(count);
  std::vector<int64_t> indices(count);
  RunParallel(static_cast<size_t>(g.planes),
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
          const size_t at = (static_cast<int64_t>(plane) * g.out_h + oh) *
                                g.out_w + ow;
          values[at] = best;
          indices[at] = best_index;
        }
      }
    }
  });
  WriteDense(args.out, values);
  size_t next = 0;
  ForEachElement<1>(args.indices.shape(), {args.indices.operand()},
                    [&](ElementPointers<1> p) { Store(p[0], indices[next++]); });
}

Stream::Operation PrepareMaxPool2d(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MAX_POOL2D, device, args, num_args, 12);
  MaxPoolArgs pool{check.Tensor(0, "out"), check.Tensor(1, "indices"),
                   check.Tensor(2, "in"), {}};
  RequireSameFloating(check, pool.in, "in", pool.out, "out");
  if (pool.indices.dtype() != HAL_DTYPE_I64) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: indices must be i64, got {}",
         DtypeName(pool.indices.dtype()));
  }
  if (pool.in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: in must have rank >= 2 ([..., H, W]), got {}",
         pool.in.rank());
  }
  PoolGeometry& g = pool.g;
  g.kernel_h = IntAtLeast(check, 3, "kernel_h", 1);
  g.kernel_w = IntAtLeast(check, 4, "kernel_w", 1);
  g.stride_h = IntAtLeast(check, 5, "stride_h", 1);
  g.stride_w = IntAtLeast(check, 6, "stride_w", 1);
  g.pad_h = IntAtLeast(check, 7, "pad_h", 0);
  g.pad_w = IntAtLeast(check, 8, "pad_w", 0);
  g.dilation_h = IntAtLeast(check, 9, "dilation_h", 1);
  g.dilation_w = IntAtLeast(check, 10, "dilation_w", 1);
  const int64_t ceil_mode = check.Int(11, "ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: ceil_mode must be 0 or 1");
  }
  if (g.pad_h > g.kernel_h / 2 || g.pad_w > g.kernel_w / 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: padding {}x{} must be at most half the kernel {}x{}",
         g.pad_h, g.pad_w, g.kernel_h, g.kernel_w);
  }
  g.planes = Planes(pool.in);
  g.height = pool.in.tensor.sizes[pool.in.rank() - 2];
  g.width = pool.in.tensor.sizes[pool.in.rank() - 1];
  if (g.height > (int64_t{1} << 40) || g.width > (int64_t{1} << 40)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: input too large");
  }
  g.out_h = PoolOutputSize(check, "h", g.height, g.kernel_h, g.stride_h,
                           g.pad_h, g.dilation_h, ceil_mode != 0);
  g.out_w = PoolOutputSize(check, "w", g.width, g.kernel_w, g.stride_w,
                           g.pad_w, g.dilation_w, ceil_mode != 0);
  RequirePlanesOf(check, pool.out, "out", pool.in, "in", g.out_h, g.out_w);
  RequirePlanesOf(check, pool.indices, "indices", pool.in, "in", g.out_h,
                  g.out_w);
  if (pool.indices.Overlaps(pool.out) || pool.indices.Overlaps(pool.in)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: indices overlaps out or in");
  }
  return [pool] { RunMaxPool2d(pool); };
}

struct MaxPoolBackwardArgs {
  TensorArg grad_in, grad_out, indices;
  int64_t planes, plane_size, window_count;
};

void RunMaxPool2dBackward(const MaxPoolBackwardArgs& args) {
  const std::vector<double> grad_out = ReadDense(args.grad_out);
  std::vector<int64_t> indices;
  indices.reserve(grad_out.size());
  ForEachElement<1>(args.indices.shape(), {args.indices.operand()},
                    [&](ElementPointers<1> p) {
                      indices.push_back(Load<int64_t>(p[0]));
                    });
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= args.plane_size) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
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
  WriteDense(args.grad_in, grad_in);
}

Stream::Operation PrepareMaxPool2dBackward(const Device& device,
                                           const hal_arg* args,
                                           uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MAX_POOL2D_BACKWARD, device, args, num_args, 3);
  MaxPoolBackwardArgs pool{check.Tensor(0, "grad_in"),
                           check.Tensor(1, "grad_out"),
                           check.Tensor(2, "indices"), 0, 0, 0};
  RequireSameFloating(check, pool.grad_out, "grad_out", pool.grad_in,
                      "grad_in");
  if (pool.indices.dtype() != HAL_DTYPE_I64) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d_backward: indices must be i64, got {}",
         DtypeName(pool.indices.dtype()));
  }
  if (pool.grad_in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d_backward: grad_in must have rank >= 2, got {}",
         pool.grad_in.rank());
  }
  const int rank = pool.grad_in.rank();
  const int64_t out_h = pool.grad_out.rank() == rank
                            ? pool.grad_out.tensor.sizes[rank - 2] : -1;
  const int64_t out_w = pool.grad_out.rank() == rank
                            ? pool.grad_out.tensor.sizes[rank - 1] : -1;
  RequirePlanesOf(check, pool.grad_out, "grad_out", pool.grad_in, "grad_in",
                  out_h, out_w);
  check.SameShape(pool.indices, "indices", pool.grad_out, "grad_out");
  pool.planes = Planes(pool.grad_in);
  pool.plane_size =
      pool.grad_in.tensor.sizes[rank - 2] * pool.grad_in.tensor.sizes[rank - 1];
  pool.window_count = out_h * out_w;
  return [pool] { RunMaxPool2dBackward(pool); };
}

}  // namespace

const KernelDef kMaxPool2dKernel{HAL_KERNEL_MAX_POOL2D, PrepareMaxPool2d};
const KernelDef kMaxPool2dBackwardKernel{HAL_KERNEL_MAX_POOL2D_BACKWARD,
                                         PrepareMaxPool2dBackward};

}  // namespace cpu_ref
