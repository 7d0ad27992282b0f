// The elementwise kernels of table/elementwise.json (all but fill and copy,
// copy.cpp) on Vulkan: unary, unary backward, binary, comparisons, logical
// and bitwise ops, where, clamp, addcmul, addcdiv and lerp. Every one is the
// same map, out[i] = f(in0[i], in1[i], in2[i]) in shaders/elementwise/
// map.comp, so a kernel here is a row of kMapKernels: its dtypes, inputs and
// extra argument, validated as cpu_ref validates them (kit/
// elementwise_checks.h).
#include "kernels/elementwise.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "kit/dtype.h"
#include "kit/elementwise_checks.h"
#include "kit/error.h"

namespace vulkan {

using driver_kit::ArgChecker;
using driver_kit::ElementwiseInput;
using driver_kit::Fail;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

std::string Variant(std::string_view kernel, int32_t dtype) {
  return fmt::format("{}_{}", kernel, driver_kit::DtypeName(dtype));
}

void PackScalar(ArgBlock& block, int32_t dtype, const ScalarArg& scalar) {
  switch (dtype) {
    case HAL_DTYPE_F32:
    case HAL_DTYPE_F16:
      block.F32(scalar.As<float>());
      return;
    case HAL_DTYPE_F64:
      block.F64(scalar.As<double>());
      return;
    default:
      block.I64(scalar.As<int64_t>());
      return;
  }
}

bool SameView(const TensorArg& a, const TensorArg& b) {
  if (a.tensor.data != b.tensor.data || a.rank() != b.rank() ||
      a.element_size != b.element_size) {
    return false;
  }
  for (int d = 0; d < a.rank(); ++d) {
    if (a.tensor.sizes[d] > 1 && a.tensor.strides[d] != b.tensor.strides[d]) {
      return false;
    }
  }
  return true;
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

void DispatchMap(KernelLaunch& launch, std::string_view kernel, int32_t dtype,
                 const MapArgs& map) {
  ArgBlock block;
  block.Tensor(map.dest);
  int64_t scalar_inputs = 0;
  for (size_t k = 0; k < map.inputs.size(); ++k) {
    const ElementwiseInput& input = map.inputs[k];
    block.Tensor(input.tensor ? *input.tensor : TensorArg{});
    if (!input.tensor) scalar_inputs |= int64_t{1} << k;
  }
  for (const ElementwiseInput& input : map.inputs) {
    PackScalar(block, dtype, input.scalar);
  }
  for (const ScalarArg& param : map.params) {
    PackScalar(block, dtype, param);
  }
  block.I64(scalar_inputs);
  block.I64(map.mode);
  block.U64(static_cast<uint64_t>(map.dest.num_elements));
  launch.Dispatch(Variant(kernel, dtype),
                  static_cast<uint64_t>(map.dest.num_elements), block);
}

}  // namespace

TensorArg StageInput(KernelLaunch& launch, const TensorArg& tensor) {
  TensorArg staged = tensor;
  const uint64_t bytes =
      static_cast<uint64_t>(tensor.num_elements * tensor.element_size);
  staged.tensor.data = launch.Scratch(bytes);
  int64_t stride = 1;
  for (int d = tensor.rank() - 1; d >= 0; --d) {
    staged.tensor.strides[d] = stride;
    stride *= tensor.tensor.sizes[d];
  }
  staged.first_byte = staged.tensor.data;
  staged.end_byte = staged.tensor.data + bytes;
  MapArgs map{.dest = staged};
  map.inputs[0].tensor = tensor;
  DispatchMap(launch, "stage", tensor.dtype(), map);
  return staged;
}

TensorArg ReadBeforeWrite(KernelLaunch& launch, const TensorArg& tensor,
                          const TensorArg& written) {
  if (!tensor.Overlaps(written) || SameView(tensor, written)) return tensor;
  return StageInput(launch, tensor);
}

namespace {

using driver_kit::kAllDtypes;
using driver_kit::kFloatDtypes;
using driver_kit::kIntegerDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::RequireDtype;
using driver_kit::RequireIntegralScalar;

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

constexpr MapKernel Unary(const char* name, uint32_t dtypes) {
  return {.name = name, .dtypes = dtypes, .inputs = {"in"}};
}
constexpr MapKernel Backward(const char* name, const char* saved,
                             uint32_t dtypes = kFloatDtypes,
                             Extra extra = Extra::kNone) {
  return {.name = name,
          .dtypes = dtypes,
          .inputs = {"grad_out", saved},
          .extra = extra};
}
constexpr MapKernel Binary(const char* name, uint32_t dtypes,
                           Extra extra = Extra::kNone) {
  return {.name = name,
          .dtypes = dtypes,
          .inputs = {"a", "b"},
          .scalar_ok = 0b10,
          .extra = extra};
}
constexpr MapKernel BoolBinary(const char* name) {
  return {.name = name,
          .dtypes = kAllDtypes,
          .inputs = {"a", "b"},
          .scalar_ok = 0b10,
          .bool_out = true};
}

constexpr MapKernel kMapKernels[] = {
    Unary("neg", kNumericDtypes),
    Unary("abs", kNumericDtypes),
    Unary("exp", kFloatDtypes),
    Unary("log", kFloatDtypes),
    Unary("log1p", kFloatDtypes),
    Unary("expm1", kFloatDtypes),
    Unary("sqrt", kFloatDtypes),
    Unary("rsqrt", kFloatDtypes),
    Unary("sin", kFloatDtypes),
    Unary("cos", kFloatDtypes),
    Unary("tanh", kFloatDtypes),
    Unary("sigmoid", kFloatDtypes),
    Unary("relu", kNumericDtypes),
    {.name = "gelu",
     .dtypes = kFloatDtypes,
     .inputs = {"in"},
     .extra = Extra::kApproximate},
    Unary("silu", kFloatDtypes),
    Unary("erf", kFloatDtypes),
    Unary("reciprocal", kFloatDtypes),
    Unary("sign", kNumericDtypes),
    Unary("floor", kNumericDtypes),
    Unary("ceil", kNumericDtypes),
    Unary("round", kNumericDtypes),
    Unary("trunc", kNumericDtypes),
    {.name = "logical_not",
     .dtypes = kAllDtypes,
     .inputs = {"in"},
     .bool_out = true},
    Backward("threshold_backward", "self", kNumericDtypes, Extra::kThreshold),
    Backward("sigmoid_backward", "y"),
    Backward("tanh_backward", "y"),
    Backward("gelu_backward", "x", kFloatDtypes, Extra::kApproximate),
    Backward("silu_backward", "x"),
    Binary("add", kNumericDtypes, Extra::kAlpha),
    Binary("sub", kNumericDtypes, Extra::kAlpha),
    Binary("mul", kAllDtypes),
    Binary("div", kNumericDtypes, Extra::kRoundingMode),
    Binary("pow", kFloatDtypes),
    Binary("maximum", kAllDtypes),
    Binary("minimum", kAllDtypes),
    BoolBinary("eq"),
    BoolBinary("ne"),
    BoolBinary("lt"),
    BoolBinary("le"),
    BoolBinary("gt"),
    BoolBinary("ge"),
    BoolBinary("logical_and"),
    BoolBinary("logical_or"),
    BoolBinary("logical_xor"),
    Binary("bitwise_and", kBitwiseDtypes),
    Binary("bitwise_or", kBitwiseDtypes),
    Binary("bitwise_xor", kBitwiseDtypes),
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
int64_t Choice(const ArgChecker& check, uint32_t index, const char* name,
               int64_t count, const char* meaning) {
  const int64_t value = check.Int(index, name);
  if (value < 0 || value >= count) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {}; {} are defined",
         check.kernel(), name, value, meaning);
  }
  return value;
}

// Validates the extra argument at `index` into map.params / map.mode.
void CheckExtra(const ArgChecker& check, const MapKernel& kernel,
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
      map.params[0] = check.Scalar(index, name);
      RequireIntegralScalar(check, map.params[0], name, dtype);
      return;
    }
    case Extra::kRoundingMode:
      map.mode = Choice(check, index, "rounding_mode", 3,
                        "0 (none), 1 (trunc) and 2 (floor)");
      if (map.mode == 0 && !driver_kit::IsFloatingDtype(dtype)) {
        Fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: integer division needs rounding_mode 1 (trunc) or 2 "
             "(floor)",
             check.kernel());
      }
      return;
    case Extra::kApproximate:
      map.mode = Choice(check, index, "approximate", 2, "0 (erf) and 1 (tanh)");
      return;
    case Extra::kBounds: {
      constexpr const char* kNames[2] = {"min", "max"};
      for (uint32_t b = 0; b < 2; ++b) {
        if (check.Kind(index + b) == HAL_ARG_NONE) continue;
        map.params[b] = check.Scalar(index + b, kNames[b]);
        RequireIntegralScalar(check, map.params[b], kNames[b], dtype);
        map.mode |= int64_t{1} << b;
      }
      return;
    }
  }
}

