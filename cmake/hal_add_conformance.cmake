# hal_add_conformance(DRIVER <name> VARIANT <variant>
#                     [FILTER <gtest filter>] [ENV <VAR=value>...]
#                     [TIMEOUT <seconds>] [SKIP_REASON <why>]
#                     [DEPENDS <target>...] [PROPERTIES <property> <value>...])
#
# Registers the ctest entry conformance.<driver>.<variant>: the conformance
# suite (hal-conformance) on driver <name>, over the tests FILTER selects
# (default: all), in the environment ENV. Each driver calls it from its own
# tests/ folder, so the suite itself knows no driver; this is how IREE
# registers its CTS per backend. The driver's target (hal_driver_<name>, if
# there is one) and DEPENDS are built with hal-conformance. With
# SKIP_REASON the entry only reports that it is skipped, and why.
include_guard(GLOBAL)

# The optional dtypes' kernel tests, as gtest patterns. The sanitizer builds
# leave them out (HAL_CONFORMANCE_SANITIZER_EXCLUDE): they run the same
# driver code through other template instances, and all of them under a
# sanitizer would take most of CI's time.
set(HAL_CONFORMANCE_OPTIONAL_DTYPE_KERNELS
    "Kernel*_f64:Kernel*_f16:Kernel*_bf16:Kernel*_i16:Kernel*_i8:Kernel*_u8")
set(HAL_CONFORMANCE_SANITIZER_EXCLUDE "")
if(HAL_SANITIZE)
  set(HAL_CONFORMANCE_SANITIZER_EXCLUDE ${HAL_CONFORMANCE_OPTIONAL_DTYPE_KERNELS})
endif()

function(hal_add_conformance)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "DRIVER;VARIANT;FILTER;TIMEOUT;SKIP_REASON"
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
  add_test(NAME ${name}
           COMMAND hal-conformance --driver ${ARG_DRIVER}
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
