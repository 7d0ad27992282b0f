"""A CPU-only DDP program that never names hal, run where torch_hal is
installed (and autoloaded): the default init_process_group() must still
give CPU tensors a backend. Launched by test_distributed.py under torchrun."""

import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
assert torch._C._get_accelerator().type == "hal"  # what used to break the default
model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))
model(torch.full((3, 4), float(rank))).sum().backward()
expected = sum(torch.full((3, 4), float(r)).sum(0) for r in range(world)) / world
torch.testing.assert_close(model.module.weight.grad, expected.expand(2, 4))
dist.barrier()
print(f"rank {rank}: CPU-only DDP ran with the default backend", flush=True)
dist.destroy_process_group()
