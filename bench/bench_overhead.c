/*
 * xpar-devbench overhead: what one small call through xpar costs next to the
 * loop an application would otherwise write inline.  N = 128 int32 on host
 * data, sum: xpar_reduce through AUTO (and through the forced serial tier),
 * against a vectorized and a scalar loop compiled into this program.
 *
 * The loops must really run once per call: they are noipa functions (no
 * inlining, and GCC may not discover they are pure and hoist or merge the
 * calls), and an empty asm with a memory clobber between calls tells the
 * compiler the array may have changed.  Each variant is timed in batches of
 * back-to-back calls; the variants take turns batch by batch (so a slow
 * stretch of the machine hits all of them), and the median batch counts.
 *
 * A second table times y += x and y += alpha * x through xpar, with no
 * repeats (two array pairs alternating) and repeated (a repeat skips the
 * checks, xpar.h), and inline.  What the axpy's host-scalar check costs (one
 * page-cache look-up for alpha) is the axpy's extra time over the add without
 * repeats less its extra time with them (the kernels' difference).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(__clang__)
#define BENCH_NOIPA __attribute__((noinline))
#define BENCH_NOVEC_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#define BENCH_NOVEC_FN
#else
#define BENCH_NOIPA __attribute__((noipa))
#define BENCH_NOVEC_LOOP
#define BENCH_NOVEC_FN __attribute__((optimize("no-tree-vectorize")))
#endif

/* Integer sums wrap like xpar's: accumulate unsigned. */
BENCH_NOIPA static int32_t sum_vectorized(const int32_t *x, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; ++i) s += (uint32_t)x[i];
  return (int32_t)s;
}

BENCH_NOIPA BENCH_NOVEC_FN static int32_t sum_scalar(const int32_t *x, size_t n) {
  uint32_t s = 0;
  BENCH_NOVEC_LOOP
  for (size_t i = 0; i < n; ++i) s += (uint32_t)x[i];
  return (int32_t)s;
}

BENCH_NOIPA static void add_inline(const int32_t *x, int32_t *y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = (int32_t)((uint32_t)y[i] + (uint32_t)x[i]);
}

BENCH_NOIPA static void axpy_inline(int32_t alpha, const int32_t *x, int32_t *y, size_t n) {
  for (size_t i = 0; i < n; ++i)
    y[i] = (int32_t)((uint32_t)alpha * (uint32_t)x[i] + (uint32_t)y[i]);
}

#define BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

/* V_AUTO_FRESH alternates two arrays and two results, so that no call repeats
 * the one before it (xpar.h: a repeat skips the checks, the classification and
 * the decision): what a call costs that is not a repeat. */
enum {
  V_AUTO,
  V_AUTO_FRESH,
  V_SERIAL,
  V_VEC,
  V_SCALAR,
  V_ADD_FRESH,
  V_AXPY_FRESH,
  V_ADD_REPEAT,
  V_AXPY_REPEAT,
  V_ADD_INLINE,
  V_AXPY_INLINE,
  V_COUNT,
  V_REDUCE_COUNT = V_ADD_FRESH
};
static const char *const v_names[V_COUNT] = {
    "xpar AUTO (xpar_reduce)", "xpar AUTO, no repeats", "xpar serial tier",
    "inline loop, vectorized", "inline loop, scalar",   "xpar_add y += x, no repeats",
    "xpar_axpy, no repeats",   "xpar_add, repeated",    "xpar_axpy, repeated",
    "inline y += x",           "inline y += alpha * x"};

/* The elementwise variants' arrays: two (x, y) pairs, alternated. */
typedef struct {
  const int32_t *x[2];
  int32_t *y[2];
  int32_t alpha;
} elementwise_arrays;

static volatile int32_t sink;

