/*
 * xpar_kernel_calibrate: an application kernel's thresholds measured with
 * its own arguments.  The CPU part (every build, CI): the tiers timed, the
 * report consistent with itself (each threshold is the calibrate rule's pick
 * over the report's own medians), the thresholds set in the context and
 * readable, the profile round trip, the context otherwise as it was, the
 * kernel's results at the sizes run, and bad input (status, detail, nothing
 * run, nothing set, the report untouched).  Built with XT_KCAL_GPU it is the
 * GPU part (exits 77 without a GPU): the GPU threshold of the arguments'
 * memory (pageable, mapped) measured and set.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/test_kernels.h"
#include "xt.h"

static char dir[256];

static xpar_context *new_context(void) {
  xpar_context *ctx = NULL;
  xt_check_status("setup", "xpar_context_create", xpar_context_create(&ctx), XPAR_OK);
  return ctx;
}

static int setup(void **state) {
  (void)state;
  xt_unset_xpar_env(0);
  assert_true(xt_private_cache("kcal", dir, sizeof dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return xt_remove_tree(dir);
}

/* AUTO's worst ratio over the report's sweep between `below` and `above`
 * with the threshold 2^k (k < lo: never), as the report defines it. */
static double worst_with(const xpar_kernel_calibration *r, const double *below,
                         const double *above, int k) {
  double worst = 0;
  for (int e = r->lo_exp; e <= r->hi_exp; e++) {
    double t = k >= r->lo_exp && e >= k ? above[e] : below[e];
    double best = below[e] < above[e] ? below[e] : above[e];
    if (t / best > worst) worst = t / best;
  }
  return worst;
}

static int exp_of(size_t v, int lo) {
  if (v == XPAR_NEVER) return lo - 1;
  int e = 0;
  while (((size_t)1 << e) < v) e++;
  return e;
}

/* A threshold in the report is the calibrate rule's: 2^e inside the sweep or
 * never, with the worst ratio the report quotes, within 2 % of the best any
 * candidate achieves on the report's own medians. */
static void check_pick(const char *label, const xpar_kernel_calibration *r, xpar_threshold which,
                       const double *below, const double *above) {
  size_t v = r->threshold[which];
  if (v != XPAR_NEVER &&
      (v & (v - 1) || v < ((size_t)1 << r->lo_exp) || v > ((size_t)1 << r->hi_exp)))
    xt_failf(label, "threshold %zu is neither never nor 2^e in 2^%d..2^%d", v, r->lo_exp,
             r->hi_exp);
  int k = exp_of(v, r->lo_exp);
  double w = worst_with(r, below, above, k), best = INFINITY;
  for (int c = r->lo_exp - 1; c <= r->hi_exp; c++) best = fmin(best, worst_with(r, below, above, c));
  if (fabs(w - r->worst_ratio[which]) > 1e-9 * w)
    xt_failf(label, "report quotes worst ratio %.6f, its medians give %.6f", r->worst_ratio[which],
             w);
  if (w > 1.02 * best * (1 + 1e-12))
    xt_failf(label, "threshold %zu gives worst ratio %.4f; another candidate gives %.4f", v, w,
             best);
}

/* The report's timings: finite and positive exactly where a tier was timed. */
static void check_timings(const char *label, const xpar_kernel_calibration *r) {
  for (int t = 0; t < XPAR_TIER_COUNT_; t++)
    for (int e = 0; e <= XPAR_KERNEL_CALIBRATION_MAX_EXP; e++) {
      int in = r->tier_measured[t] && e >= r->lo_exp && e <= r->hi_exp;
      double s = r->seconds[t][e];
      if (in && !(s > 0 && isfinite(s)))
        xt_failf(label, "%s at 2^%d: %g s", xpar_tier_name((xpar_tier)t), e, s);
      if (!in && !isnan(s))
        xt_failf(label, "%s at 2^%d not timed but %g s", xpar_tier_name((xpar_tier)t), e, s);
    }
}

/* out[i] = c x[i]^2 + x[i] for i below 2^hi, poison above (never launched
 * there: every size is a power of two up to n_max). */
