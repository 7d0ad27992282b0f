"""cat, flip and arange run natively on hal and match CPU."""

import pytest
import torch

from hal_testing import HAL, close, hal, sample


def test_cat_promotes_and_skips_legacy_empty_inputs(strict):
    a, b = sample(2, 3), torch.arange(6).reshape(2, 3)
    empty = torch.empty(0)
    for dim in (0, 1, -1):
        close(torch.cat([hal(a), hal(empty), hal(b)], dim), torch.cat([a, empty, b], dim))


def test_cat_of_views_and_into_out(strict):
    a = sample(4, 5)
    out = torch.empty(0, device=HAL)
    torch.cat([hal(a).t(), hal(a)[:, :4].t()], 0, out=out)
    close(out, torch.cat([a.t(), a[:, :4].t()], 0))


def test_cat_refuses_an_out_that_overlaps_an_input():
    x = torch.zeros(4, device=HAL)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        torch.cat([x[:2], x[2:]], out=x)


def test_stack_and_mismatched_sizes(strict):
    a, b = sample(2, 3), sample(2, 3, seed=1)
    close(torch.stack([hal(a), hal(b)], 1), torch.stack([a, b], 1))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([hal(a), hal(sample(3, 2))], 0)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1,)])
def test_flip(dims, strict):
    x = sample(3, 4, 5)
    close(torch.flip(hal(x), dims), torch.flip(x, dims))
    close(torch.flip(hal(x).transpose(0, 2), dims), torch.flip(x.transpose(0, 2), dims))


@pytest.mark.parametrize("args", [(5,), (1, 7, 2), (0.5, 2.0, 0.25), (10, 0, -3)])
def test_arange(args, strict):
    close(torch.arange(*args, device=HAL), torch.arange(*args))
