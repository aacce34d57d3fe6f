#!/bin/sh
# Heterogeneous (and equal) efficiency of a two-worker run on one machine, as the DDP anchor
# measures it: the joint run's samples/s divided by the sum of each worker's samples/s alone.
# mnist-cnn on Fashion-MNIST, one LibTorch thread per worker. The coordinator's own worker is
# the fast one; the second worker is a separate process over TLS on loopback, capped with
# ../shared/tools/slowcpu at SLOW percent of a core (100: equal workers).
#
#   bench/hetero.sh                  SLOW=30 STEPS=150 BATCH=128 WIRE=fp32
#   SLOW=100 bench/hetero.sh         equal workers
#   TANDEM=/path/to/tandem bench/hetero.sh   another build (bench/versus.sh)
#   MODEL=resnet18.pt SLOW=100 STEPS=15 bench/hetero.sh   another model (bench/make_resnet18.py)
#   CPU_SPLIT=1 bench/hetero.sh      also where the joint run's CPU went, by process and thread
#   FAST_COST=FIXED,PER_SAMPLE SLOW_COST=…  a step of the fast (the coordinator's own) or the
#                                    slow worker costs that many more ms, fixed and a sample
#                                    (TANDEM_FAULT_STEP_COST): a fixed-cost "GPU" beside a
#                                    per-sample "CPU" on this machine, e.g. MODEL=mlp SLOW=100
#                                    FAST_COST=15,0.01 SLOW_COST=20,0.5
#   LINK=MBIT,DELAY_MS bench/hetero.sh   the second worker's connection through
#                                    bench/linkrelay.py at that rate and one-way delay
#   MODE=local-sgd JOINT_ARGS="--fragments 4 --outer-wire int4" bench/hetero.sh
#                                    streaming local-SGD (JOINT_ARGS: more for the joint run)
#   DATA=… ARGS="…" MODEL=hf:DIR     another dataset, and more for every run (a LoRA run:
#                                    bench/hetero_rows.sh)
#   DDP=1 MODEL=resnet18.pt bench/hetero.sh   also PyTorch DDP (Gloo) over the same TorchScript
#                                    file, the same cap and batches (bench/ddp_script.py;
#                                    loopback only, no costs on purpose)
set -eu
cd "$(dirname "$0")/.."
slow=${SLOW:-30}; steps=${STEPS:-150}; batch=${BATCH:-128}; wire=${WIRE:-fp32}; mode=${MODE:-sync}
slowcpu=${SLOWCPU:-$(cd .. && pwd)/shared/tools/slowcpu}
if [ -z "${TANDEM:-}" ]; then cmake --build build --target tandem >/dev/null; fi
t=${TANDEM:-build/bin/tandem}
work=$(mktemp -d)
# The background processes by PID: dash's `jobs -p` lists none in an EXIT trap.
pids=""
trap 'kill $pids $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
field() { tail -n 1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }

# Homes that trust each other, as after pairing.
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" 2>/dev/null; $t trust add "$c" --home "$work/w" 2>/dev/null

common="--model ${MODEL:-mnist-cnn} --data ${DATA:-fashion-mnist} --optimizer adam --lr 0.001 --threads 1 --limit-test 1 ${ARGS:-}"
# Each side's cost on purpose, for its runs alone and its part of the joint run.
fastenv="TANDEM_FAULT_STEP_COST=${FAST_COST:-}"; slowenv="TANDEM_FAULT_STEP_COST=${SLOW_COST:-}"
# The slow side: its cost, under slowcpu's cap.
cap() { if [ "$slow" -ge 100 ]; then env "$slowenv" "$@"; else "$slowcpu" "$slow" env "$slowenv" "$@"; fi; }
# Each alone at the joint run's batch when a side has a fixed cost (its speed depends on the
# batch then), else at half of it (64 of 128), as the DDP anchor measures it.
alonebatch=$((batch / 2))
if [ -n "${FAST_COST:-}${SLOW_COST:-}" ]; then alonebatch=$batch; fi

fast=$(env "$fastenv" $t train $common --batch "$alonebatch" --max-steps "$steps" --out "$work/fast" 2>/dev/null | field samples_per_s)
slowalone=$(cap $t train $common --batch "$alonebatch" --max-steps $((steps * slow / 100 + 5)) --out "$work/slow" 2>/dev/null | field samples_per_s)

