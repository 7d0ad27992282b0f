# The standard kernel table (hal/kernels/table/*.json, tolerances.json) and
# what the build generates from it with hal-kernel-gen, a host tool:
#   HAL_KERNEL_HEADER     generated/include/hal/standard_kernels.h (installed)
#   HAL_KERNEL_TABLE_CPP  generated/conformance/kernel_table.cpp
#                         (the conformance suite's C++ table)
#   HAL_KERNEL_DOCS       generated/docs/kernels.md: the committed
#                         docs/kernels.md must equal it (test kernel_docs);
#                         target update-kernel-docs copies it there.
# Target hal_kernel_table builds all three.

set(HAL_KERNEL_SET_VERSION 1)
set(HAL_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
set(HAL_KERNEL_HEADER ${HAL_GENERATED_DIR}/include/hal/standard_kernels.h)
set(HAL_KERNEL_TABLE_CPP ${HAL_GENERATED_DIR}/conformance/kernel_table.cpp)
set(HAL_KERNEL_DOCS ${HAL_GENERATED_DIR}/docs/kernels.md)
set(_hal_kernels_dir ${CMAKE_CURRENT_LIST_DIR}/..)
file(GLOB _hal_kernel_table_files CONFIGURE_DEPENDS
     ${_hal_kernels_dir}/table/*.json)
list(SORT _hal_kernel_table_files)
set(_hal_kernel_tolerances ${_hal_kernels_dir}/tolerances.json)

add_executable(hal-kernel-gen ${CMAKE_CURRENT_LIST_DIR}/hal_kernel_gen.cpp)
target_compile_features(hal-kernel-gen PRIVATE cxx_std_20)
target_link_libraries(hal-kernel-gen PRIVATE nlohmann_json::nlohmann_json)

add_custom_command(
  OUTPUT ${HAL_KERNEL_HEADER} ${HAL_KERNEL_TABLE_CPP} ${HAL_KERNEL_DOCS}
  COMMAND hal-kernel-gen --version ${HAL_KERNEL_SET_VERSION}
          --tolerances ${_hal_kernel_tolerances}
          --header ${HAL_KERNEL_HEADER} --cpp ${HAL_KERNEL_TABLE_CPP}
          --docs ${HAL_KERNEL_DOCS} ${_hal_kernel_table_files}
  DEPENDS hal-kernel-gen ${_hal_kernel_table_files} ${_hal_kernel_tolerances}
  COMMENT "Generating the standard kernel set from hal/kernels/table"
  VERBATIM)
add_custom_target(hal_kernel_table
  DEPENDS ${HAL_KERNEL_HEADER} ${HAL_KERNEL_TABLE_CPP} ${HAL_KERNEL_DOCS})

add_custom_target(update-kernel-docs
  COMMAND ${CMAKE_COMMAND} -E copy ${HAL_KERNEL_DOCS}
          ${PROJECT_SOURCE_DIR}/docs/kernels.md
  DEPENDS ${HAL_KERNEL_DOCS}
  COMMENT "Rewriting docs/kernels.md from the kernel table"
  VERBATIM)

if(HAL_BUILD_TESTS)
  add_test(NAME kernel_docs
           COMMAND ${CMAKE_COMMAND} -DGENERATED=${HAL_KERNEL_DOCS}
                   -DCOMMITTED=${PROJECT_SOURCE_DIR}/docs/kernels.md
                   -P ${CMAKE_CURRENT_LIST_DIR}/check_docs.cmake)
endif()
