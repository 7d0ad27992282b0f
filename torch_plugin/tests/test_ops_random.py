"""Random numbers on hal (csrc/aten/native/random.cpp): uniform_, normal_ and the
normal overloads, bernoulli, rand/randn and their _like forms, and dropout.

hal draws from its own counter-based Philox generator, so its numbers differ
from the CPU's: the tests check reproducibility (seeds, generators, RNG state),
the distributions (moments of 100k samples, frequencies) and dropout's exact
arithmetic on the mask it drew. Statistics are computed on the CPU so that they
depend on the ops under test only. Tests marked with the `strict` fixture make
any CPU fallback an error."""

import math

import pytest
import torch
import torch.nn.functional as F

HAL = torch.device("hal")
N = 100_000
RANDOM_OPS = ("uniform_", "normal", "bernoulli", "native_dropout",
              "random_")


def supported(dtype):
    return dtype in torch.hal.get_device_properties().supported_dtypes


FLOAT_DTYPES = [pytest.param(d, marks=pytest.mark.skipif(
    not torch.hal.is_available() or not supported(d),
    reason=f"the hal device has no {d}")) if d != torch.float32 else d
    for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16)]


def random_fallbacks():
    return {op: n for op, n in torch.hal.fallback_stats().items()
            if op.startswith(RANDOM_OPS)}


# ---- reproducibility ---------------------------------------------------------

@pytest.mark.parametrize("seed_fn", [torch.manual_seed, torch.hal.manual_seed])
def test_same_seed_same_numbers(strict, seed_fn):
    seed_fn(123)
    a = torch.empty(1000, device=HAL).uniform_()
    b = torch.randn(77, device=HAL)
    seed_fn(123)
    assert torch.equal(torch.empty(1000, device=HAL).uniform_().cpu(), a.cpu())
    assert torch.equal(torch.randn(77, device=HAL).cpu(), b.cpu())


def test_different_seeds_and_successive_draws_differ(strict):
    torch.hal.manual_seed(1)
    a = torch.rand(1000, device=HAL).cpu()
    b = torch.rand(1000, device=HAL).cpu()
    torch.hal.manual_seed(2)
    c = torch.rand(1000, device=HAL).cpu()
    assert not torch.equal(a, b)
    assert not torch.equal(a, c)


def test_draws_continue_the_stream(strict):
    # A draw of n numbers uses ceil(n / 4) Philox blocks and the generator
    # moves past them: two draws of 8 are one draw of 16 cut in two.
    torch.hal.manual_seed(5)
    whole = torch.rand(16, device=HAL).cpu()
    torch.hal.manual_seed(5)
    first = torch.rand(8, device=HAL).cpu()
    second = torch.rand(8, device=HAL).cpu()
    assert torch.equal(torch.cat([first, second]), whole)


def test_generator_object(strict):
    g = torch.Generator(device=HAL).manual_seed(42)
    a = torch.rand(100, device=HAL, generator=g).cpu()
    b = torch.randn(100, device=HAL, generator=g).cpu()
    g.manual_seed(42)
    assert torch.equal(torch.rand(100, device=HAL, generator=g).cpu(), a)
    assert torch.equal(torch.randn(100, device=HAL, generator=g).cpu(), b)
    # The default generator is untouched by draws from g.
    torch.hal.manual_seed(42)
    state = torch.hal.get_rng_state()
    torch.rand(100, device=HAL, generator=g)
    assert torch.equal(torch.hal.get_rng_state(), state)


def test_rng_state_replays(strict):
    torch.hal.manual_seed(9)
    torch.rand(10, device=HAL)
    state = torch.hal.get_rng_state()
    a = torch.randn(50, device=HAL).cpu()
    m = torch.empty(50, device=HAL).bernoulli_(0.5).cpu()
    torch.hal.set_rng_state(state)
    assert torch.equal(torch.randn(50, device=HAL).cpu(), a)
    assert torch.equal(torch.empty(50, device=HAL).bernoulli_(0.5).cpu(), m)


def test_cpu_generator_is_rejected():
    with pytest.raises(RuntimeError, match="hal generator"):
        torch.empty(4, device=HAL).uniform_(generator=torch.Generator())


