// sgd_step and adam_step (table/optim.json): torch.optim's single-tensor
// SGD and Adam/AdamW, one invocation per element. Each torch tensor
// operation is one step in the compute type rounded to the dtype (rnd), as
// torch rounds every intermediate tensor; the host folds the scalar
// hyperparameter arithmetic (in double, like Python) into `constants`.
//
// Variants: OP_SGD_STEP or OP_ADAM_STEP with DT_<NAME> (floating dtypes).
#version 460
#include "common.glsl"

// One 8-byte slot in the compute type.
struct Scalar {
  CT v;
#if defined(DT_F32) || defined(DT_F16)
  uint pad;
#endif
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor param;
  Tensor grad;
  Tensor state0;  // sgd: momentum_buffer; adam: exp_avg
  Tensor state1;  // adam: exp_avg_sq
  Tensor state2;  // adam: max_exp_avg_sq
  Scalar constants[8];  // see the kernels below (kernels/optim.cpp packs them)
  int64_t flags;
  uint64_t count;
};

const int64_t kMaximize = 1;
const int64_t kWeightDecay = 2;    // weight_decay != 0
const int64_t kSgdMomentum = 4;    // sgd: a momentum buffer is given
const int64_t kSgdFirstStep = 8;   // sgd: the buffer starts as the gradient
const int64_t kSgdNesterov = 16;
const int64_t kAdamDecoupled = 4;  // adam: AdamW's decoupled weight decay
const int64_t kAdamAmsgrad = 8;

// The value of one torch tensor operation: rounded to the dtype.
CT rnd(CT x) { return CT(ST(x)); }

void main() {
  const int64_t i = global_id();
  Args args = Args(push.args);
  if (uint64_t(i) >= args.count) return;
  const int64_t flags = args.flags;
  const int64_t param_at = element_offset(args.param, i);
  CT param = load_t(args.param, param_at);
  CT grad = load_t(args.grad, element_offset(args.grad, i));
  if ((flags & kMaximize) != 0) grad = -grad;

#if defined(OP_SGD_STEP)
  const CT weight_decay = args.constants[0].v;
  const CT momentum = args.constants[1].v;
  const CT one_minus_dampening = args.constants[2].v;
  const CT minus_lr = args.constants[3].v;
  if ((flags & kWeightDecay) != 0) grad = rnd(grad + weight_decay * param);
  if ((flags & kSgdMomentum) != 0) {
    const int64_t velocity_at = element_offset(args.state0, i);
    CT velocity = grad;
    if ((flags & kSgdFirstStep) == 0) {
      velocity = rnd(load_t(args.state0, velocity_at) * momentum);
      velocity = rnd(velocity + one_minus_dampening * grad);
    }
    store_t(args.state0, velocity_at, velocity);
    grad = (flags & kSgdNesterov) != 0 ? rnd(grad + momentum * velocity) : velocity;
  }
  store_t(args.param, param_at, param + minus_lr * grad);

#elif defined(OP_ADAM_STEP)
  const CT minus_step_size = args.constants[0].v;
  const CT bias_correction2_sqrt = args.constants[1].v;
  const CT decay_factor = args.constants[2].v;
  const CT weight_decay = args.constants[3].v;
  const CT one_minus_beta1 = args.constants[4].v;
  const CT beta2 = args.constants[5].v;
  const CT one_minus_beta2 = args.constants[6].v;
  const CT eps = args.constants[7].v;
  if ((flags & kWeightDecay) != 0) {
    if ((flags & kAdamDecoupled) != 0) {
      param = rnd(param * decay_factor);
    } else {
      grad = rnd(grad + weight_decay * param);
    }
  }
  // exp_avg.lerp_(grad, 1 - beta1), torch's two-sided lerp.
  const int64_t exp_avg_at = element_offset(args.state0, i);
  const CT old_avg = load_t(args.state0, exp_avg_at);
  const CT diff = grad - old_avg;
  const CT exp_avg = rnd(abs(one_minus_beta1) < CT(0.5LF)
                             ? old_avg + one_minus_beta1 * diff
                             : grad - diff * (CT(1) - one_minus_beta1));
  const int64_t exp_avg_sq_at = element_offset(args.state1, i);
  CT exp_avg_sq = rnd(load_t(args.state1, exp_avg_sq_at) * beta2);
  exp_avg_sq = rnd(exp_avg_sq + one_minus_beta2 * grad * grad);
  CT second_moment = exp_avg_sq;
  if ((flags & kAdamAmsgrad) != 0) {
    const int64_t max_at = element_offset(args.state2, i);
    const CT old_max = load_t(args.state2, max_at);
    second_moment = isnan(old_max) || old_max > exp_avg_sq ? old_max : exp_avg_sq;
    store_t(args.state2, max_at, second_moment);
  }
  CT denom = rnd(sqrt(second_moment));
  denom = rnd(denom / bias_correction2_sqrt);
  denom = rnd(denom + eps);
  store_t(args.state0, exp_avg_at, exp_avg);
  store_t(args.state1, exp_avg_sq_at, exp_avg_sq);
  store_t(args.param, param_at, param + minus_step_size * exp_avg / denom);
#else
#error "optim.comp: no OP_<KERNEL> defined"
#endif
}
