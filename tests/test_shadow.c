/*
 * Shadow mode (xpar_context_set_shadow, XPAR_SHADOW, XPAR_SHADOW_FAIL): every
 * call also runs on a second tier and the results are compared.
 *
 *  quiet     every op and dtype, primary cpu-openmp, shadow cpu-serial: no
 *            mismatch (floats within the bound; bit for bit in reproducible
 *            mode), and the application's results are those of an unshadowed
 *            context, bit for bit
 *  planted   a wrong primary result (the test-only hook) is caught: decision
 *            record, stderr with the index and both values, and
 *            XPAR_ERR_SHADOW_MISMATCH when asked -- with the primary's
 *            (planted) result in the output
 *  overflow  sums and scans whose partial sums overflow: the OpenMP tier's
 *            NaN against the serial order's inf is a match (xpar.h allows it);
 *            a planted error on finite data is still caught
 *  scalars_in_output  axpy's alpha, fill's value and a scan's init inside the
 *            call's own output: the shadow uses the values from before the
 *            call, as the primary does, so every dtype is a match and the
 *            output is an unshadowed context's, bit for bit
 *  alloc_failure  the shadow's buffers cannot be allocated (the test-only
 *            hook, at each allocation of a dot, a scan and an axpy): the call
 *            runs and succeeds with the unshadowed result, its own decision
 *            record says why the shadow did not run (xpar.h: a shadow that
 *            cannot run is the shadow's failure, not the application's)
 *  env       XPAR_SHADOW and XPAR_SHADOW_FAIL, valid and invalid values
 *  gpu       shadow cuda: "not run" without a GPU; with one, a match, and a
 *            mapped array's device copy stays the valid one
 * Links the library's objects: the fault hook is an internal symbol.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "xpar/xpar.h"

void xpar__shadow_plant_fault(long long index);
void xpar__shadow_plant_alloc_failure(int nth);

static uint64_t g_seed;
static uint64_t next_rand(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}

static void fill(xpar_dtype t, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next_rand();
    double v = ldexp(1.0 + (double)(r >> 12) / 4503599627370496.0, (int)(r % 21) - 10) *
               ((r >> 5) & 1 ? -1 : 1);
    switch (t) {
      case XPAR_FLOAT: ((float *)p)[i] = (float)v; break;
      case XPAR_DOUBLE: ((double *)p)[i] = v; break;
      case XPAR_INT32: ((int32_t *)p)[i] = (int32_t)r; break;
      case XPAR_INT64: ((int64_t *)p)[i] = (int64_t)r; break;
      case XPAR_UINT32: ((uint32_t *)p)[i] = (uint32_t)r; break;
      default: ((uint64_t *)p)[i] = r; break;
    }
  }
}

static xpar_context *make(int shadow, int repro, int fail) {
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < XPAR_DTYPE_COUNT_; d++)
      assert_int_equal(xpar_context_set_threshold(ctx, (xpar_op)op, (xpar_dtype)d,
                                                  XPAR_THRESHOLD_OPENMP, 0),
                       XPAR_OK);
  assert_int_equal(xpar_context_set_num_threads(ctx, 3), XPAR_OK);
  assert_int_equal(xpar_context_set_reproducible(ctx, repro), XPAR_OK);
  if (shadow)
    assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, fail), XPAR_OK);
  return ctx;
}

enum { N = 100003 };
typedef enum { K_SUM, K_MIN, K_MAX, K_WIDE, K_DOT, K_SCAN_INC, K_SCAN_EXC, K_SCAN_INIT,
               K_AXPY, K_ADD, K_FILL, K_SORT, K_ARGSORT, K_SELECT, K_UNIQUE, K_RLE, K_RBK,
               K_ARGMIN, K_SEGSUM, K_SEGSCAN, K_HIST_EVEN, K_HIST_RANGE, K_COUNT } kind_t;
static const char *const kind_names[] = {"sum",  "min", "max",  "wide", "dot",    "scan_inc",
                                         "scan_exc", "scan_init", "axpy", "add", "fill",
                                         "sort", "argsort", "select", "unique",
                                         "run_length_encode", "reduce_by_key",
                                         "argmin", "segmented_sum", "segmented_scan_max",
                                         "histogram_even", "histogram_range"};
static size_t g_last_count; /* the count of the last select, unique or runs call */
static int64_t g_index;     /* argmin's index */
enum { SEG = 100 };         /* the segmented kinds: N / SEG segments of SEG elements */
/* The runs' second output, and reduce_by_key's keys: int32 runs of 1 to 13. */
static uint64_t g_runs_out2[N];
static int32_t g_runs_keys[N];
static void runs_keys(void) {
  int32_t key = 0;
  for (size_t i = 0; i < N;) {
    size_t len = 1 + (size_t)(next_rand() % 13);
    for (size_t j = 0; j < len && i < N; j++) g_runs_keys[i++] = key;
    key += 1 + (int32_t)(next_rand() % 3);
  }
}

