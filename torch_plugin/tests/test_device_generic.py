"""PyTorch's own device-generic test machinery against hal.

`instantiate_device_type_tests` turns the classes below into tests on the
PrivateUse1 device (hal) over every OpInfo of `op_db`, as PyTorch's test suite
does for CUDA. The classes carry the names of PyTorch's own, so op_db's skips
and expected failures for them apply unchanged:

- TestCommon.test_compare_cpu: every sample of `op.reference_inputs` on hal
  against the same sample on CPU (atol = rtol = 1e-3), in float32 and, where
  the driver has them, bfloat16 and float16 (their tolerances are op_db's).
- TestViews.test_view_write_through: an op whose CPU result is a view of its
  input must give a view on hal too: a write through it reaches the input.

A test passes "natively" when none of its hal calls fell back to CPU (what
HAL_STRICT=1 requires); the counts of both are printed at the end of the run.
Tests that differ from CPU for a known reason are listed in
KNOWN_DIFFERENCE_PATTERNS and skipped with the reason when they fail, and fail
when they pass, so that a new difference, and an old one fixed, both show. HAL_DEVICE_GENERIC_SHARD=i/n runs every n-th op
starting at i (the ops split evenly across n runs); i = r takes the shard
that $HAL_TEST_ROTATION selects (its value modulo n; scripts/test sets it to
the commit count), and every op when it is unset.
"""
import os
import re
import unittest

import torch
from torch.testing._internal.common_device_type import (instantiate_device_type_tests,
                                                        ops)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

# Why hal differs from CPU, and the tests (by pattern; `_hal_<dtype>` ends
# each name) where it does. Each is expected to fail; one that passes fails
# the run, so the list shrinks as hal grows.
KNOWN_DIFFERENCE_PATTERNS = {
    "the standard kernels have no complex dtype (complex64 is open work): hal holds "
    "complex tensors, and ops without a hal kernel run on them through the CPU "
    "fallback, but an op with one refuses the complex samples":
        r"compare_cpu_(linalg_eig|addcmul|addcdiv|where)_hal_.*"
        r"|view_write_through_view_as_complex_hal_.*",
    "hal has no sparse layout":
        r"(compare_cpu|view_write_through)_(to_sparse|sparse_sampled_addmm)_hal_.*",
    "the op reads its input's storage beyond the input, which a CPU twin of the "
    "input does not hold (nothing to compare)":
        r"view_write_through_as_strided_partial_views_hal_.*",
}

# Half-precision tests where hal (float32 compute, one rounding) and CPU differ
# by more than two units in the last place on a few elements. A rounding
# difference, not a wrong result: these skip when they differ and pass when
# they do not (which of the two rounds closer to exact is not checked here).
ROUNDING_DIFFERENCES = (
    r"compare_cpu_(addr|div_trunc_rounding|rsub|native_group_norm|nn_functional_group_norm|"
    r"nn_functional_instance_norm|nn_functional_batch_norm|_batch_norm_with_update|"
    r"nn_functional_conv_transpose[12]d|log_softmax|masked_log_softmax|"
    r"nn_functional_cross_entropy|nn_functional_linear_cross_entropy.*|"
    r"mvlgamma_mvlgamma_p_[35]|nn_functional_grid_sample|"
    r"nn_functional_interpolate_bi(linear|cubic))_hal_(float16|bfloat16)")


def _known_difference(test_id):
    for reason, pattern in KNOWN_DIFFERENCE_PATTERNS.items():
        if re.fullmatch(f"test_(?:{pattern})", test_id):
            return reason
    return None

# Ops whose results are random or depend on uninitialized memory.
NONDETERMINISTIC = {"bernoulli", "normal", "uniform", "rand_like", "randn_like",
                    "randint_like", "empty", "empty_like", "empty_strided", "new_empty",
                    "new_empty_strided", "nn.functional.dropout", "nn.functional.dropout2d",
                    "nn.functional.dropout3d", "nn.functional.alpha_dropout",
                    "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
                    "multinomial", "cauchy", "exponential", "geometric", "log_normal",
                    "randint", "empty_permuted", "torch.empty_permuted",
                    "nn.functional.fractional_max_pool2d",
                    "nn.functional.fractional_max_pool3d"}

RESULTS = {"compare_cpu": {}, "view_write_through": {}}  # test -> (passed, native)
FALLBACK_TESTS = {}  # op that fell back to CPU -> number of tests where it did


def _shard(ops_list):
    spec = os.environ.get("HAL_DEVICE_GENERIC_SHARD")
    if not spec:
        return ops_list
    index, count = spec.split("/")
    count = int(count)
    if index == "r":
        rotation = os.environ.get("HAL_TEST_ROTATION")
        if rotation is None:
            return ops_list
        index = int(rotation) % count
    return ops_list[int(index)::count]


DETERMINISTIC_OPS = _shard([op for op in op_db if op.name not in NONDETERMINISTIC])


