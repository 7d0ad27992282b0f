// The contract between the Vulkan driver's host code and every compute
// shader (drivers/vulkan/README.md, "Shader contract"). Include it after
// `#version 460`.
//
// - No descriptor sets: a shader reaches its tensors by buffer device
//   address. The push constants carry the device address of the launch's
//   argument block (written by the host's ArgBlock, std430, 8-byte slots, in
//   the order the shader's own `Args` block declares) and the first global
//   invocation index of this dispatch.
// - A tensor in the argument block is `Tensor` (144 bytes): strides in
//   elements, negative allowed, entries past rank unused.
// - A variant is compiled per dtype with -DDT_<NAME>; that fixes ST (the
//   storage type), CT (the compute type) and load_t/store_t. Mixed-dtype
//   shaders use the typed helpers (load_i64, load_bool, ...) directly.
// - Workgroup size is specialization constant 0, chosen per device by the
//   host; a shader's own constants take ids from 1.
// A type or helper that a shader never uses adds nothing to its SPIR-V, so a
// variant needs only the device features of the types it touches.

#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  uint64_t args;  // device address of the argument block
  uint64_t base;  // first global invocation index of this dispatch
} push;

struct Tensor {
  uint64_t data;  // device address of element 0
  int32_t rank;
  int32_t dtype;  // hal_dtype
  int64_t sizes[8];
  int64_t strides[8];
};

// hal_dtype values, for shaders that switch on Tensor.dtype.
const int32_t HAL_F32 = 0;
const int32_t HAL_F16 = 1;
const int32_t HAL_F64 = 3;
const int32_t HAL_I64 = 4;
const int32_t HAL_I32 = 5;
const int32_t HAL_I16 = 6;
const int32_t HAL_I8 = 7;
const int32_t HAL_U8 = 8;
const int32_t HAL_BOOL = 9;

// --- Raw element access by address ------------------------------------------
// One reference type per storage type, aligned to its size (tensor data is
// element-aligned).

#define HAL_DEFINE_REF(S, NAME, ALIGN)                                   \
  layout(buffer_reference, std430, buffer_reference_align = ALIGN)       \
      buffer NAME {                                                      \
    S v;                                                                 \
  };                                                                     \
  S LOAD_##S(uint64_t addr) { return NAME(addr).v; }                     \
  void STORE_##S(uint64_t addr, S value) { NAME(addr).v = value; }

HAL_DEFINE_REF(float, RefFloat, 4)
HAL_DEFINE_REF(double, RefDouble, 8)
HAL_DEFINE_REF(float16_t, RefFloat16, 2)
HAL_DEFINE_REF(int64_t, RefInt64, 8)
HAL_DEFINE_REF(int32_t, RefInt32, 4)
HAL_DEFINE_REF(int16_t, RefInt16, 2)
HAL_DEFINE_REF(int8_t, RefInt8, 1)
HAL_DEFINE_REF(uint8_t, RefUint8, 1)

// --- Typed element access: element `off` (in elements) of tensor t ----------
// Loads widen to the dtype's compute type; stores narrow from it (integers
// wrap to the width, bool stores v != 0).

float load_f32(Tensor t, int64_t off) { return LOAD_float(t.data + uint64_t(off * 4)); }
double load_f64(Tensor t, int64_t off) { return LOAD_double(t.data + uint64_t(off * 8)); }
float load_f16(Tensor t, int64_t off) { return float(LOAD_float16_t(t.data + uint64_t(off * 2))); }
int64_t load_i64(Tensor t, int64_t off) { return LOAD_int64_t(t.data + uint64_t(off * 8)); }
int64_t load_i32(Tensor t, int64_t off) { return int64_t(LOAD_int32_t(t.data + uint64_t(off * 4))); }
int64_t load_i16(Tensor t, int64_t off) { return int64_t(LOAD_int16_t(t.data + uint64_t(off * 2))); }
int64_t load_i8(Tensor t, int64_t off) { return int64_t(LOAD_int8_t(t.data + uint64_t(off))); }
int64_t load_u8(Tensor t, int64_t off) { return int64_t(LOAD_uint8_t(t.data + uint64_t(off))); }
bool load_bool(Tensor t, int64_t off) { return LOAD_uint8_t(t.data + uint64_t(off)) != uint8_t(0); }

void store_f32(Tensor t, int64_t off, float v) { STORE_float(t.data + uint64_t(off * 4), v); }
void store_f64(Tensor t, int64_t off, double v) { STORE_double(t.data + uint64_t(off * 8), v); }
void store_f16(Tensor t, int64_t off, float v) { STORE_float16_t(t.data + uint64_t(off * 2), float16_t(v)); }
void store_i64(Tensor t, int64_t off, int64_t v) { STORE_int64_t(t.data + uint64_t(off * 8), v); }
void store_i32(Tensor t, int64_t off, int64_t v) { STORE_int32_t(t.data + uint64_t(off * 4), int32_t(v)); }
void store_i16(Tensor t, int64_t off, int64_t v) { STORE_int16_t(t.data + uint64_t(off * 2), int16_t(v)); }
void store_i8(Tensor t, int64_t off, int64_t v) { STORE_int8_t(t.data + uint64_t(off), int8_t(v)); }
void store_u8(Tensor t, int64_t off, int64_t v) { STORE_uint8_t(t.data + uint64_t(off), uint8_t(v)); }
void store_bool(Tensor t, int64_t off, bool v) { STORE_uint8_t(t.data + uint64_t(off), v ? uint8_t(1) : uint8_t(0)); }

// --- The variant's dtype: ST, CT, load_t, store_t ----------------------------
// CT_FLOATING or CT_INTEGER tells the two compute domains apart; DT_SIZE is
// the element size in bytes.

