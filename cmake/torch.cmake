# Finds the PyTorch CPU wheel installed in HAL's Python environment and defines
# the imported targets of find_package(Torch) (torch_cpu, c10, ...).
#
# HAL_PYTHON names the interpreter (default: the repository's .venv). Only the
# parts of HAL that talk to PyTorch include this file: the core, the drivers
# and the conformance suite never depend on torch.
#
# Sets HAL_TORCH_FOUND, and TORCH_PYTHON_LIBRARY for the one binding library
# allowed to link libtorch_python.
include_guard(GLOBAL)

set(HAL_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "Python interpreter whose torch wheel HAL builds against")
set(HAL_TORCH_FOUND FALSE)
if(EXISTS "${HAL_PYTHON}")
  execute_process(
    COMMAND "${HAL_PYTHON}" -c "import torch, os; print(torch.utils.cmake_prefix_path + ';' + os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE _hal_torch_paths OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _hal_torch_rc ERROR_QUIET)
  if(_hal_torch_rc EQUAL 0)
    list(GET _hal_torch_paths 0 _hal_torch_prefix)
    list(GET _hal_torch_paths 1 HAL_TORCH_DIR)
    list(APPEND CMAKE_PREFIX_PATH "${_hal_torch_prefix}")
    # TorchConfig probes for CUDA and warns about kineto; the wheel is CPU-only.
    set(CAFFE2_USE_CUDNN OFF)
    find_package(Torch CONFIG QUIET)
    if(Torch_FOUND)
      set(HAL_TORCH_FOUND TRUE)
      find_library(TORCH_PYTHON_LIBRARY torch_python PATHS "${HAL_TORCH_DIR}/lib"
                   NO_DEFAULT_PATH)
    endif()
  endif()
endif()
if(NOT HAL_TORCH_FOUND)
  message(STATUS "HAL: torch not found through ${HAL_PYTHON}; "
                 "the PyTorch backend and the torch benchmarks are not built")
endif()
