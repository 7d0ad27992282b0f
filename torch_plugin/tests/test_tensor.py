"""Tensor basics on hal: creation, transfers, views and strides, in-place
writes, dtype conversions, printing, indexing and .item(). Everything here
runs on hal's own kernels (the `strict` fixture turns a CPU fallback into an
error) unless a test says otherwise."""

import warnings

import pytest
import torch

HAL = torch.device("hal")
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
          torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
          torch.bool]


def sample(dtype, shape=(3, 5)):
    values = torch.arange(-7, -7 + torch.Size(shape).numel()).reshape(shape)
    return (values % 2 == 0) if dtype is torch.bool else values.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_every_dtype(dtype, strict):
    host = sample(dtype)
    device = host.to(HAL)
    assert device.device == torch.device("hal", 0)
    assert device.dtype == dtype and device.shape == host.shape
    assert torch.equal(device.cpu(), host)


def test_factories(strict):
    assert torch.equal(torch.zeros(2, 3, device=HAL).cpu(), torch.zeros(2, 3))
    assert torch.equal(torch.ones(4, dtype=torch.int64, device=HAL).cpu(),
                       torch.ones(4, dtype=torch.int64))
    assert torch.equal(torch.full((2, 2), 7.5, device=HAL).cpu(),
                       torch.full((2, 2), 7.5))
    empty = torch.empty(0, 3, device=HAL)
    assert empty.numel() == 0 and empty.cpu().shape == (0, 3)
    strided = torch.empty_strided((2, 3), (1, 2), device=HAL)
    assert strided.stride() == (1, 2)


def test_views_share_storage(strict):
    base = torch.arange(12.).reshape(3, 4).to(HAL)
    transposed = base.t()
    assert transposed.stride() == (1, 4)
    assert transposed.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    row = base[1]
    row.fill_(-1.0)
    expected = torch.arange(12.).reshape(3, 4)
    expected[1] = -1.0
    assert torch.equal(base.cpu(), expected)
    assert torch.equal(transposed.cpu(), expected.t())
    assert torch.equal(base.view(4, 3).cpu(), expected.view(4, 3))
    assert torch.equal(base[:, 1::2].cpu(), expected[:, 1::2])
    assert torch.equal(base.as_strided((2, 2), (1, 4), 1).cpu(),
                       expected.as_strided((2, 2), (1, 4), 1))


def test_contiguous_copy_of_a_transposed_view(strict):
    host = torch.arange(24.).reshape(2, 3, 4)
    device = host.to(HAL).permute(2, 0, 1)
    assert not device.is_contiguous()
    packed = device.contiguous()
    assert packed.is_contiguous()
    assert torch.equal(packed.cpu(), host.permute(2, 0, 1))


def test_in_place_copy_into_a_view(strict):
    device = torch.zeros(4, 4, device=HAL)
    device[1:3, ::2].copy_(torch.tensor([[1., 2.], [3., 4.]]))
    expected = torch.zeros(4, 4)
    expected[1:3, ::2] = torch.tensor([[1., 2.], [3., 4.]])
    assert torch.equal(device.cpu(), expected)


def test_copy_broadcasts_and_casts(strict):
    device = torch.empty(3, 4, dtype=torch.float64, device=HAL)
    device.copy_(torch.arange(4, dtype=torch.int32))
    assert torch.equal(device.cpu(), torch.arange(4.).double().expand(3, 4))


@pytest.mark.parametrize("target", [torch.float64, torch.int32, torch.bool,
                                    torch.bfloat16], ids=str)
def test_dtype_conversion_on_device(target, strict):
    host = torch.tensor([-2.5, -0.0, 0.4, 1.5, 3.0])
    assert torch.equal(host.to(HAL).to(target).cpu(), host.to(target))


def test_copy_between_hal_and_non_contiguous_cpu(strict):
    host = torch.arange(20.).reshape(4, 5)[:, 1:4]
    device = host.to(HAL)
    assert torch.equal(device.cpu(), host)
    out = torch.zeros(5, 4).t()
    out.copy_(torch.arange(20.).reshape(4, 5).to(HAL))
    assert torch.equal(out, torch.arange(20.).reshape(4, 5))


def test_item_and_scalars(strict):
    device = torch.tensor([1.25, 2.5], device=HAL)
    assert device[1].item() == 2.5
    assert torch.tensor(7, device=HAL).item() == 7
    assert torch.tensor(True, device=HAL).item() is True


