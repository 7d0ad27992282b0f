"""Reductions and softmax on hal (sum, mean, prod, amax/amin, max/min,
argmax/argmin, var/std, var_mean/std_mean, all/any, softmax/log_softmax and
their backward) against the CPU: dim lists, keepdim, dtype arguments, out=,
non-contiguous inputs, dtypes, autograd, and no CPU fallback (HAL_STRICT=1
through the `strict` fixture, or the fallback counters where other families'
ops take part)."""

import pytest
import torch

from hal_testing import close, fallbacks_of, hal

HAL = "hal"
# The ops of this family; none of them may fall back to the CPU.
REDUCTION_OPS = ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
                 "var", "std", "var_mean", "std_mean", "all", "any", "_softmax",
                 "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data")


def reduction_fallbacks():
    return fallbacks_of(REDUCTION_OPS)


def sample(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not dtype.is_floating_point:
        low = 0 if dtype == torch.uint8 else -5
        return torch.randint(low, 6, shape, generator=g, dtype=dtype)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


DIMS = [None, 0, -1, (0, 2), (), [1, 2, 0]]


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.bool])
def test_sum_over_dims(strict, dim, keepdim, dtype):
    x = sample(3, 4, 5, dtype=dtype)
    expected = x.sum() if dim is None else x.sum(dim, keepdim=keepdim)
    actual = hal(x).sum() if dim is None else hal(x).sum(dim, keepdim=keepdim)
    assert actual.dtype == expected.dtype
    close(actual, expected)


def test_sum_dtype_argument_out_and_noncontiguous(strict):
    x = sample(6, 8)
    close(hal(x).sum(1, dtype=torch.float64), x.sum(1, dtype=torch.float64))
    close(hal(sample(4, dtype=torch.int32)).sum(dtype=torch.float32),
          sample(4, dtype=torch.int32).sum(dtype=torch.float32))
    out = hal(torch.empty(0))
    result = torch.sum(hal(x), 0, out=out)
    assert result is out and out.shape == (8,)
    close(out, x.sum(0))
    # A transpose and a stepped slice: the kernel reads them through their strides.
    close(hal(x).t().sum(0), x.t().sum(0))
    close(hal(x)[::2, 1::3].sum(1, keepdim=True), x[::2, 1::3].sum(1, keepdim=True))
    # A broadcast (stride 0) input, as autograd's sum_to_size produces.
    close(hal(x[:1]).expand(6, 8).sum(0), x[:1].expand(6, 8).sum(0))
    close(hal(torch.tensor(2.5)).sum(), torch.tensor(2.5))


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mean_over_dims(strict, dim, dtype):
    x = sample(3, 4, 5, dtype=dtype)
    for keepdim in (False, True):
        expected = x.mean() if dim is None else x.mean(dim, keepdim=keepdim)
        actual = hal(x).mean() if dim is None else hal(x).mean(dim, keepdim=keepdim)
        close(actual, expected)


