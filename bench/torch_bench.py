#!/usr/bin/env python3
"""torch_bench: the PyTorch backend (device "hal") against torch's own CPU
backend, in one process, with Google Benchmark's Python bindings.

Every case is a pair run on the same inputs (see bench/README.md):

  <family>/<case>/hal_<driver>   the case on device "hal"
  <family>/<case>/torch_cpu      the same case on device "cpu"

so that bench/report.py prints their ratio:

  .venv/bin/python bench/report.py --bench bench/torch_bench.py
  .venv/bin/python bench/torch_bench.py --benchmark_filter=train/mlp   # a subset

Families:
- eager/<op>: one small op (16 elements, or a 64x64 matmul), issued back to
  back: each timed batch issues OPS_PER_BATCH ops, then synchronizes, and the
  reported time is the batch's time / OPS_PER_BATCH. This is the per-op
  cost a Python loop of small ops pays (dispatch, allocation, launch), the
  device work overlapping the host as it does on any asynchronous device.
- latency/<op>: one op, then a synchronize (or .item()): the full round trip
  through the driver's stream worker.
- train/<model>_<optimizer>: one training step of a reference model of
  examples/reference_models.py (zero_grad, forward, CrossEntropy, backward,
  optimizer step; torch.optim's default implementation for each device),
  synchronized at the end of every step.
- compiled/<model>_<optimizer>: the same step with the model compiled on
  hal (torch.compile(backend="hal"): forward and backward replayed as HAL
  graphs, docs/graphs.md) against eager torch CPU; compiled/ over train/
  on hal, from the same run, is what compiling gains.
- graph/add_16: GRAPH_OPS adds of 16 elements captured into one
  torch.hal.HALGraph, replayed, then a synchronize, per op; the torch_cpu
  side runs them eagerly. graph/ over eager/add_16 on hal is what a replay
  saves per launch, device time included.
- issue/eager_add_16, issue/graph_add_16: the host's cost of issuing those
  GRAPH_OPS adds, eagerly or as one replay, per op; the device is
  synchronized after the clock stops. graph over eager on hal is the
  dispatch cost a replay leaves (the device's own time per dispatch, large
  on lavapipe, is not in it).

Each hal benchmark counts the CPU fallbacks of its timed loop (counter
`fallbacks`, per op or step; report.py prints it): a nonzero count means
part of the "hal" time was spent in torch's CPU kernels and the copies to
and from them.

The driver is HAL_DRIVER's (default cpu_ref). torch's intra-op thread count
is --torch_threads=N (default 1, recorded in the output's context): every
case here is small enough that cpu_ref runs each kernel on one thread
(kernels/parallel.hpp starts helpers from 4 Mflop per thread on), so one torch
thread compares like with like; on a busy machine a second OpenMP thread
also costs torch milliseconds per parallel region (docs/performance.md).
"""
import argparse
import os
import sys
import time

try:
    import google_benchmark as benchmark
except ImportError as error:
    # ctest treats this exit code as "skipped" (bench/CMakeLists.txt).
    print(f"torch_bench: skipped, google_benchmark is not installed ({error}); "
          "pip install -r scripts/requirements.txt", file=sys.stderr)
    sys.exit(77)

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import reference_models  # noqa: E402

# Enough back-to-back ops that the synchronize closing each batch is a small
# share of it, few enough that a batch stays well under a millisecond.
OPS_PER_BATCH = 64
SMALL_ELEMENTS = 16
MATMUL_SIZE = 64
# Google Benchmark's default --benchmark_min_time, in seconds.
DEFAULT_MIN_TIME_S = 0.5
# Untimed steps before timing: lazy initialisation, kernel lookups, the
# allocator's first segments and the optimizer's state all land there.
WARMUP_STEPS = 3


def synchronize(device):
    if device.type == "hal":
        torch.hal.synchronize()


def fallback_count():
    return sum(torch.hal.fallback_stats().values())


class Case:
    """One benchmark body: setup(device) prepares the inputs and returns
    step(), which does `ops` operations and returns once their results are
    ready on the host (synchronized); the reported time is per operation."""

    def __init__(self, name, setup, ops=1, settle=False):
        # settle: step() returns with its work still queued; the device is
        # synchronized after the clock stops, so only issuing it is timed.
        self.name, self.setup, self.ops, self.settle = name, setup, ops, settle


def register(case, suffix, device):
    """Registers `case` on `device` as <case>/<suffix>. Times are wall times
    (the work runs on driver threads too) taken around each step. An
    exception fails that benchmark with its message instead of the whole
    run."""

    def run(state):
        try:
            step = case.setup(device)
            for _ in range(WARMUP_STEPS):
                step()
            fallbacks_before = fallback_count()
            while state:
                start = time.perf_counter()
                step()
                state.set_iteration_time((time.perf_counter() - start) / case.ops)
                if case.settle:
                    synchronize(device)
        except Exception as error:  # noqa: BLE001: any failure is the benchmark's result
            state.skip_with_error(f"{type(error).__name__}: {error}")
            return
        if device.type == "hal":
            fallbacks = fallback_count() - fallbacks_before
            state.counters["fallbacks"] = fallbacks / (state.iterations * case.ops)

    options = benchmark.option.unit(benchmark.kMicrosecond)(run)
    options = benchmark.option.use_manual_time()(options)
    if case.ops > 1:
        # The library runs until the reported (per-op) times add up to the
        # minimum time: scaled, so a case takes the usual wall time.
        options = benchmark.option.min_time(DEFAULT_MIN_TIME_S / case.ops)(options)
    benchmark.register(options, name=f"{case.name}/{suffix}")


