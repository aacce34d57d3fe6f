#!/bin/sh
# Language models on one machine: `tandem train` against the plain Python PyTorch loop
# (bench/python_lm_loop.py) over the same TorchScript file, text, windows, batch, Adam and
# threads, for the built-in gpt (exported by a one-step run, so both train the same file) and
# for a GPT scripted in Python (tests/python/make_gpt.py --wide: the same shape). Tokens/s over
# the training loop; runs alternate, A B A B.
#
#   bench/lm.sh [STEPS] [THREADS...]      defaults: 40 steps, threads 2
#   REPEATS=3 CONTEXT=128 BATCH=16 bench/lm.sh
set -eu
cd "$(dirname "$0")/.."
steps=${1:-40}
[ $# -gt 0 ] && shift
threads=${*:-2}
repeats=${REPEATS:-3}
context=${CONTEXT:-128}
batch=${BATCH:-16}
py=/usr/bin/python3
cmake --build build --target tandem >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A text of about 1 MB: the licences Debian ships, repeated.
while [ "$(stat -c %s "$out/text.txt" 2>/dev/null || echo 0)" -lt 1000000 ]; do
    cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 >>"$out/text.txt"
done
build/bin/tandem train --model gpt --data "text:$out/text.txt,context=$context" --max-steps 1 \
    --limit-test 1 --out "$out/zoo" >/dev/null 2>&1
cp "$out/zoo/model.pt" "$out/gpt.pt"
$py tests/python/make_gpt.py "$out/scripted.pt" --wide

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" | head -n 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); PyTorch $($py -c 'import torch; print(torch.__version__)')"
echo "steps=$steps batch=$batch context=$context repeats=$repeats"
for model in gpt scripted; do
    for t in $threads; do
        : >"$out/engine"
        : >"$out/python"
        i=0
        while [ $i -lt "$repeats" ]; do
            build/bin/tandem train --model "$out/$model.pt" --data "text:$out/text.txt,context=$context" \
                --batch "$batch" --optimizer adam --lr 0.001 --threads "$t" --max-steps "$steps" \
                --limit-test 1 --out "$out/run" 2>/dev/null | tail -n 1 | field tokens_per_s >>"$out/engine"
            $py bench/python_lm_loop.py "$out/$model.pt" "$out/text.txt" "$context" "$steps" "$t" "$batch" |
                field tokens_per_s >>"$out/python"
            i=$((i + 1))
        done
        e=$(median <"$out/engine")
        p=$(median <"$out/python")
        echo "model=$model threads=$t tandem_tokens_per_s=$e python_tokens_per_s=$p" \
            "tandem_runs=[$(tr '\n' ' ' <"$out/engine")] python_runs=[$(tr '\n' ' ' <"$out/python")]"
        awk -v e="$e" -v p="$p" -v m="$model" -v t="$t" 'BEGIN { printf "model=%s threads=%s tandem/python = %.3f (target >= 0.95)\n", m, t, e / p }'
    done
done
