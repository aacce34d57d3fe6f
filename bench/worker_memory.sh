#!/bin/sh
# A remote worker's peak resident memory against what its memory plan counts on, in sync, local
# SGD and streaming: a Qwen2.5-0.5B-shaped folder (fp32; bench/make_hf_folder.py, LAYERS blocks,
# 6 by default: 225,609,856 parameters, all trained, Adam), a coordinator that computes nothing
# (--no-local-worker) and one worker on loopback that computes the whole batch. The plan is the
# worker's `joined` event's memory_plan: its fixed bytes and BATCH samples'. The peak is
# /usr/bin/time's.
#
#   bench/worker_memory.sh     LAYERS=6 CONTEXT=32 BATCH=4 THREADS=2 MODES="sync local-sgd streaming"
#                              OUTER_WIRE=fp32 WORK=/tmp/tandem-worker-memory
#
# OUTER_WIRE is the local modes' --outer-wire (fp32, fp16, int8 or int4; auto mode streams over
# int4).
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-worker-memory}
layers=${LAYERS:-6}; context=${CONTEXT:-32}; batch=${BATCH:-4}; threads=${THREADS:-2}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
. bench/shard_common.sh
model=$work/qwen2.5-0.5b-$layers-layers
if [ ! -f "$model/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py qwen2.5-0.5b "$model" --dtype fp32 \
        --layers "$layers" --tokens "$work/tokens.bin" 40000 --patterned >/dev/null
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB"
printf '%-10s %12s %12s %8s %16s\n' mode "plan (MiB)" "peak (MiB)" over "coordinator peak"
for mode in ${MODES:-sync local-sgd streaming}; do
    case $mode in
    sync) args="--mode sync --max-steps 4" ;;
    local-sgd) args="--mode local-sgd --local-steps 4 --max-steps 2" ;;
    streaming) args="--mode local-sgd --local-steps 8 --fragments 4 --max-steps 4" ;;
    esac
    if [ "$mode" != sync ]; then args="$args --outer-wire ${OUTER_WIRE:-fp32}"; fi
    pair_homes w
    rm -rf "$work/$mode"
    # shellcheck disable=SC2086 # the mode's arguments are words
    /usr/bin/time -f "%e %M" -o "$work/$mode.coordinator.time" "$t" train --model "hf:$model" \
        --data "tokens:$work/tokens.bin,context=$context,dtype=uint32" --batch "$batch" $args \
        --limit-test 8 --eval-batch 4 --seed 1 --threads "$threads" --no-history \
        --listen 127.0.0.1:0 --workers 1 --no-local-worker --home "$work/c" \
        --out "$work/$mode" >"$work/$mode.out" 2>"$work/$mode.err" &
    coordinator=$!
    wait_port "$coordinator" "$work/$mode.err"
    /usr/bin/time -f "%e %M" -o "$work/$mode.worker.time" "$t" worker \
        --connect "127.0.0.1:$port" --home "$work/w" --threads "$threads" \
        --events "$work/$mode.events" 2>"$work/$mode.worker.err" || true
    wait "$coordinator" || { tail -3 "$work/$mode.err"; exit 1; }
    ${PYTHON:-python3} - "$work/$mode" "$batch" "$mode" <<'EOF'
import json, sys
base, batch, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
plan = next(json.loads(l)["memory_plan"] for l in open(base + ".events")
            if json.loads(l).get("event") == "joined")
at_once = plan["samples_at_once"] or batch
planned = plan["fixed_bytes"] + plan["per_sample_bytes"] * min(batch, at_once)
peak = int(open(base + ".worker.time").read().split()[1]) * 1024
coordinator = int(open(base + ".coordinator.time").read().split()[1]) * 1024
print("%-10s %12.0f %12.0f %7.1f%% %16.0f" % (mode, planned / 2**20, peak / 2**20,
      100 * (peak / planned - 1), coordinator / 2**20))
EOF
done