env "$fastenv" $t train $common --batch "$batch" --max-steps "$steps" --out "$work/joint" --listen 127.0.0.1:0 --workers 1 \
    --home "$work/c" --wire "$wire" --mode "$mode" ${JOINT_ARGS:-} >"$work/joint.out" 2>"$work/joint.err" &
coord=$!
pids="$coord"
port=""
while [ -z "$port" ]; do
    sleep 0.2
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/joint.err")
    kill -0 $coord 2>/dev/null || { cat "$work/joint.err"; exit 1; }
done
if [ -n "${LINK:-}" ]; then
    python3 -u bench/linkrelay.py --to "127.0.0.1:$port" --rate-mbit "${LINK%,*}" \
        --delay-ms "${LINK#*,}" >"$work/relay.log" 2>&1 &
    pids="$pids $!"
    rport=""
    while [ -z "$rport" ]; do
        sleep 0.1
        rport=$(sed -n 's/.*relay listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/relay.log")
    done
    port=$rport
fi
cap $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 1 >"$work/worker.log" 2>&1 &
pids="$pids $!"
if [ -n "${CPU_SPLIT:-}" ]; then # where the joint run's CPU goes, by thread
    wpid=""
    while [ -z "$wpid" ]; do wpid=$(pgrep -n -f "worker --connect 127.0.0.1:$port" || true); done
    python3 bench/cpu_split.py coordinator=$coord worker=$wpid >"$work/cpu" &
fi
wait $coord
joint=$(field samples_per_s <"$work/joint.out")
bytes=$(field wire_bytes_per_step <"$work/joint.out")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "model=${MODEL:-mnist-cnn} slow_cap=${slow}% steps=$steps joint_batch=$batch wire=$wire mode=$mode ${JOINT_ARGS:+joint_args=\"$JOINT_ARGS\" }fast_cost=${FAST_COST:-none} slow_cost=${SLOW_COST:-none} alone_batch=$alonebatch link=${LINK:-loopback}"
grep -h "leaving .* out" "$work/joint.err" | cut -c1-400 || true
echo "fast_alone=$fast slow_alone=$slowalone joint=$joint wire_bytes_per_step=$bytes"
awk -v f="$fast" -v s="$slowalone" -v j="$joint" 'BEGIN { b = f > s ? f : s;
    printf "efficiency=%.3f (joint / (fast alone + slow alone)) against_fastest=%.3f (joint / the fastest alone; never below 0.97)\n", j / (f + s), j / b }'
if [ -n "${CPU_SPLIT:-}" ]; then wait; cat "$work/cpu"; fi
if [ -n "${DDP:-}" ]; then # the same job in PyTorch DDP: each alone at 64, then both at 64 each
    py=/usr/bin/python3; ddp="bench/ddp_script.py ${MODEL:-mnist-cnn} --steps $steps --batch $((batch / 2))"
    dport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    num() { sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p'; }
    dfast=$($py $ddp 2>/dev/null | num)
    dslow=$(cap $py $ddp --steps $((steps * slow / 100 + 3)) 2>/dev/null | num)
    cap $py $ddp --world 2 --rank 1 --port "$dport" >/dev/null 2>&1 &
    drank1=$!
    dboth=$($py $ddp --world 2 --rank 0 --port "$dport" 2>/dev/null | num)
    wait $drank1
    awk -v f="$dfast" -v s="$dslow" -v j="$dboth" 'BEGIN { b = f > s ? f : s;
        printf "ddp: fast_alone=%s slow_alone=%s joint=%s efficiency=%.3f against_fastest=%.3f\n", f, s, j, j / (f + s), j / b }'
fi
tail -n 1 "$work/joint.out" | python3 -c "
import json, sys
for w in json.loads(sys.stdin.read())['workers']:
    print('worker: %(name)s samples=%(samples)d samples_per_s=%(samples_per_s).1f compute_s=%(compute_s).2f communicate_s=%(communicate_s).2f wait_s=%(wait_s).2f overlapped_bytes=%(gradient_bytes_overlapped)d' % w)"
