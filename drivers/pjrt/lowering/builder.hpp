// ProgramBuilder: writes one StableHLO function, `@main`, as MLIR text in
// the generic operation form ("stablehlo.add"(...) : (...) -> ...), which
// every StableHLO parser reads the same way.
//
// Values are SSA names with their tensor type; the builder owns the text and
// hands out Values by copy. Helpers cover the operations the lowerings use;
// Op() writes any other. Regions (reduce, scatter, sort bodies) are written
// through Region(), which nests the builder's output.
#pragma once

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
  int64_t num_elements() const;
  int rank() const { return static_cast<int>(dims.size()); }
};

struct Value {
  std::string name;
  Type type;
};

// The element type that stores `dtype` (bool as i1) and the one kernels
// compute in (f16/bf16 widen to f32, integers to i64 and wrap when stored).
std::string storage_element(hal_dtype dtype);
std::string compute_element(hal_dtype dtype);
bool is_float_element(std::string_view element);
bool is_unsigned_element(std::string_view element);
// Bits of one element ("i1": 1).
int element_bits(std::string_view element);

class ProgramBuilder {
 public:
  // Parameters of @main, in order.
  Value param(Type type);
  // Finishes @main returning `results`; the builder is spent afterwards.
  std::string finish(const std::vector<Value>& results);

  // Any operation: `attributes` is the text inside {...} (may be empty).
  Value op(std::string_view name, const std::vector<Value>& operands,
           Type result, std::string_view attributes = {});
  std::vector<Value> op_n(std::string_view name,
                          const std::vector<Value>& operands,
                          const std::vector<Type>& results,
                          std::string_view attributes,
                          const std::string& regions = {});
  // A region whose block takes `arguments` and returns what `body` returns.
  std::string region(
      const std::vector<Type>& arguments,
      const std::function<std::vector<Value>(const std::vector<Value>&)>& body);

  // --- constants and shapes ---
  Value constant(std::string_view element, double value,
                 std::vector<int64_t> dims = {});
  Value constant_int(std::string_view element, int64_t value,
                     std::vector<int64_t> dims = {});
  Value iota(Type type, int dimension);
  Value reshape(const Value& value, std::vector<int64_t> dims);
  // Broadcasts `value` into `dims`; operand dimension i goes to
  // result dimension `mapping[i]`.
  Value broadcast_in_dim(const Value& value, std::vector<int64_t> dims,
                         const std::vector<int64_t>& mapping);
  // A 0-d value broadcast to `dims`.
  Value splat(const Value& scalar, std::vector<int64_t> dims);
  Value transpose(const Value& value, const std::vector<int64_t>& permutation);
  Value slice(const Value& value, const std::vector<int64_t>& start,
              const std::vector<int64_t>& limit,
              const std::vector<int64_t>& strides);
  Value concatenate(const std::vector<Value>& values, int dimension);
  Value dynamic_slice(const Value& value, const std::vector<Value>& starts,
                      const std::vector<int64_t>& sizes);
  Value dynamic_update_slice(const Value& value, const Value& update,
                             const std::vector<Value>& starts);
  Value reverse(const Value& value, const std::vector<int64_t>& dims);

  // --- element types ---
  Value convert(const Value& value, std::string_view element);
  Value bitcast_convert(const Value& value, Type type);

  // --- elementwise (operands of one type unless said) ---
  Value unary(std::string_view op, const Value& value);  // "exponential"...
  Value binary(std::string_view op, const Value& a, const Value& b);
  Value add(const Value& a, const Value& b) { return binary("add", a, b); }
  Value sub(const Value& a, const Value& b) { return binary("subtract", a, b); }
  Value mul(const Value& a, const Value& b) { return binary("multiply", a, b); }
  Value div(const Value& a, const Value& b) { return binary("divide", a, b); }
  Value max(const Value& a, const Value& b) { return binary("maximum", a, b); }
  Value min(const Value& a, const Value& b) { return binary("minimum", a, b); }
  Value bitwise_and(const Value& a, const Value& b) {
    return binary("and", a, b);
  }
  Value bitwise_or(const Value& a, const Value& b) {
    return binary("or", a, b);
  }
  // direction: EQ NE LT LE GT GE; the comparison type follows the element.
  Value compare(const Value& a, const Value& b, std::string_view direction);
  Value select(const Value& predicate, const Value& on_true,
               const Value& on_false);
  // A constant of `like`'s type (element and dims) with value `value`.
  Value like(const Value& like, double value);

  // --- structured ---
  // Reduces `dims` of each input with `combine`, starting from `inits`
  // (0-d). `combine` gets (accumulators..., elements...) as 0-d values.
  std::vector<Value> reduce(
      const std::vector<Value>& inputs, const std::vector<Value>& inits,
      const std::vector<int64_t>& dims,
      const std::function<std::vector<Value>(const std::vector<Value>&)>&
          combine);
  // Single-input reduction with a binary op ("add", "maximum", ...).
  Value reduce_with(const Value& input, const Value& init,
                    const std::vector<int64_t>& dims, std::string_view op);
  // dot_general with precision HIGHEST.
  Value dot_general(const Value& lhs, const Value& rhs,
                    const std::vector<int64_t>& lhs_batch,
                    const std::vector<int64_t>& rhs_batch,
                    const std::vector<int64_t>& lhs_contract,
                    const std::vector<int64_t>& rhs_contract);
  // 2-D convolution of NCHW-like operands; `dimension_numbers` is the
  // #stablehlo.conv<...> body, e.g. "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]".
  // `padding` is {low_h, high_h, low_w, high_w}. Precision HIGHEST.
  Value convolution(const Value& lhs, const Value& rhs, Type result,
                    std::string_view dimension_numbers,
                    const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& padding,
                    const std::vector<int64_t>& lhs_dilation,
                    const std::vector<int64_t>& rhs_dilation,
                    int64_t feature_groups);
  // reduce_window over inputs with 0-d `inits`; `padding` holds (low, high)
  // per dimension.
  std::vector<Value> reduce_window(
      const std::vector<Value>& inputs, const std::vector<Value>& inits,
      const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
      const std::vector<int64_t>& window_dilations,
      const std::vector<int64_t>& padding, const std::vector<int64_t>& dims,
      const std::function<std::vector<Value>(const std::vector<Value>&)>&
          combine);
  // Gathers `slice_sizes`-sized windows of `operand` at `indices`
  // ([..., index_vector] in the last dimension).
  Value gather(const Value& operand, const Value& indices,
               const std::vector<int64_t>& offset_dims,
               const std::vector<int64_t>& collapsed_slice_dims,
               const std::vector<int64_t>& start_index_map,
               const std::vector<int64_t>& slice_sizes);
  // Scatters `updates` into `operand` at `indices`; `combine` ("add") or,
  // when empty, replaces.
  Value scatter(const Value& operand, const Value& indices,
                const Value& updates,
                const std::vector<int64_t>& update_window_dims,
                const std::vector<int64_t>& inserted_window_dims,
                const std::vector<int64_t>& scatter_dims_to_operand_dims,
                std::string_view combine);

 private:
  std::string new_name();
  void line(const std::string& text);

  std::vector<Value> params_;
  std::string body_;
  int indent_ = 1;
  int next_name_ = 0;
};

// "[1, 2]" and "array<i64: 1, 2>".
std::string dim_list(const std::vector<int64_t>& values);
std::string i64_array(const std::vector<int64_t>& values);

}  // namespace pjrt_bridge