/* N + 1 ascending boundaries of dtype t (the integers -N/2 .., or 0 .. for
 * unsigned dtypes), for a histogram of N bins. */
static void *hist_boundaries(xpar_dtype t) {
  static unsigned char b[(N + 1) * 8];
  for (long long i = 0; i <= N; i++) {
    const long long v = i - (t == XPAR_UINT32 || t == XPAR_UINT64 ? 0 : N / 2);
    switch (t) {
      case XPAR_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
      case XPAR_UINT32: ((uint32_t *)b)[i] = (uint32_t)v; break;
      case XPAR_FLOAT: ((float *)b)[i] = (float)v; break;
      case XPAR_DOUBLE: ((double *)b)[i] = (double)v; break;
      case XPAR_INT64: ((int64_t *)b)[i] = (int64_t)v; break;
      default: ((uint64_t *)b)[i] = (uint64_t)v; break;
    }
  }
  return b;
}

/* Run one op; out holds N elements (or the scalar result). */
static xpar_status run(xpar_context *ctx, kind_t k, xpar_dtype t, const void *x, const void *y,
                       void *out) {
  const unsigned char scalar[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}; /* 1.0 as double; small ints */
  unsigned char s[8];
  if (t == XPAR_FLOAT) {
    float f = 0.75f;
    memcpy(s, &f, 4);
  } else if (t == XPAR_DOUBLE) {
    memcpy(s, scalar, 8);
  } else {
    memset(s, 0, 8);
    s[0] = 3;
  }
  switch (k) {
    case K_SUM: return xpar_reduce(ctx, t, XPAR_SUM, x, N, out);
    case K_MIN: return xpar_reduce(ctx, t, XPAR_MIN, x, N, out);
    case K_MAX: return xpar_reduce(ctx, t, XPAR_MAX, x, N, out);
    case K_WIDE: return xpar_reduce_sum_wide(ctx, t, x, N, out);
    case K_DOT: return xpar_dot(ctx, t, x, y, N, out);
    case K_SCAN_INC: return xpar_scan(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, out, N);
    case K_SCAN_EXC: return xpar_scan(ctx, t, XPAR_SUM, XPAR_EXCLUSIVE, x, out, N);
    case K_SCAN_INIT: return xpar_scan_init(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, s, x, out, N);
    case K_AXPY: memcpy(out, y, N * 8); return xpar_axpy(ctx, t, s, x, out, N);
    case K_ADD: return xpar_add(ctx, t, x, y, out, N);
    case K_SORT: return xpar_sort(ctx, t, XPAR_DESCENDING, x, out, N);
    case K_ARGSORT: return xpar_argsort(ctx, t, XPAR_INT64, XPAR_ASCENDING, x, out, N);
    case K_SELECT: return xpar_select(ctx, t, XPAR_GT, s, NULL, x, out, N, &g_last_count);
    case K_UNIQUE: return xpar_unique(ctx, t, x, out, N, &g_last_count);
    case K_RLE: return xpar_run_length_encode(ctx, t, x, N, out, g_runs_out2, &g_last_count);
    case K_RBK:
      return xpar_reduce_by_key(ctx, XPAR_INT32, t, XPAR_SUM, g_runs_keys, x, N, out,
                                g_runs_out2, &g_last_count);
    case K_ARGMIN: return xpar_argmin(ctx, t, x, N, out, &g_index);
    case K_SEGSUM: return xpar_segmented_reduce_fixed(ctx, t, XPAR_SUM, x, SEG, N / SEG, out);
    case K_SEGSCAN:
      return xpar_segmented_scan_fixed(ctx, t, XPAR_MAX, XPAR_INCLUSIVE, x, out, SEG, N / SEG);
    case K_HIST_EVEN: { /* N bins over [0, s): out holds N counts */
      const unsigned char zero[8] = {0};
      return xpar_histogram_even(ctx, t, x, N, zero, s, N, (uint64_t *)out);
    }
    case K_HIST_RANGE:
      return xpar_histogram_range(ctx, t, x, N, hist_boundaries(t), N, (uint64_t *)out);
    default: return xpar_fill(ctx, t, s, out, N);
  }
}

