#!/usr/bin/env python3
"""The fault campaign: short runs with a coordinator and two workers on loopback, each hit by one
fault at a random step and place, checked against invariants. It needs a build with failpoints
(-DTANDEM_FAILPOINTS=ON, which packaging/quickstart.sh uses).

    python3 bench/faults.py [--tries 30] [--kinds worker-kill,...] [--binary build/bin/tandem]
        [--mode sync|streaming] [--model mnist-cnn] [--samples 6400] [--batch 64] [--seed 1]
        [--only-try I] [--work DIR]

--mode streaming runs the owner kinds (owner-kill, owner-stop, owner-link-cut) as streaming
local-SGD, sharded (4 local steps in 2 fragments: a round of 2 inner steps, one fragment exchanged
a round; the outer step averages, --outer-lr 1 --outer-momentum 0). This machine computes every
round and the two workers only hold ranges (--hold-only), in the clean run too. Chosen so that
an undisturbed run is one trajectory: where two workers compute, each round is split by their
timings, and with the default outer Nesterov these 6400 samples are far from converged; five
undisturbed runs of that kind ended anywhere from 0.41 to 0.59 test accuracy. A lost machine
costs a streaming run the two rounds under way (their samples go out again, in another order,
and the workers start again from the run's weights), so a try follows the clean run only to
the step of its fault: the accuracy tolerance is 2.5 points, not 1 (--tolerance).

Kinds:
  worker-kill       a worker crashes (SIGKILL) at a failpoint (mid-upload, mid-frame) or at a
                    random moment
  worker-stop       a worker is frozen (SIGSTOP) for longer than the worker timeout, then
                    continued (SIGCONT)
  coordinator-kill  the coordinator crashes at a failpoint (checkpoint write and rename, after an
                    optimizer step, mid-broadcast, mid-frame) or at a random moment, and the run
                    is resumed from its checkpoint
  disk-full         the run's folder is a small tmpfs that fills at a random step (needs root)
  link-cut          a worker's link (a relay, bench/linkrelay.py) carries nothing for longer than
                    the worker timeout, then comes back
  clock-jump        a worker's wall clock jumps (days back or forward, then again), through the
                    LD_PRELOAD shim bench/clockjump.cpp (built next to the binary, in lib/)
  owner-kill        worker-kill, owner-stop worker-stop and owner-link-cut link-cut in a sharded
  owner-stop        run (--shard): each worker owns a range of the weights and the optimizer's
  owner-link-cut    state, and the run must go on without the one it loses, with no resume
  member-link-cut   in a sharded run, the link between the two workers (relays in front of their
                    --shard-port, named by their --shard-advertise) carries nothing for longer
                    than the worker timeout while both still reach the coordinator; the run goes
                    on without one of them
Invariants, for every try:
  the run finishes (after a resume where the fault stopped the coordinator); no sample is lost
  or repeated within an epoch (the sample ledger, TANDEM_SAMPLE_LEDGER; in streaming, whose
  rounds are not all of one size, the steps' count is not checked); test accuracy within 1
  point (--tolerance) of a clean run with the same seed; the checkpoint a resume starts from is
  the newest one written whole; no process is left behind; no process spins (CPU time within
  2.5x the clean run's, plus 5 s).
It prints a table of tries, passes and failures, and each failure's reproduction command, and
exits 1 when any try failed. A kind this machine cannot run (disk-full without root) is
reported as skipped.
"""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ["worker-kill", "worker-stop", "coordinator-kill", "disk-full", "link-cut", "clock-jump",
         "owner-kill", "owner-stop", "owner-link-cut", "member-link-cut"]
# A sharded run's faults are a worker's, on a worker that owns a range.
OWNER_KINDS = {"owner-kill": "worker-kill", "owner-stop": "worker-stop",
               "owner-link-cut": "link-cut", "member-link-cut": "member-link-cut"}
JUMPS = [-30 * 86400, -86400, -3600, 3600, 86400, 365 * 86400]
WORKER_POINTS = ["worker.upload", "frame.send"]
COORD_POINTS = ["checkpoint.write", "checkpoint.rename", "checkpoint.renamed", "trainer.step",
                "hub.broadcast", "frame.send"]
