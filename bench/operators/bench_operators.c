/*
 * xpar-operator-bench [--us] [log2_min [log2_max]]: GB/s of application operators
 * (examples/operators/operators.xk.c) against the built-in operations on the
 * same bytes, on cudaMalloc'd data with the backend forced to cuda:
 *  - xk_sum_u32 (a 4-byte scalar operator, uint32 sum) against the built-in
 *    uint32 sum: reduce, inclusive scan, exclusive scan (the target:
 *    built-in / operator at most 1.15);
 *  - xk_argmin (int32 in, a 16-byte (value, index) accumulator) reduce against
 *    the built-in int32 min reduce;
 *  - xk_recurrence (8-byte affine pairs of uint32) inclusive scan of n/2 pairs
 *    against the built-in uint64 sum scan of n/2 elements (the same bytes).
 * Median of 15 timed calls after 3 warm-ups, each call synchronous (wall clock
 * around it); bytes counted: what is read (+ what is written for scans).  The
 * operator results are compared with the built-in ones first.  --us: the median
 * call in microseconds instead (201 timed calls after 20 warm-ups, for the small
 * sizes where a call is its latency); the ratio is then operator / built-in time,
 * the same quantity as built-in / operator GB/s.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "operators/operators.h"
#include "xpar/xpar_kernel.h"

enum { WARMUP = 3, RUNS = 15, WARMUP_US = 20, RUNS_US = 201 };

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

enum which {
  W_REDUCE, W_OP_REDUCE, W_INCL, W_OP_INCL, W_EXCL, W_OP_EXCL, W_MIN, W_ARGMIN, W_SCAN64,
  W_AFFINE, W_COUNT
};
static const char *const which_names[W_COUNT] = {"reduce", "op", "incl", "op", "excl", "op",
                                                 "min i32", "argmin", "scan u64", "affine"};
/* Bytes moved per element of n (uint32 units). */
static const double which_bytes[W_COUNT] = {4, 4, 8, 8, 8, 8, 4, 4, 8, 8};

/* One synchronous call over n uint32 (n / 2 pairs or uint64 for the last two). */
static void call(xpar_context *ctx, int which, const uint32_t *in, uint32_t *out, size_t n,
                 void *result) {
  switch (which) {
    case W_REDUCE: TRY(xpar_reduce(ctx, XPAR_UINT32, XPAR_SUM, in, n, result)); break;
    case W_OP_REDUCE: TRY(xpar_reduce_op(ctx, &xk_sum_u32, in, n, result)); break;
    case W_INCL: TRY(xpar_scan(ctx, XPAR_UINT32, XPAR_SUM, XPAR_INCLUSIVE, in, out, n)); break;
    case W_OP_INCL: TRY(xpar_scan_op(ctx, &xk_sum_u32, XPAR_INCLUSIVE, in, out, n)); break;
    case W_EXCL: TRY(xpar_scan(ctx, XPAR_UINT32, XPAR_SUM, XPAR_EXCLUSIVE, in, out, n)); break;
    case W_OP_EXCL: TRY(xpar_scan_op(ctx, &xk_sum_u32, XPAR_EXCLUSIVE, in, out, n)); break;
    case W_MIN: TRY(xpar_reduce(ctx, XPAR_INT32, XPAR_MIN, in, n, result)); break;
    case W_ARGMIN: TRY(xpar_reduce_op(ctx, &xk_argmin, in, n, result)); break;
    case W_SCAN64:
      TRY(xpar_scan(ctx, XPAR_UINT64, XPAR_SUM, XPAR_INCLUSIVE, in, out, n / 2));
      break;
    default: TRY(xpar_scan_op(ctx, &xk_recurrence, XPAR_INCLUSIVE, in, out, n / 2)); break;
  }
}

static double median_seconds(xpar_context *ctx, int which, const uint32_t *in, uint32_t *out,
                             size_t n, int warmup, int runs) {
  double t[RUNS_US];
  xk_arg r; /* the largest result */
  for (int i = 0; i < warmup; i++) call(ctx, which, in, out, n, &r);
  for (int i = 0; i < runs; i++) {
    double t0 = now();
    call(ctx, which, in, out, n, &r);
    t[i] = now() - t0;
  }
  qsort(t, (size_t)runs, sizeof t[0], cmp);
  return t[runs / 2];
}

/* The built-in scan `builtin` and the operator scan `op` write the same bytes. */
static void compare_scans(xpar_context *ctx, int builtin, int op, const uint32_t *din,
                          uint32_t *dout, size_t n, uint32_t *a, uint32_t *b, int k) {
  uint32_t r;
  call(ctx, builtin, din, dout, n, &r);
  cudaMemcpy(a, dout, n * 4, cudaMemcpyDeviceToHost);
  call(ctx, op, din, dout, n, &r);
  cudaMemcpy(b, dout, n * 4, cudaMemcpyDeviceToHost);
  if (memcmp(a, b, n * 4) != 0)
    fprintf(stderr, "n=2^%d: operator %s scan differs from the built-in\n", k,
            which_names[builtin]);
}

int main(int argc, char **argv) {
  const int us = argc > 1 && strcmp(argv[1], "--us") == 0;
  if (us) argc--, argv++;
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
  if (us)
    printf("%s; median of %d synchronous calls; us (ratio: operator / built-in)\n", info.name,
           RUNS_US);
  else
    printf("%s; median of %d synchronous calls; GB/s (ratio: built-in / operator)\n", info.name,
           RUNS);
  printf("%5s", "log2n");
  for (int w = 0; w < W_COUNT; w++) printf(" %9s%s", which_names[w], w % 2 ? "  ratio" : "");
  printf("\n");
  for (int k = lo; k <= hi; k++) {
    const size_t n = (size_t)1 << k;
    uint32_t a, b;
    call(ctx, W_REDUCE, din, dout, n, &a);
    call(ctx, W_OP_REDUCE, din, dout, n, &b);
    if (a != b) fprintf(stderr, "n=2^%d: operator reduce %u != built-in %u\n", k, b, a);
    int32_t m;
    xk_arg am;
    call(ctx, W_MIN, din, dout, n, &m);
    call(ctx, W_ARGMIN, din, dout, n, &am);
    if (am.v != m || am.i < 0 || (size_t)am.i >= n)
      fprintf(stderr, "n=2^%d: argmin (%d, %lld) but min %d\n", k, am.v, (long long)am.i, m);
    compare_scans(ctx, W_INCL, W_OP_INCL, din, dout, n, check, host, k);
    compare_scans(ctx, W_EXCL, W_OP_EXCL, din, dout, n, check, host, k);
    double gb[W_COUNT];
    for (int w = 0; w < W_COUNT; w++) {
      const double t = us ? median_seconds(ctx, w, din, dout, n, WARMUP_US, RUNS_US)
                          : median_seconds(ctx, w, din, dout, n, WARMUP, RUNS);
      gb[w] = us ? t * 1e6 : (double)n * which_bytes[w] / t / 1e9;
    }
    printf("%5d", k);
    for (int w = 0; w < W_COUNT; w++) {
      printf(" %9.*f", us ? 2 : 1, gb[w]);
      if (w % 2) printf(" %6.3f", us ? gb[w] / gb[w - 1] : gb[w - 1] / gb[w]);
    }
    printf("\n");
    fflush(stdout);
  }
  cudaFree(din);
  cudaFree(dout);
  free(host);
  free(check);
  xpar_context_destroy(ctx);
  return 0;
}
