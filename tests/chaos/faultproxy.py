"""faultproxy.py - a fault-injecting TCP proxy between droverd and its agents.

The chaos suite (tests/chaos/chaos.py) puts one route of this proxy between
the controller's agent port and each agent.  It forwards the byte stream
whole frames at a time (the frame layout of include/drover/proto.h: a
36-byte header whose bytes 8-11 are the body length, the body, a 16-byte
AES-GCM tag), and when told it

- injects a corrupted copy of the next frame (one byte flipped at or after
  the sequence number, so the header stays parseable and the tag fails):
  drover must drop it, count it (bad tag) and not act on it;
- injects a replay: a frame it forwarded earlier on this route (this
  connection or an earlier one), verbatim: drover must drop it (old
  sequence number, or another session's nonce) and count it (replayed);
- partitions the route: nothing is forwarded either way, no new connection
  reaches the controller, a controller going away is not passed on, until
  healed (as a link that is down: bytes wait, then flow again).

Injected frames come in addition to the real ones: the genuine stream is
never changed, so anything drover does differently is its own doing.

Used as a module (FaultProxy, a thread with its own asyncio loop, driven by
thread-safe calls) or standalone for a manual try:
  python3 faultproxy.py LISTEN_PORT UPSTREAM_HOST:PORT
"""
import asyncio
import random
import sys
import threading

HDR = 36
TAG = 16
MAX_BODY = 8 << 20
HISTORY = 64


class Route:
    def __init__(self, name, listen_host, listen_port, up_host, up_port, rng):
        self.name = name
        self.listen = (listen_host, listen_port)
        self.up = (up_host, up_port)
        self.rng = rng
        self.healed = asyncio.Event()
        self.healed.set()
        self.server = None
        self.conns = set()
        # per direction ("up": agent -> controller, "down": controller -> agent)
        self.pending = {"up": [], "down": []}  # "corrupt" / "replay" requests
        self.history = {"up": [], "down": []}
        self.injected = {(d, k): 0 for d in ("up", "down") for k in ("corrupt", "replay")}
        self.unsent = {(d, k): 0 for d in ("up", "down") for k in ("corrupt", "replay")}
        self.frames = {"up": 0, "down": 0}
        self.connections = 0


class FaultProxy:
    """Routes, each a listening port forwarding to an upstream address."""

    def __init__(self, seed=0):
        self.rng = random.Random(seed)
        self.loop = asyncio.new_event_loop()
        self.routes = {}
        self.thread = threading.Thread(target=self._run, name="faultproxy", daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _call(self, coro_or_fn, *args):
        if asyncio.iscoroutinefunction(coro_or_fn):
            fut = asyncio.run_coroutine_threadsafe(coro_or_fn(*args), self.loop)
        else:

            async def wrap():
                return coro_or_fn(*args)

            fut = asyncio.run_coroutine_threadsafe(wrap(), self.loop)
        return fut.result(timeout=10)

    # ---- the controls (thread-safe) ----
    def add_route(self, name, listen_host, listen_port, up_host, up_port):
        return self._call(self._add_route, name, listen_host, listen_port, up_host, up_port)

    def corrupt(self, name, direction):
        self._call(lambda: self.routes[name].pending[direction].append("corrupt"))

    def replay(self, name, direction):
        self._call(lambda: self.routes[name].pending[direction].append("replay"))

    def partition(self, name, on):
        def flip():
            r = self.routes[name]
            if on:
                r.healed.clear()
            else:
                r.healed.set()

        self._call(flip)

    def stats(self, name):
        def get():
            r = self.routes[name]
            return {
                "injected": dict(r.injected),
                "unsent": dict(r.unsent),
                "frames": dict(r.frames),
                "connections": r.connections,
            }

        return self._call(get)

    def close(self):
        async def stop():
            for r in self.routes.values():
                r.healed.set()
                if r.server:
                    r.server.close()
                for w in list(r.conns):
                    w.close()

        try:
            self._call(stop)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)

    # ---- the loop's side ----
    async def _add_route(self, name, lh, lp, uh, up):
        r = Route(name, lh, lp, uh, up, self.rng)
        r.server = await asyncio.start_server(lambda rd, wr: self._conn(r, rd, wr), lh, lp,
                                              reuse_address=True)
        self.routes[name] = r

    async def _conn(self, r, areader, awriter):
        r.conns.add(awriter)
        try:
            await r.healed.wait()  # a partitioned link lets nothing through
            try:
                ureader, uwriter = await asyncio.open_connection(*r.up)
            except OSError:
                return
            r.connections += 1
            r.conns.add(uwriter)
            t1 = asyncio.ensure_future(self._pump(r, "up", areader, uwriter))
            t2 = asyncio.ensure_future(self._pump(r, "down", ureader, awriter))
            done, rest = await asyncio.wait({t1, t2}, return_when=asyncio.FIRST_COMPLETED)
            for t in rest:
                t.cancel()
            uwriter.close()
            r.conns.discard(uwriter)
        finally:
            awriter.close()
            r.conns.discard(awriter)

    def _inject(self, r, direction, frame):
        """What to send before frame: the requested faults, if they can be made."""
        out = []
        while r.pending[direction]:
            kind = r.pending[direction].pop(0)
            if kind == "corrupt":
                bad = bytearray(frame)
                at = r.rng.randrange(12, len(bad))
                bad[at] ^= 1 << r.rng.randrange(8)
                out.append(bytes(bad))
                r.injected[(direction, kind)] += 1
            else:
                if not r.history[direction]:
                    r.unsent[(direction, kind)] += 1
                    continue
                out.append(r.rng.choice(r.history[direction]))
                r.injected[(direction, kind)] += 1
        return out

    async def _pump(self, r, direction, reader, writer):
        buf = b""
        while True:
            try:
                data = await reader.read(65536)
            except OSError:
                data = b""
            await r.healed.wait()
            if not data:
                return
            buf += data
            while len(buf) >= HDR:
                blen = int.from_bytes(buf[8:12], "big")
                if blen > MAX_BODY or buf[:4] != b"DRV1":
                    # not a drover stream (or already broken): pass it on as is
                    writer.write(buf)
                    buf = b""
                    break
                n = HDR + blen + TAG
                if len(buf) < n:
                    break
                frame, buf = buf[:n], buf[n:]
                for extra in self._inject(r, direction, frame):
                    writer.write(extra)
                writer.write(frame)
                r.frames[direction] += 1
                h = r.history[direction]
                h.append(frame)
                if len(h) > HISTORY:
                    h.pop(r.rng.randrange(len(h)))
            try:
                await writer.drain()
            except OSError:
                return


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    host, port = sys.argv[2].rsplit(":", 1)
    p = FaultProxy()
    p.add_route("r", "127.0.0.1", int(sys.argv[1]), host, int(port))
    print("commands: corrupt up|down, replay up|down, cut, heal, stats, quit")
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] in ("corrupt", "replay") and len(w) == 2 and w[1] in ("up", "down"):
            getattr(p, w[0])("r", w[1])
        elif w[0] in ("cut", "heal"):
            p.partition("r", w[0] == "cut")
        elif w[0] == "stats":
            print(p.stats("r"))
        elif w[0] == "quit":
            break
    p.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
