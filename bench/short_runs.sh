#!/bin/sh
# Does a short run end later with a second machine than on one? `--mode auto` (the default)
# against this machine alone, on loopback, for runs of a few steps to a few hundred: the wall
# time of the whole `tandem train` command (start, data, the wait for the worker, training and
# evaluation), the worker started as soon as the coordinator listens, one thread each.
#
#   bench/short_runs.sh                 mnist-cnn, STEPS="10 30 100 300", BATCH=64
#   MODEL=resnet18.pt STEPS="5 20 60" bench/short_runs.sh   (bench/make_resnet18.py)
set -eu
cd "$(dirname "$0")/.."
t=${TANDEM:-build/bin/tandem}
steps_list=${STEPS:-10 30 100 300}
batch=${BATCH:-64}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" 2>/dev/null; $t trust add "$c" --home "$work/w" 2>/dev/null
common="--model ${MODEL:-mnist-cnn} --data fashion-mnist --optimizer adam --lr 0.001 --threads 1 --limit-test 1000 --no-history --batch $batch"
now() { date +%s.%N; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "steps alone_s auto_with_worker_s ratio choice"
for steps in $steps_list; do
    a0=$(now)
    $t train $common --max-steps "$steps" --out "$work/alone-$steps" >/dev/null 2>&1
    a1=$(now)
    $t train $common --max-steps "$steps" --out "$work/auto-$steps" --listen 127.0.0.1:0 --workers 1 \
        --home "$work/c" >"$work/auto.out" 2>"$work/auto.err" &
    coord=$!
    port=""
    while [ -z "$port" ]; do
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/auto.err")
        kill -0 $coord 2>/dev/null || { cat "$work/auto.err"; exit 1; }
    done
    $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 1 >"$work/worker.log" 2>&1 &
    wait $coord
    b1=$(now)
    choice=$(grep -o 'training on this machine alone\|training in sync\|streaming mode will send [^(]*' \
        "$work/auto.err" | head -n 1)
    awk -v s="$steps" -v a0="$a0" -v a1="$a1" -v b1="$b1" -v c="$choice" \
        'BEGIN { printf "%d %.2f %.2f %.2f %s\n", s, a1 - a0, b1 - a1, (b1 - a1) / (a1 - a0), c }'
    wait 2>/dev/null || true
done
