#!/bin/sh
# A LoRA run's base reaching a worker that lacks it, over a slow link: a Llama-shaped folder
# (SHAPE, bf16 by default; BASE=nf4 quantizes it at load) fine-tuned for one step by a worker on
# this machine whose connection goes through bench/linkrelay.py at RATE Mbit/s and DELAY ms (100
# and 5). Three runs, each with a fresh coordinator: the worker's cache empty; the same worker
# again (the base from its cache); and the cache emptied, with the relay killed CUT_S seconds
# into the transfer and started again on the same port a few seconds later (the worker
# reconnects and resumes). For each: seconds from the worker's start to its "ready", the bytes
# the coordinator sent it before it was ready, what the worker's log says of the base, and the
# peak resident memory of the coordinator (which trains nothing itself) and of the worker; last,
# the same run in one process, for its peak.
#
#   bench/base_once.sh      SHAPE=llama-0.5b VOCAB=32000 DTYPE=bf16 BASE=bf16 RATE=100 DELAY=5 CUT_S=20
set -eu
cd "$(dirname "$0")/.."
shape=${SHAPE:-llama-0.5b}
dtype=${DTYPE:-bf16}
vocab=${VOCAB:-32000}
base=${BASE:-bf16}
rate=${RATE:-100}
delay=${DELAY:-5}
cut=${CUT_S:-20}
work=${WORK:-/tmp/tandem-base-once}
bin=${TANDEM:-build/bin/tandem}
mkdir -p "$work"
if [ ! -f "$work/$shape/model.safetensors" ]; then
    ${PYTHON:-/usr/bin/python3} bench/make_hf_folder.py "$shape" "$work/$shape" --dtype "$dtype" \
        --vocab "$vocab" --tokens "$work/tokens.bin" 200000 >/dev/null
fi
rm -rf "$work/coord" "$work/worker" "$work/out"
id=$("$bin" identity --home "$work/coord" | head -n 1)
wid=$("$bin" identity --home "$work/worker" | head -n 1)
"$bin" trust add "$wid" --home "$work/coord" >/dev/null
"$bin" trust add "$id" --home "$work/worker" >/dev/null
echo "$shape ($dtype folder, base=$base), $(du -sh "$work/$shape/model.safetensors" | cut -f1) on disk; link $rate Mbit/s, $delay ms"

start_relay() { # PORT_TO [LISTEN_PORT]
    python3 bench/linkrelay.py --to "127.0.0.1:$1" --listen "127.0.0.1:${2:-0}" \
        --rate-mbit "$rate" --delay-ms "$delay" >"$work/relay.log" 2>&1 &
    echo $! >"$work/relay.pid"
    for _ in $(seq 100); do
        grep -q "relay listening" "$work/relay.log" 2>/dev/null && break
        sleep 0.1
    done
    sed -n 's/.*relay listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/relay.log"
}

run() { # NAME [cut]
    /usr/bin/time -f %M -o "$work/coord.rss" "$bin" train --model "hf:$work/$shape" --data "tokens:$work/tokens.bin,context=64,dtype=uint32" \
        --lora "r=8,base=$base" --batch 2 --max-steps 1 --limit-test 2 --no-local-worker --mode sync \
        --listen 127.0.0.1:0 --workers 1 --home "$work/coord" --no-history --threads 2 \
        --out "$work/out" 2>"$work/coord.log" &
    coord=$!
    port=
    for _ in $(seq 3000); do
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/coord.log")
        [ -n "$port" ] && break
        sleep 0.2
    done
    rport=$(start_relay "$port")
    t0=$(date +%s.%N)
    /usr/bin/time -f %M -o "$work/worker.rss" "$bin" worker --connect "127.0.0.1:$rport" --home "$work/worker" --threads 2 \
        2>"$work/worker.log" &
    worker=$!
    if [ "${2:-}" = cut ]; then
        sleep "$cut"
        kill "$(cat "$work/relay.pid")"
        sleep 3
        start_relay "$port" "$rport" >/dev/null
    fi
    until grep -q "ready on" "$work/worker.log" 2>/dev/null; do
        kill -0 "$worker" 2>/dev/null || break
        sleep 0.2
    done
    t1=$(date +%s.%N)
    wait "$coord" || true
    wait "$worker" || true
    kill "$(cat "$work/relay.pid")" 2>/dev/null || true
    sent=$(sed -n 's/.*was sent \([0-9]*\) bytes before it was ready.*/\1/p' "$work/coord.log" | tail -n 1)
    printf '%-28s %6.1f s to ready, %s bytes sent before ready; peak RSS coordinator %s MiB, worker %s MiB\n' \
        "$1" "$(echo "$t1 - $t0" | bc)" "$sent" "$(($(tail -n 1 "$work/coord.rss") / 1024))" \
        "$(($(tail -n 1 "$work/worker.rss") / 1024))"
    grep -E "base model|resuming" "$work/worker.log" | sed 's/^/    worker: /'
}

run "first run (cache empty)"
run "second run (from the cache)"
rm -rf "$work/worker/cache/models"
run "cache empty, link cut" cut
/usr/bin/time -f %M -o "$work/solo.rss" "$bin" train --model "hf:$work/$shape" \
    --data "tokens:$work/tokens.bin,context=64,dtype=uint32" --lora "r=8,base=$base" --batch 2 \
    --max-steps 1 --limit-test 2 --home "$work/coord" --no-history --threads 2 \
    --out "$work/out" 2>/dev/null
echo "the same run in one process: peak RSS $(($(tail -n 1 "$work/solo.rss") / 1024)) MiB"