def test_mean_dtype_out_and_errors(strict):
    x = sample(4, 6)
    close(hal(x).mean(1, dtype=torch.float64), x.mean(1, dtype=torch.float64))
    out = hal(torch.empty(3))
    torch.mean(hal(x), 0, keepdim=True, out=out)
    assert out.shape == (1, 6)
    close(out, x.mean(0, keepdim=True))
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        hal(sample(3, dtype=torch.int64)).mean()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
def test_prod(strict, dtype):
    x = sample(3, 4, dtype=dtype)
    close(hal(x).prod(), x.prod())
    close(hal(x).prod(1), x.prod(1))
    close(hal(x).prod(0, keepdim=True), x.prod(0, keepdim=True))
    close(hal(x).t().prod(1, dtype=torch.float64), x.t().prod(1, dtype=torch.float64))
    out = hal(torch.empty(0, dtype=x.prod(1).dtype))
    torch.prod(hal(x), 1, out=out)
    close(out, x.prod(1))


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
def test_amax_amin(strict, op, dtype):
    x = sample(3, 4, 5, dtype=dtype)
    for dim in ((), 1, (0, 2), -1):
        for keepdim in (False, True):
            close(getattr(torch, op)(hal(x), dim, keepdim), getattr(torch, op)(x, dim, keepdim))
    out = hal(torch.empty(0, dtype=dtype))
    getattr(torch, op)(hal(x).transpose(0, 2), (1,), out=out)
    close(out, getattr(torch, op)(x.transpose(0, 2), (1,)))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_max_min_full_and_along_dim(strict, op, dtype):
    # Distinct values, so the index of the extremum is unique.
    x = sample(3, 4, 5, dtype=torch.float64).to(dtype) if dtype != torch.bool \
        else sample(3, 4, 5, dtype=torch.bool)
    close(getattr(hal(x), op)(), getattr(x, op)())
    if dtype == torch.bool or not dtype.is_floating_point:
        return  # ties make the index ambiguous
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            values, indices = getattr(hal(x), op)(dim, keepdim)
            expected_values, expected_indices = getattr(x, op)(dim, keepdim)
            close(values, expected_values)
            close(indices, expected_indices)
    values, indices = hal(torch.empty(0, dtype=dtype)), hal(torch.empty(0, dtype=torch.long))
    getattr(torch, op)(hal(x).transpose(0, 1), 2, out=(values, indices))
    expected_values, expected_indices = getattr(torch, op)(x.transpose(0, 1), 2)
    close(values, expected_values)
    close(indices, expected_indices)