# ---- distributions -----------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_uniform_moments_and_range(strict, dtype):
    torch.hal.manual_seed(0)
    x = torch.empty(N, device=HAL, dtype=dtype).uniform_(-2.0, 3.0)
    assert x.dtype == dtype
    v = x.cpu().double()
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.mean().item() - 0.5) < 0.02
    assert abs(v.std().item() - 5.0 / math.sqrt(12.0)) < 0.02
    assert v.unique().numel() > N // 2 or dtype in (torch.float16,
                                                    torch.bfloat16)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_normal_moments(strict, dtype):
    torch.hal.manual_seed(0)
    x = torch.empty(N, device=HAL, dtype=dtype).normal_(1.5, 2.0)
    v = x.cpu().double()
    assert abs(v.mean().item() - 1.5) < 0.03
    assert abs(v.std().item() - 2.0) < 0.03
    # About 68.3% within one std.
    within = ((v - 1.5).abs() < 2.0).double().mean().item()
    assert abs(within - 0.6827) < 0.01


def test_rand_randn_like_and_factories(strict):
    torch.hal.manual_seed(3)
    base = torch.empty(N, device=HAL, dtype=torch.float64
                       if supported(torch.float64) else torch.float32)
    for x, mean, std in [(torch.rand(N, device=HAL), 0.5, 1 / math.sqrt(12)),
                         (torch.randn(N, device=HAL), 0.0, 1.0),
                         (torch.rand_like(base), 0.5, 1 / math.sqrt(12)),
                         (torch.randn_like(base), 0.0, 1.0),
                         (torch.normal(2.0, 0.5, (N,), device=HAL), 2.0, 0.5)]:
        assert x.device.type == "hal"
        v = x.cpu().double()
        assert abs(v.mean().item() - mean) < 0.02
        assert abs(v.std().item() - std) < 0.02
    assert torch.rand_like(base).dtype == base.dtype


def test_uniform_and_normal_fill_non_contiguous_views(strict):
    torch.hal.manual_seed(4)
    x = torch.zeros(64, 64, device=HAL)
    x.t()[:, ::2].uniform_(1.0, 2.0)  # every other row of x
    v = x.cpu()
    assert (v[::2] >= 1.0).all() and (v[::2] < 2.0).all()
    assert (v[1::2] == 0).all()
    y = torch.zeros(64, 64, device=HAL)
    y[:, 1::2].normal_()
    w = y.cpu()
    assert (w[:, ::2] == 0).all() and (w[:, 1::2] != 0).all()


def test_empty_tensors(strict):
    state = torch.hal.get_rng_state()
    torch.empty(0, device=HAL).uniform_()
    torch.empty(0, 3, device=HAL).normal_()
    torch.empty(0, device=HAL).bernoulli_(0.5)
    assert torch.equal(torch.hal.get_rng_state(), state)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool, torch.int64])
def test_bernoulli_scalar_frequency(strict, dtype):
    torch.hal.manual_seed(0)
    x = torch.empty(N, device=HAL, dtype=dtype).bernoulli_(0.3)
    assert x.dtype == dtype
    v = x.cpu().double()
    assert set(v.unique().tolist()) <= {0.0, 1.0}
    assert abs(v.mean().item() - 0.3) < 0.01
    assert torch.empty(100, device=HAL, dtype=dtype).bernoulli_(0.0).cpu().sum() == 0
    assert torch.empty(100, device=HAL, dtype=dtype).bernoulli_(1.0).cpu().sum() == 100


