#!/usr/bin/env python3
"""The torch peers of bench/data_plane_bench.cc, measured on the same GPU: torch.equal over two
4 GiB tensors, a device-to-device copy of 4 GiB, pinned and pageable host<->device copies of 1 GiB,
and fp32 matmul (TF32 off) at 4096^2 and 8192^2. Medians of N runs, in ms and GB/s (TFLOP/s for
matmul), printed in the bench's units so the two outputs can be put side by side.

    python3 bench/peer_torch.py [--runs N] [--gib G]
"""
import argparse
import statistics
import time

import torch


def median_ms(fn, runs):
    fn()  # warm-up
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def device_ms(fn, runs):
    """Median device time from CUDA events (for kernels)."""
    fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def row(what, ms, gbps=None, extra=""):
    rate = f"{gbps:8.1f} GB/s" if gbps is not None else " " * 13
    print(f"  {what:<44} {ms:9.3f} ms {rate} {extra}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--gib", type=int, default=4)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"peer_torch on {torch.cuda.get_device_name(dev)} (torch {torch.__version__}), "
          f"median of {args.runs} runs")

    gib = 1 << 30
    n = args.gib * gib // 4
    a = torch.rand(n, device=dev, dtype=torch.float32)
    b = a.clone()
    print(f"checks over {args.gib} GiB")
    ms = median_ms(lambda: torch.equal(a, b), args.runs)
    row("torch.equal", ms, 2 * args.gib * gib / (ms * 1e6))
    ms = median_ms(lambda: b.copy_(a), args.runs)
    row("torch D2D copy (reads + writes)", ms, 2 * args.gib * gib / (ms * 1e6))
    del a, b

    print("copies of 1 GiB")
    d = torch.rand(gib // 4, device=dev, dtype=torch.float32)
    for pinned in (True, False):
        h = torch.empty(gib // 4, dtype=torch.float32, pin_memory=pinned)
        h.zero_()
        kind = "pinned" if pinned else "pageable"
        ms = median_ms(lambda: h.copy_(d), args.runs)
        row(f"device to host, {kind}", ms, gib / (ms * 1e6))
        ms = median_ms(lambda: d.copy_(h), args.runs)
        row(f"host to device, {kind}", ms, gib / (ms * 1e6))
    del d

    print("matmul fp32, TF32 off (device time)")
    for size in (4096, 8192):
        x = torch.rand(size, size, device=dev)
        y = torch.rand(size, size, device=dev)
        ms = device_ms(lambda: torch.matmul(x, y), args.runs)
        row(f"torch.matmul {size}^2", ms, None, f"{2 * size ** 3 / (ms * 1e9):.1f} TFLOP/s")


if __name__ == "__main__":
    main()
