#!/bin/sh
# What a Hugging Face folder costs in memory on this machine's CPU, for LoRA on its bf16 base:
# SHAPES (llama-0.5b: a 1.0 GB folder, llama-1.5b: 2.7 GB; bench/make_hf_folder.py) opened as a
# run opens them (bench_hf_load: resident memory and its peak after opening and after a forward
# pass that reads every weight, and the seconds each took), then a whole one-step run through
# each `tandem` binary named in BINS (its wall time and peak resident memory, /usr/bin/time):
# loading, a step of CONTEXT tokens, the evaluation, the checkpoint and the export.
#
#   bench/hf_memory.sh      SHAPES="llama-0.5b llama-1.5b" CONTEXT=16 WORK=/tmp/tandem-hf-memory
#                           BINS="build/bin/tandem OTHER/bin/tandem" (an older build, to compare)
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-hf-memory}
context=${CONTEXT:-16}
bins=${BINS:-build/bin/tandem}
cmake --build build --target bench_hf_load tandem >/dev/null
mkdir -p "$work"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB"
for shape in ${SHAPES:-llama-0.5b llama-1.5b}; do
    dir=$work/$shape
    if [ ! -f "$dir/model.safetensors" ]; then
        ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$dir" --dtype bf16 \
            --tokens "$work/$shape.tokens" $((context * 200 + 1)) >/dev/null
    fi
    # Resident memory counts the file's pages a process has mapped and read, as well as what it
    # allocates: a mapped base read in place shows as its file's size.
    echo "$shape load: $(build/bin/bench_hf_load "$dir" --lora r=8)"
    for bin in $bins; do
        out=$work/run
        rm -rf "$out"
        /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" train --model "hf:$dir" \
            --data "tokens:$work/$shape.tokens,context=$context,dtype=uint32" --lora r=8 --batch 1 \
            --max-steps 1 --limit-test 1 --threads "$(nproc)" --no-history --out "$out" \
            >/dev/null 2>"$work/run.log" || { echo "$shape $bin: the run failed: $(tail -1 "$work/run.log")"; continue; }
        read -r wall kb <"$work/time.txt"
        echo "$shape run ($bin): $wall s, peak resident $((kb / 1024)) MiB"
    done
done
