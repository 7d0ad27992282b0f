"""torch.optim on hal (csrc/aten/native/optim.cpp): SGD, Adam and AdamW with
fused=True run _fused_sgd_ / _fused_adam_ / _fused_adamw_ on the sgd_step and
adam_step kernels; the default (foreach) path decomposes into elementwise ops.

Each test takes a few steps with the same gradients on hal and on the CPU's
single-tensor reference (foreach=False, fused=False) and compares parameters
and optimizer state within 1e-6 relative."""

import copy

import pytest
import torch

HAL = torch.device("hal")
RTOL = 1e-6
STEPS = 3
FUSED_OPS = ("_fused_sgd_", "_fused_adam_", "_fused_adamw_")

SGD_CONFIGS = {
    "momentum": dict(lr=0.1, momentum=0.9),
    "nesterov": dict(lr=0.1, momentum=0.9, nesterov=True),
    "weight_decay_dampening": dict(lr=0.05, momentum=0.8, dampening=0.3,
                                   weight_decay=0.01),
    "plain_maximize": dict(lr=0.1, maximize=True, weight_decay=0.1),
}
ADAM_CONFIGS = {
    "adam": (torch.optim.Adam, dict(lr=0.01)),
    "adam_amsgrad": (torch.optim.Adam, dict(lr=0.01, amsgrad=True)),
    "adam_weight_decay_maximize": (torch.optim.Adam,
                                   dict(lr=0.01, weight_decay=0.1, maximize=True)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.01)),
    "adamw_amsgrad": (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1,
                                              amsgrad=True, betas=(0.8, 0.9))),
}


def make_params(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    shapes = [(8, 5), (5,), (3, 4, 2), ()]
    return [torch.randn(s, generator=g, dtype=dtype) for s in shapes]


def make_grads(params, step):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g, dtype=p.dtype) for p in params]


def relative_difference(actual, expected):
    scale = max(expected.abs().max().item(), 1e-30) if expected.numel() else 1.0
    return (actual.cpu() - expected).abs().max().item() / scale if expected.numel() else 0.0


def transposed_copy(t, device):
    """`t` on `device` as a non-contiguous (transposed) view, for rank >= 2."""
    if t.dim() < 2:
        return t.to(device)
    return t.transpose(0, 1).contiguous().to(device).transpose(0, 1)


def run(optimizer_class, options, device, dtype=torch.float32, place_grad=None):
    """Steps an optimizer over make_params(); returns (params, state)."""
    params = [p.to(device).requires_grad_() for p in make_params(dtype)]
    optimizer = optimizer_class(params, **options)
    for step in range(STEPS):
        for p, grad in zip(params, make_grads(params, step)):
            p.grad = place_grad(grad, device) if place_grad else grad.to(device)
        optimizer.step()
    return [p.detach() for p in params], optimizer.state_dict()["state"]


def assert_matches_reference(optimizer_class, options, hal_options, dtype=torch.float32,
                             rtol=RTOL, place_grad=None):
    expected, expected_state = run(optimizer_class, dict(options, foreach=False), "cpu", dtype)
    actual, actual_state = run(optimizer_class, dict(options, **hal_options), HAL, dtype,
                               place_grad)
    for a, e in zip(actual, expected):
        assert a.device.type == "hal"
        assert relative_difference(a, e) <= rtol
    for index, state in expected_state.items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                got = actual_state[index][key]
                assert relative_difference(got.cpu().to(value.dtype), value) <= rtol, key


def fused_fallbacks():
    return {op: n for op, n in torch.hal.fallback_stats().items()
            if op.startswith(FUSED_OPS)}


@pytest.mark.parametrize("name", SGD_CONFIGS)
def test_fused_sgd_matches_cpu(name):
    torch.hal.reset_fallback_stats()
    assert_matches_reference(torch.optim.SGD, SGD_CONFIGS[name], dict(fused=True))
    assert not fused_fallbacks()


@pytest.mark.parametrize("name", ADAM_CONFIGS)
def test_fused_adam_matches_cpu(name):
    torch.hal.reset_fallback_stats()
    optimizer_class, options = ADAM_CONFIGS[name]
    assert_matches_reference(optimizer_class, options, dict(fused=True))
    assert not fused_fallbacks()


def test_fused_adam_with_tensor_lr():
    torch.hal.reset_fallback_stats()
    assert_matches_reference(torch.optim.Adam, dict(lr=0.01), dict(fused=True, lr=torch.tensor(0.01)))
    assert_matches_reference(torch.optim.AdamW, dict(lr=0.02), dict(fused=True, lr=torch.tensor(0.02)))
    assert not fused_fallbacks()