static void check_poly(const char *label, const double *x, const double *out, size_t n_max,
                       double c, int hi) {
  for (size_t i = 0; i < n_max; i++) {
    if (i >= ((size_t)1 << hi)) {
      if (!xt_is_poison(XPAR_DOUBLE, &out[i], 1))
        xt_failf(label, "out[%zu] = %g written beyond the largest size 2^%d", i, out[i], hi);
      continue;
    }
    /* Three roundings in double (two products, a sum; fewer when
     * contracted to fma) bound the error by 3 eps of the terms' magnitudes,
     * not of the result: c x^2 and x may cancel. */
    long double want = (long double)c * x[i] * x[i] + x[i];
    long double mag = fabsl((long double)c * x[i] * x[i]) + fabsl((long double)x[i]);
    if (fabsl(out[i] - want) > 3 * 0x1p-52 * mag)
      xt_failf(label, "out[%zu] = %.17g, expected %.17Lg", i, out[i], want);
  }
}

/* The profile written from ctx holds the kernel's line, and a fresh context
 * loading it reads the same threshold. */
static void check_profile(const char *label, xpar_context *ctx, const xpar_kernel *k,
                          xpar_threshold which, size_t v, const char *key) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s-%s.txt", dir, k->name, key);
  xt_check_status(label, "xpar_profile_save", xpar_profile_save(ctx, path), XPAR_OK);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[256], want[160];
  if (v == XPAR_NEVER)
    snprintf(want, sizeof want, "kernel %s %s never\n", k->name, key);
  else
    snprintf(want, sizeof want, "kernel %s %s %zu\n", k->name, key, v);
  int found = 0;
  while (fgets(line, sizeof line, f)) found |= strcmp(line, want) == 0;
  fclose(f);
  if (!found) xt_failf(label, "%s has no line \"%.*s\"", path, (int)strlen(want) - 1, want);
  xpar_context *fresh = new_context();
  int applied = 0;
  xt_check_status(label, "xpar_profile_load", xpar_profile_load(fresh, path, &applied), XPAR_OK);
  size_t got = 0;
  xt_check_status(label, "get_kernel_threshold",
                  xpar_context_get_kernel_threshold(fresh, k, which, &got), XPAR_OK);
  if (!applied || got != v)
    xt_failf(label, "after loading %s (applied %d): %s %s = %zu, expected %zu", path, applied,
             k->name, key, got, v);
  xpar_context_destroy(fresh);
}

/* n_max, not a power of two: sizes 2^4 .. 2^12. */
#define NMAX ((size_t)4096 + 37)

/* xk_poly_f64's arrays of NMAX: x seeded random, out poisoned. */
static void poly_arrays(const char *label, xt_rng *rng, double **x, double **out) {
  xt_rng_for(rng, label);
  *x = malloc(NMAX * sizeof **x);
  *out = malloc(NMAX * sizeof **out);
  assert_non_null(*x);
  assert_non_null(*out);
  xt_fill_random(rng, XPAR_DOUBLE, *x, NMAX, XT_DATA_RANDOM, 0);
  xt_poison(XPAR_DOUBLE, *out, NMAX);
}