void PrepareMap(const MapKernel& kernel, KernelLaunch& launch,
                const hal_arg* args, uint32_t num_args) {
  ArgChecker check(kernel.name, launch.memory(), args, num_args,
                   kernel.arg_count());
  MapArgs map{.dest = check.Tensor(0, "out")};
  const TensorArg& out = map.dest;
  int32_t dtype = out.dtype();
  if (kernel.bool_out) {
    if (out.dtype() != HAL_DTYPE_BOOL) check.Unsupported(out, "out", "bool");
    const TensorArg first = check.Tensor(1, kernel.inputs[0]);
    RequireDtype(check, first, kernel.inputs[0], kernel.dtypes);
    dtype = first.dtype();
  } else {
    RequireDtype(check, out, "out", kernel.dtypes);
  }
  const uint32_t inputs = kernel.input_count();
  for (uint32_t k = 0; k < inputs; ++k) {
    const bool condition = kernel.bool_condition && k == 0;
    map.inputs[k] = driver_kit::CheckElementwiseInput(
        check, 1 + k, kernel.inputs[k], out, condition ? HAL_DTYPE_BOOL : dtype,
        (kernel.scalar_ok >> k) & 1);
  }
  // Unused inputs read as scalar zeros.
  for (uint32_t k = inputs; k < map.inputs.size(); ++k) {
    map.inputs[k].scalar = ScalarArg{.is_integer = true};
  }
  CheckExtra(check, kernel, 1 + inputs, dtype, map);
  if (out.num_elements == 0) return;
  for (ElementwiseInput& input : map.inputs) {
    if (input.tensor)
      input.tensor = ReadBeforeWrite(launch, *input.tensor, out);
  }
  DispatchMap(launch, kernel.name, dtype, map);
}

template <size_t I>
void PrepareMapKernel(KernelLaunch& launch, const hal_arg* args,
                      uint32_t num_args) {
  PrepareMap(kMapKernels[I], launch, args, num_args);
}

template <size_t... I>
constexpr std::array<KernelDef, sizeof...(I)> MakeKernelDefs(
    std::index_sequence<I...>) {
  return {KernelDef{kMapKernels[I].name, &PrepareMapKernel<I>}...};
}

constexpr auto kMapKernelDefs =
    MakeKernelDefs(std::make_index_sequence<std::size(kMapKernels)>{});

}  // namespace

KernelList MapKernels() {
  static const std::vector<const KernelDef*> kKernels = [] {
    std::vector<const KernelDef*> kernels;
    for (const KernelDef& def : kMapKernelDefs) kernels.push_back(&def);
    return kernels;
  }();
  return kKernels;
}

}  // namespace vulkan
