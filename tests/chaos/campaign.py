#!/usr/bin/env python3
"""campaign.py - `make chaos`: consecutive seeded runs of the chaos suite
(chaos.py, full length), one table row per run with its seed and invariant
counts.  Exit status 0 only when every run held every invariant with every
fault injected; 77 when every run held them but some fault could not be
injected on this machine (a run's exit 77: no tmpfs, libfaketime or network
namespaces; CHAOS_ARGS=--allow-missing-faults accepts that); 1 otherwise.

  campaign.py [--runs 10] [--seed BASE] [chaos.py options...]

Run i uses seed BASE+i (BASE random unless given, and printed), so a
campaign is reproduced by its base seed and a single run by its row's seed.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

COLS = [("seed", "seed"), ("ok", "ok"), ("ctld_kills", "ctld-kill"), ("accepted", "accepted"),
        ("finished", "finished"), ("queued", "queued"), ("lost", "lost"), ("run_twice", "twice"),
        ("agent_runs", "rank-runs"), ("overlap_agentlog", "overlap(log)"), ("overlap_jobs", "overlap(job)"),
        ("gang_restarts", "gang-restarts"), ("corrupted", "ckpt-corrupt"), ("rejected", "rejected"),
        ("bad_resume", "bad-resume"), ("worst_lost_s", "worst-lost-s"), ("frames_injected", "frames-bad"),
        ("frames_dropped", "dropped"), ("leftover", "leftover")]


def main():
    argv = sys.argv[1:]
    runs, base = 10, None
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] == "--runs":
            runs = int(argv[i + 1])
            i += 2
        elif argv[i] == "--seed":
            base = int(argv[i + 1])
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    if base is None:
        base = random.SystemRandom().randrange(1, 1 << 30)
    print("chaos campaign: %d runs, seeds %d..%d %s" % (runs, base, base + runs - 1, " ".join(rest)), flush=True)
    rows = []
    for k in range(runs):
        seed = base + k
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        logf = os.path.join(tempfile.gettempdir(), "drover-chaos-seed-%d.log" % seed)
        with open(logf, "w") as lf:
            rc = subprocess.call([sys.executable, os.path.join(HERE, "chaos.py"), "--seed", str(seed), "--json",
                                  out] + rest, stdout=lf, stderr=subprocess.STDOUT)
        try:
            with open(out) as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = {"seed": seed, "ok": False}
        os.unlink(out)
        # 77: every invariant held, but a fault could not be injected here
        res["skipped"] = bool(res.get("ok")) and rc == 77
        res["ok"] = res.get("ok") and rc == 0
        if res["ok"] or res["skipped"]:
            os.unlink(logf)
        rows.append(res)
        print("run %d/%d: seed %d %s%s" % (k + 1, runs, seed,
                                          "ok" if res["ok"] else "ok, but faults missing" if res["skipped"]
                                          else "FAILED", "" if res["ok"] or res["skipped"]
                                          else " (log: %s)" % logf), flush=True)
    w = [max(len(h), 6) for _, h in COLS]
    print()
    print("  ".join(h.rjust(w[i]) for i, (_, h) in enumerate(COLS)))
    for r in rows:
        cells = []
        for i, (k, _) in enumerate(COLS):
            v = r.get(k, "-")
            if k == "ok":
                v = "yes" if v else "skip" if r.get("skipped") else "NO"
            elif isinstance(v, float):
                v = "%.1f" % v
            cells.append(str(v).rjust(w[i]))
        print("  ".join(cells))
    bad = [r["seed"] for r in rows if not r["ok"] and not r.get("skipped")]
    print()
    if bad:
        print("chaos campaign: %d of %d runs failed (seeds %s)" % (len(bad), runs, " ".join(map(str, bad))))
        return 1
    missing = sorted({m for r in rows if r.get("skipped") for m in r.get("missing_faults", [])})
    if missing:
        print("chaos campaign: every run held every invariant, but not under every fault: could not inject "
              "%s (run as root where `ip netns` works, scripts/bootstrap; or --allow-missing-faults)"
              % "; ".join(missing))
        return 77
    print("chaos campaign: all %d runs held every invariant" % runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
