"""Parity of the `hal` device with the CPU on HAL's reference models.

Each reference model (examples/reference_models.py) trains 50 steps on `hal` and
on `cpu` from the same seed; the final parameters and BatchNorm statistics must
agree within a relative difference of 1e-4 (max|a-b| / max(max|a|, max|b|) per
state_dict entry; HAL_PARITY_RTOL loosens it for a driver whose reductions sum
in another order than the CPU's, such as vulkan's) and the `hal` run must not fall back to the CPU once. The
`hal` run happens in a subprocess with HAL_STRICT=1, so that any fallback
raises, and additionally reports torch.hal.fallback_stats(), which must stay
empty. The Transformer trains without dropout here: the two devices' generators
draw different masks.

The tests of the harness itself (reproducibility on the CPU, a perturbed
parameter or loss failing the check) need no backend and always run.
"""
import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import reference_models as rm  # noqa: E402
import train as train_py  # noqa: E402

STEPS = 50
SEED = 0
RTOL = float(os.environ.get("HAL_PARITY_RTOL", "1e-4"))
HAL_RUN_TIMEOUT_S = 1800  # a hung backend fails the test instead of the whole run
# Every optimizer the kernel set must cover, on the models the design pairs them with.
CONFIGS = [("mlp", "sgd"), ("mlp", "adam"), ("cnn", "sgd"), ("cnn", "adam"),
           ("transformer", "adamw")]
CONFIG_IDS = [f"{model}-{optimizer}" for model, optimizer in CONFIGS]


def hal_unavailable_reason():
    try:
        rm.resolve_device("hal")
    except rm.DeviceUnavailable as error:
        return str(error)
    return None


HAL_UNAVAILABLE = hal_unavailable_reason()
needs_hal = pytest.mark.skipif(HAL_UNAVAILABLE is not None,
                               reason=f"no hal device: {HAL_UNAVAILABLE}")


def train_cpu(model, optimizer, steps=STEPS, dropout_p=0.0):
    return rm.train(model, "cpu", steps, SEED, optimizer=optimizer, dropout_p=dropout_p)


def train_hal_strict(model, optimizer, output):
    """Trains on hal in a fresh Python with HAL_STRICT=1 and returns the result it saved."""
    command = [sys.executable, str(EXAMPLES / "train.py"), "--device", "hal", "--model", model,
               "--optimizer", optimizer, "--steps", str(STEPS), "--seed", str(SEED),
               "--dropout", "0", "--quiet", "--save", str(output)]
    # A subprocess, so that HAL_STRICT is set before the backend loads.
    finished = subprocess.run(command, env={**os.environ, "HAL_STRICT": "1"},
                              capture_output=True, text=True, timeout=HAL_RUN_TIMEOUT_S)
    assert finished.returncode == 0, (
        f"training on hal under HAL_STRICT=1 failed (exit {finished.returncode}); "
        f"a CPU fallback raises there\n"
        f"stdout:\n{finished.stdout}\nstderr:\n{finished.stderr}")
    return rm.TrainResult(**torch.load(output)[model])


@needs_hal
@pytest.mark.parametrize(("model", "optimizer"), CONFIGS, ids=CONFIG_IDS)
def test_hal_trains_like_cpu_without_fallbacks(model, optimizer, tmp_path):
    hal = train_hal_strict(model, optimizer, tmp_path / "hal.pt")
    assert hal.fallbacks is not None, "torch.hal.fallback_stats() is missing"
    assert hal.fallbacks == {}, f"CPU fallbacks on hal: {hal.fallbacks}"
    parity = rm.compare(train_cpu(model, optimizer), hal, RTOL)
    assert parity.ok, parity.describe()


