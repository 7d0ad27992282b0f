#include "builder.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace pjrt_bridge {

std::string Type::str() const {
  std::string text = "tensor<";
  for (int64_t d : dims) {
    text += fmt::format("{}x", d);
  }
  return text + element + ">";
}

int64_t Type::num_elements() const {
  int64_t count = 1;
  for (int64_t d : dims) {
    count *= d;
  }
  return count;
}

std::string storage_element(hal_dtype dtype) {
  if (!driver_kit::is_valid_dtype(dtype)) {
    driver_kit::fail(HAL_STATUS_UNSUPPORTED, "dtype {} has no StableHLO type",
                     static_cast<int>(dtype));
  }
  // HAL's names are StableHLO's but for unsigned integers (a `ui` prefix)
  // and bool (i1).
  switch (dtype) {
    case HAL_DTYPE_U8:
      return "ui8";
    case HAL_DTYPE_BOOL:
      return "i1";
    default:
      return driver_kit::dtype_name(dtype);
  }
}

std::string compute_element(hal_dtype dtype) {
  switch (dtype) {
    case HAL_DTYPE_F16:
    case HAL_DTYPE_BF16:
      return "f32";
    case HAL_DTYPE_I32:
    case HAL_DTYPE_I16:
    case HAL_DTYPE_I8:
    case HAL_DTYPE_U8:
      return "i64";
    default:
      return storage_element(dtype);
  }
}

bool is_float_element(std::string_view element) {
  return element.front() == 'f' || element == "bf16";
}

bool is_unsigned_element(std::string_view element) {
  return element.starts_with("ui") || element == "i1";
}

int element_bits(std::string_view element) {
  if (element == "bf16") {
    return 16;
  }
  const size_t digits = element.find_first_of("0123456789");
  return std::stoi(std::string(element.substr(digits)));
}

std::string dim_list(const std::vector<int64_t>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

std::string i64_array(const std::vector<int64_t>& values) {
  if (values.empty()) {
    return "array<i64>";
  }
  return fmt::format("array<i64: {}>", fmt::join(values, ", "));
}

namespace {

// The bit pattern of `value` in a float element type, as MLIR reads a hex
// float literal: exact, and NaN/inf need no special spelling.
std::string float_literal(std::string_view element, double value) {
  if (element == "f64") {
    return fmt::format("0x{:016X}", std::bit_cast<uint64_t>(value));
  }
  if (element == "f32") {
    return fmt::format("0x{:08X}",
                       std::bit_cast<uint32_t>(static_cast<float>(value)));
  }
  // f16/bf16 constants are only the zeros of empty tensors.
  return fmt::format("{:.17e}", value);
}

std::string int_literal(std::string_view element, int64_t value) {
  if (element == "i1") {
    return value != 0 ? "true" : "false";
  }
  return fmt::format("{}", value);
}

std::string type_list(const std::vector<Value>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + values[i].type.str();
  }
  return text;
}

std::string name_list(const std::vector<Value>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + values[i].name;
  }
  return text;
}

std::string type_list(const std::vector<Type>& types) {
  std::string text;
  for (size_t i = 0; i < types.size(); ++i) {
    text += (i ? ", " : "") + types[i].str();
  }
  return text;
}

}  // namespace

std::string ProgramBuilder::new_name() {
  return fmt::format("%v{}", next_name_++);
}

void ProgramBuilder::line(const std::string& text) {
  body_.append(static_cast<size_t>(indent_) * 2, ' ');
  body_ += text;
  body_ += '\n';
}

Value ProgramBuilder::param(Type type) {
  params_.push_back({fmt::format("%arg{}", params_.size()), std::move(type)});
  return params_.back();
}

std::string ProgramBuilder::finish(const std::vector<Value>& results) {
  std::string params;
  for (size_t i = 0; i < params_.size(); ++i) {
    params += fmt::format("{}{}: {}", i ? ", " : "", params_[i].name,
                          params_[i].type.str());
  }
  std::string text = fmt::format(
      "module @hal_kernel {{\n  func.func public @main({}) -> ({}) {{\n",
      params, type_list(results));
  text += body_;
  text += fmt::format("    \"func.return\"({}) : ({}) -> ()\n  }}\n}}\n",
                      name_list(results), type_list(results));
  return text;
}