/* One batch of `calls` calls of variant v; seconds per call, 0 on failure. */
static double batch(int v, xpar_context *ctx_auto, xpar_context *ctx_serial, const int32_t *x,
                    const int32_t *x2, elementwise_arrays *e, size_t n, int calls) {
  int32_t r = 0, r2 = 0;
  double t0 = bench_now_s();
  switch (v) {
    case V_ADD_FRESH:
    case V_ADD_REPEAT:
    case V_AXPY_FRESH:
    case V_AXPY_REPEAT: {
      /* the fresh variants alternate the two pairs, the repeated ones keep pair 0 */
      const int alternate = v == V_ADD_FRESH || v == V_AXPY_FRESH;
      const int axpy = v == V_AXPY_FRESH || v == V_AXPY_REPEAT;
      for (int i = 0; i < calls; ++i) {
        const int k = alternate & i;
        if ((axpy ? xpar_axpy(ctx_auto, XPAR_INT32, &e->alpha, e->x[k], e->y[k], n)
                  : xpar_add(ctx_auto, XPAR_INT32, e->x[k], e->y[k], e->y[k], n)) != XPAR_OK)
          return 0;
        BARRIER(e);
      }
      break;
    }
    case V_ADD_INLINE:
      for (int i = 0; i < calls; ++i) {
        add_inline(e->x[i & 1], e->y[i & 1], n);
        BARRIER(e);
      }
      break;
    case V_AXPY_INLINE:
      for (int i = 0; i < calls; ++i) {
        axpy_inline(e->alpha, e->x[i & 1], e->y[i & 1], n);
        BARRIER(e);
      }
      break;
    case V_AUTO_FRESH:
      for (int i = 0; i < calls; ++i) {
        const int odd = i & 1;
        if (xpar_reduce(ctx_auto, XPAR_INT32, XPAR_SUM, odd ? x2 : x, n, odd ? &r2 : &r) !=
            XPAR_OK)
          return 0;
        BARRIER(x);
      }
      r ^= r2;
      break;
    case V_AUTO:
    case V_SERIAL: {
      xpar_context *ctx = v == V_AUTO ? ctx_auto : ctx_serial;
      for (int i = 0; i < calls; ++i) {
        if (xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &r) != XPAR_OK) return 0;
        BARRIER(x);
      }
      break;
    }
    case V_VEC:
      for (int i = 0; i < calls; ++i) {
        r = sum_vectorized(x, n);
        BARRIER(x);
      }
      break;
    default:
      for (int i = 0; i < calls; ++i) {
        r = sum_scalar(x, n);
        BARRIER(x);
      }
      break;
  }
  double t = (bench_now_s() - t0) / calls;
  sink = r;
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-devbench overhead [--n N] [--batches B] [--calls C]\n"
          "  --n N        elements per call (default 128)\n"
          "  --batches B  batches per variant; the median counts (default 301)\n"
          "  --calls C    calls per batch (default 2000)\n");
}

