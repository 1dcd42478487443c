#!/usr/bin/env python3
"""tcp_capture.py - a passive eavesdropper for the TLS attack test: a TCP
relay on 127.0.0.1 that forwards every connection to a target port and
appends every byte it carries, both ways, to a capture file (what anyone
on the network path between a user and droverd would see).

    tcp_capture.py TARGET_PORT PORT_FILE CAPTURE_FILE

Writes its own listening port to PORT_FILE once it accepts; runs until
killed."""
import os
import socket
import sys
import threading

target_port = int(sys.argv[1])
port_file, cap_file = sys.argv[2], sys.argv[3]
lock = threading.Lock()
cap = open(cap_file, "ab", buffering=0)


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            with lock:
                cap.write(data)
            dst.sendall(data)
    except OSError:
        pass
    for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            s.shutdown(how)
        except OSError:
            pass


def serve(client):
    try:
        upstream = socket.create_connection(("127.0.0.1", target_port), timeout=5)
        upstream.settimeout(None)
    except OSError:
        client.close()
        return
    a = threading.Thread(target=pump, args=(client, upstream), daemon=True)
    b = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    a.start()
    b.start()
    a.join()
    b.join()
    client.close()
    upstream.close()


srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
