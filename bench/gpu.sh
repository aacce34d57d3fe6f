#!/usr/bin/env bash
# Tandem on a lent CUDA machine that has a compiler, CMake, ninja and Python with PyTorch (whose
# package holds LibTorch), transformers and PEFT, but no Qt and no protobuf: those come from the
# GPU kit (packaging/gpu-kit.sh, carried as build/gpu-kit, with the published tokenizer files
# the tests use packed beside it). One command, within 10 minutes; every figure goes under
# $OUT (default build/gpu-out) with the device named, each phase's as one line of summary.txt.
#
#   bench/gpu.sh                          every phase below, in this order
#   PHASES="build parity" bench/gpu.sh    only those; a later call on the same machine finds
#                                         the build in build-gpu/ and goes on from there
#
# Phases (a phase that fails says why, and the next one runs):
#   build     configure against the machine's LibTorch with TANDEM_REQUIRE_CUDA=ON, and build
#             tandem and bench_hf_parity (the tests phase builds its own tests)
#   devices   tandem devices (--json too)
#   parity    bench/hf_parity.py: for each family Tandem builds, a small random model in its
#             published form with its published tokenizer, against transformers and PEFT on the
#             same GPU: logits in fp32 and bf16, LoRA gradients, the PEFT and merged exports
#             loaded back, token ids and chat templates against AutoTokenizer
#   workers   two workers on one GPU (a coordinator with its own worker and a second process),
#             in sync and in streaming local-SGD, against the same run in one process
#   speed     mnist-cnn and a scripted resnet18 through `tandem train` against a PyTorch eager
#             loop (bench/python_gpu_loop.py), fp32 and bf16 autocast
#   hetero    coordinator + a CPU worker + the CUDA worker: the balancer's shares and the
#             efficiency against each device alone
#   lmspeed   LoRA (r=16, attention and MLP, bf16 base, activation checkpointing off and on) on
#             Llama- and Qwen3-shaped models of about 0.5 B and 1.5 B parameters at context 1024,
#             and full fine-tuning of the 0.5 B ones (bf16 autocast): `tandem train` tokens/s
#             against a transformers + PEFT loop (bench/python_hf_loop.py) with the same batch,
#             precision and optimizer, each process's peak GPU memory (nvidia-smi), and Tandem's
#             memory plan for it
#   nf4       an 8B-shaped model's (Llama-3.1-8B's) LoRA steps on a 4-bit base: peak GPU memory
#             against a 12 GB card, and tokens/s
#   tests     the suite's tests that train, on the GPU (TESTS: test_devices test_precision
#             test_hf test_hfmodel test_objectives test_optimizers test_replica test_zoo
#             test_parts test_lm test_hftrain test_hfchat): the GUI, network-namespace, package
#             and long fault tests are left out
# Each phase is cut short when the run nears BUDGET_S (560) seconds, and says so.
#
# On a CPU machine, to check this script before a lent GPU's minutes go to it (the suite runs
# this as gpu_dry_run, on its own build):
#   DEVICE=cpu REQUIRE_CUDA=OFF TORCH_PREFIX=/usr PYTHON=/usr/bin/python3 SHORTER=20 \
#     PRECISIONS=fp32 KIT=none BUILD=build bench/gpu.sh
# runs every phase with tiny shapes and few steps; where transformers and PEFT are missing,
# bench/hf_reference.py stands in for them (each line says which reference it used), and the
# tokenizers' reference is Hugging Face's tokenizers through node (build/npm).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-out}
mkdir -p "$out"
phases=${PHASES:-build devices parity nf4 workers speed hetero lmspeed tests}
budget=${BUDGET_S:-560}
kit=${KIT:-build/gpu-kit}
device=${DEVICE:-cuda:0}
shorter=${SHORTER:-1}
build=${BUILD:-build-gpu}
bin=$build/bin/tandem
cpu=false
[ "$device" = cpu ] && cpu=true
start=$(date +%s)
log() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/summary.txt"; }
left() { echo $((budget - ($(date +%s) - start))); }
failures=0
failed() {
    log "$*"
    failures=$((failures + 1))
}

