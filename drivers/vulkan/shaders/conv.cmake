# Variants of the conv family (kernels/conv.cpp, pool.cpp, batch_norm.cpp):
# every shader in conv/ once per floating dtype the table lists (bf16 is not
# offered), named "<shader>_<dtype>"; the multi-pass kernels' shaders are
# named "<kernel>_<pass>". max_pool2d_backward's verdict pass reads no
# tensor element, so it has one variant.
foreach(_shader
    conv2d
    conv2d_backward_input
    conv2d_backward_weight
    max_pool2d
    max_pool2d_backward_scatter
    max_pool2d_backward_store
    batch_norm_stats
    batch_norm_normalize
    batch_norm_finish
    batch_norm_backward_stats
    batch_norm_backward_grad_in
    batch_norm_backward_finish)
  foreach(_dtype f32 f64 f16)
    string(TOUPPER "${_dtype}" _dt)
    hal_vulkan_shader(${_shader}_${_dtype}
                      ${CMAKE_CURRENT_LIST_DIR}/conv/${_shader}.comp
                      DEFINES DT_${_dt})
  endforeach()
endforeach()
hal_vulkan_shader(max_pool2d_backward_verdict
                  ${CMAKE_CURRENT_LIST_DIR}/conv/max_pool2d_backward_verdict.comp)
