#!/usr/bin/env python3
"""abuse.py - hostile API clients against a live droverd, and a probe that
measures whether honest clients still get served.

  abuse.py --tcp HOST:PORT --unix SOCKET [--conns N] [--seconds S] [--submits N]

Opens N TCP connections to the API at once, in five kinds (round robin):
slowloris (a request's headers one byte a second, never finished), idle
(connected, silent), truncated (a POST whose body stops short of its
Content-Length), malformed (bytes that are not HTTP), oversized (20 MB of
headers or a body far over the limit).  Meanwhile an honest client asks
GET /v1/ping over the Unix socket every 50 ms (a new connection each time)
and submits held jobs.  Prints one JSON object: connections accepted, what
the malformed and oversized ones were answered, the probe's latencies and
failures, the submits acknowledged.  Exit status 0 (the caller judges)."""
import argparse
import json
import resource
import selectors
import socket
import threading
import time


def http_unix(path, method, target, body=None, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    data = body.encode() if body else b""
    head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    s.sendall(head.encode() + b"\r\n" + data)
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    status = int(out.split(b" ", 2)[1]) if out.startswith(b"HTTP/") else 0
    return status, out


def honest(args, stop, res):
    lat, fails, acks, sent, codes = [], 0, 0, 0, {}
    job = json.dumps({"argv": ["/bin/true"], "hold": True, "gpus_per_node": 1})
    i = 0
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            st, _ = http_unix(args.unix, "GET", "/v1/ping")
            if st != 200:
                fails += 1
            lat.append(time.monotonic() - t0)
        except OSError:
            fails += 1
        if sent < args.submits and i % 2 == 0:
            sent += 1
            try:
                st, _ = http_unix(args.unix, "POST", "/v1/jobs", job)
                codes[st] = codes.get(st, 0) + 1
                acks += st == 201
            except OSError:
                codes["error"] = codes.get("error", 0) + 1
        i += 1
        time.sleep(0.05)
    lat.sort()
    q = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3, 2) if lat else None
    res.update(probes=len(lat) + fails, probe_failures=fails, probe_p50_ms=q(0.5),
               probe_p99_ms=q(0.99), probe_max_ms=round(lat[-1] * 1e3, 2) if lat else None,
               submits_sent=sent, submits_acked=acks, submit_codes={str(k): v for k, v in codes.items()})


KINDS = ["slowloris", "idle", "truncated", "malformed", "oversized"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcp", required=True)
    ap.add_argument("--unix", required=True)
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--submits", type=int, default=50)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    host, port = args.tcp.rsplit(":", 1)
    sel = selectors.DefaultSelector()
    conns = []
    connected = refused = 0
    for i in range(args.conns):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((host, int(port)))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            continue
        c = {"s": s, "kind": KINDS[i % len(KINDS)], "out": b"", "sent": 0, "reply": b"",
             "closed": False, "next": 0.0}
        k = c["kind"]
        if k == "slowloris":
            c["out"] = b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
        elif k == "truncated":
            c["out"] = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"argv\":"
        elif k == "malformed":
            c["out"] = b"\x00\xff\xfeGARBAGE / HTTP/9.9\r\n\x01\x02\r\n\r\n"
        elif k == "oversized":
            c["out"] = (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 20000000\r\n\r\n" +
                        b"x" * 2000000) if i % 2 else (b"GET /v1/ping HTTP/1.1\r\nX-Big: " +
                                                        b"y" * 2000000 + b"\r\n\r\n")
        conns.append(c)
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
    stop = threading.Event()
    res = {}
    th = threading.Thread(target=honest, args=(args, stop, res))
    th.start()
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        now = time.monotonic()
        for key, ev in sel.select(timeout=0.05):
            c = key.data
            s = c["s"]
            if ev & selectors.EVENT_WRITE and c["sent"] < len(c["out"]):
                if c.get("ok") is None:
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    c["ok"] = err == 0
                    connected += err == 0
                if c["kind"] == "slowloris":
                    # the request line and the first header's name at once,
                    # then one byte a second (below, off the selector)
                    n = c["out"].index(b"X-Slow: ") + 8
                    try:
                        c["sent"] += s.send(c["out"][:n])
                    except OSError:
                        pass
                    c["next"] = now + 1.0
                else:
                    try:
                        c["sent"] += s.send(c["out"][c["sent"]:c["sent"] + 65536])
                    except OSError:
                        c["sent"] = len(c["out"])
            elif ev & selectors.EVENT_WRITE and c.get("ok") is None:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                c["ok"] = err == 0
                connected += err == 0
            if ev & selectors.EVENT_READ:
                try:
                    b = s.recv(65536)
                except OSError:
                    b = b""
                if b:
                    c["reply"] += b[:200] if len(c["reply"]) < 200 else b""
                else:
                    c["closed"] = True
                    sel.unregister(s)
            if (c["sent"] >= len(c["out"]) or c["kind"] == "slowloris" and c["sent"]) and not c["closed"]:
                try:
                    sel.modify(s, selectors.EVENT_READ, c)
                except (KeyError, ValueError):
                    pass
        for c in conns:
            if c["kind"] == "slowloris" and c["sent"] and not c["closed"] and now >= c["next"]:
                try:
                    c["sent"] += c["s"].send(c["out"][c["sent"]:c["sent"] + 1])
                except OSError:
                    pass
                c["next"] = now + 1.0
    stop.set()
    th.join()
    answers = {}
    for c in conns:
        st = c["reply"].split(b" ", 2)[1].decode(errors="replace") if c["reply"].startswith(b"HTTP/") else (
            "closed" if c["closed"] else "open")
        answers.setdefault(c["kind"], {}).setdefault(st, 0)
        answers[c["kind"]][st] += 1
        c["s"].close()
    res.update(conns=args.conns, connected=connected, refused=refused, answers=answers)
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
