#!/usr/bin/env python3
"""distributed_bench: all_reduce bandwidth of the "hal" c10d backend against
gloo on CPU tensors, across 2 processes on this machine, in the same run.

    .venv/bin/python bench/distributed_bench.py                 # 64 MiB f32, 9 rounds
    .venv/bin/python bench/distributed_bench.py --mib 4 --rounds 3

Each round times one all_reduce (SUM) of the same number of f32 elements
twice, alternating which goes first: on hal tensors through the hal backend
(staged through pinned host memory, then gloo), and on CPU tensors through a
plain gloo group. A timing ends when the result is back where it started
(torch.hal.synchronize() for hal). Reported: the median of the rounds, as
algorithm bandwidth (bytes of the tensor / time), and hal / gloo.

Not Google Benchmark, unlike the rest of bench/: a collective needs every
rank to run the same number of iterations, and Google Benchmark picks each
process's iteration count on its own. The driver is HAL_DRIVER's (default
cpu_ref; HAL_CPU_REF_DEVICES=2 gives each rank its own device).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def launch(args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.setdefault("HAL_CPU_REF_DEVICES", "2")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc-per-node", "2", os.path.abspath(__file__), "--worker",
               "--mib", str(args.mib), "--rounds", str(args.rounds)]
    return subprocess.run(command, env=env).returncode


def timed(fn, sync):
    sync()
    start = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - start


def worker(args):
    import torch
    import torch.distributed as dist

    dist.init_process_group("cpu:gloo,hal:hal")
    rank = dist.get_rank()
    torch.hal.set_device(rank % torch.hal.device_count())
    gloo = dist.new_group(backend="gloo")
    elements = args.mib * 2**20 // 4
    on_hal = torch.ones(elements, device="hal")
    on_cpu = torch.ones(elements)
    cases = {
        "hal": (lambda: dist.all_reduce(on_hal), torch.hal.synchronize),
        "gloo_cpu": (lambda: dist.all_reduce(on_cpu, group=gloo), lambda: None),
    }
    for fn, sync in cases.values():  # warm up: connections, staging buffers
        timed(fn, sync)
    times = {name: [] for name in cases}
    for round_ in range(args.rounds):
        order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
        for name in order:
            dist.barrier(group=gloo)
            times[name].append(timed(*cases[name]))
    if rank == 0:
        nbytes = elements * 4
        medians = {name: statistics.median(t) for name, t in times.items()}
        load = os.getloadavg()[0]
        print(f"all_reduce of {args.mib} MiB f32, 2 processes, median of {args.rounds} rounds "
              f"(load average {load:.2f}, driver {torch.hal.driver()})")
        for name, median in medians.items():
            print(f"  {name:9s} {median * 1e3:9.2f} ms  {nbytes / median / 1e9:7.3f} GB/s")
        print(f"  hal / gloo_cpu bandwidth: {medians['gloo_cpu'] / medians['hal']:.2f}")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
