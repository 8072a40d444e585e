#!/usr/bin/env python3
"""Tuning sweep: `arrc bench --json` for every combination of binaries, tile shapes and
extra flags, one process each, and one table at the end (µs medians).

    python3 bench/sweep.py --arrc ./.gpu/arrc,./.gpu/arrc-old --shapes 384x32,256x32 \
        --flags "","--scan-tiles-by-workgroup true" --workloads scan --sizes 24,28

A shape WxI sets --scan-workgroup-size W --scan-items I (chained scans); for other
workloads give their flags in --flags. Results are checked against the CPU reference up
to --check-up-to elements, as arrc bench does.
"""
import argparse
import json
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrc", default="target/release/arrc", help="comma-separated binaries")
    ap.add_argument("--shapes", default="", help="comma-separated WxI scan shapes ('' = default)")
    ap.add_argument("--flags", default="", help="comma-separated sets of extra flags")
    ap.add_argument("--workloads", default="scan")
    ap.add_argument("--sizes", default="28")
    ap.add_argument("--types", default="f32")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--check-up-to", type=int, default=1 << 22)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    shapes = a.shapes.split(",") if a.shapes else [""]
    flag_sets = a.flags.split(",") if a.flags else [""]
    rows = []
    for binary in a.arrc.split(","):
        for shape in shapes:
            for flags in flag_sets:
                cmd = [binary, "bench", "--json", "--workloads", a.workloads, "--sizes", a.sizes,
                       "--types", a.types, "--runs", str(a.runs), "--check-up-to", str(a.check_up_to)]
                if shape:
                    w, i = shape.split("x")
                    cmd += ["--scan-workgroup-size", w, "--scan-items", i]
                cmd += shlex.split(flags)
                print("running:", " ".join(cmd), file=sys.stderr, flush=True)
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.stderr.write(p.stderr)
                for line in p.stdout.splitlines():
                    if line.startswith("{"):
                        r = json.loads(line)
                        r["binary"], r["shape"], r["flags"] = binary, shape or "default", flags
                        rows.append(r)
                        for k in r.get("pipelines", []):
                            print("   ", k, file=sys.stderr)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"{'binary':<16} {'shape':<8} {'flags':<34} {'workload':<9} {'type':<4} {'n':>10} {'µs':>9} {'GB/s':>7}  note")
    for r in rows:
        us = r.get("median_us")
        gb = r.get("gbps")
        print(f"{r['binary'][-16:]:<16} {r['shape']:<8} {r['flags'][:34]:<34} {r['workload']:<9} {r['type']:<4} "
              f"{r['n']:>10} {('-' if us is None else f'{us:.1f}'):>9} {('-' if gb is None else f'{gb:.0f}'):>7}  "
              f"{r.get('note') or ''}")


if __name__ == "__main__":
    main()
