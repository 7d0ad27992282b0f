// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11), the counter-based generator behind the standard random
// kernels. Stateless: a block of four 32-bit words is a pure function of a
// 128-bit counter and a 64-bit key, so any element can be generated
// independently of the others, in any order, on any thread.
#pragma once

#include <array>
#include <cstdint>

namespace cpu_ref {

using PhiloxWords = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

inline PhiloxWords philox4x32_10(PhiloxWords counter, PhiloxKey key) {
  constexpr uint64_t kMultiplier0 = 0xD2511F53;
  constexpr uint64_t kMultiplier1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9;  // golden ratio
  constexpr uint32_t kWeyl1 = 0xBB67AE85;  // sqrt(3) - 1
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t product0 = kMultiplier0 * counter[0];
    const uint64_t product1 = kMultiplier1 * counter[2];
    counter = {static_cast<uint32_t>(product1 >> 32) ^ counter[1] ^ key[0],
               static_cast<uint32_t>(product1),
               static_cast<uint32_t>(product0 >> 32) ^ counter[3] ^ key[1],
               static_cast<uint32_t>(product0)};
  }
  return counter;
}

// Block `block` of the stream keyed by `seed` (table/random.json): key =
// (seed low word, seed high word), counter = (block low word, block high
// word, 0, 0).
inline PhiloxWords philox_block(uint64_t seed, uint64_t block) {
  return philox4x32_10(
      {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

}  // namespace cpu_ref
