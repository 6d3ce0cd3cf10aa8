/*
 * Kernels of the test suite, each written once and compiled for both sides
 * by xpar_add_kernels (tests/CMakeLists.txt): the C compiler makes the CPU
 * loop and the kernel object, nvcc (in CUDA builds) the grid-stride kernel.
 */
#include <stdint.h>
#include <stdio.h>

#include "xpar/xpar_kernel.h"

/* y = a x + y in uint32 (wrapping).  0: a (scalar), 1: x (read), 2: y (read-write). */
XPAR_KERNEL(xk_axpy_u32, i) {
  const uint32_t a = XPAR_SCALAR(uint32_t, 0);
  const uint32_t *x = XPAR_ARRAY(const uint32_t, 1);
  uint32_t *y = XPAR_ARRAY(uint32_t, 2);
  y[i] = a * x[i] + y[i];
}

/* out[i] = table[idx[i] % m] + bias, int64 wrapping; the table has its own
 * count (m), unrelated to n.  0: table (read, m), 1: idx (read, n uint32),
 * 2: out (write, n), 3: {m, bias} (a scalar of two int64). */
XPAR_KERNEL(xk_gather_i64, i) {
  const int64_t *table = XPAR_ARRAY(const int64_t, 0);
  const uint32_t *idx = XPAR_ARRAY(const uint32_t, 1);
  int64_t *out = XPAR_ARRAY(int64_t, 2);
  const int64_t *s = &XPAR_SCALAR(int64_t, 3);
  const uint64_t m = (uint64_t)s[0];
  out[i] = (int64_t)((uint64_t)table[idx[i] % m] + (uint64_t)s[1]);
}

/* out[i] = c x[i]^2 + x[i] in double.  0: c (scalar), 1: x (read), 2: out (write). */
XPAR_KERNEL(xk_poly_f64, i) {
  const double c = XPAR_SCALAR(double, 0);
  const double *x = XPAR_ARRAY(const double, 1);
  double *out = XPAR_ARRAY(double, 2);
  out[i] = c * x[i] * x[i] + x[i];
}

/* No arguments: one line per index, for the order of the serial tiers. */
XPAR_KERNEL(xk_print, i) { printf("xk_print i=%u\n", (unsigned)i); }