@pytest.mark.skipif(not torch.hal.is_available()
                    or torch.float64 not in torch.hal.get_device_properties().supported_dtypes,
                    reason="the hal device has no float64")
def test_fused_float64():
    assert_matches_reference(torch.optim.SGD, SGD_CONFIGS["nesterov"], dict(fused=True),
                             torch.float64)
    assert_matches_reference(torch.optim.AdamW, dict(lr=0.01, amsgrad=True), dict(fused=True),
                             torch.float64)


def test_fused_non_contiguous_grads():
    for optimizer_class, options in [(torch.optim.SGD, SGD_CONFIGS["nesterov"]),
                                     ADAM_CONFIGS["adamw_amsgrad"]]:
        assert_matches_reference(optimizer_class, options, dict(fused=True),
                                 place_grad=transposed_copy)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_fused_half_precision(dtype):
    if dtype not in torch.hal.get_device_properties().supported_dtypes:
        pytest.skip(f"the hal device has no {dtype}")
    # The CPU's vectorized loops may fuse a multiply-add that the kernels round
    # twice (docs/kernels.md, optim): one unit in the last place of the dtype.
    rtol = torch.finfo(dtype).eps
    assert_matches_reference(torch.optim.SGD, SGD_CONFIGS["weight_decay_dampening"],
                             dict(fused=True), dtype, rtol)
    assert_matches_reference(torch.optim.Adam, dict(lr=0.01, amsgrad=True), dict(fused=True),
                             dtype, rtol)
    assert_matches_reference(torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1),
                             dict(fused=True), dtype, rtol)


def fused_sgd_call(device, grad_scale=None, found_inf=None, lr=0.1):
    """One torch._fused_sgd_ call on copies of fixed tensors; returns them."""
    params = [t.to(device) for t in make_params()]
    grads = [t.to(device) for t in make_grads(params, 0)]
    buffers = [torch.zeros_like(p) for p in params]
    torch._fused_sgd_(params, grads, buffers, weight_decay=0.0, momentum=0.9, lr=lr,
                      dampening=0.0, nesterov=False, maximize=False, is_first_step=True,
                      grad_scale=None if grad_scale is None else grad_scale.to(device),
                      found_inf=None if found_inf is None else found_inf.to(device))
    return params, grads, buffers


@pytest.mark.parametrize("found", [0.0, 1.0])
def test_fused_sgd_grad_scale_and_found_inf(found):
    # GradScaler's arguments: gradients unscaled in place, the step skipped
    # when an inf was found. The CPU's fused kernel is the reference.
    scale, inf = torch.tensor(4.0), torch.tensor(found)
    expected = fused_sgd_call("cpu", scale, inf)
    actual = fused_sgd_call(HAL, scale, inf)
    for got_list, want_list in zip(actual, expected):
        for got, want in zip(got_list, want_list):
            assert relative_difference(got, want) <= RTOL
    changed = any(not torch.equal(p.cpu(), q) for p, q in zip(actual[0], make_params()))
    assert changed == (found == 0.0)


def test_fused_sgd_tensor_lr_on_device():
    expected = fused_sgd_call("cpu", lr=0.1)
    actual = fused_sgd_call(HAL, lr=torch.tensor(0.1, device=HAL))
    for got, want in zip(actual[0], expected[0]):
        assert relative_difference(got, want) <= RTOL


def test_mismatched_lists_are_clear_errors():
    params = [torch.zeros(3, device=HAL), torch.zeros(2, device=HAL)]
    with pytest.raises(RuntimeError, match="expected 2 grads"):
        torch._fused_sgd_(params, params[:1], [], weight_decay=0.0, momentum=0.0, lr=0.1,
                          dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    cpu_grads = [torch.zeros(3), torch.zeros(2)]
    with pytest.raises(RuntimeError, match="is on cpu"):
        torch._fused_adam_(params, cpu_grads, params, params, [],
                           [torch.ones((), device=HAL)] * 2, lr=0.1, beta1=0.9,
                           beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False,
                           maximize=False)


@pytest.mark.parametrize("optimizer_class, options", [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.Adam, dict(lr=0.01)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.01)),
], ids=["sgd", "adam", "adamw"])
def test_default_foreach_path_matches_cpu(optimizer_class, options):
    torch.hal.reset_fallback_stats()
    assert_matches_reference(optimizer_class, options, {})
    fallbacks = torch.hal.fallback_stats()
    if fallbacks:
        pytest.skip(f"results match, but the foreach path still falls back to the CPU for "
                    f"ops of other families: {sorted(fallbacks)}")
