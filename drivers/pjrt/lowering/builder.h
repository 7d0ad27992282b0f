// ProgramBuilder: writes one StableHLO function, `@main`, as MLIR text in
// the generic operation form ("stablehlo.add"(...) : (...) -> ...), which
// every StableHLO parser reads the same way.
//
// Values are SSA names with their tensor type; the builder owns the text and
// hands out Values by copy. Helpers cover the operations the lowerings use;
// Op() writes any other. Regions (reduce, scatter, sort bodies) are written
// through Region(), which nests the builder's output.
#ifndef HAL_DRIVERS_PJRT_LOWERING_BUILDER_H_
#define HAL_DRIVERS_PJRT_LOWERING_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hal/driver.h"

namespace pjrt_bridge {

// A tensor type: element type as StableHLO spells it ("f32", "i64", "ui8",
// "i1", ...) and dimensions.
struct Type {
  std::string element;
  std::vector<int64_t> dims;

  std::string str() const;
  int64_t NumElements() const;
  int rank() const { return static_cast<int>(dims.size()); }
};

struct Value {
  std::string name;
  Type type;
};

// The element type that stores `dtype` (bool as i1) and the one kernels
// compute in (f16/bf16 widen to f32, integers to i64 and wrap when stored).
std::string StorageElement(hal_dtype dtype);
std::string ComputeElement(hal_dtype dtype);
bool IsFloatElement(std::string_view element);
bool IsUnsignedElement(std::string_view element);
// Bits of one element ("i1": 1).
int ElementBits(std::string_view element);

class ProgramBuilder {
 public:
  // Parameters of @main, in order.
  Value Param(Type type);
  // Finishes @main returning `results`; the builder is spent afterwards.
  std::string Finish(const std::vector<Value>& results);

  // Any operation: `attributes` is the text inside {...} (may be empty).
  Value Op(std::string_view name, const std::vector<Value>& operands,
           Type result, std::string_view attributes = {});
  std::vector<Value> OpN(std::string_view name,
                         const std::vector<Value>& operands,
                         const std::vector<Type>& results,
                         std::string_view attributes,
                         const std::string& regions = {});
  // A region whose block takes `arguments` and returns what `body` returns.
  std::string Region(
      const std::vector<Type>& arguments,
      const std::function<std::vector<Value>(const std::vector<Value>&)>& body);

  // --- constants and shapes ---
  Value Constant(std::string_view element, double value,
                 std::vector<int64_t> dims = {});
  Value ConstantInt(std::string_view element, int64_t value,
                    std::vector<int64_t> dims = {});
  Value Iota(Type type, int dimension);
  Value Reshape(const Value& value, std::vector<int64_t> dims);
  // Broadcasts `value` into `dims`; operand dimension i goes to
  // result dimension `mapping[i]`.
  Value BroadcastInDim(const Value& value, std::vector<int64_t> dims,
                       const std::vector<int64_t>& mapping);
  // A 0-d value broadcast to `dims`.
  Value Splat(const Value& scalar, std::vector<int64_t> dims);
  Value Transpose(const Value& value, const std::vector<int64_t>& permutation);
  Value Slice(const Value& value, const std::vector<int64_t>& start,
              const std::vector<int64_t>& limit,
              const std::vector<int64_t>& strides);
  Value Concatenate(const std::vector<Value>& values, int dimension);
  Value DynamicSlice(const Value& value, const std::vector<Value>& starts,
                     const std::vector<int64_t>& sizes);
  Value DynamicUpdateSlice(const Value& value, const Value& update,
                           const std::vector<Value>& starts);
  Value Reverse(const Value& value, const std::vector<int64_t>& dims);

  // --- element types ---
  Value Convert(const Value& value, std::string_view element);
  Value BitcastConvert(const Value& value, Type type);

