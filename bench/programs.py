#!/usr/bin/env python3
"""Whole programs, arrc against torch on the same GPU, in one command.

Each `bench/programs/NAME.apl` is a multi-statement APL program; `TORCH[NAME]` below is
the same computation in torch (same sizes, same dtypes: APL's default floats are f32,
its integers from `+ - ×` i64). Both run warm in one process each: arrc through
`arrc bench PROGRAM --json` (one session, the program run again and again, the
statements' kernels and pipelines cached), torch with the CUDA caching allocator warm.
A run is the whole program to its value on the host (`.item()` in torch), wall time.

    python3 bench/programs.py --arrc target/release/arrc [--runs 10] [--only chain,life]

Prints a table (median wall per run, torch/arrc: above 1 arrc is faster), the two
values, and the geometric mean of the ratios; --json prints one object per program.
"""
import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def chain(t, dev):
    n = 67108864
    x = t.arange(1, n + 1, device=dev, dtype=t.int32)
    y = x.to(t.int64) * 2
    z = y + 1
    return z.sum().item()


def running(t, dev):
    n = 67108864
    i = t.arange(1, n + 1, device=dev, dtype=t.int64)
    ra = 0.01 * ((i * 7919) % 100).to(t.float32)
    return t.cumsum(ra, 0)[-32:].sum().item()


def blackscholes(t, dev):
    n = 16777216
    i = t.arange(1, n + 1, device=dev, dtype=t.int64)
    S = 90 + 20 * ((i * 7919) % 1000).to(t.float32) / 1000
    T = 0.5 + (i % 97).to(t.float32) / 97
    K, r, v = 100.0, 0.02, 0.3

    def cnd(x):
        k = 1 / (1 + 0.2316419 * x.abs())
        w = 1 - 0.3989422804 * t.exp(-0.5 * x * x) * k * (
            0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))
        )
        return t.where(x >= 0, w, 1 - w)

    sq = v * T.sqrt()
    d1 = (t.log(S / K) + T * (r + 0.5 * v * v)) / sq
    d2 = d1 - sq
    C = S * cnd(d1) - K * t.exp(-r * T) * cnd(d2)
    return (C.sum() / n).item()


def ann(t, dev):
    r, k = 4096, 1024
    X = (t.arange(r * k, device=dev) % k + 1).to(t.float32).reshape(r, k) / k
    W1 = (t.arange(k * k, device=dev) % 997 + 1).to(t.float32).reshape(k, k) / 997 - 0.5
    W2 = (t.arange(k * k, device=dev) % 991 + 1).to(t.float32).reshape(k, k) / 991 - 0.5
    b = t.arange(1, k + 1, device=dev).to(t.float32) / k
    H = t.clamp_min(X @ W1 + b, 0)
    Y = H @ W2
    return (Y.sum() / (r * k)).item()


def paths(t, dev):
    n = 2048
    i = t.arange(n * n, device=dev)
    a = (i % 13 + 1).reshape(n, n) * (i % 11 + 1).reshape(n, n).T
    A = (a % 7 == 0).to(t.float32)
    W = (A @ A) @ A
    return W.double().sum().item()


