// Random numbers on hal: uniform_, random_ with bounds (randint), normal_
// (and normal with a tensor mean or std), bernoulli with a scalar or tensor p,
// and training-mode dropout (native_dropout and its backward). Each draw
// reserves ceil(n / 4) Philox blocks from the generator (runtime/generator.hpp)
// and launches one counter-based kernel, so a seed gives the same numbers on
// every driver. rand, randn, their _like forms, normal(mean, std, size) and the
// functional bernoulli are torch composites of these (empty + the in-place op).
#include "aten/native/random.hpp"

#include <ATen/ExpandUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/random.h>
#include <torch/library.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"
#include "runtime/context.hpp"
#include "runtime/generator.hpp"

namespace torch_hal::native {
namespace {

// Launches random kernel `name` filling `out`, with `params` after the seed
// and offset; out's numbers are reserved from `gen` (or the device's default
// generator).
void draw(const at::Tensor& out, KernelName name, const Generator& gen,
          std::initializer_list<hal_arg> params) {
  if (out.numel() == 0) return;
  // A graph would replay the seed and offset of capture time: the same
  // numbers at every launch.
  TORCH_CHECK(!is_capturing(out.device().index()),
              "random numbers cannot be captured into a hal graph (every "
              "replay would draw the same ones); keep ",
              name, " outside the captured region");
  const auto [seed, offset] =
      reserve_random(gen, out.device().index(), out.numel());
  std::vector<hal_arg> args = {tensor_arg(out),
                               int_arg(static_cast<int64_t>(seed)),
                               int_arg(static_cast<int64_t>(offset))};
  args.insert(args.end(), params);
  launch(out, name, args);
}

void check_floating(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), op,
                              " is not implemented for ", self.scalar_type());
}

// A tensor argument on `out`'s device with out's dtype and sizes (a CPU
// tensor is moved, a broadcast one expanded with stride 0).
at::Tensor operand_like(const at::Tensor& t, const at::Tensor& out) {
  return t.to(out.device(), out.scalar_type()).expand(out.sizes());
}

}  // namespace

at::Tensor& uniform(at::Tensor& self, double from, double to, Generator gen) {
  check_floating(self, "uniform_");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, ",
              "but found from=", from, " > to=", to);
  TORCH_CHECK(std::isfinite(from) && std::isfinite(to - from),
              "uniform_ expects a finite range, but found from=", from,
              " to=", to);
  draw(self, "uniform", gen, {float_arg(from), float_arg(to)});
  return self;
}

namespace {

// The range of values `type` holds exactly, for random_'s bounds: an
// integer type's own, 2^digits either side for a floating one.
std::pair<int64_t, int64_t> exact_range(at::ScalarType type) {
  switch (type) {
    case at::kBool:
      return {0, 1};
    case at::kByte:
      return {0, 255};
    case at::kChar:
      return {-128, 127};
    case at::kShort:
      return {-32768, 32767};
    case at::kInt:
      return {std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int32_t>::max()};
    case at::kHalf:
      return {-(int64_t{1} << 11), int64_t{1} << 11};
    case at::kBFloat16:
      return {-(int64_t{1} << 8), int64_t{1} << 8};
    case at::kFloat:
      return {-(int64_t{1} << 24), int64_t{1} << 24};
    case at::kDouble:
      return {-(int64_t{1} << 53), int64_t{1} << 53};
    default:
      return {std::numeric_limits<int64_t>::min(),
              std::numeric_limits<int64_t>::max()};
  }
}

}  // namespace

