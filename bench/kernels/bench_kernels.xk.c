/*
 * The kernels `xpar-devbench kernel` calibrates (bench_kernel.c), written once
 * and compiled for both sides by the shipped xpar_add_kernels, as an
 * application's would be: a bandwidth-bound one and a compute-bound one,
 * whose thresholds differ from each other and from the built-in defaults.
 */
#include "xpar/xpar_kernel.h"

/* y = a x + y in float.  0: a (scalar), 1: x (read), 2: y (read-write). */
XPAR_KERNEL(bench_saxpy, i) {
  const float a = XPAR_SCALAR(float, 0);
  const float *x = XPAR_ARRAY(const float, 1);
  float *y = XPAR_ARRAY(float, 2);
  y[i] = a * x[i] + y[i];
}

/* out[i] = 64 steps of the logistic map from x[i] (r = 3.7), in float: a
 * dependent chain of 128 flops per element, so the GPU pays off at smaller
 * n than for saxpy.  0: x (read), 1: out (write). */
XPAR_KERNEL(bench_logistic64, i) {
  const float *x = XPAR_ARRAY(const float, 0);
  float *out = XPAR_ARRAY(float, 1);
  float v = x[i];
  for (int s = 0; s < 64; s++) v = 3.7f * v * (1.0f - v);
  out[i] = v;
}
