"""The ``hal`` c10d backend: ``torch.distributed`` collectives on hal tensors.

Registered when torch_hal loads, so an unchanged program launched by
``torchrun`` runs with any of::

    dist.init_process_group()                     # hal is the accelerator: "hal"
    dist.init_process_group("hal")                # hal and CPU tensors
    dist.init_process_group("cpu:gloo,hal:hal")

The collectives run on gloo (part of torch): hal tensors are staged through
pinned host memory in stream order by ProcessGroupHAL
(csrc/distributed/process_group_hal.hpp); CPU tensors go to gloo as they are.
"""

import torch
import torch.distributed as dist

BACKEND = "hal"


def _create_backend(store, rank, world_size, timeout):
    """c10d's creator for "hal": a gloo backend for the host side, and a
    ProcessGroupHAL over it, taken back out of a carrier ProcessGroup (the
    only c10d object that crosses into a torch operator)."""
    host = dist.ProcessGroupGloo(store, rank, world_size, timeout)
    carrier = dist.ProcessGroup(store, rank, world_size)
    carrier._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, host)
    torch.ops.hal._attach_process_group_backend(carrier.boxed())
    return carrier._get_backend(torch.device("hal"))


def _serve_cpu_by_default() -> None:
    """With no backend named, c10d creates only the accelerator's backend, so
    a CPU tensor finds none ("No backend type associated with device type
    cpu"): installing hal would break every CPU-only program that calls
    init_process_group(). Such a group gets gloo for CPU tensors, as
    "cpu:gloo,hal:hal" would; gloo is also the default backend c10d gives a
    group without NCCL, which DDP looks up by type."""
    config = dist.distributed_c10d.BackendConfig
    chosen_by_device = config.__init__

    def __init__(self, backend):
        chosen_by_device(self, backend)
        if str(backend) == dist.Backend.UNDEFINED and self.device_backend_map.get("hal") == BACKEND:
            self.device_backend_map.setdefault("cpu", dist.Backend.GLOO)

    config.__init__ = __init__


def _register() -> None:
    if BACKEND.upper() in dist.Backend._plugins:
        return
    # "cpu" too: init_process_group("hal") then serves CPU tensors (object
    # collectives, CPU-side metrics) without a second backend string; the
    # default backend for CPU stays gloo.
    dist.Backend.register_backend(BACKEND, _create_backend, devices=["cpu", "hal"])
    _serve_cpu_by_default()


if dist.is_available():
    _register()