def test_max_propagates_nan_and_rejects_empty(strict):
    x = torch.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]])
    close(hal(x).max(), x.max(), equal_nan=True)
    values, indices = hal(x).max(1)
    close(values, x.max(1).values, equal_nan=True)
    close(indices, x.max(1).indices)
    with pytest.raises(RuntimeError, match="numel"):
        hal(torch.empty(0)).max()
    with pytest.raises(IndexError, match="non-zero size"):
        hal(torch.empty(0, 3)).amax(0)
    with pytest.raises(IndexError, match="non-zero size"):
        hal(torch.empty(0, 3)).min(0)
    with pytest.raises(IndexError, match="numel"):
        hal(torch.empty(0)).argmax()
    close(hal(torch.empty(0, 3)).amax(1), torch.empty(0))  # kept dims may be empty


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin(strict, op):
    x = sample(3, 4, 5, dtype=torch.float64)
    for dim in (None, 0, 2, -2):
        for keepdim in (False, True):
            close(getattr(hal(x), op)(dim, keepdim), getattr(x, op)(dim, keepdim))
    close(getattr(hal(x).transpose(0, 2), op)(), getattr(x.transpose(0, 2), op)())
    close(getattr(hal(torch.tensor(4.0)), op)(), getattr(torch.tensor(4.0), op)())
    out = hal(torch.empty(0, dtype=torch.long))
    getattr(torch, op)(hal(x), 1, out=out)
    close(out, getattr(x, op)(1))
    ints = sample(7, dtype=torch.int64)
    close(getattr(hal(ints), op)(), getattr(ints, op)())


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_var_std(strict, op, dtype):
    x = sample(3, 4, 5, dtype=dtype)
    fn = getattr(torch, op)
    close(fn(hal(x)), fn(x))
    for dim in (0, (1, 2), -1, None):
        for correction in (0, 1, 2):
            for keepdim in (False, True):
                close(fn(hal(x), dim, correction=correction, keepdim=keepdim),
                      fn(x, dim, correction=correction, keepdim=keepdim))
    out = hal(torch.empty(0, dtype=dtype))
    fn(hal(x).transpose(0, 1), 1, out=out)
    close(out, fn(x.transpose(0, 1), 1))
    paired = getattr(torch, op + "_mean")
    for actual, expected in zip(paired(hal(x), (0, 2), keepdim=True), paired(x, (0, 2), keepdim=True)):
        close(actual, expected)
    with pytest.raises(RuntimeError, match="floating point"):
        fn(hal(sample(4, dtype=torch.int64)))


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8])
def test_all_any(strict, op, dtype):
    x = sample(3, 4, 5, dtype=dtype)
    if dtype != torch.bool:
        x = x * (sample(3, 4, 5, dtype=torch.bool, seed=1)).to(dtype)  # some zeros
    else:
        x[0] = True  # some dims all true
    fn = getattr(torch, op)
    close(fn(hal(x)), fn(x))
    for dim in (0, -1, (0, 2), ()):
        for keepdim in (False, True):
            actual, expected = fn(hal(x), dim, keepdim=keepdim), fn(x, dim, keepdim=keepdim)
            assert actual.dtype == expected.dtype
            close(actual, expected)
    out = hal(torch.empty(0, dtype=torch.bool))
    fn(hal(x).transpose(0, 2), 1, out=out)
    close(out, fn(x.transpose(0, 2), 1).bool())
    out = hal(torch.empty(0, dtype=torch.bool))
    fn(hal(x), out=out)
    close(out, fn(x).bool())


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_forward(strict, op, dtype):
    x = sample(3, 4, 5, dtype=dtype) * 4
    fn = getattr(torch, op)
    for dim in (0, 1, -1):
        close(fn(hal(x), dim), fn(x, dim))
    close(fn(hal(x).transpose(0, 2), 1), fn(x.transpose(0, 2), 1))
    close(fn(hal(x), 1, dtype=torch.float64), fn(x, 1, dtype=torch.float64))
    close(fn(hal(torch.tensor(1.5, dtype=dtype)), 0), fn(torch.tensor(1.5, dtype=dtype), 0))
    out = hal(torch.empty(0, dtype=dtype))
    fn(hal(x), 2, out=out)
    close(out, fn(x, 2))
    masked = x.clone()
    masked[0, 0, :2] = float("-inf")
    close(fn(hal(masked), -1), fn(masked, -1))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_backward_matches_cpu(strict, op):
    x = sample(4, 6, dtype=torch.float64)
    grad = sample(4, 6, dtype=torch.float64, seed=3)
    fn = getattr(torch, op)
    cpu_x = x.clone().requires_grad_()
    fn(cpu_x, 1).backward(grad)
    hal_x = hal(x).requires_grad_()
    fn(hal_x, 1).backward(hal(grad))
    close(hal_x.grad, cpu_x.grad)
    # The backward kernels also serve their out= forms.
    output = fn(hal(x), 0)
    backward = getattr(torch.ops.aten, f"_{op}_backward_data")
    out = hal(torch.empty(0, dtype=torch.float64))
    out_name = "grad_input" if op == "softmax" else "out"  # as native_functions.yaml names it
    backward.out(hal(grad), output, 0, torch.float64, **{out_name: out})
    close(out, backward(grad, fn(x, 0), 0, torch.float64))


def test_reduction_backward_matches_cpu():
    torch.hal.reset_fallback_stats()
    x = sample(3, 4, dtype=torch.float64)
    for reduce in (lambda t: t.sum(), lambda t: t.sum(0).pow(2).sum(),
                   lambda t: t.mean(1).sum(), lambda t: t.amax(1).sum(),
                   lambda t: t.var(0).sum(), lambda t: t.std(1).sum(),
                   lambda t: t.max(1).values.sum()):
        cpu_x = x.clone().requires_grad_()
        reduce(cpu_x).backward()
        hal_x = hal(x).requires_grad_()
        reduce(hal_x).backward()
        close(hal_x.grad, cpu_x.grad)
    assert reduction_fallbacks() == {}


