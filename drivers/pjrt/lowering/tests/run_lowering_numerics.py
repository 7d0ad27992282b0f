#!/usr/bin/env python3
"""The lowering numerics test: every standard kernel x dtype on XLA CPU.

Runs hal-pjrt-lowering-cases (the C++ tool that lowers every case of the
conformance harness and writes program, parameters and expected buffers),
then compiles each program with jaxlib's CPU client, runs it and compares
every returned buffer with the expected one as the conformance harness
does: elements of the output views within the table's tolerance (NaN
matches NaN, integers and bool exact), every other byte unchanged. The
cases of a program with a data check have a "status" (lowering.hpp) that its
last result must equal: zeros for a valid case; for a data error (an index
out of range, which cpu_ref fails on execution) the bad element, and then
every buffer must come back unchanged.

Prints one line per kernel x dtype (pass / FAIL / not lowered), the counts
per family, and the required-dtype count. Kernels go one at a time: the
tool writes a kernel's cases, they run, the folder is removed. Exit status: 0 when every
required pair passes and no lowered pair fails; 1 otherwise; 77 (skip) when
jax is not installed.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

# XLA's CPU client only: an installed libtpu would otherwise be probed.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

try:
    import jax
    import ml_dtypes
    import numpy as np
    from jax._src.lib import xla_client
    from jax.extend import backend as jax_backend
except ImportError as error:
    print(f"SKIP: jax/jaxlib not installed in {sys.executable}: {error}")
    sys.exit(77)

jax.config.update("jax_enable_x64", True)

NUMPY_DTYPES = {
    "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "f64": np.float64, "i64": np.int64, "i32": np.int32, "i16": np.int16,
    "i8": np.int8, "u8": np.uint8, "bool": np.uint8,
}


MAIN = re.compile(r"func\.func public @main\((.*?)\) -> \((.*?)\) \{")


def batch_module(programs):
    """One module running every program: each becomes a private function,
    called from a @main that takes all their parameters and returns all
    their results. XLA compiles it once, which costs a fraction of
    compiling each (compilation dominates this test's time)."""
    functions, params, calls, results = [], [], [], []
    for i, text in enumerate(programs):
        signature = MAIN.search(text)
        types = [p.split(": ", 1)[1] for p in signature.group(1).split(", %")
                 if p]
        outs = [t for t in signature.group(2).split(", ") if t]
        body = text[text.index("func.func"):text.rindex("}")]
        functions.append(body.replace("func.func public @main",
                                      f"func.func private @case{i}"))
        names = []
        for t in types:
            names.append(f"%p{len(params)}")
            params.append(f"%p{len(params)}: {t}")
        if not outs:  # writes nothing (all outputs empty)
            continue
        if len(outs) == 1:
            lhs, values = f"%r{i}", [f"%r{i}"]
        else:
            lhs, values = f"%r{i}:{len(outs)}", [f"%r{i}#{j}"
                                                 for j in range(len(outs))]
        calls.append(f"    {lhs} = func.call @case{i}({', '.join(names)}) : "
                     f"({', '.join(types)}) -> ({', '.join(outs)})")
        results += zip(values, outs)
    result_types = ", ".join(t for _, t in results)
    return ("module @cases {\n" + "\n".join(functions) +
            f"\n  func.func public @main({', '.join(params)}) -> "
            f"({result_types}) {{\n" + "\n".join(calls) +
            f"\n    return {', '.join(v for v, _ in results)} : "
            f"{result_types}\n  }}\n}}\n")


class Runner:
    """Compiles StableHLO text on XLA CPU and runs it."""

    def __init__(self):
        self.backend = jax_backend.get_backend("cpu")
        self.device = self.backend.devices()[0]
        self.devices = xla_client.DeviceList((self.device,))

    def run(self, mlir, params):
        executable = self.backend.compile_and_load(
            mlir, self.devices, xla_client.CompileOptions())
        arrays = [jax.device_put(p, self.device) for p in params]
        results = executable.execute_sharded(arrays)
        return [np.asarray(r[0])
                for r in results.disassemble_into_single_device_arrays()]


def load_param(case_dir, param):
    dtype = NUMPY_DTYPES[param["dtype"]]
    data = np.fromfile(case_dir / param["file"], dtype=np.uint8)
    return data.view(dtype).reshape(param["dims"])


def view_bytes(view, size):
    """Byte positions of each element of a view: [elements, element_size]."""
    dtype = np.dtype(NUMPY_DTYPES[view["dtype"]])
    index = np.zeros([max(n, 0) for n in view["sizes"]], dtype=np.int64)
    for d, (n, stride) in enumerate(zip(view["sizes"], view["strides"])):
        shape = [1] * len(view["sizes"])
        shape[d] = n
        index = index + (np.arange(n, dtype=np.int64) * stride).reshape(shape)
    start = (index.reshape(-1) + view["offset"]) * dtype.itemsize
    return start[:, None] + np.arange(dtype.itemsize)[None, :], dtype


def as_float(raw, dtype, view_dtype):
    values = raw.view(dtype).reshape(-1)
    if view_dtype == "bool":
        return (values != 0).astype(np.float64)
    return values.astype(np.float64)


def compare(actual, expected, views):
    """Mismatch descriptions (empty: the buffer matches)."""
    problems = []
    if actual.shape != expected.shape:
        return [f"buffer of {actual.size} bytes, want {expected.size}"]
    covered = np.zeros(expected.size, dtype=bool)
    for view in views:
        positions, dtype = view_bytes(view, expected.size)
        if positions.size == 0:
            continue
        covered[positions.reshape(-1)] = True
        got = as_float(actual[positions], dtype, view["dtype"])
        want = as_float(expected[positions], dtype, view["dtype"])
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (
                np.abs(got - want) <= view["atol"] + view["rtol"] * np.abs(want))
        for i in np.flatnonzero(~ok)[:4]:
            problems.append(f"element {i}: got {got[i]!r}, want {want[i]!r} "
                            f"({view['dtype']}, atol {view['atol']}, "
                            f"rtol {view['rtol']})")
        if (~ok).sum() > 4:
            problems.append(f"... {(~ok).sum()} mismatching elements")
    changed = np.flatnonzero(~covered & (actual != expected))
    if changed.size:
        problems.append(f"{changed.size} bytes outside every output changed "
                        f"(first at {changed[0]})")
    return problems


def result_count(case):
    return len(case["results"]) + ("status" in case)


def check_case(case_dir, case, results):
    failures = []
    if "status" in case:
        got = results[-1].reshape(-1).tolist()
        if got != case["status"]:
            failures.append(f"{case['name']}: status {got}, want "
                            f"{case['status']}")
    for r, result in enumerate(case["results"]):
        expected = np.fromfile(case_dir / result["expected"], dtype=np.uint8)
        for problem in compare(results[r].reshape(-1), expected,
                               result["views"]):
            failures.append(f"{case['name']}: {problem}")
    return failures


def run_pair(runner, root, pair):
    """Failure descriptions of one kernel x dtype (empty: it passes). All
    cases run as one batch; if that fails to compile or run, each case on
    its own names the culprits."""
    cases = [(root / pair["dir"] / c["dir"], c) for c in pair["cases"]]
    programs = [(d / "program.mlir").read_text() for d, _ in cases]
    params = [[load_param(d, p) for p in c["params"]] for d, c in cases]
    try:
        flat = runner.run(batch_module(programs), sum(params, []))
    except Exception:  # each case alone says which
        flat = None
    failures = []
    for i, (case_dir, case) in enumerate(cases):
        count = result_count(case)
        if flat is not None:
            results, flat = flat[:count], flat[count:]
        else:
            try:
                results = runner.run(programs[i], params[i])
            except Exception as error:  # XLA's message is the report
                failures.append(f"{case['name']}: "
                                f"{str(error).splitlines()[0]}")
                continue
        failures += check_case(case_dir, case, results)
    return failures


def family_kernels(table_dir, family):
    table = json.loads((table_dir / f"{family}.json").read_text())
    return [k["name"] for k in table["kernels"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases-tool", required=True)
    parser.add_argument("--table-dir", required=True, type=pathlib.Path,
                        help="hal/kernels/table")
    parser.add_argument("--work-dir", required=True, type=pathlib.Path)
    parser.add_argument("--family", action="append",
                        help="only this family (repeatable; 'transfer': the "
                        "transfer programs); default every kernel family")
    parser.add_argument("--shards", type=int, default=1,
                        help="run one kernel in N, the shard that "
                        "$HAL_TEST_ROTATION selects (its value modulo N; "
                        "scripts/test sets it to the commit count); every "
                        "kernel when it is unset")
    parser.add_argument("kernels", nargs="*", help="only these kernels")
    args = parser.parse_args()

    families = args.family or sorted(
        p.stem for p in args.table_dir.glob("*.json"))
    # "transfer" is the transfer programs (copy, fill, write, read ranges).
    kernels = args.kernels or [
        k for f in families
        for k in (["--transfers"] if f == "transfer"
                  else family_kernels(args.table_dir, f))]
    rotation = os.environ.get("HAL_TEST_ROTATION")
    if args.shards > 1 and rotation is not None:
        shard = int(rotation) % args.shards
        kernels = kernels[shard::args.shards]
        print(f"shard {shard + 1} of {args.shards} (HAL_TEST_ROTATION="
              f"{rotation}): {', '.join(kernels)}\n", flush=True)
    runner = Runner()
    counts = collections.defaultdict(collections.Counter)
    required = collections.Counter()
    bad = []
    # Kernel by kernel, so that the written cases (the large ones are
    # megabytes) never pile up on disk.
    for kernel in kernels:
        work = args.work_dir / kernel.lstrip("-")
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run([args.cases_tool, str(work), kernel], check=True,
                       stdout=subprocess.DEVNULL)
        for pair in json.loads((work / "manifest.json").read_text()):
            name = f"{pair['kernel']} {pair['dtype']}"
            if "not_lowered" in pair:
                status, detail = "not lowered", pair["not_lowered"]
            elif "error" in pair:
                status, detail = "fail", pair["error"]
            else:
                failures = run_pair(runner, work, pair)
                status = "fail" if failures else "pass"
                detail = ("; ".join(failures[:3]) if failures
                          else f"{len(pair['cases'])} cases")
            counts[pair["family"]][status] += 1
            if pair["required"]:
                required[status] += 1
            if status == "fail" or (pair["required"] and status != "pass"):
                bad.append(name)
            label = status.upper() if status == "fail" else status
            print(f"{label:12} {name:30} "
                  f"{'(required) ' if pair['required'] else ''}{detail}",
                  flush=True)
        shutil.rmtree(work, ignore_errors=True)

    print("\nfamily        pass  fail  not lowered")
    for family in sorted(counts):
        c = counts[family]
        print(f"{family:12} {c['pass']:5} {c['fail']:5} {c['not lowered']:12}")
    total = sum(required.values())
    print(f"\nrequired kernel x dtype pairs: {required['pass']} of {total} "
          f"pass ({required['fail']} fail, {required['not lowered']} not "
          "lowered)")
    if bad:
        print(f"{len(bad)} pairs need work: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