if [ "$kit" != none ]; then
    if [ ! -f /tmp/tandem-kit/env.sh ]; then
        sh "$kit/unpack.sh" /tmp/tandem-kit >"$out/kit.txt" 2>&1 || { cat "$out/kit.txt"; exit 1; }
    fi
    # shellcheck disable=SC1091
    . /tmp/tandem-kit/env.sh
fi
py=${PYTHON:-python3}
torch_prefix=${TORCH_PREFIX:-$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')}
# The published tokenizer files: packed in the kit, or where the README's test command put them.
toks=${TOKENIZERS:-}
if [ -z "$toks" ] && [ -f "$kit/tokenizers.tar.xz" ]; then
    toks=/tmp/tandem-tokenizers
    [ -d "$toks" ] || { mkdir -p "$toks" && xz -dc "$kit/tokenizers.tar.xz" | tar -C "$toks" -xf -; }
fi
[ -z "$toks" ] && [ -d build/npm/tokenizers ] && toks=build/npm/tokenizers
node_modules=${NODE_MODULES:-}
[ -z "$node_modules" ] && [ -d build/npm/node_modules ] && node_modules=build/npm/node_modules
{
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    $py -c '
import torch
try:
    import transformers
    t = "transformers " + transformers.__version__
except ImportError:
    t = "no transformers"
try:
    import peft
    p = "peft " + peft.__version__
except ImportError:
    p = "no peft"
print("python torch", torch.__version__, "cuda", torch.version.cuda, ";", t, ";", p)'
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    [ "$kit" != none ] &&
        echo "kit: lends $(ls /tmp/tandem-kit/lent | grep '\.so\.' | tr '\n' ' '); the machine's own: $(ls /tmp/tandem-kit/own | tr '\n' ' ')"
    echo "tokenizers: ${toks:-none}"
} | tee -a "$out/summary.txt"

# The first JSON object on the last line of a command's stdout, one field of it (a number to
# one decimal place).
field() {
    tail -n 1 | $py -c "
import json, sys
try:
    v = json.loads(sys.stdin.read()).get('$1')
except ValueError:
    v = None
print(round(v, 1) if isinstance(v, float) else v)"
}
# The same, at full precision.
exact() {
    tail -n 1 | $py -c "
import json, sys
try:
    print(json.loads(sys.stdin.read()).get('$1'))
except ValueError:
    print(None)"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "?" }'; }
steps_of() { echo $((($1 + shorter - 1) / shorter)); }

# `tandem train`'s steady rate as tokens/s for BATCH windows of CONTEXT (tandem_steady_rate,
# below): METRICS SUMMARY BATCH CONTEXT.
tandem_tokens_per_s() {
    local rate
    rate=$(tandem_steady_rate "$1" "$2" "$3")
    awk -v r="$rate" -v c="$4" 'BEGIN { if (r + 0 > 0) printf "%.1f", r * c; else print "?" }'
}

# `tandem train`'s steady rate in samples/s: BATCH samples a step over the steps after the first
# tenth (at least 2), timed from the wall time the run had reached at the end of warm-up to the
# summary's training time. Steps on a GPU are timed as queued; the waits for the device come
# when figures are read, so only a span of steps, not one step, says how long they took.
tandem_steady_rate() {
    $py - "$1" "$2" "$3" <<'EOF'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"elapsed_s"' in l]
steps = [s for s in steps if s.get("type", "step") == "step"]
total = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1]).get("train_seconds", 0)
warm = max(2, len(steps) // 10)
if len(steps) <= warm or total <= steps[warm - 1]["elapsed_s"]:
    print("?")
else:
    print(round((len(steps) - warm) * int(sys.argv[3]) / (total - steps[warm - 1]["elapsed_s"]), 1))
EOF
}

# The traffic ledger's per-step line for a short run of the same job (`tandem train --ledger`,
# which slows every operator, so never on a timed run).
ledger_line() {
    "$@" --ledger 2>&1 >/dev/null | grep -o 'traffic per step, steps [0-9-]*: .*' | tail -n 1
}

# Where a step's time goes, for a short run of the same job (`tandem train --split`: the local
# pass, the wire, waiting for other workers and the optimizer, each timed to the device's end of
# it, which costs the device a little idle time, so never on a timed run).
split_line() {
    "$@" --split 2>&1 >/dev/null | grep -o 'time per step, steps [0-9-]*: .*' | tail -n 1
}

# Where a `tandem train` step's time goes, from its metrics.jsonl (medians over the steps after
# the first two): the whole step, the local worker's forward and backward pass in it, and the
# rest (the optimizer's step and whatever the coordinator does around the pass).
tandem_step_split() {
    $py - "$1" <<'EOF'
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"step_ms"' in l]
steps = [s for s in steps if s.get("type", "step") == "step"][2:]
if not steps:
    print("step ? ms")
    sys.exit()
step = statistics.median(s["step_ms"] for s in steps)
comp = statistics.median(sum(w.get("compute_ms", 0) for w in s.get("workers", [])) for s in steps)
print("step %.1f ms: pass %.1f ms, the rest %.1f ms" % (step, comp, step - comp))
EOF
}

# Each process's largest GPU memory while a command runs (nvidia-smi every 200 ms), in MiB, into
# FILE as "PID MIB" lines; `gpu_watch_stop` ends it. Nothing on a machine without nvidia-smi.
gpu_watch() {
    watch_file=$1
    : >"$watch_file"
    if command -v nvidia-smi >/dev/null && ! $cpu; then
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -lms 200 \
            >"$watch_file" 2>/dev/null &
        watch_pid=$!
    else
        watch_pid=""
    fi
}
gpu_watch_stop() {
    if [ -z "$watch_pid" ]; then
        echo "n/a"
        return
    fi
    kill "$watch_pid" 2>/dev/null
    wait "$watch_pid" 2>/dev/null
    awk -F', *' '{ if ($2 + 0 > m) m = $2 + 0 } END { print m + 0 }' "$watch_file"
}

# A coordinator in the background with one remote worker joined: COORD_LOG gets its stderr,
# its stdout the summary; waits for it and prints the summary's last line.
with_worker() {
    local summary=$1 coord_log=$2 worker_log=$3
    shift 3
    local work port coord
    work=$(mktemp -d)
    local c w
    c=$($bin identity --home "$work/c" 2>/dev/null)
    w=$($bin identity --home "$work/w" 2>/dev/null)
    $bin trust add "$w" --home "$work/c" >/dev/null 2>&1
    $bin trust add "$c" --home "$work/w" >/dev/null 2>&1
    "$bin" train "$@" --listen 127.0.0.1:0 --workers 1 --home "$work/c" >"$summary" 2>"$coord_log" &
    coord=$!
    port=""
    while [ -z "$port" ] && kill -0 $coord 2>/dev/null; do
        sleep 0.2
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$coord_log")
    done
    [ -n "$port" ] && $bin worker --connect "127.0.0.1:$port" --home "$work/w" --device "$device" \
        ${WORKER_THREADS:+--threads $WORKER_THREADS} >"$worker_log" 2>&1 &
    wait $coord
    local status=$?
    rm -rf "$work"
    return $status
}

phase_build() {
    if [ -f "$build/CMakeCache.txt" ] && $cpu; then
        log "build: using the build already in $build"
    else
        log "build: configuring against LibTorch in $torch_prefix"
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_FAILPOINTS=ON \
            -DTANDEM_REQUIRE_CUDA="${REQUIRE_CUDA:-ON}" \
            -DCMAKE_PREFIX_PATH="${TANDEM_KIT:+$TANDEM_KIT/usr;}$torch_prefix" \
            >"$out/configure.log" 2>&1 || { failed "build: configure failed"; tail -30 "$out/configure.log"; exit 1; }
    fi
    if ! $cpu || [ ! -x "$bin" ] || [ ! -x "$build/bin/bench_hf_parity" ]; then
        timeout "$(left)" cmake --build "$build" -j "$(nproc)" --target tandem bench_hf_parity \
            >"$out/build.log" 2>&1 ||
            { failed "build: failed or cut short"; grep -m5 -B2 -A10 'error' "$out/build.log"; exit 1; }
    fi
    log "build: done"
    # a program and a plugin that would load two releases of one library (the kit's, the
    # machine's) are named here; the suite's TLS tests would then fail
    [ "$kit" != none ] && log "build: $("$TANDEM_KIT/one-copy.sh" "$build" 2>&1 | tr '\n' ' ')"
}

phase_devices() {
    $bin devices | tee "$out/devices.txt"
    $bin devices --json >"$out/devices.json"
    log "devices: $(grep -c . "$out/devices.txt") lines"
}

phase_parity() {
    local families=${FAMILIES:-}
    timeout "$(left)" $py bench/hf_parity.py --bin "$build/bin/bench_hf_parity" --out "$out/parity" \
        --device "$device" ${toks:+--tokenizers "$toks"} ${node_modules:+--node-modules "$node_modules"} \
        ${families:+--families "$families"} >"$out/parity.txt" 2>"$out/parity.log"
    local status=$?
    tee -a "$out/summary.txt" <"$out/parity.txt"
    [ $status -eq 0 ] || failed "parity: some checks failed (exit $status; $out/parity.log)"
}

# One shape and setting: `tandem train` and the Python loop on the same folder and tokens.
lmspeed_run() {
    local shape=$1 setting=$2 dir=$3 tokens=$4 ctx=$5 batch=$6 steps=$7
    local lora="r=16,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
    local targs=(--model "hf:$dir" --data "tokens:$tokens,context=$ctx,dtype=uint32" --batch "$batch"
        --max-steps $((steps + 2)) --limit-test "$batch" --optimizer adam --lr 0.0001 --mode sync
        --no-history --device "$device" --seed 1)
    local pargs=("$dir" "$tokens" --context "$ctx" --batch "$batch" --steps "$steps" --warmup 2
        --device "$device" --lr 0.0001)
    case $setting in
    lora) targs+=(--lora "$lora") pargs+=(--lora "$lora") ;;
    lora-ckpt) targs+=(--lora "$lora" --checkpoint-activations) pargs+=(--lora "$lora" --checkpoint) ;;
    full) targs+=(--precision bf16) pargs+=(--precision bf16) ;;
    esac
    $cpu && targs+=(--threads "$(nproc)") pargs+=(--threads "$(nproc)")
    local run=$out/lmspeed/$shape-$setting
    # The run's folder (its checkpoint and exported model: gigabytes) stays beside the data.
    local runDir=$out/../gpu-data/runs/$shape-$setting
    rm -rf "$run" "$runDir"
    mkdir -p "$run" "$runDir"
    gpu_watch "$run/tandem-gpu.txt"
    timeout "$(left)" $bin train "${targs[@]}" --out "$runDir" >"$run/tandem.json" 2>"$run/tandem.log"
    local status=$?
    cp "$runDir/metrics.jsonl" "$run/metrics.jsonl" 2>/dev/null
    rm -rf "$runDir"
    local tmem
    tmem=$(gpu_watch_stop)
    if [ $status -ne 0 ] && grep -q 'is not supported' "$run/tandem.log"; then
        log "lmspeed $shape: refused by this build: $(grep -m1 'is not supported' "$run/tandem.log")"
        return 1
    elif [ $status -eq 124 ]; then
        log "lmspeed $shape $setting: tandem train cut short by the time budget"
        return 1
    elif [ $status -ne 0 ]; then
        failed "lmspeed $shape $setting: tandem train failed (exit $status): $(tail -1 "$run/tandem.log")"
        return 0
    fi
    local t plan
    t=$(tandem_tokens_per_s "$run/metrics.jsonl" "$run/tandem.json" "$batch" "$ctx")
    plan=$($py -c "
import json
s = json.loads(open('$run/tandem.json').read().strip().splitlines()[-1])
p = s.get('memory_plan') or {}
print(round((p.get('fixed_bytes', 0) + p.get('per_sample_bytes', 0) * min($batch, p.get('samples_at_once') or $batch)) / 2**20) if p else '?')")
    gpu_watch "$run/python-gpu.txt"
    timeout "$(left)" $py bench/python_hf_loop.py "${pargs[@]}" >"$run/python.json" 2>"$run/python.log"
    status=$?
    local pmem
    pmem=$(gpu_watch_stop)
    if [ $status -eq 124 ]; then
        log "lmspeed $shape $setting: the Python loop cut short by the time budget (tandem $t tokens/s)"
        return 1
    elif [ $status -ne 0 ]; then
        failed "lmspeed $shape $setting: the Python loop failed: $(tail -1 "$run/python.log")"
        return 0
    fi
    local p what
    p=$(field tokens_per_s <"$run/python.json")
    what=$(field loop <"$run/python.json")
    log "lmspeed $shape $setting context $ctx batch $batch: tandem $t tokens/s, $what $p tokens/s" \
        "($(ratio "$t" "$p")x); peak GPU MiB tandem $tmem (plan $plan), python $pmem;" \
        "tandem's $(tandem_step_split "$run/metrics.jsonl")"
}