@pytest.mark.parametrize("op", [torch.softmax, torch.log_softmax])
def test_softmax_gradcheck(op):
    torch.hal.reset_fallback_stats()
    x = hal(sample(3, 4, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: op(t, 1), (x,))
    assert reduction_fallbacks() == {}


def test_cross_entropy_style_composition(strict):
    logits = sample(8, 5)
    target = torch.randint(0, 5, (8,), generator=torch.Generator().manual_seed(0))
    expected = torch.log_softmax(logits, 1).gather(1, target[:, None]).mean()
    actual = torch.log_softmax(hal(logits), 1).gather(1, hal(target)[:, None]).mean()
    close(actual, expected)


def optional_dtypes():
    supported = torch.hal.get_device_properties().supported_dtypes
    return [d for d in (torch.float16, torch.bfloat16) if d in supported]


def test_half_precision_dtypes(strict):
    if not optional_dtypes():
        pytest.skip("the driver has neither f16 nor bf16")
    for dtype in optional_dtypes():
        x = sample(4, 8, dtype=dtype)
        tolerance = dict(rtol=2e-2, atol=2e-2)
        close(hal(x).sum(1), x.sum(1), **tolerance)
        close(hal(x).mean(0), x.mean(0), **tolerance)
        close(hal(x).amax(1), x.amax(1))
        close(torch.softmax(hal(x), 1), torch.softmax(x, 1), **tolerance)
        close(torch.log_softmax(hal(x), 1), torch.log_softmax(x, 1), **tolerance)
    if torch.float16 in optional_dtypes():
        # half_to_float (CUDA's fused softmax in float): a float result from a half input.
        x = sample(4, 8, dtype=torch.float16)
        close(torch.ops.aten._softmax(hal(x), 1, True), torch.softmax(x.float(), 1),
              rtol=1e-3, atol=1e-3)


# ---- vector norms

@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, True), ((0, 2), False)])
def test_vector_norm(strict, ord, dim, keepdim):
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0))
    x[0, 0, 0] = 0.0
    expected = torch.linalg.vector_norm(x, ord, dim, keepdim)
    close(torch.linalg.vector_norm(hal(x), ord, dim, keepdim), expected, rtol=1e-5, atol=1e-6)
    close(torch.linalg.vector_norm(hal(x).transpose(0, 2), ord),
          torch.linalg.vector_norm(x.transpose(0, 2), ord), rtol=1e-5, atol=1e-6)


def test_vector_norm_forms_and_errors(strict):
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    close(torch.norm(hal(x)), torch.norm(x), rtol=1e-5, atol=1e-6)
    close(torch.linalg.vector_norm(hal(x), dtype=torch.float64),
          torch.linalg.vector_norm(x, dtype=torch.float64))
    out = hal(torch.empty(0))
    torch.linalg.vector_norm(hal(x), 2, 1, out=out)
    close(out, torch.linalg.vector_norm(x, 2, 1), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.linalg.vector_norm(hal(torch.ones(3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="identity"):
        torch.linalg.vector_norm(hal(torch.empty(0)), float("inf"))


def test_clip_grad_norm_runs_natively():
    torch.manual_seed(0)
    cpu = torch.nn.Linear(6, 3)
    dev = torch.nn.Linear(6, 3).to("hal")
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(5, 6)
    cpu(x).pow(2).sum().backward()
    dev(hal(x)).pow(2).sum().backward()
    torch.hal.reset_fallback_stats()
    expected = torch.nn.utils.clip_grad_norm_(cpu.parameters(), 0.5)
    actual = torch.nn.utils.clip_grad_norm_(dev.parameters(), 0.5)
    close(actual, expected, rtol=1e-5, atol=1e-6)
    close(dev.weight.grad, cpu.weight.grad, rtol=1e-5, atol=1e-6)
    assert torch.hal.fallback_stats() == {}


def test_vector_norm_of_half_does_not_overflow(strict):
    x = torch.full((4096,), 5.0, dtype=torch.half)
    actual = torch.linalg.vector_norm(hal(x))
    assert actual.dtype == torch.half
    close(actual, torch.linalg.vector_norm(x))