std::vector<Value> ProgramBuilder::op_n(std::string_view name,
                                        const std::vector<Value>& operands,
                                        const std::vector<Type>& results,
                                        std::string_view attributes,
                                        const std::string& regions) {
  std::vector<Value> values;
  values.reserve(results.size());
  std::string names;
  for (const Type& type : results) {
    values.push_back({new_name(), type});
  }
  if (values.size() == 1) {
    names = values[0].name;
  } else {
    // Multiple results: one name with #n uses.
    const std::string base = new_name();
    names = fmt::format("{}:{}", base, values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      values[i].name = fmt::format("{}#{}", base, i);
    }
  }
  // Names without a dialect are StableHLO's (chlo.erf carries its own).
  const std::string full = name.find('.') == std::string_view::npos
                               ? fmt::format("stablehlo.{}", name)
                               : std::string(name);
  line(fmt::format(
      "{} = \"{}\"({}){}{} : ({}) -> ({})", names, full, name_list(operands),
      regions.empty() ? "" : " (" + regions + ")",
      attributes.empty() ? std::string() : fmt::format(" {{{}}}", attributes),
      type_list(operands), type_list(results)));
  return values;
}

Value ProgramBuilder::op(std::string_view name,
                         const std::vector<Value>& operands, Type result,
                         std::string_view attributes) {
  return op_n(name, operands, {std::move(result)}, attributes)[0];
}

std::string ProgramBuilder::region(
    const std::vector<Type>& arguments,
    const std::function<std::vector<Value>(const std::vector<Value>&)>& body) {
  std::string outer;
  std::swap(outer, body_);
  ++indent_;
  std::vector<Value> args;
  std::string header;
  for (const Type& type : arguments) {
    args.push_back({new_name(), type});
    header += fmt::format("{}{}: {}", header.empty() ? "" : ", ",
                          args.back().name, type.str());
  }
  const std::vector<Value> results = body(args);
  line(fmt::format("\"stablehlo.return\"({}) : ({}) -> ()", name_list(results),
                   type_list(results)));
  --indent_;
  std::string region = fmt::format("{{\n^bb0({}):\n{}", header, body_);
  region.append(static_cast<size_t>(indent_) * 2, ' ');
  region += "}";
  body_ = std::move(outer);
  return region;
}

Value ProgramBuilder::constant(std::string_view element, double value,
                               std::vector<int64_t> dims) {
  Type type{std::string(element), std::move(dims)};
  const std::string literal =
      is_float_element(element)
          ? float_literal(element, value)
          : int_literal(element, static_cast<int64_t>(value));
  return op("constant", {}, type,
            fmt::format("value = dense<{}> : {}", literal, type.str()));
}

Value ProgramBuilder::constant_int(std::string_view element, int64_t value,
                                   std::vector<int64_t> dims) {
  Type type{std::string(element), std::move(dims)};
  return op("constant", {}, type,
            fmt::format("value = dense<{}> : {}", int_literal(element, value),
                        type.str()));
}

Value ProgramBuilder::iota(Type type, int dimension) {
  return op("iota", {}, std::move(type),
            fmt::format("iota_dimension = {} : i64", dimension));
}

Value ProgramBuilder::reshape(const Value& value, std::vector<int64_t> dims) {
  if (value.type.dims == dims) {
    return value;
  }
  return op("reshape", {value}, {value.type.element, std::move(dims)});
}

Value ProgramBuilder::broadcast_in_dim(const Value& value,
                                       std::vector<int64_t> dims,
                                       const std::vector<int64_t>& mapping) {
  return op("broadcast_in_dim", {value}, {value.type.element, std::move(dims)},
            "broadcast_dimensions = " + i64_array(mapping));
}

Value ProgramBuilder::splat(const Value& scalar, std::vector<int64_t> dims) {
  if (dims.empty()) {
    return scalar;
  }
  return broadcast_in_dim(scalar, std::move(dims), {});
}

