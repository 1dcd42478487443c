#!/usr/bin/env python3
"""model_server.py - a drover service replica: a small PyTorch model behind HTTP.

Listens on 0.0.0.0:$DROVER_PORT (the port drover handed this replica) and answers
  GET /healthz        200 once the model is loaded (drover's --ready http:/healthz)
  GET /predict?x=1.5  {"y": ..., "replica": ..., "node": ...}: a real forward pass
On SIGTERM it stops accepting, finishes the requests in flight and exits 0, so a
rolling restart loses nothing.  Without PyTorch (or with MODEL=python) the model
is a fixed pure-Python MLP with the same interface.
"""
import http.server
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse

PORT = int(os.environ.get("DROVER_PORT", "8000"))
REPLICA = os.environ.get("DROVER_REPLICA", "0")
NODE = os.environ.get("DROVER_NODENAME", socket.gethostname())
LOAD_DELAY = float(os.environ.get("MODEL_LOAD_DELAY", "0"))


def load_model():
    """A 1-16-1 MLP with fixed weights: every replica computes the same y."""
    if os.environ.get("MODEL") != "python":
        try:
            import torch  # noqa: WPS433 (imported here: the slow part of start-up)

            torch.manual_seed(0)
            torch.set_num_threads(1)
            net = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
            net.eval()

            def run(x):
                with torch.no_grad():
                    return float(net(torch.tensor([[x]], dtype=torch.float32))[0, 0])

            return run, "torch " + torch.__version__
        except ImportError:
            pass
    import math
    import random

    rnd = random.Random(0)
    w1 = [rnd.uniform(-1, 1) for _ in range(16)]
    b1 = [rnd.uniform(-1, 1) for _ in range(16)]
    w2 = [rnd.uniform(-1, 1) for _ in range(16)]

    def run(x):
        return sum(w2[i] * math.tanh(w1[i] * x + b1[i]) for i in range(16))

    return run, "python"


model = None
backend = ""
served = 0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: one line per request is too much
        pass

    def reply(self, code, obj):
        body = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 (http.server's name)
        global served
        url = urllib.parse.urlparse(self.path)
        if url.path == "/healthz":
            if model is None:
                self.reply(503, {"ready": False})
            else:
                self.reply(200, {"ready": True, "model": backend})
            return
        if url.path == "/predict":
            if model is None:
                self.reply(503, {"error": "model not loaded"})
                return
            q = urllib.parse.parse_qs(url.query)
            try:
                x = float(q.get("x", ["0"])[0])
            except ValueError:
                self.reply(400, {"error": "x: not a number"})
                return
            y = model(x)
            with lock:
                served += 1
            self.reply(200, {"x": x, "y": y, "replica": REPLICA, "node": NODE, "pid": os.getpid()})
            return
        self.reply(404, {"error": "no such path"})


def main():
    global model, backend
    server = http.server.ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
    server.daemon_threads = False  # shutdown waits for the requests in flight
    stop = threading.Event()

    def on_term(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    t.start()
    print(f"replica {REPLICA} pid {os.getpid()} listening on {NODE}:{PORT}", flush=True)
    if LOAD_DELAY:
        time.sleep(LOAD_DELAY)
    model, backend = load_model()
    print(f"replica {REPLICA}: model loaded ({backend})", flush=True)
    stop.wait()
    server.shutdown()  # no new requests; serve_forever returns
    server.server_close()
    t.join()
    print(f"replica {REPLICA}: stopped after {served} predictions", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
