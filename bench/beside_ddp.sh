#!/bin/sh
# Tandem's two-worker efficiency beside PyTorch DDP's (Gloo), measured the same way in the same
# run, alternating: bench/hetero.sh and ../shared/anchors/ddp_hetero.sh, for a second worker
# capped at 30% of a core (unequal) and at 100% (equal). Medians of ROUNDS.
#
#   bench/beside_ddp.sh            ROUNDS=3 ANCHORS=../shared/anchors
set -eu
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
anchors=${ANCHORS:-$(cd .. && pwd)/shared/anchors}
cmake --build build --target tandem >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
i=0
while [ $i -lt "$rounds" ]; do
    for slow in 30 100; do
        SLOW=$slow TANDEM=build/bin/tandem bench/hetero.sh | sed -n 's/^efficiency=\([0-9.]*\).*/\1/p' >>"$out/tandem$slow"
        SLOW=$slow sh "$anchors/ddp_hetero.sh" | sed -n 's/^ddp_heterogeneous_efficiency=\([0-9.]*\).*/\1/p' >>"$out/ddp$slow"
    done
    i=$((i + 1))
done
for slow in 30 100; do
    t=$(median <"$out/tandem$slow"); d=$(median <"$out/ddp$slow")
    echo "second worker at ${slow}% of a core: tandem=$t ddp=$d tandem_runs=[$(tr '\n' ' ' <"$out/tandem$slow")] ddp_runs=[$(tr '\n' ' ' <"$out/ddp$slow")]"
done
