#!/bin/sh
# Per-step cost on real networks: one-machine `tandem train` against the plain Python PyTorch
# loop (bench/python_loop.py: torch.jit.load, torch.optim.Adam, random batches) over the same
# TorchScript file of a torchvision network (bench/make_torchvision.py), Fashion-MNIST, batch
# 64, Adam at 0.001, the same threads. Runs alternate, A B A B; medians of REPEATS.
#
#   bench/spread.sh [STEPS] [THREADS]     defaults: 60 steps, 2 threads
#   NETS="squeezenet1_1 resnet18" REPEATS=5 bench/spread.sh
set -eu
cd "$(dirname "$0")/.."
steps=${1:-60}
threads=${2:-2}
repeats=${REPEATS:-3}
nets=${NETS:-squeezenet1_1 mobilenet_v2 shufflenet_v2_x0_5 resnet18}
py=/usr/bin/python3
cmake --build build --target tandem >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | head -n 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); PyTorch $($py -c 'import torch; print(torch.__version__)'), torchvision $($py -c 'import torchvision; print(torchvision.__version__)')"
echo "steps=$steps threads=$threads batch=64 repeats=$repeats"
for net in $nets; do
    $py bench/make_torchvision.py "$net" "$out/$net.pt" >"$out/$net.txt"
    : >"$out/engine"
    : >"$out/python"
    i=0
    while [ $i -lt "$repeats" ]; do
        build/bin/tandem train --model "$out/$net.pt" --data fashion-mnist --batch 64 \
            --optimizer adam --lr 0.001 --threads "$threads" --max-steps "$steps" --limit-test 1 \
            --no-history --out "$out/run" 2>/dev/null | tail -n 1 | field samples_per_s >>"$out/engine"
        $py bench/python_loop.py "$out/$net.pt" "$steps" "$threads" 64 | field samples_per_s >>"$out/python"
        i=$((i + 1))
    done
    e=$(median <"$out/engine")
    p=$(median <"$out/python")
    awk -v n="$(cat "$out/$net.txt")" -v e="$e" -v p="$p" \
        -v er="$(tr '\n' ' ' <"$out/engine")" -v pr="$(tr '\n' ' ' <"$out/python")" \
        'BEGIN { printf "%s | tandem %.1f [%s] | python %.1f [%s] | ratio %.3f\n", n, e, er, p, pr, e / p }'
done
