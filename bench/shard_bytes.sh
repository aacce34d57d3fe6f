#!/bin/sh
# Each machine's bytes a step in a sharded sync run (--shard) of MACHINES processes on loopback,
# against all-reduce's optimum: 2 x model x (N - 1)/N each way, the model in the wire's fp32.
# The coordinator computes too; every figure is the run summary's (`shards`), counted on each
# machine's links to the coordinator and to the other machines after the first step.
#
#   bench/shard_bytes.sh             MACHINES=3 MODEL=mnist-cnn STEPS=12 BATCH=96
#   MODEL=resnet18.pt bench/shard_bytes.sh   ResNet-18 (bench/make_resnet18.py)
#   ARGS=--no-local-worker bench/shard_bytes.sh   more for the coordinator's run (here: it
#                                    owns a range and computes nothing)
#   COST=0,2 bench/shard_bytes.sh    every sample costs each machine 2 ms more
#                                    (TANDEM_FAULT_STEP_COST), so that the balancer gives each
#                                    machine a share of most steps of a small model
set -eu
cd "$(dirname "$0")/.."
machines=${MACHINES:-3}; steps=${STEPS:-12}; batch=${BATCH:-96}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
export TANDEM_FAULT_STEP_COST="${COST:-}"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# Homes that trust each other, as after pairing.
c=$($t identity --home "$work/c" 2>/dev/null)
i=1
while [ $i -lt "$machines" ]; do
    w=$($t identity --home "$work/w$i" 2>/dev/null)
    $t trust add "$w" --home "$work/c" 2>/dev/null
    $t trust add "$c" --home "$work/w$i" 2>/dev/null
    i=$((i + 1))
done

$t train --model "${MODEL:-mnist-cnn}" --data "${DATA:-fashion-mnist}" --optimizer adam --lr 0.001 \
    --threads 1 --limit-test 1 --batch "$batch" --max-steps "$steps" --mode sync --shard \
    --listen 127.0.0.1:0 --workers $((machines - 1)) --home "$work/c" --out "$work/run" ${ARGS:-} \
    >"$work/run.out" 2>"$work/run.err" &
coord=$!
port=""
while [ -z "$port" ]; do
    sleep 0.2
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/run.err")
    kill -0 $coord 2>/dev/null || { cat "$work/run.err"; exit 1; }
done
i=1
while [ $i -lt "$machines" ]; do
    $t worker --connect "127.0.0.1:$port" --home "$work/w$i" --threads 1 >"$work/w$i.log" 2>&1 &
    i=$((i + 1))
done
wait $coord || { cat "$work/run.err"; exit 1; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
tail -n 1 "$work/run.out" | python3 "$(dirname "$0")/shard_bytes.py"
