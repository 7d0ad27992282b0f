"""Convolution, max pooling and batch normalization on hal against the CPU:
forward and backward with stride, padding, dilation, groups, ceil_mode,
training and evaluation, out= forms, dtypes, gradcheck in f64, transposed
convolutions, 3-D ones on CPU (a counted fallback), and no CPU fallback for
the rest of this family's ops."""

import copy

import pytest
import torch

from conftest import strict_mode
from hal_testing import fallbacks_of, hal
import torch.nn.functional as F
from torch import nn

HAL = "hal"
# This family's ATen ops (the entry points torch uses on a custom device).
CONV_OPS = ("convolution_overrideable", "convolution_backward_overrideable",
            "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
            "native_batch_norm", "native_batch_norm_backward",
            "_native_batch_norm_legit", "_batch_norm_with_update",
            "batch_norm_backward")
TOL = {"rtol": 1e-5, "atol": 1e-5}


def close(actual, expected, **tolerance):
    torch.testing.assert_close(actual.cpu(), expected, **(tolerance or TOL))


def conv_fallbacks():
    return fallbacks_of(CONV_OPS)


def run_both(fn, *tensors, hal_fn=None):
    """fn on CPU copies of tensors and hal_fn (default fn) on hal copies, all
    leaves requiring grad; returns (cpu_out, hal_out, cpu_inputs, hal_inputs)."""
    cpu_in = [t.detach().clone().requires_grad_() for t in tensors]
    hal_in = [hal(t.detach()).requires_grad_() for t in tensors]
    return fn(*cpu_in), (hal_fn or fn)(*hal_in), cpu_in, hal_in


def backward_both(cpu_out, hal_out):
    grad = torch.randn_like(cpu_out)
    cpu_out.backward(grad)
    hal_out.backward(hal(grad))


# ---- convolution -------------------------------------------------------------

CONV_CASES = {
    "plain": dict(),
    "stride_padding": dict(stride=2, padding=1),
    "asymmetric": dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
    "groups": dict(groups=2, padding=1),
    "depthwise": dict(groups=4),
}


@pytest.mark.parametrize("case", CONV_CASES.values(), ids=CONV_CASES.keys())
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_conv2d_forward_and_backward(strict, case, bias):
    torch.manual_seed(0)
    groups = case.get("groups", 1)
    x = torch.randn(2, 4, 7, 8, dtype=torch.float64)
    w = torch.randn(6 if groups != 4 else 8, 4 // groups, 3, 3, dtype=torch.float64)
    tensors = [x, w] + ([torch.randn(w.shape[0], dtype=torch.float64)] if bias else [])

    def conv(x, w, b=None):
        return F.conv2d(x, w, b, **case)

    cpu_out, hal_out, cpu_in, hal_in = run_both(conv, *tensors)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    for c, h in zip(cpu_in, hal_in):
        close(h.grad, c.grad)


def test_conv2d_float32_unbatched_input_and_module(strict):
    torch.manual_seed(0)
    cpu = nn.Conv2d(3, 5, 3, padding=1)
    dev = nn.Conv2d(3, 5, 3, padding=1).to(HAL)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(3, 6, 6)  # [C, H, W]: torch adds the batch dim
    out = dev(hal(x))
    assert out.shape == (5, 6, 6)
    close(out.detach(), cpu(x).detach())
    x4 = torch.randn(2, 3, 6, 6)
    close(dev(hal(x4)).detach(), cpu(x4).detach())


def test_conv_gradcheck():
    # gradcheck itself runs ops of other families: no strict mode here.
    torch.hal.reset_fallback_stats()
    x = hal(torch.randn(1, 2, 5, 5, dtype=torch.float64)).requires_grad_()
    w = hal(torch.randn(4, 1, 2, 3, dtype=torch.float64)).requires_grad_()
    b = hal(torch.randn(4, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1),
                                 groups=2),
        (x, w, b), fast_mode=True)
    assert conv_fallbacks() == {}


