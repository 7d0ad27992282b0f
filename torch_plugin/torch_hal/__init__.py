"""torch_hal: HAL as a PyTorch device, ``torch.device("hal")``.

Importing this package (or just ``import torch``: it is autoloaded through the
``torch.backends`` entry point) loads libtorch_hal, renames PyTorch's
PrivateUse1 backend to ``hal``, and registers ``torch.hal``, the device module
mirroring ``torch.cuda``. The driver behind the device is chosen by the
``HAL_DRIVER`` environment variable (default ``cpu_ref``) when hal is first
used; a missing or broken driver is reported then, naming what was tried.
"""

import os


def _autoload():
    """Entry point of the ``torch.backends`` group: importing did the work.

    Defined before ``import torch``: when a program imports torch_hal first,
    torch autoloads this half-imported package and looks the entry point up.
    """


import torch  # noqa: E402

# TORCH_HAL_LIB_DIR points at a build tree's lib/ instead of the installed
# libraries: for developing the backend without reinstalling.
_LIB_DIR = os.environ.get("TORCH_HAL_LIB_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "lib")


def _load_library():
    path = os.path.join(_LIB_DIR, "libtorch_hal.so")
    if not os.path.exists(path):
        raise ImportError(
            f"torch_hal: {path} is missing; reinstall the package "
            "(scripts/bootstrap builds and installs it)"
        )
    torch.ops.load_library(path)


_load_library()

from . import device_module  # noqa: E402

torch.utils.rename_privateuse1_backend("hal")
torch._register_device_module("hal", device_module)
torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)

from .device_module import fallback_stats, reset_fallback_stats  # noqa: E402,F401

from . import distributed  # noqa: E402,F401  (registers the "hal" c10d backend)
from . import compile  # noqa: E402,F401  (routes torch.compile's default backend)
