/*
 * Application kernels and an operator for probe_kernels / probe_sticky,
 * compiled twice as xpar_add_kernels does (cmake/xpar_kernels.cmake): once by
 * the C compiler with -DXPAR_KERNEL_WITH_CUDA=1 -fopenmp, once by nvcc -x cu.
 */
#include <stdint.h>
#include "xpar/xpar_kernel.h"

/* out[i] = a * x[i] + (y[i] ^ (uint32_t)i), uint32 wrapping.
 * 0: a (scalar), 1: x (read), 2: y (read), 3: out (write). */
XPAR_KERNEL(ga_mix_u32, i) {
  const uint32_t a = XPAR_SCALAR(uint32_t, 0);
  const uint32_t *x = XPAR_ARRAY(const uint32_t, 1);
  const uint32_t *y = XPAR_ARRAY(const uint32_t, 2);
  uint32_t *out = XPAR_ARRAY(uint32_t, 3);
  out[i] = a * x[i] + (y[i] ^ (uint32_t)i);
}

/* y[i] = y[i] * 3 + x[i], int64 wrapping (through uint64).  0: x (read), 1: y (read-write). */
XPAR_KERNEL(ga_acc_i64, i) {
  const int64_t *x = XPAR_ARRAY(const int64_t, 0);
  int64_t *y = XPAR_ARRAY(int64_t, 1);
  y[i] = (int64_t)((uint64_t)y[i] * 3u + (uint64_t)x[i]);
}

/* Faults on the GPU (index 0 traps); does nothing on the CPU. */
XPAR_KERNEL(ga_trap, i) {
#if defined(__CUDA_ARCH__)
  if (i == 0) __trap();
#else
  (void)i;
#endif
}

/* 2x2 matrix product mod 2^32, in index order (not commutative).
 * Element i is [[in[i], 1], [1, 0]]. */
typedef struct {
  uint32_t m00, m01, m10, m11;
} ga_mat;
static XPAR_KERNEL_FN inline ga_mat ga_mat_id(void) {
  ga_mat r = {1u, 0u, 0u, 1u};
  return r;
}
static XPAR_KERNEL_FN inline ga_mat ga_mat_mul(ga_mat a, ga_mat b) {
  ga_mat r;
  r.m00 = a.m00 * b.m00 + a.m01 * b.m10;
  r.m01 = a.m00 * b.m01 + a.m01 * b.m11;
  r.m10 = a.m10 * b.m00 + a.m11 * b.m10;
  r.m11 = a.m10 * b.m01 + a.m11 * b.m11;
  return r;
}
static XPAR_KERNEL_FN inline ga_mat ga_mat_load(const uint32_t *in, size_t i) {
  ga_mat r = {in[i], 1u, 1u, 0u};
  return r;
}
XPAR_OPERATOR(ga_matprod, ga_mat, uint32_t, ga_mat_id, ga_mat_mul, ga_mat_load);
