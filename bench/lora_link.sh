#!/bin/sh
# LoRA across two workers over a slow link: a Llama-shaped Hugging Face folder (SHAPE, its base in
# DTYPE, fp32 by default, made by make_hf_folder.py with tokens a model can learn) fine-tuned with LoRA by the
# coordinator's machine alone, then by it and a remote worker whose connection goes through
# bench/linkrelay.py at RATE Mbit/s and DELAY ms (100 and 5 by default), in sync and in streaming
# local-SGD with the int4 outer wire. bench/wifi.sh runs the three and prints, against the
# machine alone: tokens/s, held-out perplexity after the same tokens, and bytes on the wire per
# token (times the tokens of a step: bytes per step).
#
#   bench/lora_link.sh      SHAPE=llama-60m VOCAB=1024 DTYPE=fp32 CONTEXT=128 BATCH=8 STEPS=60 H=8
#                           RANK=16 LR=0.002 RATE=100 DELAY=5
# The adapters go on all seven projections. The vocabulary is cut to VOCAB so that adapters on
# a random base can learn the tokens' pattern within the run (the embeddings and the output
# layer stay frozen): the held-out loss then says something.
# A bf16 base is slow on a CPU without native bf16 arithmetic (LibTorch 1.13 on AVX2: a step of
# llama-60m with its 32 k vocabulary took 91 s against 4.1 s a step in fp32, one thread), so
# the CPU's figures use fp32.
set -eu
cd "$(dirname "$0")/.."
shape=${SHAPE:-llama-60m}
dtype=${DTYPE:-fp32}
vocab=${VOCAB:-1024}
work=${WORK:-/tmp/tandem-lora-link}/$shape-$vocab-$dtype
context=${CONTEXT:-128}
batch=${BATCH:-8}
steps=${STEPS:-60}
mkdir -p "$work"
if [ ! -f "$work/$shape/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$work/$shape" --dtype "$dtype" \
        --vocab "$vocab" --tokens "$work/tokens.bin" $((context * (batch * steps + 256) + 1)) --patterned >/dev/null
fi
rank=${RANK:-16}
targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
echo "LoRA r=$rank (seven projections) on $shape, vocabulary $vocab ($dtype base), context $context, batch $batch, $steps steps"
MODEL="hf:$work/$shape" DATA="tokens:$work/tokens.bin,context=$context,dtype=uint32" \
    SAMPLES=$((batch * steps)) BATCH=$batch H=${H:-8} LR=${LR:-0.002} LIMIT_TEST=${LIMIT_TEST:-128} \
    MODES=${MODES:-"sync stream-int4"} EXTRA="--lora r=$rank,targets=$targets ${EXTRA:-}" exec sh bench/wifi.sh
