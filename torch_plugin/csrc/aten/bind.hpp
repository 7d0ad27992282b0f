// bind<kernel, descriptor>: the function that registration hands to
// TORCH_FN for one op of a family. The native kernels of a family take the
// op's descriptor (a kernel name, an op table entry) as their first
// parameter; ATen's schemas do not have it. bind fixes it at compile time, so
// each registered op is a plain function with exactly its schema's
// parameters, and one native function serves every op of the family.
#pragma once

#include <utility>

namespace torch_hal {
namespace bind_detail {

template <auto kernel, const auto& descriptor, typename R, typename... Args>
R call(Args... args) {
  return kernel(descriptor, std::forward<Args>(args)...);
}

template <auto kernel, const auto& descriptor, typename Descriptor, typename R,
          typename... Args>
consteval auto bound(R (*)(Descriptor, Args...)) {
  return &call<kernel, descriptor, R, Args...>;
}

}  // namespace bind_detail

// `descriptor` must have static storage (an inline constexpr of the native
// headers), since it is a template argument by reference.
template <auto kernel, const auto& descriptor>
inline constexpr auto bind = bind_detail::bound<kernel, descriptor>(kernel);

}  // namespace torch_hal
