// Reductions and scans: each ATen overload bound to the kernel it runs.
#include <torch/library.h>

#include "aten/bind.hpp"
#include "aten/native/norms.hpp"
#include "aten/native/reduction.hpp"
#include "aten/native/scan.hpp"

namespace torch_hal {
namespace {

// cumsum/cumprod in their three forms over one native scan.
template <native::Scan kScan>
at::Tensor scan(const at::Tensor& self, int64_t dim,
                std::optional<at::ScalarType> dtype) {
  return native::scan(self, dim, dtype, kScan);
}

template <native::Scan kScan>
at::Tensor& scan_in_place(at::Tensor& self, int64_t dim,
                          std::optional<at::ScalarType> dtype) {
  return native::scan_out(self, dim, dtype, kScan, self);
}

template <native::Scan kScan>
at::Tensor& scan_out(const at::Tensor& self, int64_t dim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return native::scan_out(self, dim, dtype, kScan, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", TORCH_FN(native::sum));
  m.impl("sum.IntList_out", TORCH_FN(native::sum_out));
  m.impl("mean.dim", TORCH_FN(native::mean));
  m.impl("mean.out", TORCH_FN(native::mean_out));
  m.impl("prod", TORCH_FN(native::prod_all));
  m.impl("prod.dim_int", TORCH_FN(native::prod_dim));
  m.impl("prod.int_out", TORCH_FN(native::prod_dim_out));

  m.impl("amax", TORCH_FN((bind<native::extremum, native::kAmax>)));
  m.impl("amax.out", TORCH_FN((bind<native::extremum_out, native::kAmax>)));
  m.impl("amin", TORCH_FN((bind<native::extremum, native::kAmin>)));
  m.impl("amin.out", TORCH_FN((bind<native::extremum_out, native::kAmin>)));
  m.impl("max", TORCH_FN((bind<native::extremum_all, native::kAmax>)));
  m.impl("max.unary_out",
         TORCH_FN((bind<native::extremum_all_out, native::kAmax>)));
  m.impl("min", TORCH_FN((bind<native::extremum_all, native::kAmin>)));
  m.impl("min.unary_out",
         TORCH_FN((bind<native::extremum_all_out, native::kAmin>)));
  m.impl("max.dim", TORCH_FN((bind<native::extremum_dim, native::kMaxDim>)));
  m.impl("max.dim_max",
         TORCH_FN((bind<native::extremum_dim_out, native::kMaxDim>)));
  m.impl("min.dim", TORCH_FN((bind<native::extremum_dim, native::kMinDim>)));
  m.impl("min.dim_min",
         TORCH_FN((bind<native::extremum_dim_out, native::kMinDim>)));
  m.impl("argmax", TORCH_FN((bind<native::arg_extremum, native::kArgmax>)));
  m.impl("argmax.out",
         TORCH_FN((bind<native::arg_extremum_out, native::kArgmax>)));
  m.impl("argmin", TORCH_FN((bind<native::arg_extremum, native::kArgmin>)));
  m.impl("argmin.out",
         TORCH_FN((bind<native::arg_extremum_out, native::kArgmin>)));

  m.impl("var.correction", TORCH_FN((bind<native::spread, native::kVar>)));
  m.impl("var.correction_out",
         TORCH_FN((bind<native::spread_out, native::kVar>)));
  m.impl("std.correction", TORCH_FN((bind<native::spread, native::kStd>)));
  m.impl("std.correction_out",
         TORCH_FN((bind<native::spread_out, native::kStd>)));
  m.impl("var_mean.correction",
         TORCH_FN((bind<native::spread_mean, native::kVar>)));
  m.impl("std_mean.correction",
         TORCH_FN((bind<native::spread_mean, native::kStd>)));

  m.impl("all", TORCH_FN((bind<native::truth_all, native::kAll>)));
  m.impl("all.all_out", TORCH_FN((bind<native::truth_all_out, native::kAll>)));
  m.impl("all.dim", TORCH_FN((bind<native::truth_dim, native::kAll>)));
  m.impl("all.out", TORCH_FN((bind<native::truth_dim_out, native::kAll>)));
  m.impl("all.dims", TORCH_FN((bind<native::truth, native::kAll>)));
  m.impl("all.dims_out", TORCH_FN((bind<native::truth_out, native::kAll>)));
  m.impl("any", TORCH_FN((bind<native::truth_all, native::kAny>)));
  m.impl("any.all_out", TORCH_FN((bind<native::truth_all_out, native::kAny>)));
  m.impl("any.dim", TORCH_FN((bind<native::truth_dim, native::kAny>)));
  m.impl("any.out", TORCH_FN((bind<native::truth_dim_out, native::kAny>)));
  m.impl("any.dims", TORCH_FN((bind<native::truth, native::kAny>)));
  m.impl("any.dims_out", TORCH_FN((bind<native::truth_out, native::kAny>)));

  m.impl("_softmax", TORCH_FN((bind<native::softmax, native::kSoftmax>)));
  m.impl("_softmax.out",
         TORCH_FN((bind<native::softmax_out, native::kSoftmax>)));
  m.impl("_log_softmax",
         TORCH_FN((bind<native::softmax, native::kLogSoftmax>)));
  m.impl("_log_softmax.out",
         TORCH_FN((bind<native::softmax_out, native::kLogSoftmax>)));
  m.impl("_softmax_backward_data",
         TORCH_FN((bind<native::softmax_backward, native::kSoftmaxBackward>)));
  m.impl(
      "_softmax_backward_data.out",
      TORCH_FN((bind<native::softmax_backward_out, native::kSoftmaxBackward>)));
  m.impl(
      "_log_softmax_backward_data",
      TORCH_FN((bind<native::softmax_backward, native::kLogSoftmaxBackward>)));
  m.impl("_log_softmax_backward_data.out",
         TORCH_FN((
             bind<native::softmax_backward_out, native::kLogSoftmaxBackward>)));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum", TORCH_FN(scan<native::Scan::sum>));
  m.impl("cumsum_", TORCH_FN(scan_in_place<native::Scan::sum>));
  m.impl("cumsum.out", TORCH_FN(scan_out<native::Scan::sum>));
  m.impl("cumprod", TORCH_FN(scan<native::Scan::product>));
  m.impl("cumprod_", TORCH_FN(scan_in_place<native::Scan::product>));
  m.impl("cumprod.out", TORCH_FN(scan_out<native::Scan::product>));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_vector_norm", TORCH_FN(native::vector_norm));
  m.impl("linalg_vector_norm.out", TORCH_FN(native::vector_norm_out));
}

}  // namespace torch_hal