  // --- elementwise (operands of one type unless said) ---
  Value Unary(std::string_view op, const Value& value);  // "exponential"...
  Value Binary(std::string_view op, const Value& a, const Value& b);
  Value Add(const Value& a, const Value& b) { return Binary("add", a, b); }
  Value Sub(const Value& a, const Value& b) { return Binary("subtract", a, b); }
  Value Mul(const Value& a, const Value& b) { return Binary("multiply", a, b); }
  Value Div(const Value& a, const Value& b) { return Binary("divide", a, b); }
  Value Max(const Value& a, const Value& b) { return Binary("maximum", a, b); }
  Value Min(const Value& a, const Value& b) { return Binary("minimum", a, b); }
  Value And(const Value& a, const Value& b) { return Binary("and", a, b); }
  Value Or(const Value& a, const Value& b) { return Binary("or", a, b); }
  // direction: EQ NE LT LE GT GE; the comparison type follows the element.
  Value Compare(const Value& a, const Value& b, std::string_view direction);
  Value Select(const Value& predicate, const Value& on_true,
               const Value& on_false);
  // A constant of `like`'s type (element and dims) with value `value`.
  Value Like(const Value& like, double value);

  // --- structured ---
  // Reduces `dims` of each input with `combine`, starting from `inits`
  // (0-d). `combine` gets (accumulators..., elements...) as 0-d values.
  std::vector<Value> Reduce(
      const std::vector<Value>& inputs, const std::vector<Value>& inits,
      const std::vector<int64_t>& dims,
      const std::function<std::vector<Value>(const std::vector<Value>&)>&
          combine);
  // Single-input reduction with a binary op ("add", "maximum", ...).
  Value ReduceWith(const Value& input, const Value& init,
                   const std::vector<int64_t>& dims, std::string_view op);
  // dot_general with precision HIGHEST.
  Value DotGeneral(const Value& lhs, const Value& rhs,
                   const std::vector<int64_t>& lhs_batch,
                   const std::vector<int64_t>& rhs_batch,
                   const std::vector<int64_t>& lhs_contract,
                   const std::vector<int64_t>& rhs_contract);
  // 2-D convolution of NCHW-like operands; `dimension_numbers` is the
  // #stablehlo.conv<...> body, e.g. "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]".
  // `padding` is {low_h, high_h, low_w, high_w}. Precision HIGHEST.
  Value Convolution(const Value& lhs, const Value& rhs, Type result,
                    std::string_view dimension_numbers,
                    const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& padding,
                    const std::vector<int64_t>& lhs_dilation,
                    const std::vector<int64_t>& rhs_dilation,
                    int64_t feature_groups);
  // reduce_window over inputs with 0-d `inits`; `padding` holds (low, high)
  // per dimension.
  std::vector<Value> ReduceWindow(
      const std::vector<Value>& inputs, const std::vector<Value>& inits,
      const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
      const std::vector<int64_t>& window_dilations,
      const std::vector<int64_t>& padding, const std::vector<int64_t>& dims,
      const std::function<std::vector<Value>(const std::vector<Value>&)>&
          combine);
  // Gathers `slice_sizes`-sized windows of `operand` at `indices`
  // ([..., index_vector] in the last dimension).
  Value Gather(const Value& operand, const Value& indices,
               const std::vector<int64_t>& offset_dims,
               const std::vector<int64_t>& collapsed_slice_dims,
               const std::vector<int64_t>& start_index_map,
               const std::vector<int64_t>& slice_sizes);
  // Scatters `updates` into `operand` at `indices`; `combine` ("add") or,
  // when empty, replaces.
  Value Scatter(const Value& operand, const Value& indices,
                const Value& updates,
                const std::vector<int64_t>& update_window_dims,
                const std::vector<int64_t>& inserted_window_dims,
                const std::vector<int64_t>& scatter_dims_to_operand_dims,
                std::string_view combine);

 private:
  std::string NewName();
  void Line(const std::string& text);

  std::vector<Value> params_;
  std::string body_;
  int indent_ = 1;
  int next_name_ = 0;
};

// "[1, 2]" and "array<i64: 1, 2>".
std::string DimList(const std::vector<int64_t>& values);
std::string I64Array(const std::vector<int64_t>& values);

}  // namespace pjrt_bridge

#endif  // HAL_DRIVERS_PJRT_LOWERING_BUILDER_H_
