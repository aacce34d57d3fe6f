#!/bin/sh
# Engine overhead: `tandem train` (coordinator + one local worker, TorchScript model) against
# the idiomatic LibTorch C++ loop (bench/plain_loop.cpp) on the same network (mnist-cnn),
# data (Fashion-MNIST), batch (64), optimizer (Adam, lr 0.001) and thread count. Both report
# samples/s over their training loop only. Runs alternate, A B A B, to share machine drift.
#
#   bench/engine_overhead.sh [STEPS] [THREADS...]      defaults: 300 steps, threads 1 and 2
#   REPEATS=5 bench/engine_overhead.sh
set -eu
cd "$(dirname "$0")/.."
steps=${1:-300}
[ $# -gt 0 ] && shift
threads=${*:-1 2}
repeats=${REPEATS:-5}
cmake --build build --target tandem bench_plain_loop >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | tail -n 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(build/bin/tandem devices | tail -n 1)"
echo "steps=$steps batch=64 repeats=$repeats"
for t in $threads; do
    : >"$out/engine" ; : >"$out/plain"
    i=0
    while [ $i -lt "$repeats" ]; do
        build/bin/tandem train --model mnist-cnn --data fashion-mnist --batch 64 --optimizer adam \
            --lr 0.001 --threads "$t" --max-steps "$steps" --limit-test 1 --out "$out/run" 2>/dev/null |
            tail -n 1 | sed 's/,/,\n/g' | field samples_per_s >>"$out/engine"
        build/bin/bench_plain_loop "$steps" "$t" 64 | field samples_per_s >>"$out/plain"
        i=$((i + 1))
    done
    e=$(median <"$out/engine"); p=$(median <"$out/plain")
    echo "threads=$t engine_samples_per_s=$e plain_samples_per_s=$p" \
        "engine_runs=[$(tr '\n' ' ' <"$out/engine")] plain_runs=[$(tr '\n' ' ' <"$out/plain")]"
    awk -v e="$e" -v p="$p" -v t="$t" 'BEGIN { printf "threads=%s overhead=%.1f%% (engine/plain = %.3f; target overhead <= 10%%)\n", t, (1 - e / p) * 100, e / p }'
done
