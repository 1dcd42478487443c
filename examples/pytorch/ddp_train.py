"""ddp_train.py - a small PyTorch DistributedDataParallel training run, as a
drover gang runs it: the rank variables come from drover (or from torchrun,
which drover starts), the backend is gloo on CPU.  Each rank trains on its
own slice of a synthetic regression set, DDP all-reduces the gradients, rank
0 writes a checkpoint (with its SHA-256 beside it), and at the end every rank
checks that all ranks hold bit-identical weights.

    python3 ddp_train.py OUTDIR [STEPS]
writes OUTDIR/rank-R.json: rank, world size, host, final loss, weight digest,
and whether all digests agreed; exits 1 if they did not."""
import hashlib
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts them)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1000 + rank)  # a different data slice per rank
    w_true = torch.arange(8, dtype=torch.float32) / 8
    loss = None
    for _ in range(steps):
        x = torch.randn(32, 8, generator=g)
        y = (x @ w_true).unsqueeze(1)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
    mine = digest(model.module)
    if rank == 0:
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
                   "master": os.environ.get("MASTER_ADDR"), "loss": float(loss),
                   "digest": mine, "all_equal": same}, f)
    dist.barrier()  # every rank has its answer before any leaves
    # leave at once: tearing gloo down (destroy_process_group, interpreter
    # exit with its threads) can hang on a loaded machine once peers are gone
    sys.stdout.flush()
    os._exit(0 if same else 1)


if __name__ == "__main__":
    main()
