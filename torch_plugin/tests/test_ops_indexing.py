"""Indexing ops on hal (index_select, gather, scatter with a tensor or a value,
scatter_add, index_add, advanced indexing x[i, j]) against the CPU: functional, in-place and out= forms,
non-contiguous operands, dtypes, duplicate indices, autograd, shape errors, and
no CPU fallback (HAL_STRICT=1 through the `strict` fixture, or the fallback
counters where other families' ops take part)."""

import pytest
import torch

from hal_testing import close, fallbacks_of, hal, sample

HAL = "hal"
# The ops of this family; none of them may fall back to the CPU.
INDEXING_OPS = ("index_select", "gather", "scatter", "scatter_", "scatter_add",
                "scatter_add_", "index_add", "index_add_")
DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool]
ADDING_DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32]  # no bool


def indexing_fallbacks():
    return fallbacks_of(INDEXING_OPS)


def indices(high, *shape, seed=0):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------ index_select

@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select(strict, dtype):
    x = sample(5, 4, 3, dtype=dtype)
    for dim in (0, 1, -1):
        index = indices(x.shape[dim], 6, seed=dim + 3)  # duplicates likely
        close(hal(x).index_select(dim, hal(index)), x.index_select(dim, index))
    index = torch.tensor([2, 0], dtype=torch.int32)
    close(hal(x).transpose(0, 2).index_select(1, hal(index)),
          x.transpose(0, 2).index_select(1, index))
    out = hal(torch.empty(0, dtype=dtype))
    torch.index_select(hal(x), 0, hal(torch.tensor([4, 4, 1])), out=out)
    close(out, x.index_select(0, torch.tensor([4, 4, 1])))
    close(hal(x).index_select(0, hal(torch.tensor(3))), x.index_select(0, torch.tensor(3)))
    close(hal(x).index_select(1, hal(torch.tensor([], dtype=torch.long))),
          x.index_select(1, torch.tensor([], dtype=torch.long)))


