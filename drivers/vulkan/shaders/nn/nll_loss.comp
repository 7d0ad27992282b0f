// nll_loss and nll_loss_backward (table/nn.json), in the compute type.
// `scores` is in (forward) or grad_in (backward), [N, C] or [C] (one sample,
// target rank 0). Passes, chosen by PASS_<NAME>; CHECK and LOSS cut the
// samples into `parts` chunks of `chunk` (lavapipe's loop limit,
// common.glsl), `stage` 0 folding one chunk per invocation into a 16-byte
// record and stage 1 (one invocation) combining the records in order:
//   CHECK  finds the first target outside [0, C) that is not ignore_index
//          and records it in `status` (int64 {sample + 1, target}; zero
//          when all are valid) for the host to report. With one chunk the
//          host points `records` at `status` and skips stage 1.
//   LOSS   the losses and total weight, summed in increasing sample order;
//          per-sample losses for reduction none of [N, C] (stage 0).
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
  uint64_t records;     // CHECK, LOSS: 16 bytes per chunk
  uint64_t count;       // invocations of this pass
  int64_t stage;        // CHECK, LOSS: 0 per chunk, 1 combine
  int64_t chunk;        // samples per record
  int64_t parts;        // records
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
#if !defined(PASS_GRAD)
  // Stage 0: this invocation's chunk of samples.
  const int64_t first = id * args.chunk;
  const int64_t end = min(n, first + args.chunk);
  const uint64_t record = args.records + uint64_t(id) * 16ul;
#endif
#if defined(PASS_CHECK)
  int64_t bad_sample = 0, bad_target = 0;
  if (args.stage == 0) {
    for (int64_t i = first; i < end && bad_sample == 0; ++i) {
      const int64_t t = load_i64(target, element_offset(target, i));
      if (t != args.ignore_index && (t < 0 || t >= classes(scores))) {
        bad_sample = i + 1;
        bad_target = t;
      }
    }
    STORE_int64_t(record, bad_sample);
    STORE_int64_t(record + 8ul, bad_target);
    return;
  }
  for (int64_t p = 0; p < args.parts && bad_sample == 0; ++p) {
    bad_sample = LOAD_int64_t(args.records + uint64_t(p) * 16ul);
    bad_target = LOAD_int64_t(args.records + uint64_t(p) * 16ul + 8ul);
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
  if (args.stage == 0) {
    for (int64_t i = first; i < end; ++i) {
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
    store_slot(record, loss_sum);
    store_slot(record + 8ul, weight_sum);
    return;
  }
  for (int64_t p = 0; p < args.parts; ++p) {
    loss_sum += load_slot(args.records + uint64_t(p) * 16ul);
    weight_sum += load_slot(args.records + uint64_t(p) * 16ul + 8ul);
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
