#!/bin/sh
# GPT-2 small (124 M parameters, random weights) trained through `tandem train --model hf:DIR`
# on one machine: tokens per second for every weight, with activation checkpointing, and with
# LoRA r=8, against one bare step of the same model (bench_hf_step) in the same session. Each
# run trains STEPS steps of BATCH windows of CONTEXT tokens, evaluation on 8 windows.
#
#   bench/hf_train.sh [CONTEXT BATCH]     STEPS=4
set -eu
cd "$(dirname "$0")/.."
context=${1:-256}; batch=${2:-2}; steps=${STEPS:-4}
cmake --build build --target bench_hf_step tandem >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
build/bin/bench_hf_step gpt2 save "$work/gpt2" 768 12 1024
# Random token ids below GPT-2's vocabulary, as nanoGPT's uint16 .bin.
/usr/bin/python3 -c "
import random, struct, sys
random.seed(1)
sys.stdout.buffer.write(struct.pack('<%dH' % 200000, *[random.randrange(50257) for _ in range(200000)]))" \
    > "$work/tokens.bin"
build/bin/bench_hf_step gpt2 full 768 12 "$context" "$batch" 2
for setting in "" "--checkpoint-activations" "--lora=r=8"; do
    /usr/bin/time -f '%M' build/bin/tandem train --model "hf:$work/gpt2" \
        --data "tokens:$work/tokens.bin,context=$context" --batch "$batch" \
        --max-steps "$steps" --limit-test 8 --threads 2 --no-history --out "$work/run" \
        $setting 2>"$work/err" | tail -1 >"$work/summary"
    /usr/bin/python3 -c "
import json, sys
s = json.load(open('$work/summary'))
print(json.dumps({'setting': '$setting' or 'full', 'steps': s['steps'],
                  'tokens_per_s': round(s['tokens_per_s'], 1),
                  'trainable': s['trainable_parameters'], 'frozen': s['frozen_parameters'],
                  'peak_rss_mb': round(int(open('$work/err').read().split()[-1]) / 1024, 1)}))"
    rm -rf "$work/run"
done