def test_index_select_rejects_bad_index(strict):
    x = hal(sample(4, 3))
    with pytest.raises(RuntimeError, match="vector"):
        x.index_select(0, hal(torch.zeros(2, 2, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="int32 or int64"):
        x.index_select(0, hal(torch.zeros(2)))


def test_index_select_out_of_range_fails_on_sync(strict):
    x = hal(sample(4, 3))
    x.index_select(0, hal(torch.tensor([1, 7])))
    with pytest.raises(ValueError, match="index 7 .* out of range"):
        torch.hal.synchronize()
    close(x.index_select(0, hal(torch.tensor([1]))), sample(4, 3)[1:2])  # still usable


# ------------------------------------------------------------------ gather

@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(strict, dtype):
    x = sample(4, 5, 3, dtype=dtype)
    for dim in (0, 1, 2):
        index = indices(x.shape[dim], 3, 4, 2, seed=dim)
        close(hal(x).gather(dim, hal(index)), x.gather(dim, index))
    index = indices(4, 5, 3, 6)
    close(hal(x).transpose(0, 2).gather(2, hal(index).transpose(0, 1)[:, :3]),
          x.transpose(0, 2).gather(2, index.transpose(0, 1)[:, :3]))
    out = hal(torch.empty(0, dtype=dtype))
    small = indices(5, 2, 2, 3)
    torch.gather(hal(x), 1, hal(small), out=out)
    close(out, x.gather(1, small))


def test_gather_rejects_bad_shapes(strict):
    x = hal(sample(3, 4))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, hal(torch.zeros(3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="no larger than self"):
        x.gather(1, hal(torch.zeros(5, 2, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="int32 or int64"):
        x.gather(1, hal(torch.zeros(3, 2, dtype=torch.float32)))


def test_gather_takes_int32_indices_as_cpu(strict):
    x = sample(3, 4)
    index = torch.tensor([[3, 0], [1, 1], [0, 2]], dtype=torch.int32)
    assert torch.equal(hal(x).gather(1, hal(index)).cpu(), x.gather(1, index))


def test_gather_backward_matches_cpu():
    torch.hal.reset_fallback_stats()
    x, index = sample(4, 5, dtype=torch.float64), indices(5, 4, 7)
    cpu_x, hal_x = x.clone().requires_grad_(), hal(x).requires_grad_()
    cpu_x.gather(1, index).sum().backward()
    hal_x.gather(1, hal(index)).sum().backward()
    close(hal_x.grad, cpu_x.grad)
    assert torch.autograd.gradcheck(lambda t: t.gather(1, hal(index)),
                                    (hal(x).requires_grad_(),))
    assert indexing_fallbacks() == {}


# ------------------------------------------------------------------ scatter

def unique_rows_index(rows, *shape, seed=0):
    """An index whose values are distinct along dim 0, so scatter has one writer per element."""
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(rows, generator=g)[:shape[0]]
                        for _ in range(shape[1])], dim=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_src_and_value(strict, dtype):
    x, src = sample(5, 4, dtype=dtype), sample(3, 4, dtype=dtype, seed=1)
    index = unique_rows_index(5, 3, 4)
    close(hal(x).scatter(0, hal(index), hal(src)), x.scatter(0, index, src))
    close(hal(x).scatter(0, hal(index), True if dtype == torch.bool else 7),
          x.scatter(0, index, True if dtype == torch.bool else 7))
    in_place = hal(x)
    result = in_place.scatter_(0, hal(index), hal(src))
    assert result is in_place
    close(in_place, x.clone().scatter_(0, index, src))
    out = hal(torch.empty(0, dtype=dtype))
    torch.scatter(hal(x), 0, hal(index), hal(src), out=out)
    close(out, x.scatter(0, index, src))
    # A non-contiguous self: updated through its strides.
    xt = hal(x.t().contiguous()).t()
    xt.scatter_(0, hal(index), hal(src))
    close(xt, x.scatter(0, index, src))
    # Along dim 1 with a smaller index than src.
    column_index = unique_rows_index(4, 2, 5).t()
    close(hal(x).scatter(1, hal(column_index), hal(sample(5, 3, dtype=dtype))),
          x.scatter(1, column_index, sample(5, 3, dtype=dtype)))


def test_scatter_rejects_mixed_dtypes(strict):
    with pytest.raises(RuntimeError, match="dtype"):
        hal(sample(3, 2)).scatter_(0, hal(torch.zeros(1, 2, dtype=torch.long)),
                                   hal(sample(1, 2, dtype=torch.float64)))


@pytest.mark.parametrize("dtype", ADDING_DTYPES)
def test_scatter_add(strict, dtype):
    x, src = sample(4, 3, dtype=dtype), sample(6, 3, dtype=dtype, seed=1)
    index = indices(4, 6, 3)  # duplicates accumulate
    close(hal(x).scatter_add(0, hal(index), hal(src)), x.scatter_add(0, index, src))
    in_place = hal(x)
    in_place.scatter_add_(0, hal(index), hal(src))
    close(in_place, x.clone().scatter_add_(0, index, src))
    out = hal(torch.empty(0, dtype=dtype))
    torch.scatter_add(hal(x), 0, hal(index), hal(src), out=out)
    close(out, x.scatter_add(0, index, src))
    # A zero tensor plus scatter_add: the gradient of gather.
    zeros = torch.zeros(4, 5, dtype=dtype)
    index1 = indices(5, 4, 8)
    close(hal(zeros).scatter_add(1, hal(index1), hal(sample(4, 8, dtype=dtype))),
          zeros.scatter_add(1, index1, sample(4, 8, dtype=dtype)))


# ------------------------------------------------------------------ index_add

@pytest.mark.parametrize("dtype", ADDING_DTYPES)
def test_index_add(strict, dtype):
    x, source = sample(5, 3, dtype=dtype), sample(7, 3, dtype=dtype, seed=1)
    index = indices(5, 7)
    alpha = 2.5 if dtype.is_floating_point else 3
    close(hal(x).index_add(0, hal(index), hal(source), alpha=alpha),
          x.index_add(0, index, source, alpha=alpha))
    in_place = hal(x)
    assert in_place.index_add_(0, hal(index), hal(source)) is in_place
    close(in_place, x.clone().index_add_(0, index, source))
    out = hal(torch.empty(0, dtype=dtype))
    torch.index_add(hal(x), 0, hal(index), hal(source), out=out)
    close(out, x.index_add(0, index, source))
    index1 = torch.tensor([2, 0, 2, 2], dtype=torch.int32)
    source1 = sample(4, 6, dtype=dtype, seed=2).t()  # non-contiguous
    close(hal(x).index_add(1, hal(index1), hal(source1)[:5]),
          x.index_add(1, index1, source1[:5]))


def test_index_add_rejects_bad_shapes(strict):
    x = hal(sample(5, 3))
    with pytest.raises(RuntimeError, match="Number of indices"):
        x.index_add_(0, hal(torch.tensor([0, 1])), hal(sample(3, 3)))
    with pytest.raises(RuntimeError, match="dtype"):
        x.index_add_(0, hal(torch.tensor([0])), hal(sample(1, 3, dtype=torch.float64)))


def test_index_add_and_select_gradcheck():
    torch.hal.reset_fallback_stats()
    x = hal(sample(4, 3, dtype=torch.float64)).requires_grad_()
    source = hal(sample(5, 3, dtype=torch.float64, seed=1)).requires_grad_()
    index = hal(torch.tensor([3, 0, 3, 1, 2]))
    assert torch.autograd.gradcheck(lambda a, b: a.index_add(0, index, b), (x, source))
    assert torch.autograd.gradcheck(lambda a: a.index_select(0, index), (x,))
    assert indexing_fallbacks() == {}


# ------------------------------------------------------------------ advanced indexing

def test_advanced_indexing_matches_cpu(strict):
    x = sample(4, 5, 6)
    i, j = torch.tensor([[0, 3], [-1, 2]]), torch.tensor([1, -5])
    for key in [(i,), (slice(None), i), (i, j), (slice(None), i, j), (i, slice(None), j),
                (Ellipsis, j), (i, j, torch.tensor(2))]:
        hal_key = tuple(hal(k) if isinstance(k, torch.Tensor) else k for k in key)
        close(hal(x)[hal_key], x[key])
    close(hal(x).transpose(0, 2)[hal(i)], x.transpose(0, 2)[i])
    close(hal(x)[i], x[i])  # a CPU index, as CUDA accepts
    ints = sample(4, 5, dtype=torch.int64)
    close(hal(ints)[hal(i.int())], ints[i.int()])


def test_advanced_indexing_result_is_contiguous(strict):
    x = sample(4, 5, 6)
    result = hal(x)[:, hal(torch.tensor([0, 2]))]
    assert result.is_contiguous()
    close(result.view(-1), x[:, torch.tensor([0, 2])].view(-1))


def test_advanced_indexing_out_of_range_fails_on_sync(strict):
    x = hal(sample(4, 3))
    x[hal(torch.tensor([1, 2])), hal(torch.tensor([0, 3]))]  # 3 is out of range in dim 1
    with pytest.raises(ValueError, match="out of range"):
        torch.hal.synchronize()
    close(x[hal(torch.tensor([1]))], sample(4, 3)[1:2])  # still usable


def test_advanced_indexing_with_a_mask_falls_back_to_cpu():
    x = sample(4, 3)
    mask = x > 0
    torch.hal.reset_fallback_stats()
    close(hal(x)[hal(mask)], x[mask])
    assert any("index" in op for op in torch.hal.fallback_stats())


def test_index_put_matches_cpu(strict):
    i, j = torch.tensor([0, 2, -1]), torch.tensor([1, 3, 4])
    for key, values in [((i, j), torch.tensor([1.0, 2.0, 3.0])), ((slice(None), j), 7.0),
                        ((i,), sample(3, 5, seed=2)), ((i, slice(None), j), sample(3, 6)),
                        ((Ellipsis, j), sample(3,))]:
        x = sample(4, 6, 5) if len(key) == 3 or key[0] is Ellipsis else sample(4, 5)
        expected = x.clone()
        expected[key] = values
        actual = hal(x)
        hal_key = tuple(hal(k) if isinstance(k, torch.Tensor) else k for k in key)
        actual[hal_key] = hal(values) if isinstance(values, torch.Tensor) else values
        close(actual, expected)


def test_index_put_accumulates_duplicates_and_writes_through_strides(strict):
    x = sample(4, 5)
    index = torch.tensor([1, 1, 3, 1])
    source = sample(4, 5, seed=3)
    close(hal(x).index_put_((hal(index),), hal(source), accumulate=True),
          x.clone().index_put_((index,), source, accumulate=True))
    # A strided view whose indexed dims cannot merge into one: written through a copy.
    base_cpu, base_hal = sample(5, 6), hal(sample(5, 6))
    rows, cols = torch.tensor([0, 4]), torch.tensor([2, 1])
    base_cpu[:, ::2][rows, cols] = -1.0
    base_hal[:, ::2][hal(rows), hal(cols)] = -1.0
    close(base_hal, base_cpu)


def test_index_put_with_a_mask_falls_back_to_cpu():
    x = sample(4, 3)
    expected = x.clone()
    expected[x > 0] = 0.0
    actual = hal(x)
    torch.hal.reset_fallback_stats()
    actual[actual > 0] = 0.0
    close(actual, expected)
    assert any("index_put" in op for op in torch.hal.fallback_stats())
