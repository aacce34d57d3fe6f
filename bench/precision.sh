#!/bin/sh
# Compute precision on the CPU: the demo (mnist-cnn on Fashion-MNIST, one epoch, batch 64,
# Adam lr 0.001, seed 0) trained in fp32 and with bf16 autocast, on this machine's CPU.
# Prints each run's test accuracy and samples/s, and their differences. Runs alternate.
#
#   bench/precision.sh                 one run each
#   REPEATS=3 bench/precision.sh
set -eu
cd "$(dirname "$0")/.."
repeats=${REPEATS:-1}
threads=${THREADS:-0}
cmake --build build --target tandem >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
field() { sed 's/,/,\n/g' | sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | tail -n 1; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "bf16 instructions: $(grep -o -m1 'avx512_bf16\|amx_bf16' /proc/cpuinfo || echo none), $(build/bin/tandem devices 2>/dev/null | tail -n 1)"
i=0
while [ $i -lt "$repeats" ]; do
    for p in fp32 bf16; do
        build/bin/tandem train --model mnist-cnn --data fashion-mnist --epochs 1 --batch 64 \
            --optimizer adam --lr 0.001 --seed 0 --threads "$threads" --precision "$p" \
            --out "$out/$p" 2>/dev/null | tail -n 1 >"$out/summary"
        acc=$(field test_accuracy <"$out/summary")
        sps=$(field samples_per_s <"$out/summary")
        echo "precision=$p test_accuracy=$acc samples_per_s=$sps"
        echo "$acc $sps" >"$out/$p.last"
    done
    read -r a32 s32 <"$out/fp32.last"
    read -r a16 s16 <"$out/bf16.last"
    awk -v a="$a32" -v b="$a16" -v s="$s32" -v t="$s16" 'BEGIN {
        printf "bf16 - fp32: accuracy %+.2f points (target: within 1), speed x%.2f\n", (b - a) * 100, t / s }'
    i=$((i + 1))
done
