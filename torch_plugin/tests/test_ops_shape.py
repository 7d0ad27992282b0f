"""Shape ops (cat, stack, flip, tril/triu) and arange run natively on hal and
match CPU, keep CPU's errors, and refuse an out= that overlaps an input."""

import pytest
import torch

from hal_testing import HAL, close, hal, sample


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1,)])
def test_flip(dims, strict):
    x = sample(3, 4, 5)
    close(torch.flip(hal(x), dims), torch.flip(x, dims))
    close(torch.flip(hal(x).transpose(0, 2), dims), torch.flip(x.transpose(0, 2), dims))


@pytest.mark.parametrize("args", [(5,), (1, 7, 2), (0.5, 2.0, 0.25), (10, 0, -3)])
def test_arange(args, strict):
    close(torch.arange(*args, device=HAL), torch.arange(*args))


def test_cat_along_each_dim_and_promotes(strict):
    a, b = sample(2, 3, 4), sample(2, 1, 4, seed=1)
    close(torch.cat([hal(a), hal(b)], 1), torch.cat([a, b], 1))
    close(torch.cat([hal(a), hal(a)], -1), torch.cat([a, a], -1))
    close(torch.cat([hal(a).transpose(0, 2), hal(a).transpose(0, 2)], 0),
          torch.cat([a.transpose(0, 2), a.transpose(0, 2)], 0))
    i = sample(2, 3, 4, dtype=torch.int64)
    close(torch.cat([hal(a), hal(i)], 0), torch.cat([a, i], 0))
    # A 1-D empty input is skipped whatever the others' shapes, as on CPU.
    close(torch.cat([hal(a), hal(torch.empty(0))], 1), torch.cat([a, torch.empty(0)], 1))
    close(torch.stack([hal(a), hal(a)], 2), torch.stack([a, a], 2))


def test_cat_out_and_memory_format(strict):
    a = sample(2, 3, 4, 5).to(memory_format=torch.channels_last)
    result = torch.cat([hal(a), hal(a)], 1)
    close(result, torch.cat([a, a], 1))
    assert result.is_contiguous(memory_format=torch.channels_last)
    out = hal(torch.empty(0, 2, 2, 2))
    torch.cat([hal(a), hal(a)], 0, out=out)
    close(out, torch.cat([a, a], 0))


def test_cat_errors_as_cpu(strict):
    a = hal(sample(2, 3))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([a, hal(sample(3, 2))], 1)
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        torch.cat([hal(torch.tensor(1.0))])
    with pytest.raises(RuntimeError, match="unsupported operation"):
        torch.cat([a, a], 0, out=a)  # out overlaps an input


@pytest.mark.parametrize("diagonal", [0, 1, -1, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_tril_triu(diagonal, dtype, strict):
    x = sample(2, 4, 5, dtype=dtype)
    close(torch.tril(hal(x), diagonal), torch.tril(x, diagonal))
    close(torch.triu(hal(x), diagonal), torch.triu(x, diagonal))
    close(torch.triu(hal(x).transpose(1, 2), diagonal), torch.triu(x.transpose(1, 2), diagonal))
    inplace = hal(x)
    inplace.tril_(diagonal)
    close(inplace, torch.tril(x, diagonal))
    # The causal mask of a decoder, made the usual way.
    mask = torch.full((4, 4), float("-inf"), device=HAL).triu(1)
    close(mask, torch.full((4, 4), float("-inf")).triu(1))


@pytest.mark.parametrize("shifts,dims", [(2, 0), (-1, 1), ((1, 3), (0, 2)), (7, None), (0, 1)])
def test_roll(shifts, dims, strict):
    x = sample(3, 4, 5)
    close(torch.roll(hal(x), shifts, dims), torch.roll(x, shifts, dims))
    close(torch.roll(hal(x).transpose(0, 2), shifts, dims),
          torch.roll(x.transpose(0, 2), shifts, dims))


def test_roll_errors_as_cpu(strict):
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        torch.roll(hal(sample(3, 4)), (1, 2), (0,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_linspace_logspace_eye(dtype, strict):
    close(torch.linspace(-2, 5, 11, device=HAL, dtype=dtype), torch.linspace(-2, 5, 11, dtype=dtype))
    close(torch.logspace(0, 3, 4, base=2, device=HAL, dtype=dtype),
          torch.logspace(0, 3, 4, base=2, dtype=dtype))
    close(torch.eye(4, device=HAL, dtype=dtype), torch.eye(4, dtype=dtype))
    close(torch.eye(2, 5, device=HAL, dtype=dtype), torch.eye(2, 5, dtype=dtype))
