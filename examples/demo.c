#define _POSIX_C_SOURCE 200809L
/*
 * xpar-demo: runs each operation through AUTO at several sizes and prints,
 * per call, the size, the tier AUTO chose, why, and the median time.  Data
 * lives on the host (plain malloc) unless --mapped is given, in which case
 * the arrays are mapped to the GPU first (when one is usable).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xpar/xpar.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CHECK(call)                                                                       \
  do {                                                                                    \
    xpar_status s_ = (call);                                                              \
    if (s_ != XPAR_OK) {                                                                  \
      fprintf(stderr, "%s failed: %s: %s\n", #call, xpar_status_name(s_),                 \
              xpar_last_error_detail());                                                  \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

/* One op on float arrays; returns its status. */
static xpar_status run_op(xpar_context *ctx, xpar_op op, float *x, float *y, float *z, size_t n) {
  float result, alpha = 0.5f, value = 1.0f;
  switch (op) {
    case XPAR_OP_REDUCE: return xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, x, n, &result);
    case XPAR_OP_SCAN: return xpar_scan(ctx, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE, x, z, n);
    case XPAR_OP_AXPY: return xpar_axpy(ctx, XPAR_FLOAT, &alpha, x, y, n);
    case XPAR_OP_ADD: return xpar_add(ctx, XPAR_FLOAT, x, y, z, n);
    case XPAR_OP_FILL: return xpar_fill(ctx, XPAR_FLOAT, &value, z, n);
    case XPAR_OP_DOT: return xpar_dot(ctx, XPAR_FLOAT, x, y, n, &result);
    case XPAR_OP_SORT: return xpar_sort(ctx, XPAR_FLOAT, XPAR_ASCENDING, x, z, n);
    default: return XPAR_ERR_INVALID_ENUM;
  }
}

int main(int argc, char **argv) {
  int mapped = argc > 1 && strcmp(argv[1], "--mapped") == 0;
  const size_t sizes[] = {1000, 100000, 1u << 20, 1u << 24};
  const size_t max_n = 1u << 24;

  xpar_device_info dev;
  CHECK(xpar_device_query(&dev));
  printf("xpar %d.%d.%d  GPU: %s\n", XPAR_VERSION_MAJOR, XPAR_VERSION_MINOR, XPAR_VERSION_PATCH,
         dev.usable ? dev.name : dev.reason);
  if (mapped && !dev.usable) {
    printf("--mapped needs a usable GPU; running on host data\n");
    mapped = 0;
  }

  float *x = malloc(max_n * sizeof *x), *y = malloc(max_n * sizeof *y);
  float *z = malloc(max_n * sizeof *z);
  if (!x || !y || !z) return 1;
  for (size_t i = 0; i < max_n; i++) {
    x[i] = (float)(i % 1000) * 1e-3f;
    y[i] = 1.0f;
  }

  xpar_context *ctx;
  CHECK(xpar_context_create(&ctx));
  if (mapped) {
    CHECK(xpar_map(ctx, x, max_n * sizeof *x, XPAR_MAP_TO));
    CHECK(xpar_map(ctx, y, max_n * sizeof *y, XPAR_MAP_TO));
    CHECK(xpar_map(ctx, z, max_n * sizeof *z, XPAR_MAP_ALLOC));
  }
  printf("data: %s\n\n", mapped ? "mapped to the GPU (xpar_map)" : "host (malloc)");
  printf("%-7s %10s  %-12s %12s  %s\n", "op", "n", "tier", "median us", "reason");
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t n = sizes[s];
      double t[9];
      int reps = 9;
      CHECK(run_op(ctx, (xpar_op)op, x, y, z, n)); /* warm-up */
      for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        CHECK(run_op(ctx, (xpar_op)op, x, y, z, n));
        t[r] = now_us() - t0;
      }
      qsort(t, reps, sizeof t[0], cmp_double);
      xpar_decision d;
      CHECK(xpar_last_decision(ctx, &d));
      printf("%-7s %10zu  %-12s %12.1f  %s\n", xpar_op_name((xpar_op)op), n,
             xpar_tier_name(d.tier), t[reps / 2], d.reason);
    }
  }
  if (mapped) {
    CHECK(xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE));
    CHECK(xpar_unmap(ctx, y, XPAR_UNMAP_FROM));
    CHECK(xpar_unmap(ctx, z, XPAR_UNMAP_FROM));
  }
  CHECK(xpar_context_destroy(ctx));
  free(x);
  free(y);
  free(z);
  return 0;
}
