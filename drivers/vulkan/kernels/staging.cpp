#include "kernels/staging.hpp"

#include <algorithm>

#include "kernels/copy.hpp"
#include "kernels/elementwise.hpp"
#include "kit/dtype.hpp"

namespace vulkan {

using driver_kit::TensorArg;

TensorArg absent_tensor() {
  TensorArg absent{};
  absent.tensor.rank = -1;
  return absent;
}

Staged::Staged(KernelLaunch& launch, const TensorArg& output, int32_t dtype)
    : output_(output), scratch_(output) {
  hal_tensor& t = scratch_.tensor;
  t.dtype = dtype;
  scratch_.element_size = driver_kit::dtype_size(dtype);
  const uint64_t bytes =
      static_cast<uint64_t>(output.num_elements * scratch_.element_size);
  t.data = launch.scratch(bytes);
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.sizes[d];
  }
  scratch_.first_byte = t.data;
  scratch_.end_byte = t.data + bytes;
}

void Staged::store(KernelLaunch& launch) const {
  record_copy(launch, output_, scratch_);
}

const TensorArg& StagedOutputs::add(
    const TensorArg& output, const std::vector<const TensorArg*>& inputs,
    const std::vector<const TensorArg*>& may_alias) {
  for (const TensorArg* input : inputs) {
    if (input == nullptr || !output.overlaps(*input)) {
      continue;
    }
    if (std::find(may_alias.begin(), may_alias.end(), input) ==
            may_alias.end() ||
        !same_view(output, *input)) {
      return staged_.emplace_back(launch_, output, output.dtype()).tensor();
    }
  }
  return direct_.emplace_back(output);
}

void StagedOutputs::store() const {
  for (const Staged& staged : staged_) {
    staged.store(launch_);
  }
}

}  // namespace vulkan