WORKER_TIMEOUT = 5
CHECKPOINT_EVERY = 10
STREAMING = ["--mode=local-sgd", "--local-steps=4", "--fragments=2", "--shard", "--outer-lr=1",
             "--outer-momentum=0"]
STREAMING_KINDS = ["owner-kill", "owner-stop", "owner-link-cut"]
RECONNECT = 8  # seconds a worker tries to reach a coordinator that went
LONG = 600  # seconds any one process may take before the try is failed as a hang


def free_port(taken=()):
    """A TCP port free on loopback right now, for a process told to listen there, and none of
    `taken`: the ports a try has handed out already and that their processes may not have bound
    yet (the system may give a port it just freed again)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if str(port) not in taken:
            return port


class Proc:
    """A process whose output is collected as it comes, and whose CPU time is known at its end."""

    def __init__(self, name, args, env=None, log=None):
        self.name = name
        self.args = args
        full = dict(os.environ)
        full.update(env or {})
        self.env = env or {}
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full,
                                  start_new_session=True)
        self.out, self.err = [], []
        self.lock = threading.Condition()
        self.status = None
        self.cpu = 0.0
        self.log = log
        for stream, sink in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()
        threading.Thread(target=self._reap, daemon=True).start()

    def _read(self, stream, sink):
        for raw in iter(stream.readline, b""):
            with self.lock:
                sink.append(raw.decode("utf-8", "replace"))
                self.lock.notify_all()

    def _reap(self):
        _, status, usage = os.wait4(self.p.pid, 0)
        with self.lock:
            self.cpu = usage.ru_utime + usage.ru_stime
            self.status = status
            self.p.returncode = os.waitstatus_to_exitcode(status)
            self.lock.notify_all()

    def running(self):
        return self.status is None

    def wait_err(self, pattern, timeout=LONG):
        """The first match of pattern in stderr, or None once the process ended or time ran out."""
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                m = rx.search("".join(self.err))
                if m:
                    return m
                left = end - time.monotonic()
                if self.status is not None or left <= 0:
                    return None
                self.lock.wait(min(left, 1.0))

    def finish(self, timeout=LONG):
        end = time.monotonic() + timeout
        with self.lock:
            while self.status is None and time.monotonic() < end:
                self.lock.wait(1.0)
        if self.status is None:
            self.kill()
            return False
        time.sleep(0.05)  # the readers' last lines
        return True

    def kill(self, sig=signal.SIGKILL):
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass

    def code(self):
        return self.p.returncode

    def text(self):
        with self.lock:
            return "".join(self.err) + "".join(self.out)

    def summary(self):
        for line in reversed(self.out):
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    pass
        return {}

    def save(self, folder):
        with open(os.path.join(folder, self.name + ".log"), "w") as f:
            f.write(" ".join(shlex.quote(a) for a in self.args) + "\n")
            if self.env:
                f.write("env: %s\n" % " ".join(f"{k}={v}" for k, v in self.env.items()))
            f.write(self.text())


def run_quietly(args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


class Campaign:
    def __init__(self, a):
        self.a = a
        self.bin = a.binary
        self.work = a.work or tempfile.mkdtemp(prefix="tandem-faults-")
        self.homes = {n: os.path.join(self.work, "homes", n) for n in ("coord", "w1", "w2")}
        coord = run_quietly([self.bin, "identity", "--home", self.homes["coord"]])
        for w in ("w1", "w2"):
            wid = run_quietly([self.bin, "identity", "--home", self.homes[w]])
            run_quietly([self.bin, "trust", "add", wid, "--home", self.homes["coord"]])
            run_quietly([self.bin, "trust", "add", coord, "--home", self.homes[w]])
        # A streaming round takes 2 inner steps of a batch, shared by the workers; a round that
        # times a new worker on one batch each holds fewer, so the epoch may take a few more.
        per_step = a.batch * (2 if a.mode == "streaming" else 1)
        self.steps = (a.samples + per_step - 1) // per_step
        self.clean = None
        self.hits = {}

    # --- one run ----------------------------------------------------------------------------
    def coordinator_args(self, out, port=0, shard=False):
        a = self.a
        return [self.bin, "train", f"--model={a.model}", f"--data={a.data}",
                f"--limit-train={a.samples}", f"--limit-test={a.test_samples}", "--epochs=1",
                f"--batch={a.batch}", "--threads=1",
                f"--listen=127.0.0.1:{port}", "--workers=2", "--home", self.homes["coord"],
                f"--worker-timeout={WORKER_TIMEOUT}", f"--checkpoint-every={CHECKPOINT_EVERY}",
                f"--seed={a.seed}", f"--out={out}"] + \
            (STREAMING if a.mode == "streaming" else
             ["--mode=sync", "--no-local-worker"] + (["--shard"] if shard else []))

    def resume_args(self, out, port):
        return [self.bin, "train", "--resume", os.path.join(out, "checkpoint.tandem"),
                "--threads=1", f"--listen=127.0.0.1:{port}", "--workers=2", "--no-local-worker",
                "--home", self.homes["coord"], f"--worker-timeout={WORKER_TIMEOUT}"]

    def worker_args(self, name, port, extra=()):
        holds = ["--hold-only"] if self.a.mode == "streaming" else []
        return [self.bin, "worker", "--connect", f"127.0.0.1:{port}", "--home", self.homes[name],
                "--threads=1", f"--reconnect={RECONNECT}"] + holds + list(extra)

    def steps_done(self, out):
        try:
            with open(os.path.join(out, "metrics.jsonl")) as f:
                steps = [json.loads(line).get("step", 0) for line in f if '"step"' in line]
            return max(steps, default=0)
        except (OSError, ValueError):
            return 0

    def wait_step(self, out, step, procs):
        """Whether the run reached `step`; None where a worker could not listen on the port it was
        given for its links to the other members (another process took it first)."""
        end = time.monotonic() + LONG
        while self.steps_done(out) < step:
            if "cannot listen for the sharded run's links" in procs[0].text():
                return None
            if time.monotonic() > end or not procs[0].running():
                return False
            time.sleep(0.05)
        return True

    # --- invariants -------------------------------------------------------------------------
    def check_ledger(self, path):
        """Steps 1..n in order, each epoch's samples distinct and, for a whole epoch, all of them."""
        steps = {}
        try:
            with open(path) as f:
                for line in f:
                    o = json.loads(line)
                    if "from" in o:
                        for s in [s for s in steps if s > o["from"]]:
                            del steps[s]
                    else:
                        steps[o["step"]] = (o["epoch"], o["samples"])
        except (OSError, ValueError) as e:
            return f"the sample ledger cannot be read: {e}"
        if sorted(steps) != list(range(1, len(steps) + 1)):
            return "the ledger's steps are not 1..n"
        if self.a.mode != "streaming" and len(steps) != self.steps:
            return f"{len(steps)} steps applied, {self.steps} expected"
        seen = []
        for s in sorted(steps):
            seen.extend(steps[s][1])
        if len(seen) != len(set(seen)):
            return f"{len(seen) - len(set(seen))} sample(s) repeated within the epoch"
        if set(seen) != set(range(self.a.samples)):
            return f"{self.a.samples - len(set(seen))} sample(s) lost from the epoch"
        return None

    def spins(self, procs):
        for p in procs:
            base = self.clean["cpu"].get(p.name.split("-")[0], 0)
            if p.cpu > 2.5 * base + 5:
                return f"{p.name} used {p.cpu:.1f} s of CPU (clean run: {base:.1f} s)"
        return None

    def leftovers(self, folder):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in (os.getpid(), os.getppid()):
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if folder.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return f"process(es) left behind: {pids}" if pids else None

    # --- the clean run ----------------------------------------------------------------------
    def run_clean(self):
        """The reference run. Every failpoint is armed to stall 1 ms, so the log also counts how
        often each process passes each point: the range the faulted tries draw from."""
        folder = os.path.join(self.work, "clean")
        os.makedirs(folder)
        out = os.path.join(folder, "run")
        stall = lambda points: {"TANDEM_FAILPOINTS": ";".join(f"{p}=stall:1" for p in points)}
        c = Proc("coordinator", self.coordinator_args(out), stall(COORD_POINTS))
        port = c.wait_err(r"listening on 127\.0\.0\.1:(\d+)")
        if not port:
            sys.exit("the clean run's coordinator did not start:\n" + c.text())
        ws = [Proc(w, self.worker_args(w, port.group(1)), stall(WORKER_POINTS)) for w in ("w1", "w2")]
        ok = all(p.finish() for p in [c] + ws)
        for p in [c] + ws:
            p.save(folder)
        s = c.summary()
        if not ok or c.code() != 0 or not s.get("finished"):
            sys.exit(f"the clean run failed; see {folder}")
        count = lambda p, point: p.text().count(f"failpoint {point}: stall")
        self.hits = {("coordinator", pt): count(c, pt) for pt in COORD_POINTS}
        for pt in WORKER_POINTS:
            self.hits[("worker", pt)] = min(count(w, pt) for w in ws)
        self.clean = {"accuracy": s["test_accuracy"], "seconds": s.get("train_seconds", 0),
                      "cpu": {"coordinator": c.cpu, "w1": ws[0].cpu, "w2": ws[1].cpu}}
        print(f"clean run: test accuracy {s['test_accuracy']:.4f}, {self.steps} steps, "
              f"CPU {c.cpu:.1f}/{ws[0].cpu:.1f}/{ws[1].cpu:.1f} s; failpoint passes: "
              + ", ".join(f"{who} {pt} {n}" for (who, pt), n in self.hits.items()), flush=True)

    # --- one try ----------------------------------------------------------------------------
    def try_once(self, kind, index):
        """One try; a draw whose fault came after the run had already ended, or whose worker
        found the port it was given for its member links taken, is drawn again (at most twice),
        since it tested nothing."""
        for draw in range(3):
            result, detail = self.draw_once(kind, index, draw)
            if result not in ("late", "port"):
                return result, detail + (f" (draw {draw + 1})" if draw else "")
        return "fail", "three draws in a row tested nothing: " + detail

    def draw_once(self, kind, index, draw):
        rng = random.Random(f"{self.a.seed}-{kind}-{index}" + (f"-{draw}" if draw else ""))
        folder = os.path.join(self.work, f"{kind}-{index:02d}" + (f"-{draw}" if draw else ""))
        os.makedirs(folder)
        ledger = os.path.join(folder, "ledger.jsonl")
        env = {"TANDEM_SAMPLE_LEDGER": ledger}
        disk = None
        if kind == "disk-full":
            disk = os.path.join(folder, "disk")
            os.makedirs(disk)
            try:
                r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", disk],
                                   capture_output=True, text=True)
                why = r.stderr.strip() if r.returncode != 0 else None
            except OSError as e:
                why = str(e)
            if why is not None:
                return "skipped", "cannot mount a tmpfs here (needs root): " + why
        out = os.path.join(disk or folder, "run")
        try:
            return self.try_in(kind, rng, folder, out, env, ledger, disk)
        finally:
            if disk:
                subprocess.run(["umount", "-l", disk], capture_output=True)

    def try_in(self, kind, rng, folder, out, env, ledger, disk):
        procs, what = [], ""
        sharded = kind in OWNER_KINDS
        kind = OWNER_KINDS.get(kind, kind)
        coord_env = dict(env)
        victim = rng.choice(["w1", "w2"])
        worker_env = {"w1": {}, "w2": {}}
        at_step = rng.randint(2, max(2, self.steps - CHECKPOINT_EVERY - 3))
        place = "moment"
        if kind == "worker-kill":
            # A sharded worker's gradients go to the owners, not in an upload.
            points = ["frame.send"] if sharded else WORKER_POINTS
            place = rng.choice(points + ["moment"])
            if place != "moment":
                n = rng.randint(1, max(1, self.hits[("worker", place)] - 1))
                worker_env[victim]["TANDEM_FAILPOINTS"] = f"{place}=crash@{n}"
                what = f"{victim} crashes at {place}@{n}"
            else:
                what = f"{victim} killed at step {at_step}"
        elif kind == "coordinator-kill":
            place = rng.choice(COORD_POINTS + ["moment"])
            if place != "moment":
                n = rng.randint(1, max(1, self.hits[("coordinator", place)] - 1))
                coord_env["TANDEM_FAILPOINTS"] = f"{place}=crash@{n}"
                what = f"coordinator crashes at {place}@{n}"
            else:
                what = f"coordinator killed at step {at_step}"
        elif kind == "worker-stop":
            what = f"{victim} frozen {WORKER_TIMEOUT + 3} s at step {at_step}"
        elif kind == "disk-full":
            what = f"disk full from step {at_step}"
        elif kind == "link-cut":
            what = f"{victim}'s link cut {WORKER_TIMEOUT + 3} s at step {at_step}"
        elif kind == "member-link-cut":
            what = f"the workers' link to each other cut {WORKER_TIMEOUT + 3} s at step {at_step}"
        elif kind == "clock-jump":
            shim = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(self.bin))), "lib",
                                "libtandem_clockjump.so")
            if not os.path.exists(shim):
                return "skipped", f"no {shim}; build the target tandem_clockjump"
            offset_file = os.path.join(folder, "clock-offset")
            jumps = [rng.choice(JUMPS), rng.choice(JUMPS + [0])]
            worker_env[victim] = {"LD_PRELOAD": shim, "TANDEM_CLOCK_OFFSET_FILE": offset_file}
            what = f"{victim}'s clock jumps {jumps[0]:+d} s at step {at_step}, then to {jumps[1]:+d} s"

        c = Proc("coordinator", self.coordinator_args(out, shard=sharded), coord_env)
        procs.append(c)
        m = c.wait_err(r"listening on 127\.0\.0\.1:(\d+)")
        if not m:
            return self.verdict(folder, procs, what, "the coordinator did not start")
        port = m.group(1)
        relays = []
        ports = {"w1": port, "w2": port}
        extra = {"w1": [], "w2": []}
        # link-cut: the victim's link to the coordinator goes through a relay. member-link-cut:
        # each worker's links from the other members do (the later member in the run's list
        # dials the earlier, and either worker may be later), never a link to the coordinator.
        # A port handed out here is not bound until its process starts: a relay left to take
        # any free port, or given one the system handed out twice, may take a worker's, and the
        # worker then declines the run.
        taken = {port}
        for w in ([victim] if kind == "link-cut" else ["w1", "w2"] if kind == "member-link-cut"
                  else []):
            to = port if kind == "link-cut" else str(free_port(taken))
            taken.add(to)
            listen = free_port(taken)
            taken.add(str(listen))
            relay = Proc("relay-" + w, [sys.executable, os.path.join(ROOT, "bench", "linkrelay.py"),
                                        "--listen", f"127.0.0.1:{listen}", "--to",
                                        f"127.0.0.1:{to}", "--rate-mbit", "2000", "--delay-ms",
                                        "0"])
            procs.append(relay)
            relays.append(relay)
            rm = None
            end = time.monotonic() + 30
            while not rm and time.monotonic() < end:
                with relay.lock:
                    rm = re.search(r"relay listening on 127\.0\.0\.1:(\d+)", "".join(relay.out))
                    relay.lock.wait(0.5)
            if not rm:
                return self.verdict(folder, procs, what, "the relay did not start")
            if kind == "link-cut":
                ports[w] = rm.group(1)
            else:
                extra[w] = ["--shard-port", to, "--shard-advertise", rm.group(1)]
        workers = {w: Proc(w, self.worker_args(w, ports[w], extra[w]), worker_env[w])
                   for w in ("w1", "w2")}
        procs += list(workers.values())

        resumed_from = None
        if place == "moment" or kind in ("worker-stop", "disk-full", "link-cut", "member-link-cut",
                                         "clock-jump"):
            reached = self.wait_step(out, at_step, procs)
            if reached is None:
                self.verdict(folder, procs, what, None)
                return "port", what + ": a worker's port for its member links was taken"
            if not reached:
                return self.verdict(folder, procs, what, f"the run did not reach step {at_step}")
            if kind == "worker-kill":
                workers[victim].kill()
            elif kind == "coordinator-kill":
                c.kill()
            elif kind == "worker-stop":
                workers[victim].kill(signal.SIGSTOP)
                time.sleep(WORKER_TIMEOUT + 3)
                workers[victim].kill(signal.SIGCONT)
            elif kind == "clock-jump":
                for seconds in jumps:
                    with open(offset_file + ".new", "w") as f:
                        f.write(str(seconds))
                    os.replace(offset_file + ".new", offset_file)
                    time.sleep(2)
            elif kind in ("link-cut", "member-link-cut"):
                for relay in relays:
                    relay.kill(signal.SIGUSR2)
                time.sleep(WORKER_TIMEOUT + 3)
                for relay in relays:
                    relay.kill(signal.SIGUSR2)
            elif kind == "disk-full":
                # The coordinator is held while the disk fills, so that the run cannot finish
                # in the meantime: the next checkpoint it writes meets a full disk.
                c.kill(signal.SIGSTOP)
                st = os.statvfs(disk)
                filler = os.path.join(disk, "filler")
                try:
                    with open(filler, "wb") as f:
                        left = st.f_bavail * st.f_frsize - 64 * 1024
                        while left > 0:
                            n = min(left, 1 << 20)
                            f.write(b"\0" * n)
                            left -= n
                except OSError:
                    pass  # full already
                c.kill(signal.SIGCONT)

        # A worker that crashed before the run began leaves the coordinator waiting for its
        # second worker, as it should: the user starts it again, and so does the campaign.
        end = time.monotonic() + LONG
        while c.running() and time.monotonic() < end:
            w = workers[victim]
            if kind == "worker-kill" and not w.running() and self.steps_done(out) == 0:
                workers[victim] = Proc(victim + "-again", self.worker_args(victim, ports[victim]))
                procs.append(workers[victim])
                what += " before the run began; started again"
            time.sleep(0.2)
        if not c.finish(1):
            return self.verdict(folder, procs, what, "the coordinator hung")
        first = c
        if kind in ("coordinator-kill", "disk-full"):
            if kind == "disk-full":
                if c.code() == 0:
                    return self.late(folder, procs, what)
                if "no space left" not in c.text():
                    return self.verdict(folder, procs, what,
                                        "the coordinator stopped without saying the disk is full")
                os.remove(os.path.join(disk, "filler"))
            elif c.code() == 0:
                return self.late(folder, procs, what)
            before = self.steps_done(out)
            # Workers the coordinator sent away when it stopped have left; the user starts
            # them again. The others are trying to reconnect.
            for name, w in list(workers.items()):
                if w.running() and not w.wait_err(r"trying to reconnect", 10):
                    w.finish(30)
                if not w.running():
                    workers[name] = Proc(name + "-again", self.worker_args(name, ports[name]),
                                         worker_env[name] if kind != "worker-kill" else {})
                    procs.append(workers[name])
            if os.path.exists(os.path.join(out, "checkpoint.tandem")):
                c = Proc("coordinator-resumed", self.resume_args(out, port), env)
                r = c.wait_err(r"resuming at step (\d+)")
                resumed_from = int(r.group(1)) if r else None
            else:  # it died before its first checkpoint: the only way on is to start again
                c = Proc("coordinator-again", self.coordinator_args(out, port), env)
                resumed_from = 0
            procs.append(c)
            if resumed_from is None:
                c.finish()
                return self.verdict(folder, procs, what,
                                    "the checkpoint on disk was refused: " + c.text()[-300:])
            low = (before // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
            if before % CHECKPOINT_EVERY == 0 and low > 0:
                low -= CHECKPOINT_EVERY  # it may have died writing this very checkpoint
            if resumed_from and not low <= resumed_from <= before:
                return self.verdict(folder, procs, what,
                                    f"resumed from step {resumed_from}, but steps to {before} were "
                                    f"taken with a checkpoint every {CHECKPOINT_EVERY}")
            if not c.finish():
                return self.verdict(folder, procs, what, "the resumed coordinator hung")
        del first

        s = c.summary()
        if c.code() != 0 or not s.get("finished"):
            return self.verdict(folder, procs, what, f"the run did not finish (exit {c.code()})")
        for w in workers.values():
            if w.running() and not w.finish(120):
                return self.verdict(folder, procs, what, f"{w.name} did not exit after the run")
        for relay in relays:
            relay.kill(signal.SIGTERM)
            relay.finish(30)
        problem = (self.check_ledger(ledger) or self.spins([c] + list(workers.values())))
        acc = s.get("test_accuracy", 0)
        if not problem and abs(acc - self.clean["accuracy"]) > self.a.tolerance:
            problem = (f"test accuracy {acc:.4f}, more than {100 * self.a.tolerance:g} point(s) "
                       f"from the clean run's {self.clean['accuracy']:.4f}")
        if not problem and resumed_from is not None:
            what += f" (resumed from step {resumed_from})"
        if not problem and sharded:
            # The run went on without the owner it lost, or it was lost in no step.
            gone = re.search(r"the sharded run goes on without .* from step (\d+)", c.text())
            if gone:
                what += f" (went on from step {gone.group(1)})"
            elif "the run is set up without it" in c.text():
                what += " (set up without it)"
            else:
                what += " (no machine was lost)"
        if kind == "clock-jump":  # the shim says so when the process reads the shifted clock
            seen = "clockjump:" in workers[victim].text()
            what += " (read by the worker)" if seen else " (the worker never read its wall clock)"
        return self.verdict(folder, procs, what, problem, acc)

    def late(self, folder, procs, what):
        self.verdict(folder, procs, what, None)
        return "late", what + ": the run ended before the fault"

    def verdict(self, folder, procs, what, problem, acc=None):
        for p in procs:
            if p.running():
                p.kill(signal.SIGCONT)
                p.kill()
                p.finish(30)
        for p in procs:
            p.save(folder)
        problem = problem or self.leftovers(folder)
        detail = what + (f", accuracy {acc:.4f}" if acc is not None else "")
        return ("fail", f"{detail}: {problem}") if problem else ("pass", detail)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tries", type=int, default=30)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "tandem"))
    p.add_argument("--mode", choices=["sync", "streaming"], default="sync")
    p.add_argument("--tolerance", type=float,
                   help="how far a try's test accuracy may be from the clean run's: 0.01 in "
                        "sync, 0.025 in streaming")
    p.add_argument("--model", default="mnist-cnn")
    p.add_argument("--data", default="fashion-mnist")
    p.add_argument("--samples", type=int, default=6400)
    p.add_argument("--test-samples", type=int, default=2000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only-try", type=int, default=-1, help="run this try of each kind only")
    p.add_argument("--work", help="a folder for the runs (kept); by default a temporary one, "
                                  "removed when every try passed")
    a = p.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    if a.tolerance is None:
        a.tolerance = 0.025 if a.mode == "streaming" else 0.01
    if a.mode == "streaming" and a.kinds == p.get_default("kinds"):
        kinds = STREAMING_KINDS
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"unknown kind {k}; the kinds are {', '.join(KINDS)}")
        if a.mode == "streaming" and k not in STREAMING_KINDS:
            sys.exit(f"--mode streaming runs {', '.join(STREAMING_KINDS)}, not {k}")
    if a.work:
        os.makedirs(a.work, exist_ok=True)
    camp = Campaign(a)
    print(f"fault campaign: {a.mode}, {a.model} on {a.samples} samples of {a.data}, batch "
          f"{a.batch}, 2 workers, {camp.steps} steps, {a.tries} tries per kind; runs in "
          f"{camp.work}", flush=True)
    started = time.monotonic()
    camp.run_clean()
    table, failures = [], []
    for kind in kinds:
        tries = [a.only_try] if a.only_try >= 0 else range(a.tries)
        counts = {"pass": 0, "fail": 0, "skipped": 0}
        for i in tries:
            t0 = time.monotonic()
            result, detail = camp.try_once(kind, i)
            counts[result] += 1
            print(f"  {kind} {i:2d}: {result} ({time.monotonic() - t0:.0f} s) {detail}",
                  flush=True)
            if result == "fail":
                failures.append((kind, i, detail))
            if result == "skipped":
                break
        table.append((kind, counts))
    print(f"\n{'kind':<18}{'tries':>6}{'passed':>8}{'failed':>8}")
    for kind, n in table:
        tried = n["pass"] + n["fail"]
        note = "  skipped: this machine cannot" if n["skipped"] else ""
        print(f"{kind:<18}{tried:>6}{n['pass']:>8}{n['fail']:>8}{note}")
    print(f"({time.monotonic() - started:.0f} s)")
    for kind, i, detail in failures:
        cmd = [sys.executable, os.path.abspath(__file__), "--kinds", kind, "--only-try", str(i),
               "--mode", a.mode, "--tolerance", str(a.tolerance), "--seed", str(a.seed),
               "--model", a.model, "--data", a.data, "--samples", str(a.samples), "--batch",
               str(a.batch), "--binary", a.binary]
        print(f"FAILED {kind} {i}: {detail}\n  again: {' '.join(shlex.quote(x) for x in cmd)}")
    if failures:
        print(f"the runs are kept in {camp.work}")
        return 1
    if not a.work:
        shutil.rmtree(camp.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
