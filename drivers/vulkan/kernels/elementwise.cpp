// The elementwise kernels of table/elementwise.json (all but fill and copy,
// copy.cpp) on Vulkan: unary, unary backward, binary, comparisons, logical
// and bitwise ops, where, clamp, addcmul, addcdiv and lerp. Every one is the
// same map, out[i] = f(in0[i], in1[i], in2[i]) in shaders/elementwise/
// map.comp, so a kernel here is a row of kMapKernels: its dtypes, inputs and
// extra argument, validated as cpu_ref validates them (kit/
// elementwise_checks.hpp).
#include "kernels/elementwise.hpp"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "kit/dtype.hpp"
#include "kit/elementwise_checks.hpp"
#include "kit/error.hpp"

namespace vulkan {

using driver_kit::ArgChecker;
using driver_kit::ElementwiseInput;
using driver_kit::fail;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

std::string variant(std::string_view kernel, int32_t dtype) {
  return fmt::format("{}_{}", kernel, driver_kit::dtype_name(dtype));
}

void pack_scalar(ArgBlock& block, int32_t dtype, const ScalarArg& scalar) {
  switch (dtype) {
    case HAL_DTYPE_F32:
    case HAL_DTYPE_F16:
      block.f32(scalar.as<float>());
      return;
    case HAL_DTYPE_F64:
      block.f64(scalar.as<double>());
      return;
    default:
      block.i64(scalar.as<int64_t>());
      return;
  }
}

namespace {

// map.comp's argument block: dest, three inputs (tensors or scalars), two
// extra scalars, which inputs are scalars, a mode and the element count.
struct MapArgs {
  TensorArg dest;
  std::array<ElementwiseInput, 3> inputs;
  std::array<ScalarArg, 2> params;
  int64_t mode = 0;
};

void dispatch_map(KernelLaunch& launch, std::string_view kernel, int32_t dtype,
                  const MapArgs& map) {
  ArgBlock block;
  block.tensor(map.dest);
  int64_t scalar_inputs = 0;
  for (size_t k = 0; k < map.inputs.size(); ++k) {
    const ElementwiseInput& input = map.inputs[k];
    block.tensor(input.tensor ? *input.tensor : TensorArg{});
    if (!input.tensor) scalar_inputs |= int64_t{1} << k;
  }
  for (const ElementwiseInput& input : map.inputs) {
    pack_scalar(block, dtype, input.scalar);
  }
  for (const ScalarArg& param : map.params) {
    pack_scalar(block, dtype, param);
  }
  block.i64(scalar_inputs);
  block.i64(map.mode);
  block.u64(static_cast<uint64_t>(map.dest.num_elements));
  launch.dispatch(variant(kernel, dtype),
                  static_cast<uint64_t>(map.dest.num_elements), block);
}

}  // namespace

TensorArg stage_input(KernelLaunch& launch, const TensorArg& tensor) {
  TensorArg staged = tensor;
  const uint64_t bytes =
      static_cast<uint64_t>(tensor.num_elements * tensor.element_size);
  staged.tensor.data = launch.scratch(bytes);
  int64_t stride = 1;
  for (int d = tensor.rank() - 1; d >= 0; --d) {
    staged.tensor.strides[d] = stride;
    stride *= tensor.tensor.sizes[d];
  }
  staged.first_byte = staged.tensor.data;
  staged.end_byte = staged.tensor.data + bytes;
  MapArgs map{.dest = staged};
  map.inputs[0].tensor = tensor;
  dispatch_map(launch, "stage", tensor.dtype(), map);
  return staged;
}

TensorArg read_before_write(KernelLaunch& launch, const TensorArg& tensor,
                            const TensorArg& written) {
  if (!tensor.overlaps(written) || same_view(tensor, written)) return tensor;
  return stage_input(launch, tensor);
}

namespace {

using driver_kit::kAllDtypes;
using driver_kit::kFloatDtypes;
using driver_kit::kIntegerDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::require_dtype;
using driver_kit::require_integral_scalar;

constexpr uint32_t kBitwiseDtypes =
    kIntegerDtypes | HAL_DTYPE_BIT(HAL_DTYPE_BOOL);

// The argument after the inputs, if any.
enum class Extra {
  kNone,
  kAlpha,         // scalar alpha (add, sub)
  kThreshold,     // scalar threshold (threshold_backward)
  kValue,         // scalar value (addcmul, addcdiv)
  kRoundingMode,  // int rounding_mode (div)
  kApproximate,   // int approximate (gelu, gelu_backward)
  kBounds,        // scalar? min and max (clamp)
};

struct MapKernel {
  const char* name;
  uint32_t dtypes;                         // of the kernel's dtype
  std::array<const char*, 3> inputs = {};  // names, nullptr past the last
  uint32_t scalar_ok = 0;                  // bit k: input k may be a scalar
  // out is bool and the kernel's dtype is the first input's (comparisons,
  // logical ops); otherwise it is out's.
  bool bool_out = false;
  bool bool_condition = false;  // where: the first input is a bool tensor
  Extra extra = Extra::kNone;

