#!/usr/bin/env python3
"""agent_port_attack.py - what anyone who reaches droverd's agent port can
send before authenticating (issue 21, item 9), run by an unprivileged user.

  agent_port_attack.py PORT MODE

MODE big:    30 connections, each a frame header claiming an 8 MiB HELLO
             and as much of its body as droverd takes in 2 s (the old
             controller buffered 8 MiB a connection); then holds them 3 s.
MODE hold:   300 connections that each send a partial frame and then
             nothing; prints "open N" once they are sent, how many droverd
             closed within 1 s ("closed early N": past its cap), then after
             7 s in all ("closed N of M").
MODE flood:  3000 connections, each a well-formed HELLO with a bad proof
             and a garbage frame, as fast as possible (the log must not
             get a line for each).
Prints one summary line; exit 0 unless the connection itself failed."""
import json
import socket
import struct
import sys
import time

port, mode = int(sys.argv[1]), sys.argv[2]
HELLO, VERSION = 1, 2


def header(type_, length, version=VERSION):
    return b"DRV1" + bytes([version, type_]) + b"\0\0" + struct.pack(">I", length) + b"\0" * 24


def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def closed_by_peer(s):
    s.setblocking(False)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


if mode == "big":
    socks, sent = [], 0
    for _ in range(30):
        s = conn()
        s.setblocking(False)
        socks.append(s)
        try:  # both protocol versions: what the controller under test takes
            s.send(header(HELLO, 8 << 20, version=1 + len(socks) % 2))
        except OSError:
            pass
    chunk = b"x" * 65536
    end = time.time() + 2
    while time.time() < end:
        for s in socks:
            try:
                sent += s.send(chunk)
            except OSError:
                pass
    print("big: sent %d bytes" % sent, flush=True)
    time.sleep(3)  # held open while the test looks at droverd's memory
elif mode == "hold":
    socks = []
    for i in range(300):
        s = conn()
        # a partial header, a garbage prefix, or nothing at all
        s.send([header(HELLO, 100, version=1 + i % 2)[:20], b"", b"DRV"][i % 3])
        socks.append(s)
    print("open %d" % len(socks), flush=True)
    time.sleep(1)
    early = sum(closed_by_peer(s) for s in socks)
    print("closed early %d" % early, flush=True)
    time.sleep(6)
    n = sum(closed_by_peer(s) for s in socks)
    print("closed %d of %d" % (n, len(socks)), flush=True)
elif mode == "flood":
    body = json.dumps({"version": VERSION, "name": "n1\nforged log line",
                       "nonce": "00" * 16, "proof": "11" * 32}).encode()
    hello = header(HELLO, len(body))[:20] + b"\0" * 16 + body + b"\0" * 16
    n = 0
    end = time.time() + 20
    for i in range(3000):
        if time.time() > end:
            break
        try:
            s = conn()
            s.sendall(hello if i % 2 == 0 else b"GET / HTTP/1.0\r\n\r\n" + b"\xff" * 40)
            s.close()
            n += 1
        except OSError:
            pass
    print("flood: %d connections" % n)
