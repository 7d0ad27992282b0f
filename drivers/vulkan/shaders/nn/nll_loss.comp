// nll_loss and nll_loss_backward (table/nn.json), in the compute type.
// `scores` is in (forward) or grad_in (backward), [N, C] or [C] (one sample,
// target rank 0). Passes, chosen by PASS_<NAME>:
//   CHECK  one invocation: finds the first target outside [0, C) that is not
//          ignore_index and records it in `status` (int64 {sample + 1,
//          target}; zero when all are valid) for the host to report.
//   LOSS   one invocation: the losses and total weight, summed in increasing
//          sample order; per-sample losses for reduction none of [N, C].
//   GRAD   one invocation per element of grad_in: 0, or -w[t] * g (/ total
//          weight for mean) at each kept sample's target.
// LOSS and GRAD write nothing when CHECK found a bad target.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor scores;
  Tensor target;
  Tensor weight;        // rank -1 when absent
  Tensor loss;          // LOSS: out; GRAD: grad_out
  Tensor total_weight;  // rank 0
  uint64_t status;      // int64[2], see above
  uint64_t count;       // GRAD: elements of grad_in; else 1
  int64_t reduction;    // 0 none, 1 mean, 2 sum
  int64_t ignore_index;
};

const int64_t kMean = 1;

int64_t samples(Tensor scores) {
  return scores.rank == 2 ? scores.sizes[0] : 1;
}

int64_t classes(Tensor scores) {
  return scores.sizes[scores.rank - 1];
}

int64_t score_offset(Tensor scores, int64_t i, int64_t c) {
  return scores.rank == 2 ? i * scores.strides[0] + c * scores.strides[1]
                          : c * scores.strides[0];
}

CT class_weight(Tensor weight, int64_t c) {
  return weight.rank >= 0 ? load_t(weight, c * weight.strides[0]) : CT(1);
}

void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) {
    return;
  }
  const Tensor scores = args.scores;
  const Tensor target = args.target;
  const int64_t n = samples(scores);
#if defined(PASS_CHECK)
  int64_t bad_sample = 0, bad_target = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = load_i64(target, element_offset(target, i));
    if (bad_sample == 0 && t != args.ignore_index &&
        (t < 0 || t >= classes(scores))) {
      bad_sample = i + 1;
      bad_target = t;
    }
  }
  STORE_int64_t(args.status, bad_sample);
  STORE_int64_t(args.status + 8ul, bad_target);
#else
  if (LOAD_int64_t(args.status) != 0) {
    return;
  }
  const bool per_sample = args.reduction == 0 && scores.rank == 2;
#if defined(PASS_LOSS)
  const Tensor loss = args.loss;
  CT loss_sum = CT(0), weight_sum = CT(0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = load_i64(target, element_offset(target, i));
    CT l = CT(0);
    if (t != args.ignore_index) {
      const CT w = class_weight(args.weight, t);
      l = -w * load_t(scores, score_offset(scores, i, t));
      weight_sum += w;
    }
    if (per_sample) {
      store_t(loss, element_offset(loss, i), l);
    }
    loss_sum += l;
  }
  if (per_sample) {
    store_t(args.total_weight, 0, CT(0));
  } else {
    // Mean of nothing is 0 / 0 = NaN, as in torch.
    store_t(loss, 0, args.reduction == kMean ? loss_sum / weight_sum : loss_sum);
    store_t(args.total_weight, 0, weight_sum);
  }
#else  // PASS_GRAD
  const int64_t c_count = classes(scores);
  const int64_t i = scores.rank == 2 ? id / c_count : 0;
  const int64_t c = scores.rank == 2 ? id % c_count : id;
  const int64_t t = load_i64(target, element_offset(target, i));
  CT grad = CT(0);
  if (t != args.ignore_index && c == t) {
    const Tensor loss = args.loss;
    const CT g = load_t(loss, per_sample ? element_offset(loss, i) : 0);
    const CT total = load_t(args.total_weight, 0);
    grad = class_weight(args.weight, t) * -(args.reduction == kMean ? g / total : g);
  }
  store_t(scores, score_offset(scores, i, c), grad);
#endif
#endif
}