// random_(from, to): integers uniform in [from, to), from + floor(U * range)
// of the uniform kernel's 24-bit unit value U, computed in double, where it
// is exact: each of the `range` values is drawn from floor or ceil of
// 2^24 / range of U's equally likely values (a bias below range / 2^24, like
// CPU's modulo bias). Wider ranges, bounds a double does not hold exactly,
// floating dtypes asked for more than their mantissa, a device without f64
// and random_ without `to` go to the CPU fallback.
at::Tensor& random_from_to(at::Tensor& self, int64_t from,
                           std::optional<int64_t> to, Generator gen) {
  const at::ScalarType type = self.scalar_type();
  const auto [lowest, highest] = exact_range(type);
  if (to.has_value() && at::isIntegralType(type, /*includeBool=*/true)) {
    TORCH_CHECK(from < *to,
                "random_ expects 'from' to be less than 'to', but got from=",
                from, " >= to=", *to);
    TORCH_CHECK(from >= lowest && from <= highest, "from is out of bounds for ",
                type);
    TORCH_CHECK(*to - 1 >= lowest && *to - 1 <= highest,
                "to - 1 is out of bounds for ", type);
  }
  constexpr int64_t kUnitValues = int64_t{1} << 24;
  constexpr int64_t kExactInDouble = int64_t{1} << 53;
  const auto in_double = [&](int64_t v) {
    return v >= -kExactInDouble && v <= kExactInDouble;
  };
  if (!to.has_value() || !in_double(from) || !in_double(*to) || from >= *to ||
      *to - from > kUnitValues || from < lowest || *to - 1 > highest ||
      !device_supports(self.device().index(), at::kDouble)) {
    return at::native::call_fallback_fn<&fall_back_to_cpu,
                                        at::_ops::random__from>::call(self,
                                                                      from, to,
                                                                      gen);
  }
  if (self.numel() == 0) return self;
  const double range = static_cast<double>(*to - from);
  at::Tensor u = empty_like_device(self, self.sizes(), at::kDouble);
  draw(u, "uniform", gen, {float_arg(0.0), float_arg(1.0)});
  u.mul_(range).floor_().add_(static_cast<double>(from));
  self.copy_(u);
  return self;
}

at::Tensor& random_to(at::Tensor& self, int64_t to, Generator gen) {
  return random_from_to(self, 0, to, std::move(gen));
}

at::Tensor& normal(at::Tensor& self, double mean, double std, Generator gen) {
  check_floating(self, "normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  TORCH_CHECK(std::isfinite(mean) && std::isfinite(std),
              "normal expects a finite mean and std, but found mean=", mean,
              " std=", std);
  draw(self, "normal", gen, {float_arg(mean), float_arg(std)});
  return self;
}

namespace {

// torch checks a std tensor on the host (normal's std.min() >= 0), so this
// waits for the device once.
void check_std_nonnegative(const at::Tensor& std) {
  if (std.numel() == 0) return;
  at::Tensor lowest;
  if (std.is_cpu()) {
    lowest = std.min();
  } else {
    lowest = empty_like_device(std, std::vector<int64_t>(std.dim(), 1),
                               std.scalar_type());
    launch(lowest, "amin", {tensor_arg(lowest), tensor_arg(std)});
  }
  TORCH_CHECK(lowest.item<double>() >= 0.0,
              "normal expects all elements of std >= 0.0");
}

// normal() with a tensor mean, std or both: out = N(0, 1) * std + mean in
// torch's order, shaped as mean and std broadcast together. A number stands
// in for an undefined tensor.
at::Tensor& normal_tensors_out(const at::Tensor& mean, double mean_value,
                               const at::Tensor& std, double std_value,
                               const Generator& gen, at::Tensor& out) {
  std::vector<int64_t> shape;
  if (std.defined()) {
    check_std_nonnegative(std);
    shape = std.sizes().vec();
  } else {
    TORCH_CHECK(std_value >= 0.0, "normal expects std >= 0.0, but found std ",
                std_value);
  }
  if (mean.defined()) {
    shape = std.defined() ? at::infer_size(mean.sizes(), std.sizes())
                          : mean.sizes().vec();
  }
  return write_out(
      out, shape, out.scalar_type(), [&](const at::Tensor& result) {
        check_floating(result, "normal");
        draw(result, "normal", gen,
             {float_arg(0.0), float_arg(std.defined() ? 1.0 : std_value)});
        if (result.numel() == 0) return;
        if (std.defined()) {
          const at::Tensor scale = operand_like(std, result);
          launch(result, "mul",
                 {tensor_arg(result), tensor_arg(result), tensor_arg(scale)});
        }
        const at::Tensor shift =
            mean.defined() ? operand_like(mean, result) : at::Tensor();
        launch(result, "add",
               {tensor_arg(result), tensor_arg(result),
                shift.defined() ? tensor_arg(shift) : float_arg(mean_value),
                int_arg(1)});
      });
}

}  // namespace

at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std,
                                    Generator gen, at::Tensor& out) {
  return normal_tensors_out(mean, 0.0, at::Tensor(), std, gen, out);
}

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std,
                                    Generator gen, at::Tensor& out) {
  return normal_tensors_out(at::Tensor(), mean, std, 1.0, gen, out);
}

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean,
                                     const at::Tensor& std, Generator gen,
                                     at::Tensor& out) {
  return normal_tensors_out(mean, 0.0, std, 1.0, gen, out);
}

// The functional forms: the result has mean's dtype, or std's when mean is a
// number (torch's rule).
at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               Generator gen) {
  at::Tensor out = at::empty({0}, mean.options());
  return normal_tensor_float_out(mean, std, std::move(gen), out);
}

