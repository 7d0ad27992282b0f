"""The Python half of the jax CPU test plugin (see README.md).

jax_cpu_plugin.cpp calls these functions with the GIL held. Buffers are
committed single-device jax arrays on XLA's CPU device; host memory crosses
as raw addresses. Every function finishes its work before it returns, which
is why the plugin's events are ready at creation. Exceptions go back through
error_of() as PJRT errors.
"""
import ctypes
import math
import os

# XLA's CPU client only: an installed libtpu would otherwise be probed.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# XLA's CPU compiler lets min/max reductions skip NaN unless told otherwise;
# HAL (and XLA on GPUs and TPUs) propagates it.
os.environ["XLA_FLAGS"] = " ".join(
    (os.environ.get("XLA_FLAGS", ""), "--xla_cpu_enable_fast_min_max=false"))

import jax  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402
from jax.extend import backend as jax_backend  # noqa: E402

# Without it device_put narrows 64-bit host data to 32 bits.
jax.config.update("jax_enable_x64", True)

_backend = jax_backend.get_backend("cpu")
_device = _backend.devices()[0]
_devices = xla_client.DeviceList((_device,))

# PJRT_Buffer_Type (pjrt_api.hpp BufferType) -> element type.
_DTYPES = {
    1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64,
    6: np.uint8, 10: np.float16, 11: np.float32, 12: np.float64,
    13: ml_dtypes.bfloat16,
}

# XLA prefixes its messages with the absl status name; PJRT_Error_Code.
_CODES = {
    "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5, "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
_INVALID_ARGUMENT = 3


def describe():
    """(platform name, platform version, device kind)."""
    return _backend.platform, _backend.platform_version, _device.device_kind


def compile(code, options):
    """Compiles StableHLO (text or bytecode) with a serialized
    CompileOptionsProto for the one device; returns (executable, outputs)."""
    executable = _backend.compile_and_load(
        code, _devices, xla_client.CompileOptions.ParseFromString(options))
    return executable, len(executable.get_output_memory_kinds()[0])


def from_host(address, element_type, dims):
    """A buffer holding a copy of the dense row-major array at `address`."""
    if element_type not in _DTYPES:
        raise ValueError(f"element type {element_type} is not supported")
    dtype = np.dtype(_DTYPES[element_type])
    count = math.prod(dims)
    if count == 0:
        host = np.zeros(dims, dtype)
    else:
        raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
        host = np.frombuffer(raw, dtype).reshape(dims).copy()
    return jax.device_put(host, _device).block_until_ready()


def execute(executable, arguments):
    """Runs `executable` to completion; returns its output buffers."""
    results = executable.execute_sharded(list(arguments))
    outputs = [shards[0]
               for shards in results.disassemble_into_single_device_arrays()]
    for output in outputs:
        output.block_until_ready()
    return outputs


def to_host(array, address, size):
    """Copies the buffer's bytes to `address`, which holds `size` bytes."""
    host = np.ascontiguousarray(np.asarray(array))
    if host.nbytes > size:
        raise ValueError(f"the buffer has {host.nbytes} bytes, the host "
                         f"destination {size}")
    ctypes.memmove(address, host.ctypes.data, host.nbytes)


def error_of(exception):
    """(PJRT_Error_Code, message) of an exception raised above."""
    message = str(exception)
    code = _CODES.get(message.split(":", 1)[0])
    if code is not None:
        return code, message
    message = f"{type(exception).__name__}: {message}"
    if isinstance(exception, (ValueError, TypeError, KeyError, IndexError)):
        return _INVALID_ARGUMENT, message
    if isinstance(exception, MemoryError):
        return _CODES["RESOURCE_EXHAUSTED"], message
    if isinstance(exception, NotImplementedError):
        return _CODES["UNIMPLEMENTED"], message
    return _CODES["UNKNOWN"], message
