// Staged outputs of the kernels whose results must look as if every input
// were read first (reductions, softmax, layer_norm, nll_loss, matmul): when
// an output overlaps an input, the kernel writes a dense scratch tensor
// instead and a last pass (record_copy, copy.hpp) stores it into the output,
// converting its dtype under copy's rules (sum into another dtype stages in
// its accumulator's dtype).
//
// Scratch memory belongs to the launch (KernelLaunch::scratch) and is released
// when the launch's work completes.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "kernels/kernel.hpp"
#include "kit/args.hpp"

namespace vulkan {

// A tensor argument the shader treats as absent (rank -1).
driver_kit::TensorArg absent_tensor();

// A dense scratch tensor of `output`'s shape and `dtype`, and the pass that
// stores it into `output`.
class Staged {
 public:
  Staged(KernelLaunch& launch, const driver_kit::TensorArg& output,
         int32_t dtype);

  const driver_kit::TensorArg& tensor() const { return scratch_; }
  hal_devptr address() const { return scratch_.tensor.data; }
  // Records output <- scratch.
  void store(KernelLaunch& launch) const;

 private:
  driver_kit::TensorArg output_;
  driver_kit::TensorArg scratch_;
};

// The outputs of one launch, each staged when it overlaps an input.
class StagedOutputs {
 public:
  explicit StagedOutputs(KernelLaunch& launch) : launch_(launch) {}

  // Returns what the kernel should write for `output`: itself, or a staged
  // copy when it overlaps one of `inputs` (null entries are skipped), unless
  // that input is one of `may_alias` (inputs the kernel reads element by
  // element before writing the same element) and the same view.
  const driver_kit::TensorArg& add(
      const driver_kit::TensorArg& output,
      const std::vector<const driver_kit::TensorArg*>& inputs,
      const std::vector<const driver_kit::TensorArg*>& may_alias = {});
  // Records the stores of every staged output, after the kernel's passes.
  void store() const;

 private:
  KernelLaunch& launch_;
  std::deque<driver_kit::TensorArg> direct_;  // stable addresses
  std::deque<Staged> staged_;
};

}  // namespace vulkan
