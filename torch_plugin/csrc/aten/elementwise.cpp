// Being written: ATen ops of this family mapped onto the standard kernels.
