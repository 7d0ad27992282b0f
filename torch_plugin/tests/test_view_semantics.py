"""What a CPU copy cannot do: views that must alias their input, and writes
into tensors that share memory. Such ops are native on hal or refused with an
error; they never silently give a result that differs from CPU."""

import pytest
import torch

from hal_testing import HAL


def test_unfold_is_a_view_whose_writes_reach_the_input(strict):
    t = torch.ones(10, device=HAL)
    v = t.unfold(0, 3, 2)
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    v[1, 0] = 0
    expected = torch.ones(10)
    expected.unfold(0, 3, 2)[1, 0] = 0
    assert torch.equal(t.cpu(), expected)


def test_view_as_real_and_view_as_complex_alias(strict):
    results = []
    for device in ("cpu", HAL):
        pairs = torch.arange(8.0, device=device).reshape(4, 2)
        as_complex = torch.view_as_complex(pairs)
        torch.view_as_real(as_complex)[2, 1] = -1.0
        assert as_complex.dtype == torch.complex64 and as_complex.shape == (4,)
        results.append((pairs.cpu(), as_complex.cpu()))
    (cpu_pairs, cpu_complex), (hal_pairs, hal_complex) = results
    assert hal_pairs[2, 1] == -1.0
    assert torch.equal(hal_pairs, cpu_pairs) and torch.equal(hal_complex, cpu_complex)


@pytest.mark.parametrize("make", [
    lambda x: x.expand(3, 4).add_(1),
    lambda x: x.expand(3, 4).mul_(2),
    lambda x: torch.add(x, 1, out=x.expand(3, 4)),
], ids=["add_", "mul_", "add.out"])
def test_writing_an_internally_overlapping_tensor_raises_as_on_cpu(make):
    for device in ("cpu", HAL):
        x = torch.zeros(1, 4, device=device)
        with pytest.raises(RuntimeError, match="unsupported operation: more than one element"):
            make(x)
        assert torch.equal(x.cpu(), torch.zeros(1, 4))


def test_an_input_partly_overlapping_the_output_raises_as_on_cpu():
    for device in ("cpu", HAL):
        x = torch.arange(6.0, device=device)
        with pytest.raises(RuntimeError, match="unsupported operation: some elements"):
            x[1:].add_(x[:-1])
        assert torch.equal(x.cpu(), torch.arange(6.0))


def test_full_overlap_is_allowed_as_on_cpu(strict):
    x = torch.arange(4.0, device=HAL)
    x.add_(x)
    assert torch.equal(x.cpu(), torch.arange(4.0) * 2)


def test_a_falling_back_view_op_is_refused_naming_it(monkeypatch):
    # aten::_values (sparse) stands for any view op without a hal kernel: a
    # CPU copy would not alias, so the fallback refuses it even without
    # HAL_STRICT.
    monkeypatch.delenv("HAL_STRICT", raising=False)
    x = torch.ones(3, device=HAL)
    with pytest.raises(NotImplementedError, match="'aten::_values' returns a view"):
        torch.ops.aten._values.default(x)


def test_a_fallback_writing_an_overlapping_tensor_is_refused(monkeypatch):
    # exponential_ has no kernel: its fallback would fill an independent CPU
    # copy of an expanded tensor, where CPU raises.
    monkeypatch.delenv("HAL_STRICT", raising=False)
    x = torch.ones(1, 4, device=HAL)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element"):
        x.expand(3, 4).exponential_()
    assert torch.equal(x.cpu(), torch.ones(1, 4))


def test_a_fallback_writing_a_view_reaches_the_base(monkeypatch):
    monkeypatch.delenv("HAL_STRICT", raising=False)
    t = torch.zeros(4, 4, device=HAL)
    t[:, 1].exponential_()
    cpu = t.cpu()
    assert (cpu[:, 1] > 0).all() and torch.equal(cpu[:, [0, 2, 3]], torch.zeros(4, 3))
