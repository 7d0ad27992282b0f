"""The ranks all-reduce tensors of different shapes (argv[1] "shape") or
dtypes ("dtype"): every rank gets an error listing what each rank called,
and the group still works afterwards. With argv[2] "exit", the program then
leaves with collectives in flight and without destroy_process_group(), as a
script that hit an error does: the process must exit cleanly. Launched by
test_distributed.py under torchrun."""

import sys

import torch
import torch.distributed as dist

dist.init_process_group("hal")
rank = dist.get_rank()
if sys.argv[1] == "shape":
    t = torch.ones(4 + 4 * rank, device="hal")
else:
    t = torch.ones(4, device="hal", dtype=(torch.float32, torch.float16)[rank % 2])
try:
    dist.all_reduce(t)
except dist.DistBackendError as e:
    message = str(e)
    assert "rank 0: allreduce Float[4]" in message, message
    assert "rank 1: allreduce " + ("Float[8]" if sys.argv[1] == "shape" else "Half[4]") in message
else:
    raise AssertionError("mismatched all_reduce gave no error")
t = torch.ones(4, device="hal")
dist.all_reduce(t)
torch.testing.assert_close(t.cpu(), torch.full((4,), 2.0))
print(f"rank {rank}: mismatched {sys.argv[1]} named", flush=True)
if sys.argv[2:] == ["exit"]:
    for _ in range(4):
        dist.all_reduce(torch.ones(1 << 16, device="hal"), async_op=True)
    sys.exit(0)
dist.destroy_process_group()
