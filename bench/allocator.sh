#!/bin/sh
# What the memory allocator costs a CPU step: the same short run of mnist-cnn (batch 1,000, one
# thread) with the C library's malloc as it is, with glibc kept from returning memory (no mmap,
# no trim, one arena), and with jemalloc never returning dirty pages; samples/s and the page
# faults of the whole command (perf). A step allocates and frees about 2 GB of activations and
# gradients, and where the allocator gives freed pages back, each step faults them in again.
#
#   bench/allocator.sh            (needs perf; the jemalloc row needs libjemalloc2)
#   BATCH=64 STEPS=40 bench/allocator.sh
set -eu
cd "$(dirname "$0")/.."
t=${TANDEM:-build/bin/tandem}
batch=${BATCH:-1000}
steps=${STEPS:-4}
jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "allocator samples_per_s page_faults train_s"
row() {
    name=$1
    shift
    rm -rf "$work/out"
    env "$@" perf stat -x, -e page-faults -o "$work/perf" $t train --data fashion-mnist \
        --model mnist-cnn --batch "$batch" --max-steps "$steps" --limit-train $((batch * steps)) \
        --limit-test 500 --threads 1 --mode sync --no-history --out "$work/out" >"$work/log" 2>&1
    rate=$(sed -n 's/^finished: .* steps, \([0-9.]*\) samples\/s.*/\1/p' "$work/log")
    faults=$(grep page-faults "$work/perf" | cut -d, -f1)
    wall=$(sed -n 's/.*"train_seconds":\([0-9.]*\).*/\1/p' "$work/log")
    echo "$name $rate $faults $wall"
}
for round in 1 2; do
    row glibc
    row glibc-kept GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736:glibc.malloc.arena_max=1
    [ -n "$jemalloc" ] && row jemalloc-kept LD_PRELOAD="$jemalloc" MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1
done
