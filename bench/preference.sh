#!/bin/sh
# Preference tuning's speed against supervised fine-tuning's on the same answers, and each run's
# memory plan against its measured peak, on this machine's CPU. The model is
# make_hf_folder.py llama-60m (a vocabulary of 1,024, bf16) with the tests' trained Llama 2-style
# tokenizer (tests/python/make_tokenizers.py); LoRA r=16 on the seven projections; STEPS steps.
#
# - SFT trains on each pair's prompt and chosen answer as text (jsonl:), windows of CONTEXT, at
#   a batch of 2 x BATCH windows;
# - DPO and ORPO train on the pairs (prefs:, CONTEXT positions each) at a batch of BATCH pairs:
#   the same sequences a step. A pair's tokens/s counts both of its sequences; DPO computes the
#   reference (the base with the adapters off) in a second forward pass without a graph.
#
# The plan is the run's own figure (its summary's memory_plan: fixed bytes plus bytes per
# sample times the batch); the measured figure is the run's peak resident memory (/usr/bin/time)
# less that of the same SFT run of llama-tiny at a batch of one (the process, its libraries,
# LibTorch's own allocations and the data), as bench/hf_plan.sh measures it. The DPO run also
# writes a GGUF file (--gguf q8_0), as the user guide's worked example does.
#
#   bench/preference.sh     CONTEXT=128 BATCH=8 STEPS=8 WORK=/tmp/tandem-preference
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-preference}
context=${CONTEXT:-128}
batch=${BATCH:-8}
steps=${STEPS:-8}
py=${PYTHON:-/usr/bin/python3}
t=build/bin/tandem
cmake --build build --target tandem >/dev/null
mkdir -p "$work"
model="$work/llama-60m"
[ -d "$work/tokenizers/llama2" ] || $py tests/python/make_tokenizers.py "$work/tokenizers" >/dev/null
for shape in llama-60m llama-tiny; do
    if [ ! -f "$work/$shape/model.safetensors" ]; then
        $py bench/make_hf_folder.py $shape "$work/$shape" --vocab 1024 >/dev/null
        cp "$work/tokenizers/llama2/tokenizer.json" "$work/tokenizers/llama2/tokenizer_config.json" \
            "$work/$shape/"
    fi
done
# Pairs whose answers are a few dozen words, so that a pair fills most of its CONTEXT positions;
# the same prompts with their chosen answers as text for SFT.
$py - "$work" "$context" <<'PY'
import json, random, sys
work, context = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
words = ("apple banana lime plum orange grape cherry lemon red yellow green purple ripe sweet "
         "sour small large fresh dry the a is and with of").split()
n = max(4, context // 10)  # words an answer, a little under half the positions
with open(work + "/pairs.jsonl", "w") as p, open(work + "/sft.jsonl", "w") as s:
    for i in range(400):
        prompt = "Describe fruit %d." % i
        chosen = " " + " ".join(rng.choice(words) for _ in range(n)) + "."
        rejected = " " + " ".join(rng.choice(words) for _ in range(n)) + "."
        p.write(json.dumps({"prompt": prompt, "chosen": chosen, "rejected": rejected}) + "\n")
        s.write(json.dumps({"text": prompt + chosen}) + "\n")
PY
lora="--lora=r=16,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
run() { # name, model, then options: one run's summary line and peak
    name=$1
    m=$2
    shift 2
    rm -rf "$work/$name"
    /usr/bin/time -f "%M" -o "$work/$name.peak" $t train --model "hf:$m" "$lora" \
        --threads 2 --max-steps "$steps" --limit-test 8 --no-history --out "$work/$name" "$@" \
        >"$work/$name.json" 2>"$work/$name.log" || { tail -3 "$work/$name.log"; exit 1; }
}
run base "$work/llama-tiny" --data "jsonl:$work/sft.jsonl,context=$context" --batch 1
run sft "$model" --data "jsonl:$work/sft.jsonl,context=$context" --batch $((2 * batch))
run dpo "$model" --data "prefs:$work/pairs.jsonl,context=$context" --batch "$batch" --loss dpo \
    --gguf q8_0
run orpo "$model" --data "prefs:$work/pairs.jsonl,context=$context" --batch "$batch" --loss orpo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "llama-60m (vocabulary 1,024), LoRA r=16, context $context, $steps steps, $((2 * batch)) sequences a step"
$py - "$work" "$batch" <<'PY'
import json, sys
work, batch = sys.argv[1], int(sys.argv[2])
peak = lambda name: int(open("%s/%s.peak" % (work, name)).read().split()[-1]) / 1024
base = peak("base")
print("llama-tiny's run at a batch of one peaks at %.1f MiB" % base)
sft = None
for name, samples in (("sft", 2 * batch), ("dpo", batch), ("orpo", batch)):
    s = json.loads(open("%s/%s.json" % (work, name)).read().strip().splitlines()[-1])
    plan = s.get("memory_plan", {})
    planned = (plan.get("fixed_bytes", 0) + plan.get("per_sample_bytes", 0) * samples) / 2**20
    tps = s["tokens_per_s"]
    sft = sft or tps
    print("%-4s tokens/s %7.1f (%.2f of SFT's)  samples/s %5.2f  plan %6.1f MiB (%.1f fixed, %.2f a "
          "sample x %d)  measured %6.1f MiB (peak %.1f)"
          % (name, tps, tps / sft, s["samples_per_s"], planned, plan.get("fixed_bytes", 0) / 2**20,
             plan.get("per_sample_bytes", 0) / 2**20, samples, peak(name) - base, peak(name)))
PY
ls -l "$work/dpo/"*.gguf 2>/dev/null | awk '{print "dpo gguf:", $5, "bytes,", $NF}'
