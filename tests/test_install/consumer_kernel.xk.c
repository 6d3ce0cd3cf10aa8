/* The consumer's kernel, written once (xpar/xpar_kernel.h): z = x^2 + s y. */
#include <stdint.h>

#include <xpar/xpar_kernel.h>

XPAR_KERNEL(consumer_fma, i) {
  const int64_t s = XPAR_SCALAR(int64_t, 0);
  const int64_t *x = XPAR_ARRAY(const int64_t, 1);
  const int64_t *y = XPAR_ARRAY(const int64_t, 2);
  int64_t *z = XPAR_ARRAY(int64_t, 3);
  z[i] = x[i] * x[i] + s * y[i];
}