  uint32_t input_count() const {
    uint32_t count = 0;
    while (count < inputs.size() && inputs[count] != nullptr) ++count;
    return count;
  }
  uint32_t arg_count() const {
    const uint32_t extras = extra == Extra::kNone     ? 0
                            : extra == Extra::kBounds ? 2
                                                      : 1;
    return 1 + input_count() + extras;
  }
};

constexpr MapKernel unary(const char* name, uint32_t dtypes) {
  return {.name = name, .dtypes = dtypes, .inputs = {"in"}};
}
constexpr MapKernel backward(const char* name, const char* saved,
                             uint32_t dtypes = kFloatDtypes,
                             Extra extra = Extra::kNone) {
  return {.name = name,
          .dtypes = dtypes,
          .inputs = {"grad_out", saved},
          .extra = extra};
}
constexpr MapKernel binary(const char* name, uint32_t dtypes,
                           Extra extra = Extra::kNone) {
  return {.name = name,
          .dtypes = dtypes,
          .inputs = {"a", "b"},
          .scalar_ok = 0b10,
          .extra = extra};
}
constexpr MapKernel bool_binary(const char* name) {
  return {.name = name,
          .dtypes = kAllDtypes,
          .inputs = {"a", "b"},
          .scalar_ok = 0b10,
          .bool_out = true};
}

constexpr MapKernel kMapKernels[] = {
    unary("neg", kNumericDtypes),
    unary("abs", kNumericDtypes),
    unary("exp", kFloatDtypes),
    unary("log", kFloatDtypes),
    unary("log1p", kFloatDtypes),
    unary("expm1", kFloatDtypes),
    unary("sqrt", kFloatDtypes),
    unary("rsqrt", kFloatDtypes),
    unary("sin", kFloatDtypes),
    unary("cos", kFloatDtypes),
    unary("tanh", kFloatDtypes),
    unary("sigmoid", kFloatDtypes),
    unary("relu", kNumericDtypes),
    {.name = "gelu",
     .dtypes = kFloatDtypes,
     .inputs = {"in"},
     .extra = Extra::kApproximate},
    unary("silu", kFloatDtypes),
    unary("erf", kFloatDtypes),
    unary("reciprocal", kFloatDtypes),
    unary("sign", kNumericDtypes),
    unary("floor", kNumericDtypes),
    unary("ceil", kNumericDtypes),
    unary("round", kNumericDtypes),
    unary("trunc", kNumericDtypes),
    {.name = "logical_not",
     .dtypes = kAllDtypes,
     .inputs = {"in"},
     .bool_out = true},
    backward("threshold_backward", "self", kNumericDtypes, Extra::kThreshold),
    backward("sigmoid_backward", "y"),
    backward("tanh_backward", "y"),
    backward("gelu_backward", "x", kFloatDtypes, Extra::kApproximate),
    backward("silu_backward", "x"),
    binary("add", kNumericDtypes, Extra::kAlpha),
    binary("sub", kNumericDtypes, Extra::kAlpha),
    binary("mul", kAllDtypes),
    binary("div", kNumericDtypes, Extra::kRoundingMode),
    binary("pow", kFloatDtypes),
    binary("maximum", kAllDtypes),
    binary("minimum", kAllDtypes),
    bool_binary("eq"),
    bool_binary("ne"),
    bool_binary("lt"),
    bool_binary("le"),
    bool_binary("gt"),
    bool_binary("ge"),
    bool_binary("logical_and"),
    bool_binary("logical_or"),
    bool_binary("logical_xor"),
    binary("bitwise_and", kBitwiseDtypes),
    binary("bitwise_or", kBitwiseDtypes),
    binary("bitwise_xor", kBitwiseDtypes),
    {.name = "where",
     .dtypes = kAllDtypes,
     .inputs = {"cond", "a", "b"},
     .scalar_ok = 0b110,
     .bool_condition = true},
    {.name = "clamp",
     .dtypes = kNumericDtypes,
     .inputs = {"in"},
     .extra = Extra::kBounds},
    {.name = "addcmul",
     .dtypes = kNumericDtypes,
     .inputs = {"self", "tensor1", "tensor2"},
     .extra = Extra::kValue},
    {.name = "addcdiv",
     .dtypes = kFloatDtypes,
     .inputs = {"self", "tensor1", "tensor2"},
     .extra = Extra::kValue},
    {.name = "lerp",
     .dtypes = kFloatDtypes,
     .inputs = {"start", "end", "weight"},
     .scalar_ok = 0b100},
};

// An int argument that selects one of `count` behaviours.
int64_t choice(const ArgChecker& check, uint32_t index, const char* name,
               int64_t count, const char* meaning) {
  const int64_t value = check.int_value(index, name);
  if (value < 0 || value >= count) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {}; {} are defined",
         check.kernel(), name, value, meaning);
  }
  return value;
}

