#!/usr/bin/env python3
"""Side-by-side: arrc (Vulkan) against torch (CUDA, CUB underneath) on the same GPU.

Runs `arrc bench --json` and the torch equivalents of each workload (CUDA events, same
sizes and dtypes, warm-up, median of runs) in one command, then prints per workload and
size: arrc time, torch time and the ratio torch/arrc (above 1: arrc is faster), plus the
device copy bandwidth each side measured.

    python3 bench/compare.py --arrc target/release/arrc --sizes 20,24,28
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time


def torch_times(torch, fn, runs, warmup, batch=1):
    # Warm up for at least `warmup` calls and 200 ms, as arrc bench does.
    start = time.perf_counter()
    n = 0
    while n < warmup or time.perf_counter() - start < 0.2:
        fn()
        torch.cuda.synchronize()
        n += 1
    times = []
    for _ in range(runs):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        # With --batch, as arrc bench: runs queued back to back, the last one timed.
        for _ in range(batch - 1):
            fn()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)  # microseconds
    return statistics.median(times)


def torch_workload(torch, name, dtype, n, shape, runs, warmup, batch=1):
    dev = "cuda"
    tdt = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32}[dtype]
    g = torch.Generator(device=dev).manual_seed(1)

    def rand(*s):
        if tdt.is_floating_point:
            return torch.rand(*s, device=dev, generator=g, dtype=tdt)
        return torch.randint(0, 100, s, device=dev, generator=g, dtype=tdt)

    def torch_times_b(torch, fn, runs, warmup):
        return torch_times(torch, fn, runs, warmup, batch)

    if name == "copy":
        x, y = rand(n), torch.empty(n, device=dev, dtype=tdt)
        return torch_times_b(torch, lambda: y.copy_(x), runs, warmup), None
    if name in ("sum", "max", "scan", "maxscan", "compress", "replicate", "where", "grade"):
        x = rand(n)
        fn = {
            "sum": lambda: x.sum(),
            "max": lambda: x.max(),
            "scan": lambda: torch.cumsum(x, 0),
            "maxscan": lambda: torch.cummax(x, 0).values,
            "compress": lambda: x[x > 0.5],  # as arrc bench: (x>0.5)/x
            # as arrc bench: (1+x>0.5)/x (the result's length found on the device)
            "replicate": lambda: torch.repeat_interleave(x, 1 + (x > 0.5).long()),
            # as arrc bench: ⍸x>0.5 (torch's indices are i64, arrc's i32)
            "where": lambda: torch.nonzero(x > 0.5).squeeze(1),
            "grade": lambda: torch.argsort(x, stable=True),  # as arrc bench: ⍋x
        }[name]
        t = torch_times_b(torch, fn, runs, warmup)
        e2e = None
        if name == "sum":
            for _ in range(warmup):
                x.sum().item()
            w = []
            for _ in range(runs):
                s = time.perf_counter()
                x.sum().item()
                w.append((time.perf_counter() - s) * 1e6)
            e2e = statistics.median(w)
        return t, e2e
    if name in ("rowsum", "colsum"):
        x = rand(*shape)
        return torch_times_b(torch, (lambda: x.sum(1)) if name == "rowsum" else (lambda: x.sum(0)), runs, warmup), None
    if name == "sqdiff":
        x, y = rand(n // 2), rand(n // 2)
        return torch_times_b(torch, lambda: ((x - y) ** 2).sum(), runs, warmup), None
    if name == "matmul":
        if n > (1 << 24) or tdt == torch.float64:
            return None, None
        x, y = rand(*shape), rand(*shape)
        if tdt == torch.int32:
            # cuBLAS has no integer product: f64, exact for these (0..99, k ≤ 2^24).
            xd, yd = x.double(), y.double()
            return torch_times_b(torch, lambda: xd @ yd, runs, warmup), None
        return torch_times_b(torch, lambda: x @ y, runs, warmup), None
    if name in ("maxplus", "minplus", "pluseq"):
        # x⌈.+y, x⌊.+y, x+.=y: torch has no kernel for them; the fastest formulation
        # found is a broadcast and reduce over blocks of k (about 2^29 elements of
        # intermediate at a time).
        if n > (1 << 24):
            return None, None
        x, y = rand(*shape), rand(*shape)
        (m, k), n_cols = shape, shape[1]
        kc = max(1, (1 << 29) // (m * n_cols))
        step = {
            "maxplus": (lambda xs, ys: (xs + ys).amax(1), torch.maximum),
            "minplus": (lambda xs, ys: (xs + ys).amin(1), torch.minimum),
            "pluseq": (lambda xs, ys: (xs == ys).sum(1), torch.add),
        }[name]

        def product():
            acc = None
            for k0 in range(0, k, kc):
                part = step[0](x[:, k0:k0 + kc, None], y[None, k0:k0 + kc, :])
                acc = part if acc is None else step[1](acc, part)
            return acc
        return torch_times(torch, product, max(3, runs // 10), 1), None
    if name in ("stencil3", "stencil5"):
        # {+/,⍵}⌺w w⊢x: a box filter with zero padding, as conv2d with a kernel of ones.
        if not tdt.is_floating_point:
            return None, None
        w = 3 if name == "stencil3" else 5
        x = rand(*shape)[None, None]
        k = torch.ones(1, 1, w, w, device=dev, dtype=tdt)
        f = torch.nn.functional.conv2d
        return torch_times_b(torch, lambda: f(x, k, padding=w // 2), runs, warmup), None
    if name in ("index", "member"):
        # x⍳y and x∊y on two vectors of n/2 integers in 0..n: a stable sort and
        # searchsorted (⍳, first occurrences), torch.isin (∊).
        h = n // 2
        if tdt.is_floating_point:
            x, y = rand(h), rand(h)
        else:
            x = torch.randint(0, n, (h,), device=dev, generator=g, dtype=tdt)
            y = torch.randint(0, n, (h,), device=dev, generator=g, dtype=tdt)

        def index():
            xs, perm = torch.sort(x, stable=True)
            pos = torch.searchsorted(xs, y).clamp_(max=h - 1)
            return torch.where(xs[pos] == y, perm[pos] + 1, h + 1)
        fn = index if name == "index" else (lambda: torch.isin(x, y))
        return torch_times_b(torch, fn, runs, warmup), None
    if name.startswith("key"):
        # y{f⍵}⌸x with f one of ≢ +/ ⌈/, keys in order of first occurrence: unique
        # with inverse indices, the first occurrence of each key by scatter_reduce,
        # the results by index_add/scatter_reduce, put in order by argsort.
        bits = int(name[-2:])
        x = rand(n)
        y = torch.randint(0, 1 << bits, (n,), device=dev, generator=g, dtype=torch.int32)
        what = name[3:-2]

        def key():
            u, inv, cnt = torch.unique(y, return_inverse=True, return_counts=True)
            first = torch.full((u.numel(),), n, device=dev, dtype=torch.int64)
            first = first.scatter_reduce(0, inv, torch.arange(n, device=dev), reduce="amin")
            order = torch.argsort(first)
            if what == "count":
                return cnt[order]
            if what == "sum":
                r = torch.zeros(u.numel(), device=dev, dtype=tdt).index_add_(0, inv, x)
            else:
                r = torch.empty(u.numel(), device=dev, dtype=tdt).scatter_reduce_(
                    0, inv, x, reduce="amax", include_self=False)
            return r[order]
        return torch_times_b(torch, key, runs, warmup), None
    if name == "boolcount":
        # (x>0.5)+.×y>0.5, counts of common ones: as an f32 matrix product (cuBLAS,
        # TF32 off: exact to 2^24) and, in the note, an f16 one on the tensor cores
        # (f32 sums; its f16 result is exact to 2048) and torch._int_mm of int8.
        if n > (1 << 24):
            return None, None
        x, y = rand(*shape), rand(*shape)
        torch.backends.cuda.matmul.allow_tf32 = False
        t32 = torch_times_b(torch, lambda: (x > 0.5).float() @ (y > 0.5).float(), runs, warmup)
        t16 = torch_times_b(torch, lambda: (x > 0.5).half() @ (y > 0.5).half(), runs, warmup)
        t8 = torch_times_b(torch, lambda: torch._int_mm((x > 0.5).to(torch.int8), (y > 0.5).to(torch.int8)), runs, warmup)
        print(f"boolcount {dtype} {n}: torch f16 {t16:.1f} µs, int8 _int_mm {t8:.1f} µs (f32 {t32:.1f})", file=sys.stderr)
        return t32, None
    if name == "orand":
        # Boolean product (x>0.5)∨.∧y>0.5 as a float matrix product, > 0 (cuBLAS; TF32
        # off), and (in the note) as an f16 one on the tensor cores.
        if n > (1 << 24):
            return None, None
        x, y = rand(*shape), rand(*shape)
        torch.backends.cuda.matmul.allow_tf32 = False
        t32 = torch_times_b(torch, lambda: ((x > 0.5).float() @ (y > 0.5).float()) > 0, runs, warmup)
        t16 = torch_times_b(torch, lambda: ((x > 0.5).half() @ (y > 0.5).half()) > 0, runs, warmup)
        print(f"orand {dtype} {n}: torch f16 tensor cores {t16:.1f} µs (f32 {t32:.1f})", file=sys.stderr)
        return t32, None
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrc", default="target/release/arrc")
    ap.add_argument("--sizes", default="10,12,14,16,18,20,22,24,26,28")
    ap.add_argument("--types", default="f32,i32")
    ap.add_argument("--workloads", default="copy,sum,max,scan,maxscan,rowsum,colsum,sqdiff,compress,grade,matmul")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json-out", default=None, help="also write all rows as JSON here")
    ap.add_argument("--batch", type=int, default=1,
                    help="runs queued back to back per timed run (the last is timed), both sides")
    ap.add_argument("--one-process", action="store_true", help="run every workload in one arrc process")
    ap.add_argument("--arrc-args", default="", help="extra arrc bench flags (tuning), one string")
    ap.add_argument("--check-up-to", type=int, default=1 << 24,
                    help="arrc bench checks its answers against the CPU reference up to this size")
    a = ap.parse_args()

    # One arrc process per workload: on the H200, a 2^28 workload that follows another
    # one in the same process ran at up to half speed in some runs (alone, every
    # kernel ran at its best time in every run); docs/PERFORMANCE.md has the details.
    # `--one-process` measures them all in one process instead.
    groups = [a.workloads] if a.one_process else a.workloads.split(",")
    rows = []
    for w in groups:
        cmd = [a.arrc, "bench", "--json", "--sizes", a.sizes, "--types", a.types, "--workloads", w,
               "--runs", str(a.runs), "--check-up-to", str(a.check_up_to), "--batch", str(a.batch)]
        cmd += shlex.split(a.arrc_args)
        print("running:", " ".join(cmd), file=sys.stderr, flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            sys.exit(f"arrc bench failed with {p.returncode}")
        rows += [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]

    import torch

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", file=sys.stderr)
    out = []
    for r in rows:
        t, e2e = torch_workload(torch, r["workload"], r["type"], r["n"], r["shape"], a.runs, 5, a.batch)
        r["torch_us"] = t
        r["torch_e2e_us"] = e2e
        r["ratio"] = (t / r["median_us"]) if (t and r.get("median_us")) else None
        out.append(r)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)

    def fmt(v, p=1):
        return "-" if v is None else f"{v:.{p}f}"

    print(f"{'workload':<9} {'type':<4} {'n':>10} {'arrc µs':>10} {'torch µs':>10} {'torch/arrc':>10} {'arrc GB/s':>10} {'e2e arrc':>9} {'e2e torch':>9}  note")
    for r in out:
        print(f"{r['workload']:<9} {r['type']:<4} {r['n']:>10} {fmt(r.get('median_us')):>10} {fmt(r['torch_us']):>10} "
              f"{fmt(r['ratio'], 2):>10} {fmt(r.get('gbps')):>10} {fmt(r.get('e2e_us')):>9} {fmt(r['torch_e2e_us']):>9}  {r.get('note') or ''}")


if __name__ == "__main__":
    main()
