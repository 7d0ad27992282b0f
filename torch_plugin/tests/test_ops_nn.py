"""Neural-network ops on hal (native_layer_norm and its backward, nll_loss
forward/backward and so CrossEntropyLoss, embedding_dense_backward) against
the CPU: shapes, optional weight/bias, reductions, ignore_index, padding_idx,
autograd, and no CPU fallback (HAL_STRICT=1 through the `strict` fixture, or
the fallback counters where other families' ops take part)."""

import pytest
import torch

from hal_testing import close, fallbacks_of, hal
from torch import nn
from torch.nn import functional as F

HAL = "hal"
# The ops of this family; none of them may fall back to the CPU.
NN_OPS = ("native_layer_norm", "native_layer_norm_backward", "nll_loss_forward",
          "nll_loss_backward", "embedding_dense_backward", "_log_softmax",
          "_log_softmax_backward_data", "index_select")


def nn_fallbacks():
    return fallbacks_of(NN_OPS)


def sample(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def labels(n, classes, seed=0):
    return torch.randint(0, classes, (n,), generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------ layer_norm

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("normalized", [(6,), (4, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward(strict, dtype, normalized, affine):
    x = sample(3, 4, 6, dtype=dtype)
    w = sample(*normalized, dtype=dtype, seed=1) if affine else None
    b = sample(*normalized, dtype=dtype, seed=2) if affine else None
    expected = torch.native_layer_norm(x, normalized, w, b, 1e-5)
    actual = torch.native_layer_norm(hal(x), normalized, w if w is None else hal(w),
                                     b if b is None else hal(b), 1e-5)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        close(a, e)
    # A transposed input: read through its strides.
    xt = x.transpose(0, 1)
    close(F.layer_norm(hal(xt), (6,)), F.layer_norm(xt, (6,)))


def test_layer_norm_rejects_mismatched_shapes(strict):
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(hal(sample(3, 5)), (4,))
    with pytest.raises(RuntimeError, match="weight"):
        F.layer_norm(hal(sample(3, 4)), (4,), hal(sample(5)))


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_backward_matches_cpu(strict, affine):
    x, grad = sample(5, 8, dtype=torch.float64), sample(5, 8, dtype=torch.float64, seed=3)
    cpu_norm = nn.LayerNorm(8, elementwise_affine=affine, dtype=torch.float64)
    if affine:
        with torch.no_grad():
            cpu_norm.weight.copy_(sample(8, dtype=torch.float64, seed=1))
            cpu_norm.bias.copy_(sample(8, dtype=torch.float64, seed=2))
    hal_norm = nn.LayerNorm(8, elementwise_affine=affine, dtype=torch.float64).to(HAL)
    hal_norm.load_state_dict(cpu_norm.state_dict())
    cpu_x, hal_x = x.clone().requires_grad_(), hal(x).requires_grad_()
    cpu_norm(cpu_x).backward(grad)
    hal_norm(hal_x).backward(hal(grad))
    close(hal_x.grad, cpu_x.grad)
    if affine:
        close(hal_norm.weight.grad, cpu_norm.weight.grad)
        close(hal_norm.bias.grad, cpu_norm.bias.grad)


def test_layer_norm_gradcheck():
    torch.hal.reset_fallback_stats()
    x = hal(sample(3, 4, dtype=torch.float64)).requires_grad_()
    w = hal(sample(4, dtype=torch.float64, seed=1)).requires_grad_()
    b = hal(sample(4, dtype=torch.float64, seed=2)).requires_grad_()
    assert torch.autograd.gradcheck(lambda *t: F.layer_norm(t[0], (4,), t[1], t[2]), (x, w, b))
    assert nn_fallbacks() == {}


# ------------------------------------------------------------------ nll_loss

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nll_loss_forward_and_backward(strict, reduction, weighted, dtype):
    logp = torch.log_softmax(sample(6, 4, dtype=dtype), 1)
    target = labels(6, 4)
    target[2] = -100  # ignored
    weight = sample(4, dtype=dtype, seed=5).abs() if weighted else None
    cpu_in = logp.clone().requires_grad_()
    expected = F.nll_loss(cpu_in, target, weight, reduction=reduction)
    hal_in = hal(logp).requires_grad_()
    actual = F.nll_loss(hal_in, hal(target), None if weight is None else hal(weight),
                        reduction=reduction)
    close(actual, expected)
    grad = sample(*expected.shape, dtype=dtype, seed=4)
    expected.backward(grad)
    actual.backward(hal(grad))
    close(hal_in.grad, cpu_in.grad)


def test_nll_loss_single_sample_and_out(strict):
    logp = torch.log_softmax(sample(5), 0)
    target = torch.tensor(3)
    close(F.nll_loss(hal(logp), hal(target)), F.nll_loss(logp, target))
    output, total = hal(torch.empty(0)), hal(torch.empty(0))
    torch.ops.aten.nll_loss_forward.output(hal(logp[None]), hal(target[None]), None, 2, -100,
                                           output=output, total_weight=total)
    expected = torch.ops.aten.nll_loss_forward(logp[None], target[None], None, 2, -100)
    close(output, expected[0])
    close(total, expected[1])


def test_nll_loss_rejects_bad_shapes(strict):
    with pytest.raises(RuntimeError, match="size mismatch"):
        torch.ops.aten.nll_loss_forward(hal(sample(3, 4)), hal(labels(5, 4)), None, 1, -100)
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.nll_loss(hal(sample(3, 4)), hal(labels(3, 4)), hal(sample(3)))


def test_cross_entropy_trains_like_cpu(strict):
    logits, target = sample(8, 5), labels(8, 5)
    cpu_logits, hal_logits = logits.clone().requires_grad_(), hal(logits).requires_grad_()
    expected = F.cross_entropy(cpu_logits, target)
    actual = F.cross_entropy(hal_logits, hal(target))
    close(actual, expected)
    expected.backward()
    actual.backward()
    close(hal_logits.grad, cpu_logits.grad)


def test_nll_loss_gradcheck():
    torch.hal.reset_fallback_stats()
    x = hal(sample(4, 3, dtype=torch.float64)).requires_grad_()
    target = hal(labels(4, 3))
    assert torch.autograd.gradcheck(lambda t: F.cross_entropy(t, target), (x,))
    assert nn_fallbacks() == {}


# ------------------------------------------------------------------ embedding

@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_forward_and_backward(strict, padding_idx, scale_grad_by_freq):
    weight = sample(6, 3, dtype=torch.float64)
    tokens = torch.tensor([[0, 2, 5, 2], [1, 2, 0, 4]])
    grad = sample(2, 4, 3, dtype=torch.float64, seed=7)
    cpu_w, hal_w = weight.clone().requires_grad_(), hal(weight).requires_grad_()
    expected = F.embedding(tokens, cpu_w, padding_idx, scale_grad_by_freq=scale_grad_by_freq)
    actual = F.embedding(hal(tokens), hal_w, padding_idx, scale_grad_by_freq=scale_grad_by_freq)
    close(actual, expected)
    expected.backward(grad)
    actual.backward(hal(grad))
    close(hal_w.grad, cpu_w.grad)


def test_embedding_dense_backward_int32_indices(strict):
    grad = sample(5, 2)
    indices = torch.tensor([3, 0, 3, 1, 0], dtype=torch.int32)
    close(torch.ops.aten.embedding_dense_backward(hal(grad), hal(indices), 4, -1, False),
          torch.ops.aten.embedding_dense_backward(grad, indices, 4, -1, False))