def test_conv1d_runs_as_a_2d_convolution(strict):
    # torch views 1-D convolutions as [N, C, 1, L] for backends without 1-D.
    x = torch.randn(2, 3, 9, dtype=torch.float64)
    w = torch.randn(4, 3, 3, dtype=torch.float64)
    cpu_out, hal_out, cpu_in, hal_in = run_both(
        lambda x, w: F.conv1d(x, w, stride=2, padding=1), x, w)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    for c, h in zip(cpu_in, hal_in):
        close(h.grad, c.grad)


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups",
                         [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((2, 3), (0, 1), (1, 2), 1, 2),
                          (2, 1, 0, 2, 2), (2, 1, 2, 3, 1)])
def test_conv_transpose2d_forward_and_backward(strict, stride, padding, output_padding,
                                               dilation, groups):
    x = torch.randn(2, 4, 5, 6, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 2, dtype=torch.float64)
    b = torch.randn(3 * groups, dtype=torch.float64)
    cpu_out, hal_out, cpu_in, hal_in = run_both(
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=stride, padding=padding,
                                           output_padding=output_padding, groups=groups,
                                           dilation=dilation), x, w, b)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    for c, h in zip(cpu_in, hal_in):
        close(h.grad, c.grad)


def test_conv_transpose1d_and_module(strict):
    x = torch.randn(2, 3, 7, dtype=torch.float64)
    w = torch.randn(3, 2, 3, dtype=torch.float64)
    cpu_out, hal_out, _, _ = run_both(
        lambda x, w: F.conv_transpose1d(x, w, stride=2, output_padding=1), x, w)
    close(hal_out.detach(), cpu_out.detach())
    torch.manual_seed(0)
    module = nn.ConvTranspose2d(2, 4, 3, stride=2)
    x = torch.randn(1, 2, 4, 4)
    close(copy.deepcopy(module).to(HAL)(hal(x)).detach(), module(x).detach())


def test_conv3d_runs_on_cpu_and_counts_as_a_fallback():
    torch.hal.reset_fallback_stats()
    x = torch.randn(1, 2, 4, 4, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 2, 2, 2, 2, dtype=torch.float64, requires_grad=True)
    hx, hw = hal(x.detach()).requires_grad_(), hal(w.detach()).requires_grad_()
    expected, actual = F.conv3d(x, w, padding=1), F.conv3d(hx, hw, padding=1)
    close(actual.detach(), expected.detach())
    expected.sum().backward()
    actual.sum().backward()
    close(hx.grad, x.grad)
    close(hw.grad, w.grad)
    assert set(conv_fallbacks()) == {"aten::convolution_overrideable",
                                     "aten::convolution_backward_overrideable"}
    with pytest.raises(RuntimeError, match="HAL_STRICT=1: 'aten::convolution_overrideable'"):
        with strict_mode():
            F.conv3d(hx, hw)


def test_conv2d_shape_errors_are_torch_errors(strict):
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(hal(torch.randn(1, 3, 5, 5)), hal(torch.randn(2, 2, 3, 3)))
    with pytest.raises(RuntimeError, match="Kernel size"):
        F.conv2d(hal(torch.randn(1, 2, 2, 2)), hal(torch.randn(2, 2, 3, 3)))


# ---- max pooling -------------------------------------------------------------

POOL_CASES = {
    "plain": dict(kernel_size=2),
    "stride_padding": dict(kernel_size=3, stride=2, padding=1),
    "ceil_mode": dict(kernel_size=3, stride=2, ceil_mode=True),
    "dilation": dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), padding=(1, 1)),
}


@pytest.mark.parametrize("case", POOL_CASES.values(), ids=POOL_CASES.keys())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_max_pool2d_forward_indices_and_backward(strict, case, dtype):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 9, dtype=dtype)
    cpu_out, hal_out, cpu_in, hal_in = run_both(
        lambda x: F.max_pool2d(x, return_indices=True, **case), x)
    close(hal_out[0].detach(), cpu_out[0].detach(), rtol=0, atol=0)
    assert torch.equal(hal_out[1].cpu(), cpu_out[1])
    backward_both(cpu_out[0], hal_out[0])
    close(hal_in[0].grad, cpu_in[0].grad)


