"""Builds the native half of torch_hal with the repository's CMake build and
ships it inside the package: libtorch_hal, libhal and the drivers (the HAL
loader finds drivers beside libhal, so the installed package is
self-contained).

HAL_BUILD_DIR selects the CMake build tree (default: <repo>/build/default,
configured with the `default` preset when missing).
"""

import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_dir = os.path.join(REPO, os.environ.get("HAL_BUILD_DIR", os.path.join("build", "default")))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "--preset", "default", "-B", build_dir], cwd=REPO)
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "torch_hal"], cwd=REPO)
        libs = [os.path.join(build_dir, "lib", "libtorch_hal.so"),
                os.path.join(build_dir, "lib", "libhal.so")]
        libs += glob.glob(os.path.join(build_dir, "lib", "libhal_driver_*.so"))
        target = os.path.join(self.build_lib, "torch_hal", "lib")
        os.makedirs(target, exist_ok=True)
        for lib in libs:
            shutil.copy2(lib, target)


setup(cmdclass={"build_py": BuildWithCMake})
