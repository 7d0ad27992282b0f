"""Matrix products on hal (mm, bmm, addmm, baddbmm, addmv, dot and what
linear, matmul and attention decompose to) against the CPU: functional,
in-place and out= forms, transposed and sliced operands, broadcast biases,
dtypes, autograd, and no CPU fallback (HAL_STRICT=1 through the `strict`
fixture, or the fallback counters where other families' ops take part)."""

import pytest
import torch

from hal_testing import fallbacks_of, hal
from torch import nn

HAL = "hal"
# The ops of this family; none of them may fall back to the CPU.
LINALG_OPS = ("mm", "bmm", "addmm", "baddbmm", "addmv", "dot", "_fused_sdp_choice")


def close(actual, expected, **tolerance):
    torch.testing.assert_close(actual.cpu(), expected, **tolerance)


def linalg_fallbacks():
    return fallbacks_of(LINALG_OPS)


def optional_dtypes():
    supported = torch.hal.get_device_properties().supported_dtypes
    return [d for d in (torch.float16, torch.bfloat16) if d in supported]


FLOAT_DTYPES = [torch.float32, torch.float64]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mm_functional_and_out(strict, dtype):
    a, b = torch.randn(5, 7, dtype=dtype), torch.randn(7, 3, dtype=dtype)
    close(torch.mm(hal(a), hal(b)), a @ b)
    out = hal(torch.empty(0, dtype=dtype))
    result = torch.mm(hal(a), hal(b), out=out)
    assert result is out and out.shape == (5, 3)
    close(out, a @ b)


def test_mm_takes_transposed_and_sliced_operands_as_views(strict):
    a, b = torch.randn(7, 5), torch.randn(7, 8)
    ha, hb = hal(a), hal(b)
    # a.t() and a column slice with a step: neither is contiguous.
    close(torch.mm(ha.t(), hb[:7, ::2]), a.t() @ b[:7, ::2])
    close(torch.mm(hb[1:6, 1:8:2], ha[1:5]), b[1:6, 1:8:2] @ a[1:5])


def test_mm_rejects_bad_shapes_and_mixed_dtypes(strict):
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(hal(torch.randn(2, 3)), hal(torch.randn(4, 5)))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(hal(torch.randn(2, 3)), hal(torch.randn(3, 2, dtype=torch.float64)))
    with pytest.raises(RuntimeError):
        torch.mm(hal(torch.randn(2, 3, 1)), hal(torch.randn(3, 2)))


