#!/usr/bin/env python3
"""Runs a benchmark program of bench/ (or reads its JSON output) and prints
the tables of docs/performance.md, with the machine it ran on:

- hal_bench: each benchmark's measured value, its target, and whether it
  meets it;
- hal_kernel_bench and torch_bench.py: for each case, the HAL side's time,
  torch's time and their ratio (pairs named <family>/<case>/hal_<driver> and
  <family>/<case>/torch_cpu), then the geometric mean of the ratios per
  family. A HAL side that fell back to the CPU (counter `fallbacks`) says so.

  python3 bench/report.py --bench build/default/bin/hal_bench
  python3 bench/report.py --bench build/default/bin/hal_kernel_bench
  .venv/bin/python bench/report.py --bench bench/torch_bench.py   # runs it with this Python
  python3 bench/report.py --json results.json        # an earlier run's output

Each benchmark runs --repetitions times; the tables show the median.
Only the Python standard library is used.
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

# name prefix -> (what is measured, how to read it from a run, unit, target
# comparison, target value). Benchmarks without an entry are informational.
TARGETS = [
    ("launch/", "enqueue→complete latency", "real_time", "µs", "<=", 5.0),
    ("copy/", "bandwidth / memcpy bandwidth", "vs_memcpy", "×", ">=", 0.70),
    ("alloc/caching/", "allocate + free from cache", "real_time", "ns", "<=", 1000.0),
]


def run_bench(binary, repetitions, extra_args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    # A Python benchmark runs with this interpreter (the one that has torch).
    program = [sys.executable, binary] if binary.endswith(".py") else [binary]
    command = [*program, f"--benchmark_out={path}", "--benchmark_out_format=json",
               f"--benchmark_repetitions={repetitions}",
               "--benchmark_report_aggregates_only=true", *extra_args]
    print("running:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True, stdout=sys.stderr)
    with open(path) as f:
        data = json.load(f)
    os.unlink(path)
    return data


def medians(data):
    """name -> the run to report: its median aggregate, else its single run."""
    runs = {}
    for run in data["benchmarks"]:
        name = run["run_name"]
        if run.get("run_type") == "aggregate":
            if run.get("aggregate_name") == "median":
                runs[name] = run
        elif name not in runs or run.get("error_occurred"):
            runs[name] = run
    return runs


def time_in(run, unit):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[run["time_unit"]]
    wanted = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3}[unit]
    return run["real_time"] * scale / wanted


def measured_text(name, run):
    if run.get("error_occurred"):
        return f"error: {run.get('error_message', '?')}"
    if "bytes_per_second" in run:
        text = f"{run['bytes_per_second'] / 1e9:.2f} GB/s"
        if "vs_memcpy" in run:
            text += f" ({run['vs_memcpy']:.2f}× memcpy)"
        return text
    unit = "ns" if run["time_unit"] == "ns" else "µs"
    text = f"{time_in(run, unit):.2f} {unit}"
    if "speedup_vs_driver" in run:
        text += f" ({run['speedup_vs_driver']:.1f}× faster than the driver)"
    return text


def verdict(name, run):
    for prefix, what, field, unit, op, target in TARGETS:
        if not name.startswith(prefix):
            continue
        if run.get("error_occurred"):
            return what, "FAIL"
        value = time_in(run, unit) if field == "real_time" else run[field]
        ok = value <= target if op == "<=" else value >= target
        symbol = "≤" if op == "<=" else "≥"
        return f"{what} {symbol} {target:g} {unit}", "pass" if ok else "FAIL"
    return "(baseline / informational)", "—"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def header(context):
    lines = [
        f"Machine: {cpu_model()}, nproc = {os.cpu_count()}, "
        f"{platform.system()} {platform.release()}; load average "
        f"{' '.join(f'{x:.1f}' for x in context.get('load_avg', []))}; "
        f"date {context.get('date', datetime.datetime.now().isoformat())}.",
        "",
        f"Driver: {context.get('hal_driver', 'unknown')}; "
        f"device: {context.get('hal_device', 'unknown')}.",
    ]
    if "torch_threads" in context:
        lines += ["", f"torch threads: {context['torch_threads']}."]
    return lines


def base_name(name):
    """The benchmark's name without the suffixes Google Benchmark adds for its
    options (/real_time, /manual_time, /min_time:0.5, ...)."""
    options = ("real_time", "manual_time", "min_time:", "iterations:", "repeats:")
    return "/".join(part for part in name.split("/") if not part.startswith(options))


def split_pair(name):
    """(case, side) for a kernel benchmark: side "hal" or "torch"; else None."""
    case, _, impl = name.rpartition("/")
    if impl.startswith("hal_"):
        return case, "hal"
    if impl == "torch_cpu":
        return case, "torch"
    return None


def target_table(runs):
    lines = [
        "| Benchmark | Measured (median) | Target | Result |",
        "|---|---|---|---|",
    ]
    for name, run in runs.items():
        target, result = verdict(name, run)
        lines.append(f"| `{name}` | {measured_text(name, run)} | {target} | {result} |")
    return lines


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def side_time(run):
    """(median µs or None, table cell) of one side of a kernel pair."""
    if run is None:
        return None, "missing"
    if run.get("error_occurred"):
        return None, f"error: {run.get('error_message', '?')}"
    value = time_in(run, "µs")
    cell = f"{value:.1f}"
    if run.get("fallbacks"):
        cell += f" ({run['fallbacks']:g} CPU fallbacks each)"
    return value, cell


def ratio_tables(pairs):
    """Per-kernel times and hal / torch ratios, then per-family geo-means."""
    lines = [
        "| Case | hal (µs) | torch (µs) | hal / torch |",
        "|---|---|---|---|",
    ]
    ratios = {}  # family -> ratios of its complete, error-free pairs
    for case, sides in pairs.items():
        hal, hal_cell = side_time(sides.get("hal"))
        torch, torch_cell = side_time(sides.get("torch"))
        ratio = "—"
        if hal is not None and torch is not None:
            ratios.setdefault(case.split("/")[0], []).append(hal / torch)
            ratio = f"{hal / torch:.2f}"
        lines.append(f"| `{case}` | {hal_cell} | {torch_cell} | {ratio} |")
    lines += [
        "",
        "| Family | Cases | hal / torch (geometric mean) |",
        "|---|---|---|",
    ]
    for family, values in ratios.items():
        lines.append(f"| {family} | {len(values)} | {geometric_mean(values):.2f} |")
    everything = [v for values in ratios.values() for v in values]
    if everything:
        lines.append(f"| all | {len(everything)} | {geometric_mean(everything):.2f} |")
    return lines


def table(data):
    runs = {base_name(name): run for name, run in medians(data).items()}
    pairs, others = {}, {}
    for name, run in runs.items():
        pair = split_pair(name)
        if pair:
            pairs.setdefault(pair[0], {})[pair[1]] = run
        else:
            others[name] = run
    lines = header(data.get("context", {}))
    if others:
        lines += [""] + target_table(others)
    if pairs:
        lines += [""] + ratio_tables(pairs)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--bench", help="path of the benchmark executable to run")
    source.add_argument("--json", help="JSON written by a benchmark's --benchmark_out")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("bench_args", nargs="*", help="more benchmark arguments (after --)")
    args = parser.parse_args()
    if args.bench:
        data = run_bench(args.bench, args.repetitions, args.bench_args)
    else:
        with open(args.json) as f:
            data = json.load(f)
    print(table(data))


if __name__ == "__main__":
    main()
