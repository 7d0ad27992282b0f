# Variants of the indexing family (kernels/indexing.cpp): indexing/index.comp
# per kernel and dtype, and "index_check", the pass that checks the index
# values of every kernel first.
hal_vulkan_shader(index_check ${CMAKE_CURRENT_LIST_DIR}/indexing/index.comp
                  DEFINES OP_CHECK DT_I64)
foreach(_dtype f32 f64 f16 i64 i32 i16 i8 u8 bool)
  string(TOUPPER "${_dtype}" _dt)
  foreach(_kernel index_select gather scatter index_add scatter_add)
    if(_dtype STREQUAL "bool" AND _kernel MATCHES "_add$")
      continue()
    endif()
    string(TOUPPER "${_kernel}" _op)
    hal_vulkan_shader(${_kernel}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/indexing/index.comp
                      DEFINES OP_${_op} DT_${_dt})
  endforeach()
endforeach()
