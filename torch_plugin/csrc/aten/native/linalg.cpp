// Matrix products of the hal backend: mm, bmm, addmm, baddbmm, addmv and dot
// on the standard kernels `matmul` and `addmm`, plus the attention backend
// choice that makes scaled_dot_product_attention decompose into them.
//
// The kernels take any strides, so transposed and sliced operands (the
// backward of linear is mm with transposes) and broadcast biases go in as
// views; vectors become [n, 1] / [1, n] views of rank 2. Composite ops
// (linear, matmul, mv, einsum...) reach these by themselves. Each op is
// written once as its out= form; the functional and in-place forms wrap it.
#include "aten/native/linalg.hpp"

#include <ATen/SDPBackend.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

// The functional form of an out= implementation: `out_fn(args..., out)`
// writes into a fresh tensor, which write_out sizes.
template <typename OutFn, typename... Args>
at::Tensor into_new(const at::Tensor& like, at::ScalarType dtype, OutFn out_fn,
                    const Args&... args) {
  at::Tensor out = empty_like_device(like, {0}, dtype);
  out_fn(args..., out);
  return out;
}

// In-place forms write into self, which must already have the result's size.
void check_in_place(const at::Tensor& self, at::IntArrayRef sizes) {
  TORCH_CHECK(self.sizes() == sizes, "Bad in-place call: input tensor size ",
              self.sizes(), " and output tensor size ", sizes, " should match");
}

void check_operands(const char* op, std::initializer_list<at::Tensor> tensors) {
  const at::Tensor& first = *tensors.begin();
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.device() == first.device(),
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                first.device(), " and ", t.device(), " (in ", op, ")");
    TORCH_CHECK(t.scalar_type() == first.scalar_type(), op,
                ": expected all operands to have the same dtype, but got ",
                first.scalar_type(), " and ", t.scalar_type());
  }
}

// Result sizes of a (batched) product a @ b of rank `rank`, after torch's
// checks of shapes.
std::vector<int64_t> product_sizes(const char* op, const at::Tensor& a,
                                   const at::Tensor& b, int64_t rank) {
  TORCH_CHECK(a.dim() == rank && b.dim() == rank, op, ": expected ", rank,
              "-D tensors, but got ", a.dim(), "-D and ", b.dim(), "-D");
  check_operands(op, {a, b});
  std::vector<int64_t> sizes(a.sizes().begin(), a.sizes().end());
  TORCH_CHECK(a.size(-1) == b.size(-2), op, ": shapes cannot be multiplied (",
              a.sizes(), " and ", b.sizes(), ")");
  if (rank == 3) {
    TORCH_CHECK(a.size(0) == b.size(0), op,
                ": batch1 and batch2 must have the same number of batches, "
                "got ",
                a.size(0), " and ", b.size(0));
  }
  sizes.back() = b.size(-1);
  return sizes;
}

at::Tensor& product_out(const char* op, const at::Tensor& a,
                        const at::Tensor& b, int64_t rank, at::Tensor& out) {
  const std::vector<int64_t> sizes = product_sizes(op, a, b, rank);
  return write_out(out, sizes, a.scalar_type(), [&](const at::Tensor& result) {
    launch(result, "matmul",
           {tensor_arg(result), tensor_arg(a), tensor_arg(b)});
  });
}

