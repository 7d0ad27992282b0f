// Reductions and softmax of the hal backend: sum, mean, prod, amax/amin,
// max/min (over everything, or along a dim with indices), argmax/argmin,
// var/std (and var_mean/std_mean), all/any, and _softmax/_log_softmax with
// their backward forms.
//
// The reduction kernels write their result in keepdim form (the input's rank,
// reduced dims of size 1). Each op computes into a tensor of torch's result
// shape and hands the kernel a view of it with the reduced dims put back, so
// keepdim=false costs no copy. Functional forms allocate their result and run
// the out= form.
#include "aten/native/reduction.hpp"

#include <ATen/WrapDimUtilsMulti.h>
#include <c10/core/WrapDimMinimal.h>

#include <bitset>
#include <string_view>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

using DimMask = std::bitset<at::dim_bitset_size>;

// The shape of a reduction of `in` over some of its dims.
class ReducedShape {
 public:
  // Reduces over `dims` (each at most once), or over every dim when absent.
  ReducedShape(const at::Tensor& in, at::OptionalIntArrayRef dims, bool keepdim)
      : ndim_(in.dim()), keepdim_(keepdim) {
    if (dims.has_value()) {
      reduced_ = at::dim_list_to_bitset(*dims, ndim_);
    } else {
      reduced_.set();
    }
    for (int64_t d = 0; d < ndim_; ++d) {
      if (!reduced_[d]) {
        sizes_.push_back(in.size(d));
      } else if (keepdim_) {
        sizes_.push_back(1);
      }
    }
  }

  // torch's result sizes.
  at::IntArrayRef sizes() const { return sizes_; }

  // For reductions without an identity (max, argmax, ...): an empty reduced
  // dim is torch's IndexError.
  void check_nonempty(std::string_view op, const at::Tensor& in) const {
    for (int64_t d = 0; d < ndim_; ++d) {
      TORCH_CHECK_INDEX(!reduced_[d] || in.size(d) > 0, op,
                        "(): Expected reduction dim ", d,
                        " to have non-zero size.");
    }
  }

  // `result` (of sizes()) as the kernels' keepdim form: a view.
  at::Tensor keepdim_form(const at::Tensor& result) const {
    if (keepdim_) return result;
    at::Tensor view = result;
    for (int64_t d = 0; d < ndim_; ++d) {
      if (reduced_[d]) view = view.unsqueeze(d);
    }
    return view;
  }

 private:
  int64_t ndim_;
  bool keepdim_;
  DimMask reduced_;
  std::vector<int64_t> sizes_;
};

// sum, mean, amax, var, ... over an empty dim list reduce everything (torch's
// legacy convention); all/any keep the list as given.
at::OptionalIntArrayRef all_if_empty(at::OptionalIntArrayRef dims) {
  if (dims.has_value() && dims->empty()) return std::nullopt;
  return dims;
}

// A result of `dtype` for the functional form of an out= op, which sizes it.
at::Tensor new_result(const at::Tensor& like, at::ScalarType dtype) {
  return empty_like_device(like, {0}, dtype);
}

// Runs reduction kernel `kernel` (out, in, extra...) of `in` into `out`,
// computing in `dtype`.
template <typename... Extra>
at::Tensor& reduce_out(at::Tensor& out, KernelName kernel, const at::Tensor& in,
                       const ReducedShape& shape, at::ScalarType dtype,
                       Extra... extra) {
  return write_out(out, shape.sizes(), dtype, [&](const at::Tensor& result) {
    launch(result, kernel,
           {tensor_arg(shape.keepdim_form(result)), tensor_arg(in), extra...});
  });
}

void check_same_dtype(std::string_view op, const at::Tensor& self,
                      const at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), op,
              "(): Expected the dtype for input and out to match, but got ",
              self.scalar_type(), " for input's dtype and ", out.scalar_type(),
              " for out's dtype.");
}

// sum and prod promote integral and bool inputs to int64, as torch does.
at::ScalarType accumulating_dtype(const at::Tensor& self,
                                  std::optional<at::ScalarType> dtype) {
  if (dtype.has_value()) return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true)
             ? at::kLong
             : self.scalar_type();
}