def test_max_pool2d_unbatched_module_and_out(strict):
    x = torch.randn(3, 6, 6)
    pool = nn.MaxPool2d(2)
    close(pool(hal(x)), pool(x), rtol=0, atol=0)
    out, indices = hal(torch.empty(0)), hal(torch.empty(0, dtype=torch.long))
    torch.ops.aten.max_pool2d_with_indices.out(hal(x), [3, 3], [2, 2], [1, 1], [1, 1],
                                               False, out=out, indices=indices)
    expected, expected_indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    close(out, expected, rtol=0, atol=0)
    assert torch.equal(indices.cpu(), expected_indices)


def test_max_pool2d_backward_out(strict):
    x = torch.randn(1, 2, 4, 4)
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    grad = torch.randn_like(out)
    expected = torch.ops.aten.max_pool2d_with_indices_backward(
        grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)
    grad_input = hal(torch.full((3,), 7.0))  # resized and overwritten
    torch.ops.aten.max_pool2d_with_indices_backward.grad_input(
        hal(grad), hal(x), [2, 2], [2, 2], [0, 0], [1, 1], False, hal(indices),
        grad_input=grad_input)
    close(grad_input, expected, rtol=0, atol=0)


def test_max_pool2d_bad_parameters(strict):
    x = hal(torch.randn(1, 1, 4, 4))
    with pytest.raises(RuntimeError, match="half of kernel size"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.max_pool2d(hal(torch.randn(4, 4)), 2)


def test_max_pool_gradcheck():
    torch.hal.reset_fallback_stats()
    # Distinct values: no ties, so the gradient is smooth around the inputs.
    x = hal(torch.randperm(50, dtype=torch.float64).reshape(1, 2, 5, 5)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x: F.max_pool2d(x, 2, stride=1, padding=1), (x,), fast_mode=True)
    assert conv_fallbacks() == {}


# ---- batch normalization -----------------------------------------------------

@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm2d_module_train_and_eval(affine, dtype):
    # Counting num_batches_tracked is an add_ of another family: no strict mode.
    torch.hal.reset_fallback_stats()
    torch.manual_seed(0)
    cpu = nn.BatchNorm2d(3, affine=affine, momentum=0.3).to(dtype)
    dev = nn.BatchNorm2d(3, affine=affine, momentum=0.3).to(dtype).to(HAL)
    if affine:
        with torch.no_grad():
            cpu.weight.uniform_(0.5, 1.5)
            cpu.bias.uniform_(-1, 1)
    dev.load_state_dict(cpu.state_dict())
    for _ in range(2):
        x = torch.randn(4, 3, 5, 5, dtype=dtype) * 2 + 1
        cpu_out, hal_out, cpu_in, hal_in = run_both(cpu, x, hal_fn=dev)
        close(hal_out.detach(), cpu_out.detach())
        backward_both(cpu_out, hal_out)
        close(hal_in[0].grad, cpu_in[0].grad)
    close(dev.running_mean, cpu.running_mean)
    close(dev.running_var, cpu.running_var)
    assert dev.num_batches_tracked.item() == 2
    if affine:
        close(dev.weight.grad, cpu.weight.grad)
        close(dev.bias.grad, cpu.bias.grad)

    cpu.eval(), dev.eval()
    x = torch.randn(2, 3, 4, 4, dtype=dtype)
    cpu_out, hal_out, cpu_in, hal_in = run_both(cpu, x, hal_fn=dev)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    close(hal_in[0].grad, cpu_in[0].grad)
    assert conv_fallbacks() == {}


def test_batch_norm1d_without_running_stats(strict):
    torch.manual_seed(0)
    cpu = nn.BatchNorm1d(4, track_running_stats=False)
    dev = nn.BatchNorm1d(4, track_running_stats=False).to(HAL)
    x = torch.randn(8, 4)
    cpu_out, hal_out, cpu_in, hal_in = run_both(cpu, x, hal_fn=dev)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    close(hal_in[0].grad, cpu_in[0].grad)
    close(dev.weight.grad, cpu.weight.grad)


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_and_backward(strict, training):
    torch.manual_seed(0)
    x, w, b = torch.randn(3, 2, 4), torch.rand(2) + 0.5, torch.randn(2)
    mean, var = torch.randn(2), torch.rand(2) + 0.5
    args = (0.2, 1e-3)
    mean_before, hmean, hvar = mean.clone(), hal(mean), hal(var)
    expected = torch.native_batch_norm(x, w, b, mean, var, training, *args)
    got = torch.native_batch_norm(hal(x), hal(w), hal(b), hmean, hvar, training, *args)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        close(g, e)
    # Updated in training, untouched in evaluation, as on the CPU.
    assert torch.equal(mean, mean_before) != training
    close(hmean, mean)
    close(hvar, var)

    grad = torch.randn_like(x)
    expected_grads = torch.ops.aten.native_batch_norm_backward(
        grad, x, w, mean_before, var, expected[1], expected[2], training, 1e-3,
        [True, True, True])
    got_grads = torch.ops.aten.native_batch_norm_backward(
        hal(grad), hal(x), hal(w), hal(mean_before), hvar, got[1], got[2], training, 1e-3,
        [True, False, True])
    close(got_grads[0], expected_grads[0])
    assert got_grads[1] is None
    close(got_grads[2], expected_grads[2])


aten = torch.ops.aten
# The batch-norm entry points torch's composites and exported graphs call, as
# (input, weight, bias, running_mean, running_var) -> outputs.
BATCH_NORM_ENTRIES = {
    "_batch_norm_with_update": lambda *a: aten._batch_norm_with_update(*a, 0.1, 1e-5),
    "_batch_norm_no_update": lambda *a: aten._batch_norm_no_update(*a, 0.1, 1e-5),
    "_native_batch_norm_legit": lambda *a: aten._native_batch_norm_legit(*a, True, 0.1, 1e-5),
    "_native_batch_norm_legit.no_stats":
        lambda x, w, b, m, v: aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5),
    "_native_batch_norm_legit_no_training":
        lambda *a: aten._native_batch_norm_legit_no_training(*a, 0.1, 1e-5),
}


