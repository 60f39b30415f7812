#!/usr/bin/env python3
"""A data-parallel training step whose gradient all-reduce goes through gpupeer, checked
against the same step through torch.distributed (gloo).

Each rank is one process: on its own GPU when there are enough, else all on GPU 0 (correct,
slower). Every rank starts from the same weights, takes a different batch, and averages the
gradients with gpupeer (one flat buffer, op="avg") before the optimiser step; a twin model does
the same with torch.distributed.all_reduce. Both must end with the same weights.

    PYTHONPATH=python python3 examples/data_parallel_step.py [--world-size 2] [--steps 3]
"""

import argparse
import copy
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import gpupeer.torch


def make_model(device):
    torch.manual_seed(0)  # the same initial weights on every rank
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to(device)


def gradients_through_gpupeer(model, comm):
    """Averages every parameter's gradient across ranks in one all-reduce of a flat buffer."""
    grads = [p.grad for p in model.parameters()]
    flat = torch.cat([g.flatten() for g in grads])
    comm.all_reduce(flat, op="avg")  # on torch's current stream, like the step's kernels
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def gradients_through_torch_distributed(model, world):
    for p in model.parameters():
        g = p.grad.cpu()
        dist.all_reduce(g)  # gloo: CPU tensors
        p.grad.copy_(g.to(p.grad.device) / world)


def rank_main(rank, world, store, steps, results):
    try:
        run_rank(rank, world, store, steps, results)
    except BaseException:
        results.put((rank, float("inf")))  # the parent stops waiting; the traceback is on stderr
        raise


def run_rank(rank, world, store, steps, results):
    device = rank if torch.cuda.device_count() >= world else 0
    torch.cuda.set_device(device)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    comm = gpupeer.torch.init_from_process_group()
    model = make_model(device)
    twin = copy.deepcopy(model)
    opt, twin_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, twin))
    worst = 0.0
    for step in range(steps):
        torch.manual_seed(100 * step + rank)  # a different batch per rank and step
        x, y = torch.randn(16, 32, device=device), torch.randn(16, 8, device=device)
        for m, o, reduce in ((model, opt, lambda m: gradients_through_gpupeer(m, comm)),
                             (twin, twin_opt, lambda m: gradients_through_torch_distributed(m, world))):
            o.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            reduce(m)
            o.step()
        diff = max((a - b).abs().max().item() for a, b in zip(model.parameters(), twin.parameters()))
        worst = max(worst, diff)
        if rank == 0:
            print("step %d: loss %.5f, max |gpupeer - torch.distributed| over the weights = %.3g"
                  % (step, loss.item(), diff), flush=True)
    comm.check_error()
    comm.destroy()
    dist.destroy_process_group()
    results.put((rank, worst))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to run")
        return 3
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [ctx.Process(target=rank_main, args=(r, args.world_size, store, args.steps, results))
                 for r in range(args.world_size)]
        for p in procs:
            p.start()
        worst = dict(results.get(timeout=300) for _ in procs)
        for p in procs:
            p.join()
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    tolerance = 1e-5
    ok = not bad and all(w <= tolerance for w in worst.values())
    print("%d ranks, %d steps: largest difference %.3g (tolerance %g): %s"
          % (args.world_size, args.steps, max(worst.values()), tolerance, "same weights" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
