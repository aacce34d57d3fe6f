#!/bin/sh
# A full fine-tune that no one of three processes could hold alone: a Qwen2.5-0.5B-shaped folder
# (494 M parameters, fp32; bench/make_hf_folder.py) trained on this machine alone, then sharded
# (--shard) across three processes on loopback, each under TANDEM_MEMORY_LIMIT=LIMIT: the
# coordinator holds a range and computes nothing (--no-local-worker), one worker computes every
# step, and one only holds a range (--hold-only). Prints each process's peak resident memory
# (/usr/bin/time) against its limit and the two runs' held-out losses. COORDINATOR_LIMIT,
# COMPUTING_LIMIT and HOLDING_LIMIT give one process another limit than LIMIT.
#
#   bench/shard_memory.sh       LIMIT=8G STEPS=4 CONTEXT=32 BATCH=4 THREADS=2 WORK=/tmp/tandem-shard-memory
#   ONE_LOSS=12.12… bench/shard_memory.sh   skip the one-machine run, compare with this loss
#   LAYERS=6 bench/shard_memory.sh   the same widths with 6 blocks (225,609,856 parameters)
#   WIRE=bf16 bench/shard_memory.sh  the sharded run's wire (fp32 by default: then its loss is
#                                    the one-machine run's to fp32 rounding)
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-shard-memory}
limit=${LIMIT:-8G}; steps=${STEPS:-4}; context=${CONTEXT:-32}; batch=${BATCH:-4}
threads=${THREADS:-2}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
model=$work/qwen2.5-0.5b${LAYERS:+-$LAYERS-layers}
if [ ! -f "$model/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py qwen2.5-0.5b "$model" --dtype fp32 \
        ${LAYERS:+--layers "$LAYERS"} --tokens "$work/tokens.bin" 40000 --patterned >/dev/null
fi
limit_of() { # NAME: the memory limit of that process (none for the one-machine run)
    case $1 in
        coordinator) echo "${COORDINATOR_LIMIT:-$limit}" ;;
        computing) echo "${COMPUTING_LIMIT:-$limit}" ;;
        holding) echo "${HOLDING_LIMIT:-$limit}" ;;
    esac
}
run() { # NAME ARGS...: a tandem process under its limit and /usr/bin/time, its peak in $work/NAME.time
    name=$1; shift
    set -- "$t" "$@"
    if [ -n "$(limit_of "$name")" ]; then set -- env TANDEM_MEMORY_LIMIT="$(limit_of "$name")" "$@"; fi
    /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
args="--model hf:$model --data tokens:$work/tokens.bin,context=$context,dtype=uint32
    --optimizer adam --lr 1e-4 --batch $batch --max-steps $steps --limit-test 32 --eval-batch 8
    --seed 1 --no-history"
loss() { tail -n 1 "$1" | python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["test_loss"]))'; }
peak() { awk '{ printf "%.0f MiB in %.0f s", $2 / 1024, $1 }' "$1"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB"
if [ -z "${ONE_LOSS:-}" ]; then
    rm -rf "$work/one-run"
    # shellcheck disable=SC2086
    run one train $args --threads "$threads" --out "$work/one-run" || { tail -3 "$work/one.err"; exit 1; }
    ONE_LOSS=$(loss "$work/one.out")
    echo "one machine, no limit: peak $(peak "$work/one.time"), test loss $ONE_LOSS"
fi

rm -rf "$work/c" "$work/w1" "$work/w2" "$work/shard-run"
. bench/shard_common.sh
pair_homes w1 w2
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
# shellcheck disable=SC2086
run coordinator train $args --threads "$threads" --mode sync --shard --wire "${WIRE:-fp32}" --no-local-worker \
    --listen 127.0.0.1:0 --workers 2 --home "$work/c" --out "$work/shard-run" &
coord=$!
wait_port $coord "$work/coordinator.err"
run computing worker --connect "127.0.0.1:$port" --home "$work/w1" --threads "$threads" &
run holding worker --connect "127.0.0.1:$port" --home "$work/w2" --threads 1 --hold-only &
wait $coord || { tail -5 "$work/coordinator.err"; exit 1; }
wait
grep -h "sharded the optimizer\|held shard" "$work/coordinator.err" || true
for p in coordinator computing holding; do
    echo "$p under TANDEM_MEMORY_LIMIT=$(limit_of "$p"): peak $(peak "$work/$p.time")"
done
shard_loss=$(loss "$work/coordinator.out")
python3 - "$ONE_LOSS" "$shard_loss" <<'EOF'
import sys
one, shard = float(sys.argv[1]), float(sys.argv[2])
print("test loss: one machine %r, sharded %r, relative difference %.2e" % (one, shard, abs(shard - one) / abs(one)))
EOF
