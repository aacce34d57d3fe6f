#!/bin/sh
# A slow link: the coordinator (with its own worker) and a remote worker in two network
# namespaces joined by a veth pair shaped with tc netem (RATE, default 100mbit, and DELAY,
# default 5ms, each way). Measures samples/s of sync against local-sgd on mnist-cnn, and
# the fast worker alone for reference. Needs root (ip netns, tc). Traffic stays inside the
# two namespaces this script makes (10.231.0.1 and 10.231.0.2) and removes on exit.
#
#   bench/slowlink.sh            RATE=100mbit DELAY=5ms STEPS=24 H=8 BATCH=64
set -eu
cd "$(dirname "$0")/.."
rate=${RATE:-100mbit}; delay=${DELAY:-5ms}; steps=${STEPS:-24}; h=${H:-8}; batch=${BATCH:-64}
[ "$(id -u)" -eq 0 ] || { echo "slowlink.sh needs root for ip netns and tc" >&2; exit 77; }
cmake --build build --target tandem >/dev/null
t=$(pwd)/build/bin/tandem
work=$(mktemp -d)
cleanup() {
    ip netns pids tdm-c 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns pids tdm-w 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del tdm-c 2>/dev/null || true
    ip netns del tdm-w 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cleanup
work=$(mktemp -d)
ip netns add tdm-c; ip netns add tdm-w
ip link add tdm-vc type veth peer name tdm-vw
ip link set tdm-vc netns tdm-c; ip link set tdm-vw netns tdm-w
ip -n tdm-c addr add 10.231.0.1/24 dev tdm-vc; ip -n tdm-w addr add 10.231.0.2/24 dev tdm-vw
for ns in tdm-c tdm-w; do ip -n $ns link set lo up; done
ip -n tdm-c link set tdm-vc up; ip -n tdm-w link set tdm-vw up
# netem gives rate and delay; kernels built without sch_netem get the rate alone from a token
# bucket (for multi-megabyte weight transfers the rate dominates: 4.8 MB take 384 ms at
# 100 Mbit/s against 5 ms of delay), and the output says so.
shaping="netem rate $rate delay $delay"
for dev in tdm-c:tdm-vc tdm-w:tdm-vw; do
    ns=${dev%%:*}; if=${dev#*:}
    if ! ip netns exec $ns tc qdisc add dev $if root netem rate "$rate" delay "$delay" 2>/dev/null; then
        ip netns exec $ns tc qdisc add dev $if root tbf rate "$rate" burst 64kb latency 400ms
        shaping="tbf rate $rate (no sch_netem in this kernel: no added delay)"
    fi
done

c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" 2>/dev/null; $t trust add "$c" --home "$work/w" 2>/dev/null
field() { tail -n 1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
common="--model mnist-cnn --data fashion-mnist --optimizer adam --lr 0.001 --threads 1 --limit-test 2000 --batch $batch"

alone=$($t train $common --max-steps "$steps" --out "$work/alone" 2>/dev/null | field samples_per_s)
run() { # mode, max steps (rounds for local-sgd)
    ip netns exec tdm-c "$t" train $common --mode "$1" --local-steps "$h" --max-steps "$2" \
        --listen 10.231.0.1:0 --workers 1 --home "$work/c" --out "$work/$1" >"$work/$1.out" 2>"$work/$1.err" &
    coord=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.2
        port=$(sed -n 's/.*listening on 10.231.0.1:\([0-9]*\).*/\1/p' "$work/$1.err")
        kill -0 $coord 2>/dev/null || { cat "$work/$1.err"; exit 1; }
    done
    ip netns exec tdm-w "$t" worker --connect "10.231.0.1:$port" --home "$work/w" --threads 1 >"$work/$1.worker" 2>&1 &
    wait $coord
    python3 - "$work/$1.out" "$1" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("%s: samples_per_s=%.1f steps=%d samples=%d wire_bytes_per_step=%.0f" % (sys.argv[2], d["samples_per_s"], d["steps"], d["samples"], d["wire_bytes_per_step"]))
for w in d["workers"]:
    print("  %(name)s samples=%(samples)d compute_s=%(compute_s).2f communicate_s=%(communicate_s).2f wait_s=%(wait_s).2f" % w)
PY
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); link: $shaping, each way"
echo "fast worker alone: samples_per_s=$alone"
run sync "$steps"
run local-sgd $((steps / h))
