# Variants of the reduction family (kernels/reduction.cpp, softmax.cpp):
# reduction/reduce.comp per operation and input dtype, and
# reduction/softmax.comp per operation and dtype. std shares var's variant.
set(_hal_all_dtypes f32 f64 f16 i64 i32 i16 i8 u8 bool)
set(_hal_float_dtypes f32 f64 f16)

function(_hal_reduce_variants op)
  string(TOUPPER "${op}" _op)
  foreach(_dtype IN LISTS ARGN)
    string(TOUPPER "${_dtype}" _dt)
    hal_vulkan_shader(${op}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/reduction/reduce.comp
                      DEFINES OP_${_op} DT_${_dt})
  endforeach()
endfunction()

_hal_reduce_variants(sum ${_hal_all_dtypes})
_hal_reduce_variants(mean ${_hal_float_dtypes})
_hal_reduce_variants(prod f32 f64 f16 i64 i32 i16 i8 u8)
_hal_reduce_variants(amax ${_hal_all_dtypes})
_hal_reduce_variants(amin ${_hal_all_dtypes})
_hal_reduce_variants(all ${_hal_all_dtypes})
_hal_reduce_variants(any ${_hal_all_dtypes})
_hal_reduce_variants(var ${_hal_float_dtypes})
_hal_reduce_variants(argmax ${_hal_all_dtypes})
_hal_reduce_variants(argmin ${_hal_all_dtypes})
# An f16/f32 input summed into an f64 output accumulates in double.
foreach(_dtype f32 f16)
  string(TOUPPER "${_dtype}" _dt)
  hal_vulkan_shader(sum_wide_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/reduction/reduce.comp
                    DEFINES OP_SUM ACC_F64 DT_${_dt})
endforeach()

foreach(_op softmax log_softmax softmax_backward log_softmax_backward)
  string(TOUPPER "${_op}" _OP)
  foreach(_dtype IN LISTS _hal_float_dtypes)
    string(TOUPPER "${_dtype}" _dt)
    hal_vulkan_shader(${_op}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/reduction/softmax.comp
                      DEFINES OP_${_OP} DT_${_dt})
  endforeach()
endforeach()
