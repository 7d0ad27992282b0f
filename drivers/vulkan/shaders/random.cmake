# Variants of uniform, normal and bernoulli (kernels/random.cpp): one of
# random/random.comp per kernel and dtype; bernoulli with a tensor p also
# per p's dtype ("bernoulli_p<p dtype>_<dtype>").
foreach(_dtype f32 f64 f16 bool)
  string(TOUPPER "${_dtype}" _dt)
  if(NOT _dtype STREQUAL "bool")
    foreach(_kernel uniform normal)
      string(TOUPPER "${_kernel}" _op)
      hal_vulkan_shader(${_kernel}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/random/random.comp
                        DEFINES OP_${_op} DT_${_dt})
    endforeach()
  endif()
  hal_vulkan_shader(bernoulli_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/random/random.comp
                    DEFINES OP_BERNOULLI DT_${_dt})
  foreach(_p f32 f64 f16)
    string(TOUPPER "${_p}" _pt)
    hal_vulkan_shader(bernoulli_p${_p}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/random/random.comp
                      DEFINES OP_BERNOULLI DT_${_dt} P_${_pt})
  endforeach()
endforeach()
