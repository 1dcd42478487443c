#!/usr/bin/env python3
"""chaos.py - drover's seeded chaos suite (issue 11; tests/chaos/README.md).

A controller (droverd) and four agents (drover-agent, in network namespaces
where `ip netns` works, else on loopback), each agent's link through a
fault-injecting proxy (faultproxy.py), run a workload of short one-GPU
batch jobs, a job array and two-node training gangs that checkpoint with
drover's own machinery, while the suite injects, at seeded random times:
kill -9 of the controller (restarted at once from its state directory),
kill -9 of an agent (restarted with the same --state), a partition of one
agent longer than the lease, clock steps on one agent (libfaketime),
corrupted checkpoint files, corrupted and replayed protocol frames, and a
full disk under the controller's state directory.  At the end it checks and
prints the invariants:

  1. accepted = finished + still queued/running; none lost, none run twice
  2. no job ran in two places at once (the agents' logs; the jobs' locks)
  3. no restart from an unverified checkpoint
  4. work lost per failure <= checkpoint interval + detection time

Exit status 0 when all hold, 1 when one does not (the seed is printed
again), 2 when the cluster could not be set up, and 77 (ctest: Skipped) when
all hold but a fault this run was to inject could not be on this machine
(no tmpfs, no libfaketime, no network namespaces: it names which): the
invariants held under fewer faults than the suite claims.  --allow-missing-
faults accepts that (exit 0); --no-tmpfs, --no-clock and --no-netns turn a
fault off on purpose and are not counted as missing.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import faultproxy  # noqa: E402

FAKETIME_LIBS = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                 "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                 "/usr/lib/faketime/libfaketime.so.1"]
TERMINAL = {"completed", "failed", "cancelled", "timeout"}
LIVE = {"pending", "starting", "running", "completing", "requeued", "preempted"}


def boot_now():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def log(msg):
    print("[%7.2f] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def free_port_block(start, n):
    """The first PORT >= START (wrapping in 20000-29000) with PORT..PORT+N-1
    all free to bind on every address now."""
    for k in range(0, 9000, 7):
        base = 20000 + (start - 20000 + k) % (9000 - n)
        ok = True
        for p in range(base, base + n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("0.0.0.0", p))
            except OSError:
                ok = False
            finally:
                s.close()
            if not ok:
                break
        if ok:
            return base
    raise RuntimeError("no %d free ports in 20000-29000" % n)


class Cluster:
    """The processes, namespaces, mounts and files of one run."""

    def __init__(self, args, rng):
        self.args = args
        self.rng = rng
        self.T = tempfile.mkdtemp(prefix="drover-chaos-")
        self.state = os.path.join(self.T, "state")
        os.makedirs(self.state)
        self.sock = os.path.join(self.state, "droverd.sock")
        self.key = os.path.join(self.T, "cluster.key")
        self.conf = os.path.join(self.T, "cluster.conf")
        self.ckroot = os.path.join(self.T, "ckpt")
        for d in ("rec", "lock", "out"):
            os.makedirs(os.path.join(self.T, d))
        pid = os.getpid()
        self.nodes = ["c%d" % i for i in range(1, args.nodes + 1)]
        # ports free now (chaos/short and chaos/preempt run beside the
        # cluster tests: a port from the pid alone could be taken)
        self.port = free_port_block(20000 + (pid * 11) % 9000, 2 + len(self.nodes))
        self.aport = self.port + 1
        self.subnet = None  # claimed with the first veth (_claim_subnet)
        self.pport = {n: self.port + 2 + i for i, n in enumerate(self.nodes)}
        self.tag = "dc%d" % (pid % 100000)
        self.netns = []
        self.mounted = False
        self.fwd_was = None
        self.dproc = None
        self.dstarts = 0
        self.agents = {}  # node -> Popen
        self.astarts = {n: 0 for n in self.nodes}
        self.proxy = None
        self.faked = None  # the node run under libfaketime
        self.ftfile = os.path.join(self.T, "faketime")
        self.lock = threading.Lock()
        self.notes = []
        self.missing = []  # faults asked for that this machine could not inject
        self.save_state = False

    # ---- set-up ----
    def setup(self):
        a = self.args
        if os.geteuid() == 0 and not a.no_tmpfs:
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % a.state_mb, "drover-chaos",
                                self.state], capture_output=True, text=True)
            self.mounted = r.returncode == 0
        if not self.mounted:
            self.notes.append("no tmpfs for the state directory (needs root): the full-disk fault is off")
            if not a.no_tmpfs:
                self.missing.append("full disk (no tmpfs for the state directory: needs root and mount)")
        with open(self.conf, "w") as f:
            if a.storm:  # two GPU types: preemptions, and moves to the faster type
                f.write("NodeName=c1 Gpus=H100-SXM:4 Cpus=16 MemGB=64\n"
                        "NodeName=c2 Gpus=A100-80GB-SXM:4 Cpus=16 MemGB=64\n")
            else:
                f.write("NodeName=c[1-%d] Gpus=H100-SXM:4 Cpus=16 MemGB=64\n" % len(self.nodes))
            f.write("CheckpointDir=%s\nCheckpointKeep=4\n" % self.ckroot)
            if os.geteuid() == 0:  # the workload is submitted by root (a site's default is NO)
                f.write("AllowRootJobs=YES\n")
        subprocess.run([a.droverd, "--gen-key", self.key], check=True, capture_output=True)
        for n in self.nodes:  # each agent holds its own node's key only
            subprocess.run([a.droverd, "--enroll", n, "--key", self.key, "--out", self.node_key(n)],
                           check=True, capture_output=True)
        self.proxy = faultproxy.FaultProxy(seed=a.seed ^ 0x5eed)
        self.use_ns = not a.no_netns and self._netns_ok()
        if self.use_ns:
            for i, n in enumerate(self.nodes, 1):
                self._mk_netns(n, i)
            self.notes.append("agents in network namespaces (10.%d.I.2); partitions take the veth down"
                              % self.subnet)
        else:
            self.notes.append("no network namespaces: agents on loopback; partitions in the proxy")
            if not a.no_netns and a.partitions > 0:
                self.missing.append("partitions of the network (no network namespaces: needs root and "
                                    "ip netns; the proxy's partitions stood in)")
        for i, n in enumerate(self.nodes, 1):
            lh = "10.%d.%d.1" % (self.subnet, i) if self.use_ns else "127.0.0.1"
            self.proxy.add_route(n, lh, self.pport[n], "127.0.0.1", self.aport)
        lib = next((p for p in FAKETIME_LIBS if os.path.exists(p)), None)
        if lib and not a.no_clock:
            self.faked = self.nodes[-1]
            self.ftlib = lib
            with open(self.ftfile, "w") as f:
                f.write("+0\n")
        elif not a.no_clock:
            self.notes.append("libfaketime missing (Debian package faketime; scripts/bootstrap): "
                              "the clock-step fault is skipped")
            self.missing.append("clock steps (libfaketime missing: Debian package faketime, scripts/bootstrap)")
        self.start_ctld()
        for n in self.nodes:
            self.start_agent(n)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if len(self.connected()) == len(self.nodes):
                return True
            time.sleep(0.1)
        log("only %s of %d agents registered" % (self.connected(), len(self.nodes)))
        return False

    def _netns_ok(self):
        if os.geteuid() != 0 or not shutil.which("ip"):
            return False
        ns = "%schk" % self.tag
        if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
            return False
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        return True

    def _ip(self, *args):
        r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("ip %s: %s" % (" ".join(args), r.stderr.strip()))

    def _claim_subnet(self, vh, i):
        """Choose this run's 10.SUBNET.0.0/16, one no address on the host is
        in yet, and put VH's address in it, under the lock cluster_lib.sh's
        cl_subnet_claim holds: chaos/short and chaos/preempt run at once, and
        with the subnet from the pid alone they shared one (1 in 30) and the
        agents' replies left by the other run's veth - "only [] of 2 agents
        registered" in CI. 10.220-249.x keeps apart from the integration
        tests' 10.20-219.x."""
        import fcntl
        with open("/run/drover-tests-subnet.lock", "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            used = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True,
                                  text=True).stdout
            s0 = os.getpid() % 30
            for k in range(30):
                s = (s0 + k) % 30 + 220
                if " inet 10.%d." % s not in used:
                    self._ip("addr", "add", "10.%d.%d.1/30" % (s, i), "dev", vh)
                    self.subnet = s
                    return
        raise RuntimeError("no free 10.220-249.x subnet for the namespaces")

    def _mk_netns(self, n, i):
        ns = "%s-%s" % (self.tag, n)
        self._ip("netns", "add", ns)
        self.netns.append(ns)
        vh, vn = "%sh%d" % (self.tag, i), "%sn%d" % (self.tag, i)
        self._ip("link", "add", vh, "type", "veth", "peer", "name", vn)
        self._ip("link", "set", vn, "netns", ns)
        if self.subnet is None:
            self._claim_subnet(vh, i)
        else:
            self._ip("addr", "add", "10.%d.%d.1/30" % (self.subnet, i), "dev", vh)
        self._ip("link", "set", vh, "up")
        self._ip("-n", ns, "addr", "add", "10.%d.%d.2/30" % (self.subnet, i), "dev", vn)
        self._ip("-n", ns, "link", "set", vn, "up")
        self._ip("-n", ns, "link", "set", "lo", "up")

    def ns_dev(self, n):
        i = self.nodes.index(n) + 1
        return "%s-%s" % (self.tag, n), "%sn%d" % (self.tag, i)

    # ---- processes ----
    def ctld_argv(self):
        a = self.args
        return [a.droverd, "-c", self.conf, "--state", self.state, "--listen", "127.0.0.1:%d" % self.port,
                "--agent-listen", "127.0.0.1:%d" % self.aport, "--key", self.key, "--agent-timeout",
                "%gs" % a.agent_timeout, "--lease", "%gs" % a.lease, "--heartbeat", "0.2s"]

    def start_ctld(self):
        f = open(os.path.join(self.T, "droverd.log"), "a")
        self.dproc = subprocess.Popen(self.ctld_argv(), stdout=f, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        f.close()
        self.dstarts += 1
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.dproc.poll() is not None:
                return False
            try:
                c = UnixHTTP(self.sock, 1)
                c.request("GET", "/v1/ping")
                if c.getresponse().status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def kill9_ctld(self):
        if self.dproc and self.dproc.poll() is None:
            self.dproc.kill()
        if self.dproc:
            self.dproc.wait()

    def node_key(self, n):
        return os.path.join(self.T, "node-%s.key" % n)

    def agent_argv(self, n):
        a = self.args
        host = "10.%d.%d.1" % (self.subnet, self.nodes.index(n) + 1) if self.use_ns else "127.0.0.1"
        argv = [a.agent, "--controller", "%s:%d" % (host, self.pport[n]), "--name", n, "--key", self.node_key(n),
                "--state", os.path.join(self.T, "agent-" + n)]
        if self.use_ns:
            argv = ["ip", "netns", "exec", "%s-%s" % (self.tag, n)] + argv
        return argv

    def start_agent(self, n):
        env = dict(os.environ)
        if n == self.faked:
            env.update(LD_PRELOAD=self.ftlib, FAKETIME_TIMESTAMP_FILE=self.ftfile, FAKETIME_NO_CACHE="1",
                       FAKETIME_DONT_FAKE_MONOTONIC="1")
        f = open(os.path.join(self.T, "agent-%s.log" % n), "a")
        p = subprocess.Popen(self.agent_argv(n), stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env)
        f.close()
        self.agents[n] = p
        self.astarts[n] += 1

    def agent_pid(self, n):
        """The drover-agent's own pid (under `ip netns exec` it is the exec'd process)."""
        return self.agents[n].pid

    def kill9_agent(self, n):
        p = self.agents[n]
        if p.poll() is None:
            p.kill()
        p.wait()

    def connected(self):
        try:
            c = UnixHTTP(self.sock, 2)
            c.request("GET", "/v1/nodes")
            r = c.getresponse()
            body = json.loads(r.read())
            return [x["name"] for x in body["nodes"] if x.get("agent", {}).get("connected")]
        except (OSError, ValueError, KeyError, http.client.HTTPException):
            return []

    def api(self, method, path, body=None, timeout=5):
        """(status, parsed body) or (None, error text) when the controller did not answer."""
        try:
            c = UnixHTTP(self.sock, timeout)
            hdr = {"Content-Type": "application/json"} if body is not None else {}
            c.request(method, path, body=json.dumps(body) if body is not None else None, headers=hdr)
            r = c.getresponse()
            raw = r.read()
            try:
                return r.status, json.loads(raw) if raw else {}
            except ValueError:
                return r.status, {"raw": raw.decode(errors="replace")}
        except (OSError, http.client.HTTPException) as e:
            return None, str(e)

    # ---- tear-down: every process stopped, also on failure ----
    def teardown(self):
        leftovers = []
        procs = [p for p in self.agents.values()] + ([self.dproc] if self.dproc else [])
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 8
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                leftovers.append("%d %s (did not stop on SIGTERM)" % (p.pid, os.path.basename(p.args[0])))
                p.kill()
                p.wait()
        if self.proxy:
            self.proxy.close()
        # anything still running from this run: a leak (jobs are found by
        # their environment, which names this run's directory)
        time.sleep(0.2)
        for pid in self.stray():
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    what = f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
                os.kill(pid, signal.SIGKILL)
                leftovers.append("%d %s" % (pid, what))
            except OSError:
                pass
        for ns in self.netns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if self.save_state:  # a failed run keeps the controller's store (the tmpfs goes)
            shutil.copytree(self.state, self.state + "-kept", ignore=shutil.ignore_patterns("chaos-fill", "*.sock"),
                            dirs_exist_ok=True)
        if self.mounted:
            if subprocess.run(["umount", self.state], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", self.state], capture_output=True)
        return leftovers

    def stray(self):
        me = os.getpid()
        out = []
        needle = ("CHAOS_DIR=" + self.T).encode()
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == me:
                continue
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    env = f.read()
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if needle in env.split(b"\0") or self.T.encode() in cmd:
                out.append(int(d))
        return out


# ---------------------------------------------------------------------------
# the workload


def make_workload(args, rng, cl):
    jobs = []
    env = ["CHAOS_DIR=" + cl.T, "CHAOS_DROVER=" + args.drover, "PATH=/usr/local/bin:/usr/bin:/bin"]
    sh = os.path.join(HERE, "job.sh")
    for i in range(args.batch):
        secs = round(rng.uniform(0.3, 2.5), 2)
        jobs.append({"name": "b%d" % i, "argv": ["sh", sh, "batch", str(secs)], "gpus_per_node": 1,
                     "requeue": True, "time_limit": "10m", "env": env,
                     "output": os.path.join(cl.T, "out", "%j.out")})
    jobs.append({"name": "arr", "argv": ["sh", sh, "batch", "0.5"], "gpus_per_node": 1,
                 "array": "0-%d" % (args.array - 1), "requeue": True, "time_limit": "10m", "env": env,
                 "output": os.path.join(cl.T, "out", "%A_%a.out")})
    for i in range(args.gangs):
        steps = rng.randrange(args.gang_steps // 2, args.gang_steps + 1)
        jobs.append({"name": "g%d" % i, "kind": "train", "argv": ["sh", sh, "gang", str(steps)], "nodes": 2,
                     "gpus_per_node": 1, "requeue": True, "checkpoint_every": "%ds" % args.ckpt_every,
                     "signal": "USR1@5", "time_limit": "10m", "env": env,
                     "output": os.path.join(cl.T, "out", "%j.out")})
    rng.shuffle(jobs)
    return jobs


def make_storm(args, rng, cl):
    """The preemption storm (--storm): long one-GPU jobs fill the cluster -
    most declare checkpoints, two do not - then bursts of short jobs outbid
    them (the drover policy: "outbid by a shorter job").  The long jobs have
    no --signal: they are stopped by SIGTERM at once, write on through its
    grace (job.sh hold), and their next run must start only after.  Returns
    the jobs and their submit times."""
    env = ["CHAOS_DIR=" + cl.T, "CHAOS_DROVER=" + args.drover, "PATH=/usr/local/bin:/usr/bin:/bin"]
    sh = os.path.join(HERE, "job.sh")
    gpus = 4 * len(cl.nodes)
    jobs, times = [], []
    for i in range(gpus):
        spec = {"name": "%s%d" % ("n" if i < 2 else "s", i), "argv": ["sh", sh, "hold", "6"],
                "gpus_per_node": 1, "requeue": True, "time_limit": "30m", "env": env,
                "output": os.path.join(cl.T, "out", "%j.out")}
        if i >= 2:
            spec["checkpoint_every"] = "30s"
        jobs.append(spec)
        times.append(rng.uniform(0, 1))
    for b in range(args.bursts):
        at = 4 + b * args.duration / (args.bursts + 1)
        for i in range(gpus):
            jobs.append({"name": "p%d_%d" % (b, i), "argv": ["sh", sh, "batch", "0.5"], "gpus_per_node": 1,
                         "requeue": True, "time_limit": "1m", "env": env,
                         "output": os.path.join(cl.T, "out", "%j.out")})
            times.append(at + rng.uniform(0, 0.5))
    return jobs, times


def check_storm(cl, sub):
    """The storm's own checks: checkpointing jobs were preempted (else it
    tested nothing), the two that declare no checkpoints never were."""
    fails = []
    preempts = 0
    for jid, name in sub.accepted.items():
        st, ev = cl.api("GET", "/v1/jobs/%d/events" % jid, timeout=10)
        n = sum(1 for e in ev.get("events", []) if e.get("what") == "preempt") if st == 200 else 0
        if name.startswith("n") and n:
            fails.append("storm: job %d (%s) declares no checkpoints and was preempted %d time(s)" % (jid, name, n))
        if name.startswith("s"):
            preempts += n
    print("storm: preemptions of the checkpointing long jobs %d; of those without checkpoints: none allowed"
          % preempts)
    if not preempts:
        fails.append("storm: no preemption happened (nothing was tested)")
    return preempts, fails


class Submitter(threading.Thread):
    """Submits the workload at a seeded pace; a submit counts as accepted only
    when it returned a job id (a 507, a refused connection or a lost reply
    is retried later, under the same name)."""

    def __init__(self, cl, jobs, span, rng, times=None):
        super().__init__(daemon=True, name="submitter")
        self.cl, self.jobs, self.span = cl, jobs, span
        if times is not None:  # given: the jobs in the order of their times
            order = sorted(range(len(jobs)), key=lambda i: times[i])
            self.jobs = [jobs[i] for i in order]
            self.times = [times[i] for i in order]
        else:
            self.times = sorted(rng.uniform(0, span) for _ in jobs)
        self.accepted = {}  # id -> name
        self.by_name = {}
        self.codes = {}
        self.lost_replies = 0
        self.stop = False

    def run(self):
        t0 = time.monotonic()
        for at, spec in zip(self.times, self.jobs):
            while not self.stop and time.monotonic() - t0 < at:
                time.sleep(0.02)
            while not self.stop:
                st, body = self.cl.api("POST", "/v1/jobs", spec, timeout=3)
                self.codes[st] = self.codes.get(st, 0) + 1
                if st == 201 and isinstance(body, dict) and "id" in body:
                    self.accepted[body["id"]] = spec["name"]
                    self.by_name[spec["name"]] = body["id"]
                    break
                if st is None and "timed out" in str(body):
                    self.lost_replies += 1
                if st not in (None, 507, 503, 429):
                    log("submit %s: %s %s" % (spec["name"], st, body))
                    break
                time.sleep(0.3)


# ---------------------------------------------------------------------------
# the fault schedule: a list of (time, kind, draw), all from the seed


def make_schedule(args, rng, cl):
    D = args.duration
    ev = []

    def spread(n, lo, hi, gap):
        ts = []
        tries = 0
        while len(ts) < n and tries < 10000:
            t = rng.uniform(lo, hi)
            tries += 1
            if all(abs(t - u) >= gap for u in ts):
                ts.append(t)
        return sorted(ts)

    for t in spread(args.ctld_kills, 3, D - 2, min(2.0, (D - 5) / max(1, args.ctld_kills) * 0.6)):
        ev.append((t, "ctld-kill", rng.random()))
    if not args.no_agent_kill:
        for t in spread(args.agent_kills, 8, D - 10, 6):
            ev.append((t, "agent-kill", rng.random()))
    for t in spread(args.partitions, 15, D * 0.8, args.lease + 6):
        ev.append((t, "partition", rng.random()))
    if cl.faked:
        for t in spread(3, 5, D - 5, 5):
            ev.append((t, "clock-step", rng.choice([-1, 1]) * rng.randrange(2, 30)))
    for t in spread(args.frames, 2, D - 2, 0.3):
        ev.append((t, rng.choice(["frame-corrupt", "frame-replay"]), rng.random()))
    if cl.mounted:
        for t in spread(1, 10, D * 0.7 - 8, 1):  # while jobs are submitted
            ev.append((t, "disk-full", rng.uniform(3, 6)))
    ev.sort(key=lambda e: e[0])
    return ev


class Chaos:
    def __init__(self, args, cl, sub):
        self.args, self.cl, self.sub = args, cl, sub
        self.counts = {}
        self.busy = {}  # node -> until (monotonic): an agent under a fault of its own
        self.corrupted = {}  # checkpoint dir -> what was done
        self.corrupted_at = {}  # checkpoint dir -> when (boot time)
        self.corrupt_watch = []  # (job id, gen, until) whose new checkpoints are corrupted too
        self.failures = []  # (boot time, kind, node)
        self.partitions = []  # [node, cut (boot time), healed]
        self.frames_sent = {"up": 0, "down": 0}
        self.timers = []
        self.errors = []
        self.ctld_down = 0.0

    def note(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def free_nodes(self):
        now = time.monotonic()
        return [n for n in self.cl.nodes if self.busy.get(n, 0) < now]

    def later(self, secs, fn):
        t = threading.Timer(secs, self._guard, args=(fn,))
        t.daemon = True
        t.start()
        self.timers.append(t)

    def _guard(self, fn):
        try:
            if getattr(fn, "nolock", False):  # must not wait for a fault in progress
                fn()
                return
            with self.cl.lock:
                fn()
        except Exception as e:  # noqa: BLE001 - a fault that could not be applied is reported
            self.errors.append("%s: %s" % (getattr(fn, "__name__", "fault"), e))

    def restart_ctld(self, why):
        t = time.monotonic()
        for i in range(80):
            if self.cl.start_ctld():
                self.ctld_down += time.monotonic() - t
                return
            # as systemd's Restart= would: again, until it starts (on a full
            # state disk it cannot store its new epoch, and exits saying so)
            self.note("ctld-start-refused")
            if i == 0 or i % 10 == 9:
                log("droverd did not start (%s, try %d): %s" % (why, i + 1, self.tail("droverd.log", 1)))
            time.sleep(0.25)
        raise RuntimeError("droverd does not restart")

    def tail(self, name, n):
        try:
            with open(os.path.join(self.cl.T, name)) as f:
                return " | ".join(f.read().splitlines()[-n:])
        except OSError:
            return ""

    def running_gangs(self, node=None):
        st, body = self.cl.api("GET", "/v1/jobs?state=running")
        if st != 200:
            return []
        out = []
        for j in body.get("jobs", []):
            if j.get("kind") == "train" and j.get("nnodes") == 2 and (node is None or node in j["nodes"]):
                out.append(j)
        return out

    def corrupt_newest(self, job, seen=None):
        """Corrupt the job's newest checkpoint when it is committed and
        verified (and not in seen: a watched gang's later commits only)."""
        d = job.get("checkpoint_dir")
        if not d or not os.path.isdir(d):
            return False
        r = subprocess.run([self.args.drover, "ckpt", "list", d, "--json"], capture_output=True, text=True)
        try:
            cks = json.loads(r.stdout)["checkpoints"]
        except (ValueError, KeyError):
            return False
        if not cks:
            return False
        newest = cks[0]
        if seen is not None:
            if newest["name"] in seen:
                return False
            seen.add(newest["name"])
        if newest.get("state") != "verified":
            return False
        return self.corrupt_dir(os.path.join(d, newest["name"]))

    def checkpoint_names(self, job):
        d = job.get("checkpoint_dir")
        try:
            return set(os.listdir(d)) if d else set()
        except OSError:
            return set()

    def corrupt_dir(self, path):
        if path in self.corrupted:
            return False
        f = os.path.join(path, "blob" if self.cl.rng.random() < 0.7 else "state")
        try:
            size = os.path.getsize(f)
            if self.cl.rng.random() < 0.5 and size > 1:
                os.truncate(f, self.cl.rng.randrange(size))
                how = "truncated %s" % os.path.basename(f)
            else:
                at = self.cl.rng.randrange(size)
                with open(f, "r+b") as fh:
                    fh.seek(at)
                    b = fh.read(1)
                    fh.seek(at)
                    fh.write(bytes([b[0] ^ 0x5A]))
                how = "flipped byte %d of %s" % (at, os.path.basename(f))
        except OSError:
            return False
        self.corrupted[path] = how
        self.corrupted_at[path] = boot_now()
        self.note("ckpt-corrupt")
        log("  corrupted %s: %s" % (path, how))
        return True

    def watch_corruption(self):
        """New checkpoints of a gang cut off by a partition are corrupted too,
        until the gang is stopped: its restart must go back past all of them."""
        now = time.monotonic()
        for w in list(self.corrupt_watch):
            jid, gen, until, seen = w
            if now > until:
                self.corrupt_watch.remove(w)
                continue
            st, j = self.cl.api("GET", "/v1/jobs/%d" % jid, timeout=1)
            if st != 200 or j.get("generation") != gen:
                self.corrupt_watch.remove(w)
                continue
            self.corrupt_newest(j, seen)

    # ---- the faults ----
    def apply(self, kind, draw):
        cl = self.cl
        if kind == "ctld-kill":
            cl.kill9_ctld()
            self.note(kind)
            self.restart_ctld("after kill -9")
        elif kind == "agent-kill":
            free = self.free_nodes()
            if not free:
                return
            n = free[int(draw * len(free))]
            self.busy[n] = time.monotonic() + 4
            cl.kill9_agent(n)
            self.failures.append((boot_now(), "agent-kill", n))
            self.note(kind)
            log("  agent %s killed with SIGKILL" % n)

            def back():
                cl.start_agent(n)
                log("  agent %s restarted" % n)

            back.__name__ = "agent-restart"
            self.later(0.5 + draw * 1.5, back)
        elif kind == "partition":
            gangs = {n: self.running_gangs(n) for n in self.free_nodes()}
            withck = [n for n in gangs if any(self.checkpoint_names(j) for j in gangs[n])]
            cand = withck or [n for n in gangs if gangs[n]] or list(gangs)
            if not cand:
                return
            n = cand[int(draw * len(cand))]
            secs = self.args.lease + 3 + draw * 2
            self.busy[n] = time.monotonic() + secs + 4
            for j in gangs.get(n, []):
                seen = self.checkpoint_names(j)
                if self.corrupt_newest(j):
                    self.corrupt_watch.append((j["id"], j["generation"], time.monotonic() + secs, seen))
            self.cut(n, True)
            self.failures.append((boot_now(), "partition", n))
            window = [n, boot_now(), None]
            self.partitions.append(window)
            self.note(kind)
            log("  %s partitioned for %.1f s (lease %g s); %d gang(s) there" % (n, secs, self.args.lease,
                                                                              len(gangs.get(n, []))))

            def heal():
                self.cut(n, False)
                window[2] = boot_now()
                log("  %s healed" % n)

            heal.__name__ = "heal"
            self.later(secs, heal)
        elif kind == "clock-step":
            with open(cl.ftfile + ".new", "w") as f:
                f.write("%+ds\n" % (draw * 60))
            os.rename(cl.ftfile + ".new", cl.ftfile)
            self.note(kind)
            log("  %s's clock stepped to %+d min" % (cl.faked, draw))
        elif kind in ("frame-corrupt", "frame-replay"):
            n = cl.nodes[int(draw * len(cl.nodes))]
            d = "up" if draw * 10 % 1 < 0.5 else "down"
            (cl.proxy.corrupt if kind == "frame-corrupt" else cl.proxy.replay)(n, d)
            self.note(kind)
        elif kind == "disk-full":
            fill = os.path.join(cl.state, "chaos-fill")
            try:
                with open(fill, "wb") as f:
                    while True:
                        f.write(b"\0" * 65536)
            except OSError:
                pass
            self.note(kind)
            log("  state directory full for %.1f s" % draw)

            def free():
                os.unlink(fill)
                log("  state directory has space again")

            free.__name__ = "disk-free"
            free.nolock = True  # a controller restart waits for it (droverd cannot start on a full disk)
            self.later(draw, free)

    def cut(self, n, down):
        if self.cl.use_ns:
            ns, dev = self.cl.ns_dev(n)
            self.cl._ip("-n", ns, "link", "set", dev, "down" if down else "up")
        else:
            self.cl.proxy.partition(n, down)

    def run(self, schedule):
        t0 = time.monotonic()
        for at, kind, draw in schedule:
            while time.monotonic() - t0 < at:
                time.sleep(0.05)
                if self.corrupt_watch:
                    with self.cl.lock:
                        self.watch_corruption()
            if kind in ("ctld-kill", "agent-kill", "partition", "disk-full", "clock-step"):
                log("fault %s at %.1f s" % (kind, at))
            with self.cl.lock:
                try:
                    self.apply(kind, draw)
                except RuntimeError:
                    raise
                except Exception as e:  # noqa: BLE001
                    self.errors.append("%s: %s" % (kind, e))
        for t in self.timers:
            t.join()


# ---------------------------------------------------------------------------
# the checks

AG_START = re.compile(r"job (\d+)\.(\d+) rank (\d+)/\d+: started pid \d+: .* \[boot ([0-9.]+)\]$")
AG_END = re.compile(r"job (\d+)\.(\d+) rank (\d+): ended: (.*) \[boot ([0-9.]+)\]$")
AG_PREEMPT = re.compile(r"job (\d+)\.(\d+): signal \d+ \(preemption\)")
AG_RESUME = re.compile(r"job (\d+)\.(\d+): (.*) \((\d+) newer rejected\)$")


def read_agent_logs(cl):
    runs = {}  # (job, gen, rank) -> list of [node, start, end]
    resumes = []
    preempted = set()  # (job, gen) signalled for a preemption
    for n in cl.nodes:
        try:
            lines = open(os.path.join(cl.T, "agent-%s.log" % n), errors="replace").read().splitlines()
        except OSError:
            continue
        for ln in lines:
            m = AG_START.search(ln)
            if m:
                k = (int(m[1]), int(m[2]), int(m[3]))
                runs.setdefault(k, []).append([n, float(m[4]), None])
                continue
            m = AG_END.search(ln)
            if m:
                k = (int(m[1]), int(m[2]), int(m[3]))
                for r in runs.get(k, []):
                    if r[0] == n and r[2] is None:
                        r[2] = float(m[5])
                        break
                continue
            m = AG_RESUME.search(ln)
            if m:
                resumes.append((int(m[1]), int(m[2]), n, m[3], int(m[4])))
                continue
            m = AG_PREEMPT.search(ln)
            if m:
                preempted.add((int(m[1]), int(m[2])))
    return runs, resumes, preempted


def read_records(cl):
    recs = {}  # (job, rank) -> list of (kind, gen, node, t, rest)
    d = os.path.join(cl.T, "rec")
    for f in os.listdir(d):
        job, rank = f.split(".")
        out = []
        for ln in open(os.path.join(d, f), errors="replace").read().splitlines():
            w = ln.split(" ", 4)
            try:
                out.append((w[0], int(w[1]), w[2], float(w[3]), w[4] if len(w) > 4 else ""))
            except (ValueError, IndexError):
                pass  # a line cut short by a SIGKILL
        recs[(int(job), int(rank))] = out
    return recs


def overlaps(intervals):
    """Pairs of (label, start, end) of different labels that overlap (end None: still open)."""
    bad = []
    iv = sorted(intervals, key=lambda x: x[1])
    for i in range(len(iv)):
        for k in range(i + 1, len(iv)):
            a, b = iv[i], iv[k]
            if a[0] == b[0]:
                continue
            if a[2] is None or b[1] < a[2]:
                bad.append((a, b))
    return bad


def check(args, cl, sub, chaos):
    res = {}
    fails = []
    # 1. nothing lost, nothing run twice
    st, body = cl.api("GET", "/v1/jobs?all=1&limit=0", timeout=30)
    if st != 200:
        fails.append("1: the job listing failed: %s %s" % (st, body))
        return res, fails
    listed = {j["id"]: j for j in body["jobs"]}
    arrays = [i for i, n in sub.accepted.items() if n == "arr"]
    tasks = []
    for a in arrays:
        st, b2 = cl.api("GET", "/v1/jobs?array=%d&all=1&limit=0" % a, timeout=30)
        if st == 200:
            tasks += b2["jobs"]
    finished = queued = lost = 0
    states = {}
    for jid in sub.accepted:
        j = listed.get(jid)
        if j is None:
            lost += 1
            fails.append("1: accepted job %d (%s) is not in the store" % (jid, sub.accepted[jid]))
            continue
        states[j["state"]] = states.get(j["state"], 0) + 1
        if j["state"] != "completed":
            print("  job %d (%s): %s, generation %s: %s" % (jid, j["name"], j["state"], j.get("generation"),
                                                         j.get("reason")))
        if j["state"] in TERMINAL:
            finished += 1
        else:
            queued += 1
    names = {}
    for j in body["jobs"]:
        if j.get("array_parent") is None:  # an array's tasks are its parent's submit
            names.setdefault(j["name"], []).append(j["id"])
    unacked = sum(1 for nm, ids in names.items() if any(i not in sub.accepted for i in ids))
    runs, resumes, preempted = read_agent_logs(cl)
    recs = read_records(cl)
    twice = []
    grace_ends = cutoff_ends = 0
    for (job, gen, rank), rs in runs.items():
        if len(rs) > 1:
            twice.append("job %d.%d rank %d started %d times (%s)" % (job, gen, rank, len(rs),
                                                                    ", ".join(r[0] for r in rs)))
    # generations a rank of which ended on its own while its node was cut
    # off: the controller could not hear of it and requeued the job after
    # the lease (at least once)
    unheard_gens = set()
    for (job, rank), rs in recs.items():
        for e in rs:
            if e[0] == "end" and any(p[0] == e[2] and p[1] - 0.5 <= e[3] <= (p[2] or float("inf")) + 1
                                     for p in chaos.partitions):
                unheard_gens.add((job, e[1]))
    # a generation ran to its end when every rank of it did (a gang one rank
    # of which was stopped did not: it is rightly run again)
    nranks = {}
    ends_of = {}  # (job, gen) -> {rank: end record}
    for (job, rank), rs in recs.items():
        nranks[job] = max(nranks.get(job, 0), rank + 1)
        for r in rs:
            if r[0] == "end":
                if rank in ends_of.setdefault((job, r[1]), {}):
                    twice.append("job %d.%d rank %d ran to its end twice" % (job, r[1], rank))
                ends_of[(job, r[1])][rank] = r
    completed = {}  # job -> generations that ran to their end
    for (job, gen), byrank in ends_of.items():
        if len(byrank) == nranks[job]:
            completed.setdefault(job, []).append(gen)
    # the controller's own record of which generations it preempted (the
    # signal may never have reached an agent): generation g is the g-th start
    for job, gens in completed.items():
        if len(gens) < 2:
            continue
        st, ev = cl.api("GET", "/v1/jobs/%d/events" % job, timeout=10)
        g = 0
        for e in ev.get("events", []) if st == 200 else []:
            if e.get("what") == "start":
                g += 1
            elif e.get("what") == "preempt" and g:
                preempted.add((job, g))
    for job, gens in completed.items():
        gens.sort()
        # one that ended on its own while it was being preempted is requeued
        # all the same (docs/jobspec.md: `trap 'save; exit 0' USR1` is how a
        # job stops for a preemption): not a second run
        by_design = [g for g in gens[:-1] if (job, g) in preempted]
        grace_ends += len(by_design)
        # one whose rank ended while its node was cut off: the controller
        # could not hear of it and requeued the job after the lease
        unheard = [g for g in gens[:-1] if g not in by_design and (job, g) in unheard_gens]
        cutoff_ends += len(unheard)
        if len(gens) - len(by_design) - len(unheard) > 1:
            twice.append("job %d ran to its end %d times (generations %s)" % (job, len(gens), gens))
    for t in twice:
        fails.append("1: " + t)
    res["accepted"] = len(sub.accepted)
    res["finished"] = finished
    res["queued"] = queued
    res["lost"] = lost
    res["run_twice"] = len(twice)
    res["states"] = states
    res["array_tasks"] = len(tasks)
    res["unacked"] = unacked
    res["preempt_grace_ends"] = grace_ends
    res["cutoff_ends"] = cutoff_ends
    print("invariant 1: accepted %d = finished %d + queued/running %d; lost %d; run twice %d  (%s; "
          "array tasks %d; committed but unacknowledged submits %d; generations that ran to their end and "
          "run again: during a preemption's grace %d, while their node was cut off %d)" %
          (len(sub.accepted), finished, queued, lost, len(twice),
           ", ".join("%s %d" % kv for kv in sorted(states.items())), len(tasks), unacked, grace_ends,
           cutoff_ends))
    if finished + queued != len(sub.accepted) or lost:
        fails.append("1: accepted %d != finished %d + queued %d" % (len(sub.accepted), finished, queued))
    # 2. never in two places at once: per job, generations must not overlap
    byjob = {}
    for (job, gen, rank), rs in runs.items():
        for node, s, e in rs:
            byjob.setdefault(job, []).append(((gen, rank), s, e, node))
    ag_bad = []
    for job, iv in byjob.items():
        # same generation on different ranks may overlap (a gang); different generations never
        gi = [(g, s, e) for (g, r), s, e, n in iv]
        for a, b in overlaps(gi):
            ag_bad.append("job %d: generation %d [%.2f-%s] overlaps generation %d from %.2f" %
                          (job, a[0], a[1], "still running" if a[2] is None else "%.2f" % a[2], b[0], b[1]))
        # the same (gen, rank) twice at once
        seen = {}
        for (g, r), s, e, n in iv:
            seen.setdefault((g, r), []).append((n, s, e))
        for (g, r), lst in seen.items():
            if len(lst) > 1:
                for a, b in overlaps([(i, x[1], x[2]) for i, x in enumerate(lst)]):
                    ag_bad.append("job %d.%d rank %d ran twice at once" % (job, g, r))
    lock_bad = []
    job_iv = {}
    for (job, rank), rs in recs.items():
        for r in rs:
            if r[0] == "violation":
                lock_bad.append("job %d rank %d gen %d on %s: %s" % (job, rank, r[1], r[2], r[4]))
        start = {}
        for r in rs:
            if r[0] == "start":
                start[r[1]] = r[3]
            elif r[0] == "end" and r[1] in start:
                job_iv.setdefault(job, []).append((r[1], start.pop(r[1]), r[3]))
        for g, s in start.items():  # never recorded its end: killed; open until its last progress
            last = max([x[3] for x in rs if x[1] == g], default=s)
            job_iv.setdefault(job, []).append((g, s, last))
    for job, iv in job_iv.items():
        for a, b in overlaps(iv):
            lock_bad.append("job %d: its own records: generation %d [%.2f-%.2f] overlaps generation %d from %.2f"
                            % (job, a[0], a[1], a[2], b[0], b[1]))
    nruns = sum(len(v) for v in runs.values())
    res["agent_runs"] = nruns
    res["overlap_agentlog"] = len(ag_bad)
    res["overlap_jobs"] = len(lock_bad)
    print("invariant 2: rank runs in the agents' logs %d, overlapping generations %d; the jobs' locks and "
          "records: %d violation(s)" % (nruns, len(ag_bad), len(lock_bad)))
    for b in ag_bad[:10]:
        fails.append("2 (agents' logs): " + b)
    for b in lock_bad[:10]:
        fails.append("2 (jobs' locks): " + b)
    if len(ag_bad) > 10 or len(lock_bad) > 10:
        fails.append("2: ... %d more" % (len(ag_bad) + len(lock_bad) - 20))
    # 3. no restart from an unverified checkpoint
    gang_ids = {i for i, n in sub.accepted.items() if n.startswith("g")}
    restarts = from_ck = bad3 = 0
    resumed = {}
    for (job, rank), rs in recs.items():
        if job not in gang_ids:
            continue
        for r in rs:
            if r[0] == "badresume":
                bad3 += 1
                fails.append("3: job %d rank %d gen %d: DROVER_RESTART_FROM %s unreadable" % (job, rank, r[1], r[4]))
            if r[0] == "start" and r[1] > 1:
                restarts += 1
            if r[0] == "resume":
                from_ck += 1
                w = r[4].split(" ", 2)
                path, verdict = w[1], w[2] if len(w) > 2 else ""
                resumed[(job, r[1], rank)] = path
                # corrupted before this resume (a checkpoint corrupted after a
                # generation resumed from it is the next restart's business)
                if path in chaos.corrupted and chaos.corrupted_at[path] <= r[3]:
                    bad3 += 1
                    fails.append("3: job %d gen %d rank %d resumed from %s, which the suite corrupted (%s)" %
                                 (job, r[1], rank, path, chaos.corrupted[path]))
                elif verdict != "verified":
                    bad3 += 1
                    fails.append("3: job %d gen %d rank %d resumed from %s, which did not verify then: %s" %
                                 (job, r[1], rank, path, verdict))
    rejected = sum(x[4] for x in resumes)
    agents_say = {}
    for job, gen, node, what, nrej in resumes:
        agents_say[(job, gen)] = what
    for (job, gen, rank), path in resumed.items():
        what = agents_say.get((job, gen), "")
        if os.path.basename(path) not in what:
            bad3 += 1
            fails.append("3: job %d gen %d resumed from %s but its agent's log says '%s'" % (job, gen, path, what))
    ncorr = len(chaos.corrupted)
    res["gang_restarts"] = restarts
    res["resumed_from_ckpt"] = from_ck
    res["corrupted"] = ncorr
    res["rejected"] = rejected
    res["bad_resume"] = bad3
    print("invariant 3: gang rank restarts %d, from a checkpoint %d; checkpoints corrupted %d, rejected at "
          "restarts %d (agents' logs); restarts from an unverified checkpoint %d" %
          (restarts, from_ck, ncorr, rejected, bad3))
    # 4. lost work per failure: progress redone after each restart
    worst = 0.0
    measured = 0
    step_s = 0.25
    for job in gang_ids:
        r0 = recs.get((job, 0), [])
        gens = sorted({r[1] for r in r0})
        for g in gens[1:]:
            prev = [r for r in r0 if r[1] < g and r[0] == "prog"]
            if not prev:
                continue
            reached = max(int(r[4]) for r in prev)
            res_step = 0
            for r in r0:
                if r[0] == "resume" and r[1] == g:
                    res_step = int(r[4].split(" ", 1)[0])
            lost_s = (reached - res_step) * step_s
            # each newer checkpoint rejected at this restart (the suite corrupted it) pushes it back
            # one interval
            skipped = max([x[4] for x in resumes if x[0] == job and x[1] == g], default=0)
            bound = args.ckpt_every * (1 + skipped) + args.lease + args.agent_timeout + 2.0
            measured += 1
            worst = max(worst, lost_s)
            if lost_s > bound:
                fails.append("4: job %d gen %d redid %.1f s of work (step %d -> %d), bound %.1f s" %
                             (job, g, lost_s, reached, res_step, bound))
    res["restarts_measured"] = measured
    res["worst_lost_s"] = worst
    print("invariant 4: restarts measured %d, worst work redone %.1f s (bound: checkpoint interval %d s per "
          "checkpoint lost + lease %g s + agent timeout %g s + 2 s)" %
          (measured, worst, args.ckpt_every, args.lease, args.agent_timeout))
    # the frames: injected vs dropped and counted
    inj = {"up": 0, "down": 0}
    for n in cl.nodes:
        s = cl.proxy.stats(n)
        for (d, k), v in s["injected"].items():
            inj[d] += v
    try:
        dlog = open(os.path.join(cl.T, "droverd.log"), errors="replace").read()
    except OSError:
        dlog = ""
    # its drop lines are rate-limited (loglimit.c): a count of lines, at most the drops
    ctld_drops = len(re.findall(r"dropped a frame \(bad tag", dlog))
    ag_drops = 0
    for n in cl.nodes:
        try:
            t = open(os.path.join(cl.T, "agent-%s.log" % n), errors="replace").read()
        except OSError:
            continue
        ag_drops += sum(int(x) for x in re.findall(r"dropped (\d+) frame\(s\) from the controller", t))
    res["frames_injected"] = inj["up"] + inj["down"]
    res["frames_dropped"] = ctld_drops + ag_drops
    print("frames: injected to the controller %d, dropped and counted by it %d; injected to agents %d, "
          "dropped and counted by them %d (at most one note per agent every few seconds)" %
          (inj["up"], ctld_drops, inj["down"], ag_drops))
    if ctld_drops > inj["up"]:
        fails.append("frames: the controller dropped %d frames, only %d were injected" % (ctld_drops, inj["up"]))
    if inj["up"] >= 3 and ctld_drops == 0:
        fails.append("frames: %d bad frames sent to the controller, none counted" % inj["up"])
    return res, fails


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--short", action="store_true", help="the make check run (about 2 minutes)")
    ap.add_argument("--no-agent-kill", action="store_true", help="no kill -9 of agents")
    ap.add_argument("--no-netns", action="store_true")
    ap.add_argument("--no-tmpfs", action="store_true")
    ap.add_argument("--no-clock", action="store_true")
    ap.add_argument("--allow-missing-faults", action="store_true",
                    help="exit 0, not 77, when a fault could not be injected on this machine")
    ap.add_argument("--keep", action="store_true", help="keep the run's directory")
    ap.add_argument("--json", help="write the invariant counts here")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--lease", type=float, default=6)
    ap.add_argument("--agent-timeout", type=float, default=2)
    ap.add_argument("--ckpt-every", type=int, default=4)
    ap.add_argument("--state-mb", type=int, default=64)
    ap.add_argument("--storm", action="store_true",
                    help="the preemption storm instead (2 nodes, about 45 s; ctest chaos/preempt)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 1 << 31)
    if args.storm:
        # a few controller kills and bad frames: the stops must survive them
        args.nodes, args.no_clock, args.no_tmpfs = 2, True, True
        args.duration, args.bursts, args.batch, args.array, args.gangs = 24, 3, 0, 0, 0
        args.ctld_kills, args.agent_kills, args.partitions, args.frames = 3, 0, 0, 6
        args.settle = 60
    elif args.short:
        args.duration, args.batch, args.array, args.gangs, args.gang_steps = 75, 80, 20, 8, 80
        args.ctld_kills, args.agent_kills, args.partitions, args.frames = 22, 1, 1, 24
        args.settle = 60
    else:
        args.duration, args.batch, args.array, args.gangs, args.gang_steps = 130, 200, 50, 16, 100
        args.ctld_kills, args.agent_kills, args.partitions, args.frames = 40, 3, 3, 60
        args.settle = 90
    build = os.environ.get("DROVER_BINARY_DIR", os.path.join(HERE, "..", "..", "build"))
    args.drover = os.environ.get("DROVER", os.path.join(build, "drover"))
    args.droverd = os.environ.get("DROVERD", os.path.join(build, "droverd"))
    args.agent = os.environ.get("DROVER_AGENT", os.path.join(build, "drover-agent"))
    opts = [a for a in sys.argv[1:] if a not in ("--keep",)]
    if "--seed" in opts:
        k = opts.index("--seed")
        del opts[k:k + 2]
    if "--json" in opts:
        k = opts.index("--json")
        del opts[k:k + 2]
    args.rerun = "%s --seed %d%s" % (sys.argv[0], args.seed, "".join(" " + o for o in opts))
    print("chaos: seed %d (reproduce: %s)" % (args.seed, args.rerun), flush=True)
    rng = random.Random(args.seed)
    cl = Cluster(args, random.Random(args.seed * 7 + 1))
    rc = 0
    fails = []
    res = {}
    chaos = None
    sub = None

    def on_term(sig, frm):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        if not cl.setup():
            fails.append("the cluster did not come up")  # the logs are printed below
            rc = 2
            return rc
        for n in cl.notes:
            print("note: " + n)
        for m in cl.missing:
            print("missing fault: %s%s" % (m, "" if args.allow_missing_faults else " (the run will exit 77)"))
        times = None
        if args.storm:
            jobs, times = make_storm(args, rng, cl)
        else:
            jobs = make_workload(args, rng, cl)
        sched = make_schedule(args, rng, cl)
        kinds = {}
        for e in sched:
            kinds[e[1]] = kinds.get(e[1], 0) + 1
        if args.storm:
            print("chaos: preemption storm: %d long jobs, %d bursts of %d short ones; faults: %s" %
                  (4 * len(cl.nodes), args.bursts, 4 * len(cl.nodes),
                   ", ".join("%s %d" % kv for kv in sorted(kinds.items()))), flush=True)
        else:
            print("chaos: %d submits (%d batch, an array of %d, %d gangs) over %d s; faults: %s" %
                  (len(jobs), args.batch, args.array, args.gangs, int(args.duration * 0.7),
                   ", ".join("%s %d" % kv for kv in sorted(kinds.items()))), flush=True)
        sub = Submitter(cl, jobs, args.duration * 0.7, random.Random(args.seed + 3), times)
        chaos = Chaos(args, cl, sub)
        sub.start()
        chaos.run(sched)
        sub.join(timeout=args.settle)
        if sub.is_alive():
            fails.append("the submitter did not finish (controller unavailable?)")
            sub.stop = True
        log("faults over; waiting up to %d s for the accepted jobs to end" % args.settle)
        deadline = time.monotonic() + args.settle
        while time.monotonic() < deadline:
            st, body = cl.api("GET", "/v1/jobs")
            if st == 200 and not body.get("jobs"):
                break
            time.sleep(0.5)
        log("settled; checking")
        res, f2 = check(args, cl, sub, chaos)
        fails += f2
        res["ctld_kills"] = chaos.counts.get("ctld-kill", 0)
        res["faults"] = dict(chaos.counts)
        res["submit_codes"] = {str(k): v for k, v in sub.codes.items()}
        refused = {k: v for k, v in sub.codes.items() if k not in (201, None, 429, 503, 507)}
        if refused or not sub.accepted:  # a workload refused proves nothing about the faults
            fails.append("submits refused (status: count): %s, %d accepted" % (refused, len(sub.accepted)))
        print("faults applied: %s; controller down %.1f s in all; submit replies %s" %
              (", ".join("%s %d" % kv for kv in sorted(chaos.counts.items())), chaos.ctld_down,
               ", ".join("%s: %d" % kv for kv in sorted(res["submit_codes"].items()))))
        if args.storm:
            res["storm_preempts"], f3 = check_storm(cl, sub)
            fails += f3
        elif res["ctld_kills"] < 20:
            fails.append("only %d controller kills (want at least 20)" % res["ctld_kills"])
        for e in chaos.errors:
            fails.append("fault error: " + e)
    except KeyboardInterrupt:
        fails.append("interrupted")
    except Exception as e:  # noqa: BLE001 - reported with the seed
        import traceback
        traceback.print_exc()
        fails.append("the suite failed: %s" % e)
    finally:
        if sub:
            sub.stop = True
        cl.save_state = bool(fails) or rc != 0 or args.keep
        left = cl.teardown()
        for l in left:
            fails.append("leftover process: " + l)
        print("teardown: %d leftover process(es)" % len(left))
        res["seed"] = args.seed
        res["leftover"] = len(left)
        res["ok"] = not fails and rc == 0
        res["missing_faults"] = cl.missing
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f)
        if fails:
            for f in fails:
                print("FAIL " + f)
            for name in ["droverd.log"] + ["agent-%s.log" % n for n in cl.nodes]:
                p = os.path.join(cl.T, name)
                if os.path.exists(p):
                    print("--- %s (last 15 lines)" % name)
                    print("\n".join(open(p, errors="replace").read().splitlines()[-15:]))
            print("chaos: FAILED with seed %d (rerun: %s; logs kept in %s)" % (args.seed, args.rerun, cl.T))
            rc = rc or 1
        else:
            print("chaos: all invariants hold (seed %d)" % args.seed)
            if not args.keep:
                shutil.rmtree(cl.T, ignore_errors=True)
            if cl.missing and not args.allow_missing_faults:
                # the invariants held, but under fewer faults than this run
                # claims to inject: not a pass (ctest counts 77 as Skipped)
                print("chaos: SKIPPED, not passed: these faults could not be injected here: %s "
                      "(--allow-missing-faults accepts the run)" % "; ".join(cl.missing))
                rc = 77
    return rc


if __name__ == "__main__":
    sys.exit(main())
