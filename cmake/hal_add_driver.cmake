# hal_add_driver(NAME <name> SOURCES <file>... [LIBRARIES <target>...])
#
# Builds libhal_driver_<name>.so the way every driver of this repository is
# built (docs/architecture.md §1): a MODULE that sees HAL only through
# hal::driver_abi (and, for our drivers, the driver kit), with hidden
# visibility, exporting hal_driver_get_api alone (driver_exports.map), with
# every symbol resolved at link time, and installed next to libhal.so, where
# the loader looks (install component driver_<name>). The target is
# hal_driver_<name>.
include_guard(GLOBAL)
include(GNUInstallDirs)

set(HAL_DRIVER_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/driver_exports.map)

function(hal_add_driver)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME" "SOURCES;LIBRARIES")
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "hal_add_driver: NAME and SOURCES are required")
  endif()
  set(target hal_driver_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE hal::driver_abi ${ARG_LIBRARIES})
  target_compile_features(${target} PRIVATE cxx_std_20)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE -Wl,--no-undefined
    -Wl,--version-script=${HAL_DRIVER_EXPORTS_MAP})
  set_property(TARGET ${target} APPEND PROPERTY
    LINK_DEPENDS ${HAL_DRIVER_EXPORTS_MAP})
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT driver_${ARG_NAME})
endfunction()
