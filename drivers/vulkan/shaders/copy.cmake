# Variants of fill and copy (kernels/copy.cpp): fill_<dtype>, and
# copy_<out>_<in> for every pair (equal dtypes move bits of their size).
# bf16 is not offered by this driver.
set(_hal_copy_dtypes f32 f64 f16 i64 i32 i16 i8 u8 bool)
set(_hal_copy_bits_f32 32)
set(_hal_copy_bits_f64 64)
set(_hal_copy_bits_f16 16)
set(_hal_copy_bits_i64 64)
set(_hal_copy_bits_i32 32)
set(_hal_copy_bits_i16 16)
set(_hal_copy_bits_i8 8)
set(_hal_copy_bits_u8 8)
set(_hal_copy_bits_bool 8)
foreach(_out IN LISTS _hal_copy_dtypes)
  string(TOUPPER "${_out}" _out_upper)
  hal_vulkan_shader(fill_${_out} copy/fill.comp DEFINES DT_${_out_upper})
  foreach(_in IN LISTS _hal_copy_dtypes)
    string(TOUPPER "${_in}" _in_upper)
    if(_in STREQUAL _out)
      hal_vulkan_shader(copy_${_out}_${_in} copy/copy.comp
                        DEFINES BITS_${_hal_copy_bits_${_out}})
    else()
      hal_vulkan_shader(copy_${_out}_${_in} copy/copy.comp
                        DEFINES OUT_${_out_upper} IN_${_in_upper})
    endif()
  endforeach()
endforeach()
