#!/bin/sh
# Tandem's memory plan against the measured peak on this machine's CPU, for full fine-tuning in
# fp32 of three Llama shapes (bench/make_hf_folder.py): a 128 k vocabulary (llama-60m with
# --vocab 128256), deep and narrow (llama-deep: 32 layers of width 128) and wide and shallow
# (llama-wide: 2 layers of width 1024), each with and without --checkpoint-activations.
# The plan is the run's own figure (its summary's memory_plan: fixed bytes plus bytes per
# sample times the batch); the measured peak is the run's peak resident memory (/usr/bin/time)
# less that of the same run of a tiny model of the same kind (llama-tiny: 0.1 M weights), which
# is the process, its libraries, LibTorch's own allocations and the tokens.
#
# With BASE=nf4, int8 or bf16 the runs are LoRA (r=16) on bf16 folders, the base held as BASE.
#
#   bench/hf_plan.sh      CONTEXT=256 BATCH=4 WORK=/tmp/tandem-hf-plan BASE=
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-hf-plan}
context=${CONTEXT:-256}
batch=${BATCH:-4}
dtype=fp32
lora=""
if [ -n "${BASE:-}" ]; then
    dtype=bf16
    lora="--lora=r=16,base=$BASE"
    work="$work/bf16"
fi
t=build/bin/tandem
cmake --build build --target tandem >/dev/null
mkdir -p "$work"
peak() { # command...: its peak resident memory in MiB
    /usr/bin/time -f "%M" -o "$work/time.txt" "$@" >"$work/out.json" 2>"$work/run.log" ||
        { echo "failed: $(tail -1 "$work/run.log")" >&2; return 1; }
    echo $(($(cat "$work/time.txt") / 1024))
}
one() { # shape, then more options: a two-step full fine-tune's peak resident memory
    local_shape=$1
    shift
    # shellcheck disable=SC2086 # one option or none
    rm -rf "$work/run"
    peak $t train --model "hf:$work/$local_shape" \
        --data "tokens:$work/$local_shape.tokens,context=$context,dtype=uint32" --batch "$batch" \
        --max-steps 2 --limit-test "$batch" --threads 2 --no-history --out "$work/run" $lora "$@"
}
for shape in llama-tiny llama-60m llama-deep llama-wide; do
    vocab=1024
    [ $shape = llama-60m ] && vocab=128256
    [ $shape = llama-tiny ] && vocab=512
    if [ ! -f "$work/$shape/model.safetensors" ]; then
        ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$work/$shape" --dtype $dtype \
            --vocab "$vocab" --tokens "$work/$shape.tokens" $((context * batch * 20 + 1)) >/dev/null
    fi
done
base=$(one llama-tiny)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); llama-tiny's run peaks at $base MiB"
for shape in llama-60m llama-deep llama-wide; do
    for ckpt in "" --checkpoint-activations; do
        # shellcheck disable=SC2086 # one option or none
        measured=$(one $shape $ckpt) || continue
        ${PYTHON:-/usr/bin/python3} - "$work/out.json" "$shape" "${ckpt:-activations kept}" "$measured" "$base" "$batch" "${BASE:-fp32 full}" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
p = s["memory_plan"]
batch = int(sys.argv[6])
plan = (p["fixed_bytes"] + p["per_sample_bytes"] * min(batch, p.get("samples_at_once") or batch)) / 2**20
measured = int(sys.argv[4]) - int(sys.argv[5])
print("%-10s %-26s %s plan %6.0f MiB (fixed %5.0f + %4.0f a sample), measured %6d MiB: plan/measured %.2f"
      % (sys.argv[2], sys.argv[3], sys.argv[7], plan, p["fixed_bytes"] / 2**20, p["per_sample_bytes"] / 2**20,
         measured, plan / measured))
PY
    done
done
