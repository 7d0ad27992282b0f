"""Scans (cumsum, cumprod) and set membership (isin) run natively on hal and
match CPU: every dim, non-contiguous inputs, integer and bool inputs (summed
in int64 as CPU does), a requested dtype, in-place and out= forms, autograd."""

import pytest
import torch

from hal_testing import HAL, close, hal, sample


@pytest.mark.parametrize("length", [1, 2, 5, 8, 33])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.bool])
def test_cumsum(length, dtype, strict):
    x = sample(3, length, 4, dtype=dtype)
    for dim in (0, 1, -1):
        expected = torch.cumsum(x, dim)
        actual = torch.cumsum(hal(x), dim)
        assert actual.dtype == expected.dtype
        close(actual, expected, rtol=1e-5, atol=1e-5)
    close(torch.cumsum(hal(x).transpose(0, 1), 0), torch.cumsum(x.transpose(0, 1), 0),
          rtol=1e-5, atol=1e-5)


def test_cumsum_forms(strict):
    x = sample(4, 6)
    close(torch.cumsum(hal(x), 1, dtype=torch.float64), torch.cumsum(x, 1, dtype=torch.float64))
    inplace = hal(x)
    inplace.cumsum_(0)
    close(inplace, torch.cumsum(x, 0), rtol=1e-5, atol=1e-5)
    out = hal(torch.empty(0))
    torch.cumsum(hal(x), 1, out=out)
    close(out, torch.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    close(torch.cumsum(hal(torch.tensor(3.0)), 0), torch.cumsum(torch.tensor(3.0), 0))
    # position ids from an attention mask, as Hugging Face models make them
    mask = torch.tensor([[1, 1, 1, 0], [0, 1, 1, 1]])
    close(hal(mask).cumsum(-1) - 1, mask.cumsum(-1) - 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_cumprod(dtype, strict):
    x = sample(3, 7, dtype=dtype).clamp(-3, 3)
    close(torch.cumprod(hal(x), 1), torch.cumprod(x, 1), rtol=1e-5, atol=1e-5)
    close(torch.cumprod(hal(x), 0), torch.cumprod(x, 0), rtol=1e-5, atol=1e-5)


def test_cumsum_backward_matches_cpu():
    x = sample(3, 9, dtype=torch.float64).requires_grad_()
    y = hal(x.detach()).requires_grad_()
    torch.cumsum(x, 1).pow(2).sum().backward()
    torch.cumsum(y, 1).pow(2).sum().backward()
    close(y.grad, x.grad)


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert, strict):
    elements = sample(3, 5, dtype=torch.int64)
    tests = elements.flatten()[::3].clone()
    close(torch.isin(hal(elements), hal(tests), invert=invert),
          torch.isin(elements, tests, invert=invert))
    close(torch.isin(hal(elements), hal(torch.tensor([], dtype=torch.long)), invert=invert),
          torch.isin(elements, torch.tensor([], dtype=torch.long), invert=invert))
    close(torch.isin(hal(elements), 7, invert=invert), torch.isin(elements, 7, invert=invert))
    floats = sample(4, 4)
    close(torch.isin(hal(floats), hal(floats[0])), torch.isin(floats, floats[0]))
    out = hal(torch.empty(0, dtype=torch.bool))
    torch.isin(hal(elements), hal(tests), invert=invert, out=out)
    close(out, torch.isin(elements, tests, invert=invert))
    assert torch.isin(hal(elements), hal(tests)).device.type == HAL


def test_isin_refuses_bool_as_cpu(strict):
    with pytest.raises(RuntimeError, match="Unsupported input type"):
        torch.isin(hal(torch.tensor([True])), hal(torch.tensor([True])))
