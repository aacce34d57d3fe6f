#!/bin/sh
# Training over a Wi-Fi-like link: the coordinator (with its own worker) and one remote worker
# on loopback, the worker's connection through bench/linkrelay.py at RATE Mbit/s with DELAY ms
# each way. One script run measures, at the same number of training samples and seed:
#   alone       the coordinator's machine by itself (no link)
#   sync        sync fp32, the pair
#   lsgd-fp32   local-SGD, H inner steps per round, fp32 outer wire
#   lsgd-int4   the same with the int4 outer wire (error feedback)
#   stream-int4 (in MODES only) streaming local-SGD, 4 fragments, int4: one fragment every
#               H/4 steps, overlapped with training
#   auto        (in MODES only) --mode auto: the coordinator measures the link and picks; the
#               log line that says what and why is printed
# and prints samples/s against alone, test accuracy against alone, and bytes on the wire per
# training sample against sync (a remote worker's traffic in a step or round it takes part
# in, over the samples of that step or round), and the CPU the relay itself took. SLOW=30 caps the remote worker at 30% of a core
# (../shared/tools/slowcpu, or SLOWCPU) for a heterogeneous pair.
#
#   bench/wifi.sh      RATE=100 DELAY=5 MODEL=mnist-cnn SAMPLES=20000 H=32 SLOW=100 SEED=3
#                      LIMIT_TEST=10000 (test samples) MODES=...
#                      DATA=fashion-mnist LR=0.001 EPOCHS=1 EXTRA="..." (more train options)
# A language model's run (DATA=text:…) reports perplexity and bytes per token as well.
set -eu
cd "$(dirname "$0")/.."
rate=${RATE:-100}; delay=${DELAY:-5}; model=${MODEL:-mnist-cnn}; samples=${SAMPLES:-20000}
h=${H:-32}; slow=${SLOW:-100}; batch=${BATCH:-64}; seed=${SEED:-3}; limit_test=${LIMIT_TEST:-10000}
modes=${MODES:-"sync lsgd-fp32 lsgd-int4"}
slowcpu=${SLOWCPU:-$(cd .. && pwd)/shared/tools/slowcpu}
cmake --build build --target tandem >/dev/null
t=$(pwd)/build/bin/tandem
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" >/dev/null 2>&1; $t trust add "$c" --home "$work/w" >/dev/null 2>&1
cap() { if [ "$slow" -ge 100 ]; then "$@"; else "$slowcpu" "$slow" "$@"; fi; }
data=${DATA:-fashion-mnist}; lr=${LR:-0.001}; epochs=${EPOCHS:-1}
common="--model $model --data $data --optimizer adam --lr $lr --threads 1 --batch $batch
        --epochs $epochs --limit-train $samples --limit-test $limit_test --seed $seed ${EXTRA:-}"
