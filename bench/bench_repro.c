/*
 * xpar-repro-bench: what reproducible mode (docs/reproducible.md) costs.
 *
 *   xpar-repro-bench cpu [threads] [log2n ...]   cpu-openmp tier, host data
 *   xpar-repro-bench gpu [log2n ...]             cuda tier, data mapped to the GPU
 *
 * For sum, wide sum and dot (float and double) and the inclusive sum scan, the
 * same context times the call in default mode and in reproducible mode,
 * alternately, and prints both bandwidths (bytes read + written per second,
 * median of the runs) and the ratio reproducible / default.  Targets: >= 0.9
 * for the reductions, >= 0.6 for the scan.
 * `gpu` also checks, at every size, that the GPU's reproducible results equal
 * the CPU's bit for bit (the reductions' results and every scan element).
 * Only the public API is used.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xpar/xpar.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define MUST(call)                                                                        \
  do {                                                                                    \
    xpar_status s_ = (call);                                                              \
    if (s_ != XPAR_OK) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                 \
              xpar_status_name(s_), xpar_last_error_detail());                            \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

typedef enum { OP_SUM, OP_WIDE, OP_DOT, OP_SCAN, OP_COUNT } op_t;
static const char *const op_names[] = {"sum", "wide sum", "dot", "scan (inclusive)"};

typedef struct arrays {
  void *x, *y, *out;
  size_t n, es;
  xpar_dtype t;
} arrays;

static void run(xpar_context *ctx, op_t op, const arrays *a, void *result) {
  switch (op) {
    case OP_SUM: MUST(xpar_reduce(ctx, a->t, XPAR_SUM, a->x, a->n, result)); break;
    case OP_WIDE: MUST(xpar_reduce_sum_wide(ctx, a->t, a->x, a->n, result)); break;
    case OP_DOT: MUST(xpar_dot(ctx, a->t, a->x, a->y, a->n, result)); break;
    default: MUST(xpar_scan(ctx, a->t, XPAR_SUM, XPAR_INCLUSIVE, a->x, a->out, a->n)); break;
  }
}

static size_t bytes_moved(op_t op, const arrays *a) {
  return (op == OP_DOT || op == OP_SCAN ? 2 : 1) * a->n * a->es;
}

/* Median seconds of `reps` calls in each mode, alternating. */
static void time_both(xpar_context *ctx, op_t op, const arrays *a, int reps, double *def,
                      double *rep) {
  double td[64], tr[64];
  unsigned char result[8];
  for (int m = 0; m < 2; m++) { /* warm-up: scratch, pages, caches */
    MUST(xpar_context_set_reproducible(ctx, m));
    run(ctx, op, a, result);
  }
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < 2; m++) {
      MUST(xpar_context_set_reproducible(ctx, m));
      double t0 = now_s();
      run(ctx, op, a, result);
      (m ? tr : td)[r] = now_s() - t0;
    }
  qsort(td, (size_t)reps, sizeof td[0], cmp);
  qsort(tr, (size_t)reps, sizeof tr[0], cmp);
  *def = td[reps / 2];
  *rep = tr[reps / 2];
  MUST(xpar_context_set_reproducible(ctx, 0));
}

/* Mixed signs and magnitudes 2^-20..2^20; the first 2^20 elements are drawn,
 * the rest repeat them (drawing 2^30 would take longer than the runs). */
static void fill(xpar_dtype t, void *p, size_t n, uint64_t seed) {
  const size_t drawn = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
  const size_t es = xpar_dtype_size(t);
  for (size_t i = 0; i < drawn; i++) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    double v = ldexp(1.0 + (double)(seed >> 12) / 4503599627370496.0, (int)(seed % 41) - 20) *
               ((seed >> 3) & 1 ? -1.0 : 1.0);
    if (t == XPAR_FLOAT) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
  for (size_t have = drawn; have < n; have *= 2)
    memcpy((char *)p + have * es, p, (n - have < have ? n - have : have) * es);
}

/* x, y (inputs) and out of n elements of t, filled; exits when out of memory. */
static void alloc_arrays(arrays *a, xpar_dtype t, size_t log2n) {
  const size_t n = (size_t)1 << log2n;
  a->t = t;
  a->n = n;
  a->es = xpar_dtype_size(t);
  a->x = malloc(n * a->es);
  a->y = malloc(n * a->es);
  a->out = malloc(n * a->es);
  if (!a->x || !a->y || !a->out) {
    fprintf(stderr, "out of host memory at 2^%zu %s\n", log2n, xpar_dtype_name(t));
    exit(1);
  }
  fill(t, a->x, n, 12345);
  fill(t, a->y, n, 67890);
  memset(a->out, 0, n * a->es);
}

static void free_arrays(arrays *a) {
  free(a->x);
  free(a->y);
  free(a->out);
}

static void header(const char *what) {
  printf("%s\n%-8s %-6s %-17s %12s %12s %8s\n", what, "n", "dtype", "op", "default GB/s",
         "repro GB/s", "ratio");
}

static void row(size_t log2n, xpar_dtype t, op_t op, const arrays *a, double def, double rep) {
  double bytes = (double)bytes_moved(op, a);
  printf("2^%-6zu %-6s %-17s %12.1f %12.1f %8.3f\n", log2n, xpar_dtype_name(t), op_names[op],
         bytes / def * 1e-9, bytes / rep * 1e-9, def / rep);
  fflush(stdout);
}

