#!/bin/sh
# Transport: a ResNet-18-sized set of fp32 tensors (11.2 M parameters, 44.7 MB) moved
# coordinator -> worker -> coordinator over Tandem's TLS connection on loopback, 20 rounds
# (bench/transport.cpp), beside Gloo's allreduce of the same bytes between two processes in the
# same run (bench/gloo_allreduce.py, Debian's PyTorch).
#
#   bench/transport.sh          ROUNDS=20 REPEATS=3
set -eu
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-20}; repeats=${REPEATS:-3}
cmake --build build --target bench_transport >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
i=0
while [ $i -lt "$repeats" ]; do
    t=$(build/bin/bench_transport $((rounds + 1)))
    n=$(echo "$t" | python3 -c "import json,sys; print(json.load(sys.stdin)['bytes'] // 4)")
    g=$(/usr/bin/python3 bench/gloo_allreduce.py "$n" "$rounds")
    echo "tandem: $t"
    echo "gloo:   $g"
    python3 - "$t" "$g" <<'PY'
import json, sys
t, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("tandem down %.3f GB/s, up %.3f GB/s; gloo allreduce %.3f GB/s; tandem slower way / gloo = %.2f (target >= 1 GB/s each way, faster than gloo)"
      % (t["down_gb_per_s"], t["up_gb_per_s"], g["gb_per_s"], min(t["down_gb_per_s"], t["up_gb_per_s"]) / g["gb_per_s"]))
PY
    i=$((i + 1))
done