#if defined(DT_F32)
#define ST float
#define CT float
#define CT_FLOATING 1
#define DT_SIZE 4
#define load_t load_f32
#define store_t store_f32
#elif defined(DT_F64)
#define ST double
#define CT double
#define CT_FLOATING 1
#define DT_SIZE 8
#define load_t load_f64
#define store_t store_f64
#elif defined(DT_F16)
#define ST float16_t
#define CT float
#define CT_FLOATING 1
#define DT_SIZE 2
#define load_t load_f16
#define store_t store_f16
#elif defined(DT_I64)
#define ST int64_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 8
#define load_t load_i64
#define store_t store_i64
#elif defined(DT_I32)
#define ST int32_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 4
#define load_t load_i32
#define store_t store_i32
#elif defined(DT_I16)
#define ST int16_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 2
#define load_t load_i16
#define store_t store_i16
#elif defined(DT_I8)
#define ST int8_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 1
#define load_t load_i8
#define store_t store_i8
#elif defined(DT_U8)
#define ST uint8_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 1
#define load_t load_u8
#define store_t store_u8
#elif defined(DT_BOOL)
#define ST uint8_t
#define CT int64_t
#define CT_INTEGER 1
#define DT_SIZE 1
int64_t load_t(Tensor t, int64_t off) { return load_bool(t, off) ? 1l : 0l; }
void store_t(Tensor t, int64_t off, int64_t v) { store_bool(t, off, v != 0l); }
#endif

// --- Partial records ---------------------------------------------------------
// Multi-pass kernels keep per-chunk partial results in scratch memory, one
// 8-byte slot per compute-type value (float padded).

#if defined(CT_FLOATING) && !defined(DT_F64)
CT load_slot(uint64_t addr) { return LOAD_float(addr); }
void store_slot(uint64_t addr, CT v) { STORE_float(addr, v); }
#elif defined(DT_F64)
CT load_slot(uint64_t addr) { return LOAD_double(addr); }
void store_slot(uint64_t addr, CT v) { STORE_double(addr, v); }
#elif defined(CT_INTEGER)
CT load_slot(uint64_t addr) { return LOAD_int64_t(addr); }
void store_slot(uint64_t addr, CT v) { STORE_int64_t(addr, v); }
#endif

// --- Carried sums --------------------------------------------------------------
// An invocation's sum over a long extent is cut into dispatches over
// consecutive step ranges [step_begin, step_end) (host: CarriedSum,
// kernels/kernel.hpp). Each hands its running sum on in `carry`, one slot per
// output element, which holds it exactly: the result is the one a single
// pass computes. The argument block carries the four values in this order.
const int64_t CARRY_IN = 1;   // start from the carried sum, not zero
const int64_t CARRY_OUT = 2;  // leave the sum in the carry; write no output

#define CARRIED_SUM_ARGS \
  int64_t step_begin;    \
  int64_t step_end;      \
  uint64_t carry;        \
  int64_t carry_flags

#if defined(CT)
// The sum output `slot` starts from.
CT carried_in(uint64_t carry, int64_t flags, int64_t slot) {
  return (flags & CARRY_IN) != 0 ? load_slot(carry + uint64_t(slot) * 8) : CT(0);
}

// Hands `sum` on when a later pass continues it; true if it did.
bool carried_out(uint64_t carry, int64_t flags, int64_t slot, CT sum) {
  if ((flags & CARRY_OUT) == 0) {
    return false;
  }
  store_slot(carry + uint64_t(slot) * 8, sum);
  return true;
}
#endif

// --- lavapipe's loop limit ----------------------------------------------------
// llvmpipe (lavapipe) silently ends an invocation's loops after 65535
// iterations in all (its guard against endless shaders; the count is per
// invocation, not per loop, and element_offset's loop over the rank counts
// too). So a shader must not loop over a data-sized extent in one
// invocation. Handled: reductions (reduction/reduce.comp), softmax and its
// relatives (reduction/softmax.comp), layer_norm (nn/layer_norm.comp),
// nll_loss (nn/nll_loss.comp) and conv2d_backward_weight cut lines into
// chunks whose partial records a later pass combines in order; matmul's k
// and the (channel, kernel row) sums of conv2d and conv2d_backward_input,
// and max_pool2d's window rows, run in passes that carry their sums (or
// maximum) on (above); batch_norm sums long channels
// in slices (conv/channel_sum.glsl); max_pool2d_backward scatters a plane's
// windows in passes and finds its verdict in levels; elementwise results
// take one invocation each; the indexing checks split the index the same
// way, and index_add / scatter(_add) walk the index in bounded dispatches
// (kernels/indexing.cpp). A combine loops once per record, so a line may
// hold ~65000 chunks (2^28 elements with 4096-element chunks). What remains
// unbounded are extents no model reaches: a kernel or pool window row of
// over ~30,000 taps, a conv group of over 2^28 (channel, row) steps.

// --- Index math --------------------------------------------------------------

int64_t numel(Tensor t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) {
    n *= t.sizes[d];
  }
  return n;
}

// Element offset (in elements) of the row-major `linear`-th element of t.
int64_t element_offset(Tensor t, int64_t linear) {
  int64_t offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const int64_t size = t.sizes[d];
    offset += (linear % size) * t.strides[d];
    linear /= size;
  }
  return offset;
}

// This invocation's global index: the dispatch's base plus its linear index
// over the (x, y) grid the host chose (x first).
int64_t global_id() {
  const uint64_t row = uint64_t(gl_NumWorkGroups.x) * uint64_t(gl_WorkGroupSize.x);
  return int64_t(push.base + uint64_t(gl_GlobalInvocationID.x) +
                 uint64_t(gl_GlobalInvocationID.y) * row);
}
