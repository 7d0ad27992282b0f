// The standard kernel set as the Vulkan driver sees it, and the KernelLaunch a
// kernel's host code records through.
//
// Each kernel is a name and a `prepare` function. prepare() validates the
// whole launch first (driver_kit::ArgChecker: counts, kinds, dtypes, ranks,
// shapes, memory bounds -> INVALID_ARGUMENT; a dtype the kernel or the device
// lacks -> UNSUPPORTED) and only then records dispatches: a refused launch
// records nothing, and a launch over empty tensors records nothing either.
//
// A dispatch runs one SPIR-V variant of shaders/ (shaders/common.glsl is the
// contract) over a number of global invocations; its arguments travel in an
// ArgBlock that the stream copies into its host-visible argument ring.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "hal/driver.h"
#include "kit/args.hpp"

namespace vulkan {

class Device;
class KernelLaunch;
class Stream;

struct KernelDef {
  const char* name;
  void (*prepare)(KernelLaunch& launch, const hal_arg* args, uint32_t num_args);
};

// The standard kernels, one list per family, each defined in the family's
// own sources; kernel.cpp's kFamilies concatenates them.
using KernelList = std::span<const KernelDef* const>;
KernelList copy_kernels();  // fill, copy (kernels/copy.cpp)
KernelList map_kernels();   // the rest of the elementwise family
KernelList reduction_kernels();
KernelList softmax_kernels();
KernelList linalg_kernels();
KernelList nn_kernels();
KernelList indexing_kernels();
KernelList conv_kernels();
KernelList random_kernels();
KernelList optim_kernels();

// The argument block of one dispatch, laid out as the shader's std430
// `Args` block: 8-byte slots in declaration order. A tensor is the 144-byte
// `tensor` of common.glsl; a float takes a whole slot (4-byte filler).
class ArgBlock {
 public:
  void tensor(const driver_kit::TensorArg& tensor);
  void f32(float value);
  void f64(double value);
  void i64(int64_t value);
  void u64(uint64_t value);

  std::span<const uint64_t> slots() const { return slots_; }

 private:
  std::vector<uint64_t> slots_;
};

// One launch: the validation context of prepare() and the recording of its
// dispatches into the stream's current command batch.
class KernelLaunch {
 public:
  KernelLaunch(Stream& stream, const char* kernel);
  // Hands the launch's scratch memory to the stream, freed when the work
  // recorded so far completes.
  ~KernelLaunch();
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;

  const Device& device() const;
  // For driver_kit::ArgChecker.
  const driver_kit::DeviceMemory& memory() const;

  // Records one dispatch of SPIR-V variant `shader` over `invocations`
  // global ids (split into several dispatches or a 2-D grid above the
  // device's group-count limit; the shader sees them through global_id()).
  // Dispatches of one launch run in order, each seeing the previous one's
  // writes. `specialization` gives the shader's constants 1, 2, ... (0 is the
  // workgroup size). Throws UNSUPPORTED if the variant does not exist.
  void dispatch(std::string_view shader, uint64_t invocations,
                const ArgBlock& block,
                std::span<const uint32_t> specialization = {});

  // Device scratch memory for multi-pass kernels (256-byte aligned, contents
  // undefined), valid until this launch's work completes.
  hal_devptr scratch(uint64_t bytes);
  // Scratch whose bytes are all zero (0 and +0.0 of every dtype) when the
  // launch's next dispatch runs.
  hal_devptr zeroed_scratch(uint64_t bytes);

  // After this launch's work completes, `check` reads `words` int64 words at
  // `status` (scratch the shaders wrote); an Error it throws becomes the
  // stream's error, reported by the next synchronize. For failures only the
  // data can reveal (an out-of-range class index).
  void check_on_completion(hal_devptr status,
                           std::function<void(const int64_t* words)> check,
                           uint32_t words = 2);

 private:
  Stream& stream_;
  const char* kernel_;
  std::vector<hal_devptr> scratch_;
};

// Loop iterations one invocation may spend in one pass of a multi-pass
// kernel: within lavapipe's limit (shaders/common.glsl), with room for the
// rest of the shader.
inline constexpr int64_t kLoopsPerPass = 32768;

// Steps of `loops_per_step` iterations each that fit in one pass (at least
// one).
constexpr int64_t steps_per_pass(int64_t loops_per_step) {
  return std::max<int64_t>(1, kLoopsPerPass / loops_per_step);
}

// A sum that one invocation cannot run to the end (lavapipe's loop limit,
// shaders/common.glsl), cut into passes over consecutive ranges of its
// `steps` that hand their running sums on in `slots` 8-byte slots of
// scratch, one per output element (or more: max_pool2d's carries a value
// and an index; common.glsl's carried sums). One pass needs no scratch.
class CarriedSum {
 public:
  CarriedSum(KernelLaunch& launch, int64_t steps, int64_t steps_per_pass,
             int64_t slots);

  int64_t passes() const { return passes_; }
  // Appends pass `pass`'s four arguments: step_begin, step_end, carry and
  // carry_flags.
  void pack(ArgBlock& block, int64_t pass) const;

 private:
  int64_t steps_;
  int64_t steps_per_pass_;
  int64_t passes_;
  hal_devptr carry_ = 0;
};

}  // namespace vulkan
