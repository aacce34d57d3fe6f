#!/bin/sh
# The fixed cost of a step: what `tandem train` adds to every step beyond LibTorch's own
# forward, backward and Adam step. One linear layer (784 to 10, bench/make_deepthin.py with
# depth 1) at batch 1 leaves almost no arithmetic, so the time per step is mostly fixed cost;
# `tandem train` against the plain LibTorch C++ loop (bench/plain_loop.cpp) over the same
# TorchScript file, Fashion-MNIST, one thread, runs alternating, medians of REPEATS. Both time
# their training loop only. On a GPU this cost is what the kernels cannot hide.
#
#   bench/step_cost.sh [STEPS] [BATCH]      defaults: 5000 steps, batch 1
set -eu
cd "$(dirname "$0")/.."
steps=${1:-5000}
batch=${2:-1}
repeats=${REPEATS:-5}
cmake --build build --target tandem bench_plain_loop >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 bench/make_deepthin.py "$out/linear.pt" 1 2>/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed 's/,/,\n/g' | sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | tail -n 1; }
us() { awk -v r="$1" -v b="$batch" 'BEGIN { printf "%.1f", 1e6 * b / r }'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "steps=$steps batch=$batch threads=1 repeats=$repeats"
: >"$out/engine"
: >"$out/plain"
i=0
while [ $i -lt "$repeats" ]; do
    build/bin/tandem train --model "$out/linear.pt" --data fashion-mnist --batch "$batch" \
        --optimizer adam --lr 0.001 --threads 1 --max-steps "$steps" --limit-test 1 --no-history \
        --out "$out/run" 2>/dev/null | tail -n 1 | field samples_per_s | { read -r r; us "$r"; echo; } >>"$out/engine"
    build/bin/bench_plain_loop "$steps" 1 "$batch" "$out/linear.pt" | field samples_per_s |
        { read -r r; us "$r"; echo; } >>"$out/plain"
    i=$((i + 1))
done
e=$(median <"$out/engine")
p=$(median <"$out/plain")
echo "tandem train: $e us per step [$(tr '\n' ' ' <"$out/engine")]"
echo "plain loop:   $p us per step [$(tr '\n' ' ' <"$out/plain")]"
awk -v e="$e" -v p="$p" 'BEGIN { printf "fixed cost Tandem adds: %.1f us per step\n", e - p }'