def life(t, dev):
    m = 8192
    B = (3 > ((t.arange(m * m, device=dev) % (m - 1) + 1) * 13) % 7).reshape(m, m).to(t.int8)
    for _ in range(3):
        N = sum(t.roll(B, (i, j), (0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        B = ((N == 3) | ((B == 1) & (N == 2))).to(t.int8)
    return B.sum().item()


def stencil(t, dev):
    m = 8192
    A = (t.arange(m * m, device=dev) % 1000 + 1).to(t.float32).reshape(m, m) / 1000
    S = sum(t.roll(A, (i, j), (0, 1)) for i in range(-2, 3) for j in range(-2, 3)) / 25
    return (S.sum() / (m * m)).item()


def boxfilter(t, dev):
    m = 8192
    A = (t.arange(m * m, device=dev) % 1000 + 1).to(t.float32).reshape(m, m) / 1000
    k = t.ones(1, 1, 5, 5, device=dev, dtype=t.float32)
    S = t.nn.functional.conv2d(A[None, None], k, padding=2)[0, 0] / 25
    return (S.sum() / (m * m)).item()


def lifestencil(t, dev):
    m = 8192
    B = (3 > ((t.arange(m * m, device=dev) % (m - 1) + 1) * 13) % 7).reshape(m, m)
    k = t.ones(1, 1, 3, 3, device=dev, dtype=t.float32)
    for _ in range(3):
        s = t.nn.functional.conv2d(B.to(t.float32)[None, None], k, padding=1)[0, 0]
        B = (s == 3) | (B & (s == 4))
    return B.sum().item()


def roll(t, dev):
    n = 67108864
    x = t.randint(1, 7, (n,), device=dev, dtype=t.int32)
    return (x.sum() / n).item()


def key(t, dev):
    n = 67108864
    k = ((t.arange(1, n + 1, device=dev, dtype=t.int64) * 7919) % 1048576).to(t.int32)
    u, inv, cnt = t.unique(k, return_inverse=True, return_counts=True)
    first = t.full((u.numel(),), n, device=dev, dtype=t.int64)
    first = first.scatter_reduce(0, inv, t.arange(n, device=dev), reduce="amin")
    c = cnt[t.argsort(first)]
    return (c * t.arange(1, c.numel() + 1, device=dev)).sum().item()


def streak(t, dev):
    n = 67108864
    i = t.arange(1, n + 1, device=dev, dtype=t.int64)
    x = (i * 3) % 1000
    b = x > t.roll(x, 1)
    b[0] = False
    s = t.cummax(i * (~b), 0).values
    return (1 + i - s).max().item()


def normalize(t, dev):
    n = 67108864
    i = t.arange(1, n + 1, device=dev, dtype=t.int64)
    x = ((i * 7919) % 1000).to(t.float32) / 1000
    m = x.sum() / n
    d = x - m
    v = (d * d).sum() / n
    z = d / v.sqrt()
    return z.abs().max().item()


def softmax(t, dev):
    r, c = 8192, 1024
    X = (t.arange(r * c, device=dev) % 997 + 1).to(t.float32).reshape(r, c) / 997
    m = X.max(1, keepdim=True).values
    E = t.exp(X - m)
    P = E / E.sum(1, keepdim=True)
    return (P * X).sum().item()


def scatter(t, dev):
    n, k = 67108864, 1048576
    x = t.remainder(0.618034 * t.arange(1, n + 1, device=dev, dtype=t.float32), 1)
    i = (t.arange(1, k + 1, device=dev, dtype=t.int64) * 7919) % n
    x[i] = 0.5
    return x.sum().item()


def deal(t, dev):
    n = 16777216
    p = t.randperm(n, device=dev) + 1
    return (p == t.arange(1, n + 1, device=dev)).sum().item()


def solve(t, dev):
    # arrc's ⌹ computes in f64 (Householder QR), so torch solves in f64 too.
    n = 1024
    i = t.arange(n * n, device=dev)
    A = ((i % 997 + 1).to(t.float32) / 997).reshape(n, n) + n * t.eye(n, device=dev)
    b = t.arange(1, n + 1, device=dev, dtype=t.float32) / n
    x = t.linalg.solve(A.double(), b.double()).float()
    return x.sum().item()


TORCH = {
    "chain": chain,
    "running": running,
    "blackscholes": blackscholes,
    "ann": ann,
    "paths": paths,
    "life": life,
    "stencil": stencil,
    "boxfilter": boxfilter,
    "lifestencil": lifestencil,
    "lifenested": life,
    "roll": roll,
    "key": key,
    "streak": streak,
    "normalize": normalize,
    "softmax": softmax,
    "scatter": scatter,
    "deal": deal,
    "solve": solve,
}


def torch_run(name, runs, warmup):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    fn = TORCH[name]
    value = None
    for _ in range(warmup):
        value = fn(torch, "cuda")
    times = []
    for _ in range(runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        value = fn(torch, "cuda")
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times), value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrc", default="target/release/arrc")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    names = [n for n in TORCH if not a.only or n in a.only.split(",")]
    rows = []
    for name in names:
        path = os.path.join(HERE, "programs", name + ".apl")
        cmd = [a.arrc, "bench", path, "--json", "--runs", str(a.runs), "--warmup", str(a.warmup)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{name}: arrc failed: {shlex.join(cmd)}\n{p.stdout}{p.stderr}", file=sys.stderr)
            continue
        b = json.loads(p.stdout.strip().splitlines()[-1])
        row = {"program": name, "arrc_us": b["wall_us"]["median"], "arrc": b}
        if not a.no_torch:
            row["torch_us"], row["torch_value"] = torch_run(name, a.runs, a.warmup)
            row["ratio"] = row["torch_us"] / row["arrc_us"]
        rows.append(row)
        if a.json:
            print(json.dumps(row))
    if a.json:
        return
    print(f"{'program':14} {'arrc ms':>9} {'kernels ms':>10} {'torch ms':>9} {'torch/arrc':>10}  values (arrc | torch)")
    for r in rows:
        b = r["arrc"]
        t = f"{r['torch_us'] / 1e3:9.2f} {r['ratio']:10.2f}" if "torch_us" in r else f"{'':9} {'':10}"
        print(
            f"{r['program']:14} {r['arrc_us'] / 1e3:9.2f} {b['device_us']['median'] / 1e3:10.2f} {t}  {b['value']} | {r.get('torch_value', '')}"
        )
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geometric mean torch/arrc: {g:.2f} over {len(ratios)} programs")


if __name__ == "__main__":
    main()
