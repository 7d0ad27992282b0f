# Variants of layer_norm and nll_loss (kernels/nn.cpp): one per pass and
# dtype. batch_norm's are in conv.cmake.
foreach(_dtype f32 f64 f16)
  string(TOUPPER "${_dtype}" _dt)
  foreach(_pass forward grad_in grad_params)
    string(TOUPPER "${_pass}" _PASS)
    hal_vulkan_shader(layer_norm_${_pass}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/nn/layer_norm.comp
                      DEFINES PASS_${_PASS} DT_${_dt})
  endforeach()
  foreach(_pass check loss grad)
    string(TOUPPER "${_pass}" _PASS)
    hal_vulkan_shader(nll_loss_${_pass}_${_dtype} ${CMAKE_CURRENT_LIST_DIR}/nn/nll_loss.comp
                      DEFINES PASS_${_PASS} DT_${_dt})
  endforeach()
endforeach()
