#!/usr/bin/env python3
# fake_droverd.py - a stand-in for droverd's HTTP API (docs/api.md) for
# test_cli_client.sh: canned JSON on a Unix socket and on loopback TCP
# (bearer token "good" required there), every request appended to a log as
# one JSON line.  Usage: fake_droverd.py SOCKET PORT_FILE LOG
import json, socketserver, sys, threading, urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

T = 1767000000.0
def job(i, state, **kw):
    j = dict(id=i, name="j%d" % i, user="alice", account="", kind="batch", state=state, reason="",
             exit_code=None, signal=None, gpu_type=None, gpu_types_requested="any", nodes=[],
             nodelist="", nnodes=1, gpus=0, submit_time=T, start_time=None, end_time=None,
             time_limit=3600, elapsed=None, cost_usd=0.0, array=None, array_parent=None,
             array_index=None, argv=["python", "train.py"], out_path="/home/alice/drover-%d.out" % i)
    j.update(kw); return j
RUN = dict(start_time=T + 1, elapsed=72.0, nodes=["n1"], nodelist="n1", gpu_type="H100-SXM", gpus=8)
JOBS = {42: job(42, "running", name="train", argv=["python", "train.py", "--lr", "3e-4 x"], **RUN),
        43: job(43, "completed", exit_code=0, end_time=T + 9, **RUN),
        44: job(44, "cancelled", reason="cancelled by alice"),
        45: job(45, "running", **RUN),
        46: job(46, "timeout", exit_code=-1, signal=15, **RUN),
        47: job(47, "pending", user="bob", gpus=16, reason="waiting for 16 GPUs of H100"),
        48: job(48, "running", kind="array", array="0-9%2",
                tasks=dict(total=10, pending=5, running=2, completed=3, failed=0, cancelled=0)),
        49: job(49, "running", array_parent=48, array_index=7, **RUN)}
JOBS[51] = job(51, "running", **RUN)  # logs -f: ends after its output has been read
OUT = {(43, "stdout"): b"hello\nworld\n", (43, "stderr"): b"oops\n", (51, "stdout"): b"tick 0\ntick 1\n"}
polls = {}

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, code, obj, chunked=False, headers=()):
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Type", "text/plain" if isinstance(obj, bytes) else "application/json")
        if chunked:  # in two chunks, to exercise the client's chunked decoding
            self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            for part in (body[:7], body[7:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def handle_any(self, method):
        u = urllib.parse.urlsplit(self.path); q = dict(urllib.parse.parse_qsl(u.query))
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        unix = isinstance(self.server, socketserver.UnixStreamServer)
        rec = dict(method=method, path=u.path, query=q, unix=unix, auth=self.headers.get("Authorization"),
                   body=json.loads(body) if body else None)
        with open(sys.argv[3], "a") as f: f.write(json.dumps(rec) + "\n")
        if not unix and rec["auth"] != "Bearer good":
            return self.reply(401, {"error": "authentication required" if not rec["auth"] else "bad token"})
        p = u.path.split("/")[1:]  # v1 jobs ID [verb]
        if u.path == "/v1/jobs" and method == "POST":
            if (rec["body"] or {}).get("name") == "bad":
                return self.reply(400, {"error": "gpus_per_node: at most 8 on this cluster", "field": "gpus_per_node"})
            arr = (rec["body"] or {}).get("array")
            return self.reply(201, dict(id=42, state="pending", **({"array_tasks": 10} if arr else {})))
        if u.path == "/v1/jobs":
            js = [j for j in JOBS.values() if "array" not in q or j["array_parent"] == int(q["array"])]
            return self.reply(200, {"jobs": js}, chunked=True)
        if u.path == "/v1/tokens" and method == "POST":
            return self.reply(201, {"token": "drv_s3cret", "user": "alice"})
        if u.path == "/v1/nodes":
            return self.reply(200, {"nodes": [
                dict(name="n1", state="up", reason="", gpu_type="H100-SXM", gpus=8, gpus_alloc=3, cpus=64,
                     mem_mb=512000, agent=dict(connected=True, last_heartbeat=T, source="declared"), jobs=[42]),
                dict(name="n2", state="drain", reason="bad fan", gpu_type="A100", gpus=4, gpus_alloc=0, cpus=32,
                     mem_mb=1536, agent=dict(connected=False, last_heartbeat=None), jobs=[])]})
        if len(p) >= 3 and p[1] == "jobs" and p[2].isdigit():
            i = int(p[2])
            if i == 50:  # runs for two polls, then fails with exit code 3
                polls[i] = polls.get(i, 0) + 1
                JOBS[50] = job(50, "running", **RUN) if polls[i] <= 2 else job(50, "failed", exit_code=3, reason="exit code 3")
            if i not in JOBS:
                return self.reply(404, {"error": "job %d: no such job" % i})
            if len(p) == 3:
                return self.reply(200, JOBS[i])
            if p[3] == "cancel":
                j = JOBS[i]
                return self.reply(409 if j["state"] in ("completed", "failed", "cancelled", "timeout") else 200,
                                  {"id": i, "state": j["state"] if j["state"] != "running" else "cancelled"})
            if p[3] == "events":
                return self.reply(200, {"events": [dict(t=T, state="pending", detail="submitted"),
                                                   dict(t=T + 1, state="running", detail="on n1")]})
            if p[3] == "output":
                data = OUT.get((i, q.get("stream", "stdout")))
                if data is None: return self.reply(404, {"error": "job %d: no output yet" % i})
                off = int(q.get("offset", 0)); piece = data[off:off + 5]  # 5 bytes a reply: offsets matter
                if i == 51 and not piece:
                    polls[i] = polls.get(i, 0) + 1
                    JOBS[51]["state"] = "running" if polls[i] < 2 else "completed"
                return self.reply(200, piece, headers=[("X-Drover-Offset-Next", str(off + len(piece))),
                                                       ("X-Drover-Job-State", JOBS[i]["state"])])
        self.reply(404, {"error": "no route %s %s" % (method, u.path)})
    def do_GET(self): self.handle_any("GET")
    def do_POST(self): self.handle_any("POST")

class U(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    def get_request(self):
        s, _ = super().get_request(); return s, ("unix", 0)
class TCP(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True

tcp = TCP(("127.0.0.1", 0), H)
threading.Thread(target=U(sys.argv[1], H).serve_forever, daemon=True).start()
with open(sys.argv[2] + ".tmp", "w") as f: f.write(str(tcp.server_address[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
tcp.serve_forever()