@pytest.mark.parametrize("entry", BATCH_NORM_ENTRIES.values(), ids=BATCH_NORM_ENTRIES.keys())
def test_batch_norm_entry_points_forward_and_backward(strict, entry):
    torch.manual_seed(0)
    tensors = [torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3),
               torch.randn(3), torch.rand(3) + 0.5]
    cpu_args = [t.clone() for t in tensors]
    hal_args = [hal(t) for t in tensors]
    cpu_args[0].requires_grad_(), hal_args[0].requires_grad_()
    expected, got = entry(*cpu_args), entry(*hal_args)
    for e, g in zip(expected, got):
        assert g.shape == e.shape and g.dtype == e.dtype
        close(g.detach(), e.detach())
    for e, g in zip(cpu_args[3:], hal_args[3:]):  # running statistics
        close(g, e)
    grad = torch.randn_like(expected[0])
    expected[0].backward(grad)
    got[0].backward(hal(grad))
    close(hal_args[0].grad, cpu_args[0].grad)


def test_batch_norm_no_update_without_running_stats_uses_the_batch(strict):
    # (torch's CPU kernel cannot run this case; the reference is training mode.)
    x = torch.randn(4, 3, 2)
    expected = F.batch_norm(x, None, None, training=True)
    got = aten._batch_norm_no_update(hal(x), None, None, None, None, 0.1, 1e-5)
    close(got[0], expected)


def test_batch_norm_reduced_precision_keeps_f32_statistics(strict):
    dtype = torch.bfloat16
    if dtype not in torch.hal.get_device_properties().supported_dtypes:
        pytest.skip("the driver has no bf16")
    x = torch.randn(4, 3, 2, 2).to(dtype)
    w, b, mean, var = torch.ones(3), torch.zeros(3), torch.zeros(3), torch.ones(3)
    expected = torch.native_batch_norm(x, w, b, mean, var, True, 0.1, 1e-5)
    got = torch.native_batch_norm(hal(x), hal(w), hal(b), hal(mean), hal(var), True, 0.1, 1e-5)
    assert [t.dtype for t in got] == [dtype, torch.float32, torch.float32]
    close(got[0], expected[0], rtol=2e-2, atol=2e-2)
    close(got[1], expected[1])


