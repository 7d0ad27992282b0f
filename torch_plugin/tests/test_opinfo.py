"""PyTorch's own OpInfo samples (op_db) on hal against CPU.

Every OpInfo is tried in float32 (and int64/bool where the op takes them)
with its first samples. A sample whose computation needs an op without a hal
kernel is not a test of the backend: HAL_STRICT=1 turns that fallback into
an error, and the sample is counted as "not native" and skipped. Every other
sample must match CPU (torch.testing.assert_close with float32 tolerances).
The counts are printed at the end of the run (see conftest.py)."""

import os

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

SAMPLES_PER_OP = 6
DTYPES = (torch.float32, torch.int64, torch.bool)
STRICT_MESSAGE = "HAL_STRICT=1:"

# Samples that differ from CPU by design, with the reason.
EXPECTED_DIFFERENCES = {
}

# OpInfos whose results are random or depend on memory contents.
NONDETERMINISTIC = {"bernoulli", "normal", "uniform", "rand_like", "randn_like",
                    "randint_like", "empty", "empty_like", "empty_strided",
                    "new_empty", "new_empty_strided", "nn.functional.dropout",
                    "nn.functional.dropout2d", "nn.functional.dropout3d",
                    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
                    "nn.functional.rrelu", "multinomial", "cauchy", "exponential",
                    "geometric", "log_normal", "randint", "empty_permuted",
                    "torch.empty_permuted", "nn.functional.fractional_max_pool2d",
                    "nn.functional.fractional_max_pool3d"}

RESULTS = {"passed_samples": 0, "native_ops": set(), "not_native_samples": 0,
           "failed": []}


def _to_hal(value):
    if isinstance(value, torch.Tensor):
        return value.detach().to("hal")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_hal(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_hal(v) for k, v in value.items()}
    return value


def _to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _cases():
    for op in op_db:
        if op.name in NONDETERMINISTIC:
            continue
        for dtype in DTYPES:
            if dtype in op.supported_dtypes("cpu"):
                yield pytest.param(op, dtype, id=f"{op.name}.{op.variant_test_name}-{dtype}".replace("torch.", ""))


@pytest.mark.parametrize("op,dtype", list(_cases()))
def test_opinfo_sample_matches_cpu(op, dtype, strict):
    samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:SAMPLES_PER_OP]
    native = 0
    for index, sample in enumerate(samples):
        try:
            expected = op(sample.input, *sample.args, **sample.kwargs)
        except Exception:  # invalid on CPU too: nothing to compare
            continue
        try:
            actual = op(_to_hal(sample.input), *_to_hal(sample.args), **_to_hal(sample.kwargs))
            actual = _to_cpu(actual)
        except RuntimeError as error:
            if STRICT_MESSAGE in str(error):
                RESULTS["not_native_samples"] += 1
                continue
            raise
        key = (op.name, op.variant_test_name, str(dtype), index)
        if key in EXPECTED_DIFFERENCES:
            continue
        try:
            torch.testing.assert_close(actual, expected, equal_nan=True,
                                       check_device=False, rtol=1.3e-6 * 10, atol=1e-5)
        except AssertionError:
            RESULTS["failed"].append(key)
            raise
        native += 1
        RESULTS["passed_samples"] += 1
    if native == 0:
        pytest.skip("no sample of this op runs natively on hal")
    RESULTS["native_ops"].add(op.name)
