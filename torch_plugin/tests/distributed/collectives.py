"""Every collective on hal tensors, in each dtype, against the same collective
on CPU tensors through plain gloo (a second process group in the same run),
plus values worked out by hand for what gloo cannot do (AVG, PREMUL_SUM).
Launched by test_distributed.py under torchrun; argv[1] is the backend
string given to init_process_group ("default" for none)."""

import sys

import torch
import torch.distributed as dist

backend = None if sys.argv[1] == "default" else sys.argv[1]
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
torch.hal.set_device(rank % torch.hal.device_count())
gloo = dist.new_group(backend="gloo")
DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int64)
checked = []


def values(dtype, *shape, offset=0):
    t = torch.arange(int(torch.tensor(shape).prod()), dtype=torch.float64).reshape(shape)
    t = t * (rank + 1) + offset
    return t.to(dtype)


def same(name, hal_tensors, cpu_tensors):
    assert len(hal_tensors) == len(cpu_tensors), f"{name}: {len(hal_tensors)} results"
    for h, c in zip(hal_tensors, cpu_tensors):
        assert h.device.type == "hal", f"{name}: result left hal"
        torch.testing.assert_close(h.cpu(), c, rtol=0, atol=0, msg=lambda m: f"{name}: {m}")
    checked.append(name)


def both(dtype, *shape, offset=0):
    cpu = values(dtype, *shape, offset=offset)
    return cpu.to("hal"), cpu.clone()


