#!/bin/sh
# Per-step fixed cost: `tandem train` on one machine against the plain Python PyTorch loop
# (bench/python_loop.py: torch.jit.load, torch.optim.Adam) over the same deep, thin TorchScript
# file (bench/make_deepthin.py: 26 linear layers of width 64, 52 parameter tensors), the same
# data (Fashion-MNIST), batch (64), learning rate and thread count. Steps cost little
# arithmetic, so what each loop adds per step decides the figure. Runs alternate, A B A B.
#
#   bench/deep_thin.sh [STEPS] [THREADS...]      defaults: 300 steps, threads 1 and 2
#   REPEATS=5 bench/deep_thin.sh
set -eu
cd "$(dirname "$0")/.."
steps=${1:-300}
[ $# -gt 0 ] && shift
threads=${*:-1 2}
repeats=${REPEATS:-5}
py=/usr/bin/python3
cmake --build build --target tandem >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$py bench/make_deepthin.py "$out/deepthin.pt"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | head -n 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); PyTorch $($py -c 'import torch; print(torch.__version__)')"
echo "steps=$steps batch=64 repeats=$repeats"
for t in $threads; do
    : >"$out/engine"
    : >"$out/python"
    i=0
    while [ $i -lt "$repeats" ]; do
        build/bin/tandem train --model "$out/deepthin.pt" --data fashion-mnist --batch 64 \
            --optimizer adam --lr 0.001 --threads "$t" --max-steps "$steps" --limit-test 1 \
            --out "$out/run" 2>/dev/null | tail -n 1 | field samples_per_s >>"$out/engine"
        $py bench/python_loop.py "$out/deepthin.pt" "$steps" "$t" 64 | field samples_per_s >>"$out/python"
        i=$((i + 1))
    done
    e=$(median <"$out/engine")
    p=$(median <"$out/python")
    echo "threads=$t tandem_samples_per_s=$e python_samples_per_s=$p" \
        "tandem_runs=[$(tr '\n' ' ' <"$out/engine")] python_runs=[$(tr '\n' ' ' <"$out/python")]"
    awk -v e="$e" -v p="$p" -v t="$t" 'BEGIN { printf "threads=%s tandem/python = %.3f (target >= 1.0)\n", t, e / p }'
done
