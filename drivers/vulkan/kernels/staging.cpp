#include "kernels/staging.h"

#include <algorithm>

#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kit/dtype.h"

namespace vulkan {

using driver_kit::TensorArg;

TensorArg AbsentTensor() {
  TensorArg absent{};
  absent.tensor.rank = -1;
  return absent;
}

Staged::Staged(KernelLaunch& launch, const TensorArg& output, int32_t dtype)
    : output_(output), scratch_(output) {
  hal_tensor& t = scratch_.tensor;
  t.dtype = dtype;
  scratch_.element_size = driver_kit::DtypeSize(dtype);
  const uint64_t bytes =
      static_cast<uint64_t>(output.num_elements * scratch_.element_size);
  t.data = launch.Scratch(bytes);
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.sizes[d];
  }
  scratch_.first_byte = t.data;
  scratch_.end_byte = t.data + bytes;
}

void Staged::Store(KernelLaunch& launch) const {
  RecordCopy(launch, output_, scratch_);
}

const TensorArg& StagedOutputs::Add(
    const TensorArg& output, const std::vector<const TensorArg*>& inputs,
    const std::vector<const TensorArg*>& may_alias) {
  for (const TensorArg* input : inputs) {
    if (input == nullptr || !output.Overlaps(*input)) {
      continue;
    }
    if (std::find(may_alias.begin(), may_alias.end(), input) ==
            may_alias.end() ||
        !SameView(output, *input)) {
      return staged_.emplace_back(launch_, output, output.dtype()).tensor();
    }
  }
  return direct_.emplace_back(output);
}

void StagedOutputs::Store() const {
  for (const Staged& staged : staged_) {
    staged.Store(launch_);
  }
}

}  // namespace vulkan
