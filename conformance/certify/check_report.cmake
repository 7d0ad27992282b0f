# The ctest checks of hal-certify: runs it, then reads report.json.
#
#   cmake -DCERTIFY=<hal-certify> -DOUT=<dir> -DEXPECT=certified|wrong
#         -DARGS=<hal-certify arguments, '|'-separated> -P check_report.cmake
#
# EXPECT=certified: exit status 0 and a complete report (every field the
# issue lists) with no leak. EXPECT=wrong: the wrong-on-purpose driver
# (fixtures/wrong_driver.c): exit status 1, exactly its planted faults at
# their tests, its leak under validation, and not certified.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${CERTIFY} ${ARGS} --out ${OUT}
                RESULT_VARIABLE status)
file(READ ${OUT}/report.json report)

function(require path)
  string(JSON value ERROR_VARIABLE error GET "${report}" ${path})
  if(error OR value STREQUAL "" OR value STREQUAL "null")
    list(JOIN path "." shown)
    message(FATAL_ERROR "report.json lacks ${shown} (${error})")
  endif()
endfunction()

function(expect_equal what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: got '${actual}', want '${expected}'")
  endif()
endfunction()

# Every report, whatever its verdict, has every field.
foreach(path IN ITEMS
    "identity;driver;file" "identity;driver;sha256" "identity;driver;name"
    "identity;driver;version" "identity;driver;abi_version"
    "identity;hal_version" "identity;suite;version"
    "identity;suite;test_list_sha256" "identity;suite;test_list_frozen"
    "identity;host;os"
    "identity;host;kernel" "identity;host;cpu" "identity;device;name"
    "identity;device;vendor" "identity;device;total_memory"
    "capabilities;dtypes" "capabilities;kernel_set_version"
    "capabilities;missing_kernels" "summary;PASS" "tests;0;result"
    "tests;0;seconds" "performance;copy" "performance;launch"
    "performance;matmul" "waivers" "validation;leaks" "verdict;certified"
    "verdict;reasons")
  require("${path}")
endforeach()
string(JSON sha GET "${report}" identity driver sha256)
if(NOT sha MATCHES "^[0-9a-f]+$")
  message(FATAL_ERROR "identity.driver.sha256 is not a digest: ${sha}")
endif()
string(JSON driver_file GET "${report}" identity driver file)
file(SHA256 ${driver_file} cmake_sha)
expect_equal("identity.driver.sha256 against CMake's" "${sha}" "${cmake_sha}")
string(JSON certified GET "${report}" verdict certified)

if(EXPECT STREQUAL "certified")
  expect_equal("hal-certify exit status" "${status}" 0)
  expect_equal("verdict.certified" "${certified}" ON)
  foreach(path IN ITEMS "performance;copy;host_to_device_gbps"
                        "performance;launch;queued_us"
                        "performance;matmul;gflops"
                        "kernels;0;max_abs_error" "kernels;0;atol")
    require("${path}")
  endforeach()
  string(JSON leaks LENGTH "${report}" validation leaks)
  expect_equal("leaks under validation" ${leaks} 0)
  string(JSON frozen GET "${report}" identity suite test_list_frozen)
  expect_equal("the suite is the frozen one" "${frozen}" ON)
  string(JSON selected GET "${report}" identity suite selected)
  string(JSON tests LENGTH "${report}" tests)
  expect_equal("tests in the report" ${tests} ${selected})
  message(STATUS "certified, ${tests} tests, complete report")
  return()
endif()

# EXPECT=wrong.
expect_equal("hal-certify exit status" "${status}" 1)
expect_equal("verdict.certified" "${certified}" OFF)
set(planted_FAIL "KernelNumerics.Matches/sin_f64")
set(planted_CRASH "KernelNumerics.Matches/tanh_f64")
set(planted_TIMEOUT "KernelNumerics.Matches/sigmoid_f64")
string(JSON count LENGTH "${report}" tests)
math(EXPR last "${count} - 1")
foreach(result IN ITEMS FAIL CRASH TIMEOUT XPASS)
  set(found_${result} "")
endforeach()
foreach(i RANGE ${last})
  string(JSON name GET "${report}" tests ${i} name)
  string(JSON result GET "${report}" tests ${i} result)
  list(APPEND found_${result} "${name}")
endforeach()
foreach(result IN ITEMS FAIL CRASH TIMEOUT)
  expect_equal("tests with ${result}" "${found_${result}}"
               "${planted_${result}}")
endforeach()
expect_equal("tests with XPASS" "${found_XPASS}" "")
string(JSON leaks LENGTH "${report}" validation leaks)
set(leak_found OFF)
if(leaks GREATER 0)
  math(EXPR last_leak "${leaks} - 1")
  foreach(i RANGE ${last_leak})
    string(JSON test GET "${report}" validation leaks ${i} test)
    string(JSON kind GET "${report}" validation leaks ${i} kind)
    if(test STREQUAL "KernelNumerics.Matches/exp_f64" AND
       kind STREQUAL "driver memory")
      set(leak_found ON)
    else()
      message(FATAL_ERROR "a leak nobody planted: ${kind} at ${test}")
    endif()
  endforeach()
endif()
expect_equal("the planted leak at exp_f64" ${leak_found} ON)
message(STATUS "not certified; FAIL, CRASH, TIMEOUT and the leak where planted")
