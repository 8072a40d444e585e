#!/bin/bash
# Issue 19's rows not yet measured on the device, in one call (about 8 minutes on
# an H100): the product tests at subgroup 32, then each workload against torch.
# Needs .gpu/arrc (a stripped release build) and .gpu/differential (the release
# differential test binary), and .gl/*.deb as ../shared/GPU.md says; run it from
# the repository root as `bash bench/issue19_rows.sh` with carry [".gl", ".gpu"].
set -x
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig; mkdir -p /work; ln -sfn $PWD /work/main; export ARRC_VALIDATION=0
nvidia-smi --query-gpu=name,driver_version --format=csv
.gpu/differential --test-threads 4 boolean_products generalized_inner matrix_products key_counts radix_grades sorting_and_searching 2>&1 | tail -5
A=.gpu/arrc
python3 bench/compare.py --arrc $A --sizes 20,22,24 --types f32 --workloads orand,minplus --runs 10 2>&1 | grep -v "^running"
python3 bench/compare.py --arrc $A --sizes 20,22,24 --types i32 --workloads pluseq --runs 10 2>&1 | grep -v "^running"
python3 bench/compare.py --arrc $A --sizes 24,26 --types f32 --workloads copy,stencil3,stencil5 --runs 20 2>&1 | grep -v "^running"
python3 bench/compare.py --arrc $A --sizes 24,28 --types i32 --workloads copy,index,member,grade --runs 10 2>&1 | grep -v "^running"
python3 bench/compare.py --arrc $A --sizes 26 --types i32,f32 --workloads keycount10,keycount20,keysum10,keysum20,keymax10,keymax20 --runs 10 2>&1 | grep -v "^running"
for i in 1 2 3; do python3 bench/compare.py --arrc $A --sizes 20 --types f32 --workloads sum --runs 300 2>&1 | grep "^sum"; done
