"""Shared fixtures of the torch_hal tests. Every test runs on the driver that
HAL_DRIVER names (ctest sets cpu_ref); tests skip, saying why, when hal has
no device."""

import contextlib
import os

import pytest
import torch

import torch_hal  # noqa: F401  (explicit, in case autoload is disabled)


def pytest_collection_modifyitems(config, items):
    if torch.hal.is_available():
        return
    skip = pytest.mark.skip(reason="no hal device: the driver did not load "
                            f"(HAL_DRIVER={os.environ.get('HAL_DRIVER', 'cpu_ref')})")
    for item in items:
        if "needs_no_device" not in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_no_device: runs without a hal device")


@contextlib.contextmanager
def strict_mode():
    """Makes any CPU fallback inside the block an error naming the op."""
    previous = os.environ.get("HAL_STRICT")
    os.environ["HAL_STRICT"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["HAL_STRICT"]
        else:
            os.environ["HAL_STRICT"] = previous


@pytest.fixture
def strict():
    """Makes any CPU fallback inside the test an error naming the op."""
    with strict_mode():
        yield


def pytest_terminal_summary(terminalreporter):
    import sys
    zoo = sys.modules.get("test_model_zoo")
    if zoo is not None and zoo.TIME_RATIOS:
        ratios = ", ".join(f"{name} {ratio:.2f}" for name, ratio in zoo.TIME_RATIOS.items())
        terminalreporter.write_line(f"model zoo, hal/CPU time of the training steps "
                                    f"(torch on one thread): {ratios}")
    generic = sys.modules.get("test_device_generic")
    if generic is not None:
        for kind, results in generic.RESULTS.items():
            if not results:
                continue
            passed = sum(ok for ok, _ in results.values())
            native = sum(ok and native for ok, native in results.values())
            fell_back = sum(not native for _, native in results.values())
            terminalreporter.write_line(
                f"PyTorch device-generic {kind} on hal: {passed}/{len(results)} pass "
                f"({100 * passed / len(results):.1f} %), {native} pass natively "
                f"({100 * native / len(results):.1f} %), {fell_back} used a CPU fallback")
        if generic.FALLBACK_TESTS:
            ranked = sorted(generic.FALLBACK_TESTS.items(), key=lambda item: -item[1])
            terminalreporter.write_line(
                "ops that fell back to CPU, by number of tests: "
                + ", ".join(f"{op.removeprefix('aten::')} {count}" for op, count in ranked))
    module = sys.modules.get("test_opinfo")
    if module is None:
        return
    results = module.RESULTS
    terminalreporter.write_line(
        f"OpInfo on hal: {len(results['native_ops'])} ops with native samples, "
        f"{results['passed_samples']} samples match CPU, "
        f"{results['not_native_samples']} samples need a CPU fallback, "
        f"{len(results['failed'])} samples differ")
    for line in sorted(results["unsupported"]):
        terminalreporter.write_line(f"  unsupported on hal: {line}")
