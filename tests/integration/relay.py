#!/usr/bin/env python3
"""relay.py - a TCP relay that records every byte it forwards, both ways:
a passive eavesdropper on the agent link (issue 21, item 4), without
tcpdump.  Usage: relay.py LISTEN_PORT TARGET_PORT CAPTURE_FILE; it prints
"ready" once listening and runs until killed."""
import socket
import sys
import threading

lport, tport, capture = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
out = open(capture, "ab", buffering=0)


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            with lock:
                out.write(b)
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(c):
    u = socket.create_connection(("127.0.0.1", tport))
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport))
ls.listen(16)
print("ready", flush=True)
while True:
    conn, _ = ls.accept()
    serve(conn)
