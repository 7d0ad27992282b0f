// sgd_step and adam_step, element by element as torch's single-tensor
// loops: every tensor operation rounds to the dtype (R below; a no-op for
// f32 and f64), hyperparameter arithmetic is done on the host in double.
#include <cmath>

#include "kernels.hpp"

namespace pjrt_bridge {
namespace {

class Step {
 public:
  explicit Step(KernelLowering& k) : k_(k), b_(k.b()) {}

  Value read(int arg) { return k_.read(arg, k_.compute()); }
  // Rounds to the dtype and back.
  Value r(const Value& x) {
    const std::string storage = storage_element(k_.dtype());
    if (storage == k_.compute()) return x;
    return b_.convert(b_.convert(x, storage), k_.compute());
  }
  Value c(double value) { return k_.constant(value, k_.sizes(0)); }

 private:
  KernelLowering& k_;
  ProgramBuilder& b_;
};

void sgd(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  Step s(k);
  const double lr = k.float_value(3), momentum = k.float_value(4),
               dampening = k.float_value(5), weight_decay = k.float_value(6);
  const bool nesterov = k.int_value(7) != 0, maximize = k.int_value(8) != 0,
             first_step = k.int_value(9) != 0;
  const Value param = s.read(0);
  Value g = s.read(1);
  if (maximize) g = b.unary("negate", g);
  if (weight_decay != 0) g = s.r(b.add(g, b.mul(s.c(weight_decay), param)));
  if (momentum != 0 && k.is_tensor(2)) {
    Value buf;
    if (first_step) {
      buf = g;
    } else {
      buf = s.r(b.add(s.r(b.mul(s.read(2), s.c(momentum))),
                      b.mul(s.c(1 - dampening), g)));
    }
    k.write(2, buf);
    g = nesterov ? s.r(b.add(g, b.mul(s.c(momentum), buf))) : buf;
  }
  k.write(0, b.add(param, b.mul(s.c(-lr), g)));
}

void adam(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  Step s(k);
  const double step = k.float_value(5), lr = k.float_value(6),
               beta1 = k.float_value(7), beta2 = k.float_value(8),
               eps = k.float_value(9), weight_decay = k.float_value(10);
  const bool amsgrad = k.int_value(11) != 0, maximize = k.int_value(12) != 0,
             decoupled = k.int_value(13) != 0;
  Value param = s.read(0);
  Value g = s.read(1);
  if (maximize) g = b.unary("negate", g);
  if (weight_decay != 0) {
    if (decoupled) {
      param = s.r(b.mul(param, s.c(1 - lr * weight_decay)));
    } else {
      g = s.r(b.add(g, b.mul(s.c(weight_decay), param)));
    }
  }
  // torch's lerp with weight w = 1 - beta1.
  const Value avg = s.read(2);
  const double w = 1 - beta1;
  const Value diff = b.sub(g, avg);
  const Value exp_avg =
      s.r(std::abs(w) < 0.5 ? b.add(avg, b.mul(s.c(w), diff))
                            : b.sub(g, b.mul(diff, s.c(1 - w))));
  Value exp_avg_sq = s.r(b.mul(s.read(3), s.c(beta2)));
  exp_avg_sq = s.r(b.add(exp_avg_sq, b.mul(b.mul(s.c(1 - beta2), g), g)));
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const double step_size = lr / bias_correction1;
  const double bc2_sqrt = std::sqrt(bias_correction2);
  Value second = exp_avg_sq;
  if (amsgrad && k.is_tensor(4)) {
    second = s.r(b.max(s.read(4), exp_avg_sq));
    k.write(4, second);
  }
  const Value denom = s.r(
      b.add(s.r(b.div(s.r(b.unary("sqrt", second)), s.c(bc2_sqrt))), s.c(eps)));
  k.write(2, exp_avg);
  k.write(3, exp_avg_sq);
  k.write(0, b.add(param, b.div(b.mul(s.c(-step_size), exp_avg), denom)));
}

constexpr KernelEntry kKernels[] = {
    {"sgd_step", sgd},
    {"adam_step", adam},
};

}  // namespace

std::span<const KernelEntry> optim_kernels() { return kKernels; }

}  // namespace pjrt_bridge
