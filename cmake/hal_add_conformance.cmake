# hal_add_conformance(DRIVER <name> VARIANT <variant>
#                     [FILTER <gtest filter>] [ENV <VAR=value>...]
#                     [TIMEOUT <seconds>] [SHARDS <n>] [SKIP_REASON <why>]
#                     [DEPENDS <target>...] [PROPERTIES <property> <value>...])
#
# Registers the ctest entry conformance.<driver>.<variant>: the conformance
# suite (hal-conformance) on driver <name>, over the tests FILTER selects
# (default: all), in the environment ENV. Each driver calls it from its own
# tests/ folder, so the suite itself knows no driver; this is how IREE
# registers its CTS per backend. With SHARDS, a run under scripts/test takes
# one shard in n of those tests, turning with each commit (hal-conformance
# --shards). The driver's target (hal_driver_<name>, if
# there is one) and DEPENDS are built with hal-conformance. With
# SKIP_REASON the entry only reports that it is skipped, and why.
include_guard(GLOBAL)

# Each test runs once for what it checks. The kernel numerics run once per
# driver and dtype, in the driver's "kernels" entry; a variant (the
# validation layer, a sanitizer, a stream mode) runs what it can change: the
# runtime areas, and the kernels in f32 only, where its checks see each
# kernel's launch once (the other dtypes are other template instances of the
# same launch). As gtest patterns:
# - the optional dtypes' kernel tests, and every kernel test but f32's;
set(HAL_CONFORMANCE_OPTIONAL_DTYPE_KERNELS
    "Kernel*_f64:Kernel*_f16:Kernel*_bf16:Kernel*_i16:Kernel*_i8:Kernel*_u8")
set(HAL_CONFORMANCE_NON_F32_KERNELS
    "${HAL_CONFORMANCE_OPTIONAL_DTYPE_KERNELS}:Kernel*_i64:Kernel*_i32:Kernel*_bool")
# - a driver's "kernels" entry: every dtype; under ASan the required ones
#   (the memory errors of a kernel's code are in every instance alike);
#   under TSan f32 (the threads a kernel starts do not depend on its dtype),
#   one kernel test in four per commit (HAL_CONFORMANCE_KERNELS_SHARDS: TSan
#   runs them 15 times slower, about 6 minutes for all);
# - its "validation" entry: the whole suite in f32; under TSan the runtime
#   areas alone (the layer's locks are what TSan checks, and the kernel
#   launches take the same ones).
set(HAL_CONFORMANCE_KERNELS_SHARDS 1)
if(HAL_SANITIZE STREQUAL "thread")
  set(HAL_CONFORMANCE_KERNELS "Kernel*-${HAL_CONFORMANCE_NON_F32_KERNELS}")
  set(HAL_CONFORMANCE_KERNELS_SHARDS 4)
  set(HAL_CONFORMANCE_VALIDATION "-Kernel*")
elseif(HAL_SANITIZE)
  set(HAL_CONFORMANCE_KERNELS "Kernel*-${HAL_CONFORMANCE_OPTIONAL_DTYPE_KERNELS}")
  set(HAL_CONFORMANCE_VALIDATION "*-${HAL_CONFORMANCE_NON_F32_KERNELS}")
else()
  set(HAL_CONFORMANCE_KERNELS "Kernel*")
  set(HAL_CONFORMANCE_VALIDATION "*-${HAL_CONFORMANCE_NON_F32_KERNELS}")
endif()

function(hal_add_conformance)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DRIVER;VARIANT;FILTER;TIMEOUT;SHARDS;SKIP_REASON"
                        "ENV;DEPENDS;PROPERTIES")
  if(NOT ARG_DRIVER OR NOT ARG_VARIANT)
    message(FATAL_ERROR "hal_add_conformance: DRIVER and VARIANT are required")
  endif()
  set(name conformance.${ARG_DRIVER}.${ARG_VARIANT})
  if(ARG_SKIP_REASON)
    add_test(NAME ${name} COMMAND sh -c "echo \"SKIP: $1\"; exit 77" sh
                                  "${ARG_SKIP_REASON}")
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
    return()
  endif()
  set(filter "*")
  if(ARG_FILTER)
    set(filter "${ARG_FILTER}")
  endif()
  set(shards 1)
  if(ARG_SHARDS)
    set(shards ${ARG_SHARDS})
  endif()
  add_test(NAME ${name}
           COMMAND hal-conformance --driver ${ARG_DRIVER} --shards ${shards}
                   "--gtest_filter=${filter}")
  if(ARG_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${ARG_ENV}")
  endif()
  if(ARG_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  endif()
  if(ARG_PROPERTIES)
    set_tests_properties(${name} PROPERTIES ${ARG_PROPERTIES})
  endif()
  set(depends ${ARG_DEPENDS})
  if(TARGET hal_driver_${ARG_DRIVER})
    list(APPEND depends hal_driver_${ARG_DRIVER})
  endif()
  set_property(GLOBAL APPEND PROPERTY HAL_CONFORMANCE_DEPENDS ${depends})
endfunction()