phase_lmspeed() {
    local shapes ctx batch steps
    if $cpu; then
        shapes=${LM_SHAPES:-llama-tiny} ctx=${LM_CONTEXT:-64} batch=${LM_BATCH:-2} steps=${LM_STEPS:-3}
    else
        shapes=${LM_SHAPES:-llama-0.5b qwen3-0.5b llama-1.5b qwen3-1.5b} ctx=${LM_CONTEXT:-1024}
        batch=${LM_BATCH:-4} steps=${LM_STEPS:-10}
    fi
    mkdir -p "$out/lmspeed"
    local data=$out/../gpu-data
    mkdir -p "$data"
    for shape in $shapes; do
        [ "$(left)" -lt 60 ] && { log "lmspeed: cut short before $shape"; break; }
        local dir=$data/$shape tokens=$data/$shape.tokens
        if [ ! -f "$dir/model.safetensors" ]; then
            $py bench/make_hf_folder.py "$shape" "$dir" --dtype bf16 --device "$device" \
                --tokens "$tokens" $(((batch * (steps + 6) + 8) * ctx + 1)) >"$out/lmspeed/$shape-make.json" 2>&1 ||
                { failed "lmspeed $shape: making the folder failed: $(tail -1 "$out/lmspeed/$shape-make.json")"; continue; }
        fi
        local settings="lora lora-ckpt"
        case $shape in *-0.5b | *-tiny) settings="$settings full" ;; esac
        for setting in $settings; do
            [ "$(left)" -lt 40 ] && { log "lmspeed: cut short at $shape $setting"; break 2; }
            lmspeed_run "$shape" "$setting" "$dir" "$tokens" "$ctx" "$batch" "$steps" || break
        done
    done
}