def _low_precision_dtypes():
    if not torch.hal.is_available():
        return ()
    return tuple(t for t in (torch.bfloat16, torch.float16)
                 if t in torch.hal.get_device_properties().supported_dtypes)


class _Recorded:
    """Runs a test body, recording whether it passed and whether any hal op
    fell back to CPU meanwhile. A body that skips is not counted.

    op_db marks some tests as expected failures on every device (CPU and
    CUDA differ there); on hal such a test counts like any other, and a pass
    is reported as a skip so that unittest does not call it an unexpected
    success."""

    def __init__(self, kind, case):
        self.kind, self.test_id = kind, case.id().rsplit(".", 1)[-1]
        method = getattr(case, case._testMethodName)
        self.expected_to_fail = getattr(method, "__unittest_expecting_failure__", False)

    def __enter__(self):
        self.before = torch.hal.fallback_stats()
        return self

    def __exit__(self, error_type, error, traceback):
        if error_type is not None and issubclass(error_type, unittest.SkipTest):
            return False
        after = torch.hal.fallback_stats()
        fell_back = {op for op in after if after[op] != self.before.get(op, 0)}
        RESULTS[self.kind][self.test_id] = (error_type is None, not fell_back)
        for op in fell_back:
            FALLBACK_TESTS[op] = FALLBACK_TESTS.get(op, 0) + 1
        reason = _known_difference(self.test_id)
        if reason is not None:
            if error_type is None:
                raise AssertionError(f"{self.test_id} now matches CPU: take it out of "
                                     f"KNOWN_DIFFERENCE_PATTERNS ({reason})")
            raise unittest.SkipTest(f"known difference: {reason}")
        if error_type is not None and re.fullmatch(f"test_{ROUNDING_DIFFERENCES}", self.test_id):
            raise unittest.SkipTest("half-precision rounding differs from CPU's")
        if error_type is None and self.expected_to_fail:
            raise unittest.SkipTest("matches CPU on hal (op_db expects CPU and CUDA to differ)")
        return False


def _tolerance(dtype):
    """PyTorch's test_compare_cpu tolerance (1e-3), and for bfloat16 and
    float16 two units in the last place: hal computes their elementwise ops in
    float32 and rounds once, CPU rounds some intermediate results too."""
    if dtype == torch.float32:
        return dict(atol=1e-3, rtol=1e-3)
    return dict(atol=1e-3, rtol=2 * torch.finfo(dtype).eps)


class TestCommon(TestCase):
    @ops(DETERMINISTIC_OPS, allowed_dtypes=(torch.float32,) + _low_precision_dtypes())
    def test_compare_cpu(self, device, dtype, op):
        with _Recorded("compare_cpu", self):
            for sample in op.reference_inputs(device, dtype):
                cpu_sample = sample.transform(
                    lambda a: a.to("cpu") if isinstance(a, torch.Tensor) else a)
                try:
                    cpu_result = cpu_sample.output_process_fn_grad(
                        op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs))
                except Exception as error:  # hal must refuse it the same way
                    with self.assertRaises(type(error)):
                        op(sample.input, *sample.args, **sample.kwargs)
                    continue
                hal_result = sample.output_process_fn_grad(
                    op(sample.input, *sample.args, **sample.kwargs))
                self.assertEqual(hal_result, cpu_result, exact_device=False,
                                 **_tolerance(dtype))


def _cpu_twin(t):
    """A CPU copy of `t` with its strides, so that an op that returns a view
    of a tensor with these strides does so on both devices."""
    if not isinstance(t, torch.Tensor):
        return t
    twin = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype)
    return twin.copy_(t.cpu())


def _shares_memory(result, source):
    return (isinstance(result, torch.Tensor) and isinstance(source, torch.Tensor)
            and result.numel() > 0
            and result.untyped_storage().data_ptr() == source.untyped_storage().data_ptr())


class TestViews(TestCase):
    @ops(DETERMINISTIC_OPS, allowed_dtypes=(torch.float32,))
    def test_view_write_through(self, device, dtype, op):
        with _Recorded("view_write_through", self):
            checked = 0
            for sample in op.sample_inputs(device, dtype):
                if not isinstance(sample.input, torch.Tensor):
                    continue
                try:
                    cpu_sample = sample.transform(_cpu_twin)
                except RuntimeError:  # overlapping strides: no twin to write into
                    continue
                cpu_result = op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
                if not _shares_memory(cpu_result, cpu_sample.input):
                    continue
                try:
                    cpu_result.add_(1)
                except RuntimeError:  # an expanded view: CPU refuses the write too
                    continue
                hal_result = op(sample.input, *sample.args, **sample.kwargs)
                hal_result.add_(1)
                self.assertEqual(sample.input, cpu_sample.input, exact_device=False)
                checked += 1
            if checked == 0:
                raise unittest.SkipTest("no sample of this op returns a writable view")


instantiate_device_type_tests(TestCommon, globals(), only_for="privateuse1")
instantiate_device_type_tests(TestViews, globals(), only_for="privateuse1")
