#!/bin/sh
# Does a short run end later with a second machine than on one? `--mode auto` (the default)
# against this machine alone, on loopback, for runs of a few steps to a few hundred: the wall
# time of the whole `tandem train` command (start, data, the wait for the worker, training and
# evaluation), the worker started as soon as the coordinator listens, one thread each. Runs go
# alone, auto, auto, alone for each length, so that a drift of the machine cancels out.
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
# One run alone; prints its wall time.
alone() {
    s0=$(now)
    $t train $common --max-steps "$1" --out "$work/alone-$1" >/dev/null 2>&1
    awk -v a="$s0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}
# One run with --mode auto and a worker started as soon as it listens; prints its wall time.
with_worker() {
    s0=$(now)
    $t train $common --max-steps "$1" --out "$work/auto-$1" --listen 127.0.0.1:0 --workers 1 \
        --home "$work/c" >"$work/auto.out" 2>"$work/auto.err" &
    coord=$!
    port=""
    while [ -z "$port" ]; do
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/auto.err")
        kill -0 $coord 2>/dev/null || { cat "$work/auto.err" >&2; exit 1; }
        [ -n "$port" ] || sleep 0.02 # not a busy loop: it would take a core from the run
    done
    $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 1 >"$work/worker.log" 2>&1 &
    wait $coord
    awk -v a="$s0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
    wait 2>/dev/null || true
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "steps alone_s auto_with_worker_s ratio choice (each the mean of two runs, in the order alone, auto, auto, alone)"
for steps in $steps_list; do
    a1=$(alone "$steps")
    b1=$(with_worker "$steps")
    choice=$(grep -o 'training on this machine alone\|training in sync\|streaming mode will send [^(]*' \
        "$work/auto.err" | head -n 1)
    b2=$(with_worker "$steps")
    a2=$(alone "$steps")
    awk -v s="$steps" -v a="$a1 $a2" -v b="$b1 $b2" -v c="$choice" 'BEGIN {
        split(a, x, " "); split(b, y, " "); ma = (x[1] + x[2]) / 2; mb = (y[1] + y[2]) / 2
        printf "%d %.2f %.2f %.2f %s\n", s, ma, mb, mb / ma, c }'
done
