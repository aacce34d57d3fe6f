#!/bin/sh
# A machine that joins a sharded full fine-tune while it trains: the coordinator (which computes
# nothing) and one computing worker start the run; a second worker, which only holds a range,
# joins once the run has taken JOIN_AT steps, and the run is set up again across the three.
# Prints the coordinator's peak resident memory (/usr/bin/time), the seconds the setup took
# ("the sharded run took in … in T s") and the held-out loss.
#
#   WORK=/tmp/sj SHAPE=llama-60m TANDEM=build/bin/tandem sh bench/shard_join.sh
#
# SHAPE: one of bench/make_hf_folder.py's (fp32 on disk); STEPS, JOIN_AT, CONTEXT, BATCH, THREADS.
set -eu
cd "$(dirname "$0")/.."
work=${WORK:-/tmp/tandem-shard-join}
shape=${SHAPE:-llama-60m}
steps=${STEPS:-10}; join_at=${JOIN_AT:-3}; context=${CONTEXT:-32}; batch=${BATCH:-4}
threads=${THREADS:-1}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
model=$work/$shape
if [ ! -f "$model/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$model" --dtype fp32 \
        --tokens "$work/tokens.bin" 40000 --patterned >/dev/null
fi
. bench/shard_common.sh
rm -rf "$work/run"
pair_homes w1 w2
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
/usr/bin/time -f "%e %M" -o "$work/coordinator.time" "$t" train --model "hf:$model" \
    --data "tokens:$work/tokens.bin,context=$context,dtype=uint32" --optimizer adam --lr 1e-4 \
    --batch "$batch" --max-steps "$steps" --limit-test 32 --eval-batch 8 --seed 1 --no-history \
    --threads "$threads" --mode sync --shard --no-local-worker --listen 127.0.0.1:0 --workers 1 \
    --home "$work/c" --out "$work/run" >"$work/coordinator.out" 2>"$work/coordinator.err" &
coord=$!
wait_port $coord "$work/coordinator.err"
"$t" worker --connect "127.0.0.1:$port" --home "$work/w1" --threads "$threads" \
    >"$work/w1.out" 2>"$work/w1.err" &
while [ "$(wc -l <"$work/run/metrics.jsonl" 2>/dev/null || echo 0)" -lt "$join_at" ]; do
    sleep 0.5
    kill -0 $coord 2>/dev/null || { tail -3 "$work/coordinator.err"; exit 1; }
done
"$t" worker --connect "127.0.0.1:$port" --home "$work/w2" --threads 1 --hold-only \
    >"$work/w2.out" 2>"$work/w2.err" &
wait $coord || { tail -5 "$work/coordinator.err"; exit 1; }
wait
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB; $t"
grep -h "the sharded run took in\|could not take in" "$work/coordinator.err" || echo "no worker was taken in"
awk '{ printf "coordinator: peak %.0f MiB, %.0f s\n", $2 / 1024, $1 }' "$work/coordinator.time"
tail -n 1 "$work/coordinator.out" |
    python3 -c 'import json, sys; print("test loss", repr(json.load(sys.stdin)["test_loss"]))'