// ---- sum, mean, prod

}  // namespace

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dims,
                    bool keepdim, std::optional<at::ScalarType> dtype,
                    at::Tensor& out) {
  // The sum kernel reads any input dtype, so the input needs no conversion.
  return reduce_out(out, "sum", self,
                    ReducedShape(self, all_if_empty(dims), keepdim),
                    dtype.value_or(out.scalar_type()));
}

at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dims,
               bool keepdim, std::optional<at::ScalarType> dtype) {
  at::Tensor out = new_result(self, accumulating_dtype(self, dtype));
  return sum_out(self, dims, keepdim, dtype, out);
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dims,
                     bool keepdim, std::optional<at::ScalarType> dtype,
                     at::Tensor& out) {
  const at::ScalarType type = dtype.value_or(out.scalar_type());
  TORCH_CHECK(
      at::isFloatingType(type),
      "mean(): could not infer output dtype. Input dtype must be either a "
      "floating point or complex dtype. Got: ",
      type);
  return reduce_out(out, "mean", to_dtype(self, type),
                    ReducedShape(self, all_if_empty(dims), keepdim), type);
}

at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dims,
                bool keepdim, std::optional<at::ScalarType> dtype) {
  at::Tensor out = new_result(self, dtype.value_or(self.scalar_type()));
  return mean_out(self, dims, keepdim, dtype, out);
}

namespace {

at::Tensor& prod_out(const at::Tensor& self, at::OptionalIntArrayRef dims,
                     bool keepdim, std::optional<at::ScalarType> dtype,
                     at::Tensor& out) {
  const at::ScalarType type = dtype.value_or(out.scalar_type());
  return reduce_out(out, "prod", to_dtype(self, type),
                    ReducedShape(self, dims, keepdim), type);
}

}  // namespace

at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return prod_out(self, at::IntArrayRef(dim), keepdim, dtype, out);
}

at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  at::Tensor out = new_result(self, accumulating_dtype(self, dtype));
  return prod_out(self, at::IntArrayRef(dim), keepdim, dtype, out);
}

at::Tensor prod_all(const at::Tensor& self,
                    std::optional<at::ScalarType> dtype) {
  at::Tensor out = new_result(self, accumulating_dtype(self, dtype));
  return prod_out(self, std::nullopt, false, dtype, out);
}

namespace {

// ---- amax, amin, max, min

}  // namespace

at::Tensor& extremum_out(KernelName kernel, const at::Tensor& self,
                         at::IntArrayRef dims, bool keepdim, at::Tensor& out) {
  check_same_dtype(kernel, self, out);
  const ReducedShape shape(self, all_if_empty(dims), keepdim);
  shape.check_nonempty(kernel, self);
  return reduce_out(out, kernel, self, shape, self.scalar_type());
}

at::Tensor extremum(KernelName kernel, const at::Tensor& self,
                    at::IntArrayRef dims, bool keepdim) {
  at::Tensor out = new_result(self, self.scalar_type());
  return extremum_out(kernel, self, dims, keepdim, out);
}

// max() and min() without a dim: the extremum of every element.
at::Tensor& extremum_all_out(KernelName kernel, const at::Tensor& self,
                             at::Tensor& out) {
  TORCH_CHECK(
      self.numel() > 0, kernel == std::string_view("amax") ? "max" : "min",
      "(): Expected reduction dim to be specified for input.numel() == 0. "
      "Specify the reduction dim with the 'dim' argument.");
  return extremum_out(kernel, self, {}, false, out);
}

at::Tensor extremum_all(KernelName kernel, const at::Tensor& self) {
  at::Tensor out = new_result(self, self.scalar_type());
  return extremum_all_out(kernel, self, out);
}

