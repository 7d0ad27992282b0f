// max_pool2d_backward, pass 2: the first bad index over the planes, found
// in levels. Invocation i reads records [i * span, (i + 1) * span) of the
// previous level (pass 1's per-plane records first) and writes the first
// bad one of them, or position -1, as record i of the next. The last level
// has one record: the launch's status {position or -1, index}, which the
// host checks on completion and pass 3 obeys. It touches no tensor element:
// one variant serves every dtype.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  uint64_t records;  // int64 {window position or -1, index} each
  uint64_t verdicts;  // this level's records
  int64_t count;  // records
  int64_t span;
};

void main() {
  Args a = Args(push.args);
  const int64_t i = global_id();
  const int64_t begin = i * a.span;
  if (begin >= a.count) {
    return;
  }
  const uint64_t verdict = a.verdicts + uint64_t(i * 16);
  const int64_t end = min(begin + a.span, a.count);
  for (int64_t r = begin; r < end; ++r) {
    const uint64_t record = a.records + uint64_t(r * 16);
    if (LOAD_int64_t(record) >= 0) {
      STORE_int64_t(verdict, LOAD_int64_t(record));
      STORE_int64_t(verdict + 8, LOAD_int64_t(record + 8));
      return;
    }
  }
  STORE_int64_t(verdict, -1l);
}
