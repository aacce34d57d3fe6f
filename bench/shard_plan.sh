#!/bin/sh
# The memory plan of a sharded full fine-tune across two machines of given memory, on this one:
# a Qwen2.5-1.5B-shaped folder (1.54 B parameters, bf16 as published; bench/make_hf_folder.py),
# Adam, a coordinator under TANDEM_MEMORY_LIMIT=COORDINATOR_LIMIT and one worker under
# WORKER_LIMIT, on loopback. HOLDS says which of the two only holds a range and computes nothing
# (the other computes every step). Prints what the plan gave each machine, or why it refused
# the run and what would fit; a run the plan accepts is stopped once its first step begins,
# since two such machines' memory need not fit on this one.
#
#   bench/shard_plan.sh    SHAPE=qwen2.5-1.5b COORDINATOR_LIMIT=16G WORKER_LIMIT=12G HOLDS=worker
#                          WIRE=fp32 WORK=/tmp/tandem-shard-plan
#   HOLDS=coordinator bench/shard_plan.sh    the worker computes, the coordinator only holds
#   OPTIMIZER=sgd bench/shard_plan.sh        another optimizer than Adam
#   TRAIN_ARGS=--checkpoint-activations bench/shard_plan.sh    more of tandem train's options
#   STEP=1 bench/shard_plan.sh    a run the plan accepts takes its one step (and its held-out
#                                 loss and export) on this machine: both processes' peak resident
#                                 memory (/usr/bin/time) against their limits
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-shard-plan}
shape=${SHAPE:-qwen2.5-1.5b}; holds=${HOLDS:-worker}; wire=${WIRE:-fp32}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
model=$work/$shape
if [ ! -f "$model/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$model" \
        --tokens "$work/tokens.bin" 40000 --patterned >/dev/null
fi
rm -rf "$work/c" "$work/w" "$work/run"
. bench/shard_common.sh
pair_homes w
step=${STEP:-0}
# timer NAME: with STEP=1, the words that start a command under /usr/bin/time (its seconds and
# peak in $work/NAME.time)
timer() { if [ "$step" = 1 ]; then echo "/usr/bin/time -f %e,%M -o $work/$1.time"; fi; }
# tandem's own PID, where /usr/bin/time started it.
tandem_pid() { if [ "$step" = 1 ]; then sleep 0.2; pgrep -P "$1" || echo "$1"; else echo "$1"; fi; }
pids=""
trap 'kill $pids 2>/dev/null || true' EXIT
coordargs=""; workerargs=""
if [ "$holds" = coordinator ]; then coordargs="--no-local-worker"; else workerargs="--hold-only"; fi
# shellcheck disable=SC2086
TANDEM_MEMORY_LIMIT=${COORDINATOR_LIMIT:-16G} $(timer coordinator) $t train --model "hf:$model" \
    --data "tokens:$work/tokens.bin,context=32,dtype=uint32" --optimizer "${OPTIMIZER:-adam}" --lr 1e-4 \
    --batch 2 --max-steps 1 --limit-test 8 --threads 2 --mode sync --shard --wire "$wire" \
    $coordargs ${TRAIN_ARGS:-} --listen 127.0.0.1:0 --workers 1 --home "$work/c" --out "$work/run" --no-history \
    >"$work/coordinator.out" 2>"$work/coordinator.err" &
coord=$!
pids="$coord $(tandem_pid $coord)"
wait_port $coord "$work/coordinator.err"
# shellcheck disable=SC2086
TANDEM_MEMORY_LIMIT=${WORKER_LIMIT:-12G} $(timer worker) $t worker --connect "127.0.0.1:$port" \
    --home "$work/w" --threads 2 $workerargs >"$work/worker.out" 2>"$work/worker.err" &
worker=$!
worker_tandem=$(tandem_pid $worker)
pids="$pids $worker $worker_tandem"
# The plan's verdict: the ranges once set up, or the refusal; with STEP=1, the run's end.
while kill -0 $coord 2>/dev/null; do
    if [ "$step" != 1 ] && grep -q "sharded the optimizer" "$work/coordinator.err"; then
        kill $pids 2>/dev/null
        break
    fi
    sleep 0.5
done
wait $coord 2>/dev/null || true
if [ "$step" = 1 ]; then
    kill "$worker_tandem" 2>/dev/null || true
    wait $worker 2>/dev/null || true
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "shape=$shape coordinator_limit=${COORDINATOR_LIMIT:-16G} worker_limit=${WORKER_LIMIT:-12G} holds=$holds wire=$wire optimizer=${OPTIMIZER:-adam} ${TRAIN_ARGS:-}"
grep -h "sharded the optimizer\|error\|refus\|needs\|would fit\|does not fit\|has .* to train with" \
    "$work/coordinator.err" | cut -c1-1500 || tail -5 "$work/coordinator.err"
if [ "$step" = 1 ]; then
    for p in coordinator worker; do
        [ -s "$work/$p.time" ] && awk -F, -v p="$p" '/^[0-9.]+,[0-9]+$/ { printf "%s: peak %.0f MiB in %.0f s\n", p, $2 / 1024, $1 }' "$work/$p.time"
    done
    grep -h "test loss\|held-out\|step 1" "$work/coordinator.err" | tail -3 | cut -c1-300 || true
fi
