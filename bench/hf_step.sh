#!/bin/sh
# GPT-2 small (124 M parameters, random weights) one step at a time: Tandem's native model
# (bench_hf_step) against the same architecture in plain PyTorch (python_hf_step.py),
# alternating ROUNDS times so both share the machine's drift; then the native model's peak
# memory with activations kept, with checkpointing, and with LoRA r=8. One JSON line per run.
#
#   bench/hf_step.sh [CONTEXT BATCH]     ROUNDS=2 STEPS=2
set -eu
cd "$(dirname "$0")/.."
context=${1:-256}; batch=${2:-2}; rounds=${ROUNDS:-2}; steps=${STEPS:-2}
cmake --build build --target bench_hf_step >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
i=0
while [ $i -lt "$rounds" ]; do
    build/bin/bench_hf_step gpt2 full 768 12 "$context" "$batch" "$steps"
    /usr/bin/python3 bench/python_hf_step.py 768 12 "$context" "$batch" "$steps"
    i=$((i + 1))
done
for setting in checkpoint lora; do
    build/bin/bench_hf_step gpt2 "$setting" 768 12 "$context" "$batch" "$steps"
done