summary() { # name, samples a step (a round) holds: one line of figures from a run's summary
    python3 - "$work/$1.out" "$1" "$2" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
remote = [w for w in d["workers"] if w["name"] != "local"]
# Bytes per sample: what a remote worker moves in a step or round it takes part in (training
# traffic only, including its first whole weights), over the samples that step or round holds.
ppl = d.get("test_perplexity") or 0.0
tokens = d.get("tokens_per_s", 0) / d["samples_per_s"] if d.get("tokens_per_s") else 1.0
print("%s samples_per_s=%.1f test_accuracy=%.4f samples=%d wire_bytes=%d bytes_per_sample=%.1f remote_samples=%d test_perplexity=%.4f tokens_per_sample=%.1f"
      % (sys.argv[2], d["samples_per_s"], d["test_accuracy"] or 0.0, d["samples"],
         sum(w["bytes"] for w in remote), d["wire_bytes_per_step"] / float(sys.argv[3]),
         sum(w["samples"] for w in remote), ppl, tokens))
PY
}
$t train $common --out "$work/alone" >"$work/alone.out" 2>/dev/null
summary alone "$batch" | tee "$work/figures"
for m in $modes; do
    case $m in
    sync) args="--mode sync"; per=$batch ;;
    lsgd-fp32) args="--mode local-sgd --local-steps $h --outer-wire fp32"; per=$((batch * h)) ;;
    lsgd-int8) args="--mode local-sgd --local-steps $h --outer-wire int8"; per=$((batch * h)) ;;
    lsgd-int4) args="--mode local-sgd --local-steps $h --outer-wire int4"; per=$((batch * h)) ;;
    stream-int4)
        args="--mode local-sgd --local-steps $h --fragments 4 --outer-wire int4"
        per=$((batch * h / 4)) ;;
    auto) args="--mode auto --local-steps $h"; per=0 ;;
    *) echo "unknown mode $m" >&2; exit 2 ;;
    esac
    $t train $common $args --listen 127.0.0.1:0 --workers 1 --home "$work/c" --out "$work/$m" \
        >"$work/$m.out" 2>"$work/$m.err" &
    coord=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.2
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/$m.err")
        kill -0 $coord 2>/dev/null || { cat "$work/$m.err"; exit 1; }
    done
    python3 -u bench/linkrelay.py --to "127.0.0.1:$port" --rate-mbit "$rate" --delay-ms "$delay" \
        >"$work/$m.relay" 2>&1 &
    relay=$!
    relay_from=$(date +%s.%N)
    rport=""
    while [ -z "$rport" ]; do
        sleep 0.1
        rport=$(sed -n 's/.*relay listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/$m.relay")
    done
    cap $t worker --connect "127.0.0.1:$rport" --home "$work/w" --threads 1 >"$work/$m.worker" 2>&1 &
    wait $coord
    # The relay shares this machine's cores with both workers: what it took is what the pair
    # could not use.
    awk -v hz="$(getconf CLK_TCK)" -v from="$relay_from" -v to="$(date +%s.%N)" -v m="$m" \
        '{ cpu = ($14 + $15) / hz; printf "    %s: the relay used %.1f s of CPU in %.1f s (%.0f%% of a core)\n", m, cpu, to - from, 100 * cpu / (to - from) }' \
        "/proc/$relay/stat" || true
    kill $relay 2>/dev/null || true
    if [ "$m" = auto ]; then
        grep -o 'the link to .*' "$work/$m.err" | grep 'compute' | sed 's/^/    /'
        if grep -q 'streaming mode will send' "$work/$m.err"; then per=$((batch * h / 4)); else per=$batch; fi
    fi
    summary "$m" "$per" | tee -a "$work/figures"
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "link: ${rate} Mbit/s, ${delay} ms each way (bench/linkrelay.py); model=$model samples=$samples batch=$batch H=$h remote worker at ${slow}% of a core"
python3 - "$work/figures" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, *kv = line.split()
    rows[name] = {k: float(v) for k, v in (x.split("=") for x in kv)}
a = rows["alone"]
sync = rows.get("sync")
for name, r in rows.items():
    if name == "alone":
        continue
    ratio = "%.1fx fewer than sync" % (sync["bytes_per_sample"] / r["bytes_per_sample"]) if sync and r["bytes_per_sample"] else "-"
    if a["test_perplexity"] > 0:
        print("%-10s %.2fx alone's tokens/s, perplexity %.3f (alone %.3f), %.2f bytes/token (%s), remote took %.0f%%"
              % (name, r["samples_per_s"] / a["samples_per_s"], r["test_perplexity"], a["test_perplexity"],
                 r["bytes_per_sample"] / r["tokens_per_sample"], ratio, 100 * r["remote_samples"] / r["samples"]))
        continue
    print("%-10s %.2fx alone's samples/s, accuracy %+.2f points, %.1f bytes/sample (%s), remote took %.0f%%"
          % (name, r["samples_per_s"] / a["samples_per_s"], 100 * (r["test_accuracy"] - a["test_accuracy"]),
             r["bytes_per_sample"], ratio, 100 * r["remote_samples"] / r["samples"]))
PY
