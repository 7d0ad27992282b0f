# Variants of matmul and addmm (kernels/linalg.cpp): one per dtype; the
# tiling is chosen at launch through specialization constants.
foreach(_dtype f32 f64 f16)
  string(TOUPPER "${_dtype}" _dt)
  hal_vulkan_shader(matmul_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/linalg/matmul.comp
                    DEFINES DT_${_dt})
endforeach()
