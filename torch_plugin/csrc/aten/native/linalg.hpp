// Matrix products (mm, bmm, addmm, baddbmm, addmv, dot) on the matmul and
// addmm kernels, and the attention backend choice.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2,
                   at::Tensor& out);

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2);

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2,
                    at::Tensor& out);

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2);

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                      const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out);

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1,
                 const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha);

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1,
                   const at::Tensor& mat2, const at::Scalar& beta,
                   const at::Scalar& alpha);

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1,
                        const at::Tensor& batch2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::Tensor& out);

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1,
                   const at::Tensor& batch2, const at::Scalar& beta,
                   const at::Scalar& alpha);

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1,
                     const at::Tensor& batch2, const at::Scalar& beta,
                     const at::Scalar& alpha);

// Matrix-vector products run as [M, K] @ [K, 1].
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat,
                      const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out);

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat,
                 const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha);

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat,
                   const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha);

// The inner product as [1, K] @ [K, 1] into the 0-dim result.
at::Tensor dot(const at::Tensor& self, const at::Tensor& other);

// Attention runs as the math composite (matmul, softmax, dropout): hal has no
// fused attention kernel.
int64_t fused_sdp_choice(const at::Tensor& /*query*/, const at::Tensor& /*key*/,
                         const at::Tensor& /*value*/,
                         const std::optional<at::Tensor>& /*attn_mask*/,
                         double /*dropout_p*/, bool /*is_causal*/,
                         std::optional<double> /*scale*/, bool /*enable_gqa*/);

}  // namespace torch_hal::native