static int is_scalar(kind_t k) { return k <= K_DOT; }

static void quiet_and_unchanged(int repro) {
  xpar_context *plain = make(0, repro, 0), *shadowed = make(1, repro, 1);
  void *x = malloc(N * 8), *y = malloc(N * 8), *a = malloc(N * 8), *b = malloc(N * 8);
  for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
    for (int k = 0; k < K_COUNT; k++) {
      fill((xpar_dtype)t, x, N);
      fill((xpar_dtype)t, y, N);
      memset(a, 0xa5, N * 8);
      memset(b, 0x5a, N * 8);
      if (k == K_RBK) runs_keys();
      /* reproducible segmented float sums run, and match bit for bit */
      assert_int_equal(run(plain, (kind_t)k, (xpar_dtype)t, x, y, a), XPAR_OK);
      const size_t plain_count = g_last_count;
      const int64_t plain_index = g_index;
      xpar_status st = run(shadowed, (kind_t)k, (xpar_dtype)t, x, y, b);
      xpar_decision d;
      assert_int_equal(xpar_last_decision(shadowed, &d), XPAR_OK);
      if (st != XPAR_OK || d.shadow_mismatch || d.shadow_tier != XPAR_TIER_CPU_SERIAL ||
          !strstr(d.reason, "shadow cpu-serial: match") || d.reproducible != repro)
        fail_msg("seed %llu: %s %s repro=%d: status %s, reason \"%s\" (%s)",
                 (unsigned long long)g_seed, kind_names[k], xpar_dtype_name((xpar_dtype)t), repro,
                 xpar_status_name(st), d.reason, xpar_last_error_detail());
      size_t es = k == K_WIDE || k == K_ARGSORT || k >= K_HIST_EVEN ? 8
                  : k == K_RBK                                      ? 4
                                                                    : xpar_dtype_size((xpar_dtype)t);
      size_t bytes = is_scalar((kind_t)k) ? es : N * es;
      if (k == K_ARGMIN) {
        assert_int_equal(g_index, plain_index);
        bytes = es;
      }
      if (k == K_SEGSUM) bytes = (N / SEG) * es;
      if (k == K_SEGSCAN) bytes = (N / SEG) * SEG * es;
      if (k == K_SELECT || k == K_UNIQUE || k == K_RLE ||
          k == K_RBK) { /* out past the count is the caller's */
        assert_int_equal(g_last_count, plain_count);
        bytes = g_last_count * es;
      }
      if (memcmp(a, b, bytes) != 0)
        fail_msg("%s %s: shadow mode changed the application's result", kind_names[k],
                 xpar_dtype_name((xpar_dtype)t));
    }
  free(x);
  free(y);
  free(a);
  free(b);
  xpar_context_destroy(plain);
  xpar_context_destroy(shadowed);
}

static void quiet(void **state) {
  (void)state;
  quiet_and_unchanged(0);
  quiet_and_unchanged(1);
}

/* Run fn with stderr going to a temporary file; return what it printed. */
static char g_err[4096];
static xpar_status with_captured_stderr(xpar_context *ctx, kind_t k, xpar_dtype t,
                                        const void *x, const void *y, void *out) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  xpar_status st = run(ctx, k, t, x, y, out);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t got = fread(g_err, 1, sizeof g_err - 1, tmp);
  g_err[got] = '\0';
  fclose(tmp);
  return st;
}

