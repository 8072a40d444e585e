#!/usr/bin/env bash
# One device call for the scan work: Vulkan loader, device facts, what the driver
# compiled for the scan kernels, a checked run at subgroup size 32, a tile-shape sweep
# of the binaries in .gpu/ (arrc, and arrc-old when present), and arrc against torch.
# Run from the repository root on the device machine (see ../shared/GPU.md):
#   bash bench/device_scan.sh [shapes] [sizes]
set -u
shapes=${1:-384x32,256x32,256x40,512x16,256x16,512x32}
sizes=${2:-24,28}
out=${OUT:-/tmp/out}
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
.gpu/arrc devices
echo "== checked scans at subgroup 32, with the driver's statistics"
python3 bench/sweep.py --arrc .gpu/arrc --workloads scan,maxscan --sizes 12,18,22 --types f32,i32 \
    --flags="--pipeline-stats,--scan-tiles-by-workgroup true" --check-up-to 4194304 2>&1 | tee "$out/check.txt"
echo "== sweep"
python3 bench/sweep.py --arrc .gpu/arrc --shapes "$shapes" --workloads scan --sizes "$sizes" --types f32 \
    --flags=",--scan-tiles-by-workgroup true" --json-out "$out/sweep_new.json" 2>"$out/sweep_new.err" | tee "$out/sweep_new.txt"
if [ -x .gpu/arrc-old ]; then
  python3 bench/sweep.py --arrc .gpu/arrc-old --shapes "$shapes" --workloads scan --sizes "$sizes" --types f32 \
      --json-out "$out/sweep_old.json" 2>"$out/sweep_old.err" | tee "$out/sweep_old.txt"
fi
echo "== against torch"
python3 bench/compare.py --arrc .gpu/arrc --sizes 20,24,28 --workloads copy,scan --types f32,i32 --runs 30 \
    --json-out "$out/compare.json" 2>"$out/compare.err" | tee "$out/compare.txt"