static int reps_for(size_t n) { return n >= ((size_t)1 << 29) ? 7 : 11; }

static int bench_cpu(int threads, const size_t *log2n, int count) {
  xpar_context *ctx;
  MUST(xpar_context_create(&ctx));
  MUST(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU));
  MUST(xpar_context_set_num_threads(ctx, threads));
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < XPAR_DTYPE_COUNT_; d++)
      MUST(xpar_context_set_threshold(ctx, (xpar_op)op, (xpar_dtype)d, XPAR_THRESHOLD_OPENMP, 0));
  char what[96];
  snprintf(what, sizeof what, "cpu-openmp, %d threads (0 = the runtime's default), host data",
           threads);
  header(what);
  const xpar_dtype types[] = {XPAR_FLOAT, XPAR_DOUBLE};
  for (int i = 0; i < count; i++)
    for (int ti = 0; ti < 2; ti++) {
      arrays a;
      alloc_arrays(&a, types[ti], log2n[i]);
      for (int op = 0; op < OP_COUNT; op++) {
        double def, rep;
        time_both(ctx, (op_t)op, &a, reps_for(a.n), &def, &rep);
        row(log2n[i], types[ti], (op_t)op, &a, def, rep);
      }
      free_arrays(&a);
    }
  xpar_context_destroy(ctx);
  return 0;
}

/* The GPU's reproducible results against the CPU's, bit for bit. */
static int check_gpu_against_cpu(xpar_context *gpu, xpar_context *cpu, const arrays *a,
                                 op_t op) {
  unsigned char g[8], c[8];
  MUST(xpar_context_set_reproducible(gpu, 1));
  MUST(xpar_context_set_reproducible(cpu, 1));
  int same;
  if (op == OP_SCAN) {
    void *host = malloc(a->n * a->es);
    if (!host) return 0;
    run(gpu, op, a, g);
    MUST(xpar_update(gpu, a->out, XPAR_UPDATE_FROM_DEVICE));
    arrays b = *a;
    b.out = host;
    run(cpu, op, &b, c);
    same = memcmp(host, a->out, a->n * a->es) == 0;
    free(host);
  } else {
    run(gpu, op, a, g);
    run(cpu, op, a, c);
    size_t rs = op == OP_WIDE ? 8 : a->es;
    same = memcmp(g, c, rs) == 0;
  }
  MUST(xpar_context_set_reproducible(gpu, 0));
  return same;
}

static int bench_gpu(const size_t *log2n, int count) {
  xpar_device_info info;
  MUST(xpar_device_query(&info));
  if (!info.usable) {
    printf("gpu: no usable GPU (%s)\n", info.reason);
    return 0;
  }
  xpar_context *ctx, *cpu;
  MUST(xpar_context_create(&ctx));
  MUST(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  MUST(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  MUST(xpar_context_create(&cpu));
  MUST(xpar_context_set_backend(cpu, XPAR_BACKEND_CPU));
  char what[192];
  snprintf(what, sizeof what, "cuda on %s, data mapped (valid on the device)", info.name);
  header(what);
  const xpar_dtype types[] = {XPAR_FLOAT, XPAR_DOUBLE};
  int failures = 0;
  for (int i = 0; i < count; i++)
    for (int ti = 0; ti < 2; ti++) {
      arrays a;
      alloc_arrays(&a, types[ti], log2n[i]);
      size_t bytes = a.n * a.es;
      MUST(xpar_map(ctx, a.x, bytes, XPAR_MAP_TO));
      MUST(xpar_map(ctx, a.y, bytes, XPAR_MAP_TO));
      MUST(xpar_map(ctx, a.out, bytes, XPAR_MAP_ALLOC));
      for (int op = 0; op < OP_COUNT; op++) {
        double def, rep;
        time_both(ctx, (op_t)op, &a, reps_for(a.n), &def, &rep);
        row(log2n[i], types[ti], (op_t)op, &a, def, rep);
        if (!check_gpu_against_cpu(ctx, cpu, &a, (op_t)op)) {
          printf("  MISMATCH: the GPU's reproducible %s differs from the CPU's\n", op_names[op]);
          failures++;
        } else {
          printf("  bits: GPU == CPU (reproducible %s, 2^%zu %s)\n", op_names[op], log2n[i],
                 xpar_dtype_name(types[ti]));
        }
      }
      MUST(xpar_unmap(ctx, a.x, XPAR_UNMAP_RELEASE));
      MUST(xpar_unmap(ctx, a.y, XPAR_UNMAP_RELEASE));
      MUST(xpar_unmap(ctx, a.out, XPAR_UNMAP_RELEASE));
      free_arrays(&a);
    }
  xpar_context_destroy(ctx);
  xpar_context_destroy(cpu);
  return failures ? 2 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "gpu"))) {
    fprintf(stderr, "usage: %s cpu [threads] [log2n ...] | gpu [log2n ...]\n", argv[0]);
    return 2;
  }
  int cpu = !strcmp(argv[1], "cpu"), arg = 2, threads = 0;
  if (cpu && argc > arg) threads = atoi(argv[arg++]);
  size_t log2n[16];
  int count = 0;
  for (; arg < argc && count < 16; arg++) log2n[count++] = (size_t)atoi(argv[arg]);
  if (!count) {
    log2n[count++] = cpu ? 24 : 28;
    if (!cpu) log2n[count++] = 30;
  }
  return cpu ? bench_cpu(threads, log2n, count) : bench_gpu(log2n, count);
}
