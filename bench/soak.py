#!/usr/bin/env python3
"""Memory soak: a served node (`tandem serve`) takes short runs from a paired coordinator on
loopback, one after another, for MINUTES minutes; each run is a new connection, a dataset check,
a model, training and a goodbye. The node's resident memory (VmRSS) is sampled after every run.
After three warm-up runs, the highest RSS of the last quarter must stay within 10 % of the
highest of the first quarter.

    python3 bench/soak.py [--minutes 30] [--binary build/bin/tandem] [--samples 2000]

It prints the machine, every minute's RSS, and the verdict; exits 1 when memory grew.
"""
import argparse
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "tandem"))
    p.add_argument("--samples", type=int, default=2000)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="tandem-soak-")
    lap, desk = os.path.join(work, "lap"), os.path.join(work, "desk")
    run = lambda *args: subprocess.run([a.binary, *args], capture_output=True, text=True,
                                       check=True).stdout.strip()
    lap_id = run("identity", "--home", lap)
    desk_id = run("identity", "--home", desk)
    run("trust", "add", desk_id, "--home", lap)
    run("trust", "add", lap_id, "--home", desk)
    node = subprocess.Popen([a.binary, "serve", "--home", desk, "--listen=127.0.0.1:0",
                             "--announce-to=127.255.255.255",
                             f"--discovery-port={free_udp_port()}"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = None
    for line in node.stderr:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = m.group(1)
            break
    if not port:
        sys.exit("the node did not start")
    # Keep reading the node's log so that it never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in node.stderr], daemon=True).start()

    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"soak: mlp on {a.samples} samples of Fashion-MNIST, one run after another for "
          f"{a.minutes:g} min against a served node (pid {node.pid})", flush=True)
    samples = []  # (seconds since start, runs, RSS KiB)
    start = time.monotonic()
    runs = failures = 0
    last_print = -60.0
    try:
        while time.monotonic() - start < a.minutes * 60:
            out = os.path.join(work, "run")
            r = subprocess.run([a.binary, "train", "--model=mlp", "--data=fashion-mnist",
                                f"--limit-train={a.samples}", "--limit-test=500", "--epochs=1",
                                "--threads=1", "--mode=sync", "--workers=1", "--no-local-worker",
                                "--listen=127.0.0.1:0", "--invite", f"127.0.0.1:{port}",
                                "--home", lap, f"--out={out}"], capture_output=True, text=True)
            runs += 1
            if r.returncode != 0:
                failures += 1
                print(f"run {runs} failed: {r.stderr.strip().splitlines()[-1:]}", flush=True)
            if node.poll() is not None:
                sys.exit(f"the node exited ({node.returncode}) after {runs} runs")
            t = time.monotonic() - start
            samples.append((t, runs, rss_kib(node.pid)))
            if t - last_print >= 60:
                last_print = t
                print(f"  {t / 60:5.1f} min: {runs} runs, node RSS {samples[-1][2] / 1024:.1f} MiB",
                      flush=True)
    finally:
        node.terminate()
        node.wait(30)
    warm = samples[3:]
    if len(warm) < 8:
        sys.exit("too few runs to judge")
    q = len(warm) // 4
    first = max(s[2] for s in warm[:q])
    last = max(s[2] for s in warm[-q:])
    growth = last / first - 1
    print(f"{runs} runs in {(time.monotonic() - start) / 60:.1f} min, {failures} failed; node RSS "
          f"highest in the first quarter {first / 1024:.1f} MiB, in the last {last / 1024:.1f} "
          f"MiB ({growth * 100:+.1f} %)")
    ok = growth <= 0.10 and failures == 0
    print("flat" if ok else "GREW or runs failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
