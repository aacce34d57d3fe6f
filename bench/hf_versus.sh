#!/usr/bin/env bash
# `tandem train --model hf:DIR` against the plain PyTorch loop (bench/python_hf_loop.py) over the
# same Llama-shaped weights and token file, on this machine's CPU: the same threads, batch,
# context, precision and optimizer (Adam), full fine-tuning or LoRA. Each run's median step
# after its first two, as tokens/s; runs alternate, REPEATS times, and the medians are printed.
#
#   bench/hf_versus.sh [SHAPE] [CONTEXT] [BATCH] [STEPS]    (llama-60m 256 4 8)
#   LORA="r=16,targets=..." for LoRA (the base in bf16), THREADS (2), REPEATS (3)
#
# The Python loop is transformers' where it is installed and bench/hf_reference.py's (the same
# equations in torch operators) where it is not; the output names which.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${1:-llama-60m} ctx=${2:-256} batch=${3:-4} steps=${4:-8}
threads=${THREADS:-2} repeats=${REPEATS:-3}
py=${PYTHON:-/usr/bin/python3}
work=${WORK:-$(mktemp -d)}
trap '[ -z "${WORK:-}" ] && rm -rf "$work"' EXIT
dtype=fp32
[ -n "${LORA:-}" ] && dtype=bf16
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
cmake --build build --target tandem >/dev/null
[ -f "$work/$shape/model.safetensors" ] ||
    $py bench/make_hf_folder.py "$shape" "$work/$shape" --dtype "$dtype" \
        --tokens "$work/tokens.bin" $(((batch * (steps + 4) * repeats + 16) * (ctx + 1)))
targs=(--model "hf:$work/$shape" --data "tokens:$work/tokens.bin,context=$ctx,dtype=uint32"
    --batch "$batch" --max-steps $((steps + 2)) --limit-test "$batch" --optimizer adam --lr 0.0001
    --mode sync --no-history --threads "$threads" --seed 1)
pargs=("$work/$shape" "$work/tokens.bin" --context "$ctx" --batch "$batch" --steps "$steps"
    --warmup 2 --threads "$threads" --lr 0.0001)
if [ -n "${LORA:-}" ]; then
    targs+=(--lora "$LORA")
    pargs+=(--lora "$LORA")
fi
tandem_rate() {
    $py - "$1" "$batch" "$ctx" <<'EOF'
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"step_ms"' in l]
ms = [s["step_ms"] for s in steps][2:]
print(round(int(sys.argv[2]) * int(sys.argv[3]) / (statistics.median(ms) / 1000), 1))
EOF
}
t_all=() p_all=()
for r in $(seq "$repeats"); do
    rm -rf "$work/run"
    build/bin/tandem train "${targs[@]}" --out "$work/run" >/dev/null 2>"$work/tandem.log"
    t=$(tandem_rate "$work/run/metrics.jsonl")
    line=$($py bench/python_hf_loop.py "${pargs[@]}")
    p=$(echo "$line" | $py -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_s"])')
    loop=$(echo "$line" | $py -c 'import json,sys; print(json.load(sys.stdin)["loop"])')
    echo "round $r: tandem $t tokens/s, $loop $p tokens/s"
    t_all+=("$t") p_all+=("$p")
done
$py - "${t_all[*]}" "${p_all[*]}" "$shape" "$ctx" "$batch" "$threads" "${LORA:-full}" <<'EOF'
import statistics, sys
t = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
print("%s, context %s, batch %s, %s threads, %s: tandem %.1f tokens/s (%s), python %.1f (%s): %.3fx"
      % (sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], statistics.median(t),
         ", ".join("%.1f" % x for x in t), statistics.median(p), ", ".join("%.1f" % x for x in p),
         statistics.median(t) / statistics.median(p)))
EOF
