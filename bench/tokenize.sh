#!/bin/sh
# Tokenisation throughput on a text of SIZE_MB megabytes (mixed English, German, French,
# Chinese, Hindi, Arabic and code), through byte-level BPE (GPT-2's kind) and SentencePiece-
# style BPE with byte fallback (Mistral's kind), both trained by tests/python/make_tokenizers.py
# with MERGES merges: Tandem's first read (tokenised and cached) and its second (the cache),
# against tests/python/tokref.py, the plain Python reference, on the first PY_MB megabytes
# (line by line); then the published Llama 3, Qwen3 and Gemma 3 tokenizers (128 k to 262 k
# entries) through Tandem and through Hugging Face's own library (bench/hf_tokenize.js).
#
#   bench/tokenize.sh [SIZE_MB [PY_MB]]     MERGES=400
set -eu
cd "$(dirname "$0")/.."
size=${1:-100}; pymb=${2:-1}; merges=${MERGES:-400}
cmake --build build --target bench_tokenize >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
/usr/bin/python3 tests/python/make_tokenizers.py "$work/tok" "$merges"
/usr/bin/python3 - "$work/corpus.txt" "$size" <<'PY'
import random, sys
sys.path.insert(0, "tests/python")
from make_tokenizers import CORPUS
random.seed(1)
words = CORPUS.split()
target = int(float(sys.argv[2]) * 1e6)
with open(sys.argv[1], "w", encoding="utf-8") as f:
    n = 0
    while n < target:
        line = " ".join(random.choice(words) for _ in range(random.randrange(4, 20))) + "\n"
        n += len(line.encode())
        f.write(line)
PY
head -c "$((pymb * 1000000))" "$work/corpus.txt" | iconv -c -f utf-8 -t utf-8 > "$work/head.txt" || true
for kind in gpt2 mistral; do
    rm -rf "$work/cache"
    TANDEM_TOKEN_CACHE="$work/cache" build/bin/bench_tokenize "$work/tok/$kind" "$work/corpus.txt"
    /usr/bin/python3 - "$work/tok/$kind" "$work/head.txt" <<'PY'
import json, sys, time
sys.path.insert(0, "tests/python")
import tokref
tok = tokref.Tokenizer(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
start = time.time()
# line by line: the reference's plain BPE is quadratic in a word, and a SentencePiece-style
# file makes the whole text one word
ids = [i for line in text.splitlines(True) for i in tok.encode(line)]
s = time.time() - start
mb = len(text.encode()) / 1e6
print(json.dumps({"reference": "tokref.py", "tokenizer": sys.argv[1].split("/")[-1],
                  "mb": round(mb, 2), "tokens": len(ids), "mb_per_s": round(mb / s, 3)}))
PY
done
# The published tokenizers the tests read (build/npm/tokenizers, from packaging/quickstart.sh
# test), 128 k to 262 k entries, through Tandem and through Hugging Face's own library.
if [ -d build/npm/tokenizers ]; then
    for kind in llama3 qwen3 gemma3; do
        rm -rf "$work/cache"
        TANDEM_TOKEN_CACHE="$work/cache" build/bin/bench_tokenize "build/npm/tokenizers/$kind" \
            "$work/corpus.txt"
        node bench/hf_tokenize.js build/npm/node_modules "build/npm/tokenizers/$kind/tokenizer.json" \
            "$work/corpus.txt"
    done
fi