for dtype in DTYPES:
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    if not dtype.is_floating_point:
        ops += [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    for op in ops:
        h, c = both(dtype, 3, 5, offset=1)
        dist.all_reduce(h, op=op)
        dist.all_reduce(c, op=op, group=gloo)
        same(f"all_reduce {op} {dtype}", [h], [c])

    # AVG and PREMUL_SUM: gloo has neither, hal runs them as a SUM.
    h = torch.full((4,), float(2 * rank + 2)).to(dtype).to("hal")
    dist.all_reduce(h, op=dist.ReduceOp.AVG)
    expected = sum(2 * r + 2 for r in range(world)) / world
    same(f"all_reduce AVG {dtype}", [h], [torch.full((4,), expected).to(dtype)])
    if dtype.is_floating_point:
        for factor in (0.5, torch.tensor([0.5], dtype=dtype)):
            h = torch.full((4,), float(rank + 1)).to(dtype).to("hal")
            dist.all_reduce(h, op=dist._make_nccl_premul_sum(factor))
            expected = sum(0.5 * (r + 1) for r in range(world))
            same(f"all_reduce PREMUL_SUM {type(factor).__name__} {dtype}", [h],
                 [torch.full((4,), expected).to(dtype)])
    else:  # integer AVG truncates, as NCCL's
        h = torch.full((4,), 3 * rank + 1, dtype=dtype, device="hal")
        dist.all_reduce(h, op=dist.ReduceOp.AVG)
        expected = sum(3 * r + 1 for r in range(world)) // world
        same(f"all_reduce AVG truncates {dtype}", [h], [torch.full((4,), expected, dtype=dtype)])

    h, c = both(dtype, 7)
    dist.broadcast(h, src=1)
    dist.broadcast(c, src=1, group=gloo)
    same(f"broadcast {dtype}", [h], [c])

    h, c = both(dtype, 2, 3)
    dist.reduce(h, dst=0)
    dist.reduce(c, dst=0, group=gloo)
    if rank == 0:
        same(f"reduce {dtype}", [h], [c])
    else:  # NCCL leaves the other ranks' tensors as they were
        same(f"reduce leaves rank {rank} alone {dtype}", [h], [values(dtype, 2, 3)])

    h, c = both(dtype, 5)
    hal_out = [torch.empty_like(h) for _ in range(world)] if rank == 0 else None
    cpu_out = [torch.empty_like(c) for _ in range(world)] if rank == 0 else None
    dist.gather(h, hal_out, dst=0)
    dist.gather(c, cpu_out, dst=0, group=gloo)
    if rank == 0:
        same(f"gather {dtype}", hal_out, cpu_out)

    hal_in = [values(dtype, 4, offset=10 * i).to("hal") for i in range(world)]
    cpu_in = [values(dtype, 4, offset=10 * i) for i in range(world)]
    hal_out = torch.empty(4, dtype=dtype, device="hal")
    cpu_out = torch.empty(4, dtype=dtype)
    dist.scatter(hal_out, hal_in if rank == 1 else None, src=1)
    dist.scatter(cpu_out, cpu_in if rank == 1 else None, src=1, group=gloo)
    same(f"scatter {dtype}", [hal_out], [cpu_out])

    hal_in = [values(dtype, 3, offset=i).to("hal") for i in range(world)]
    cpu_in = [values(dtype, 3, offset=i) for i in range(world)]
    hal_out = [torch.empty(3, dtype=dtype, device="hal") for _ in range(world)]
    cpu_out = [torch.empty(3, dtype=dtype) for _ in range(world)]
    dist.all_to_all(hal_out, hal_in)
    dist.all_to_all(cpu_out, cpu_in, group=gloo)
    same(f"all_to_all {dtype}", hal_out, cpu_out)

    h, c = both(dtype, 4)
    hal_out = [torch.empty_like(h) for _ in range(world)]
    cpu_out = [torch.empty_like(c) for _ in range(world)]
    dist.all_gather(hal_out, h)
    dist.all_gather(cpu_out, c, group=gloo)
    same(f"all_gather {dtype}", hal_out, cpu_out)

    h, c = both(dtype, 4)
    hal_out = torch.empty(world * 4, dtype=dtype, device="hal")
    cpu_out = torch.empty(world * 4, dtype=dtype)
    dist.all_gather_into_tensor(hal_out, h)
    dist.all_gather_into_tensor(cpu_out, c, group=gloo)
    same(f"all_gather_into_tensor {dtype}", [hal_out], [cpu_out])

    hal_in = [both(dtype, 3, offset=i)[0] for i in range(world)]
    cpu_in = [values(dtype, 3, offset=i) for i in range(world)]
    hal_out = torch.empty(3, dtype=dtype, device="hal")
    cpu_out = torch.empty(3, dtype=dtype)
    dist.reduce_scatter(hal_out, hal_in)
    dist.reduce_scatter(cpu_out, cpu_in, group=gloo)
    same(f"reduce_scatter {dtype}", [hal_out], [cpu_out])

    h, c = both(dtype, world * 3)
    hal_out = torch.empty(3, dtype=dtype, device="hal")
    cpu_out = torch.empty(3, dtype=dtype)
    dist.reduce_scatter_tensor(hal_out, h)
    dist.reduce_scatter_tensor(cpu_out, c, group=gloo)
    same(f"reduce_scatter_tensor {dtype}", [hal_out], [cpu_out])
    if dtype.is_floating_point:
        dist.reduce_scatter_tensor(hal_out, h, op=dist.ReduceOp.AVG)
        expected = sum(values(dtype, world * 3).double() / (rank + 1) * (r + 1)
                       for r in range(world)) / world
        same(f"reduce_scatter_tensor AVG {dtype}", [hal_out],
             [expected[rank * 3:(rank + 1) * 3].to(dtype)])

    h, c = both(dtype, world * 2)
    hal_out, cpu_out = torch.empty_like(h), torch.empty_like(c)
    dist.all_to_all_single(hal_out, h)
    dist.all_to_all_single(cpu_out, c, group=gloo)
    same(f"all_to_all_single {dtype}", [hal_out], [cpu_out])

    if rank == 0:
        dist.send(values(dtype, 5, offset=3).to("hal"), dst=1)
    elif rank == 1:
        got = torch.empty(5, dtype=dtype, device="hal")
        dist.recv(got, src=0)
        same(f"send/recv {dtype}", [got], [(torch.arange(5, dtype=torch.float64) + 3).to(dtype)])

# A symmetric exchange of isend then irecv (batch_isend_irecv's example):
# gloo's send waits for the peer's recv, so the two must not be serialized.
peer = (rank + 1) % world
outgoing = torch.full((6,), float(rank), device="hal")
incoming = torch.empty(6, device="hal")
requests = dist.batch_isend_irecv([dist.P2POp(dist.isend, outgoing, peer),
                                   dist.P2POp(dist.irecv, incoming, peer)])
for request in requests:
    request.wait()
same("isend/irecv exchange", [incoming], [torch.full((6,), float(peer))])

# Coalesced all_reduce: several tensors in one collective.
hal_list = [values(torch.float32, n).to("hal") for n in (3, 5)]
cpu_list = [values(torch.float32, n) for n in (3, 5)]
with dist._coalescing_manager(async_ops=True) as coalesced:
    for t in hal_list:
        dist.all_reduce(t)
coalesced.wait()
for t in cpu_list:
    dist.all_reduce(t, group=gloo)
same("coalesced all_reduce", hal_list, cpu_list)

# Async work: many collectives in flight, completed in the order issued.
pending = []
for i in range(8):
    t = torch.full((1000,), float(i + rank), device="hal")
    pending.append((i, t, dist.all_reduce(t, async_op=True)))
for i, t, work in pending:
    work.wait()
    same(f"async all_reduce {i}", [t], [torch.full((1000,), float(2 * i + world - 1))])
fut = dist.all_reduce(torch.ones(3, device="hal"), async_op=True).get_future()
same("future value", fut.wait(), [torch.full((3,), float(world))])

# CPU tensors in the same group go to gloo unchanged.
c = torch.ones(3)
dist.all_reduce(c)
torch.testing.assert_close(c, torch.full((3,), float(world)))
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank})
assert objects == [{"rank": r} for r in range(world)], objects
dist.barrier()
print(f"rank {rank}: {len(checked)} collectives match", flush=True)
dist.destroy_process_group()
