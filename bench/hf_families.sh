#!/bin/sh
# Each family Tandem builds against Llama at the same width, depth and vocabulary: one training
# step (forward and backward) of the natively built model, every weight and LoRA r=8, as
# tokens/s (bench_hf_step, each setting in a process of its own). The families' own features
# (bench/hf_step.cpp's familyShape) are what differ.
#
#   bench/hf_families.sh [HIDDEN LAYERS CONTEXT BATCH]     (512 8 256 4)   STEPS=3
set -eu
cd "$(dirname "$0")/.."
hidden=${1:-512}; layers=${2:-8}; context=${3:-256}; batch=${4:-4}; steps=${STEPS:-3}
cmake --build build --target bench_hf_step >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for setting in full lora; do
    for family in llama qwen3 gemma3 phi3 smollm3 olmo2 granite; do
        build/bin/bench_hf_step "$family" "$setting" "$hidden" "$layers" "$context" "$batch" "$steps"
    done
done
