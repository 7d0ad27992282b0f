// Creating, rearranging and indexing tensors: factories and random
// fills, cat/flip/roll/tril/triu, the indexing ops, and isin.
#include <torch/library.h>

#include "aten/native/advanced_indexing.hpp"
#include "aten/native/factories.hpp"
#include "aten/native/indexing.hpp"
#include "aten/native/random.hpp"
#include "aten/native/search.hpp"
#include "aten/native/shape.hpp"

namespace torch_hal {
namespace {

template <native::Triangle kPart>
at::Tensor triangle(const at::Tensor& self, int64_t diagonal) {
  return native::triangle(self, diagonal, kPart);
}

template <native::Triangle kPart>
at::Tensor& triangle_(at::Tensor& self, int64_t diagonal) {
  return native::triangle_out(self, diagonal, kPart, self);
}

template <native::Triangle kPart>
at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal,
                         at::Tensor& out) {
  return native::triangle_out(self, diagonal, kPart, out);
}

// The three forms of an update `kUpdate(target, dim, index, source...)`:
// on self in place, on a copy of self (functional), or on a copy in out.
template <auto kUpdate, typename... Source>
struct Update {
  static at::Tensor& in_place(at::Tensor& self, int64_t dim,
                              const at::Tensor& index, Source... source) {
    kUpdate(self, dim, index, source...);
    return self;
  }

  static at::Tensor& out(const at::Tensor& self, int64_t dim,
                         const at::Tensor& index, Source... source,
                         at::Tensor& out) {
    return native::updated_copy_out(self, out, [&](const at::Tensor& result) {
      kUpdate(result, dim, index, source...);
    });
  }

  static at::Tensor functional(const at::Tensor& self, int64_t dim,
                               const at::Tensor& index, Source... source) {
    at::Tensor result = native::new_result(self);
    return out(self, dim, index, source..., result);
  }
};

using ScatterSrc = Update<native::scatter_src_into, const at::Tensor&>;
using ScatterValue = Update<native::scatter_value_into, const at::Scalar&>;
using ScatterAdd = Update<native::scatter_add_into, const at::Tensor&>;
using IndexAdd =
    Update<native::index_add_into, const at::Tensor&, const at::Scalar&>;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("arange.start_out", TORCH_FN(native::arange_out));
  m.impl("linspace.out", TORCH_FN(native::linspace_out));
  m.impl("logspace.out", TORCH_FN(native::logspace_out));
  m.impl("eye.out", TORCH_FN(native::eye_out));
  m.impl("eye.m_out", TORCH_FN(native::eye_m_out));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", TORCH_FN(native::uniform));
  m.impl("random_.from", TORCH_FN(native::random_from_to));
  m.impl("random_.to", TORCH_FN(native::random_to));
  m.impl("normal_", TORCH_FN(native::normal));
  m.impl("normal.Tensor_float", TORCH_FN(native::normal_tensor_float));
  m.impl("normal.Tensor_float_out", TORCH_FN(native::normal_tensor_float_out));
  m.impl("normal.float_Tensor", TORCH_FN(native::normal_float_tensor));
  m.impl("normal.float_Tensor_out", TORCH_FN(native::normal_float_tensor_out));
  m.impl("normal.Tensor_Tensor", TORCH_FN(native::normal_tensor_tensor));
  m.impl("normal.Tensor_Tensor_out",
         TORCH_FN(native::normal_tensor_tensor_out));
  m.impl("bernoulli_.float", TORCH_FN(native::bernoulli_scalar));
  m.impl("bernoulli_.Tensor", TORCH_FN(native::bernoulli_tensor));
  m.impl("bernoulli.out", TORCH_FN(native::bernoulli_out));
  m.impl("native_dropout", TORCH_FN(native::native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native::native_dropout_backward));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", TORCH_FN(native::cat));
  m.impl("cat.out", TORCH_FN(native::cat_out));
  m.impl("flip", TORCH_FN(native::flip));
  m.impl("roll", TORCH_FN(native::roll));
  m.impl("tril", TORCH_FN(triangle<native::Triangle::lower>));
  m.impl("tril_", TORCH_FN(triangle_<native::Triangle::lower>));
  m.impl("tril.out", TORCH_FN(triangle_out<native::Triangle::lower>));
  m.impl("triu", TORCH_FN(triangle<native::Triangle::upper>));
  m.impl("triu_", TORCH_FN(triangle_<native::Triangle::upper>));
  m.impl("triu.out", TORCH_FN(triangle_out<native::Triangle::upper>));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", TORCH_FN(native::index_select));
  m.impl("index_select.out", TORCH_FN(native::index_select_out));
  m.impl("gather", TORCH_FN(native::gather));
  m.impl("gather.out", TORCH_FN(native::gather_out));

  m.impl("scatter.src", TORCH_FN(ScatterSrc::functional));
  m.impl("scatter_.src", TORCH_FN(ScatterSrc::in_place));
  m.impl("scatter.src_out", TORCH_FN(ScatterSrc::out));
  m.impl("scatter.value", TORCH_FN(ScatterValue::functional));
  m.impl("scatter_.value", TORCH_FN(ScatterValue::in_place));
  m.impl("scatter.value_out", TORCH_FN(ScatterValue::out));
  m.impl("scatter_add", TORCH_FN(ScatterAdd::functional));
  m.impl("scatter_add_", TORCH_FN(ScatterAdd::in_place));
  m.impl("scatter_add.out", TORCH_FN(ScatterAdd::out));
  m.impl("index_add", TORCH_FN(IndexAdd::functional));
  m.impl("index_add_", TORCH_FN(IndexAdd::in_place));
  m.impl("index_add.out", TORCH_FN(IndexAdd::out));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index.Tensor", TORCH_FN(native::index));
  m.impl("index.Tensor_out", TORCH_FN(native::index_out));
  m.impl("_index_put_impl_", TORCH_FN(native::index_put));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isin.Tensor_Tensor", TORCH_FN(native::isin));
  m.impl("isin.Tensor_Tensor_out", TORCH_FN(native::isin_out));
  m.impl("isin.Tensor_Scalar", TORCH_FN(native::isin_scalar));
  m.impl("isin.Tensor_Scalar_out", TORCH_FN(native::isin_scalar_out));
}

}  // namespace torch_hal
