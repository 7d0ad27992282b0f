"""torch.distributed on hal: the programs in distributed/ run as 2 processes
under torchrun (cpu_ref with two devices, one per rank) and assert their own
results; a test fails when a rank fails. Each launch is bounded by
LAUNCH_TIMEOUT."""

import os
import socket
import subprocess
import sys
import time

import pytest
import torch

WORKERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed")
LAUNCH_TIMEOUT = 240
pytestmark = pytest.mark.skipif(not torch.distributed.is_available(),
                                reason="this torch has no torch.distributed")


def _env(**extra):
    env = dict(os.environ, HAL_CPU_REF_DEVICES="2", OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def torchrun(script, *args, env=None):
    """Runs `script` as 2 ranks and returns the finished process (its output)
    when every rank succeeded."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc-per-node", "2", os.path.join(WORKERS, script), *args]
    proc = subprocess.run(command, env=env or _env(), capture_output=True, text=True,
                          timeout=LAUNCH_TIMEOUT)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, \
        f"{script} {' '.join(args)} failed (exit {proc.returncode}):\n{output[-6000:]}"
    return proc


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("backend", ["hal", "default", "cpu:gloo,hal:hal"])
def test_every_collective_matches_gloo_on_cpu(backend):
    out = torchrun("collectives.py", backend).stdout
    assert out.count("collectives match") == 2, out


def test_every_collective_through_pinned_copies():
    """cpu_ref's memory is host memory, so gloo works on it in place; this is
    the path of the other drivers: pinned twins and copies both ways."""
    out = torchrun("collectives.py", "hal", env=_env(TORCH_HAL_DISTRIBUTED_STAGING="copy")).stdout
    assert out.count("collectives match") == 2, out


@pytest.mark.parametrize("staging", ["in_place", "copy"])
def test_ddp_matches_cpu_gloo(staging):
    out = torchrun("training.py", "ddp", env=_env(TORCH_HAL_DISTRIBUTED_STAGING=staging)).stdout
    for variant in ("DDP matches", "several buckets", "find_unused_parameters",
                    "static_graph", "no_sync"):
        assert out.count(variant) == 2, out
    print(next(line for line in out.splitlines() if line.startswith("DDP step")))


def test_fsdp2_matches_cpu_gloo():
    out = torchrun("training.py", "fsdp").stdout
    assert out.count("FSDP2 matches CPU gloo") == 2, out
    assert out.count("FSDP2 mixed precision") == 2, out


def test_dtensor_and_distributed_checkpoint(tmp_path):
    out = torchrun("dtensor_checkpoint.py", str(tmp_path / "checkpoint")).stdout
    assert out.count("redistribute match") == 2, out
    assert out.count("checkpoint round trip matches") == 2, out


def test_cpu_only_program_keeps_the_default_backend():
    out = torchrun("cpu_only.py").stdout
    assert out.count("ran with the default backend") == 2, out


def test_two_nodes_on_loopback():
    port = str(_free_port())
    launches = [
        subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
             "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr", "127.0.0.1",
             "--master-port", port, os.path.join(WORKERS, "collectives.py"), "hal"],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for node in (0, 1)
    ]
    outputs = []
    for node, launch in enumerate(launches):
        stdout, stderr = launch.communicate(timeout=LAUNCH_TIMEOUT)
        outputs.append(stdout)
        assert launch.returncode == 0, f"node {node} failed:\n{(stdout + stderr)[-6000:]}"
    assert "rank 0:" in outputs[0] and "rank 1:" in outputs[1], outputs
    assert all("collectives match" in out for out in outputs), outputs


def test_a_killed_rank_fails_the_others_naming_the_collective():
    port = str(_free_port())
    start = time.monotonic()
    ranks = [
        subprocess.Popen(
            [sys.executable, os.path.join(WORKERS, "killed_rank.py")],
            env=_env(RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=port),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for rank in (0, 1)
    ]
    survivor, _ = ranks[0].communicate(timeout=LAUNCH_TIMEOUT)
    ranks[1].communicate(timeout=LAUNCH_TIMEOUT)
    elapsed = time.monotonic() - start
    assert ranks[1].returncode == 3
    assert ranks[0].returncode == 0, survivor
    assert "hal: allreduce failed on rank 0 of 2" in survivor, survivor
    assert elapsed < 60, f"the survivor took {elapsed:.0f} s to fail (group timeout 30 s)"


@pytest.mark.parametrize("what", ["shape", "dtype"])
def test_mismatched_tensors_across_ranks_are_named(what):
    out = torchrun("mismatch.py", what).stdout
    assert out.count(f"mismatched {what} named") == 2, out


def test_tensors_on_two_devices_in_one_collective_are_refused():
    out = torchrun("misuse.py").stdout
    assert out.count("misuse named") == 2, out


def test_exit_with_collectives_in_flight_after_an_error():
    proc = torchrun("mismatch.py", "shape", "exit")
    assert "terminate called" not in proc.stderr, proc.stderr[-3000:]


def _vulkan_available():
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.hal.is_available())"],
        env=_env(HAL_DRIVER="vulkan"), capture_output=True, text=True, timeout=120)
    return probe.stdout.strip().endswith("True")


def test_ddp_on_vulkan():
    if not _vulkan_available():
        pytest.skip("the vulkan driver has no device here (needs a Vulkan ICD, e.g. lavapipe)")
    out = torchrun("training.py", "ddp", env=_env(HAL_DRIVER="vulkan")).stdout
    assert out.count("DDP matches") == 2, out
