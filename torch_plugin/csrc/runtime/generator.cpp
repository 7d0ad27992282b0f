#include "runtime/generator.hpp"

#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <deque>
#include <optional>
#include <random>

#include "runtime/context.hpp"

namespace torch_hal {
namespace {
constexpr size_t kStateBytes = 2 * sizeof(uint64_t);
}

PhiloxGenerator::PhiloxGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void PhiloxGenerator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t PhiloxGenerator::seed() {
  std::random_device rd;
  const uint64_t s = (static_cast<uint64_t>(rd()) << 32) | rd();
  set_current_seed(s);
  return s;
}

void PhiloxGenerator::set_state(const c10::TensorImpl& state) {
  TORCH_CHECK(state.dtype() == caffe2::TypeMeta::Make<uint8_t>() &&
                  state.device().is_cpu() && state.is_contiguous() &&
                  static_cast<size_t>(state.numel()) == kStateBytes,
              "hal RNG state must be a contiguous CPU uint8 tensor of ",
              kStateBytes, " bytes (seed, offset)");
  uint64_t words[2];
  std::memcpy(words, state.data(), kStateBytes);
  seed_ = words[0];
  offset_ = words[1];
}

c10::intrusive_ptr<c10::TensorImpl> PhiloxGenerator::get_state() const {
  auto storage =
      c10::Storage(c10::Storage::use_byte_size_t(), kStateBytes,
                   c10::GetAllocator(c10::DeviceType::CPU), /*resizable=*/true);
  auto state = c10::make_intrusive<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
      caffe2::TypeMeta::Make<uint8_t>());
  state->set_sizes_contiguous({static_cast<int64_t>(kStateBytes)});
  const uint64_t words[2] = {seed_, offset_};
  std::memcpy(state->mutable_data(), words, kStateBytes);
  return state;
}

std::pair<uint64_t, uint64_t> PhiloxGenerator::reserve(uint64_t count) {
  const uint64_t offset = offset_;
  offset_ += (count + 3) / 4;
  return {seed_, offset};
}

PhiloxGenerator* PhiloxGenerator::clone_impl() const {
  auto* copy = new PhiloxGenerator(device().index(), seed_);
  copy->offset_ = offset_;
  return copy;
}

struct DefaultGenerators {
  std::mutex mutex;
  std::deque<at::Generator> generators;  // one per device, once created
  bool created = false;
  std::optional<uint64_t> pending_seed;  // from manual_seed_all before that
};

DefaultGenerators& defaults() {
  static auto* d = new DefaultGenerators;  // never destroyed
  return *d;
}

const at::Generator& default_generator(c10::DeviceIndex index) {
  DefaultGenerators& d = defaults();
  {
    std::lock_guard lock(d.mutex);
    if (!d.created) {
      for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
        d.generators.push_back(
            d.pending_seed
                ? at::make_generator<PhiloxGenerator>(i, *d.pending_seed)
                : at::make_generator<PhiloxGenerator>(i));
      }
      d.created = true;
    }
  }
  if (index < 0) index = current_device();
  TORCH_CHECK_INDEX(
      index >= 0 && index < static_cast<c10::DeviceIndex>(d.generators.size()),
      "no hal device ", static_cast<int>(index));
  return d.generators[index];
}

at::Generator new_generator(c10::DeviceIndex index) {
  return at::make_generator<PhiloxGenerator>(index < 0 ? current_device()
                                                       : index);
}

namespace {

// Runs `fn` on the locked default generator of a device.
template <typename Fn>
auto with_default(c10::DeviceIndex index, Fn fn) {
  at::Generator g = default_generator(index);
  std::lock_guard lock(g.mutex());
  return fn(*at::check_generator<PhiloxGenerator>(g));
}

}  // namespace

void manual_seed(c10::DeviceIndex index, uint64_t seed) {
  with_default(index, [seed](PhiloxGenerator& g) { g.set_current_seed(seed); });
}

void manual_seed_all(uint64_t seed) {
  DefaultGenerators& d = defaults();
  {
    std::lock_guard lock(d.mutex);
    if (!d.created) {
      d.pending_seed = seed;
      return;
    }
  }
  for (c10::DeviceIndex i = 0;
       i < static_cast<c10::DeviceIndex>(d.generators.size()); ++i) {
    manual_seed(i, seed);
  }
}

uint64_t seed(c10::DeviceIndex index) {
  return with_default(index, [](PhiloxGenerator& g) { return g.seed(); });
}

uint64_t initial_seed(c10::DeviceIndex index) {
  return with_default(index,
                      [](PhiloxGenerator& g) { return g.current_seed(); });
}

at::Tensor get_rng_state(c10::DeviceIndex index) {
  return with_default(
      index, [](PhiloxGenerator& g) { return at::Tensor(g.get_state()); });
}

void set_rng_state(c10::DeviceIndex index, const at::Tensor& state) {
  with_default(index, [&state](PhiloxGenerator& g) {
    g.set_state(*state.unsafeGetTensorImpl());
  });
}

std::pair<uint64_t, uint64_t> reserve_random(
    const std::optional<at::Generator>& gen, c10::DeviceIndex device,
    uint64_t count) {
  at::Generator g =
      gen.has_value() && gen->defined() ? *gen : default_generator(device);
  TORCH_CHECK(g.device().type() == c10::DeviceType::PrivateUse1,
              "a hal op needs a hal generator, got one for ", g.device());
  std::lock_guard lock(g.mutex());
  return at::check_generator<PhiloxGenerator>(g)->reserve(count);
}

}  // namespace torch_hal