static void planted(void **state) {
  (void)state;
  void *x = malloc(N * 8), *y = malloc(N * 8), *out = malloc(N * 8), *clean = malloc(N * 8);
  const struct { kind_t k; xpar_dtype t; long long at; } cases[] = {
      {K_SCAN_INC, XPAR_FLOAT, 17},  {K_SCAN_EXC, XPAR_INT32, 99999}, {K_SUM, XPAR_DOUBLE, 0},
      {K_SUM, XPAR_INT64, 0},        {K_DOT, XPAR_FLOAT, 0},          {K_ADD, XPAR_UINT64, 5},
      {K_MIN, XPAR_FLOAT, 0},        {K_SORT, XPAR_FLOAT, 12345},     {K_ARGSORT, XPAR_INT64, 7},
      /* 8-byte samples: the counts' element size is the dtype's */
      {K_HIST_EVEN, XPAR_DOUBLE, 3}, {K_HIST_RANGE, XPAR_INT64, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int fail = 0; fail < 2; fail++)
      for (int repro = 0; repro < 2; repro++) {
        xpar_context *ctx = make(1, repro, fail), *plain = make(0, repro, 0);
        fill(cases[i].t, x, N);
        fill(cases[i].t, y, N);
        assert_int_equal(run(plain, cases[i].k, cases[i].t, x, y, clean), XPAR_OK);
        xpar__shadow_plant_fault(cases[i].at);
        xpar_status st = with_captured_stderr(ctx, cases[i].k, cases[i].t, x, y, out);
        char detail[512];
        snprintf(detail, sizeof detail, "%s", xpar_last_error_detail());
        char where[64];
        snprintf(where, sizeof where, "at index %lld", cases[i].at);
        xpar_decision d;
        assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
        if (st != (fail ? XPAR_ERR_SHADOW_MISMATCH : XPAR_OK) || !d.shadow_mismatch ||
            !strstr(d.reason, "MISMATCH") || !strstr(d.reason, where) ||
            !strstr(g_err, "shadow mismatch") || !strstr(g_err, where) ||
            !strstr(g_err, "primary") || (fail && !strstr(detail, where)))
          fail_msg("seed %llu: %s %s fail=%d repro=%d: status %s, reason \"%s\", stderr \"%s\"",
                   (unsigned long long)g_seed, kind_names[cases[i].k],
                   xpar_dtype_name(cases[i].t), fail, repro, xpar_status_name(st), d.reason, g_err);
        /* The application got the primary's result: the planted element
         * differs from an unshadowed run's, and nothing else does. */
        size_t es = xpar_dtype_size(cases[i].t), at = (size_t)cases[i].at;
        size_t n = is_scalar(cases[i].k) ? 1 : N;
        assert_memory_not_equal((char *)out + at * es, (char *)clean + at * es, es);
        assert_memory_equal(out, clean, at * es);
        assert_memory_equal((char *)out + (at + 1) * es, (char *)clean + (at + 1) * es,
                            (n - at - 1) * es);
        /* the next call is clean again */
        assert_int_equal(run(ctx, cases[i].k, cases[i].t, x, y, out), XPAR_OK);
        assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
        assert_int_equal(d.shadow_mismatch, 0);
        xpar_context_destroy(ctx);
        xpar_context_destroy(plain);
      }
  free(x);
  free(y);
  free(out);
  free(clean);
}

/* Partial sums that overflow: xpar.h lets a grouping give NaN or a finite
 * value where the element order gives inf, so the OpenMP tier against the
 * serial shadow is a match there -- and only there: a planted finite error
 * on the same data is still caught. */
static void overflow(void **state) {
  (void)state;
  xpar_context *ctx = make(1, 0, 1);
  double *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
  float *xf = malloc(N * sizeof *xf), *outf = malloc(N * sizeof *outf);
  for (size_t i = 0; i < N; i++) {
    x[i] = (i % 4 == 2) ? -DBL_MAX : DBL_MAX; /* lanes of +inf and -inf: NaN when grouped */
    xf[i] = (i % 4 == 2) ? -FLT_MAX : FLT_MAX;
  }
  for (int k = K_SUM; k <= K_SCAN_EXC; k++) {
    if (k == K_MIN || k == K_MAX || k == K_WIDE) continue;
    for (int f = 0; f < 2; f++) {
      xpar_dtype t = f ? XPAR_FLOAT : XPAR_DOUBLE;
      xpar_status st = run(ctx, (kind_t)k, t, f ? (void *)xf : (void *)x, f ? (void *)xf : (void *)x,
                           f ? (void *)outf : (void *)out);
      xpar_decision d;
      assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
      if (st != XPAR_OK || d.shadow_mismatch)
        fail_msg("%s %s of overflowing terms: status %s, reason \"%s\"", kind_names[k],
                 xpar_dtype_name(t), xpar_status_name(st), d.reason);
    }
  }
  /* Finite terms whose sum stays finite: a planted error is still a mismatch. */
  for (size_t i = 0; i < N; i++) x[i] = (i % 4 == 2) ? -1.0 : 1.0;
  xpar__shadow_plant_fault(7);
  fflush(stderr);
  xpar_status st = with_captured_stderr(ctx, K_SCAN_INC, XPAR_DOUBLE, x, x, out);
  assert_int_equal(st, XPAR_ERR_SHADOW_MISMATCH);
  free(x);
  free(out);
  free(xf);
  free(outf);
  xpar_context_destroy(ctx);
}

static const xpar_dtype all_dtypes[] = {XPAR_INT32, XPAR_INT64, XPAR_UINT32,
                                        XPAR_UINT64, XPAR_FLOAT, XPAR_DOUBLE};

/* The record of ctx's last call must say `what`. */
static void expect_reason(xpar_context *ctx, const char *call, xpar_dtype t, const char *what) {
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (!strstr(d.reason, what))
    fail_msg("%s %s: expected \"%s\" in the decision record: \"%s\"", call, xpar_dtype_name(t),
             what, d.reason);
}

static void scalars_in_output(void **state) {
  (void)state;
  enum { M = 1001 };
  const size_t at[] = {0, M / 2, M - 1};
  xpar_context *shadowed = make(1, 0, 1), *plain = make(0, 0, 0);
  for (size_t di = 0; di < sizeof all_dtypes / sizeof all_dtypes[0]; di++) {
    const xpar_dtype t = all_dtypes[di];
    const size_t size = xpar_dtype_size(t);
    unsigned char *x = malloc(M * size), *y = malloc(M * size), *want = malloc(M * size);
    unsigned char before[8];
    for (size_t a = 0; a < 3; a++) {
      const size_t k = at[a] * size;
      /* axpy, alpha = &y[k] */
      fill(t, x, M);
      fill(t, y, M);
      memcpy(want, y, M * size);
      memcpy(before, y + k, size);
      assert_int_equal(xpar_axpy(plain, t, before, x, want, M), XPAR_OK);
      assert_int_equal(xpar_axpy(shadowed, t, y + k, x, y, M), XPAR_OK);
      expect_reason(shadowed, "axpy, alpha inside y", t, "shadow cpu-serial: match");
      assert_memory_equal(y, want, M * size);
      /* fill, value = &y[k] */
      fill(t, y, M);
      memcpy(before, y + k, size);
      assert_int_equal(xpar_fill(plain, t, before, want, M), XPAR_OK);
      assert_int_equal(xpar_fill(shadowed, t, y + k, y, M), XPAR_OK);
      expect_reason(shadowed, "fill, value inside out", t, "shadow cpu-serial: match");
      assert_memory_equal(y, want, M * size);
      /* inclusive scan with init = &y[k], out = y */
      fill(t, y, M);
      memcpy(before, y + k, size);
      assert_int_equal(xpar_scan_init(plain, t, XPAR_SUM, XPAR_INCLUSIVE, before, x, want, M),
                       XPAR_OK);
      assert_int_equal(xpar_scan_init(shadowed, t, XPAR_SUM, XPAR_INCLUSIVE, y + k, x, y, M),
                       XPAR_OK);
      expect_reason(shadowed, "scan_init, init inside out", t, "shadow cpu-serial: match");
      assert_memory_equal(y, want, M * size);
    }
    free(x);
    free(y);
    free(want);
  }
  xpar_context_destroy(shadowed);
  xpar_context_destroy(plain);
}

static void alloc_failure(void **state) {
  (void)state;
  xpar_context *shadowed = make(1, 0, 1), *plain = make(0, 0, 0);
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out),
         *want = malloc(N * sizeof *want);
  fill(XPAR_DOUBLE, x, N);
  fill(XPAR_DOUBLE, y, N);
  const char *not_run = "shadow cpu-serial: not run (ERR_OUT_OF_MEMORY: no memory for the shadow's";
  /* dot: two input copies */
  double r_want = 0;
  assert_int_equal(xpar_dot(plain, XPAR_DOUBLE, x, y, N, &r_want), XPAR_OK);
  for (int nth = 1; nth <= 2; nth++) {
    double small = 0, r = -1;
    /* a call before, whose record must not be the one read after */
    assert_int_equal(xpar_reduce(shadowed, XPAR_DOUBLE, XPAR_SUM, x, 4, &small), XPAR_OK);
    xpar__shadow_plant_alloc_failure(nth);
    assert_int_equal(xpar_dot(shadowed, XPAR_DOUBLE, x, y, N, &r), XPAR_OK);
    assert_memory_equal(&r, &r_want, sizeof r);
    xpar_decision d;
    assert_int_equal(xpar_last_decision(shadowed, &d), XPAR_OK);
    assert_int_equal(d.op, XPAR_OP_DOT);
    assert_int_equal(d.n, N);
    assert_int_equal(d.shadow_mismatch, 0);
    expect_reason(shadowed, nth == 1 ? "dot, x's copy" : "dot, y's copy", XPAR_DOUBLE, not_run);
    /* the next call shadows again */
    assert_int_equal(xpar_dot(shadowed, XPAR_DOUBLE, x, y, N, &r), XPAR_OK);
    expect_reason(shadowed, "dot after", XPAR_DOUBLE, "shadow cpu-serial: match");
  }
  /* scan: the input's copy, then the two output buffers */
  assert_int_equal(xpar_scan(plain, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, x, want, N), XPAR_OK);
  for (int nth = 1; nth <= 3; nth++) {
    memset(out, 0xff, N * sizeof *out);
    xpar__shadow_plant_alloc_failure(nth);
    assert_int_equal(xpar_scan(shadowed, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, x, out, N),
                     XPAR_OK);
    assert_memory_equal(out, want, N * sizeof *out);
    expect_reason(shadowed, "scan", XPAR_DOUBLE, not_run);
  }
  /* axpy in place of y: y's copy */
  const double alpha = 0.5;
  memcpy(want, y, N * sizeof *y);
  memcpy(out, y, N * sizeof *y);
  assert_int_equal(xpar_axpy(plain, XPAR_DOUBLE, &alpha, x, want, N), XPAR_OK);
  xpar__shadow_plant_alloc_failure(2);
  assert_int_equal(xpar_axpy(shadowed, XPAR_DOUBLE, &alpha, x, out, N), XPAR_OK);
  assert_memory_equal(out, want, N * sizeof *out);
  expect_reason(shadowed, "axpy", XPAR_DOUBLE, not_run);
  xpar__shadow_plant_alloc_failure(0);
  free(x);
  free(y);
  free(out);
  free(want);
  xpar_context_destroy(shadowed);
  xpar_context_destroy(plain);
}