int bench_cmd_overhead(int argc, char **argv) {
  long n = 128, batches = 301, calls = 2000;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    ++i;
    if (!((strcmp(a, "--n") == 0 && bench_parse_long(v, 1, 1 << 24, &n)) ||
          (strcmp(a, "--batches") == 0 && bench_parse_long(v, 1, 100000, &batches)) ||
          (strcmp(a, "--calls") == 0 && bench_parse_long(v, 1, 10000000, &calls)))) {
      fprintf(stderr, "xpar-devbench overhead: bad option or value: %s %s\n", a, v);
      usage(stderr);
      return 2;
    }
  }
  int32_t *x = malloc((size_t)n * sizeof *x), *x2 = malloc((size_t)n * sizeof *x2);
  double *t = malloc((size_t)(V_COUNT * batches) * sizeof *t);
  int32_t *ew = malloc((size_t)(4 * n) * sizeof *ew);
  if (!x || !x2 || !t || !ew) return 1;
  elementwise_arrays e = {{ew, ew + n}, {ew + 2 * n, ew + 3 * n}, 3};
  bench_fill_random(XPAR_INT32, ew, (size_t)(4 * n), 43);
  bench_fill_random(XPAR_INT32, x, (size_t)n, 42);
  memcpy(x2, x, (size_t)n * sizeof *x);
  xpar_context *ctx_auto, *ctx_serial;
  if (xpar_context_create(&ctx_auto) != XPAR_OK || xpar_context_create(&ctx_serial) != XPAR_OK) {
    fprintf(stderr, "xpar-devbench overhead: %s\n", xpar_last_error_detail());
    return 1;
  }
  xpar_context_set_backend(ctx_serial, XPAR_BACKEND_CPU_SERIAL);

  /* all four must agree: otherwise something was optimised away */
  int32_t r_auto = 0, r_serial = 0;
  xpar_reduce(ctx_auto, XPAR_INT32, XPAR_SUM, x, (size_t)n, &r_auto);
  xpar_reduce(ctx_serial, XPAR_INT32, XPAR_SUM, x, (size_t)n, &r_serial);
  if (r_auto != r_serial || r_auto != sum_vectorized(x, (size_t)n) ||
      r_auto != sum_scalar(x, (size_t)n)) {
    fprintf(stderr, "xpar-devbench overhead: the four sums disagree\n");
    return 1;
  }
  xpar_decision d; /* the reduce's, which the first table is about */
  xpar_last_decision(ctx_auto, &d);

  /* the elementwise pair likewise: xpar's axpy and add against the inline loops */
  {
    int32_t *want = malloc((size_t)n * sizeof *want);
    if (!want) return 1;
    memcpy(want, e.y[0], (size_t)n * sizeof *want);
    axpy_inline(e.alpha, e.x[0], want, (size_t)n);
    add_inline(e.x[0], want, (size_t)n);
    if (xpar_axpy(ctx_auto, XPAR_INT32, &e.alpha, e.x[0], e.y[0], (size_t)n) != XPAR_OK ||
        xpar_add(ctx_auto, XPAR_INT32, e.x[0], e.y[0], e.y[0], (size_t)n) != XPAR_OK ||
        memcmp(want, e.y[0], (size_t)n * sizeof *want) != 0) {
      fprintf(stderr, "xpar-devbench overhead: xpar's axpy / add disagree with the inline loops\n");
      return 1;
    }
    free(want);
  }

  for (int v = 0; v < V_COUNT; ++v)
    batch(v, ctx_auto, ctx_serial, x, x2, &e, (size_t)n, (int)calls);
  for (long b = 0; b < batches; ++b)
    for (int v = 0; v < V_COUNT; ++v) {
      t[v * batches + b] = batch(v, ctx_auto, ctx_serial, x, x2, &e, (size_t)n, (int)calls);
      if (t[v * batches + b] == 0) {
        fprintf(stderr, "xpar-devbench overhead: %s failed: %s\n", v_names[v],
                xpar_last_error_detail());
        return 1;
      }
    }
  double med[V_COUNT], lo[V_COUNT];
  for (int v = 0; v < V_COUNT; ++v) {
    qsort(t + v * batches, (size_t)batches, sizeof *t, cmp_double);
    med[v] = t[v * batches + batches / 2];
    lo[v] = t[v * batches];
  }
  printf("# xpar-devbench overhead: sum of %ld int32 on host data, %ld batches x %ld calls, "
         "median ns per call\n# AUTO ran %s: %s\n",
         n, batches, calls, xpar_tier_name(d.tier), d.reason);
  printf("%-26s %10s %10s %12s %12s\n", "variant", "ns/call", "min", "/ vectorized", "/ scalar");
  for (int v = 0; v < V_REDUCE_COUNT; ++v)
    printf("%-26s %10.2f %10.2f %12.2f %12.2f\n", v_names[v], med[v] * 1e9, lo[v] * 1e9,
           med[v] / med[V_VEC], med[v] / med[V_SCALAR]);
  double r_vec = med[V_AUTO] / med[V_VEC], r_sc = med[V_AUTO] / med[V_SCALAR];
  printf("xpar AUTO: %.1f ns per call = %.2fx the vectorized inline loop (%.1f ns), %.2fx the "
         "scalar one (%.1f ns); target <= 1.5x: %s\n",
         med[V_AUTO] * 1e9, r_vec, med[V_VEC] * 1e9, r_sc, med[V_SCALAR] * 1e9,
         r_vec <= 1.5 ? "met (vectorized)" : r_sc <= 1.5 ? "met against the scalar loop only"
                                                         : "NOT met");
  printf("\n# elementwise, %ld int32 on host data (no repeats: two array pairs alternating), "
         "median ns per call\n%-30s %10s %10s %12s\n",
         n, "variant", "ns/call", "min", "/ inline");
  for (int v = V_ADD_FRESH; v < V_COUNT; ++v) {
    const int inline_v =
        v == V_ADD_FRESH || v == V_ADD_REPEAT || v == V_ADD_INLINE ? V_ADD_INLINE : V_AXPY_INLINE;
    printf("%-30s %10.2f %10.2f %12.2f\n", v_names[v], med[v] * 1e9, lo[v] * 1e9,
           med[v] / med[inline_v]);
  }
  const double extra_fresh = (med[V_AXPY_FRESH] - med[V_ADD_FRESH]) * 1e9,
               extra_repeat = (med[V_AXPY_REPEAT] - med[V_ADD_REPEAT]) * 1e9;
  printf("xpar_axpy over xpar_add: %+.1f ns without repeats, %+.1f ns repeated: the alpha's "
         "host-scalar check %+.1f ns per call that is not a repeat\n",
         extra_fresh, extra_repeat, extra_fresh - extra_repeat);
  xpar_context_destroy(ctx_auto);
  xpar_context_destroy(ctx_serial);
  free(ew);
  free(x);
  free(x2);
  free(t);
  return 0;
}
