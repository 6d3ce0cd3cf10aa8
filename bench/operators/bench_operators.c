/*
 * xpar-operator-bench [log2_min [log2_max]]: GB/s of an application
 * operator (examples/operators/operators.xk.c: xk_sum_u32, a 4-byte scalar
 * sum) against the built-in uint32 sum, for xpar_reduce_op vs xpar_reduce
 * and xpar_scan_op vs xpar_scan (exclusive), on cudaMalloc'd data with the
 * backend forced to cuda.  Median of 15 timed calls after 3 warm-ups, each
 * call synchronous (wall clock around it); bytes counted: n x 4 read (+ n x 4
 * written for scans).  Prints the ratio built-in / operator per size (the
 * issue's target: at most 1.15).  Both results are compared first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "operators/operators.h"
#include "xpar/xpar_kernel.h"

enum { WARMUP = 3, RUNS = 15 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define TRY(call)                                                                         \
  do {                                                                                    \
    xpar_status s_ = (call);                                                              \
    if (s_ != XPAR_OK) {                                                                  \
      fprintf(stderr, "%s: %s (%s)\n", #call, xpar_status_name(s_), xpar_last_error_detail()); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

/* which: 0 built-in reduce, 1 operator reduce, 2 built-in scan, 3 operator scan. */
static void call(xpar_context *ctx, int which, const uint32_t *in, uint32_t *out, size_t n,
                 uint32_t *result) {
  switch (which) {
    case 0: TRY(xpar_reduce(ctx, XPAR_UINT32, XPAR_SUM, in, n, result)); break;
    case 1: TRY(xpar_reduce_op(ctx, &xk_sum_u32, in, n, result)); break;
    case 2: TRY(xpar_scan(ctx, XPAR_UINT32, XPAR_SUM, XPAR_EXCLUSIVE, in, out, n)); break;
    default: TRY(xpar_scan_op(ctx, &xk_sum_u32, XPAR_EXCLUSIVE, in, out, n)); break;
  }
}

static double median_seconds(xpar_context *ctx, int which, const uint32_t *in, uint32_t *out,
                             size_t n) {
  double t[RUNS];
  uint32_t r;
  for (int i = 0; i < WARMUP; i++) call(ctx, which, in, out, n, &r);
  for (int i = 0; i < RUNS; i++) {
    double t0 = now();
    call(ctx, which, in, out, n, &r);
    t[i] = now() - t0;
  }
  qsort(t, RUNS, sizeof t[0], cmp);
  return t[RUNS / 2];
}

int main(int argc, char **argv) {
  int lo = argc > 1 ? atoi(argv[1]) : 20, hi = argc > 2 ? atoi(argv[2]) : 28;
  xpar_device_info info;
  TRY(xpar_device_query(&info));
  if (!info.usable) {
    printf("xpar-operator-bench: no usable GPU (%s)\n", info.reason);
    return 0;
  }
  xpar_context *ctx;
  TRY(xpar_context_create(&ctx));
  TRY(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  TRY(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  const size_t nmax = (size_t)1 << hi;
  uint32_t *host = malloc(nmax * sizeof *host), *din, *dout, *check = malloc(nmax * sizeof *check);
  if (!host || !check) return 1;
  for (size_t i = 0; i < nmax; i++) host[i] = (uint32_t)(i * 2654435761u);
  if (cudaMalloc((void **)&din, nmax * 4) != cudaSuccess ||
      cudaMalloc((void **)&dout, nmax * 4) != cudaSuccess ||
      cudaMemcpy(din, host, nmax * 4, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc / cudaMemcpy failed\n");
    return 1;
  }
  printf("%s; median of %d synchronous calls; GB/s\n", info.name, RUNS);
  printf("%6s %12s %12s %7s %12s %12s %7s\n", "log2n", "reduce", "op reduce", "ratio", "scan",
         "op scan", "ratio");
  for (int k = lo; k <= hi; k++) {
    const size_t n = (size_t)1 << k;
    uint32_t a, b;
    call(ctx, 0, din, dout, n, &a);
    call(ctx, 1, din, dout, n, &b);
    if (a != b) fprintf(stderr, "n=2^%d: operator reduce %u != built-in %u\n", k, b, a);
    call(ctx, 2, din, dout, n, &a);
    cudaMemcpy(check, dout, n * 4, cudaMemcpyDeviceToHost);
    call(ctx, 3, din, dout, n, &a);
    cudaMemcpy(host, dout, n * 4, cudaMemcpyDeviceToHost);
    if (memcmp(host, check, n * 4) != 0) fprintf(stderr, "n=2^%d: operator scan differs\n", k);
    double gb[4];
    for (int w = 0; w < 4; w++)
      gb[w] = (double)n * 4 * (w >= 2 ? 2 : 1) / median_seconds(ctx, w, din, dout, n) / 1e9;
    printf("%6d %12.1f %12.1f %7.2f %12.1f %12.1f %7.2f\n", k, gb[0], gb[1], gb[0] / gb[1],
           gb[2], gb[3], gb[2] / gb[3]);
  }
  cudaFree(din);
  cudaFree(dout);
  free(host);
  free(check);
  xpar_context_destroy(ctx);
  return 0;
}
