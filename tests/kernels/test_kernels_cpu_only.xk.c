/* A kernel compiled for the CPU only (xpar_add_kernels ... CPU_ONLY), in
 * every build: the suite's kernel without a GPU variant. */
#include <stdint.h>

#include "xpar/xpar_kernel.h"

/* out[i] = x[i]^2 in uint32.  0: x (read), 1: out (write). */
XPAR_KERNEL(xk_square_cpu_only, i) {
  const uint32_t *x = XPAR_ARRAY(const uint32_t, 0);
  uint32_t *out = XPAR_ARRAY(uint32_t, 1);
  out[i] = x[i] * x[i];
}
