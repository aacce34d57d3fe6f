#!/usr/bin/env bash
# Tandem on a lent CUDA machine that has a compiler, CMake, ninja and Python with PyTorch (whose
# package holds LibTorch) but no Qt and no protobuf: those come from the GPU kit
# (packaging/gpu-kit.sh, carried as build/gpu-kit). One command, within 10 minutes; every
# figure goes under $OUT (default build/gpu-out), with the device named.
#
#   bench/gpu.sh                        every phase below, in order
#   PHASES="build devices" bench/gpu.sh only those; a later call on the same machine finds the
#                                       build in build-gpu/ and goes on from there
#
# Phases:
#   build     configure against the image's LibTorch with TANDEM_REQUIRE_CUDA=ON, and build
#   devices   tandem devices (--json too)
#   tests     the suite's tests (ctest), each on the machine's best device, CUDA here; the GUI,
#             network-namespace and long fault tests are left out (TESTS_EXCLUDE)
#   speed     mnist-cnn and a scripted torchvision resnet18 on cuda:0 through `tandem train`,
#             against a PyTorch eager loop on the same GPU (bench/python_gpu_loop.py), fp32
#             and bf16 autocast
#   hetero    coordinator + a CPU worker + the CUDA worker on loopback: the balancer's shares
#             and the efficiency against each device alone
# Each phase is cut short when the run nears BUDGET_S (540) seconds, and says so.
#
# DEVICE=cpu REQUIRE_CUDA=OFF TORCH_PREFIX=/usr PYTHON=/usr/bin/python3 SHORTER=20 PRECISIONS=fp32
# [BUILD=build] runs the same phases on a CPU machine, each run SHORTER times fewer steps (with
# BUILD, on a build made already), to check this script before a lent GPU's minutes go to it.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-out}
mkdir -p "$out"
phases=${PHASES:-build devices tests speed hetero}
budget=${BUDGET_S:-540}
kit=${KIT:-build/gpu-kit}
device=${DEVICE:-cuda:0}
shorter=${SHORTER:-1}
build=${BUILD:-build-gpu}
bin=$build/bin/tandem
start=$(date +%s)
log() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/summary.txt"; }
left() { echo $((budget - ($(date +%s) - start))); }

if [ ! -f /tmp/tandem-kit/env.sh ]; then
    sh "$kit/unpack.sh" /tmp/tandem-kit >"$out/kit.txt" 2>&1 || { cat "$out/kit.txt"; exit 1; }
fi
# shellcheck disable=SC1091
. /tmp/tandem-kit/env.sh
py=${PYTHON:-python3}
torch_prefix=${TORCH_PREFIX:-$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')}
{
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    $py -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda)'
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "kit: lends $(ls /tmp/tandem-kit/lent | grep '\.so\.' | tr '\n' ' '); the machine's own: $(ls /tmp/tandem-kit/own | tr '\n' ' ')"
} | tee -a "$out/summary.txt"

# The first JSON object on the last line of a command's stdout, one field of it (a number to
# one decimal place).
field() {
    tail -n 1 | $py -c "
import json, sys
v = json.loads(sys.stdin.read()).get('$1')
print(round(v, 1) if isinstance(v, float) else v)"
}

