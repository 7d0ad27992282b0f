/* The standard kernel set, version 1 (first part): kernels every driver
 * provides under these names through kernel_lookup(device, NULL, name).
 *
 * Conventions for every kernel:
 *  - Arguments are positional; the output tensor comes first.
 *  - Inputs have the output's rank and sizes unless a kernel says otherwise;
 *    broadcasting is expressed by the caller with stride 0.
 *  - All tensors of a call share one dtype unless a kernel says otherwise.
 *  - Results are deterministic: the same inputs give the same bits, whatever
 *    the number of threads.
 *  - A wrong argument count, kind, rank, shape or a NULL pointer with a
 *    non-empty tensor is INVALID_ARGUMENT; a dtype the device lacks, or one
 *    the kernel does not define, is UNSUPPORTED.
 */
#ifndef HAL_STANDARD_KERNELS_H_
#define HAL_STANDARD_KERNELS_H_

#define HAL_KERNEL_SET_VERSION 1

/* fill(out: tensor, value: f64 | i64)
 *   out[i] = value converted to out's dtype (any dtype). */
#define HAL_KERNEL_FILL "fill"

/* copy(out: tensor, in: tensor)
 *   out[i] = in[i] converted to out's dtype. Dtypes may differ (any pair).
 *   Float to integer truncates toward zero; anything to bool is (x != 0).
 *   If out and in overlap, the result is as if in were read first. */
#define HAL_KERNEL_COPY "copy"

/* add(out, a, b: tensor, alpha: f64 | i64)
 *   out[i] = a[i] + alpha * b[i]. Numeric dtypes (not bool). */
#define HAL_KERNEL_ADD "add"

/* mul(out, a, b: tensor)
 *   out[i] = a[i] * b[i]. Numeric dtypes; bool is logical and. */
#define HAL_KERNEL_MUL "mul"

/* sum(out, in: tensor)
 *   Same rank; each out.sizes[d] is in.sizes[d] or 1, and the dims where it
 *   is 1 are summed over (keepdim form). Floats accumulate in double,
 *   integers and bool in int64; the result is converted to out's dtype,
 *   which may differ from in's. Summing an empty range gives 0. */
#define HAL_KERNEL_SUM "sum"

/* matmul(out [..., M, N], a [..., M, K], b [..., K, N]: tensor)
 *   Batched matrix product; rank >= 2, equal for all three; batch sizes
 *   equal (broadcast with stride 0). Any strides (transposed operands).
 *   Floating dtypes; accumulation in the dtype's accumulate type (f32 for
 *   f16/bf16/f32, f64 for f64) in increasing k order. */
#define HAL_KERNEL_MATMUL "matmul"

#endif /* HAL_STANDARD_KERNELS_H_ */