phase_workers() {
    local data=$out/../gpu-data dir tokens shape=${WORKERS_SHAPE:-llama-tiny}
    dir=$data/workers-$shape tokens=$data/workers-$shape.tokens
    mkdir -p "$data"
    local ctx=64 batch=16 steps
    steps=$(steps_of 200)
    [ -f "$dir/model.safetensors" ] ||
        $py bench/make_hf_folder.py "$shape" "$dir" --dtype fp32 --tokens "$tokens" 200000 --patterned >/dev/null ||
        { failed "workers: making the folder failed"; return; }
    local common=(--model "hf:$dir" --data "tokens:$tokens,context=$ctx,dtype=uint32" --batch $batch
        --max-steps "$steps" --limit-test 64 --optimizer adam --lr 0.001 --no-history --seed 3)
    $cpu && common+=(--threads 1)
    local work=$out/workers
    rm -rf "$work"
    mkdir -p "$work"
    $bin train "${common[@]}" --mode sync --device "$device" --out "$work/one" >"$work/one.json" 2>"$work/one.log" ||
        { failed "workers: the one-process run failed: $(tail -1 "$work/one.log")"; return; }
    local one
    one=$(exact test_loss <"$work/one.json")
    for mode in sync streaming; do
        [ "$(left)" -lt 40 ] && { log "workers: cut short before $mode"; break; }
        local margs=(--mode sync)
        [ $mode = streaming ] && margs=(--mode local-sgd --local-steps 8 --fragments 4 --outer-wire int4
            --outer-momentum 0.5 --inner-lr-scaling none)
        WORKER_THREADS=$($cpu && echo 1) with_worker "$work/$mode.json" "$work/$mode-coordinator.log" \
            "$work/$mode-worker.log" "${common[@]}" "${margs[@]}" --device "$device" --out "$work/$mode" ||
            { failed "workers $mode: the run failed: $(tail -1 "$work/$mode-coordinator.log")"; continue; }
        local two shares
        two=$(exact test_loss <"$work/$mode.json")
        shares=$($py -c "
import json
s = json.loads(open('$work/$mode.json').read().strip().splitlines()[-1])
print(', '.join('%s %d samples' % (w['name'], w['samples']) for w in s['workers']))")
        local diff
        diff=$($py -c "print('%.1e' % (abs(float('$two') - float('$one')) / abs(float('$one'))))" 2>/dev/null)
        log "workers $mode on $device: test loss $two with two workers ($shares) against $one in one" \
            "process (relative difference ${diff:-?})"
        # Sync combines the workers' gradients into the one-process step: it must agree.
        if [ $mode = sync ] && ! $py -c "import sys; sys.exit(0 if float('${diff:-1}') <= 1e-2 else 1)"; then
            failed "workers sync: two workers and one process disagree"
        fi
    done
}

phase_nf4() {
    local help
    help=$($bin train --help 2>&1) # whole: grep -q would cut the pipe, which pipefail counts
    if ! grep -q -- 'base=nf4' <<<"$help"; then
        log "nf4: skipped: this build has no 4-bit base (--lora …,base=nf4)"
        return
    fi
    local data=$out/../gpu-data shape=${NF4_SHAPE:-llama-8b}
    $cpu && shape=llama-tiny
    local dir=$data/$shape tokens=$data/$shape.tokens ctx=1024
    $cpu && ctx=64
    [ -f "$dir/model.safetensors" ] ||
        $py bench/make_hf_folder.py "$shape" "$dir" --dtype bf16 --device "$device" --tokens "$tokens" \
            $((ctx * 40 + 1)) >/dev/null || { failed "nf4: making the folder failed"; return; }
    gpu_watch "$out/nf4-gpu.txt"
    $bin train --model "hf:$dir" --data "tokens:$tokens,context=$ctx,dtype=uint32" --batch 1 --max-steps 3 --limit-test 1 \
        --lora r=16,base=nf4 --checkpoint-activations --device "$device" --no-history \
        --out "$out/nf4-run" >"$out/nf4.json" 2>"$out/nf4.log" ||
        { gpu_watch_stop >/dev/null; failed "nf4: the run failed: $(tail -1 "$out/nf4.log")"; return; }
    log "nf4 $shape: LoRA r=16 on an nf4 base, context $ctx, checkpointing: peak GPU $(gpu_watch_stop) MiB" \
        "(a 12 GB card holds 10240), $(tandem_tokens_per_s "$out/nf4-run/metrics.jsonl" "$out/nf4.json" 1 "$ctx") tokens/s"
}

phase_tests() {
    local tests=${TESTS:-test_devices test_precision test_hf test_hfmodel test_objectives test_optimizers test_replica test_zoo test_parts test_lm test_hftrain test_hfchat}
    $cpu && tests=${TESTS:-test_devices}
    # shellcheck disable=SC2086 # a list of targets
    timeout "$(left)" cmake --build "$build" -j "$(nproc)" --target $tests >"$out/tests-build.log" 2>&1 ||
        { failed "tests: building them failed or was cut short"; return; }
    local regex
    regex="^($(echo $tests | tr ' ' '|'))\$"
    (cd "$build" && timeout "$(left)" ctest -j 8 -R "$regex" --timeout 300 --output-on-failure) \
        >"$out/ctest.log" 2>&1
    local status=$?
    log "tests: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
    grep -E '^\s*[0-9]+ - |\*\*\*Failed|Timeout' "$out/ctest.log" | tee -a "$out/summary.txt"
    [ $status -eq 0 ] || failures=$((failures + 1))
}

phase_speed() {
    local data=$out/../gpu-data
    mkdir -p "$data"
    [ -f "$data/resnet18.pt" ] || $py bench/python_gpu_loop.py --make "$data"
    for run in "mnist-cnn mnist 400 64" "resnet18 cifar 120 128"; do
        set -- $run
        local name=$1 arrays=$data/$2.npz steps batch=$4 model=$1
        steps=$(steps_of "$3")
        [ "$name" = resnet18 ] && model=$data/resnet18.pt
        for precision in ${PRECISIONS:-fp32 bf16}; do
            [ "$(left)" -lt 30 ] && { log "speed: cut short"; return; }
            local t p job run=$data/run-$name-$precision
            job=(train --model "$model" --data "npz:$arrays" --device "$device"
                --precision "$precision" --batch "$batch" --limit-test 64
                --optimizer adam --lr 0.001 --mode sync --no-history)
            $bin "${job[@]}" --max-steps "$steps" --out "$run" \
                2>"$out/train-$name-$precision.log" >"$run.json"
            t=$(tandem_steady_rate "$run/metrics.jsonl" "$run.json" "$batch")
            p=$($py bench/python_gpu_loop.py "$arrays" "$name" "$steps" "$batch" "$precision" \
                "$device" | tee -a "$out/python.jsonl" | field samples_per_s)
            log "speed: $name $precision batch $batch: tandem $t samples/s, PyTorch eager $p samples/s" \
                "($(ratio "$t" "$p")x), both after warm-up;" \
                "$(split_line $bin "${job[@]}" --max-steps $((steps < 60 ? steps : 60)) --out "$run-split");" \
                "$(ledger_line $bin "${job[@]}" --max-steps $((steps < 30 ? steps : 30)) --out "$run-ledger")"
        done
    done
}

phase_hetero() {
    local data=$out/../gpu-data
    local long short
    long=$(steps_of 200) short=$(steps_of 20)
    [ -f "$data/mnist.npz" ] || $py bench/python_gpu_loop.py --make "$data"
    # Epochs enough for the steps asked (32 steps an epoch): a one-epoch run of about a second
    # is mostly its start, and the joint run's start is where a worker enters.
    local common=(--model mnist-cnn --data "npz:$data/mnist.npz" --optimizer adam --lr 0.001
        --limit-test 64 --no-history --mode sync --batch 256 --epochs 10)
    local fast slow joint
    fast=$($bin train "${common[@]}" --device "$device" --max-steps "$long" --out "$out/hetero-fast" 2>/dev/null | field samples_per_s)
    slow=$($bin train "${common[@]}" --device cpu --threads 4 --max-steps "$short" --out "$out/hetero-cpu" 2>/dev/null | field samples_per_s)
    local saved=$device
    device=cpu
    WORKER_THREADS=4 with_worker "$out/hetero-summary.json" "$out/hetero-coordinator.log" \
        "$out/hetero-worker.log" "${common[@]}" --device "$saved" --max-steps "$long" --out "$out/hetero-joint"
    device=$saved
    joint=$(field samples_per_s <"$out/hetero-summary.json")
    log "hetero: $device alone $fast, cpu alone $slow, together $joint samples/s;" \
        "efficiency $(awk -v j="$joint" -v a="$fast" -v b="$slow" 'BEGIN { if (a + b > 0) printf "%.3f", j / (a + b); else print "?" }')"
    $py -c "
import json
for w in json.loads(open('$out/hetero-summary.json').read().strip().splitlines()[-1])['workers']:
    print('hetero worker: %(name)s samples=%(samples)d samples_per_s=%(samples_per_s).1f' % w)" |
        tee -a "$out/summary.txt"
}

for phase in $phases; do
    if [ "$(left)" -lt 30 ]; then
        log "$phase: skipped, the time budget is spent"
        continue
    fi
    began=$(date +%s)
    case $phase in
    build | devices | parity | lmspeed | workers | nf4 | tests | speed | hetero) "phase_$phase" ;;
    *) failed "unknown phase $phase" ;;
    esac
    log "$phase: $(($(date +%s) - began)) s"
done
log "done, $failures phase(s) with failures"
# Every log and figure in one small file (a device's reply brings few files back), without the
# run folders' checkpoints and models.
tar -C "$out" --exclude='*.safetensors' --exclude='*.pt' --exclude='*.tandem' --exclude='*.bin' \
    --exclude='*.tokens' --exclude=logs.tar.xz -cJf "$out/logs.tar.xz" . 2>/dev/null
[ "$failures" -eq 0 ]
