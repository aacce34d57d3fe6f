#!/bin/sh
# bench/hetero.sh's mixes beyond mnist-cnn, for bench/README.md's table: torchvision's
# ResNet-18 shape (bench/make_resnet18.py: 11.2 M parameters, Fashion-MNIST input) with PyTorch
# DDP's figure for the same job beside it (DDP=1), and a Llama-shaped LoRA (make_hf_folder.py
# llama-60m with a vocabulary of 1,024, adapters r=16 on the seven projections, context 128),
# which DDP cannot run here (no peft for Debian's Python). Each with the second worker at 30 %
# of a core and at 100 % (equal), ROUNDS rounds alternated.
#
#   bench/hetero_rows.sh         ROUNDS=3 RESNET_STEPS=15 LORA_STEPS=12 WORK=/tmp/tandem-hetero-rows
set -eu
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
work=${WORK:-/tmp/tandem-hetero-rows}
mkdir -p "$work"
cmake --build build --target tandem >/dev/null
[ -f "$work/resnet18.pt" ] || /usr/bin/python3 bench/make_resnet18.py "$work/resnet18.pt" 2>/dev/null
lsteps=${LORA_STEPS:-12}
if [ ! -f "$work/llama-60m/model.safetensors" ]; then
    /usr/bin/python3 bench/make_hf_folder.py llama-60m "$work/llama-60m" --vocab 1024 \
        --tokens "$work/tokens.bin" $((128 * (16 * lsteps + 256) + 1)) --patterned >/dev/null
fi
lora="--lora r=16,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
i=0
while [ $i -lt "$rounds" ]; do
    for slow in 30 100; do
        echo "== resnet18, second worker at $slow %"
        DDP=1 MODEL="$work/resnet18.pt" SLOW=$slow STEPS=${RESNET_STEPS:-15} TANDEM=build/bin/tandem \
            sh bench/hetero.sh
        echo "== llama-60m LoRA, second worker at $slow %"
        MODEL="hf:$work/llama-60m" DATA="tokens:$work/tokens.bin,context=128,dtype=uint32" \
            ARGS="$lora" BATCH=16 SLOW=$slow STEPS="$lsteps" TANDEM=build/bin/tandem sh bench/hetero.sh
    done
    i=$((i + 1))
done
