# Variants of sgd_step and adam_step (kernels/optim.cpp): one of
# optim/optim.comp per kernel and dtype.
foreach(_dtype f32 f64 f16)
  string(TOUPPER "${_dtype}" _dt)
  foreach(_kernel sgd_step adam_step)
    string(TOUPPER "${_kernel}" _op)
    hal_vulkan_shader(${_kernel}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/optim/optim.comp
                      DEFINES OP_${_op} DT_${_dt})
  endforeach()
endforeach()
