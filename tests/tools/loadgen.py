#!/usr/bin/env python3
"""loadgen.py - a closed-loop HTTP load generator for the service tests.

  loadgen.py URL --stop FILE [--workers N] [--status FILE]

N workers each send GET URL, one request at a time, on a new connection each
(so every request goes through the load balancer's choice), until FILE
exists.  Every answer that is not 200 with a JSON body, and every connection
error or timeout, is a failed request.  --status FILE is rewritten about
every 0.2 s with the counts so far, so a test can wait for traffic.  At the
end it prints one JSON object: ok, failed, the first failures, and the
answers per replica; exit status 0 only with no failed request.
"""
import argparse
import http.client
import json
import os
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--stop", required=True)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--status")
    ap.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    path = u.path + ("?" + u.query if u.query else "")
    lock = threading.Lock()
    st = {"ok": 0, "failed": 0, "failures": [], "replicas": {}}

    def worker(k):
        n = 0
        while not os.path.exists(a.stop):
            n += 1
            err = None
            try:
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)
                c.request("GET", path.replace("{n}", str(n)), headers={"Connection": "close"})
                r = c.getresponse()
                body = r.read()
                c.close()
                if r.status != 200:
                    err = f"HTTP {r.status}: {body[:80]!r}"
                else:
                    rep = json.loads(body).get("replica", "?")
            except Exception as e:  # every failure counts, whatever it is
                err = f"{type(e).__name__}: {e}"
            with lock:
                if err:
                    st["failed"] += 1
                    if len(st["failures"]) < 20:
                        st["failures"].append({"t": round(time.time(), 3), "worker": k, "error": err})
                else:
                    st["ok"] += 1
                    st["replicas"][rep] = st["replicas"].get(rep, 0) + 1

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(a.workers)]
    for t in ts:
        t.start()
    while any(t.is_alive() for t in ts):
        if a.status:
            with lock:
                txt = json.dumps({"ok": st["ok"], "failed": st["failed"]})
            tmp = a.status + ".tmp"
            with open(tmp, "w") as f:
                f.write(txt + "\n")
            os.replace(tmp, a.status)
        time.sleep(0.2)
    for t in ts:
        t.join()
    print(json.dumps(st))
    return 0 if st["failed"] == 0 and st["ok"] > 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
