"""Where the CPU of a run goes, by process and thread: samples /proc/PID/task/*/stat for each
PID given until all have exited, and prints each thread's (by name) user+system CPU seconds and
the wall time. Threads that share a name are summed; LibTorch's intra-op pool shows as the
process's own name. Linux only.

    python3 bench/cpu_split.py LABEL=PID [LABEL=PID ...]
"""
import os
import sys
import time

tick = os.sysconf("SC_CLK_TCK")
procs = dict(arg.split("=", 1) for arg in sys.argv[1:])
seen = {}  # (label, tid) -> (thread name, cpu seconds)
start = time.time()
while True:
    alive = False
    for label, pid in procs.items():
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        alive = True
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            seen[(label, tid)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    if not alive:
        break
    time.sleep(0.2)
wall = time.time() - start
totals = {}
for (label, _), (name, cpu) in seen.items():
    totals[(label, name)] = totals.get((label, name), 0.0) + cpu
print(f"cpu_split: wall={wall:.1f}s cores={os.cpu_count()} "
      f"available={wall * os.cpu_count():.1f} cpu-s used={sum(totals.values()):.1f} cpu-s")
for (label, name), cpu in sorted(totals.items(), key=lambda kv: -kv[1]):
    print(f"cpu_split: {label:12s} {name:16s} {cpu:7.2f} cpu-s")