def test_bernoulli_tensor_p(strict):
    torch.hal.manual_seed(0)
    p = torch.tensor([0.0, 1.0, 0.25, 0.75]).repeat(N // 4)
    x = torch.empty(N, device=HAL).bernoulli_(p.to(HAL)).cpu()
    assert (x[0::4] == 0).all() and (x[1::4] == 1).all()
    assert abs(x[2::4].mean().item() - 0.25) < 0.015
    assert abs(x[3::4].mean().item() - 0.75) < 0.015
    # p broadcasts over self, may stay on the CPU, and may be self itself.
    rows = torch.empty(1000, 4, device=HAL).bernoulli_(torch.tensor([0.0, 1.0, 0.0, 1.0]))
    assert torch.equal(rows.cpu(), torch.tensor([0.0, 1.0, 0.0, 1.0]).expand(1000, 4))
    q = torch.full((1000,), 0.5, device=HAL)
    q.bernoulli_(q)
    assert set(q.cpu().unique().tolist()) == {0.0, 1.0}
    # A 0-dim CPU p acts as a number.
    assert torch.empty(10, device=HAL).bernoulli_(torch.tensor(1.0)).cpu().sum() == 10


def test_bernoulli_functional_and_out(strict):
    torch.hal.manual_seed(0)
    p = torch.rand(N, dtype=torch.float64).to(HAL)
    x = torch.bernoulli(p)
    assert x.dtype == torch.float64 and x.device.type == "hal"
    assert abs(x.cpu().mean().item() - p.cpu().mean().item()) < 0.01
    out = torch.empty(3, device=HAL, dtype=torch.float32)
    torch.bernoulli(p, out=out)
    assert out.shape == p.shape and set(out.cpu().unique().tolist()) == {0.0, 1.0}
    y = torch.bernoulli(torch.zeros(N, device=HAL), 0.2)  # bernoulli.p
    assert abs(y.cpu().mean().item() - 0.2) < 0.01


def test_normal_tensor_overloads(strict):
    torch.hal.manual_seed(0)
    mean = torch.tensor([-3.0, 0.0, 5.0])
    std = torch.tensor([[0.5], [2.0]])
    cases = [((mean.expand(N, 3).to(HAL), 0.5), mean, torch.full((3,), 0.5)),
             ((1.0, std.expand(2, N).t().to(HAL)), torch.ones(2), std[:, 0]),
             ((mean.to(HAL), std.to(HAL)), None, None)]
    for args, want_mean, want_std in cases:
        cpu_args = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
        x = torch.normal(*args)
        reference = torch.normal(*cpu_args)
        assert x.shape == reference.shape and x.dtype == reference.dtype
        assert x.device.type == "hal"
        out = torch.empty(0, device=HAL)
        torch.normal(*args, out=out)
        assert out.shape == reference.shape
        if want_mean is not None:
            v = x.cpu().double()
            assert torch.allclose(v.mean(0), want_mean.double(), atol=0.03)
            assert torch.allclose(v.std(0), want_std.double(), rtol=0.02)


def test_normal_gradients_follow_torch(strict):
    # torch treats normal's samples as constants of mean and std (zero
    # gradients); hal's autograd must give the CPU's answer.
    for device in ("cpu", HAL):
        mean = torch.zeros(5, device=device, requires_grad=True)
        std = torch.ones(5, device=device, requires_grad=True)
        torch.normal(mean, std).backward(torch.ones(5, device=device))
        if device == "cpu":
            expected = (mean.grad, std.grad)
    assert torch.equal(mean.grad.cpu(), expected[0])
    assert torch.equal(std.grad.cpu(), expected[1])


# ---- errors ------------------------------------------------------------------

def test_bad_arguments_are_clear_errors():
    x = torch.empty(4, device=HAL)
    with pytest.raises(RuntimeError, match="from=1 > to=0"):
        x.uniform_(1.0, 0.0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        x.normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        x.bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="all elements of std >= 0.0"):
        torch.normal(torch.zeros(3, device=HAL), torch.tensor([1.0, -1.0, 1.0], device=HAL))
    with pytest.raises(NotImplementedError, match="Long"):
        torch.empty(4, device=HAL, dtype=torch.int64).uniform_()
    with pytest.raises(NotImplementedError):
        x.bernoulli_(torch.ones(4, dtype=torch.int64, device=HAL))


# ---- dropout -----------------------------------------------------------------

def test_native_dropout_masks_and_scales(strict):
    torch.hal.manual_seed(0)
    p = 0.3
    x = torch.randn(1000, 100).to(HAL)
    out, mask = torch.ops.aten.native_dropout(x, p, True)
    assert mask.dtype == torch.bool and mask.shape == x.shape
    m = mask.cpu()
    assert abs(m.double().mean().item() - (1 - p)) < 0.01
    assert torch.equal(out.cpu(), x.cpu() * m * (1.0 / (1 - p)))
    grad = torch.randn(1000, 100)
    grad_input = torch.ops.aten.native_dropout_backward(grad.to(HAL), mask, 1 / (1 - p))
    assert torch.equal(grad_input.cpu(), grad * m * (1.0 / (1 - p)))
    # Not training: the input unchanged, every element kept.
    out, mask = torch.ops.aten.native_dropout(x, p, False)
    assert torch.equal(out.cpu(), x.cpu()) and bool(mask.cpu().all())


def test_dropout_functional_and_module(strict):
    torch.hal.manual_seed(0)
    x = torch.randn(200, 50).to(HAL).requires_grad_()
    y = F.dropout(x, 0.5, training=True)
    kept = y.detach().cpu() != 0
    assert abs(kept.double().mean().item() - 0.5) < 0.02
    assert torch.equal(y.detach().cpu()[kept], x.detach().cpu()[kept] * 2.0)
    y.backward(torch.ones_like(y))
    assert torch.equal(x.grad.cpu(), kept.float() * 2.0)
    # Same seed, same mask; eval mode is the identity.
    torch.hal.manual_seed(0)
    module = torch.nn.Dropout(0.5).to(HAL)
    assert torch.equal(module(x.detach()).cpu(), y.detach().cpu())
    assert torch.equal(module.eval()(x.detach()).cpu(), x.detach().cpu())


def test_dropout_gradcheck():
    def dropped(x):
        torch.hal.manual_seed(11)  # the same mask on every evaluation
        return F.dropout(x, 0.4, training=True)

    torch.hal.reset_fallback_stats()
    x = torch.randn(6, 5, dtype=torch.float64, device=HAL, requires_grad=True)
    assert torch.autograd.gradcheck(dropped, (x,))
    assert not random_fallbacks()


def test_multihead_attention_dropout_stays_on_hal():
    torch.hal.reset_fallback_stats()
    torch.hal.manual_seed(0)
    attention = torch.nn.MultiheadAttention(16, 4, dropout=0.2, batch_first=True).to(HAL)
    x = torch.randn(2, 7, 16).to(HAL)
    out, _ = attention(x, x, x, need_weights=False)
    out.sum().backward()
    out, _ = attention(x, x, x, need_weights=True)
    out.sum().backward()
    assert not random_fallbacks(), torch.hal.fallback_stats()


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float32])
def test_randint_is_native_in_range_and_reproducible(strict, dtype):
    torch.hal.manual_seed(3)
    a = torch.randint(-4, 7, (4000,), device="hal", dtype=dtype) if dtype != torch.uint8 \
        else torch.randint(0, 11, (4000,), device="hal", dtype=dtype)
    torch.hal.manual_seed(3)
    b = torch.randint(-4, 7, (4000,), device="hal", dtype=dtype) if dtype != torch.uint8 \
        else torch.randint(0, 11, (4000,), device="hal", dtype=dtype)
    assert torch.equal(a.cpu(), b.cpu())
    values = a.cpu().long()
    low = 0 if dtype == torch.uint8 else -4
    assert values.min() == low and values.max() == low + 10  # every value is drawn
    counts = torch.bincount(values - low, minlength=11)
    assert counts.min() > 4000 / 11 * 0.7  # roughly uniform
    bits = torch.empty(1000, dtype=torch.bool, device="hal").random_(0, 2).cpu()
    assert 300 < int(bits.sum()) < 700


def test_random_without_bounds_falls_back_to_cpu():
    torch.hal.reset_fallback_stats()
    torch.empty(5, dtype=torch.int64, device="hal").random_()
    assert "aten::random_" in torch.hal.fallback_stats()


def test_random_bounds_are_checked_as_cpu(strict):
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, dtype=torch.uint8, device="hal").random_(0, 300)
    with pytest.raises(RuntimeError, match="from.*less than.*to"):
        torch.empty(3, dtype=torch.int64, device="hal").random_(5, 5)
