#!/usr/bin/env python3
"""dashboard_driver.py - drives Debian's headless chromium through ChromeDriver
(the W3C WebDriver protocol, spoken with plain urllib: no selenium) against a
live droverd, for tests/integration/test_dashboard.sh.

It logs in through the page's form, checks what the overview, queue, job and
nodes pages show against the jobs and nodes the shell script set up, cancels a
job and drains a node through the page's buttons, checks that a user who is
not an operator sees the controller's refusal, and saves a screenshot of each
page.  Prints `ok ...` / `FAIL ...` lines (as lib.sh does); exits 1 on any
failure.  ChromeDriver and every chromium process it started (found by the
--user-data-dir under the test's scratch directory) are stopped on every exit
path.
"""
import argparse
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

FAILS = []


def ok(msg):
    print("ok   " + msg, flush=True)


def bad(msg):
    print("FAIL " + msg, flush=True)
    FAILS.append(msg)


class WebDriver:
    """The few W3C WebDriver commands the test needs."""

    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.sid = None

    def call(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            v = json.loads(e.read() or b"{}").get("value", {})
            raise RuntimeError("webdriver %s %s: %s: %s" % (method, path, v.get("error"),
                                                           (v.get("message") or "")[:300]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.sid, path), body)

    def start(self, args):
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": args.chromium, "args": args.chrome_args}}}}
        self.sid = self.call("POST", "/session", caps, timeout=60)["sessionId"]
        self.s("POST", "/timeouts", {"script": 10000, "pageLoad": 15000, "implicit": 0})

    def quit(self):
        if self.sid:
            try:
                self.call("DELETE", "/session/" + self.sid, timeout=10)
            except Exception:  # noqa: BLE001 - the process kill below follows anyway
                pass
            self.sid = None

    def go(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        v = self.s("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(v.values()))

    def click(self, css):
        # the page rebuilds its tables on every refresh: a row found a moment
        # ago may be gone (stale); find it again
        for k in range(5):
            try:
                self.s("POST", "/element/%s/click" % self.find(css), {})
                return
            except RuntimeError as e:
                if k == 4 or "stale element" not in str(e):
                    raise

    def type(self, css, text):
        self.s("POST", "/element/%s/value" % self.find(css), {"text": text})

    def screenshot(self, path):
        png = base64.b64decode(self.s("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)
        return len(png)

    def wait(self, what, script, *args, timeout=10.0):
        """Poll a script until it returns something truthy; None on timeout."""
        end = time.time() + timeout
        last = None
        while time.time() < end:
            try:
                last = self.js(script, *args)
            except RuntimeError as e:
                last = str(e)
                if "invalid session id" in last:
                    break
            else:
                if isinstance(last, str) and last.startswith("OK") or last and not isinstance(last, str):
                    return last
            time.sleep(0.1)
        bad("%s (last seen: %s)" % (what, json.dumps(last)[:300]))
        return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kill_own_chromium(profile):
    """Every process whose command line names our own profile directory."""
    for _ in range(50):
        left = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if profile.encode() in f.read():
                        left.append(int(pid))
            except OSError:
                continue
        if not left:
            return
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


# what the page shows, read with small scripts (the DOM is the page's truth)
LOADED = ("var m=document.getElementById('main');"
          "return m.dataset.page===arguments[0] && Number(m.dataset.loaded)>=arguments[1] ? 'OK' : ''")
ROW = ("var r=document.querySelector('#queue tr[data-job=\"'+arguments[0]+'\"]');"
       "return r ? {state:r.dataset.state, type:r.querySelector('.type').textContent,"
       " text:r.textContent} : null")


def loaded_count(wd):
    return int(wd.js("return Number(document.getElementById('main').dataset.loaded)") or 0)


def goto(wd, link_css, page):
    wd.click(link_css)
    return wd.wait("%s page loads" % page, LOADED, page, 1)


def login(wd, args, token, want_who):
    wd.wait("login form shown", "return !document.getElementById('login').hidden ? 'OK' : ''")
    wd.type("#token", token)
    wd.click("#login-btn")
    return wd.wait("logged in as %s" % want_who,
                   "var w=document.getElementById('who').textContent;"
                   "return w===arguments[0] ? 'OK '+w : ''", want_who)


# GET /v1/stats as /tmp/iface12.md specifies it (a series of 30 samples, 10 s
# apart): the page's own fetch answers it for this one check, so the drawing
# code is tested whatever this controller's /v1/stats holds so far (its
# series needs minutes of samples); the real endpoint is restored after
SAMPLE_STATS = '''
var t0 = Math.floor(Date.now() / 1000) - 300, t = [], p = [], r = [], h = [], a = [];
for (var k = 0; k < 30; k++) { t.push(t0 + 10 * k); p.push(k % 7); r.push(2 + k % 3);
  h.push(k % 5); a.push(4 - k % 4); }
var stats = {t: t0 + 300, types: [
  {type: "H100-SXM-80GB", total: 4, allocated: 2, idle: 2, down: 0, usd_per_gpu_hour: 3.99},
  {type: "A100-80GB-SXM", total: 4, allocated: 4, idle: 0, down: 0, usd_per_gpu_hour: 1.9}],
  cost_usd_per_hour: 15.58, jobs: {pending: 1, running: 2, held: 0},
  series: {interval_s: 10, t: t, pending: p, running: r,
    allocated: {"H100-SXM-80GB": h, "A100-80GB-SXM": a}, total: {"H100-SXM-80GB": 4, "A100-80GB-SXM": 4}}};
if (!window.realFetch) window.realFetch = window.fetch;
window.fetch = function (u, o) {
  if (String(u).indexOf('/v1/stats') === 0)
    return Promise.resolve(new Response(JSON.stringify(stats),
                                        {status: 200, headers: {'Content-Type': 'application/json'}}));
  return window.realFetch(u, o);
};
refreshSoon(0);
'''


def charts_sample(wd, a):
    wd.js(SAMPLE_STATS)
    got = wd.wait("charts drawn from a /v1/stats series",
                  "var u=document.querySelectorAll('#chart-util polyline'),"
                  "q=document.querySelectorAll('#chart-queue polyline');"
                  "return u.length===2 && q.length===2 &&"
                  " u[0].getAttribute('points').split(' ').length===30 &&"
                  " document.getElementById('cost-rate').textContent==='$15.58/h' ?"
                  " {util:[...u].map(l=>l.dataset.series),"
                  " points:u[0].getAttribute('points').split(' ').length,"
                  " rate:document.getElementById('cost-rate').textContent} : null")
    if got and got["points"] == 30 and sorted(got["util"]) == sorted([a.h100_type, a.a100_type]) \
            and got["rate"] == "$15.58/h":
        ok("charts: utilisation lines per GPU type (%s, 30 points) and queue length drawn "
           "from a series in /v1/stats's format" % ", ".join(got["util"]))
        wd.screenshot(os.path.join(a.shots, "charts-sample.png"))
    elif got:
        bad("charts from a sample series: %s" % got)
    wd.js("if (window.realFetch) window.fetch = window.realFetch; refreshSoon(0);")


def run(wd, a):
    shots = {}
    wd.go(a.url)
    # a wrong token: the form says why and stays
    wd.wait("login form shown", "return !document.getElementById('login').hidden ? 'OK' : ''")
    wd.type("#token", "drv_0000")
    wd.click("#login-btn")
    if wd.wait("a wrong token is refused in the form",
               "var e=document.getElementById('login-error').textContent;"
               "return e.indexOf('unknown or revoked token')>=0 ? 'OK' : ''"):
        ok("a wrong token is refused by the login form (%s)" %
           wd.js("return document.getElementById('login-error').textContent"))
    wd.js("document.getElementById('token').value=''")
    if login(wd, a, a.token, a.op_who):
        ok("logged in through the form: the header shows '%s'" % a.op_who)
    cookie = wd.js("return document.cookie")
    if cookie == "":
        ok("the session cookie is HttpOnly (invisible to the page's script)")
    else:
        bad("document.cookie shows: %s" % cookie)

    # live updates: the event stream where the controller has one, else polling
    want_live = "live" if a.events else "polling"
    if wd.wait("the header says '%s'" % want_live,
               "return document.getElementById('live').textContent===arguments[0] ? 'OK' : ''",
               want_live):
        ok("live updates: %s (%s)" % (want_live, "GET /v1/events?follow=1" if a.events
                                      else "this controller has no /v1/events"))

    # overview: GPUs per type from the live cluster
    if wd.wait("overview loads", LOADED, "overview", 1):
        cards = wd.js("return [...document.querySelectorAll('.gputype')].map(c=>({type:c.dataset.type,"
                      "alloc:Number(c.querySelector('.alloc').textContent),"
                      "idle:Number(c.querySelector('.idle').textContent)}))")
        got = {c["type"]: (c["alloc"], c["idle"]) for c in cards}
        want = {a.h100_type: (a.h100_alloc, 4 - a.h100_alloc), a.a100_type: (4, 0)}
        if got == want:
            ok("overview: GPUs per type (allocated, idle) %s" % got)
        else:
            bad("overview: %s, wanted %s" % (got, want))
        rate = wd.js("return document.getElementById('cost-rate').textContent")
        if rate and rate.startswith("$") and float(rate[1:].split("/")[0]) > 0:
            ok("overview: a cost rate while jobs run (%s)" % rate)
        else:
            bad("overview: cost rate %r" % rate)
        charts = wd.js("return [...document.querySelectorAll('#charts .chart')].map(c=>c.id)")
        if "chart-util" in charts and "chart-cost" in charts:
            ok("overview: chart panels drawn (%s)" % ", ".join(charts))
        else:
            bad("overview: charts %s" % charts)
        # the controller samples every second here (--stats-interval 1s):
        # within a few seconds the charts are drawn from its own series (30 s
        # allowed: under ASan on a loaded 2-core CI machine 15 s once passed
        # without three samples drawn)
        real = wd.wait("charts drawn from the controller's own /v1/stats samples",
                       "refreshSoon(); var u=document.querySelectorAll('#chart-util polyline'),"
                       "q=document.querySelectorAll('#chart-queue polyline');"
                       "return u.length===2 && q.length===2 && "
                       "u[0].getAttribute('points').split(' ').length>=3 ? "
                       "{util:[...u].map(l=>l.dataset.series),"
                       " points:u[0].getAttribute('points').split(' ').length} : null", timeout=30.0)
        if real and sorted(real["util"]) == sorted([a.h100_type, a.a100_type]):
            ok("charts: utilisation per GPU type (%s) and queue length from the live controller's "
               "series (%d samples)" % (", ".join(real["util"]), real["points"]))
        elif real:
            bad("charts from the live series: %s" % real)
        shots["overview"] = wd.screenshot(os.path.join(a.shots, "overview.png"))
        charts_sample(wd, a)

    # queue: every submitted job with its state and GPU type
    if goto(wd, "nav a[data-route=queue]", "queue"):
        want = {a.h100_job: ("running", a.h100_type), a.a100_job: ("running", a.a100_type),
                a.pending_job: ("pending", "A100")}
        for jid, (st, ty) in want.items():
            r = wd.wait("queue shows job %s %s" % (jid, st),
                        ROW.replace("return r ?", "return r && r.dataset.state===arguments[1] ?"), jid, st)
            if r and r["type"].startswith(ty):
                ok("queue: job %s %s on %s" % (jid, st, r["type"]))
            elif r:
                bad("queue: job %s type %s, wanted %s" % (jid, r["type"], ty))
        # the text filter: only the pending job's name matches
        wd.type("#f-text", "eval-pending")
        rows = wd.js("return [...document.querySelectorAll('#queue tbody tr')].map(r=>r.dataset.job)")
        if rows == [str(a.pending_job)]:
            ok("queue: the search filter leaves only job %s" % a.pending_job)
        else:
            bad("queue: filter left %s" % rows)
        wd.js("var f=document.getElementById('f-text'); f.value=''; f.dispatchEvent(new Event('input'))")
        shots["queue"] = wd.screenshot(os.path.join(a.shots, "queue.png"))

        # the job page: placement, events, output; then cancel it from there
        wd.click('#queue a[href="#/job/%s"]' % a.h100_job)
        if wd.wait("job page loads", LOADED, "job", 1):
            wd.wait("job page shows the job's output",
                    "return document.getElementById('job-output').textContent.indexOf(arguments[0])>=0"
                    " ? 'OK' : ''", a.h100_output)
            pl = wd.js("return document.getElementById('job-placement').textContent")
            ev = wd.js("return [...document.querySelectorAll('#job-events li b')].map(b=>b.textContent)")
            if a.h100_type in pl and "n1" in pl:
                ok("job page: placement on n1, %s" % a.h100_type)
            else:
                bad("job page placement: %s" % pl)
            # why this type: every type it may use, the one it got marked
            sp = wd.js("return [...document.querySelectorAll('#job-speeds tbody tr')].map(r=>"
                       "[r.dataset.type, r.classList.contains('chosen')])")
            if sp and [t for t, chosen in sp if chosen] == [a.h100_type]:
                ok("job page: why this GPU type, %d candidate type(s), %s marked" % (len(sp), a.h100_type))
            else:
                bad("job page speeds: %s" % sp)
            if "submit" in ev and "start" in ev:
                ok("job page: events timeline %s" % ev)
            else:
                bad("job page events: %s" % ev)
            ok("job page: output tail shows '%s'" % a.h100_output)
            shots["job"] = wd.screenshot(os.path.join(a.shots, "job.png"))
            wd.click("button.cancel[data-job='%s']" % a.h100_job)
            if wd.wait("job page shows the job cancelled",
                       "return document.querySelector('#job-title .state').textContent==='cancelled'"
                       " ? 'OK' : ''", timeout=15):
                ok("cancel from the job page: the page shows job %s cancelled" % a.h100_job)

    # nodes: GPU types, health, a drain with a reason through the page
    if goto(wd, "nav a[data-route=nodes]", "nodes"):
        nodes = wd.js("return [...document.querySelectorAll('#nodes tbody tr')].map(r=>[r.dataset.node,"
                      "r.querySelector('.type').textContent, r.dataset.state, !!r.querySelector('button.drain')])")
        want = [["n1", a.h100_type, "up", True], ["n2", a.a100_type, "up", True]]
        if sorted(nodes) == want:
            ok("nodes: %s, with Drain buttons for an operator" % nodes)
        else:
            bad("nodes: %s, wanted %s" % (nodes, want))
        prices = wd.js("return [...document.querySelectorAll('#nodes tbody tr .price')].map(c=>c.textContent)")
        if prices and all(p.startswith("$") and p.endswith("(catalog)") for p in prices):
            ok("nodes: each type's price and where it comes from: %s" % prices)
        else:
            bad("nodes prices: %s" % prices)
        wd.type("#drain-reason", "fan failure (dashboard test)")
        wd.click("button.drain[data-node=n2]")
        if wd.wait("nodes page shows n2 drained with the reason",
                   "var r=document.querySelector('#nodes tr[data-node=n2]');"
                   "return r.dataset.state==='drain' && r.querySelector('.reason').textContent.indexOf("
                   "'fan failure (dashboard test)')>=0 && r.querySelector('button.resume') ? 'OK' : ''"):
            ok("drain from the nodes page: n2 drained with the reason, Resume offered")
        shots["nodes"] = wd.screenshot(os.path.join(a.shots, "nodes.png"))

    # a user who is not an operator: no drain buttons; the controller refuses
    # to cancel someone else's job and the page says why
    wd.click("#logout")
    if login(wd, a, a.user_token, a.user_who):
        ok("logged out and in again as %s" % a.user_who)
        if goto(wd, "nav a[data-route=nodes]", "nodes"):
            n = wd.js("return document.querySelectorAll('button.drain, button.resume, #drain-reason').length")
            if n == 0:
                ok("nodes: no drain controls for a user")
            else:
                bad("nodes: %d drain controls for a user" % n)
        if goto(wd, "nav a[data-route=queue]", "queue"):
            wd.wait("queue shows the pending job", ROW, a.pending_job)
            wd.click("button.cancel[data-job='%s']" % a.pending_job)
            msg = wd.wait("the refusal is shown",
                          "var f=document.getElementById('flash');"
                          "return !f.hidden && f.textContent.indexOf('belongs to')>=0 ? 'OK '+f.textContent : ''")
            if msg:
                ok("cancel of another user's job: the page shows the controller's refusal (%s)" % msg[3:])
    for name, size in sorted(shots.items()):
        print("note: screenshot %s.png %d bytes" % (name, size))
    if len(shots) == 4:
        ok("screenshots of overview, queue, job and nodes in %s" % a.shots)
    else:
        bad("screenshots: only %s" % sorted(shots))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--op-who", required=True)
    p.add_argument("--user-token", required=True)
    p.add_argument("--user-who", required=True)
    p.add_argument("--h100-job", type=int, required=True)
    p.add_argument("--h100-type", required=True)
    p.add_argument("--h100-alloc", type=int, required=True)
    p.add_argument("--h100-output", required=True)
    p.add_argument("--a100-job", type=int, required=True)
    p.add_argument("--a100-type", required=True)
    p.add_argument("--pending-job", type=int, required=True)
    p.add_argument("--shots", required=True)
    p.add_argument("--events", type=int, default=0, help="1: the controller has /v1/events")
    p.add_argument("--scratch", required=True)
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    a = p.parse_args()
    os.makedirs(a.shots, exist_ok=True)
    profile = os.path.join(a.scratch, "chrome-profile")
    a.chrome_args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--user-data-dir=" + profile, "--window-size=1200,800", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking", "--disable-sync",
                     "--disable-component-update", "--password-store=basic", "--hide-scrollbars"]
    port = free_port()
    log = open(os.path.join(a.scratch, "chromedriver.log"), "wb")
    drv = subprocess.Popen([a.chromedriver, "--port=%d" % port, "--allowed-ips=127.0.0.1"],
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    with open(os.path.join(a.scratch, "chromedriver.pid"), "w") as f:
        f.write(str(drv.pid))
    wd = WebDriver(port)
    try:
        for _ in range(100):
            try:
                if wd.call("GET", "/status", timeout=2).get("ready"):
                    break
            except Exception:  # noqa: BLE001 - not listening yet
                pass
            time.sleep(0.05)
        wd.start(a)
        run(wd, a)
    except Exception as e:  # noqa: BLE001 - reported as a failure, cleanup follows
        bad("driver: %s" % e)
    finally:
        wd.quit()
        drv.terminate()
        try:
            drv.wait(5)
        except subprocess.TimeoutExpired:
            drv.kill()
            drv.wait()
        kill_own_chromium(profile)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
