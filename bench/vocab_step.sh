#!/bin/sh
# Full fine-tuning on the CPU of a model whose vocabulary is most of it: a Qwen3 folder with
# hidden 256 and Qwen's 151,936 tokens (tests/python/make_hf.py ... wide: 41 M weights, 39 M of
# them the tied embedding), batch 8 of 48-token windows of prose, two threads. Samples/s, wall
# time, the kernel's share (page faults of freshly mapped memory show there) and the peak
# resident memory, for this build and another, alternated.
#
#   TANDEM_BASE=/path/to/other/tandem ROUNDS=2 bench/vocab_step.sh
set -eu
cd "$(dirname "$0")/.."
t=${TANDEM:-$(pwd)/build/bin/tandem}
base=${TANDEM_BASE:-}
rounds=${ROUNDS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 tests/python/make_hf.py --family qwen3 "$work/qwen3" 151936 1 wide >/dev/null
cp build/npm/tokenizers/qwen3/tokenizer.json build/npm/tokenizers/qwen3/tokenizer_config.json \
    "$work/qwen3/"
python3 -c "
import random
random.seed(3)
words = 'a plum is purple the lemon yellow what colour sky blue grass green and of to in'.split()
print('\n'.join(' '.join(random.choice(words) for _ in range(40)) for _ in range(200)))
" >"$work/prose.txt"
one() { # LABEL BINARY
    rm -rf "$work/run"
    /usr/bin/time -f "%e %S %M" -o "$work/time" "$2" train --model=hf:"$work/qwen3" \
        --data=text:"$work/prose.txt",context=48 --lr=0.003 --batch=8 --max-steps=12 \
        --threads=2 --no-history --home "$work/home" --out="$work/run" >"$work/out" 2>/dev/null
    sps=$(tail -n 1 "$work/out" | python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['samples_per_s'])")
    read -r wall sys rss <"$work/time"
    echo "$1: samples_per_s=$sps wall_s=$wall kernel_s=$sys peak_rss_mb=$((rss / 1024))"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for r in $(seq "$rounds"); do
    one this "$t"
    if [ -n "$base" ]; then one base "$base"; fi
done
