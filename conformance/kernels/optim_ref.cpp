// Host references and case generators of the optimizer family
// (table/optim.json): sgd_step and adam_step.
//
// The references transcribe torch.optim's single-tensor SGD and Adam/AdamW
// as the table states them: every torch tensor operation is computed in
// double and rounded to the parameter's dtype (R below), scalar
// hyperparameter arithmetic in double. Cases come from the generic
// elementwise generator (every layout, rank 0 and 8, empty, broadcast
// gradients, one large size), with the scalar and flag arguments then made
// consistent (momentum 0 exactly when there is no buffer, amsgrad exactly
// when max_exp_avg_sq is given, nesterov only without dampening).
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

// Rounds `value` to `dtype` once, as storing a torch intermediate does.
class Rounder {
 public:
  explicit Rounder(hal_dtype dtype) : scratch_(dtype, Layout::contiguous({})) {}
  double operator()(double value) {
    scratch_.set({}, value);
    return scratch_.get({});
  }

 private:
  HostTensor scratch_;
};

void sgd_reference(std::vector<Arg>& args) {
  HostTensor& param = args[0].t();
  const HostTensor& grad = args[1].t();
  Arg& buffer = args[2];
  const double lr = args[3].scalar(), momentum = args[4].scalar();
  const double dampening = args[5].scalar(), weight_decay = args[6].scalar();
  const bool nesterov = args[7].i64 != 0, maximize = args[8].i64 != 0;
  const bool first_step = args[9].i64 != 0;
  Rounder R(param.dtype());
  for_each_index(param.sizes(), [&](std::span<const int64_t> i) {
    const double p = param.get(i);
    double g = maximize ? -grad.get(i) : grad.get(i);
    if (weight_decay != 0) g = R(g + weight_decay * p);
    if (momentum != 0) {
      double b = g;
      if (!first_step) {
        b = R(R(buffer.t().get(i) * momentum) + (1 - dampening) * g);
      }
      buffer.t().set(i, b);
      g = nesterov ? R(g + momentum * b) : b;
    }
    param.set(i, p - lr * g);
  });
}

void adam_reference(std::vector<Arg>& args) {
  HostTensor& param = args[0].t();
  const HostTensor& grad = args[1].t();
  HostTensor& exp_avg = args[2].t();
  HostTensor& exp_avg_sq = args[3].t();
  Arg& max_exp_avg_sq = args[4];
  const double step = args[5].scalar(), lr = args[6].scalar();
  const double beta1 = args[7].scalar(), beta2 = args[8].scalar();
  const double eps = args[9].scalar(), weight_decay = args[10].scalar();
  const bool amsgrad = args[11].i64 != 0, maximize = args[12].i64 != 0;
  const bool adamw = args[13].i64 != 0;
  const double step_size = lr / (1 - std::pow(beta1, step));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
  Rounder R(param.dtype());
  for_each_index(param.sizes(), [&](std::span<const int64_t> i) {
    double p = param.get(i);
    double g = maximize ? -grad.get(i) : grad.get(i);
    if (weight_decay != 0) {
      if (adamw) {
        p = R(p * (1 - lr * weight_decay));
      } else {
        g = R(g + weight_decay * p);
      }
    }
    const double m = R(exp_avg.get(i) + (1 - beta1) * (g - exp_avg.get(i)));
    const double v = R(R(exp_avg_sq.get(i) * beta2) + (1 - beta2) * g * g);
    double s = v;
    if (amsgrad) {
      const double old = max_exp_avg_sq.t().get(i);
      s = std::isnan(old) || std::isnan(v) ? NAN : std::max(old, v);
      max_exp_avg_sq.t().set(i, s);
    }
    const double denom = R(R(R(std::sqrt(s)) / bias_correction2_sqrt) + eps);
    exp_avg.set(i, m);
    exp_avg_sq.set(i, v);
    param.set(i, p - step_size * m / denom);
  });
}

// The scalar argument at `index` set to `value` (as the kind it had).
void set_scalar(Case& c, size_t index, double value) {
  Arg& arg = c.args[index];
  arg = arg.kind == Arg::Kind::kI64 ? Arg::of(static_cast<int64_t>(value))
                                    : Arg::of(value);
}

std::vector<Case> sgd_cases(CaseContext& context) {
  ElementwiseOptions options;
  options.scalars = {{"lr", {0.1, 0.01, 1.0, 0.5}},
                     {"momentum", {0.9, 0.5, 0.9, 0.0}},
                     {"dampening", {0.0, 0.1, 0.0, 0.5}},
                     {"weight_decay", {0.0, 0.01, 0.1, 0.0}},
                     {"nesterov", {0, 0, 1, 0}},
                     {"maximize", {0, 1, 0, 1}},
                     {"first_step", {0, 1, 0, 0}}};
  std::vector<Case> cases = elementwise_cases(context, options);
  for (Case& c : cases) {
    const bool has_buffer = !c.args[2].is_none();
    const double momentum = c.args[4].scalar();
    if (!has_buffer || momentum == 0) {
      // torch keeps no buffer without momentum, and needs one with it.
      if (has_buffer) c.args[2] = Arg::none();
      set_scalar(c, 4, 0.0);
      set_scalar(c, 7, 0);
      c.name += " (no momentum)";
    } else if (c.args[7].i64 != 0) {
      set_scalar(c, 5, 0.0);
      c.name += " (nesterov: dampening 0)";
    }
  }
  return cases;
}

std::vector<Case> adam_cases(CaseContext& context) {
  ElementwiseOptions options;
  options.ranges = {{"exp_avg_sq", {0, 2}}, {"max_exp_avg_sq", {0, 2}}};
  options.scalars = {{"step", {1, 7, 2, 1000}},
                     {"lr", {1e-3, 0.01, 0.1, 1e-3}},
                     {"beta1", {0.9, 0.8, 0.5, 0.0}},
                     {"beta2", {0.999, 0.9, 0.99, 0.95}},
                     {"eps", {1e-8, 1e-6, 1e-3, 1e-8}},
                     {"weight_decay", {0.0, 0.01, 0.1, 0.5}},
                     {"amsgrad", {1, 1, 1, 1}},
                     {"maximize", {0, 1, 0, 1}},
                     {"decoupled_weight_decay", {0, 0, 1, 1}}};
  std::vector<Case> cases = elementwise_cases(context, options);
  for (Case& c : cases) {
    if (c.args[4].is_none()) {
      set_scalar(c, 11, 0);
      c.name += " (amsgrad 0)";
    }
  }
  return cases;
}

const bool kSgd = register_kernel_test(
    "sgd_step",
    {.reference = sgd_reference, .cases = sgd_cases, .shape_free_args = {}});
const bool kAdam = register_kernel_test(
    "adam_step",
    {.reference = adam_reference, .cases = adam_cases, .shape_free_args = {}});

}  // namespace
}  // namespace conformance::kernels