def test_integer_products_are_not_implemented(strict):
    a = torch.arange(6).reshape(2, 3)
    with pytest.raises(NotImplementedError, match="matmul"):
        torch.mm(hal(a), hal(a.t()))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bmm_functional_out_and_transposed(strict, dtype):
    a, b = torch.randn(4, 3, 5, dtype=dtype), torch.randn(4, 6, 5, dtype=dtype)
    expected = torch.bmm(a, b.transpose(1, 2))
    close(torch.bmm(hal(a), hal(b).transpose(1, 2)), expected)
    out = hal(torch.full((4, 3, 6), float("nan"), dtype=dtype))
    torch.bmm(hal(a), hal(b).transpose(1, 2), out=out)
    close(out, expected)
    with pytest.raises(RuntimeError, match="same number of batches"):
        torch.bmm(hal(a), hal(torch.randn(3, 5, 2, dtype=dtype)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_addmm_broadcast_bias_scalars_inplace_and_out(strict, dtype):
    bias, a, b = (torch.randn(4, dtype=dtype), torch.randn(3, 5, dtype=dtype),
                  torch.randn(5, 4, dtype=dtype))
    close(torch.addmm(hal(bias), hal(a), hal(b)), torch.addmm(bias, a, b))
    close(torch.addmm(hal(bias), hal(a), hal(b), beta=0.5, alpha=-2),
          torch.addmm(bias, a, b, beta=0.5, alpha=-2))
    column = torch.randn(3, 1, dtype=dtype)
    close(torch.addmm(hal(column), hal(a), hal(b)), torch.addmm(column, a, b))

    c = torch.randn(3, 4, dtype=dtype)
    hc = hal(c)
    assert hc.addmm_(hal(a), hal(b), alpha=3) is hc
    close(hc, c.addmm_(a, b, alpha=3))
    with pytest.raises(RuntimeError, match="Bad in-place call"):
        hal(bias).addmm_(hal(a), hal(b))

    out = hal(torch.empty(0, dtype=dtype))
    torch.addmm(hal(bias), hal(a), hal(b), beta=2, out=out)
    close(out, torch.addmm(bias, a, b, beta=2))


def test_addmm_with_beta_zero_ignores_nan_in_self(strict):
    a, b = torch.randn(3, 5), torch.randn(5, 4)
    nan = torch.full((3, 4), float("nan"))
    close(torch.addmm(hal(nan), hal(a), hal(b), beta=0), a @ b)


def test_addmm_out_casts_to_out_dtype(strict):
    bias, a, b = torch.randn(4), torch.randn(3, 5), torch.randn(5, 4)
    out = hal(torch.empty(3, 4, dtype=torch.float64))
    torch.addmm(hal(bias), hal(a), hal(b), out=out)
    assert out.dtype == torch.float64
    # Computed in f32, then cast.
    close(out, torch.addmm(bias, a, b).double(), rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_baddbmm_functional_inplace_and_out(strict, dtype):
    c, a, b = (torch.randn(1, 3, 4, dtype=dtype), torch.randn(2, 3, 5, dtype=dtype),
               torch.randn(2, 5, 4, dtype=dtype))
    expected = torch.baddbmm(c, a, b, beta=0.25, alpha=1.5)
    close(torch.baddbmm(hal(c), hal(a), hal(b), beta=0.25, alpha=1.5), expected)
    full = c.expand(2, 3, 4).clone()
    hfull = hal(full)
    hfull.baddbmm_(hal(a), hal(b).transpose(1, 2).contiguous().transpose(1, 2))
    close(hfull, full.baddbmm_(a, b))
    out = hal(torch.empty(0, dtype=dtype))
    torch.baddbmm(hal(c), hal(a), hal(b), out=out)
    close(out, torch.baddbmm(c, a, b))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_matrix_vector_and_vector_products(strict, dtype):
    m, v, w = (torch.randn(4, 6, dtype=dtype), torch.randn(6, dtype=dtype),
               torch.randn(6, dtype=dtype))
    close(torch.mv(hal(m), hal(v)), torch.mv(m, v))
    close(hal(m) @ hal(v), m @ v)
    bias = torch.randn(4, dtype=dtype)
    close(torch.addmv(hal(bias), hal(m), hal(v), beta=2, alpha=0.5),
          torch.addmv(bias, m, v, beta=2, alpha=0.5))
    hb = hal(bias)
    hb.addmv_(hal(m.t().contiguous()).t(), hal(v))
    close(hb, bias.clone().addmv_(m, v))
    dot = torch.dot(hal(v), hal(w))
    assert dot.shape == ()
    close(dot, torch.dot(v, w))
    close(hal(v) @ hal(w), v @ w)
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        torch.dot(hal(m), hal(v))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision_products(strict, dtype):
    if dtype not in optional_dtypes():
        pytest.skip(f"the driver has no {dtype}")
    a, b = torch.randn(8, 16).to(dtype), torch.randn(16, 4).to(dtype)
    # Both accumulate in f32 and round once.
    close(hal(a) @ hal(b), (a.float() @ b.float()).to(dtype))


def test_matmul_broadcasts_batches_and_folds_to_mm(strict):
    a, b = torch.randn(2, 1, 3, 4), torch.randn(5, 4, 6)
    close(hal(a) @ hal(b), a @ b, rtol=1e-5, atol=1e-5)
    x, w = torch.randn(2, 3, 4), torch.randn(4, 5)
    close(hal(x) @ hal(w), x @ w, rtol=1e-5, atol=1e-5)


def test_linear_forward_and_backward(strict):
    torch.manual_seed(0)
    cpu = nn.Linear(6, 3, bias=False).double()
    dev = nn.Linear(6, 3, bias=False).double().to(HAL)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    hx = hal(x.detach()).requires_grad_()
    grad = torch.randn(4, 3, dtype=torch.float64)
    cpu(x).backward(grad)
    out = dev(hx)
    out.backward(hal(grad))
    close(out.detach(), cpu(x).detach())
    close(hx.grad, x.grad)
    close(dev.weight.grad, cpu.weight.grad)


def test_linear_with_bias_uses_addmm():
    torch.manual_seed(0)
    layer = nn.Linear(6, 3)
    x = torch.randn(4, 6)
    torch.hal.reset_fallback_stats()
    out = nn.Linear(6, 3).to(HAL)
    out.load_state_dict(layer.state_dict())
    close(out(hal(x)).detach(), layer(x).detach(), rtol=1e-5, atol=1e-6)
    # A 3-D input is flattened onto addmm as well.
    x3 = torch.randn(2, 4, 6)
    close(out(hal(x3)).detach(), layer(x3).detach(), rtol=1e-5, atol=1e-6)
    assert linalg_fallbacks() == {}


@pytest.mark.parametrize(
    "op", [
        lambda a, b, c: torch.mm(a, b),
        lambda a, b, c: torch.addmm(c[0], a, b, beta=0.5, alpha=2),
        lambda a, b, c: torch.bmm(a.unsqueeze(0).expand(2, -1, -1), b.unsqueeze(0).expand(2, -1, -1)),
        lambda a, b, c: torch.baddbmm(c, a.expand(2, -1, -1), b.expand(2, -1, -1)),
        lambda a, b, c: torch.addmv(c[0, 0, :1].expand(3), a, b[:, 0]),
        lambda a, b, c: torch.dot(a[0], b[:, 1]),
    ], ids=["mm", "addmm", "bmm", "baddbmm", "addmv", "dot"])
def test_gradcheck(op):
    # The backward of these ops also reaches sum/expand of other families: no
    # strict mode here, but this family's ops must not fall back.
    torch.hal.reset_fallback_stats()
    a = hal(torch.randn(3, 4, dtype=torch.float64)).requires_grad_()
    b = hal(torch.randn(4, 2, dtype=torch.float64)).requires_grad_()
    c = hal(torch.randn(1, 3, 2, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(op, (a, b, c), fast_mode=True)
    assert linalg_fallbacks() == {}


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_matches_cpu(need_weights):
    torch.manual_seed(0)
    cpu = nn.MultiheadAttention(8, 2, bias=False, batch_first=True)
    dev = nn.MultiheadAttention(8, 2, bias=False, batch_first=True).to(HAL)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(2, 5, 8)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(1)
    hx = hal(x).requires_grad_()
    torch.hal.reset_fallback_stats()
    out, weights = dev(hx, hx, hx, attn_mask=hal(mask), need_weights=need_weights)
    out.sum().backward()
    expected, expected_weights = cpu(x.requires_grad_(), x, x, attn_mask=mask,
                                     need_weights=need_weights)
    expected.sum().backward()
    assert linalg_fallbacks() == {}
    close(out.detach(), expected.detach(), rtol=1e-5, atol=1e-5)
    close(hx.grad, x.grad, rtol=1e-4, atol=1e-5)
    if need_weights:
        close(weights.detach(), expected_weights.detach(), rtol=1e-5, atol=1e-6)
    else:
        assert weights is None


def test_scaled_dot_product_attention_takes_the_math_path(strict):
    q = torch.randn(1, 2, 3, 4)
    assert torch.ops.aten._fused_sdp_choice(hal(q), hal(q), hal(q)) == 0  # math
