# The vendor guide's path, end to end (docs/writing-a-driver.md): install
# HAL, build the skeleton driver against the installed HAL with
# find_package(hal), certify it, and check that the report lists the
# kernels it does not implement.
#
#   cmake -DBUILD=<HAL build dir> -DSOURCE=<repo> -DCERTIFY=<hal-certify>
#         -DWORK=<scratch dir> -P check_skeleton.cmake
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGV " " shown)
    message(FATAL_ERROR "failed (${status}): ${shown}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
run(${CMAKE_COMMAND} --install ${BUILD} --component hal --prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE}/docs/skeleton_driver -B ${WORK}/build
    -G Ninja -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/build)
set(driver ${WORK}/build/libhal_driver_skeleton.so)
if(NOT EXISTS ${driver})
  message(FATAL_ERROR "the skeleton build made no ${driver}")
endif()

# The runtime areas and the one kernel it has; not certified (93 kernels
# are missing): Device.StandardKernelSetIsComplete fails, every other test
# it runs passes.
execute_process(
  COMMAND ${CERTIFY} --driver ${driver} --out ${WORK}/report --quick
          --filter "Device.*:Memory.*:Copy.*:Event.*:KernelNumerics.Matches/fill_*:KernelMalformed.Calls/fill"
  RESULT_VARIABLE status)
if(NOT status EQUAL 1)
  message(FATAL_ERROR "hal-certify exit status ${status}, want 1 (not certified)")
endif()
file(READ ${WORK}/report/report.json report)
string(JSON name GET "${report}" identity driver name)
if(NOT name STREQUAL "skeleton")
  message(FATAL_ERROR "the report names driver '${name}'")
endif()
string(JSON missing LENGTH "${report}" capabilities missing_kernels)
string(JSON first GET "${report}" capabilities missing_kernels 0)
if(NOT missing EQUAL 93)
  message(FATAL_ERROR "${missing} missing kernels reported, want 93")
endif()
string(JSON missing_list GET "${report}" capabilities missing_kernels)
string(FIND "${missing_list}" "\"fill\"" fill_at)
if(NOT fill_at EQUAL -1)
  message(FATAL_ERROR "fill is listed as missing: ${missing_list}")
endif()
string(JSON count LENGTH "${report}" tests)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON test GET "${report}" tests ${i} name)
  string(JSON result GET "${report}" tests ${i} result)
  if(test STREQUAL "Device.StandardKernelSetIsComplete")
    if(NOT result STREQUAL "FAIL")
      message(FATAL_ERROR "skeleton: ${test} ${result}, want FAIL")
    endif()
  elseif(NOT result STREQUAL "PASS" AND NOT result STREQUAL "SKIP")
    string(JSON message GET "${report}" tests ${i} message)
    message(FATAL_ERROR "skeleton: ${test} ${result}\n${message}")
  endif()
endforeach()
message(STATUS "skeleton driver: ${count} tests pass, ${missing} kernels "
               "listed as missing (the first: ${first})")
