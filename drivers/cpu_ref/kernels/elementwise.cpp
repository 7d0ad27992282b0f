// The elementwise family's kernel list.
#include "kernels/elementwise.h"

namespace cpu_ref {

KernelList ElementwiseKernels() {
  static const KernelDef* const kKernels[] = {&kFillKernel, &kCopyKernel,
                                              &kAddKernel, &kMulKernel};
  return kKernels;
}

}  // namespace cpu_ref