#ifndef XT_KCAL_GPU
static void t_cpu_tiers(void **state) {
  (void)state;
  const char *label = "calibrate cpu";
  xpar_context *ctx = new_context();
  xt_rng rng;
  double *x, *out;
  poly_arrays(label, &rng, &x, &out);
  const double c = 0.75;
  /* The context's other settings must come back as they were. */
  size_t other = 777, other_got = 0;
  xt_check_status(label, "set", xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32,
                                                                  XPAR_THRESHOLD_OPENMP, other),
                  XPAR_OK);
  xt_check_status(label, "set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL),
                  XPAR_OK);
  size_t gpu_before[XPAR_THRESHOLD_COUNT_];
  for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
    xpar_context_get_kernel_threshold(ctx, &xk_poly_f64, (xpar_threshold)k, &gpu_before[k]);

  xpar_arg args[] = {XPAR_ARG_SCALAR_OF(XPAR_DOUBLE, &c), XPAR_ARG_IN(XPAR_DOUBLE, x, NMAX),
                     XPAR_ARG_OUT(XPAR_DOUBLE, out, NMAX)};
  xpar_kernel_calibration r;
  xt_check_status(label, "xpar_kernel_calibrate",
                  xpar_kernel_calibrate(ctx, &xk_poly_f64, NMAX, args, 3, &r), XPAR_OK);
  if (r.lo_exp != 4 || r.hi_exp != 12 || r.rounds < 1)
    xt_failf(label, "sizes 2^%d..2^%d in %d rounds, expected 2^4..2^12", r.lo_exp, r.hi_exp,
             r.rounds);
  if (!r.tier_measured[XPAR_TIER_CPU_SERIAL] || !r.tier_measured[XPAR_TIER_CPU_OPENMP])
    xt_failf(label, "CPU tiers not timed");
  if (r.tier_measured[XPAR_TIER_CUDA] != xt_gpu_usable() ||
      r.tier_measured[XPAR_TIER_CUDA_SERIAL] || r.tier_measured[XPAR_TIER_NONE])
    xt_failf(label, "tiers timed: cuda %d (GPU usable %d), cuda-serial %d",
             r.tier_measured[XPAR_TIER_CUDA], xt_gpu_usable(),
             r.tier_measured[XPAR_TIER_CUDA_SERIAL]);
  check_timings(label, &r);
  if (!r.threshold_set[XPAR_THRESHOLD_OPENMP]) xt_failf(label, "OpenMP threshold not set");
  check_pick(label, &r, XPAR_THRESHOLD_OPENMP, r.seconds[XPAR_TIER_CPU_SERIAL],
             r.seconds[XPAR_TIER_CPU_OPENMP]);
  for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
    size_t got = 0;
    xt_check_status(label, "get_kernel_threshold",
                    xpar_context_get_kernel_threshold(ctx, &xk_poly_f64, (xpar_threshold)k, &got),
                    XPAR_OK);
    size_t want = r.threshold_set[k] ? r.threshold[k] : gpu_before[k];
    if (got != want)
      xt_failf(label, "threshold %d is %zu, expected %zu (set %d)", k, got, want,
               r.threshold_set[k]);
    /* Without a GPU only the OpenMP threshold is measured; with one, the
     * threshold of pageable data (these are malloc'd arrays). */
    int expect_set = k == XPAR_THRESHOLD_OPENMP ||
                     (xt_gpu_usable() && k == XPAR_THRESHOLD_GPU_PAGEABLE_DATA);
    if (r.threshold_set[k] != expect_set)
      xt_failf(label, "threshold %d set %d, expected %d", k, r.threshold_set[k], expect_set);
  }
  xpar_backend b;
  xpar_context_get_backend(ctx, &b);
  xpar_context_get_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, &other_got);
  if (b != XPAR_BACKEND_CPU_SERIAL || other_got != other)
    xt_failf(label, "context changed: backend %s, another kernel's threshold %zu",
             xpar_backend_name(b), other_got);
  check_poly(label, x, out, NMAX, c, r.hi_exp);
  check_profile(label, ctx, &xk_poly_f64, XPAR_THRESHOLD_OPENMP, r.threshold[XPAR_THRESHOLD_OPENMP],
                "openmp");

  /* An array of another count (a table indexed by value) is passed whole
   * while the per-index arrays are cut; report NULL is allowed. */
  enum { M = 5 };
  int64_t table[M] = {10, -20, 30, -40, 50}, s[2] = {M, 3};
  uint32_t *idx = malloc(NMAX * sizeof *idx);
  int64_t *gout = malloc(NMAX * sizeof *gout);
  assert_non_null(idx);
  assert_non_null(gout);
  xt_fill_random(&rng, XPAR_UINT32, idx, NMAX, XT_DATA_RANDOM, 0);
  xt_poison(XPAR_INT64, gout, NMAX);
  xpar_arg gargs[] = {XPAR_ARG_IN(XPAR_INT64, table, M), XPAR_ARG_IN(XPAR_UINT32, idx, NMAX),
                      XPAR_ARG_OUT(XPAR_INT64, gout, NMAX),
                      {XPAR_ARG_SCALAR, XPAR_INT64, 2, s}};
  xt_check_status("calibrate gather", "xpar_kernel_calibrate",
                  xpar_kernel_calibrate(ctx, &xk_gather_i64, NMAX, gargs, 4, NULL), XPAR_OK);
  for (size_t i = 0; i < NMAX; i++) {
    int64_t want = i < 4096 ? table[idx[i] % M] + 3 : 0;
    if (i < 4096 ? gout[i] != want : !xt_is_poison(XPAR_INT64, &gout[i], 1))
      xt_failf("calibrate gather", "out[%zu] = %lld, expected %s%lld", i, (long long)gout[i],
               i < 4096 ? "" : "poison, not ", (long long)want);
  }
  size_t gthr = 0;
  xpar_context_get_kernel_threshold(ctx, &xk_gather_i64, XPAR_THRESHOLD_OPENMP, &gthr);
  check_profile("calibrate gather", ctx, &xk_gather_i64, XPAR_THRESHOLD_OPENMP, gthr, "openmp");
  free(idx);
  free(gout);
  free(x);
  free(out);
  xpar_context_destroy(ctx);
}