static void env(void **state) {
  (void)state;
  xpar_context *ctx = NULL;
  xpar_tier tier;
  int fail = -1;
  const char *tiers[] = {"cpu-serial", "CPU-OPENMP", "cuda", "cuda-serial", "off"};
  const xpar_tier want[] = {XPAR_TIER_CPU_SERIAL, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CUDA,
                            XPAR_TIER_CUDA_SERIAL, XPAR_TIER_NONE};
  for (int i = 0; i < 5; i++) {
    setenv("XPAR_SHADOW", tiers[i], 1);
    setenv("XPAR_SHADOW_FAIL", i & 1 ? "1" : "0", 1);
    assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
    assert_int_equal(xpar_context_get_shadow(ctx, &tier, &fail), XPAR_OK);
    assert_int_equal(tier, want[i]);
    assert_int_equal(fail, i & 1);
    xpar_context_destroy(ctx);
  }
  const char *bad[][2] = {{"XPAR_SHADOW", "gpu"}, {"XPAR_SHADOW", ""}, {"XPAR_SHADOW", "none"},
                          {"XPAR_SHADOW_FAIL", "yes"}, {"XPAR_SHADOW_FAIL", "2"}};
  for (int i = 0; i < 5; i++) {
    unsetenv("XPAR_SHADOW");
    unsetenv("XPAR_SHADOW_FAIL");
    setenv(bad[i][0], bad[i][1], 1);
    assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
    assert_null(ctx);
    assert_non_null(strstr(xpar_last_error_detail(), bad[i][0]));
  }
  unsetenv("XPAR_SHADOW");
  unsetenv("XPAR_SHADOW_FAIL");
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_shadow(ctx, (xpar_tier)99, 0), XPAR_ERR_INVALID_ENUM);
  assert_int_equal(xpar_context_get_shadow(ctx, &tier, NULL), XPAR_OK);
  assert_int_equal(tier, XPAR_TIER_NONE);
  assert_int_equal(xpar_context_get_shadow(ctx, NULL, NULL), XPAR_ERR_NULL_POINTER);
  assert_non_null(strstr(xpar_last_error_detail(), "tier is NULL")); /* the parameter's name */
  assert_int_equal(xpar_context_set_shadow(NULL, XPAR_TIER_CUDA, 0), XPAR_ERR_NULL_CONTEXT);
  xpar_context_destroy(ctx);
}

