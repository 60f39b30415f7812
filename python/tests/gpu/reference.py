"""Known-answer data and reference results for the collectives (never zeros): rank r's input
element i is a small integer that depends on r and i, so sums stay exact in every dtype."""

import torch

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64]
OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"]


def rank_input(rank, count, dtype, device):
    values = (torch.arange(count, dtype=torch.int64) * 7 + rank * 3 + 1) % 13 - 6  # -6..6
    return values.to(dtype=dtype, device=device)


def expected(op, rank, world, count, dtype, device, root=0, redop="sum"):
    """What rank `rank` should hold after `op` with inputs rank_input(q, ...) (count = input
    elements per rank)."""
    inputs = [rank_input(q, count, torch.float64, "cpu") for q in range(world)]
    stacked = torch.stack(inputs)
    reduced = {"sum": stacked.sum(0), "max": stacked.max(0).values, "min": stacked.min(0).values}[redop]
    chunk = count // world
    if op == "all_reduce":
        out = reduced
    elif op == "all_gather":
        out = torch.cat(inputs)
    elif op == "reduce_scatter":
        out = reduced[rank * chunk:(rank + 1) * chunk]
    elif op == "broadcast":
        out = inputs[root]
    elif op == "reduce":
        out = reduced if rank == root else inputs[rank]
    elif op == "all_to_all":
        out = torch.cat([inputs[q][rank * chunk:(rank + 1) * chunk] for q in range(world)])
    else:
        raise ValueError(op)
    return out.to(dtype=dtype, device=device)


def output_for(op, count, world, dtype, device):
    n = {"all_gather": count * world, "reduce_scatter": count // world}.get(op, count)
    return torch.full((n,), 99, dtype=dtype, device=device)
