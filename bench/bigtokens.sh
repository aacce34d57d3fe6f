#!/bin/sh
# A token file of gigabytes, received by a worker that does not have it: the worker's peak
# resident memory (VmHWM) and the time from its start to its first step, with the built-in gpt.
# The coordinator maps the file; the worker receives its tokens into its dataset cache as they
# arrive and maps them there. Then a second worker session on the same cache: the time to its
# first step when nothing has to travel.
#
#   bench/bigtokens.sh [GB]      default 4 (the file is random bytes, read as text:)
#   WORK=DIR bench/bigtokens.sh  where the file and the homes go (default: a folder in /var/tmp)
set -eu
cd "$(dirname "$0")/.."
gb=${1:-4}
t=$(pwd)/build/bin/tandem
cmake --build build --target tandem >/dev/null
work=${WORK:-$(mktemp -d /var/tmp/tandem-bigtokens.XXXXXX)}
mkdir -p "$work"
trap 'kill $cpid 2>/dev/null || true; rm -rf "$work"' EXIT
c=$($t identity --home "$work/c" 2>/dev/null); w=$($t identity --home "$work/w" 2>/dev/null)
$t trust add "$w" --home "$work/c" 2>/dev/null; $t trust add "$c" --home "$work/w" 2>/dev/null
echo "making a ${gb} GB file..."
head -c "${gb}G" /dev/urandom >"$work/big.txt"
data="text:$work/big.txt,context=64"

# One worker session against a coordinator that waits for it: prints "seconds-to-first-step
# peak-rss-MiB".
session() {
    rm -f "$work/c.err" "$work/events"
    $t train --events "$work/events" --model gpt --data "$data" --batch 8 --max-steps 3 --limit-test 8 --threads 2 \
        --listen 127.0.0.1:0 --workers 1 --no-local-worker --mode sync --home "$work/c" \
        --out "$work/run-$1" >"$work/c.out" 2>"$work/c.err" &
    cpid=$!
    port=
    while [ -z "$port" ]; do
        kill -0 $cpid 2>/dev/null || { cat "$work/c.err" >&2; exit 1; }
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/c.err")
        sleep 0.2
    done
    [ "$1" = received ] && mv "$work/big.txt" "$work/big.moved" # only the coordinator has it
    start=$(date +%s.%N)
    $t worker --connect "127.0.0.1:$port" --home "$work/w" --threads 2 >"$work/w-$1.log" 2>&1 &
    wpid=$!
    peak=0
    first=
    while kill -0 $wpid 2>/dev/null; do
        rss=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$wpid/status 2>/dev/null || true)
        [ -n "$rss" ] && peak=$rss
        if [ -z "$first" ] && grep -q '"event": *"step"' "$work/events" 2>/dev/null; then
            first=$(echo "$(date +%s.%N) - $start" | bc)
        fi
        sleep 0.1
    done
    wait $cpid
    [ "$1" = received ] && mv "$work/big.moved" "$work/big.txt"
    echo "$1: first step after ${first:-?} s, worker peak resident memory $((peak / 1024)) MiB"
}
session received
session cached
echo "cache: $(du -sh "$work/w/cache/datasets" | cut -f1)"
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr)"
