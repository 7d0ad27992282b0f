// copy(out, in): out[i] = in[i] converted to out's dtype under the table's
// rules (floats round to nearest, float to integer truncates, integers wrap,
// anything to bool is x != 0). One variant per (out, in) pair: OUT_<NAME>
// and IN_<NAME>; a pair of equal dtypes moves the bits (NaN payloads kept).
// The host stages `in` first when the two overlap.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;
  Tensor source;
  uint64_t count;  // dest's elements
};

// load_in(): the input element in its compute type (float, double, int64_t
// or bool).
#if defined(IN_F32)
#define load_in load_f32
#elif defined(IN_F64)
#define load_in load_f64
#elif defined(IN_F16)
#define load_in load_f16
#elif defined(IN_I64)
#define load_in load_i64
#elif defined(IN_I32)
#define load_in load_i32
#elif defined(IN_I16)
#define load_in load_i16
#elif defined(IN_I8)
#define load_in load_i8
#elif defined(IN_U8)
#define load_in load_u8
#elif defined(IN_BOOL)
#define load_in load_bool
#endif

// store_out(): converts and stores. float16_t(x) converts in one rounding
// from any input type (f64 too).
#if defined(OUT_F32)
#define store_out(t, off, v) store_f32(t, off, float(v))
#elif defined(OUT_F64)
#define store_out(t, off, v) store_f64(t, off, double(v))
#elif defined(OUT_F16)
#define store_out(t, off, v) STORE_float16_t(t.data + uint64_t((off) * 2), float16_t(v))
#elif defined(OUT_BOOL)
#if defined(IN_BOOL)
#define store_out(t, off, v) store_bool(t, off, v)
#else
#define store_out(t, off, v) store_bool(t, off, !(v == 0))  // NaN is true
#endif
#elif defined(OUT_I64)
#define store_out(t, off, v) store_i64(t, off, int64_t(v))
#elif defined(OUT_I32)
#define store_out(t, off, v) store_i32(t, off, int64_t(v))
#elif defined(OUT_I16)
#define store_out(t, off, v) store_i16(t, off, int64_t(v))
#elif defined(OUT_I8)
#define store_out(t, off, v) store_i8(t, off, int64_t(v))
#elif defined(OUT_U8)
#define store_out(t, off, v) store_u8(t, off, int64_t(v))
#endif

void main() {
  Args args = Args(push.args);
  const int64_t i = global_id();
  if (i >= int64_t(args.count)) {
    return;
  }
  const int64_t dst = element_offset(args.dest, i);
  const int64_t src = element_offset(args.source, i);
#if defined(BITS_8)
  STORE_uint8_t(args.dest.data + uint64_t(dst), LOAD_uint8_t(args.source.data + uint64_t(src)));
#elif defined(BITS_16)
  STORE_int16_t(args.dest.data + uint64_t(dst * 2), LOAD_int16_t(args.source.data + uint64_t(src * 2)));
#elif defined(BITS_32)
  STORE_int32_t(args.dest.data + uint64_t(dst * 4), LOAD_int32_t(args.source.data + uint64_t(src * 4)));
#elif defined(BITS_64)
  STORE_int64_t(args.dest.data + uint64_t(dst * 8), LOAD_int64_t(args.source.data + uint64_t(src * 8)));
#else
  store_out(args.dest, dst, load_in(args.source, src));
#endif
}