// out = beta * self + alpha * (a @ b), self broadcast to the result's size.
at::Tensor& add_product_out(const char* op, const at::Tensor& self,
                            const at::Tensor& a, const at::Tensor& b,
                            const at::Scalar& beta, const at::Scalar& alpha,
                            int64_t rank, at::Tensor& out) {
  const std::vector<int64_t> sizes = product_sizes(op, a, b, rank);
  check_operands(op, {self, a});
  return write_out(out, sizes, a.scalar_type(), [&](const at::Tensor& result) {
    launch(result, "addmm",
           {tensor_arg(result), broadcast_tensor_arg(self, sizes),
            tensor_arg(a), tensor_arg(b), scalar_arg(beta), scalar_arg(alpha)});
  });
}

}  // namespace

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2,
                   at::Tensor& out) {
  return product_out("mm", self, mat2, 2, out);
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  return into_new(self, self.scalar_type(), mm_out, self, mat2);
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2,
                    at::Tensor& out) {
  return product_out("bmm", self, mat2, 3, out);
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  return into_new(self, self.scalar_type(), bmm_out, self, mat2);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                      const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  return add_product_out("addmm", self, mat1, mat2, beta, alpha, 2, out);
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1,
                 const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  return into_new(mat1, mat1.scalar_type(), addmm_out, self, mat1, mat2, beta,
                  alpha);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1,
                   const at::Tensor& mat2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  check_in_place(self, product_sizes("addmm_", mat1, mat2, 2));
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1,
                        const at::Tensor& batch2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::Tensor& out) {
  return add_product_out("baddbmm", self, batch1, batch2, beta, alpha, 3, out);
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1,
                   const at::Tensor& batch2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  return into_new(batch1, batch1.scalar_type(), baddbmm_out, self, batch1,
                  batch2, beta, alpha);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1,
                     const at::Tensor& batch2, const at::Scalar& beta,
                     const at::Scalar& alpha) {
  check_in_place(self, product_sizes("baddbmm_", batch1, batch2, 3));
  return baddbmm_out(self, batch1, batch2, beta, alpha, self);
}

// Matrix-vector products run as [M, K] @ [K, 1].
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat,
                      const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1,
              "addmv: expected a matrix and a vector, but got ", mat.dim(),
              "-D and ", vec.dim(), "-D tensors");
  const at::Tensor column = vec.unsqueeze(1);
  const int64_t rows = product_sizes("addmv", mat, column, 2)[0];
  check_operands("addmv", {self, mat});
  const at::Tensor c = self.expand({rows}).unsqueeze(1);
  return write_out(
      out, {rows}, mat.scalar_type(), [&](const at::Tensor& result) {
        const at::Tensor result_column = result.unsqueeze(1);
        launch(result, "addmm",
               {tensor_arg(result_column), tensor_arg(c), tensor_arg(mat),
                tensor_arg(column), scalar_arg(beta), scalar_arg(alpha)});
      });
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat,
                 const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  return into_new(mat, mat.scalar_type(), addmv_out, self, mat, vec, beta,
                  alpha);
}

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat,
                   const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  TORCH_CHECK(mat.dim() == 2, "addmv: expected a matrix, but got a ", mat.dim(),
              "-D tensor");
  check_in_place(self, {mat.size(0)});
  return addmv_out(self, mat, vec, beta, alpha, self);
}

// The inner product as [1, K] @ [K, 1] into the 0-dim result.
at::Tensor dot(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1,
              "1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  TORCH_CHECK(self.size(0) == other.size(0),
              "inconsistent tensor size, expected tensor [", self.size(0),
              "] and src [", other.size(0),
              "] to have the same number of elements, but got ", self.size(0),
              " and ", other.size(0), " elements respectively");
  at::Tensor out = empty_like_device(self, {}, self.scalar_type());
  at::Tensor out_matrix = out.as_strided({1, 1}, {1, 1});
  product_out("dot", self.unsqueeze(0), other.unsqueeze(1), 2, out_matrix);
  return out;
}

// Attention runs as the math composite (matmul, softmax, dropout): hal has no
// fused attention kernel.
int64_t fused_sdp_choice(const at::Tensor& /*query*/, const at::Tensor& /*key*/,
                         const at::Tensor& /*value*/,
                         const std::optional<at::Tensor>& /*attn_mask*/,
                         double /*dropout_p*/, bool /*is_causal*/,
                         std::optional<double> /*scale*/, bool /*enable_gqa*/) {
  return static_cast<int64_t>(at::SDPBackend::math);
}

}  // namespace torch_hal::native