/* Bad input: the status and a detail, nothing run (the outputs keep their
 * poison), no threshold set, the report untouched. */
static void t_bad_input(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  enum { N = 64 };
  double x[N], out[N], c = 2;
  xt_rng rng;
  xt_rng_for(&rng, "calibrate bad input");
  xt_fill_random(&rng, XPAR_DOUBLE, x, N, XT_DATA_RANDOM, 0);
  xt_poison(XPAR_DOUBLE, out, N);
  size_t before = 0;
  xpar_context_get_kernel_threshold(ctx, &xk_poly_f64, XPAR_THRESHOLD_OPENMP, &before);
  xpar_arg good[] = {XPAR_ARG_SCALAR_OF(XPAR_DOUBLE, &c), XPAR_ARG_IN(XPAR_DOUBLE, x, N),
                     XPAR_ARG_OUT(XPAR_DOUBLE, out, N)};
  xpar_arg bad_role[3], overlap[3], null_array[3];
  memcpy(bad_role, good, sizeof good);
  memcpy(overlap, good, sizeof good);
  memcpy(null_array, good, sizeof good);
  bad_role[1].role = (xpar_arg_role)99;
  overlap[2].ptr = x + 1; /* out overlaps x partially */
  overlap[2].count = N - 1;
  null_array[2].ptr = NULL;
  const xpar_kernel neither = {XPAR_KERNEL_ABI, "xk_neither", NULL, NULL, NULL, NULL};
  const struct {
    const char *label;
    xpar_context *ctx;
    const xpar_kernel *k;
    size_t n_max;
    const xpar_arg *args;
    int nargs;
    xpar_status want;
    const char *detail;
  } cases[] = {
      {"NULL context", NULL, &xk_poly_f64, N, good, 3, XPAR_ERR_NULL_CONTEXT, "context"},
      {"NULL kernel", ctx, NULL, N, good, 3, XPAR_ERR_NULL_POINTER, "kernel"},
      {"n_max 0", ctx, &xk_poly_f64, 0, good, 3, XPAR_ERR_INVALID_ARGUMENT, "n_max"},
      {"neither side", ctx, &neither, N, good, 3, XPAR_ERR_NOT_SUPPORTED, "xk_neither"},
      {"bad role", ctx, &xk_poly_f64, N, bad_role, 3, XPAR_ERR_INVALID_ENUM, "role"},
      {"NULL args", ctx, &xk_poly_f64, N, NULL, 3, XPAR_ERR_NULL_POINTER, "args"},
      {"nargs 9", ctx, &xk_poly_f64, N, good, 9, XPAR_ERR_INVALID_ARGUMENT, "nargs"},
      {"NULL array", ctx, &xk_poly_f64, N, null_array, 3, XPAR_ERR_NULL_POINTER, "args[2]"},
      {"overlap", ctx, &xk_poly_f64, N, overlap, 3, XPAR_ERR_OVERLAP, "overlaps"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xpar_kernel_calibration r, r0;
    memset(&r, 0xA5, sizeof r);
    memcpy(&r0, &r, sizeof r);
    xpar_status st = xpar_kernel_calibrate(cases[i].ctx, cases[i].k, cases[i].n_max,
                                           cases[i].args, cases[i].nargs, &r);
    xt_check_status(cases[i].label, "xpar_kernel_calibrate", st, cases[i].want);
    if (!strstr(xpar_last_error_detail(), cases[i].detail))
      xt_failf(cases[i].label, "detail \"%s\" does not mention \"%s\"", xpar_last_error_detail(),
               cases[i].detail);
    if (memcmp(&r, &r0, sizeof r) != 0) xt_failf(cases[i].label, "the report was written");
    for (int j = 0; j < N; j++)
      if (!xt_is_poison(XPAR_DOUBLE, &out[j], 1))
        xt_failf(cases[i].label, "out[%d] written: the kernel ran", j);
    size_t now = 0;
    xpar_context_get_kernel_threshold(ctx, &xk_poly_f64, XPAR_THRESHOLD_OPENMP, &now);
    if (now != before) xt_failf(cases[i].label, "threshold set to %zu (was %zu)", now, before);
  }
  xpar_context_destroy(ctx);
}

int main(int argc, char **argv) {
  xt_init("test_kernel_calibrate", argc, argv);
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_cpu_tiers),
                                     cmocka_unit_test(t_bad_input)};
  return cmocka_run_group_tests_name("kernel_calibrate", tests, setup, teardown);
}

