"""Automatic mixed precision on hal: torch.autocast("hal", dtype=...) casts as
CUDA's autocast does (products and convolutions to the lower-precision dtype,
softmax/norms/losses to f32, several-input ops to the widest dtype) and
agrees with CPU autocast within the dtype's tolerance."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

HAL = "hal"
# Rounding to the lower-precision dtype once more or less than the CPU does.
TOLERANCE = {torch.bfloat16: {"rtol": 2e-2, "atol": 2e-2},
             torch.float16: {"rtol": 2e-3, "atol": 2e-3}}
LOWER_PRECISION = list(TOLERANCE)


def hal(t):
    return t.to(HAL)


def supported(dtype):
    if dtype not in torch.hal.get_amp_supported_dtype():
        pytest.skip(f"the driver has no {dtype}: autocast to it is unavailable on hal")


@pytest.mark.needs_no_device
def test_hal_is_an_autocast_device():
    assert torch.amp.is_autocast_available(HAL)


@pytest.mark.parametrize("dtype", LOWER_PRECISION)
def test_linear_runs_in_the_autocast_dtype_like_cpu(strict, dtype):
    supported(dtype)
    torch.manual_seed(0)
    cpu = nn.Linear(16, 8)
    dev = nn.Linear(16, 8).to(HAL)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(4, 16)
    with torch.autocast(HAL, dtype=dtype):
        out = dev(hal(x))
        product = hal(x) @ hal(x).t()
    with torch.autocast("cpu", dtype=dtype):
        expected = cpu(x)
    assert out.dtype == dtype and product.dtype == dtype
    assert dev.weight.dtype == torch.float32  # the parameters stay f32
    torch.testing.assert_close(out.cpu(), expected, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", LOWER_PRECISION)
def test_conv2d_runs_in_the_autocast_dtype(strict, dtype):
    supported(dtype)
    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    with torch.autocast(HAL, dtype=dtype):
        out = F.conv2d(hal(x), hal(w))
    assert out.dtype == dtype
    # The inputs rounded to dtype, the product summed in f32, rounded once.
    expected = F.conv2d(x.to(dtype).float(), w.to(dtype).float()).to(dtype)
    torch.testing.assert_close(out.cpu(), expected, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", LOWER_PRECISION)
def test_precision_sensitive_ops_run_in_float32(dtype):
    supported(dtype)
    # softmax and layer_norm belong to other families, which may still fall
    # back to the CPU: this checks the casting policy, not their kernels.
    x = hal(torch.randn(3, 4)).to(dtype)
    with torch.autocast(HAL, dtype=dtype):
        assert torch.softmax(x, dim=1).dtype == torch.float32
        assert F.layer_norm(x, (4,)).dtype == torch.float32
        assert torch.softmax(x, dim=1, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("dtype", LOWER_PRECISION)
def test_autocast_is_off_outside_the_region_and_for_other_devices(strict, dtype):
    supported(dtype)
    a = torch.randn(2, 2)
    with torch.autocast(HAL, dtype=dtype):
        assert (a @ a).dtype == torch.float32  # a CPU op: hal's autocast does not apply
    assert (hal(a) @ hal(a)).dtype == torch.float32
    with torch.autocast(HAL, dtype=dtype, enabled=False):
        assert (hal(a) @ hal(a)).dtype == torch.float32


def test_binary_cross_entropy_is_refused_under_autocast():
    supported(torch.bfloat16)
    p, target = hal(torch.rand(3)), hal(torch.rand(3))
    with torch.autocast(HAL, dtype=torch.bfloat16):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, target)
