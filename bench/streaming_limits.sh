#!/bin/sh
# What bounds streaming local-SGD's figures on this machine, with no link in the way (the
# remote worker on loopback, no relay):
#   ceiling   one single-machine run, then two of them at once: their joint samples/s over the
#             one run's is the most any two equal workers can reach here (no coordinator, no
#             exchange); a pair's "× alone" is to be read against it
#   accuracy  for each training-set size in SIZES and each seed in SEEDS, one machine alone and
#             the streaming pair (F=4, int4, H inner steps) at the same samples, seed and
#             hyperparameters, once for each --inner-lr-scaling in SCALINGS: test accuracy on
#             LIMIT_TEST test samples, and per size and scaling the mean gap over the seeds
# EXTRA adds options to the pair's runs (for example "--outer-momentum 0.5").
#
#   bench/streaming_limits.sh      MODEL=mnist-cnn SIZES="10000 20000 40000 60000" SEEDS=3 H=32
#                                  SCALINGS="workers none" LIMIT_TEST=10000 PARTS="ceiling accuracy"
set -eu
cd "$(dirname "$0")/.."
model=${MODEL:-mnist-cnn}; sizes=${SIZES:-"10000 20000 40000 60000"}; h=${H:-32}
parts=${PARTS:-"ceiling accuracy"}; extra=${EXTRA:-}; batch=64
seeds=${SEEDS:-3}; scalings=${SCALINGS:-"workers none"}; limit_test=${LIMIT_TEST:-10000}
cmake --build build --target tandem >/dev/null
t=$(pwd)/build/bin/tandem
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" >/dev/null 2>&1; $t trust add "$c" --home "$work/w" >/dev/null 2>&1
common="--model $model --data fashion-mnist --optimizer adam --lr 0.001 --threads 1 --batch $batch
        --epochs 1 --limit-test $limit_test"
field() { # file, key: one figure from a run's summary (its last line)
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1" "$2"
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "model=$model batch=$batch H=$h fragments=4 outer wire int4 ${extra:+extra: $extra}"

for part in $parts; do
case $part in
ceiling)
    $t train $common --seed 3 --limit-train 20000 --out "$work/one" >"$work/one.out" 2>/dev/null
    $t train $common --seed 3 --limit-train 20000 --out "$work/two-a" >"$work/two-a.out" 2>/dev/null &
    a=$!
    $t train $common --seed 3 --limit-train 20000 --out "$work/two-b" >"$work/two-b.out" 2>/dev/null &
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
    for seed in $seeds; do
        $t train $common --seed "$seed" --limit-train "$n" --out "$work/alone-$n-$seed" \
            >"$work/alone-$n-$seed.out" 2>/dev/null
        line="samples=$n seed=$seed alone=$(field "$work/alone-$n-$seed.out" test_accuracy)"
        for scaling in $scalings; do
            run=pair-$n-$seed-$scaling
            $t train $common --seed "$seed" --limit-train "$n" --mode local-sgd \
                --local-steps "$h" --fragments 4 --outer-wire int4 --inner-lr-scaling "$scaling" \
                $extra --listen 127.0.0.1:0 --workers 1 --home "$work/c" --out "$work/$run" \
                >"$work/$run.out" 2>"$work/$run.err" &
            coord=$!
            port=""
            while [ -z "$port" ]; do
                sleep 0.2
                port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/$run.err")
                kill -0 $coord 2>/dev/null || { cat "$work/$run.err"; exit 1; }
            done
            $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 1 \
                >"$work/worker-$run" 2>&1 &
            wait $coord
            line="$line $scaling=$(field "$work/$run.out" test_accuracy)"
            line="$line $scaling-samples/s=$(field "$work/$run.out" samples_per_s)"
        done
        echo "$line" | tee -a "$work/accuracy.txt"
    done
    done
    python3 - "$h" "$batch" "$work/accuracy.txt" <<'PY'
import collections, math, sys
h, batch = int(sys.argv[1]), int(sys.argv[2])
# Per size and scaling: the pair's accuracy minus one machine's with the same seed, in points.
gaps = collections.defaultdict(list)
for line in open(sys.argv[3]):
    f = dict(kv.split("=", 1) for kv in line.split())
    alone = float(f.pop("alone"))
    n = int(f.pop("samples")); f.pop("seed")
    for k, v in f.items():
        if not k.endswith("samples/s"):
            gaps[(n, k)].append(100 * (float(v) - alone))
for (n, k), g in sorted(gaps.items()):
    mean = sum(g) / len(g)
    se = math.sqrt(sum((x - mean) ** 2 for x in g) / (len(g) - 1) / len(g)) if len(g) > 1 else float("nan")
    # A round is H inner steps shared between the workers (H * batch samples), and each
    # fragment is exchanged once a round.
    print("samples=%d inner-lr-scaling=%s: pair minus alone %+.2f points (standard error %.2f, "
          "%d seeds) rounds_per_fragment=%.1f" % (n, k, mean, se, len(g), n / float(h * batch)))
PY
    ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
done
