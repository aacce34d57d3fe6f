#!/bin/sh
# What bounds streaming local-SGD's figures on this machine, with no link in the way (the
# remote worker on loopback, no relay):
#   ceiling   one single-machine run, then two of them at once: their joint samples/s over the
#             one run's is the most any two equal workers can reach here (no coordinator, no
#             exchange); a pair's "× alone" is to be read against it
#   accuracy  for each training-set size in SIZES, one machine alone and the streaming pair
#             (F=4, int4, H inner steps) at the same samples, seed and hyperparameters: test
#             accuracy, and the pair's rounds per fragment
# EXTRA adds options to the pair's runs (for example "--outer-momentum 0.5").
#
#   bench/streaming_limits.sh      MODEL=mnist-cnn SIZES="10000 20000 40000 60000" H=32 PARTS="ceiling accuracy"
set -eu
cd "$(dirname "$0")/.."
model=${MODEL:-mnist-cnn}; sizes=${SIZES:-"10000 20000 40000 60000"}; h=${H:-32}
parts=${PARTS:-"ceiling accuracy"}; extra=${EXTRA:-}; batch=64
cmake --build build --target tandem >/dev/null
t=$(pwd)/build/bin/tandem
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" >/dev/null 2>&1; $t trust add "$c" --home "$work/w" >/dev/null 2>&1
common="--model $model --data fashion-mnist --optimizer adam --lr 0.001 --threads 1 --batch $batch
        --epochs 1 --limit-test 2000 --seed 3"
field() { # file, key: one figure from a run's summary (its last line)
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1" "$2"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "model=$model batch=$batch H=$h fragments=4 outer wire int4 ${extra:+extra: $extra}"

for part in $parts; do
case $part in
ceiling)
    $t train $common --limit-train 20000 --out "$work/one" >"$work/one.out" 2>/dev/null
    $t train $common --limit-train 20000 --out "$work/two-a" >"$work/two-a.out" 2>/dev/null &
    a=$!
    $t train $common --limit-train 20000 --out "$work/two-b" >"$work/two-b.out" 2>/dev/null &
    b=$!
    wait $a $b
    python3 - "$(field "$work/one.out" samples_per_s)" "$(field "$work/two-a.out" samples_per_s)" \
        "$(field "$work/two-b.out" samples_per_s)" <<'PY'
import sys
one, a, b = map(float, sys.argv[1:])
print("ceiling: one run %.1f samples/s; two at once %.1f + %.1f = %.1f, %.2fx one run"
      % (one, a, b, a + b, (a + b) / one))
PY
    ;;
accuracy)
    for n in $sizes; do
        $t train $common --limit-train "$n" --out "$work/alone-$n" >"$work/alone-$n.out" 2>/dev/null
        $t train $common --limit-train "$n" --mode local-sgd --local-steps "$h" --fragments 4 \
            --outer-wire int4 $extra --listen 127.0.0.1:0 --workers 1 --home "$work/c" \
            --out "$work/pair-$n" >"$work/pair-$n.out" 2>"$work/pair-$n.err" &
        coord=$!
        port=""
        while [ -z "$port" ]; do
            sleep 0.2
            port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/pair-$n.err")
            kill -0 $coord 2>/dev/null || { cat "$work/pair-$n.err"; exit 1; }
        done
        $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 1 >"$work/worker-$n" 2>&1 &
        wait $coord
        python3 - "$n" "$h" "$batch" "$(field "$work/alone-$n.out" test_accuracy)" \
            "$(field "$work/pair-$n.out" test_accuracy)" "$(field "$work/pair-$n.out" samples_per_s)" <<'PY'
import sys
n, h, batch = map(int, sys.argv[1:4])
alone, pair, sps = map(float, sys.argv[4:])
# A round is H inner steps shared between the workers (H * batch samples), and each fragment
# is exchanged once a round.
print("samples=%d alone=%.4f pair=%.4f (%+.2f points) rounds_per_fragment=%.1f pair_samples_per_s=%.1f"
      % (n, alone, pair, 100 * (pair - alone), n / float(h * batch), sps))
PY
    done
    ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
done
