#!/usr/bin/env python3
"""The vendor's own numbers on this GPU, for hal_bench's ratios.

Measures, through PyTorch's CUDA (or ROCm) device, the vendor BLAS's f32 GEMM
(4096^3, TF32 off: the same IEEE f32 math HAL's matmul does) and a 64 MiB
device-to-device copy, and prints them as the environment hal_bench reads:

    eval "$(python3 bench/vendor_baseline.py)"
    HAL_DRIVER=vulkan build/default/bin/hal_bench

hal_bench then reports compute/sgemm/4096 "vs_vendor_blas" and
copy/d2d/64MiB "vs_vendor_copy" (issue bars: >= 0.5 and >= 0.8). Exits 77
without a GPU: there is no vendor baseline on a CPU-only machine.
"""
import sys
import time

SGEMM_SIZE = 4096  # hal_bench's kVendorSgemmSize
COPY_BYTES = 64 << 20  # hal_bench's kCopyBytes


def seconds_per_call(torch, fn, min_seconds=0.5):
    fn()
    torch.cuda.synchronize()
    calls = 0
    start = time.perf_counter()
    while True:
        fn()
        torch.cuda.synchronize()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / calls


def main():
    try:
        import torch
    except ImportError:
        print("vendor_baseline: no torch to reach the vendor runtime", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("vendor_baseline: no CUDA/ROCm device", file=sys.stderr)
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    n = SGEMM_SIZE
    a = torch.full((n, n), 0.5, device="cuda")
    b = torch.full((n, n), 0.25, device="cuda")
    out = torch.empty((n, n), device="cuda")
    sgemm = seconds_per_call(torch, lambda: torch.mm(a, b, out=out))
    src = torch.ones(COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy = seconds_per_call(torch, lambda: dst.copy_(src))
    print(f"export HAL_BENCH_VENDOR_SGEMM_GFLOPS={2 * n**3 / sgemm / 1e9:.1f}")
    print(f"export HAL_BENCH_VENDOR_COPY_GBPS={2 * COPY_BYTES / copy / 1e9:.1f}")
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
