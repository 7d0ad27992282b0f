// The CPU fallback of the hal backend: an op without a hal kernel runs on CPU
// (inputs copied to the host, outputs copied back), counted per op so users
// see what falls back (torch.hal.fallback_stats()). With HAL_STRICT=1 in the
// environment a fallback is an error naming the op instead. Where a copy
// cannot keep the op's meaning (it returns a view, or writes a tensor that
// shares memory with itself or with another input), the fallback is refused
// with an error in every mode.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch_hal {

// The boxed fallback itself. A native kernel that covers only some of an
// op's cases hands the others here with
// at::native::call_fallback_fn<&fall_back_to_cpu, at::_ops::...>::call(...),
// so they count, and obey HAL_STRICT, like any other fallback.
void fall_back_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// For a kernel that runs an op on CPU by hand (where CPU has no kernel for
// the op itself, only for what it stands for): counts `op` ("aten::name")
// as a fallback, or raises under HAL_STRICT=1.
void note_cpu_fallback(const std::string& op);

std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();

}  // namespace torch_hal
