#include "aten/native/fallback.hpp"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>

namespace torch_hal {
namespace {

struct Counts {
  std::mutex mutex;
  std::map<std::string, int64_t> by_op;
};

Counts& counts() {
  static auto* c = new Counts;  // ops may fall back during shutdown
  return *c;
}

// Read on every fallback, so a test can switch it with os.environ.
bool strict() {
  const char* env = std::getenv("HAL_STRICT");
  return env != nullptr && std::strcmp(env, "") != 0 &&
         std::strcmp(env, "0") != 0;
}

void for_each_hal_tensor(const c10::IValue& value,
                         const std::function<void(const at::Tensor&)>& visit) {
  if (value.isTensor()) {
    if (value.toTensor().defined() && value.toTensor().is_privateuseone()) {
      visit(value.toTensor());
    }
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorList().vec()) {
      if (t.defined() && t.is_privateuseone()) visit(t);
    }
  }
}

// The fallback runs an op on CPU copies of its hal tensors and copies the
// written ones back. A copy cannot stand in where the op's meaning rests on
// memory shared between tensors, so those cases are errors instead of
// silently different results:
// - a returned view would alias the CPU copy, so writes through it would
//   never reach the hal tensor (views need a native kernel: aten/views.cpp);
// - a written tensor whose elements share memory (an expanded tensor) or that
//   partly overlaps another input would be computed on independent copies,
//   where CPU raises (the same checks, with CPU's messages).
void check_copy_keeps_semantics(const c10::FunctionSchema& schema,
                                const std::string& name,
                                const torch::jit::Stack& stack) {
  for (const c10::Argument& ret : schema.returns()) {
    const c10::AliasInfo* alias = ret.alias_info();
    TORCH_CHECK_NOT_IMPLEMENTED(
        alias == nullptr || alias->isWrite(), "'", name,
        "' returns a view of its input and has no hal kernel; a CPU fallback "
        "would return a copy, so writes through the view would be lost");
  }
  const size_t count = schema.arguments().size();
  const auto args = torch::jit::last(stack, count);
  for (size_t i = 0; i < count; ++i) {
    const c10::AliasInfo* alias = schema.arguments()[i].alias_info();
    if (alias == nullptr || !alias->isWrite()) continue;
    for_each_hal_tensor(args[i], [&](const at::Tensor& written) {
      at::assert_no_internal_overlap(written);
      for (size_t j = 0; j < count; ++j) {
        for_each_hal_tensor(args[j], [&](const at::Tensor& other) {
          if (!other.is_same(written))
            at::assert_no_partial_overlap(written, other);
        });
      }
    });
  }
}

}  // namespace

void fall_back_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  std::string full = name.name;
  if (!name.overload_name.empty()) full += "." + name.overload_name;
  check_copy_keeps_semantics(op.schema(), full, *stack);
  note_cpu_fallback(full);
  at::native::cpu_fallback(op, stack);
}

void note_cpu_fallback(const std::string& op) {
  TORCH_CHECK(!strict(), "HAL_STRICT=1: '", op,
              "' has no hal kernel and would fall back to CPU");
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  ++c.by_op[op];
}

std::map<std::string, int64_t> fallback_counts() {
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  return c.by_op;
}

void reset_fallback_counts() {
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  c.by_op.clear();
}

}  // namespace torch_hal