// Validates the extra argument at `index` into map.params / map.mode.
void check_extra(const ArgChecker& check, const MapKernel& kernel,
                 uint32_t index, int32_t dtype, MapArgs& map) {
  switch (kernel.extra) {
    case Extra::kNone:
      return;
    case Extra::kAlpha:
    case Extra::kThreshold:
    case Extra::kValue: {
      const char* name = kernel.extra == Extra::kAlpha       ? "alpha"
                         : kernel.extra == Extra::kThreshold ? "threshold"
                                                             : "value";
      map.params[0] = check.scalar(index, name);
      require_integral_scalar(check, map.params[0], name, dtype);
      return;
    }
    case Extra::kRoundingMode:
      map.mode = choice(check, index, "rounding_mode", 3,
                        "0 (none), 1 (trunc) and 2 (floor)");
      if (map.mode == 0 && !driver_kit::is_floating_dtype(dtype)) {
        fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: integer division needs rounding_mode 1 (trunc) or 2 "
             "(floor)",
             check.kernel());
      }
      return;
    case Extra::kApproximate:
      map.mode = choice(check, index, "approximate", 2, "0 (erf) and 1 (tanh)");
      return;
    case Extra::kBounds: {
      constexpr const char* kNames[2] = {"min", "max"};
      for (uint32_t b = 0; b < 2; ++b) {
        if (check.kind(index + b) == HAL_ARG_NONE) continue;
        map.params[b] = check.scalar(index + b, kNames[b]);
        require_integral_scalar(check, map.params[b], kNames[b], dtype);
        map.mode |= int64_t{1} << b;
      }
      return;
    }
  }
}

void prepare_map(const MapKernel& kernel, KernelLaunch& launch,
                 const hal_arg* args, uint32_t num_args) {
  ArgChecker check(kernel.name, launch.memory(), args, num_args,
                   kernel.arg_count());
  MapArgs map{.dest = check.tensor(0, "out")};
  const TensorArg& out = map.dest;
  int32_t dtype = out.dtype();
  if (kernel.bool_out) {
    if (out.dtype() != HAL_DTYPE_BOOL) check.unsupported(out, "out", "bool");
    const TensorArg first = check.tensor(1, kernel.inputs[0]);
    require_dtype(check, first, kernel.inputs[0], kernel.dtypes);
    dtype = first.dtype();
  } else {
    require_dtype(check, out, "out", kernel.dtypes);
  }
  const uint32_t inputs = kernel.input_count();
  for (uint32_t k = 0; k < inputs; ++k) {
    const bool condition = kernel.bool_condition && k == 0;
    map.inputs[k] = driver_kit::check_elementwise_input(
        check, 1 + k, kernel.inputs[k], out, condition ? HAL_DTYPE_BOOL : dtype,
        (kernel.scalar_ok >> k) & 1);
  }
  // Unused inputs read as scalar zeros.
  for (uint32_t k = inputs; k < map.inputs.size(); ++k) {
    map.inputs[k].scalar = ScalarArg{.is_integer = true};
  }
  check_extra(check, kernel, 1 + inputs, dtype, map);
  if (out.num_elements == 0) return;
  for (ElementwiseInput& input : map.inputs) {
    if (input.tensor)
      input.tensor = read_before_write(launch, *input.tensor, out);
  }
  dispatch_map(launch, kernel.name, dtype, map);
}

template <size_t I>
void prepare_map_kernel(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args) {
  prepare_map(kMapKernels[I], launch, args, num_args);
}

template <size_t... I>
constexpr std::array<KernelDef, sizeof...(I)> make_kernel_defs(
    std::index_sequence<I...>) {
  return {KernelDef{kMapKernels[I].name, &prepare_map_kernel<I>}...};
}

constexpr auto kMapKernelDefs =
    make_kernel_defs(std::make_index_sequence<std::size(kMapKernels)>{});

}  // namespace

KernelList map_kernels() {
  static const std::vector<const KernelDef*> kKernels = [] {
    std::vector<const KernelDef*> kernels;
    kernels.reserve(std::size(kMapKernelDefs));
    for (const KernelDef& def : kMapKernelDefs) kernels.push_back(&def);
    return kernels;
  }();
  return kKernels;
}

}  // namespace vulkan