def test_batch_norm_gradcheck():
    torch.hal.reset_fallback_stats()
    x = hal(torch.randn(3, 2, 3, dtype=torch.float64)).requires_grad_()
    w = hal(torch.rand(2, dtype=torch.float64) + 0.5).requires_grad_()
    b = hal(torch.randn(2, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        (x, w, b), fast_mode=True)
    assert conv_fallbacks() == {}


def test_batch_norm_evaluation_needs_running_stats(strict):
    with pytest.raises(RuntimeError, match="running_mean and running_var"):
        torch.native_batch_norm(hal(torch.randn(2, 3)), None, None, None, None,
                                False, 0.1, 1e-5)


def test_cnn_block_has_no_conv_fallbacks():
    """A CNN block trains a step on hal like on the CPU; the other families'
    ops (relu, sum, ...) may still fall back, this family's may not.

    The convolution has no bias, as in ResNet: training-mode batch norm
    subtracts the channel mean, so a bias before it has a gradient of exactly
    zero, and what both sides compute for it is summation noise that two
    correct summation orders need not agree on."""
    torch.manual_seed(0)

    def block():
        return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4),
                             nn.ReLU(), nn.MaxPool2d(2))

    cpu = block()
    dev = block().to(HAL)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(3, 2, 6, 6)
    torch.hal.reset_fallback_stats()
    dev(hal(x)).square().sum().backward()
    cpu(x).square().sum().backward()
    assert conv_fallbacks() == {}
    for (name, p), q in zip(dev.named_parameters(), cpu.parameters()):
        close(p.grad, q.grad, rtol=1e-4, atol=1e-5)


# ---- average pooling ---------------------------------------------------------

@pytest.mark.parametrize("kernel,stride,padding,divisor", [
    (2, None, 0, None), (3, 2, 1, None), ((2, 3), (1, 2), (1, 0), None), (3, 1, 1, 4)])
def test_avg_pool2d_forward_and_backward(strict, kernel, stride, padding, divisor):
    x = torch.randn(2, 3, 7, 8, dtype=torch.float64)
    fn = lambda x: F.avg_pool2d(x, kernel, stride, padding, divisor_override=divisor)  # noqa: E731
    cpu_out, hal_out, cpu_in, hal_in = run_both(fn, x)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    close(hal_in[0].grad, cpu_in[0].grad)


def test_avg_pool2d_uncovered_cases_fall_back_to_cpu():
    x = torch.randn(1, 2, 7, 7)
    torch.hal.reset_fallback_stats()
    close(F.avg_pool2d(hal(x), 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 2, 1, ceil_mode=True))
    close(F.avg_pool2d(hal(x), 3, 2, 1, count_include_pad=False),
          F.avg_pool2d(x, 3, 2, 1, count_include_pad=False))
    assert fallbacks_of(("avg_pool2d",))


@pytest.mark.parametrize("output_size", [1, (2, 3), (4, 6)])
def test_adaptive_avg_pool2d_forward_and_backward(strict, output_size):
    x = torch.randn(2, 3, 4, 6, dtype=torch.float64)
    cpu_out, hal_out, cpu_in, hal_in = run_both(lambda x: F.adaptive_avg_pool2d(x, output_size), x)
    close(hal_out.detach(), cpu_out.detach())
    backward_both(cpu_out, hal_out)
    close(hal_in[0].grad, cpu_in[0].grad)
    close(F.adaptive_avg_pool2d(hal(x[0]), output_size), F.adaptive_avg_pool2d(x[0], output_size))


def test_adaptive_avg_pool2d_uneven_windows_fall_back_to_cpu():
    x = torch.randn(1, 2, 5, 7)
    torch.hal.reset_fallback_stats()
    close(F.adaptive_avg_pool2d(hal(x), (2, 3)), F.adaptive_avg_pool2d(x, (2, 3)))
    assert fallbacks_of(("_adaptive_avg_pool2d",))


def test_avg_pool2d_of_an_empty_image_raises_cpus_error():
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.avg_pool2d(torch.zeros(1, 1, 0, 4, device=HAL), 2, padding=1)
