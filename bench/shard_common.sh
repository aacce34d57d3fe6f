# Sourced by the shard_*.sh benchmarks, after `t` (the tandem binary) and `work` are set.

# pair_homes WORKER...: a fresh identity in $work/c (the coordinator's home) and in $work/WORKER
# for each worker, each worker and the coordinator trusting each other.
pair_homes() {
    rm -rf "$work/c"
    c=$($t identity --home "$work/c" 2>/dev/null)
    for w in "$@"; do
        rm -rf "${work:?}/$w"
        id=$($t identity --home "$work/$w" 2>/dev/null)
        $t trust add "$id" --home "$work/c" 2>/dev/null
        $t trust add "$c" --home "$work/$w" 2>/dev/null
    done
}

# wait_port PID ERR: waits until the coordinator PID, whose log is ERR, listens, and sets `port`;
# where it ends first, prints its log's last lines and exits.
wait_port() {
    port=""
    while [ -z "$port" ]; do
        sleep 0.5
        port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$2")
        kill -0 "$1" 2>/dev/null || { tail -5 "$2"; exit 1; }
    done
}
