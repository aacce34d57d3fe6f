#!/bin/sh
# GGUF export of a Hugging Face folder (SHAPE of bench/make_hf_folder.py, bf16, random weights,
# with the published tokenizer files of TOKENIZER from build/npm/tokenizers) in each
# quantization: the seconds and peak resident memory of `tandem export --model hf:DIR --format
# gguf --quant Q` (/usr/bin/time -v) and the file's size. Then decoding speed, greedy, GEN tokens
# after a short prompt: llama.cpp's on the Q4_K_M and F16 files (npm's node-llama-cpp's
# library through build/npm/llama-check, which the README's test command builds; 2 threads), and `tandem generate` on the folder (the difference between GEN+1 tokens and 1 token,
# so that loading is not counted).
#
#   bench/gguf_export.sh      SHAPE=llama-1.5b TOKENIZER=llama3 GEN=32
set -eu
cd "$(dirname "$0")/.."
shape=${SHAPE:-llama-1.5b}
tokenizer=${TOKENIZER:-llama3}
gen=${GEN:-32}
work=${WORK:-/tmp/tandem-gguf-export}
bin=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
dir="$work/$shape"
if [ ! -f "$dir/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$dir" --dtype bf16 >/dev/null
fi
cp "build/npm/tokenizers/$tokenizer/tokenizer.json" "build/npm/tokenizers/$tokenizer/tokenizer_config.json" "$dir/"
echo "$shape (bf16), $(du -sh "$dir/model.safetensors" | cut -f1) on disk; $(nproc) cores"
for q in f16 bf16 q8_0 q4_k_m; do
    out="$work/$shape-$q.gguf"
    /usr/bin/time -v "$bin" export --model "hf:$dir" --format gguf --quant "$q" --out "$out" \
        2>"$work/time-$q.txt" >/dev/null
    secs=$(grep "Elapsed (wall clock)" "$work/time-$q.txt" | awk '{print $NF}')
    rss=$(grep "Maximum resident" "$work/time-$q.txt" | awk '{print int($NF/1024)}')
    echo "$q: $(stat -c %s "$out") bytes, $secs wall, peak $rss MiB"
done
for q in q4_k_m f16; do
    cat >"$work/request-$q.json" <<EOF
{"model": "$work/$shape-$q.gguf", "prompt": [1, 2, 3, 4, 5, 6], "generate": $gen, "context": 64}
EOF
    build/npm/llama-check "$work/request-$q.json" |
        python3 -c "import json,sys; a=json.load(sys.stdin); print('llama.cpp $q: %.1f tokens/s (%d tokens in %.2f s)' % (len(a['greedy'])/a['generateSeconds'], len(a['greedy']), a['generateSeconds']))"
done
t0=$(date +%s.%N)
"$bin" generate --model "hf:$dir" --prompt "What colour is a plum?" --tokens 1 --temperature 0 >/dev/null 2>&1
t1=$(date +%s.%N)
"$bin" generate --model "hf:$dir" --prompt "What colour is a plum?" --tokens $((gen + 1)) --temperature 0 >/dev/null 2>&1
t2=$(date +%s.%N)
python3 -c "a,b,c=$t0,$t1,$t2; print('tandem generate (bf16 folder): %.1f tokens/s (%d tokens in %.2f s beyond the first)' % ($gen/((c-b)-(b-a)), $gen, (c-b)-(b-a)))"