for phase in $phases; do
    if [ "$(left)" -lt 30 ]; then
        log "$phase: skipped, the time budget is spent"
        continue
    fi
    case $phase in
    build)
        log "build: configuring against LibTorch in $torch_prefix"
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_FAILPOINTS=ON \
            -DTANDEM_REQUIRE_CUDA="${REQUIRE_CUDA:-ON}" -DCMAKE_PREFIX_PATH="$TANDEM_KIT/usr;$torch_prefix" \
            >"$out/configure.log" 2>&1 || { log "build: configure failed"; tail -30 "$out/configure.log"; exit 1; }
        timeout "$(left)" cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 ||
            { log "build: failed or cut short"; grep -m5 -B2 -A10 'error' "$out/build.log"; exit 1; }
        log "build: done"
        # a program and a plugin that would load two releases of one library (the kit's, the
        # machine's) are named here; the suite's TLS tests would then fail
        log "build: $("$TANDEM_KIT/one-copy.sh" "$build" 2>&1 | tr '\n' ' ')"
        ;;
    devices)
        $bin devices | tee "$out/devices.txt"
        $bin devices --json >"$out/devices.json"
        log "devices: $(grep -c . "$out/devices.txt") lines"
        ;;
    tests)
        exclude=${TESTS_EXCLUDE:-^(test_gui_.*|test_translations|screenshots|test_lan|fault_campaign|test_deb|check_layout.*)$}
        (cd "$build" && timeout "$(left)" ctest -j 8 -E "$exclude" --timeout 300 \
            --output-on-failure) >"$out/ctest.log" 2>&1
        log "tests: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
        grep -E '^\s*[0-9]+ - |\*\*\*Failed|Timeout' "$out/ctest.log" | tee -a "$out/summary.txt"
        ;;
    speed)
        data=$out/../gpu-data
        mkdir -p "$data"
        [ -f "$data/resnet18.pt" ] || $py bench/python_gpu_loop.py --make "$data"
        for run in "mnist-cnn mnist 400 64" "resnet18 cifar 120 128"; do
            set -- $run
            name=$1 arrays=$data/$2.npz steps=$((($3 + shorter - 1) / shorter)) batch=$4
            model=$name
            [ "$name" = resnet18 ] && model=$data/resnet18.pt
            for precision in ${PRECISIONS:-fp32 bf16}; do
                [ "$(left)" -lt 30 ] && { log "speed: cut short"; break 2; }
                t=$($bin train --model "$model" --data "npz:$arrays" --device "$device" \
                    --precision "$precision" --batch "$batch" --max-steps "$steps" --limit-test 64 \
                    --optimizer adam --lr 0.001 --mode sync --no-history --out "$data/run-$name-$precision" \
                    2>"$out/train-$name-$precision.log" | field samples_per_s)
                p=$($py bench/python_gpu_loop.py "$arrays" "$name" "$steps" "$batch" "$precision" \
                    "$device" | tee -a "$out/python.jsonl" | field samples_per_s)
                log "speed: $name $precision batch $batch: tandem $t samples/s, PyTorch eager $p samples/s" \
                    "($(awk -v a="$t" -v b="$p" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')x)"
            done
        done
        ;;
    hetero)
        work=$(mktemp -d)
        c=$($bin identity --home "$work/c" 2>/dev/null)
        w=$($bin identity --home "$work/w" 2>/dev/null)
        $bin trust add "$w" --home "$work/c" >/dev/null 2>&1
        $bin trust add "$c" --home "$work/w" >/dev/null 2>&1
        data=$out/../gpu-data
        long=$(((200 + shorter - 1) / shorter)) short=$(((20 + shorter - 1) / shorter))
        common="--model mnist-cnn --data npz:$data/mnist.npz --optimizer adam --lr 0.001 --limit-test 64 --no-history --mode sync"
        cuda=$($bin train $common --device "$device" --batch 256 --max-steps $long --out "$work/cuda" 2>/dev/null | field samples_per_s)
        cpu=$($bin train $common --device cpu --threads 4 --batch 256 --max-steps $short --out "$work/cpu" 2>/dev/null | field samples_per_s)
        $bin train $common --device "$device" --batch 256 --max-steps $long --out "$work/joint" \
            --listen 127.0.0.1:0 --workers 1 --home "$work/c" >"$work/joint.out" 2>"$out/hetero-coordinator.log" &
        coord=$!
        port=""
        while [ -z "$port" ] && kill -0 $coord 2>/dev/null; do
            sleep 0.2
            port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/hetero-coordinator.log")
        done
        $bin worker --connect "127.0.0.1:$port" --home "$work/w" --device cpu --threads 4 \
            >"$out/hetero-worker.log" 2>&1 &
        wait $coord
        joint=$(field samples_per_s <"$work/joint.out")
        tail -n 1 "$work/joint.out" >"$out/hetero-summary.json"
        log "hetero: $device alone $cuda, cpu alone $cpu, together $joint samples/s;" \
            "efficiency $(awk -v j="$joint" -v a="$cuda" -v b="$cpu" 'BEGIN { if (a + b > 0) printf "%.3f", j / (a + b); else print "?" }')"
        $py -c "
import json
for w in json.load(open('$out/hetero-summary.json'))['workers']:
    print('hetero worker: %(name)s samples=%(samples)d samples_per_s=%(samples_per_s).1f' % w)" |
            tee -a "$out/summary.txt"
        rm -rf "$work"
        ;;
    *)
        log "unknown phase $phase"
        ;;
    esac
done
log "done"
