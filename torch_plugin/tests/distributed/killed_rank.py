"""Rank 1 dies after joining the group; rank 0's next collective on hal must
fail with an error naming it, within the group's timeout, instead of
hanging. Started by test_distributed.py as two plain processes (torchrun
would stop rank 0 itself when rank 1 dies)."""

import datetime
import os

import torch
import torch.distributed as dist

dist.init_process_group("hal", timeout=datetime.timedelta(seconds=30))
rank = dist.get_rank()
t = torch.ones(1024, device="hal")
dist.all_reduce(t)  # both ranks are up
if rank == 1:
    os._exit(3)
try:
    for _ in range(100):
        dist.all_reduce(t)
except RuntimeError as e:
    print(f"rank 0 error: {e}", flush=True)
    os._exit(0)
print("rank 0: the collectives succeeded without rank 1", flush=True)
os._exit(1)