Value ProgramBuilder::transpose(const Value& value,
                                const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) {
    dims.push_back(value.type.dims[permutation[i]]);
    identity = identity && permutation[i] == static_cast<int64_t>(i);
  }
  if (identity) {
    return value;
  }
  return op("transpose", {value}, {value.type.element, dims},
            "permutation = " + i64_array(permutation));
}

Value ProgramBuilder::slice(const Value& value,
                            const std::vector<int64_t>& start,
                            const std::vector<int64_t>& limit,
                            const std::vector<int64_t>& strides) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < start.size(); ++i) {
    dims.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
  }
  return op(
      "slice", {value}, {value.type.element, dims},
      fmt::format("start_indices = {}, limit_indices = {}, strides = {}",
                  i64_array(start), i64_array(limit), i64_array(strides)));
}

Value ProgramBuilder::concatenate(const std::vector<Value>& values,
                                  int dimension) {
  Type type = values[0].type;
  type.dims[dimension] = 0;
  for (const Value& v : values) {
    type.dims[dimension] += v.type.dims[dimension];
  }
  return op("concatenate", values, type,
            fmt::format("dimension = {} : i64", dimension));
}

Value ProgramBuilder::dynamic_slice(const Value& value,
                                    const std::vector<Value>& starts,
                                    const std::vector<int64_t>& sizes) {
  std::vector<Value> operands{value};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return op("dynamic_slice", operands, {value.type.element, sizes},
            "slice_sizes = " + i64_array(sizes));
}

Value ProgramBuilder::dynamic_update_slice(const Value& value,
                                           const Value& update,
                                           const std::vector<Value>& starts) {
  std::vector<Value> operands{value, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return op("dynamic_update_slice", operands, value.type);
}

Value ProgramBuilder::reverse(const Value& value,
                              const std::vector<int64_t>& dims) {
  if (dims.empty()) {
    return value;
  }
  return op("reverse", {value}, value.type, "dimensions = " + i64_array(dims));
}

Value ProgramBuilder::convert(const Value& value, std::string_view element) {
  if (value.type.element == element) {
    return value;
  }
  return op("convert", {value}, {std::string(element), value.type.dims});
}

Value ProgramBuilder::bitcast_convert(const Value& value, Type type) {
  if (value.type.element == type.element && value.type.dims == type.dims) {
    return value;
  }
  return op("bitcast_convert", {value}, std::move(type));
}

Value ProgramBuilder::unary(std::string_view name, const Value& value) {
  return op(name, {value}, value.type);
}

Value ProgramBuilder::binary(std::string_view name, const Value& a,
                             const Value& b) {
  return op(name, {a, b}, a.type);
}

Value ProgramBuilder::compare(const Value& a, const Value& b,
                              std::string_view direction) {
  const std::string& element = a.type.element;
  const char* compare_type = is_float_element(element)      ? "FLOAT"
                             : is_unsigned_element(element) ? "UNSIGNED"
                                                            : "SIGNED";
  return op(
      "compare", {a, b}, {"i1", a.type.dims},
      fmt::format("comparison_direction = #stablehlo<comparison_direction "
                  "{}>, compare_type = #stablehlo<comparison_type {}>",
                  direction, compare_type));
}

Value ProgramBuilder::select(const Value& predicate, const Value& on_true,
                             const Value& on_false) {
  return op("select", {predicate, on_true, on_false}, on_true.type);
}

Value ProgramBuilder::like(const Value& like, double value) {
  return constant(like.type.element, value, like.type.dims);
}

std::vector<Value> ProgramBuilder::reduce(
    const std::vector<Value>& inputs, const std::vector<Value>& inits,
    const std::vector<int64_t>& dims,
    const std::function<std::vector<Value>(const std::vector<Value>&)>&
        combine) {
  std::vector<Type> scalars;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Value& init : inits) {
      scalars.push_back({init.type.element, {}});
    }
  }
  std::vector<int64_t> kept;
  const Type& in = inputs[0].type;
  for (int d = 0; d < in.rank(); ++d) {
    bool reduced = false;
    for (int64_t r : dims) {
      reduced = reduced || r == d;
    }
    if (!reduced) {
      kept.push_back(in.dims[d]);
    }
  }
  std::vector<Type> results;
  results.reserve(inits.size());
  for (const Value& init : inits) {
    results.push_back({init.type.element, kept});
  }
  std::vector<Value> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  const std::string body = region(scalars, combine);
  return op_n("reduce", operands, results, "dimensions = " + i64_array(dims),
              body);
}

