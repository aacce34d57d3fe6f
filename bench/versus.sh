#!/bin/sh
# Two builds of tandem side by side in one run, alternating A B A B so that both share the
# machine's drift: the heterogeneous and equal-worker efficiencies of bench/hetero.sh, and the
# one-machine samples/s of `tandem train` (mnist-cnn, Adam, batch 64) at 1 and 2 threads.
# For a change that must not move the figures (a refactor), A is the build before it.
#
#   bench/versus.sh OLD_TANDEM [NEW_TANDEM]     ROUNDS=3 STEPS=300 (one-machine steps)
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/versus.sh OLD_TANDEM [NEW_TANDEM]" >&2; exit 2; }
a=$(realpath "$1")
if [ $# -ge 2 ]; then b=$(realpath "$2"); else cmake --build build --target tandem >/dev/null; b=$(pwd)/build/bin/tandem; fi
rounds=${ROUNDS:-3}; steps=${STEPS:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sps() { tail -n 1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['samples_per_s'])"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "A=$a"
echo "B=$b"
echo "rounds=$rounds one_machine_steps=$steps"
i=0
while [ $i -lt "$rounds" ]; do
    for which in A B; do
        if [ $which = A ]; then bin=$a; else bin=$b; fi
        for slow in 30 100; do
            SLOW=$slow TANDEM=$bin bench/hetero.sh | sed -n 's/^efficiency=\([0-9.]*\).*/\1/p' >>"$out/$which.hetero$slow"
        done
        for t in 1 2; do
            "$bin" train --model mnist-cnn --data fashion-mnist --batch 64 --optimizer adam --lr 0.001 \
                --threads $t --max-steps "$steps" --limit-test 1 --out "$out/run" 2>/dev/null | sps >>"$out/$which.alone$t"
            rm -rf "$out/run"
        done
    done
    i=$((i + 1))
done
for m in hetero30 hetero100 alone1 alone2; do
    ma=$(median <"$out/A.$m"); mb=$(median <"$out/B.$m")
    awk -v m="$m" -v a="$ma" -v b="$mb" -v ra="$(tr '\n' ' ' <"$out/A.$m")" -v rb="$(tr '\n' ' ' <"$out/B.$m")" \
        'BEGIN { printf "%s A=%s B=%s B/A=%.3f  A_runs=[%s] B_runs=[%s]\n", m, a, b, b / a, ra, rb }'
done
echo "hetero30: efficiency with the second worker at 30% of a core; hetero100: equal workers;"
echo "alone1/alone2: one-machine samples/s at 1 and 2 threads"
