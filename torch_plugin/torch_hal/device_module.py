"""``torch.hal``: devices, streams, events, memory and random state of the hal
backend, with the names and behaviour of ``torch.cuda``."""

import collections
import contextlib
import dataclasses

import torch

_ops = torch.ops.hal


# ---- devices ---------------------------------------------------------------

def is_available() -> bool:
    """True when the driver loaded and has at least one device."""
    return _ops.device_count() > 0


def device_count() -> int:
    return _ops.device_count()


def init() -> None:
    """Loads the driver now; raises RuntimeError naming what was tried."""
    _ops.init()


def is_initialized() -> bool:
    return is_available()


def _is_in_bad_fork() -> bool:
    return False


def driver() -> str:
    """Name, version and file of the loaded driver."""
    return _ops.driver()


def _index(device=None) -> int:
    if device is None:
        return _ops.current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "hal":
        raise ValueError(f"expected a hal device, got {device}")
    return _ops.current_device() if device.index is None else device.index


def current_device() -> int:
    return _ops.current_device()


def set_device(device) -> None:
    _ops.set_device(_index(device))


class device:
    """Context manager that makes ``device`` current (None or -1: no-op)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _ops.exchange_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _ops.set_device(self.prev_idx)
        return False


class device_of(device):
    """Makes the device of ``tensor`` current (no-op for a CPU tensor)."""

    def __init__(self, tensor):
        super().__init__(tensor.get_device() if tensor.is_hal else None)


def synchronize(device=None) -> None:
    """Waits for all work queued on every stream of the device."""
    _ops.synchronize(_index(device))


def get_device_name(device=None) -> str:
    return _ops.device_name(_index(device))


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    name: str
    total_memory: int
    max_allocation_size: int
    compute_units: int
    kernel_set_version: int
    min_alignment: int
    supported_dtypes: tuple
    driver: str


_ALL_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64,
               torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
               torch.bool)


def get_device_properties(device=None) -> DeviceProperties:
    index = _index(device)
    props = _ops.device_properties(index)
    return DeviceProperties(
        name=_ops.device_name(index),
        total_memory=props["total_memory"],
        max_allocation_size=props["max_allocation_size"],
        compute_units=props["compute_units"],
        kernel_set_version=props["kernel_set_version"],
        min_alignment=props["min_alignment"],
        supported_dtypes=tuple(d for d in _ALL_DTYPES if _ops.supports_dtype(index, d)),
        driver=_ops.driver(),
    )


def is_bf16_supported() -> bool:
    return is_available() and _ops.supports_dtype(current_device(), torch.bfloat16)


def get_amp_supported_dtype():
    """Lower-precision dtypes autocast may use on the current device."""
    return [d for d in (torch.float16, torch.bfloat16)
            if _ops.supports_dtype(current_device(), d)]


# ---- streams and events ----------------------------------------------------

def _device_or_current(device):
    return torch.device("hal", _index(device))


class Stream(torch.Stream):
    """An in-order queue of work on a hal device (``torch.cuda.Stream``).
    Lower priority numbers are more urgent; 0 is the default."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if kwargs:  # reconstruction from (stream_id, device_index, device_type)
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=_device_or_current(device), priority=priority)


def Event(enable_timing=False, blocking=False, interprocess=False) -> torch.Event:
    """A marker in a stream (``torch.cuda.Event``): a plain torch.Event on
    hal, since torch.Event's methods reject subclasses as arguments."""
    return torch.Event(device="hal", enable_timing=enable_timing,
                       blocking=blocking, interprocess=interprocess)


def current_stream(device=None) -> torch.Stream:
    return torch.accelerator.current_stream(_device_or_current(device))


# c10::DeviceType::PrivateUse1, the device type id torch.Stream records.
_PRIVATEUSE1_TYPE = 20


def default_stream(device=None) -> torch.Stream:
    """The device's default stream (stream id 0), which ops use unless
    another stream is made current."""
    return torch.Stream(stream_id=0, device_index=_index(device),
                        device_type=_PRIVATEUSE1_TYPE)


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(stream):
    """Makes ``stream`` current on its device for the block (None: no-op)."""
    if stream is None:
        yield
        return
    previous = current_stream(stream.device)
    with device(stream.device):
        set_stream(stream)
        try:
            yield
        finally:
            set_stream(previous)


# ---- memory ----------------------------------------------------------------

def memory_stats(device=None) -> "collections.OrderedDict[str, int]":
    stats = _ops.memory_stats(_index(device))
    return collections.OrderedDict(sorted(stats.items()))


def memory_allocated(device=None) -> int:
    return _ops.memory_stats(_index(device))["allocated_bytes.all.current"]


def max_memory_allocated(device=None) -> int:
    return _ops.memory_stats(_index(device))["allocated_bytes.all.peak"]


def memory_reserved(device=None) -> int:
    return _ops.memory_stats(_index(device))["reserved_bytes.all.current"]


def max_memory_reserved(device=None) -> int:
    return _ops.memory_stats(_index(device))["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None) -> None:
    _ops.reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns cached, unused blocks of every device to the driver."""
    _ops.empty_cache()


def mem_get_info(device=None) -> tuple:
    free, total = _ops.mem_get_info(_index(device))
    return free, total


# ---- random numbers --------------------------------------------------------

def manual_seed(seed: int) -> None:
    _ops.manual_seed(current_device(), int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device; before the driver loads, the seed is kept for it,
    so torch.manual_seed() never loads a driver by itself."""
    _ops.manual_seed_all(int(seed))


def seed() -> int:
    return _ops.seed(current_device())


def seed_all() -> None:
    for i in range(device_count()):
        _ops.seed(i)


def initial_seed() -> int:
    return _ops.initial_seed(current_device())


def get_rng_state(device="hal") -> torch.Tensor:
    return _ops.get_rng_state(_index(device))


def set_rng_state(new_state: torch.Tensor, device="hal") -> None:
    _ops.set_rng_state(_index(device), new_state)


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- CPU fallback ----------------------------------------------------------

def fallback_stats() -> dict:
    """Ops that ran on CPU because hal has no kernel for them: name -> count.
    Set HAL_STRICT=1 to make such a fallback an error instead."""
    return dict(_ops.fallback_stats())


def reset_fallback_stats() -> None:
    _ops.reset_fallback_stats()


# ---- graphs ----------------------------------------------------------------

from .graphs import (  # noqa: E402,F401
    HALGraph, graph, graph_pool_handle, is_current_stream_capturing,
    make_graphed_callables)
from .compile import compile_stats, reset_compile_stats  # noqa: E402,F401