static void gpu(void **state) {
  (void)state;
  xpar_device_info info;
  assert_int_equal(xpar_device_query(&info), XPAR_OK);
  float *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
  fill(XPAR_FLOAT, x, N);
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_CUDA, 1), XPAR_OK);
  float r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, x, N, &r), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (!info.usable) {
    if (!strstr(d.reason, "shadow cuda: not run") || d.shadow_mismatch)
      fail_msg("no GPU: reason \"%s\"", d.reason);
    xpar_context_destroy(ctx);
    free(x);
    free(out);
    skip(); /* the rest needs a GPU */
  }
  if (!strstr(d.reason, "shadow cuda: match")) fail_msg("reason \"%s\"", d.reason);
  xpar_context_destroy(ctx);

  /* Primary on the GPU, shadow on the CPU, mapped arrays: the output's
   * device copy stays the valid one (a CPU call then has to copy it back). */
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_map(ctx, x, N * sizeof *x, XPAR_MAP_TO), XPAR_OK);
  assert_int_equal(xpar_map(ctx, out, N * sizeof *out, XPAR_MAP_ALLOC), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, 1), XPAR_OK);
  assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
  assert_int_equal(xpar_scan(ctx, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE, x, out, N), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (d.tier != XPAR_TIER_CUDA || !strstr(d.reason, "shadow cpu-serial: match"))
    fail_msg("tier %s, reason \"%s\"", xpar_tier_name(d.tier), d.reason);
  /* A sort on the GPU against the serial CPU sort: the same bits. */
  assert_int_equal(xpar_sort(ctx, XPAR_FLOAT, XPAR_DESCENDING, x, out, N), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (d.tier != XPAR_TIER_CUDA || !strstr(d.reason, "shadow cpu-serial: match"))
    fail_msg("sort: tier %s, reason \"%s\"", xpar_tier_name(d.tier), d.reason);
  assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_NONE, 0), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_MAX, out, N, &r), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (d.bytes_to_host != N * sizeof *out)
    fail_msg("the CPU call moved %zu bytes to the host; the output's device copy should have "
             "been the only valid one (%zu bytes)", d.bytes_to_host, N * sizeof *out);
  assert_int_equal(xpar_unmap(ctx, out, XPAR_UNMAP_RELEASE), XPAR_OK);
  assert_int_equal(xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE), XPAR_OK);
  xpar_context_destroy(ctx);
  free(x);
  free(out);
}

int main(void) {
  const char *s = getenv("XPAR_TEST_SEED");
  g_seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
  if (!g_seed) g_seed = 1;
  /* The environment would change what the cases mean. */
  const char *vars[] = {"XPAR_BACKEND", "XPAR_OFFLOAD", "XPAR_REPRODUCIBLE", "XPAR_SHADOW",
                        "XPAR_SHADOW_FAIL", "XPAR_VERBOSE", "XPAR_PROFILE", "XPAR_ALL_OPENMP_THRESHOLD"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  printf("[xpar-test] test_shadow: seed %llu (rerun with XPAR_TEST_SEED=%llu)\n",
         (unsigned long long)g_seed, (unsigned long long)g_seed);
  const struct CMUnitTest tests[] = {cmocka_unit_test(quiet), cmocka_unit_test(planted),
                                     cmocka_unit_test(overflow),
                                     cmocka_unit_test(scalars_in_output),
                                     cmocka_unit_test(alloc_failure), cmocka_unit_test(env),
                                     cmocka_unit_test(gpu)};
  return cmocka_run_group_tests_name("shadow", tests, NULL, NULL);
}
