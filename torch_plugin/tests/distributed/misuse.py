"""A call a rank's own arguments make wrong: tensors on two hal devices in
one collective. It is an error naming the problem, raised before anything
reaches gloo, so the group still works afterwards. Launched by
test_distributed.py under torchrun."""

import torch
import torch.distributed as dist

dist.init_process_group("hal")
rank = dist.get_rank()


def fails(expected, call):
    try:
        call()
    except RuntimeError as e:
        assert expected in str(e), str(e)
    else:
        raise AssertionError(f"no error; expected one naming {expected!r}")


def two_devices():
    with dist._coalescing_manager():
        dist.all_reduce(torch.ones(2, device="hal:0"))
        dist.all_reduce(torch.ones(2, device="hal:1"))


fails("got tensors on more than one hal device", two_devices)
t = torch.ones(4, device="hal")
dist.all_reduce(t)
torch.testing.assert_close(t.cpu(), torch.full((4,), 2.0))
print(f"rank {rank}: misuse named", flush=True)
dist.destroy_process_group()
