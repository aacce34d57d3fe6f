#!/bin/sh
# A full fine-tune on this machine alone with AdamW and with 8-bit AdamW (--optimizer adamw8bit):
# a Qwen2.5-0.5B-shaped folder (fp32; bench/make_hf_folder.py, LAYERS blocks, 6 by default:
# 225,609,856 parameters), the same seed and data. Prints each run's peak resident memory
# (/usr/bin/time), its time and its held-out loss after STEPS steps.
#
#   bench/optimizer8bit.sh     LAYERS=6 STEPS=8 CONTEXT=32 BATCH=4 THREADS=2 LR=1e-4 WORK=/tmp/tandem-8bit
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-8bit}
layers=${LAYERS:-6}; steps=${STEPS:-8}; context=${CONTEXT:-32}; batch=${BATCH:-4}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
model=$work/qwen2.5-0.5b-$layers-layers
if [ ! -f "$model/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py qwen2.5-0.5b "$model" --dtype fp32 \
        --layers "$layers" --tokens "$work/tokens.bin" 40000 --patterned >/dev/null
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB"
for opt in adamw adamw8bit; do
    rm -rf "$work/$opt"
    /usr/bin/time -f "%e %M" -o "$work/$opt.time" "$t" train --model "hf:$model" \
        --data "tokens:$work/tokens.bin,context=$context,dtype=uint32" --optimizer "$opt" \
        --lr "${LR:-1e-4}" --batch "$batch" --max-steps "$steps" --limit-test 32 --eval-batch 8 \
        --seed 1 --threads "${THREADS:-2}" --no-history --out "$work/$opt" \
        >"$work/$opt.out" 2>"$work/$opt.err" || { tail -3 "$work/$opt.err"; exit 1; }
    loss=$(tail -n 1 "$work/$opt.out" | python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["test_loss"]))')
    awk -v o="$opt" -v l="$loss" '{ printf "%-10s peak %.0f MiB, %.0f s, test loss %s\n", o, $2 / 1024, $1, l }' "$work/$opt.time"
done
