"""A userspace TCP relay that stands in for a slow link between two Tandem nodes on one machine
(this kernel has no sch_netem): every connection made to it is forwarded to TARGET through a
link of a fixed rate and one-way delay, shared by all its connections in each direction, with
optional random stalls (a Wi-Fi hiccup: nothing moves for a while). Backpressure is TCP's own:
the relay holds at most a few chunks per direction.

    python3 bench/linkrelay.py --to 127.0.0.1:PORT [--listen 127.0.0.1:0] [--rate-mbit 100]
        [--delay-ms 5] [--stall-every-s 0] [--stall-ms 200] [--seed 1] [--usr1-rate-mbit R]

It prints "relay listening on HOST:PORT" once it accepts connections; point the worker at that
port. --stall-every-s S stalls each direction at random moments, S seconds apart on average.
--usr1-rate-mbit R: on SIGUSR1 the link's rate becomes R Mbit/s (a laptop walking away from the
access point), and it says so on stdout. SIGUSR2 cuts the link (nothing moves either way, as when
Wi-Fi drops, and connections stay open) and the next SIGUSR2 restores it; each is said on stdout.
"""
import argparse
import asyncio
import random
import signal
import sys
import time

CHUNK = 64 * 1024
LINK_UP = None  # asyncio.Event, set while the link carries bytes (SIGUSR2 toggles it)


class Link:
    """One direction of the link: when the next byte may leave, and random stalls."""

    def __init__(self, rate_bytes, stall_every, stall_s, rng):
        self.rate = rate_bytes
        self.free_at = 0.0
        self.stall_every = stall_every
        self.stall_s = stall_s
        self.rng = rng
        self.next_stall = self._draw(time.monotonic())

    def _draw(self, now):
        return now + self.rng.expovariate(1.0 / self.stall_every) if self.stall_every > 0 else None

    def departs(self, now, size):
        start = max(now, self.free_at)
        if self.next_stall is not None and start >= self.next_stall:
            start += self.stall_s
            self.next_stall = self._draw(start)
        self.free_at = start + size / self.rate
        return self.free_at


async def pipe(reader, writer, link, delay):
    queue = asyncio.Queue(maxsize=4)

    async def receive():
        while True:
            await LINK_UP.wait()
            data = await reader.read(CHUNK)
            await queue.put((link.departs(time.monotonic(), len(data)) + delay, data))
            if not data:
                return

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await LINK_UP.wait()
            if not data:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    try:
        await asyncio.gather(receive(), deliver())
    except (ConnectionError, asyncio.IncompleteReadError):
        writer.close()


async def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--to", required=True)
    p.add_argument("--rate-mbit", type=float, default=100.0)
    p.add_argument("--delay-ms", type=float, default=5.0)
    p.add_argument("--stall-every-s", type=float, default=0.0)
    p.add_argument("--stall-ms", type=float, default=200.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--usr1-rate-mbit", type=float, default=0.0)
    a = p.parse_args()
    global LINK_UP
    LINK_UP = asyncio.Event()
    LINK_UP.set()

    def cut_or_restore():
        if LINK_UP.is_set():
            LINK_UP.clear()
            print("relay link cut", flush=True)
        else:
            LINK_UP.set()
            print("relay link restored", flush=True)

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, cut_or_restore)
    rng = random.Random(a.seed)
    rate = a.rate_mbit * 1e6 / 8
    up = Link(rate, a.stall_every_s, a.stall_ms / 1e3, rng)
    down = Link(rate, a.stall_every_s, a.stall_ms / 1e3, rng)
    to_host, to_port = a.to.rsplit(":", 1)

    async def accepted(client_r, client_w):
        try:
            server_r, server_w = await asyncio.open_connection(to_host, int(to_port))
        except OSError as e:
            print(f"relay: cannot reach {a.to}: {e}", file=sys.stderr)
            client_w.close()
            return
        await asyncio.gather(pipe(client_r, server_w, up, a.delay_ms / 1e3),
                             pipe(server_r, client_w, down, a.delay_ms / 1e3))

    if a.usr1_rate_mbit > 0:
        def slow_down():
            up.rate = down.rate = a.usr1_rate_mbit * 1e6 / 8
            print(f"relay rate now {a.usr1_rate_mbit:g} Mbit/s", flush=True)

        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, slow_down)

    host, port = a.listen.rsplit(":", 1)
    server = await asyncio.start_server(accepted, host, int(port))
    bound = server.sockets[0].getsockname()
    print(f"relay listening on {bound[0]}:{bound[1]} -> {a.to}, {a.rate_mbit:g} Mbit/s, "
          f"{a.delay_ms:g} ms", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
