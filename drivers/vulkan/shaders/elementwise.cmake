# Variants of the elementwise family (kernels/elementwise.cpp): one of
# elementwise/map.comp per kernel and dtype (the kernel's dtype: out's, or
# a's for the bool-valued ops), plus "stage", the identity that stages an
# input other families reuse. bf16 is not offered by this driver.
set(_hal_map_float f32 f64 f16)
set(_hal_map_integer i64 i32 i16 i8 u8)
set(_hal_map_numeric ${_hal_map_float} ${_hal_map_integer})
set(_hal_map_all ${_hal_map_numeric} bool)

function(_hal_map_variants kernel)
  string(TOUPPER "${kernel}" _op)
  foreach(_dtype IN LISTS ARGN)
    string(TOUPPER "${_dtype}" _dt)
    hal_vulkan_shader(${kernel}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/elementwise/map.comp
                      DEFINES OP_${_op} DT_${_dt})
  endforeach()
endfunction()

foreach(_kernel stage mul maximum minimum eq ne lt le gt ge logical_and
                logical_or logical_xor logical_not where)
  _hal_map_variants(${_kernel} ${_hal_map_all})
endforeach()
foreach(_kernel neg abs relu sign floor ceil round trunc threshold_backward
                add sub div clamp addcmul)
  _hal_map_variants(${_kernel} ${_hal_map_numeric})
endforeach()
foreach(_kernel exp log log1p expm1 sqrt rsqrt sin cos tanh sigmoid gelu silu
                erf reciprocal sigmoid_backward tanh_backward gelu_backward
                silu_backward pow addcdiv lerp)
  _hal_map_variants(${_kernel} ${_hal_map_float})
endforeach()
foreach(_kernel bitwise_and bitwise_or bitwise_xor)
  _hal_map_variants(${_kernel} ${_hal_map_integer} bool)
endforeach()