Value ProgramBuilder::reduce_with(const Value& input, const Value& init,
                                  const std::vector<int64_t>& dims,
                                  std::string_view op) {
  return reduce({input}, {init}, dims, [&](const std::vector<Value>& args) {
    return std::vector<Value>{binary(op, args[0], args[1])};
  })[0];
}

Value ProgramBuilder::dot_general(const Value& lhs, const Value& rhs,
                                  const std::vector<int64_t>& lhs_batch,
                                  const std::vector<int64_t>& rhs_batch,
                                  const std::vector<int64_t>& lhs_contract,
                                  const std::vector<int64_t>& rhs_contract) {
  // Result: batch dims, lhs free dims, rhs free dims.
  std::vector<int64_t> dims;
  dims.reserve(lhs.type.dims.size() + rhs.type.dims.size());
  for (int64_t d : lhs_batch) {
    dims.push_back(lhs.type.dims[d]);
  }
  const auto free_dims = [&](const Value& v, const std::vector<int64_t>& batch,
                             const std::vector<int64_t>& contract) {
    for (int d = 0; d < v.type.rank(); ++d) {
      bool used = false;
      for (int64_t b : batch) used = used || b == d;
      for (int64_t c : contract) used = used || c == d;
      if (!used) {
        dims.push_back(v.type.dims[d]);
      }
    }
  };
  free_dims(lhs, lhs_batch, lhs_contract);
  free_dims(rhs, rhs_batch, rhs_contract);
  std::vector<std::string> fields;
  const auto field = [&](const char* name, const std::vector<int64_t>& v) {
    if (!v.empty()) {
      fields.push_back(fmt::format("{} = {}", name, dim_list(v)));
    }
  };
  field("lhs_batching_dimensions", lhs_batch);
  field("rhs_batching_dimensions", rhs_batch);
  field("lhs_contracting_dimensions", lhs_contract);
  field("rhs_contracting_dimensions", rhs_contract);
  return op("dot_general", {lhs, rhs}, {lhs.type.element, dims},
            fmt::format("dot_dimension_numbers = #stablehlo.dot<{}>, "
                        "precision_config = [#stablehlo<precision HIGHEST>, "
                        "#stablehlo<precision HIGHEST>]",
                        fmt::join(fields, ", ")));
}

namespace {

// dense<[[l, h], ...]> : tensor<Nx2xi64> from (low, high) pairs.
std::string padding_attribute(const std::vector<int64_t>& padding) {
  std::vector<std::string> pairs;
  for (size_t i = 0; i + 1 < padding.size(); i += 2) {
    pairs.push_back(fmt::format("[{}, {}]", padding[i], padding[i + 1]));
  }
  return fmt::format("dense<[{}]> : tensor<{}x2xi64>", fmt::join(pairs, ", "),
                     padding.size() / 2);
}

}  // namespace

Value ProgramBuilder::convolution(const Value& lhs, const Value& rhs,
                                  Type result,
                                  std::string_view dimension_numbers,
                                  const std::vector<int64_t>& strides,
                                  const std::vector<int64_t>& padding,
                                  const std::vector<int64_t>& lhs_dilation,
                                  const std::vector<int64_t>& rhs_dilation,
                                  int64_t feature_groups) {
  return op(
      "convolution", {lhs, rhs}, std::move(result),
      fmt::format(
          "batch_group_count = 1 : i64, dimension_numbers = "
          "#stablehlo.conv<{}>, feature_group_count = {} : i64, "
          "lhs_dilation = {}, padding = {}, rhs_dilation = {}, "
          "window_strides = {}, precision_config = "
          "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]",
          dimension_numbers, feature_groups, i64_array(lhs_dilation),
          padding_attribute(padding), i64_array(rhs_dilation),
          i64_array(strides)));
}