# ------------------------------------------------------------------- small ops

def small_inputs(device):
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(SMALL_ELEMENTS, generator=generator)
    b = torch.randn(SMALL_ELEMENTS, generator=generator)
    m = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=generator)
    n = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=generator)
    return a.to(device), b.to(device), m.to(device), n.to(device)


# name -> the op on the inputs of small_inputs()
SMALL_OPS = {
    "add_16": lambda a, b, m, n: a + b,
    "mul_16": lambda a, b, m, n: a * b,
    "relu_16": lambda a, b, m, n: torch.relu(a),
    "sum_16": lambda a, b, m, n: a.sum(),
    "matmul_64x64": lambda a, b, m, n: m @ n,
}


def ops_then_synchronize(op, count):
    def setup(device):
        inputs = small_inputs(device)

        def step():
            for _ in range(count):
                op(*inputs)
            synchronize(device)

        return step

    return setup


def item_setup(device):
    x = torch.ones(1, device=device)
    return x.item


# ------------------------------------------------------------------- training

def training_step(model_name, optimizer_name, compiled=False):
    def setup(device):
        reference = reference_models.REFERENCE_MODELS[model_name]
        inputs, targets = reference.make_data(torch.Generator().manual_seed(0))
        torch.manual_seed(0)
        model = reference.build(reference_models.DROPOUT_P).to(device).train()
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer = reference_models.make_optimizer(
            optimizer_name, model.parameters(), reference.learning_rates[optimizer_name])
        loss_function = nn.CrossEntropyLoss()
        run = model
        if compiled and device.type == "hal":
            torch._dynamo.reset()
            run = torch.compile(model, backend="hal")
        batch = reference.batch_size
        batches = inputs.shape[0] // batch
        steps = 0

        def step():
            nonlocal steps
            offset = (steps % batches) * batch
            steps += 1
            x, y = inputs[offset:offset + batch], targets[offset:offset + batch]
            optimizer.zero_grad()
            logits = run(x)
            loss = loss_function(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            loss.backward()
            optimizer.step()
            synchronize(device)

        return step

    return setup


def adds(count, captured=True, wait=True):
    """`count` adds of 16 elements: on hal captured once and replayed when
    `captured`, else eager, as on CPU; synchronized at the end of the step
    unless not `wait`."""
    def setup(device):
        a, b, _, _ = small_inputs(device)
        out = torch.empty_like(a)

        def eager():
            for _ in range(count):
                torch.add(a, b, out=out)

        run = eager
        if captured and device.type == "hal":
            graph = torch.hal.HALGraph()
            with torch.hal.graph(graph):
                eager()
            run = graph.replay

        def step():
            run()
            if wait:
                synchronize(device)

        return step

    return setup


TRAINING = [("mlp", "sgd"), ("mlp", "adam"), ("cnn", "adam"), ("transformer", "adamw")]
COMPILED = [("mlp", "sgd"), ("transformer", "adamw")]
# As many launches as a small model's training step makes.
GRAPH_OPS = 256

CASES = (
    [Case(f"eager/{name}", ops_then_synchronize(op, OPS_PER_BATCH), OPS_PER_BATCH)
     for name, op in SMALL_OPS.items()]
    + [Case(f"latency/{name}", ops_then_synchronize(SMALL_OPS[name], 1))
       for name in ("add_16", "matmul_64x64")]
    + [Case("latency/item", item_setup)]
    + [Case(f"train/{model}_{optimizer}", training_step(model, optimizer))
       for model, optimizer in TRAINING]
    + [Case(f"compiled/{model}_{optimizer}",
            training_step(model, optimizer, compiled=True))
       for model, optimizer in COMPILED]
    + [Case("graph/add_16", adds(GRAPH_OPS), GRAPH_OPS),
       Case("issue/eager_add_16", adds(GRAPH_OPS, captured=False, wait=False),
            GRAPH_OPS, settle=True),
       Case("issue/graph_add_16", adds(GRAPH_OPS, wait=False), GRAPH_OPS,
            settle=True)])


# ------------------------------------------------------------------- main

def main():
    try:
        device = reference_models.resolve_device("hal")
    except reference_models.DeviceUnavailable as error:
        print(f"torch_bench: {error}", file=sys.stderr)
        return 1
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--torch_threads", type=int, default=1)
    args, benchmark_argv = parser.parse_known_args()
    if args.torch_threads < 1:
        print("torch_bench: --torch_threads must be at least 1", file=sys.stderr)
        return 1
    torch.set_num_threads(args.torch_threads)
    driver = torch.hal.driver()
    benchmark.add_custom_context("hal_driver", driver)
    benchmark.add_custom_context("hal_device", torch.hal.get_device_name(device))
    benchmark.add_custom_context(
        "torch_threads", f"{torch.get_num_threads()} intra-op "
        f"(the machine has {os.cpu_count()} cores; cpu_ref runs these sizes on one thread)")
    hal_suffix = "hal_" + driver.split()[0]
    for case in CASES:
        register(case, hal_suffix, device)
        register(case, "torch_cpu", torch.device("cpu"))
    benchmark.main([sys.argv[0], *benchmark_argv])
    return 0


if __name__ == "__main__":
    sys.exit(main())
