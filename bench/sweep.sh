#!/bin/sh
# A hyperparameter sweep across two devices: this machine's CPU and a served node on loopback
# (`tandem serve`, paired), the node capped at SLOW% of a core (../shared/tools/slowcpu, or
# SLOWCPU) to stand in for a slower machine. One script run measures:
#   pair        the ASHA sweep (TRIALS trials of mnist-cnn on Fashion-MNIST: lr, batch and
#               optimizer) on both devices
#   one         the same sweep on this machine's CPU alone, one trial after another
#   defaults    the demo's defaults (adam, lr 0.001, batch 64) trained for the sweep's longest
#               rung, for the accuracy the sweep should beat
# and prints wall times, each device's busy fraction (over the whole sweep, and until a device
# first found nothing left to start), and the best trial against the defaults.
#
#   bench/sweep.sh      TRIALS=16 SLOW=50 LIMIT=12000 RUNGS="1, 3, 9" SEED=1
set -eu
cd "$(dirname "$0")/.."
trials=${TRIALS:-16}; slow=${SLOW:-50}; limit=${LIMIT:-12000}; rungs=${RUNGS:-"1, 3, 9"}
seed=${SEED:-1}
slowcpu=${SLOWCPU:-$(cd .. && pwd)/shared/tools/slowcpu}
cmake --build build --target tandem >/dev/null
t=$(pwd)/build/bin/tandem
work=$(mktemp -d)
# The node runs under slowcpu's shell, which waits for it before acting on a signal: stop the
# node itself.
trap 'pkill -f "serve --home $work/w" 2>/dev/null; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" >/dev/null 2>&1; $t trust add "$c" --home "$work/w" >/dev/null 2>&1
last=$(echo "$rungs" | tr -d ' ' | tr ',' '\n' | tail -n 1)
cat >"$work/sweep.json" <<EOF
{"model": "mnist-cnn", "data": "fashion-mnist", "threads": 1, "limit_train": $limit,
 "limit_test": 2000, "epochs": $last,
 "sweep": {"space": {"lr": {"log_uniform": [0.0001, 0.01]},
                     "batch": {"choice": [32, 64, 128]},
                     "optimizer": {"choice": ["adam", "sgd", "adamw"]}},
           "trials": $trials, "metric": "test_accuracy", "seed": $seed,
           "scheduler": {"kind": "asha", "reduction": 3, "rungs": [$rungs]}}}
EOF
dport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$slowcpu" "$slow" $t serve --home "$work/w" --listen 127.0.0.1:0 \
    --announce-to 127.255.255.255 --discovery-port "$dport" >"$work/serve.out" 2>"$work/serve.err" &
port=""
while [ -z "$port" ]; do
    sleep 0.2
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/serve.err")
done
$t sweep --config "$work/sweep.json" --out "$work/pair" --devices cpu \
    --invite "127.0.0.1:$port" --home "$work/c" >"$work/pair.out" 2>"$work/pair.err"
$t sweep --config "$work/sweep.json" --out "$work/one" --devices cpu \
    >"$work/one.out" 2>"$work/one.err"
$t train --model mnist-cnn --data fashion-mnist --threads 1 --limit-train "$limit" \
    --limit-test 2000 --epochs "$last" --out "$work/defaults" >"$work/defaults.out" 2>/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "sweep: $trials trials, asha rungs [$rungs] epochs of $limit samples, reduction 3, seed $seed; node at $slow% of a core"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
last = lambda f: json.loads(open(f).read().strip().splitlines()[-1])
pair, one, dflt = last(w + "/pair.out"), last(w + "/one.out"), last(w + "/defaults.out")
for name, s in (("pair", pair), ("one", one)):
    b = s["best"]
    print("%-5s wall %.0f s, %d trials (%d stopped early, %d failed), best trial %d %s: %.4f"
          % (name, s["wall_s"], s["trials"], s["stopped_early"], s["failed"], b["trial"],
             json.dumps(b["params"], sort_keys=True), b["test_accuracy"]))
    for d in s["devices"]:
        print("      %-18s %2d jobs, busy %.3f overall, %.3f until the tail (the last %.0f s)"
              % (d["name"], d["jobs"], d["busy"], d["busy_until_tail"], s["tail_s"]))
print("pair against one device: %.2fx faster" % (one["wall_s"] / pair["wall_s"]))
print("defaults (adam, lr 0.001, batch 64): %.4f; best of the pair's sweep %+.2f points"
      % (dflt["test_accuracy"], 100 * (pair["best"]["test_accuracy"] - dflt["test_accuracy"])))
PY