@pytest.fixture(scope="module")
def cpu_results():
    """One CPU run per configuration, shared by the harness tests."""
    return {config: train_cpu(*config) for config in CONFIGS}


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_cpu_runs_are_reproducible_and_learn(config, cpu_results):
    first, second = cpu_results[config], train_cpu(*config)
    assert first.losses == second.losses
    assert first.state.keys() == second.state.keys()
    for name in first.state:
        assert torch.equal(first.state[name], second.state[name]), name
    parity = rm.compare(first, second, RTOL)
    assert parity.ok and parity.state_rel == 0.0 and parity.loss_rel == 0.0, parity.describe()
    assert all(map(math.isfinite, first.losses))
    # Training that does not train would make parity vacuous.
    assert sum(first.losses[-5:]) < 0.5 * sum(first.losses[:5]), first.losses


def perturbed(result, name, relative_change):
    """A copy of result whose state entry `name` has one element moved by relative_change
    times the entry's largest magnitude."""
    state = {key: value.clone() for key, value in result.state.items()}
    flat = state[name].view(-1)
    flat[0] += relative_change * flat.abs().max()
    return dataclasses.replace(result, state=state)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_parity_fails_on_a_perturbed_parameter(config, cpu_results):
    result = cpu_results[config]
    name = next(key for key, value in result.state.items() if value.is_floating_point())

    far = rm.compare(result, perturbed(result, name, 10 * RTOL), RTOL)
    assert not far.ok, far.describe()
    assert far.worst_entry == name
    assert far.state_rel == pytest.approx(10 * RTOL, rel=0.01)

    near = rm.compare(result, perturbed(result, name, 0.1 * RTOL), RTOL)
    assert near.ok, near.describe()


def test_parity_fails_on_a_different_loss_or_nan(cpu_results):
    result = cpu_results[CONFIGS[0]]
    shifted = result.losses[-1] + 10 * RTOL * max(result.losses)
    worse = dataclasses.replace(result, losses=[*result.losses[:-1], shifted])
    assert not rm.compare(result, worse, RTOL).ok
    broken = dataclasses.replace(result, losses=[*result.losses[:-1], math.nan])
    assert not rm.compare(result, broken, RTOL).ok
    name = next(iter(result.state))
    nan_state = {**result.state, name: torch.full_like(result.state[name], math.nan)}
    parity = rm.compare(result, dataclasses.replace(result, state=nan_state), RTOL)
    assert not parity.ok and parity.worst_entry == name


def test_dropout_runs_and_is_seeded():
    with_dropout = train_cpu("transformer", "adamw", steps=3, dropout_p=rm.DROPOUT_P)
    again = train_cpu("transformer", "adamw", steps=3, dropout_p=rm.DROPOUT_P)
    without = train_cpu("transformer", "adamw", steps=3, dropout_p=0.0)
    assert with_dropout.losses == again.losses
    assert with_dropout.losses != without.losses


@pytest.mark.skipif(HAL_UNAVAILABLE is None, reason="the hal backend is installed")
def test_missing_backend_is_a_clear_error(capsys):
    with pytest.raises(rm.DeviceUnavailable, match="scripts/bootstrap"):
        rm.resolve_device("hal")
    assert train_py.main(["--device", "hal", "--steps", "1"]) == 2
    assert "scripts/bootstrap" in capsys.readouterr().err


def test_compare_command_line_on_cpu(capsys):
    status = train_py.main(["--compare", "cpu", "cpu", "--model", "all", "--steps", "2", "--quiet"])
    output = capsys.readouterr().out
    assert status == 0, output
    for model in rm.MODELS:
        assert f"{model} on cpu vs cpu" in output
    assert output.count("PASS") == 2 * len(rm.MODELS)  # per model, then in the summary
    assert "FAIL" not in output


@pytest.mark.parametrize("arguments", [["--steps", "0"], ["--rtol", "-1"], ["--dropout", "1"],
                                       ["--compare", "cpu", "cpu", "--save", "x.pt"],
                                       ["--model", "resnet"]])
def test_command_line_rejects_bad_arguments(arguments, capsys):
    with pytest.raises(SystemExit) as raised:
        train_py.main(arguments)
    assert raised.value.code == 2
    assert "error:" in capsys.readouterr().err