#else /* XT_KCAL_GPU: the GPU threshold of the arguments' memory */

static void calibrate_on(const char *label, int map, xpar_threshold want_kind) {
  xpar_context *ctx = new_context();
  xt_rng rng;
  double *x, *out;
  poly_arrays(label, &rng, &x, &out);
  if (map) {
    xt_check_status(label, "xpar_map x", xpar_map(ctx, x, NMAX * sizeof *x, XPAR_MAP_TO), XPAR_OK);
    xt_check_status(label, "xpar_map out", xpar_map(ctx, out, NMAX * sizeof *out, XPAR_MAP_TO),
                    XPAR_OK);
  }
  const double c = -1.5;
  xpar_arg args[] = {XPAR_ARG_SCALAR_OF(XPAR_DOUBLE, &c), XPAR_ARG_IN(XPAR_DOUBLE, x, NMAX),
                     XPAR_ARG_OUT(XPAR_DOUBLE, out, NMAX)};
  xpar_kernel_calibration r;
  xt_check_status(label, "xpar_kernel_calibrate",
                  xpar_kernel_calibrate(ctx, &xk_poly_f64, NMAX, args, 3, &r), XPAR_OK);
  if (!r.tier_measured[XPAR_TIER_CUDA]) xt_failf(label, "cuda not timed with a usable GPU");
  check_timings(label, &r);
  if (r.gpu_threshold != want_kind || !r.threshold_set[want_kind])
    xt_failf(label, "GPU threshold %d (set %d), expected %d", (int)r.gpu_threshold,
             r.threshold_set[r.gpu_threshold], (int)want_kind);
  /* The GPU threshold is read against AUTO's CPU choice. */
  double cpu[XPAR_KERNEL_CALIBRATION_MAX_EXP + 1];
  for (int e = 0; e <= XPAR_KERNEL_CALIBRATION_MAX_EXP; e++)
    cpu[e] = ((size_t)1 << e) >= r.threshold[XPAR_THRESHOLD_OPENMP]
                 ? r.seconds[XPAR_TIER_CPU_OPENMP][e]
                 : r.seconds[XPAR_TIER_CPU_SERIAL][e];
  check_pick(label, &r, want_kind, cpu, r.seconds[XPAR_TIER_CUDA]);
  size_t got = 0;
  xpar_context_get_kernel_threshold(ctx, &xk_poly_f64, want_kind, &got);
  if (got != r.threshold[want_kind])
    xt_failf(label, "context holds %zu, report %zu", got, r.threshold[want_kind]);
  check_profile(label, ctx, &xk_poly_f64, want_kind, got,
                want_kind == XPAR_THRESHOLD_GPU_DEVICE_DATA ? "gpu" : "gpu_pageable");
  if (map) {
    xt_check_status(label, "xpar_unmap out", xpar_unmap(ctx, out, XPAR_UNMAP_FROM), XPAR_OK);
    xt_check_status(label, "xpar_unmap x", xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE), XPAR_OK);
  }
  check_poly(label, x, out, NMAX, c, r.hi_exp);
  free(x);
  free(out);
  xpar_context_destroy(ctx);
}

static void t_pageable(void **state) {
  (void)state;
  calibrate_on("calibrate gpu pageable", 0, XPAR_THRESHOLD_GPU_PAGEABLE_DATA);
}

static void t_mapped(void **state) {
  (void)state;
  calibrate_on("calibrate gpu mapped", 1, XPAR_THRESHOLD_GPU_DEVICE_DATA);
}

int main(int argc, char **argv) {
  xt_init("test_kernel_calibrate_gpu", argc, argv);
  if (!xt_gpu_usable()) {
    printf("test_kernel_calibrate_gpu: skipped, no usable GPU (%s)\n", xt_gpu_reason());
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_pageable), cmocka_unit_test(t_mapped)};
  return cmocka_run_group_tests_name("kernel_calibrate_gpu", tests, setup, teardown);
}
#endif
