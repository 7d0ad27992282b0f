// sgd_step and adam_step, element by element as torch's single-tensor
// loops: every tensor operation rounds to the dtype (R below; a no-op for
// f32 and f64), hyperparameter arithmetic is done on the host in double.
#include <cmath>

#include "kernels.h"

namespace pjrt_bridge {
namespace {

class Step {
 public:
  explicit Step(KernelLowering& k) : k_(k), b_(k.b()) {}

  Value Read(int arg) { return k_.Read(arg, k_.compute()); }
  // Rounds to the dtype and back.
  Value R(const Value& x) {
    const std::string storage = StorageElement(k_.dtype());
    if (storage == k_.compute()) return x;
    return b_.Convert(b_.Convert(x, storage), k_.compute());
  }
  Value C(double value) { return k_.Constant(value, k_.Sizes(0)); }

 private:
  KernelLowering& k_;
  ProgramBuilder& b_;
};

void Sgd(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  Step s(k);
  const double lr = k.Float(3), momentum = k.Float(4), dampening = k.Float(5),
               weight_decay = k.Float(6);
  const bool nesterov = k.Int(7) != 0, maximize = k.Int(8) != 0,
             first_step = k.Int(9) != 0;
  const Value param = s.Read(0);
  Value g = s.Read(1);
  if (maximize) g = b.Unary("negate", g);
  if (weight_decay != 0) g = s.R(b.Add(g, b.Mul(s.C(weight_decay), param)));
  if (momentum != 0 && k.IsTensor(2)) {
    Value buf;
    if (first_step) {
      buf = g;
    } else {
      buf = s.R(b.Add(s.R(b.Mul(s.Read(2), s.C(momentum))),
                      b.Mul(s.C(1 - dampening), g)));
    }
    k.Write(2, buf);
    g = nesterov ? s.R(b.Add(g, b.Mul(s.C(momentum), buf))) : buf;
  }
  k.Write(0, b.Add(param, b.Mul(s.C(-lr), g)));
}

void Adam(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  Step s(k);
  const double step = k.Float(5), lr = k.Float(6), beta1 = k.Float(7),
               beta2 = k.Float(8), eps = k.Float(9), weight_decay = k.Float(10);
  const bool amsgrad = k.Int(11) != 0, maximize = k.Int(12) != 0,
             decoupled = k.Int(13) != 0;
  Value param = s.Read(0);
  Value g = s.Read(1);
  if (maximize) g = b.Unary("negate", g);
  if (weight_decay != 0) {
    if (decoupled) {
      param = s.R(b.Mul(param, s.C(1 - lr * weight_decay)));
    } else {
      g = s.R(b.Add(g, b.Mul(s.C(weight_decay), param)));
    }
  }
  // torch's lerp with weight w = 1 - beta1.
  const Value avg = s.Read(2);
  const double w = 1 - beta1;
  const Value diff = b.Sub(g, avg);
  const Value exp_avg =
      s.R(std::abs(w) < 0.5 ? b.Add(avg, b.Mul(s.C(w), diff))
                            : b.Sub(g, b.Mul(diff, s.C(1 - w))));
  Value exp_avg_sq = s.R(b.Mul(s.Read(3), s.C(beta2)));
  exp_avg_sq = s.R(b.Add(exp_avg_sq, b.Mul(b.Mul(s.C(1 - beta2), g), g)));
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const double step_size = lr / bias_correction1;
  const double bc2_sqrt = std::sqrt(bias_correction2);
  Value second = exp_avg_sq;
  if (amsgrad && k.IsTensor(4)) {
    second = s.R(b.Max(s.Read(4), exp_avg_sq));
    k.Write(4, second);
  }
  const Value denom = s.R(
      b.Add(s.R(b.Div(s.R(b.Unary("sqrt", second)), s.C(bc2_sqrt))), s.C(eps)));
  k.Write(2, exp_avg);
  k.Write(3, exp_avg_sq);
  k.Write(0, b.Add(param, b.Div(b.Mul(s.C(-step_size), exp_avg), denom)));
}

constexpr KernelEntry kKernels[] = {
    {"sgd_step", Sgd},
    {"adam_step", Adam},
};

}  // namespace

std::span<const KernelEntry> OptimKernels() { return kKernels; }

}  // namespace pjrt_bridge
