#!/usr/bin/env bash
# Several devices against one (issue 20): each program of bench/devices/ on device 0
# alone and split across devices 0 and 1, inputs made once by --setup and kept
# resident, then bench/programs/normalize.apl and chain.apl whole. Run on the
# device machine from the repository root: bash bench/devices/run.sh [ARRC] [RUNS]
set -u
A=${1:-.gpu/arrc}
R=${2:-10}
$A devices
bench() { # devices setup program
  $A bench --devices "$1" --setup "$2" "$3" --runs "$R" --warmup 2 --json
}
for p in 28 30; do
  n=$((1 << p))
  setup="x←1|0.618034×⍳$n ⋄ +/x+x"
  for w in sum scan compress; do
    for d in 0 0,1; do echo "size 2^$p devices $d $(bench $d "$setup" bench/devices/$w.apl)"; done
  done
done
for rows in 8192 16384; do
  setup="A←(($rows 4096)⍴⍳1000)÷1000 ⋄ B←((4096 4096)⍴⍳997)÷997 ⋄ +/,A+A"
  for d in 0 0,1; do echo "matmul ${rows}x4096x4096 devices $d $(bench $d "$setup" bench/devices/matmul.apl)"; done
done
for prog in normalize chain; do
  for d in 0 0,1; do
    echo "program $prog devices $d $($A bench --devices $d bench/programs/$prog.apl --runs "$R" --warmup 2 --json)"
  done
done