std::vector<Value> ProgramBuilder::reduce_window(
    const std::vector<Value>& inputs, const std::vector<Value>& inits,
    const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
    const std::vector<int64_t>& window_dilations,
    const std::vector<int64_t>& padding, const std::vector<int64_t>& dims,
    const std::function<std::vector<Value>(const std::vector<Value>&)>&
        combine) {
  std::vector<Type> scalars;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Value& init : inits) {
      scalars.push_back({init.type.element, {}});
    }
  }
  std::vector<Type> results;
  results.reserve(inputs.size());
  for (const Value& input : inputs) {
    results.push_back({input.type.element, dims});
  }
  std::vector<Value> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  const std::string body = region(scalars, combine);
  return op_n(
      "reduce_window", operands, results,
      fmt::format("window_dimensions = {}, window_strides = {}, "
                  "window_dilations = {}, padding = {}",
                  i64_array(window), i64_array(strides),
                  i64_array(window_dilations), padding_attribute(padding)),
      body);
}

Value ProgramBuilder::gather(const Value& operand, const Value& indices,
                             const std::vector<int64_t>& offset_dims,
                             const std::vector<int64_t>& collapsed_slice_dims,
                             const std::vector<int64_t>& start_index_map,
                             const std::vector<int64_t>& slice_sizes) {
  // Result: the indices' batch dims with the window's kept dims at
  // offset_dims.
  const int index_vector_dim = indices.type.rank() - 1;
  std::vector<int64_t> window;
  for (size_t d = 0; d < slice_sizes.size(); ++d) {
    bool collapsed = false;
    for (int64_t c : collapsed_slice_dims) {
      collapsed = collapsed || c == static_cast<int64_t>(d);
    }
    if (!collapsed) {
      window.push_back(slice_sizes[d]);
    }
  }
  const int rank = index_vector_dim + static_cast<int>(window.size());
  std::vector<int64_t> dims(rank);
  size_t next_window = 0;
  int next_batch = 0;
  for (int d = 0; d < rank; ++d) {
    bool offset = false;
    for (int64_t o : offset_dims) offset = offset || o == d;
    dims[d] = offset ? window[next_window++] : indices.type.dims[next_batch++];
  }
  std::vector<std::string> fields;
  if (!offset_dims.empty()) {
    fields.push_back("offset_dims = " + dim_list(offset_dims));
  }
  if (!collapsed_slice_dims.empty()) {
    fields.push_back("collapsed_slice_dims = " +
                     dim_list(collapsed_slice_dims));
  }
  fields.push_back("start_index_map = " + dim_list(start_index_map));
  fields.push_back(fmt::format("index_vector_dim = {}", index_vector_dim));
  return op("gather", {operand, indices}, {operand.type.element, dims},
            fmt::format("dimension_numbers = #stablehlo.gather<{}>, "
                        "slice_sizes = {}, indices_are_sorted = false",
                        fmt::join(fields, ", "), i64_array(slice_sizes)));
}

Value ProgramBuilder::scatter(
    const Value& operand, const Value& indices, const Value& updates,
    const std::vector<int64_t>& update_window_dims,
    const std::vector<int64_t>& inserted_window_dims,
    const std::vector<int64_t>& scatter_dims_to_operand_dims,
    std::string_view combine) {
  const Type scalar{operand.type.element, {}};
  const std::string body =
      region({scalar, scalar}, [&](const std::vector<Value>& args) {
        if (combine.empty()) {
          return std::vector<Value>{args[1]};
        }
        return std::vector<Value>{binary(combine, args[0], args[1])};
      });
  std::vector<std::string> fields;
  if (!update_window_dims.empty()) {
    fields.push_back("update_window_dims = " + dim_list(update_window_dims));
  }
  if (!inserted_window_dims.empty()) {
    fields.push_back("inserted_window_dims = " +
                     dim_list(inserted_window_dims));
  }
  fields.push_back("scatter_dims_to_operand_dims = " +
                   dim_list(scatter_dims_to_operand_dims));
  fields.push_back(
      fmt::format("index_vector_dim = {}", indices.type.rank() - 1));
  return op_n("scatter", {operand, indices, updates}, {operand.type},
              fmt::format("scatter_dimension_numbers = "
                          "#stablehlo.scatter<{}>, indices_are_sorted = false, "
                          "unique_indices = false",
                          fmt::join(fields, ", ")),
              body)[0];
}

}  // namespace pjrt_bridge
