# The ctest check of report.html: renders it in headless Chromium and reads
# the rendered DOM for the verdict and the identity table.
#
#   cmake -DCHROMIUM=<chromium or empty> -DREPORT=<report dir>
#         -DEXPECT=certified|wrong -DWORK=<scratch dir> -P check_html.cmake
#
# Without Chromium it prints a SKIP line, which the test maps to skipped.
cmake_minimum_required(VERSION 3.25)

if(NOT CHROMIUM)
  message(STATUS "SKIP: chromium is not installed (scripts/bootstrap "
                 "installs Debian's chromium)")
  return()
endif()
file(READ ${REPORT}/report.json report)
string(JSON driver_name GET "${report}" identity driver name)
string(JSON driver_sha GET "${report}" identity driver sha256)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
execute_process(
  COMMAND ${CHROMIUM} --headless --no-sandbox --disable-gpu
          --user-data-dir=${WORK} --dump-dom file://${REPORT}/report.html
  OUTPUT_VARIABLE dom ERROR_VARIABLE log RESULT_VARIABLE status
  TIMEOUT 120)
if(NOT status EQUAL 0 OR dom STREQUAL "")
  message(FATAL_ERROR "chromium could not render the report (${status}): ${log}")
endif()

function(expect_in_dom what regex)
  if(NOT dom MATCHES "${regex}")
    message(FATAL_ERROR "the rendered report lacks ${what} (/${regex}/)")
  endif()
endfunction()

if(EXPECT STREQUAL "certified")
  set(verdict "CERTIFIED")
  expect_in_dom("copy bandwidth with its unit"
                "<table id=\"performance\">.*host → device</th><td class=\"n\">[0-9.e+-]+ GB/s")
else()
  set(verdict "NOT CERTIFIED")
  # What kept it from certification is listed above the detail.
  expect_in_dom("the table of failures" "<table id=\"failures\">.*FAIL")
endif()
expect_in_dom("the verdict" "<div id=\"verdict\"[^>]*>${verdict}</div>")
expect_in_dom("the verdict's reasons" "<ul id=\"reasons\">[ \n]*<li>")
expect_in_dom("the identity table with the driver"
              "<table id=\"identity\">.*<th>Driver</th><td>${driver_name} ")
expect_in_dom("the driver's digest in the identity table"
              "<table id=\"identity\">.*<code>${driver_sha}</code>")
string(FIND "${dom}" "<div id=\"verdict\"" verdict_at)
string(FIND "${dom}" "<table id=\"identity\">" identity_at)
if(identity_at LESS verdict_at)
  message(FATAL_ERROR "the verdict is not on top of the report")
endif()
message(STATUS "report.html renders: ${verdict}, identity of ${driver_name}")
