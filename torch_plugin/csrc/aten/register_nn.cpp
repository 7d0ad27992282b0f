// Layers, losses and optimizers: matmul, convolution, batch and layer norm,
// pooling, the losses and the fused optimizer steps.
#include <torch/library.h>

#include "aten/native/conv.hpp"
#include "aten/native/linalg.hpp"
#include "aten/native/nn.hpp"
#include "aten/native/optim.hpp"
#include "aten/native/pooling.hpp"

namespace torch_hal {
namespace {

// The fused optimizer schemas, lr as a float or a tensor, over one native
// step each.
template <typename LrArg>
void fused_sgd(at::TensorList self, at::TensorList grads,
               at::TensorList momentum_buffer_list, double weight_decay,
               double momentum, LrArg lr, double dampening, bool nesterov,
               bool maximize, bool is_first_step,
               const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  native::sgd_steps(self, grads, momentum_buffer_list, weight_decay, momentum,
                    native::Lr(lr), dampening, nesterov, maximize,
                    is_first_step, grad_scale, found_inf);
}

// _fused_adam_ (kDecoupled false) and _fused_adamw_ (true).
template <typename LrArg, bool kDecoupled>
void fused_adam(at::TensorList self, at::TensorList grads,
                at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                LrArg lr, double beta1, double beta2, double weight_decay,
                double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  native::adam_steps(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                     state_steps, native::Lr(lr), beta1, beta2, weight_decay,
                     eps, amsgrad, maximize, kDecoupled, grad_scale, found_inf);
}

using TensorLr = const at::Tensor&;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", TORCH_FN(native::mm));
  m.impl("mm.out", TORCH_FN(native::mm_out));
  m.impl("bmm", TORCH_FN(native::bmm));
  m.impl("bmm.out", TORCH_FN(native::bmm_out));
  m.impl("addmm", TORCH_FN(native::addmm));
  m.impl("addmm_", TORCH_FN(native::addmm_));
  m.impl("addmm.out", TORCH_FN(native::addmm_out));
  m.impl("baddbmm", TORCH_FN(native::baddbmm));
  m.impl("baddbmm_", TORCH_FN(native::baddbmm_));
  m.impl("baddbmm.out", TORCH_FN(native::baddbmm_out));
  m.impl("addmv", TORCH_FN(native::addmv));
  m.impl("addmv_", TORCH_FN(native::addmv_));
  m.impl("addmv.out", TORCH_FN(native::addmv_out));
  m.impl("dot", TORCH_FN(native::dot));
  m.impl("_fused_sdp_choice", TORCH_FN(native::fused_sdp_choice));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", TORCH_FN(native::convolution));
  m.impl("convolution_backward_overrideable",
         TORCH_FN(native::convolution_backward));
  m.impl("max_pool2d_with_indices", TORCH_FN(native::max_pool2d_with_indices));
  m.impl("max_pool2d_with_indices.out",
         TORCH_FN(native::max_pool2d_with_indices_out));
  m.impl("max_pool2d_with_indices_backward",
         TORCH_FN(native::max_pool2d_with_indices_backward));
  m.impl("max_pool2d_with_indices_backward.grad_input",
         TORCH_FN(native::max_pool2d_with_indices_backward_out));
  m.impl("native_batch_norm", TORCH_FN(native::native_batch_norm));
  m.impl("native_batch_norm_backward",
         TORCH_FN(native::batch_norm_backward_impl));
  m.impl("_native_batch_norm_legit", TORCH_FN(native::native_batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats",
         TORCH_FN(native::native_batch_norm_legit_no_stats));
  m.impl("_batch_norm_with_update", TORCH_FN(native::batch_norm_with_update));
  m.impl("_batch_norm_no_update", TORCH_FN(native::batch_norm_no_update));
  m.impl("batch_norm_backward", TORCH_FN(native::batch_norm_backward));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_layer_norm", TORCH_FN(native::native_layer_norm));
  m.impl("native_layer_norm_backward",
         TORCH_FN(native::native_layer_norm_backward));
  m.impl("nll_loss_forward", TORCH_FN(native::nll_loss_forward));
  m.impl("nll_loss_forward.output", TORCH_FN(native::nll_loss_forward_out));
  m.impl("nll_loss_backward", TORCH_FN(native::nll_loss_backward));
  m.impl("nll_loss_backward.grad_input",
         TORCH_FN(native::nll_loss_backward_out));
  m.impl("embedding_dense_backward",
         TORCH_FN(native::embedding_dense_backward));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("avg_pool2d", TORCH_FN(native::avg_pool2d));
  m.impl("avg_pool2d.out", TORCH_FN(native::avg_pool2d_out));
  m.impl("avg_pool2d_backward", TORCH_FN(native::avg_pool2d_backward));
  m.impl("avg_pool2d_backward.grad_input",
         TORCH_FN(native::avg_pool2d_backward_out));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(native::adaptive_avg_pool2d));
  m.impl("_adaptive_avg_pool2d_backward",
         TORCH_FN(native::adaptive_avg_pool2d_backward));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sgd_", TORCH_FN(fused_sgd<double>));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(fused_sgd<TensorLr>));
  m.impl("_fused_adam_", TORCH_FN((fused_adam<double, false>)));
  m.impl("_fused_adam_.tensor_lr", TORCH_FN((fused_adam<TensorLr, false>)));
  m.impl("_fused_adamw_", TORCH_FN((fused_adam<double, true>)));
  m.impl("_fused_adamw_.tensor_lr", TORCH_FN((fused_adam<TensorLr, true>)));
}

}  // namespace torch_hal
