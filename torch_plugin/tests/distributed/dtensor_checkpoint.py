"""DTensor on a hal DeviceMesh (distribute_tensor, redistribute) and
torch.distributed.checkpoint saving and loading a sharded hal state.
Launched by test_distributed.py under torchrun; argv[1] is the checkpoint
folder (shared by the ranks)."""

import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
torch.hal.set_device(rank % torch.hal.device_count())
mesh = init_device_mesh("hal", (world,))

full = torch.arange(8 * 6, dtype=torch.float32).reshape(8, 6)
sharded = distribute_tensor(full.to("hal"), mesh, [Shard(0)])
local = sharded.to_local()
assert local.device.type == "hal", local.device
torch.testing.assert_close(local.cpu(), full.chunk(world)[rank])

replicated = sharded.redistribute(mesh, [Replicate()])
torch.testing.assert_close(replicated.to_local().cpu(), full)
by_column = replicated.redistribute(mesh, [Shard(1)])
torch.testing.assert_close(by_column.to_local().cpu(), full.chunk(world, dim=1)[rank])
summed = (sharded * 2).sum()  # a partial sum reduced across the mesh
torch.testing.assert_close(summed.full_tensor().cpu(), (full * 2).sum())
print(f"rank {rank}: DTensor shard/replicate/redistribute match", flush=True)

folder = sys.argv[1]
state = {"weight": sharded, "step": torch.tensor(7)}
dcp.save(state, checkpoint_id=folder)
restored = {"weight": distribute_tensor(torch.zeros(8, 6, device="hal"), mesh, [Shard(0)]),
            "step": torch.tensor(0)}
dcp.load(restored, checkpoint_id=folder)
assert restored["weight"].to_local().device.type == "hal"
torch.testing.assert_close(restored["weight"].full_tensor().cpu(), full)
assert restored["step"].item() == 7
print(f"rank {rank}: distributed checkpoint round trip matches", flush=True)
dist.destroy_process_group()