at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               Generator gen) {
  at::Tensor out = at::empty({0}, std.options());
  return normal_float_tensor_out(mean, std, std::move(gen), out);
}

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                Generator gen) {
  at::Tensor out = at::empty(
      {0}, mean.options().device(mean.is_cpu() ? std.device() : mean.device()));
  return normal_tensor_tensor_out(mean, std, std::move(gen), out);
}

namespace {

// Writes 1 with probability p, else 0, into `self`; `p` is a scalar argument
// or a tensor of self's sizes. The kernel writes floating and bool tensors;
// other dtypes receive a bool draw converted.
void bernoulli_into(const at::Tensor& self, hal_arg p, const Generator& gen) {
  const at::ScalarType type = self.scalar_type();
  const bool direct = at::isFloatingType(type) || type == at::kBool;
  const at::Tensor target =
      direct ? self : empty_like_device(self, self.sizes(), at::kBool);
  draw(target, "bernoulli", gen, {p});
  if (!direct && self.numel() > 0) {
    launch(self, "copy", {tensor_arg(self), tensor_arg(target)});
  }
}

}  // namespace

at::Tensor& bernoulli_scalar(at::Tensor& self, double p, Generator gen) {
  TORCH_CHECK(0.0 <= p && p <= 1.0,
              "bernoulli_ expects p to be in [0, 1], but got p=", p);
  bernoulli_into(self, float_arg(p), gen);
  return self;
}

at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p,
                             Generator gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(p.scalar_type()),
                              "bernoulli_ expects a floating-point p, got ",
                              p.scalar_type());
  if (p.is_cpu() && p.dim() == 0) {
    return bernoulli_scalar(self, p.item<double>(), std::move(gen));
  }
  const at::Tensor probabilities = p.to(self.device()).expand(self.sizes());
  bernoulli_into(self, tensor_arg(probabilities), gen);
  return self;
}

// bernoulli(self, out=): self holds the probabilities.
at::Tensor& bernoulli_out(const at::Tensor& self, Generator gen,
                          at::Tensor& out) {
  return write_out(out, self.sizes(), out.scalar_type(),
                   [&](const at::Tensor& result) {
                     at::Tensor target = result;
                     bernoulli_tensor(target, self, gen);
                   });
}

// Dropout in training: mask ~ bernoulli(1 - p), out = input * mask * scale
// with scale = 1 / (1 - p) (0 when p = 1), as torch computes it; the mask is
// returned as bool. Outside training the input passes through unmasked.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input,
                                                  double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(0.0 <= p && p <= 1.0,
              "dropout probability has to be between 0 and 1, but got ", p);
  check_floating(input, "native_dropout");
  at::Tensor out = empty_like_device(input, input.sizes(), input.scalar_type());
  at::Tensor mask = empty_like_device(input, input.sizes(), at::kBool);
  if (input.numel() == 0) return {out, mask};
  if (!train.value_or(true)) {
    launch(out, "copy", {tensor_arg(out), tensor_arg(input)});
    launch(mask, "fill", {tensor_arg(mask), int_arg(1)});
    return {out, mask};
  }
  const double keep = 1.0 - p;
  const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
  // Drawn in the input's dtype so that input * mask rounds as torch's does
  // (NaN * 0 stays NaN).
  const at::Tensor kept =
      empty_like_device(input, input.sizes(), input.scalar_type());
  draw(kept, "bernoulli", std::nullopt, {float_arg(keep)});
  launch(out, "mul", {tensor_arg(out), tensor_arg(input), tensor_arg(kept)});
  launch(out, "mul", {tensor_arg(out), tensor_arg(out), float_arg(scale)});
  launch(mask, "copy", {tensor_arg(mask), tensor_arg(kept)});
  return {out, mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad_output,
                                   const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "Mask should be Bool Scalar Type", mask.scalar_type());
  check_floating(grad_output, "native_dropout_backward");
  const std::vector<int64_t> shape =
      at::infer_size(grad_output.sizes(), mask.sizes());
  at::Tensor grad_input =
      empty_like_device(grad_output, shape, grad_output.scalar_type());
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor kept = operand_like(mask, grad_input);
  launch(grad_input, "mul",
         {tensor_arg(grad_input), tensor_arg(grad_output.expand(shape)),
          tensor_arg(kept)});
  launch(grad_input, "mul",
         {tensor_arg(grad_input), tensor_arg(grad_input), float_arg(scale)});
  return grad_input;
}

}  // namespace torch_hal::native
