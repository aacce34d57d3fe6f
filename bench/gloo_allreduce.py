"""Gloo allreduce of N fp32 values between two processes on loopback, the yardstick for
bench/transport.sh: prints one JSON line with the median time of ROUNDS allreduces.

    /usr/bin/python3 bench/gloo_allreduce.py N [ROUNDS]
"""
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, n, rounds, store, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)
    t = torch.randn(n)
    times = []
    for _ in range(rounds + 1):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(times[1:], f)
    dist.destroy_process_group()


def main():
    n = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "times.json")
        mp.spawn(run, args=(n, rounds, os.path.join(d, "store"), out), nprocs=2)
        with open(out) as f:
            times = json.load(f)
    m = statistics.median(times)
    print(json.dumps({"values": n, "bytes": 4 * n, "rounds": rounds,
                      "allreduce_ms": round(m * 1e3, 2), "gb_per_s": round(4 * n / m / 1e9, 3)}))


if __name__ == "__main__":
    main()
