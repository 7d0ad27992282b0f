"""Helpers shared by the torch_hal op tests: moving and comparing tensors,
deterministic samples, and the fallback counters of one op family."""

import torch

HAL = "hal"


def hal(t):
    return t.to(HAL)


def close(actual, expected, **tolerance):
    """`actual` is on hal and equals the CPU tensor `expected`."""
    assert actual.device.type == HAL
    torch.testing.assert_close(actual.cpu(), expected, **tolerance)


def sample(*shape, dtype=torch.float32, seed=0):
    """Reproducible values of any dtype, made on CPU."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(-50, 50, shape, generator=g, dtype=dtype)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def op_name(qualified):
    """'aten::add_.Tensor' -> 'add_'."""
    return qualified.split("::")[-1].split(".")[0]


def fallbacks_of(ops):
    """The CPU fallbacks counted so far for the ops named in `ops` (base
    names; in-place forms count too)."""
    return {q: n for q, n in torch.hal.fallback_stats().items()
            if op_name(q) in ops or op_name(q).rstrip("_") in ops}
