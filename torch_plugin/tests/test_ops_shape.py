"""flip and arange run natively on hal and match CPU."""

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
