"""DDP and FSDP2 training on hal against the same program on CPU through
plain gloo (a second process group in the same run): the parameters after
the last step agree within 1e-6 relative. They are not bit-identical because
hal's matmul and reduction kernels sum in another order than torch's CPU
kernels; the collectives themselves are exact (collectives.py).
Launched by test_distributed.py under torchrun; argv[1] is "ddp" or "fsdp".
Prints the DDP step time over the same step without DDP."""

import contextlib
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
torch.hal.set_device(rank % torch.hal.device_count())
gloo = dist.new_group(backend="gloo")
TOLERANCE = dict(rtol=1e-6, atol=1e-6)


class Net(nn.Module):
    def __init__(self, with_unused=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.head = nn.Linear(64, 4)
        if with_unused:  # never in the graph: for find_unused_parameters
            self.unused = nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.body(x))


def batches(steps):
    g = torch.Generator().manual_seed(100 + rank)
    return [(torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)) for _ in range(steps)]


def make_model(device, with_unused=False):
    torch.manual_seed(0)
    return Net(with_unused).to(device)


def train(model, device, data, accumulate=1, optimizer_cls=torch.optim.SGD):
    opt = optimizer_cls(model.parameters(), lr=0.05)
    for step, (x, y) in enumerate(data):
        x, y = x.to(device), y.to(device)
        last_micro = (step + 1) % accumulate == 0
        sync = model.no_sync() if not last_micro else contextlib.nullcontext()
        with sync:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
        if last_micro:
            opt.step()
            opt.zero_grad()
    return model


def agree(name, hal_model, cpu_model):
    for (pname, h), (_, c) in zip(hal_model.named_parameters(), cpu_model.named_parameters()):
        h = h.full_tensor() if hasattr(h, "full_tensor") else h
        c = c.full_tensor() if hasattr(c, "full_tensor") else c
        assert h.device.type == "hal", f"{name}: {pname} left hal"
        torch.testing.assert_close(h.detach().cpu(), c.detach(), **TOLERANCE,
                                   msg=lambda m: f"{name}, {pname}: {m}")
    print(f"rank {rank}: {name} matches CPU gloo", flush=True)


def ddp_runs():
    data = batches(6)
    variants = {
        "DDP": dict(),
        "DDP bucket_cap_mb=0.01 (several buckets)": dict(bucket_cap_mb=0.01),
        "DDP find_unused_parameters": dict(find_unused_parameters=True),
        "DDP static_graph": dict(static_graph=True),
    }
    for name, kwargs in variants.items():
        unused = kwargs.get("find_unused_parameters", False)
        hal_model = train(DDP(make_model("hal", unused), **kwargs), "hal", data)
        cpu_model = train(DDP(make_model("cpu", unused), process_group=gloo, **kwargs), "cpu",
                          data)
        agree(name, hal_model, cpu_model)
    hal_model = train(DDP(make_model("hal")), "hal", data, accumulate=3)
    cpu_model = train(DDP(make_model("cpu"), process_group=gloo), "cpu", data, accumulate=3)
    agree("DDP no_sync (accumulating 3 micro-batches)", hal_model, cpu_model)

    # The step overhead of DDP over the same step in one process.
    timing = batches(20)
    single = train(make_model("hal"), "hal", timing[:3])
    ddp = train(DDP(make_model("hal")), "hal", timing[:3])
    times = {}
    for label, model in (("single", single), ("ddp", ddp)):
        torch.hal.synchronize()
        start = time.perf_counter()
        train(model, "hal", timing[3:])
        torch.hal.synchronize()
        times[label] = (time.perf_counter() - start) / len(timing[3:])
    if rank == 0:
        print(f"DDP step {times['ddp'] * 1e3:.2f} ms, single-process step "
              f"{times['single'] * 1e3:.2f} ms: overhead {times['ddp'] / times['single']:.2f}x",
              flush=True)


def fsdp_runs():
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    hal_mesh = init_device_mesh("hal", (world,))
    cpu_mesh = DeviceMesh.from_group(gloo, "cpu")
    data = batches(4)
    policies = {
        "FSDP2": None,
        "FSDP2 mixed precision (bf16 params, f32 reduce)":
            MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32),
    }
    for name, policy in policies.items():
        models = {}
        for device, mesh in (("hal", hal_mesh), ("cpu", cpu_mesh)):
            model = make_model(device)
            kwargs = dict(mesh=mesh) if policy is None else dict(mesh=mesh, mp_policy=policy)
            for layer in model.body:
                if isinstance(layer, nn.Linear):
                    fully_shard(layer, **kwargs)
            fully_shard(model, **kwargs)
            models[device] = train(model, device, data, optimizer_cls=torch.optim.AdamW)
        if policy is None:
            agree(name, models["hal"], models["cpu"])
        else:
            # bf16 rounding of hal's and CPU's slightly different sums can
            # land on neighbouring bf16 values: the f32 master weights agree
            # within a bf16 step.
            for (pname, h), (_, c) in zip(models["hal"].named_parameters(),
                                          models["cpu"].named_parameters()):
                torch.testing.assert_close(h.full_tensor().cpu(), c.full_tensor(),
                                           rtol=1e-2, atol=1e-2,
                                           msg=lambda m, p=pname: f"{name}, {p}: {m}")
            print(f"rank {rank}: {name} matches CPU gloo within bf16", flush=True)


{"ddp": ddp_runs, "fsdp": fsdp_runs}[sys.argv[1]]()
dist.destroy_process_group()