def test_printing():
    text = repr(torch.tensor([1.0, 2.0], device=HAL))
    assert text == "tensor([1., 2.], device='hal:0')"


def test_resize_keeps_contents(strict):
    device = torch.arange(4.).to(HAL)
    device.resize_(8)
    assert torch.equal(device[:4].cpu(), torch.arange(4.))
    assert device.shape == (8,)


def test_set_shares_storage(strict):
    source = torch.arange(6.).to(HAL)
    alias = torch.empty(0, device=HAL)
    alias.set_(source.untyped_storage(), 2, (2, 2), (2, 1))
    assert torch.equal(alias.cpu(), torch.tensor([[2., 3.], [4., 5.]]))


def test_an_op_without_a_hal_kernel_falls_back_and_is_counted():
    torch.hal.reset_fallback_stats()
    x = torch.tensor([3.0, 1.0, 2.0], device=HAL)
    result = torch.sort(x).values  # sort has no kernel in the standard set
    assert torch.equal(result.cpu(), torch.tensor([1.0, 2.0, 3.0]))
    assert result.is_hal
    counted = {k: v for k, v in torch.hal.fallback_stats().items()
               if k.startswith("aten::sort")}
    assert counted and all(v >= 1 for v in counted.values())


def test_strict_mode_names_the_op(strict):
    x = torch.tensor([3.0, 1.0, 2.0], device=HAL)
    with pytest.raises(RuntimeError, match="HAL_STRICT=1: 'aten::sort"):
        torch.sort(x)


# ---- complex tensors: held on hal, computed by the CPU fallback

def test_complex_tensors_round_trip_and_convert():
    z = torch.randn(3, 4, dtype=torch.complex64)
    h = z.to("hal")
    assert h.dtype == torch.complex64 and h.device.type == "hal"
    assert torch.equal(h.cpu(), z)
    assert torch.equal(h.t().contiguous().cpu(), z.t().contiguous())
    assert torch.equal(h.to(torch.complex128).cpu(), z.to(torch.complex128))
    x = torch.randn(3, 4)
    assert torch.equal(x.to("hal").to(torch.complex64).cpu(), x.to(torch.complex64))
    with warnings.catch_warnings():  # CPU's warning, given once per process
        warnings.simplefilter("ignore")
        assert torch.equal(h.float().cpu(), z.real)
    assert torch.equal(torch.view_as_real(h).cpu(), torch.view_as_real(z))


def test_complex_fill_conj_and_fallback_ops():
    filled = torch.empty(2, 3, dtype=torch.complex64, device="hal").fill_(1 - 2j)
    assert torch.equal(filled.cpu(), torch.full((2, 3), 1 - 2j, dtype=torch.complex64))
    z = torch.randn(5, dtype=torch.complex64)
    h = z.to("hal")
    assert torch.equal(h.conj().cpu(), z.conj())
    assert torch.equal(h.conj().clone().cpu(), z.conj().resolve_conj())
    assert torch.equal(torch.conj_physical(h).cpu(), torch.conj_physical(z))
    x = torch.randn(8)
    torch.testing.assert_close(torch.fft.fft(x.to("hal")).cpu(), torch.fft.fft(x))


def test_complex_arithmetic_is_refused_by_name():
    h = torch.randn(3, dtype=torch.complex64).to("hal")
    with pytest.raises(NotImplementedError, match="ComplexFloat"):
        h * h


def test_conjugated_copies_across_devices():
    z = torch.randn(3, 3, dtype=torch.complex64)
    h = z.to("hal")
    on_cpu = torch.empty(3, 3, dtype=torch.complex64)
    on_cpu.copy_(h.conj())
    assert torch.equal(on_cpu, z.conj())
    for source in (z.conj(), z.conj().t()):
        for dtype in (torch.complex64, torch.complex128):
            on_hal = torch.empty(3, 3, dtype=dtype, device="hal")
            on_hal.copy_(source)
            assert torch.equal(on_hal.cpu(), source.to(dtype))
    real = torch.empty(3, 3, device="hal")
    with warnings.catch_warnings():  # CPU's warning, given once per process
        warnings.simplefilter("ignore")
        real.copy_(h.conj())
    assert torch.equal(real.cpu(), z.real)
    flags = torch.tensor([1j, 0j, 1 + 0j]).to("hal").bool()
    assert flags.cpu().tolist() == [True, False, True]