// max.dim and min.dim: values and their indices along one dim.
std::tuple<at::Tensor&, at::Tensor&> extremum_dim_out(KernelName kernel,
                                                      const at::Tensor& self,
                                                      int64_t dim, bool keepdim,
                                                      at::Tensor& values,
                                                      at::Tensor& indices) {
  check_same_dtype(kernel, self, values);
  TORCH_CHECK(indices.scalar_type() == at::kLong, kernel,
              "(): Expected out tensor of indices to have dtype Long, but got ",
              indices.scalar_type());
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  const ReducedShape shape(self, at::IntArrayRef(wrapped), keepdim);
  shape.check_nonempty(kernel, self);
  write_out(
      values, shape.sizes(), self.scalar_type(), [&](const at::Tensor& v) {
        write_out(indices, shape.sizes(), at::kLong, [&](const at::Tensor& i) {
          launch(v, kernel,
                 {tensor_arg(shape.keepdim_form(v)),
                  tensor_arg(shape.keepdim_form(i)), tensor_arg(self),
                  int_arg(wrapped)});
        });
      });
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> extremum_dim(KernelName kernel,
                                                const at::Tensor& self,
                                                int64_t dim, bool keepdim) {
  at::Tensor values = new_result(self, self.scalar_type());
  at::Tensor indices = new_result(self, at::kLong);
  extremum_dim_out(kernel, self, dim, keepdim, values, indices);
  return {values, indices};
}

// argmax and argmin; without a dim, over the flattened input.
at::Tensor& arg_extremum_out(KernelName kernel, const at::Tensor& self,
                             std::optional<int64_t> dim, bool keepdim,
                             at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, kernel,
              "(): Expected out tensor to have dtype Long, but got ",
              out.scalar_type());
  if (dim.has_value()) {
    const int64_t wrapped = c10::maybe_wrap_dim(*dim, self.dim());
    const ReducedShape shape(self, at::IntArrayRef(wrapped), keepdim);
    shape.check_nonempty(kernel, self);
    return reduce_out(out, kernel, self, shape, at::kLong, int_arg(wrapped));
  }
  TORCH_CHECK_INDEX(self.numel() > 0, kernel,
                    "(): Expected reduction dim to be specified "
                    "for input.numel() == 0.");
  const std::vector<int64_t> sizes(keepdim ? self.dim() : 0, 1);
  return write_out(out, sizes, at::kLong, [&](const at::Tensor& result) {
    launch(result, kernel,
           {tensor_arg(result.reshape({1})), tensor_arg(self.reshape({-1})),
            int_arg(0)});
  });
}

at::Tensor arg_extremum(KernelName kernel, const at::Tensor& self,
                        std::optional<int64_t> dim, bool keepdim) {
  at::Tensor out = new_result(self, at::kLong);
  return arg_extremum_out(kernel, self, dim, keepdim, out);
}

namespace {

// ---- var, std

}  // namespace

at::Tensor& spread_out(KernelName kernel, const at::Tensor& self,
                       at::OptionalIntArrayRef dims,
                       const std::optional<at::Scalar>& correction,
                       bool keepdim, at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  check_same_dtype(kernel, self, out);
  return reduce_out(
      out, kernel, self, ReducedShape(self, all_if_empty(dims), keepdim),
      self.scalar_type(), float_arg(correction.value_or(1).toDouble()));
}

at::Tensor spread(KernelName kernel, const at::Tensor& self,
                  at::OptionalIntArrayRef dims,
                  const std::optional<at::Scalar>& correction, bool keepdim) {
  at::Tensor out = new_result(self, self.scalar_type());
  return spread_out(kernel, self, dims, correction, keepdim, out);
}

// var_mean and std_mean: the spread and the mean, in that order.
std::tuple<at::Tensor, at::Tensor> spread_mean(
    KernelName kernel, const at::Tensor& self, at::OptionalIntArrayRef dims,
    const std::optional<at::Scalar>& correction, bool keepdim) {
  at::Tensor spread_result = spread(kernel, self, dims, correction, keepdim);
  at::Tensor mean_result = new_result(self, self.scalar_type());
  mean_out(self, dims, keepdim, std::nullopt, mean_result);
  return {spread_result, mean_result};
}

