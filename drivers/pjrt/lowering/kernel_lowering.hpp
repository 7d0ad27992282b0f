// KernelLowering: the state of lowering one standard-kernel launch, shared
// by every kernel's lowering function. It declares @main's parameters from
// the LaunchSignature (buffers, the offsets, the scalars), reads tensor
// arguments as typed values, and collects the written buffers as results.
//
// Reads always see the buffers as they were before the launch (every input
// is read before any output is written, as the kernel conventions require
// for overlapping operands); writes apply in the order they are made.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "builder.hpp"
#include "hal/standard_kernels.h"
#include "lowering.hpp"
#include "view.hpp"

namespace pjrt_bridge {

class KernelLowering {
 public:
  // `primary`: the kernel's primary dtype; scalar parameters take its
  // compute type (f32, f64, or i64 for integers and bool) unless
  // `scalar_type` names one (HAL_DTYPE_COUNT: none).
  KernelLowering(const LaunchSignature& signature, hal_dtype primary,
                 hal_dtype scalar_type);

  ProgramBuilder& b() { return b_; }
  const LaunchSignature& signature() const { return signature_; }
  // The kernel's primary dtype and the element it computes in.
  hal_dtype dtype() const { return primary_; }
  const std::string& compute() const { return compute_; }

  const ArgShape& arg(int index) const { return signature_.args[index]; }
  bool is_tensor(int index) const { return arg(index).kind == HAL_ARG_TENSOR; }
  bool is_none(int index) const { return arg(index).kind == HAL_ARG_NONE; }
  const std::vector<int64_t>& sizes(int index) const {
    return arg(index).sizes;
  }
  int64_t int_value(int index) const { return arg(index).i64; }
  double float_value(int index) const { return arg(index).f64; }

  // Tensor argument `index` in its storage element, or converted.
  Value read(int index);
  Value read(int index, std::string_view element);
  // A tensor|scalar (or scalar) argument as `element`, broadcast to `dims`.
  Value strided_operand(int index, std::string_view element,
                        const std::vector<int64_t>& dims);
  // A scalar parameter as a 0-d `element` value.
  Value scalar(int index, std::string_view element);
  // A constant of the compute element.
  Value constant(double value, const std::vector<int64_t>& dims = {}) {
    return b_.constant(compute_, value, dims);
  }

  // Writes `value` into tensor argument `index` (converted to its dtype).
  void write(int index, const Value& value);

  // The launch's data check (lowering.hpp): `bad` (i1) marks the invalid
  // elements of `values` (i64, same shape), whose row-major order is the
  // order the kernel reports positions in. The program then returns the
  // status and writes nothing when an element is bad; `report` becomes
  // Program::check_status. At most one per launch; none for no elements.
  void check_data(const Value& values, const Value& bad, StatusCheck report);

  Program finish();

 private:
  Value offset_of(int index);

  const LaunchSignature& signature_;
  hal_dtype primary_;
  std::string compute_;
  ProgramBuilder b_;
  std::vector<Value> buffers_;     // the parameters
  std::map<int, Value> written_;   // buffer -> current contents
  std::vector<int> write_order_;   // buffers in order of first write
  std::vector<int> offset_slot_;   // per argument: index in the offsets
  std::vector<int> scalar_param_;  // per argument: parameter index
  std::vector<Value> scalars_;
  std::vector<hal_dtype> scalar_types_;
  Value offsets_;
  Value status_;  // tensor<2xi64>, set by check_data
  Value valid_;   // i1: no bad element
  StatusCheck report_;
};

// i1 mask of the elements of `values` (i64) outside [0, bound).
Value outside_range(ProgramBuilder& b, const Value& values, int64_t bound);

// The table's signature of standard kernel `name`; throws UNSUPPORTED for a
// name outside the set.
const hal_kernel_signature& kernel_signature(std::string_view name);
// Whether an argument given as `given` is a runtime scalar parameter: a
// scalar of a `scalar` or `tensor|scalar` kind (an `int` or `float` argument
// shapes the program instead).
bool is_runtime_scalar(const hal_kernel_arg_signature& arg, int32_t given);

}  // namespace pjrt_bridge
