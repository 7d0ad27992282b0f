// Set membership of the hal backend: isin, composed from the comparison and
// reduction kernels. Every element is compared with every test value (a
// broadcast eq into an elements x tests mask) and the mask is reduced with
// any. That is one pass on a GPU for the small test sets models use (token
// ids, a vocabulary's special tokens); a product beyond kLargestMask goes to
// the CPU fallback, whose sort-based algorithm needs no such mask.
#include "aten/native/search.hpp"

#include <ATen/native/CPUFallback.h>
#include <ATen/ops/any.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/isin.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/ne.h>
#include <torch/library.h>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

constexpr int64_t kLargestMask = int64_t{1} << 26;

}  // namespace

at::Tensor& isin_out(const at::Tensor& elements,
                     const at::Tensor& test_elements, bool assume_unique,
                     bool invert, at::Tensor& out) {
  TORCH_CHECK(elements.scalar_type() != at::kBool &&
                  test_elements.scalar_type() != at::kBool,
              "Unsupported input type encountered for isin(): Bool");
  if (elements.numel() * test_elements.numel() > kLargestMask) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu,
        at::_ops::isin_Tensor_Tensor_out>::call(elements, test_elements,
                                                assume_unique, invert, out);
  }
  return write_out(
      out, elements.sizes(), at::kBool, [&](const at::Tensor& result) {
        if (result.numel() == 0) return;
        if (test_elements.numel() == 0) {
          launch(result, "fill", {tensor_arg(result), int_arg(invert ? 1 : 0)});
          return;
        }
        const at::Tensor matches =
            at::eq(elements.unsqueeze(-1), test_elements.reshape({-1}));
        at::Tensor found = result.unsqueeze(-1);
        at::any_out(found, matches, -1, /*keepdim=*/true);
        if (invert) {
          at::Tensor inverted = result;
          at::logical_not_out(inverted, result);
        }
      });
}

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test_elements,
                bool assume_unique, bool invert) {
  at::Tensor out = empty_like_device(elements, elements.sizes(), at::kBool);
  return isin_out(elements, test_elements, assume_unique, invert, out);
}

at::Tensor& isin_scalar_out(const at::Tensor& elements,
                            const at::Scalar& test_element,
                            bool /*assume_unique*/, bool invert,
                            at::Tensor& out) {
  return invert ? at::ne_out(out, elements, test_element)
                : at::eq_out(out, elements, test_element);
}

at::Tensor isin_scalar(const at::Tensor& elements,
                       const at::Scalar& test_element, bool assume_unique,
                       bool invert) {
  at::Tensor out = empty_like_device(elements, elements.sizes(), at::kBool);
  return isin_scalar_out(elements, test_element, assume_unique, invert, out);
}

}  // namespace torch_hal::native
