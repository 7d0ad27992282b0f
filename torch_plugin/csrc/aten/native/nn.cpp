// Neural-network ops of the hal backend: native_layer_norm and its backward,
// nll_loss_forward/nll_loss_backward (with _log_softmax, the pieces of
// CrossEntropyLoss), and embedding_dense_backward (the weight gradient of
// nn.Embedding, an index_add into zeros).
#include "aten/native/nn.hpp"

#include <c10/util/StringUtil.h>
#include <torch/library.h>

#include <array>
#include <tuple>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

void check_same_device(const char* op, const at::Tensor& self,
                       const at::Tensor& other, const char* name) {
  TORCH_CHECK(other.device() == self.device(), op, ": expected ", name,
              " on the same device as the input (", self.device(),
              "), got one on ", other.device());
}

// An optional parameter (weight, bias) in the input's dtype, undefined when
// absent.
at::Tensor parameter_like(const char* op, const at::Tensor& input,
                          const std::optional<at::Tensor>& parameter) {
  if (!parameter.has_value() || !parameter->defined()) return {};
  check_same_device(op, input, *parameter, "weight and bias");
  return to_dtype(*parameter, input.scalar_type());
}

// ---- layer_norm

// Checks torch's layer_norm shape rules; returns the number of leading
// (not normalized) dims of `input`.
int64_t layer_norm_axis(const at::Tensor& input,
                        at::IntArrayRef normalized_shape,
                        const at::Tensor& weight, const at::Tensor& bias) {
  const int64_t normalized_ndim = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(normalized_ndim >= 1,
              "Expected normalized_shape to be at least "
              "1-dimensional, i.e., containing at least one element, but got "
              "normalized_shape = ",
              normalized_shape);
  TORCH_CHECK(!weight.defined() || weight.sizes() == normalized_shape,
              "Expected weight to be of same shape as normalized_shape, but "
              "got weight of shape ",
              weight.sizes(), " and normalized_shape = ", normalized_shape);
  TORCH_CHECK(!bias.defined() || bias.sizes() == normalized_shape,
              "Expected bias to be of same shape as normalized_shape, but got "
              "bias of shape ",
              bias.sizes(), " and normalized_shape = ", normalized_shape);
  const int64_t axis = input.dim() - normalized_ndim;
  TORCH_CHECK(axis >= 0 && input.sizes().slice(axis) == normalized_shape,
              "Given normalized_shape=", normalized_shape,
              ", expected input with shape [*, ",
              c10::Join(", ", normalized_shape), "], but got input of size",
              input.sizes());
  return axis;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(
    const at::Tensor& input, c10::SymIntArrayRef normalized_shape_sym,
    const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& bias_opt, double eps) {
  const at::IntArrayRef normalized_shape =
      C10_AS_INTARRAYREF_SLOW(normalized_shape_sym);
  const at::Tensor weight = parameter_like("layer_norm", input, weight_opt);
  const at::Tensor bias = parameter_like("layer_norm", input, bias_opt);
  const int64_t axis = layer_norm_axis(input, normalized_shape, weight, bias);
  // The statistics keep the normalized dims with size 1, as torch's do.
  std::vector<int64_t> stats_sizes(input.sizes().begin(),
                                   input.sizes().begin() + axis);
  stats_sizes.resize(input.dim(), 1);
  const at::ScalarType type = input.scalar_type();
  at::Tensor out = empty_like_device(input, input.sizes(), type);
  at::Tensor mean = empty_like_device(input, stats_sizes, type);
  at::Tensor rstd = empty_like_device(input, stats_sizes, type);
  launch(
      input, "layer_norm",
      {tensor_arg(out), tensor_arg(mean), tensor_arg(rstd), tensor_arg(input),
       optional_tensor_arg(weight), optional_tensor_arg(bias),
       int_arg(input.dim() - axis), float_arg(eps)});
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    c10::SymIntArrayRef normalized_shape_sym, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& /*bias_opt*/,
    std::array<bool, 3> output_mask) {
  const at::IntArrayRef normalized_shape =
      C10_AS_INTARRAYREF_SLOW(normalized_shape_sym);
  const at::Tensor weight =
      parameter_like("layer_norm_backward", input, weight_opt);
  const int64_t axis = layer_norm_axis(input, normalized_shape, weight, {});
  const at::ScalarType type = input.scalar_type();
  const auto gradient = [&](bool wanted, at::IntArrayRef sizes) {
    return wanted ? empty_like_device(input, sizes, type) : at::Tensor();
  };
  at::Tensor grad_input = gradient(output_mask[0], input.sizes());
  at::Tensor grad_weight = gradient(output_mask[1], normalized_shape);
  at::Tensor grad_bias = gradient(output_mask[2], normalized_shape);
  if (grad_input.defined() || grad_weight.defined() || grad_bias.defined()) {
    launch(input, "layer_norm_backward",
           {optional_tensor_arg(grad_input), optional_tensor_arg(grad_weight),
            optional_tensor_arg(grad_bias),
            tensor_arg(to_dtype(grad_out, type)), tensor_arg(input),
            tensor_arg(to_dtype(mean, type)), tensor_arg(to_dtype(rstd, type)),
            optional_tensor_arg(weight), int_arg(input.dim() - axis)});
  }
  return {grad_input, grad_weight, grad_bias};
}

namespace {

// ---- nll_loss

constexpr int64_t kReductionNone = 0;  // at::Reduction::None

// Checks torch's nll_loss shape rules; returns the target as the kernels take
// it.
at::Tensor nll_loss_target(const char* op, const at::Tensor& input,
                           const at::Tensor& target, const at::Tensor& weight) {
  TORCH_CHECK(input.dim() >= 1 && input.dim() <= 2, op,
              ": input tensor should be 1D or 2D, got ", input.dim(), "D");
  TORCH_CHECK(target.dim() <= 1, op,
              ": 0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = input.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch_dim || input.size(0) == target.size(0), op,
              ": size mismatch (got input: ", input.sizes(),
              ", target: ", target.sizes(), ")");
  const int64_t classes = input.size(-1);
  TORCH_CHECK(
      !weight.defined() || (weight.dim() <= 1 && weight.numel() == classes), op,
      ": weight tensor should be defined either for all ", classes,
      " classes or no classes but got weight tensor of shape: ",
      weight.sizes());
  check_same_device(op, input, target, "target");
  TORCH_CHECK(at::isIntegralType(target.scalar_type(), /*includeBool=*/false),
              op, ": expected an integral target, got ", target.scalar_type());
  return to_dtype(target, at::kLong);
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight_opt, int64_t reduction,
    c10::SymInt ignore_index, at::Tensor& output, at::Tensor& total_weight) {
  const at::Tensor weight = parameter_like("nll_loss", self, weight_opt);
  const at::Tensor long_target =
      nll_loss_target("nll_loss", self, target, weight);
  const std::vector<int64_t> output_sizes =
      reduction == kReductionNone && self.dim() == 2
          ? std::vector<int64_t>{self.size(0)}
          : std::vector<int64_t>{};
  const at::ScalarType type = self.scalar_type();
  write_out(output, output_sizes, type, [&](const at::Tensor& loss) {
    write_out(total_weight, {}, type, [&](const at::Tensor& weight_sum) {
      launch(loss, "nll_loss",
             {tensor_arg(loss), tensor_arg(weight_sum), tensor_arg(self),
              tensor_arg(long_target), optional_tensor_arg(weight),
              int_arg(reduction), int_arg(ignore_index.expect_int())});
    });
  });
  return {output, total_weight};
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction,
    c10::SymInt ignore_index) {
  at::Tensor output = empty_like_device(self, {0}, self.scalar_type());
  at::Tensor total_weight = empty_like_device(self, {}, self.scalar_type());
  nll_loss_forward_out(self, target, weight, reduction, std::move(ignore_index),
                       output, total_weight);
  return {output, total_weight};
}

at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output,
                                  const at::Tensor& self,
                                  const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight_opt,
                                  int64_t reduction, c10::SymInt ignore_index,
                                  const at::Tensor& total_weight,
                                  at::Tensor& grad_input) {
  const at::Tensor weight =
      parameter_like("nll_loss_backward", self, weight_opt);
  const at::Tensor long_target =
      nll_loss_target("nll_loss_backward", self, target, weight);
  const bool per_sample = reduction == kReductionNone && self.dim() == 2;
  TORCH_CHECK(
      per_sample ? grad_output.dim() == 1 && grad_output.size(0) == self.size(0)
                 : grad_output.numel() == 1,
      "nll_loss_backward: grad_output of shape ", grad_output.sizes(),
      " does not match the loss of input ", self.sizes(), " with reduction ",
      reduction);
  TORCH_CHECK(total_weight.numel() == 1,
              "nll_loss_backward: expected total_weight to be a single element "
              "tensor, got: ",
              total_weight.sizes());
  check_same_device("nll_loss_backward", self, grad_output, "grad_output");
  check_same_device("nll_loss_backward", self, total_weight, "total_weight");
  const at::ScalarType type = self.scalar_type();
  const at::Tensor grad =
      to_dtype(per_sample ? grad_output : grad_output.reshape({}), type);
  return write_out(
      grad_input, self.sizes(), type, [&](const at::Tensor& result) {
        launch(result, "nll_loss_backward",
               {tensor_arg(result), tensor_arg(grad), tensor_arg(long_target),
                optional_tensor_arg(weight),
                tensor_arg(to_dtype(total_weight.reshape({}), type)),
                int_arg(reduction), int_arg(ignore_index.expect_int())});
      });
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output,
                             const at::Tensor& self, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight,
                             int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight) {
  at::Tensor grad_input =
      empty_like_device(self, self.sizes(), self.scalar_type());
  return nll_loss_backward_out(grad_output, self, target, weight, reduction,
                               std::move(ignore_index), total_weight,
                               grad_input);
}

namespace {

// ---- embedding

at::Tensor filled(const at::Tensor& like, at::IntArrayRef sizes,
                  at::ScalarType type, const at::Scalar& value) {
  at::Tensor t = empty_like_device(like, sizes, type);
  if (t.numel() > 0) launch(t, "fill", {tensor_arg(t), scalar_arg(value)});
  return t;
}

}  // namespace

// The gradient of embedding's weight: each row of grad_output added to the
// weight row its index selected. Rows of padding_idx get none; with
// scale_grad_by_freq each row's sum is divided by how often its index occurs.
at::Tensor embedding_dense_backward(const at::Tensor& grad_output,
                                    const at::Tensor& indices,
                                    c10::SymInt num_weights_sym,
                                    c10::SymInt padding_idx_sym,
                                    bool scale_grad_by_freq) {
  const int64_t num_weights = num_weights_sym.expect_int();
  const int64_t padding_idx = padding_idx_sym.expect_int();
  TORCH_CHECK(grad_output.dim() >= 1,
              "embedding_backward: grad_output must have a feature dim");
  check_same_device("embedding_backward", grad_output, indices, "indices");
  TORCH_CHECK(
      indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
      "embedding_backward: Expected tensor for argument #1 'indices' to have "
      "one of the "
      "following scalar types: Long, Int; but got ",
      indices.scalar_type());
  TORCH_CHECK(padding_idx < num_weights, "embedding_backward: padding_idx ",
              padding_idx, " is out of range for ", num_weights, " embeddings");
  const int64_t features = grad_output.size(-1);
  const at::Tensor flat_indices = to_dtype(indices, at::kLong).reshape({-1});
  const at::Tensor rows = grad_output.reshape({flat_indices.numel(), features});
  const at::ScalarType type = grad_output.scalar_type();
  at::Tensor grad_weight =
      filled(grad_output, {num_weights, features}, type, 0);
  launch(grad_weight, "index_add",
         {tensor_arg(grad_weight), int_arg(0), tensor_arg(flat_indices),
          tensor_arg(rows), scalar_arg(1)});
  if (scale_grad_by_freq) {
    at::Tensor counts = filled(grad_output, {num_weights}, type, 0);
    const at::Tensor ones =
        filled(grad_output, {flat_indices.numel()}, type, 1);
    launch(counts, "index_add",
           {tensor_arg(counts), int_arg(0), tensor_arg(flat_indices),
            tensor_arg(ones), scalar_arg(1)});
    // Rows no index selected hold 0 and stay 0 when divided by 1.
    launch(counts, "clamp",
           {tensor_arg(counts), tensor_arg(counts), scalar_arg(1), none_arg()});
    launch(
        grad_weight, "div",
        {tensor_arg(grad_weight), tensor_arg(grad_weight),
         tensor_arg(counts.unsqueeze(1).expand_as(grad_weight)), int_arg(0)});
  }
  if (padding_idx >= 0) {
    const at::Tensor padding_row = grad_weight.select(0, padding_idx);
    launch(padding_row, "fill", {tensor_arg(padding_row), scalar_arg(0)});
  }
  return grad_weight;
}

}  // namespace torch_hal::native