namespace {

// ---- all, any

// all/any give bool, or uint8 for a uint8 input (torch's rule); out= takes
// either.
at::ScalarType truth_dtype(const at::Tensor& self) {
  return self.scalar_type() == at::kByte ? at::kByte : at::kBool;
}

}  // namespace

at::Tensor& truth_out(KernelName kernel, const at::Tensor& self,
                      at::OptionalIntArrayRef dims, bool keepdim,
                      at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool || out.scalar_type() == at::kByte,
              kernel, "(): out= must be bool or uint8, got ",
              out.scalar_type());
  return reduce_out(out, kernel, self, ReducedShape(self, dims, keepdim),
                    at::kBool);
}

at::Tensor truth(KernelName kernel, const at::Tensor& self,
                 at::OptionalIntArrayRef dims, bool keepdim) {
  at::Tensor out = new_result(self, truth_dtype(self));
  return truth_out(kernel, self, dims, keepdim, out);
}

at::Tensor& truth_dim_out(KernelName kernel, const at::Tensor& self,
                          int64_t dim, bool keepdim, at::Tensor& out) {
  return truth_out(kernel, self, at::IntArrayRef(dim), keepdim, out);
}

at::Tensor truth_dim(KernelName kernel, const at::Tensor& self, int64_t dim,
                     bool keepdim) {
  return truth(kernel, self, at::IntArrayRef(dim), keepdim);
}

at::Tensor& truth_all_out(KernelName kernel, const at::Tensor& self,
                          at::Tensor& out) {
  return truth_out(kernel, self, std::nullopt, false, out);
}

at::Tensor truth_all(KernelName kernel, const at::Tensor& self) {
  return truth(kernel, self, std::nullopt, false);
}

namespace {

// ---- softmax

}  // namespace

// _softmax and _log_softmax; half_to_float computes a half input in float.
at::Tensor& softmax_out(KernelName kernel, const at::Tensor& self, int64_t dim,
                        bool half_to_float, at::Tensor& out) {
  TORCH_CHECK(!half_to_float || self.scalar_type() == at::kHalf,
              "conversion is supported for Half type only");
  const at::ScalarType type = half_to_float ? at::kFloat : self.scalar_type();
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  const at::Tensor in = to_dtype(self, type);
  return write_out(out, self.sizes(), type, [&](const at::Tensor& result) {
    launch(result, kernel,
           {tensor_arg(result), tensor_arg(in), int_arg(wrapped)});
  });
}

at::Tensor softmax(KernelName kernel, const at::Tensor& self, int64_t dim,
                   bool half_to_float) {
  at::Tensor out =
      new_result(self, half_to_float ? at::kFloat : self.scalar_type());
  return softmax_out(kernel, self, dim, half_to_float, out);
}

// The backward forms compute in grad_output's dtype; the gradient has the
// forward input's dtype.
at::Tensor& softmax_backward_out(KernelName kernel,
                                 const at::Tensor& grad_output,
                                 const at::Tensor& output, int64_t dim,
                                 at::ScalarType /*input_dtype*/,
                                 at::Tensor& out) {
  TORCH_CHECK(grad_output.sizes() == output.sizes(), kernel,
              ": grad_output and output must have the same shape, got ",
              grad_output.sizes(), " and ", output.sizes());
  const at::ScalarType type = grad_output.scalar_type();
  const int64_t wrapped = c10::maybe_wrap_dim(dim, grad_output.dim());
  const at::Tensor forward_output = to_dtype(output, type);
  return write_out(out, grad_output.sizes(), type,
                   [&](const at::Tensor& result) {
                     launch(result, kernel,
                            {tensor_arg(result), tensor_arg(grad_output),
                             tensor_arg(forward_output), int_arg(wrapped)});
                   });
}

at::Tensor softmax_backward(KernelName kernel, const at::Tensor& grad_output,
                            const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  at::Tensor out = new_result(grad_output, input_dtype);
  return softmax_backward_out(kernel, grad_output, output, dim, input_dtype,
                              out);
}

}  // namespace torch_hal::native
