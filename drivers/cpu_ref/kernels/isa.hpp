// The instruction-set level cpu_ref's dot products run at, chosen once per
// process: HAL_CPU_REF_ISA=baseline or x86-64-v3, default the best level
// the CPU supports.
//
// A level fixes the bits, not just the speed. At `baseline` (x86-64, SSE2)
// an f32 dot product multiplies and adds with two roundings per term; at
// `x86-64-v3` (AVX2 + FMA) it takes one fused multiply-add per term, in the
// same order. Within a level every machine, thread count and vector width
// gives the same bits (an AVX-512 kernel would give x86-64-v3's). f64 dot
// products and every other kernel round the same way at every level
// (run_at_isa_level below only widens their vectors).
#pragma once

namespace cpu_ref {

enum class IsaLevel { kBaseline, kX86_64_V3 };

IsaLevel isa_level();
const char* isa_level_name(IsaLevel level);

#if defined(__x86_64__)
template <typename Loop>
[[gnu::target("avx2"), gnu::noinline]] void run_with_avx2(Loop loop) {
  loop();
}
#endif

// Calls loop() compiled for the running level: at x86-64-v3 with AVX2's
// 256-bit vectors, twice baseline's SSE2 width. Only for loops that round
// the same at any vector width, such as elementwise maps (never for a dot
// product, whose level decides FMA): AVX2 alone has no fused multiply-add
// to contract into, and -ffp-contract=off forbids contraction anyway.
// `loop` must be always_inline, so that its body and what it inlines is
// compiled inside run_with_avx2, and capture by value: its copy is then a
// local no store of the loop can alias, so GCC can count the iterations
// and keep the captures in registers.
template <typename Loop>
void run_at_isa_level(Loop loop) {
#if defined(__x86_64__)
  if (isa_level() == IsaLevel::kX86_64_V3) {
    run_with_avx2(loop);
    return;
  }
#endif
  loop();
}

}  // namespace cpu_ref
