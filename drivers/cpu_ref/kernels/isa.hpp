// The instruction-set level cpu_ref's dot products run at, chosen once per
// process: HAL_CPU_REF_ISA=baseline or x86-64-v3, default the best level
// the CPU supports.
//
// A level fixes the bits, not just the speed. At `baseline` (x86-64, SSE2)
// an f32 dot product multiplies and adds with two roundings per term; at
// `x86-64-v3` (AVX2 + FMA) it takes one fused multiply-add per term, in the
// same order. Within a level every machine, thread count and vector width
// gives the same bits (an AVX-512 kernel would give x86-64-v3's). f64 dot
// products and every other kernel round the same way at every level.
#pragma once

namespace cpu_ref {

enum class IsaLevel { kBaseline, kX86_64_V3 };

IsaLevel isa_level();
const char* isa_level_name(IsaLevel level);

}  // namespace cpu_ref
