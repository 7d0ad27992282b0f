// The random number generator of a hal device: a (seed, offset) pair for the
// standard set's counter-based Philox kernels. A kernel call producing n
// numbers uses blocks offset .. offset + ceil(n / 4) - 1 and the generator
// advances past them, so the same seed gives the same sequence on every
// driver, whatever it runs on.
//
// State (get_state / set_state) is a CPU uint8 tensor of 16 bytes: the seed
// then the offset, both little-endian uint64.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>
#include <mutex>

namespace torch_hal {

class PhiloxGenerator final : public c10::GeneratorImpl {
 public:
  explicit PhiloxGenerator(c10::DeviceIndex device,
                           uint64_t seed = 67280421310721ULL);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;  // a fresh non-deterministic seed, made current
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // The (seed, offset) for a call producing `count` numbers; advances the
  // offset past them. Callers hold the generator's mutex.
  std::pair<uint64_t, uint64_t> reserve(uint64_t count);

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  PhiloxGenerator* clone_impl() const override;

  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The default generator of a device (index -1: the current device).
const at::Generator& default_generator(c10::DeviceIndex index = -1);
at::Generator new_generator(c10::DeviceIndex index);

// torch.hal's seeding and state functions on the default generators.
// manual_seed_all before the driver is loaded is remembered and applied when
// the generators are created, so torch.manual_seed() in a program that never
// touches hal does not load a driver.
void manual_seed(c10::DeviceIndex index, uint64_t seed);
void manual_seed_all(uint64_t seed);
uint64_t seed(c10::DeviceIndex index);
uint64_t initial_seed(c10::DeviceIndex index);
at::Tensor get_rng_state(c10::DeviceIndex index);
void set_rng_state(c10::DeviceIndex index, const at::Tensor& state);

// The generator an op should use: `gen` if given, else the default one of
// the device. Locks the generator's mutex for the reservation.
std::pair<uint64_t, uint64_t> reserve_random(
    const std::optional<at::Generator>& gen, c10::DeviceIndex device,
    uint64_t count);

}  // namespace torch_hal
