"""ddp_train.py - a small PyTorch DistributedDataParallel training run, as a
drover gang runs it: the rank variables come from drover (or from torchrun,
which drover starts), the backend is gloo on CPU.  Each rank trains on its
own slice of a synthetic regression set, DDP all-reduces the gradients, rank
0 writes a checkpoint (with its SHA-256 beside it), and at the end every rank
checks that all ranks hold bit-identical weights.

    python3 ddp_train.py OUTDIR [STEPS] [CKPT_STEPS]
writes OUTDIR/rank-R.json: rank, world size, host, final loss, weight digest,
and whether all digests agreed; exits 1 if they did not.  Rank 0 also writes
OUTDIR/final.pt (the final weights).

Checkpoints, as drover runs a job with --checkpoint-every: with
$DROVER_CHECKPOINT_DIR set, every CKPT_STEPS steps (default 10) rank 0 saves
$DROVER_CHECKPOINT_DIR/step-NNNNNN/state.pt (weights, optimizer state, step)
and runs `drover ckpt commit` on it, which writes its manifest; a restarted
generation finds the newest checkpoint that verified in $DROVER_RESTART_FROM
and every rank goes on from there.  Step s of rank r draws its batch from a
generator seeded with (r, s), so a resumed run sees the batches an
uninterrupted one does.  For tests, DDP_PAUSE_AT=N makes a run that did not
restart stop at step N (OUTDIR/paused says so) until it is killed."""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()


def save_checkpoint(ckdir, step, model, opt):
    """Rank 0: write step-NNNNNN afresh (a resumed run may rewrite one the
    lost generation left) and commit it; drover prunes the old ones."""
    d = os.path.join(ckdir, "step-%06d" % step)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step},
               os.path.join(d, "state.pt"))
    subprocess.run(["drover", "ckpt", "commit", d], check=True, stdout=sys.stderr)


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    ck_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    ckdir = os.environ.get("DROVER_CHECKPOINT_DIR")
    restart = os.environ.get("DROVER_RESTART_FROM")
    pause_at = int(os.environ.get("DDP_PAUSE_AT", "0"))
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts them)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    start = 0
    if restart:  # every rank loads the same verified checkpoint
        st = torch.load(os.path.join(restart, "state.pt"))
        model.module.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        start = st["step"]
        print("rank %d: resumed from %s at step %d" % (rank, restart, start), flush=True)
    w_true = torch.arange(8, dtype=torch.float32) / 8
    loss = None
    for step in range(start, steps):
        if pause_at and not restart and step == pause_at:
            if rank == 0:
                open(os.path.join(out, "paused"), "w").close()
            while True:  # until the test kills the job's node
                time.sleep(1)
        # a different data slice per rank, the same batch for a step however the run got there
        g = torch.Generator().manual_seed(1000 + rank * 1000003 + step)
        x = torch.randn(32, 8, generator=g)
        y = (x @ w_true).unsqueeze(1)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        if ckdir and (step + 1) % ck_steps == 0 and step + 1 < steps:
            if rank == 0:
                save_checkpoint(ckdir, step + 1, model, opt)
            dist.barrier()  # nobody runs ahead of a checkpoint that may not exist yet
    mine = digest(model.module)
    if rank == 0:
        torch.save(model.module.state_dict(), os.path.join(out, "final.pt"))
        ckpt = os.path.join(out, "checkpoint.pt")
        torch.save({"model": model.module.state_dict(), "steps": steps}, ckpt)
        with open(ckpt, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        with open(ckpt + ".sha256", "w") as f:
            f.write(sha + "  checkpoint.pt\n")
    every = [None] * world
    dist.all_gather_object(every, mine)
    same = all(d == mine for d in every)
    with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "world": world, "host": socket.gethostname(),
                   "master": os.environ.get("MASTER_ADDR"),
                   "loss": float(loss) if loss is not None else None, "start": start,
                   "digest": mine, "all_equal": same}, f)
    dist.barrier()  # every rank has its answer before any leaves
    # leave at once: tearing gloo down (destroy_process_group, interpreter
    # exit with its threads) can hang on a loaded machine once peers are gone
    sys.stdout.flush()
    os._exit(0 if same else 1)


if __name__ == "__main__":
    main()
