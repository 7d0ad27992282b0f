# Test kernel_docs: the committed docs/kernels.md (COMMITTED) must equal the
# one generated from the kernel table (GENERATED).
file(READ ${GENERATED} generated)
if(EXISTS ${COMMITTED})
  file(READ ${COMMITTED} committed)
else()
  set(committed "")
endif()
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR
    "${COMMITTED} does not match the kernel table; rewrite it with "
    "`cmake --build <build dir> --target update-kernel-docs`")
endif()
