/*
 * Adaptive AUTO (xpar_context_set_adaptive; off by default), read back
 * through the decision records: near a built-in threshold the first 8 calls
 * of a size class run 4 on the threshold's side and 4 on the other, then one
 * side for good, and every call's result is right; calls far from the threshold, float sums
 * outside reproducible mode, thresholds set by the application and adaptive
 * mode off keep the threshold's side; a new thread count measures again.
 * With a GPU: mapped arrays valid on both sides (the CPU tier against CUDA,
 * the outputs' valid copy following the side that ran) and device memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

#if defined(XT_HAVE_CUDART)
#include <cuda_runtime.h>
#endif

enum { MEASURED_CALLS = 8 };

static xpar_decision decision(xpar_context *ctx) {
  xpar_decision d;
  memset(&d, 0x5A, sizeof d);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_non_null(memchr(d.reason, '\0', sizeof d.reason));
  return d;
}

/* A context with adaptive mode on (it is off by default). */
static xpar_context *new_ctx(void) {
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_adaptive(ctx, 1), XPAR_OK);
  return ctx;
}

static size_t threshold(xpar_context *ctx, xpar_op op, xpar_dtype t, xpar_threshold which) {
  size_t v = 0;
  assert_int_equal(xpar_context_get_threshold(ctx, op, t, which, &v), XPAR_OK);
  return v;
}

/* Random int32 in [-1000, 1000] and its exact sum. */
static int32_t *random_int32(const char *label, size_t n, int64_t *sum) {
  xt_rng r;
  xt_rng_for(&r, label);
  int32_t *x = malloc(n * sizeof *x);
  assert_non_null(x);
  *sum = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (int32_t)xt_below(&r, 2001) - 1000;
    *sum += x[i];
  }
  return x;
}

/* Which of the two sides the record's tier is (-1: neither). */
static int side_of(xpar_tier t, xpar_tier small, xpar_tier large) {
  return t == small ? 0 : t == large ? 1 : -1;
}

/*
 * Call `call` 8 + extra times; check the measuring schedule: the records say
 * "measuring <small> and <large> (call k of 8)", the first 4 calls run the
 * threshold's side (`first`), the next 4 the other; then "best ..." and one
 * side for every later call.  `call` checks its own result.
 */
typedef void (*call_fn)(xpar_context *ctx, void *arg, int k);

static void check_schedule(const char *label, xpar_context *ctx, call_fn call, void *arg,
                           xpar_tier small, xpar_tier large, int first, int extra) {
  char want[128];
  for (int k = 0; k < MEASURED_CALLS; k++) {
    call(ctx, arg, k);
    xpar_decision d = decision(ctx);
    snprintf(want, sizeof want, "adaptive: measuring %s and %s (call %d of %d)",
             xpar_tier_name(small), xpar_tier_name(large), k + 1, MEASURED_CALLS);
    if (!strstr(d.reason, want))
      xt_failf(label, "call %d: reason \"%s\" lacks \"%s\"", k + 1, d.reason, want);
    const int side = side_of(d.tier, small, large), want_side = first ^ (k >= MEASURED_CALLS / 2);
    if (side != want_side)
      xt_failf(label, "call %d ran %s; the schedule says %s", k + 1, xpar_tier_name(d.tier),
               xpar_tier_name(want_side ? large : small));
  }
  xpar_tier kept = XPAR_TIER_NONE;
  for (int k = 0; k < extra; k++) {
    call(ctx, arg, MEASURED_CALLS + k);
    xpar_decision d = decision(ctx);
    if (!strstr(d.reason, "adaptive: best "))
      xt_failf(label, "call %d after measuring: reason \"%s\" lacks \"adaptive: best \"",
               k + 1, d.reason);
    if (side_of(d.tier, small, large) < 0)
      xt_failf(label, "call %d after measuring ran %s", k + 1, xpar_tier_name(d.tier));
    if (k == 0) kept = d.tier;
    else if (d.tier != kept)
      xt_failf(label, "call %d after measuring ran %s, the first ran %s", k + 1,
               xpar_tier_name(d.tier), xpar_tier_name(kept));
  }
}

typedef struct reduce_arg {
  const char *label;
  xpar_dtype dtype;
  const void *x;
  size_t n;
  int64_t sum;
  double dsum;
} reduce_arg;

static void reduce_int32_call(xpar_context *ctx, void *p, int k) {
  reduce_arg *a = p;
  int32_t got = 0x5A5A5A5A;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a->x, a->n, &got), XPAR_OK);
  if (got != (int32_t)a->sum)
    xt_failf(a->label, "call %d: sum %d, expected %d", k + 1, got, (int32_t)a->sum);
}

/* The OpenMP crossing on host data: int32 sums at the threshold and a size
 * class below it, each its own cell. */
static void openmp_crossing(void **state) {
  (void)state;
  if (!xt_have_openmp()) skip();
  xpar_context *ctx = new_ctx();
  const size_t t = threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP);
  if (t == 0 || t == XPAR_NEVER || t >= (size_t)1 << 28) skip();
  const size_t sizes[2] = {t, t / 2 + 3};
  for (int s = 0; s < 2; s++) {
    reduce_arg a = {.label = s ? "openmp_crossing/below" : "openmp_crossing/at",
                    .dtype = XPAR_INT32,
                    .n = sizes[s]};
    int32_t *x = random_int32(a.label, a.n, &a.sum);
    a.x = x;
    check_schedule(a.label, ctx, reduce_int32_call, &a, XPAR_TIER_CPU_SERIAL,
                   XPAR_TIER_CPU_OPENMP, s == 0, 12);
    free(x);
  }
  /* Far from the threshold: decided by it alone. */
  {
    reduce_arg a = {.label = "openmp_crossing/far", .dtype = XPAR_INT32, .n = t * 8};
    int32_t *x = random_int32(a.label, a.n, &a.sum);
    a.x = x;
    reduce_int32_call(ctx, &a, 0);
    xpar_decision d = decision(ctx);
    assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
    assert_null(strstr(d.reason, "adaptive"));
    free(x);
  }
  xpar_context_destroy(ctx);
}

/* A new thread count measures the cell again; adaptive mode off (the
 * default, the API, the environment) and a threshold the application set
 * follow the threshold. */
static void what_restarts_or_stops_it(void **state) {
  (void)state;
  if (!xt_have_openmp()) skip();
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  int on = -1;
  assert_int_equal(xpar_context_get_adaptive(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0); /* off by default */
  xpar_context_destroy(ctx);
  ctx = new_ctx();
  assert_int_equal(xpar_context_get_adaptive(ctx, &on), XPAR_OK);
  assert_int_equal(on, 1);
  const size_t t = threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP);
  if (t == 0 || t == XPAR_NEVER || t >= (size_t)1 << 28) skip();
  reduce_arg a = {.label = "restarts", .dtype = XPAR_INT32, .n = t};
  int32_t *x = random_int32(a.label, a.n, &a.sum);
  a.x = x;
  check_schedule(a.label, ctx, reduce_int32_call, &a, XPAR_TIER_CPU_SERIAL, XPAR_TIER_CPU_OPENMP,
                 1, 2);
  assert_int_equal(xpar_context_set_num_threads(ctx, 2), XPAR_OK);
  check_schedule("restarts/threads", ctx, reduce_int32_call, &a, XPAR_TIER_CPU_SERIAL,
                 XPAR_TIER_CPU_OPENMP, 1, 2);

  /* Off through the API: the threshold's side, nothing measured. */
  assert_int_equal(xpar_context_set_adaptive(ctx, 0), XPAR_OK);
  assert_int_equal(xpar_context_get_adaptive(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0);
  for (int k = 0; k < 3; k++) {
    reduce_int32_call(ctx, &a, k);
    xpar_decision d = decision(ctx);
    assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
    assert_null(strstr(d.reason, "adaptive"));
  }
  xpar_context_destroy(ctx);

  /* A threshold set through the API is followed exactly, at it and below
   * (adaptive mode on). */
  ctx = new_ctx();
  assert_int_equal(xpar_context_set_threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32,
                                              XPAR_THRESHOLD_OPENMP, t),
                   XPAR_OK);
  for (int k = 0; k < 2 * MEASURED_CALLS; k++) {
    a.n = k & 1 ? t - 1 : t;
    a.sum = 0;
    for (size_t i = 0; i < a.n; i++) a.sum += x[i];
    reduce_int32_call(ctx, &a, k);
    xpar_decision d = decision(ctx);
    assert_int_equal(d.tier, k & 1 ? XPAR_TIER_CPU_SERIAL : XPAR_TIER_CPU_OPENMP);
    assert_null(strstr(d.reason, "adaptive"));
  }
  xpar_context_destroy(ctx);

  /* The environment: 1 turns it on, 0 leaves it off (and a later
   * xpar_context_set_adaptive wins); a bad value refuses the context. */
  a.n = t;
  a.sum = 0;
  for (size_t i = 0; i < a.n; i++) a.sum += x[i];
  setenv("XPAR_ADAPTIVE", "1", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_get_adaptive(ctx, &on), XPAR_OK);
  assert_int_equal(on, 1);
  reduce_int32_call(ctx, &a, 0);
  assert_non_null(strstr(decision(ctx).reason, "adaptive: measuring"));
  xpar_context_destroy(ctx);
  setenv("XPAR_ADAPTIVE", "0", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_get_adaptive(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0);
  reduce_int32_call(ctx, &a, 0);
  assert_null(strstr(decision(ctx).reason, "adaptive"));
  xpar_context_destroy(ctx);
  setenv("XPAR_ADAPTIVE", "yes", 1);
  xpar_context *bad = (xpar_context *)0x1;
  assert_int_equal(xpar_context_create(&bad), XPAR_ERR_INVALID_ENV);
  assert_null(bad);
  unsetenv("XPAR_ADAPTIVE");
  assert_int_equal(xpar_context_set_adaptive(NULL, 1), XPAR_ERR_NULL_CONTEXT);
  assert_int_equal(xpar_context_get_adaptive(NULL, &on), XPAR_ERR_NULL_CONTEXT);
  ctx = new_ctx();
  assert_int_equal(xpar_context_get_adaptive(ctx, NULL), XPAR_ERR_NULL_POINTER);
  xpar_context_destroy(ctx);
  free(x);
}

/* Float sums keep the threshold's side (their rounding follows the tier:
 * a repeated call must give the same bits), except in reproducible mode;
 * float min and max, exact everywhere, are measured. */
static void float_sums(void **state) {
  (void)state;
  if (!xt_have_openmp()) skip();
  xpar_context *ctx = new_ctx();
  const size_t t = threshold(ctx, XPAR_OP_REDUCE, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP);
  if (t == 0 || t == XPAR_NEVER || t >= (size_t)1 << 28) skip();
  xt_rng r;
  xt_rng_for(&r, "float_sums");
  float *x = malloc(t * sizeof *x);
  assert_non_null(x);
  xt_fill_random(&r, XPAR_FLOAT, x, t, XT_DATA_RANDOM, 0);
  float first = 0;
  for (int k = 0; k < MEASURED_CALLS + 2; k++) {
    float got = 0;
    assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, x, t, &got), XPAR_OK);
    xpar_decision d = decision(ctx);
    assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
    assert_null(strstr(d.reason, "adaptive"));
    if (k == 0) first = got;
    else assert_memory_equal(&got, &first, sizeof got);
  }
  /* max: measured, and every call the same exact value. */
  float want = x[0];
  for (size_t i = 1; i < t; i++) want = x[i] > want ? x[i] : want;
  for (int k = 0; k < MEASURED_CALLS + 2; k++) {
    float got = 0;
    assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_MAX, x, t, &got), XPAR_OK);
    assert_memory_equal(&got, &want, sizeof got);
    assert_non_null(strstr(decision(ctx).reason, "adaptive: "));
  }
  /* Reproducible mode: the same bits on every tier, so measured. */
  assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
  for (int k = 0; k < MEASURED_CALLS + 2; k++) {
    float got = 0;
    assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, x, t, &got), XPAR_OK);
    assert_non_null(strstr(decision(ctx).reason, "adaptive: "));
    if (k == 0) first = got;
    else assert_memory_equal(&got, &first, sizeof got);
  }
  free(x);
  xpar_context_destroy(ctx);
}

#if defined(XT_HAVE_CUDART)
typedef struct mapped_arg {
  const char *label;
  xpar_context *ctx;
  int32_t *x, *out, *want;
  size_t n;
} mapped_arg;

/* An inclusive int32 scan of mapped x into mapped out (written whole): the
 * output is checked where the side that ran left it valid. */
static void mapped_scan_call(xpar_context *ctx, void *p, int k) {
  mapped_arg *a = p;
  memset(a->out, 0xA5, a->n * sizeof *a->out);
  assert_int_equal(xpar_update(ctx, a->out, XPAR_UPDATE_TO_DEVICE), XPAR_OK); /* poison both */
  assert_int_equal(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a->x, a->out, a->n),
                   XPAR_OK);
  assert_int_equal(xpar_update(ctx, a->out, XPAR_UPDATE_FROM_DEVICE), XPAR_OK);
  if (memcmp(a->out, a->want, a->n * sizeof *a->out) != 0) {
    size_t i = 0;
    while (a->out[i] == a->want[i]) i++;
    xt_failf(a->label, "call %d: element %zu is %d, expected %d", k + 1, i, a->out[i],
             a->want[i]);
  }
}

/* The CPU tier against CUDA for mapped arrays valid on both sides, at the
 * GPU threshold for device data. */
static void mapped_crossing(void **state) {
  (void)state;
  if (!xt_gpu_usable()) skip();
  xpar_context *ctx = new_ctx();
  const size_t t = threshold(ctx, XPAR_OP_SCAN, XPAR_INT32, XPAR_THRESHOLD_GPU_DEVICE_DATA);
  const size_t omp = threshold(ctx, XPAR_OP_SCAN, XPAR_INT32, XPAR_THRESHOLD_OPENMP);
  if (t == 0 || t == XPAR_NEVER || t >= (size_t)1 << 28) skip();
  mapped_arg a = {.label = "mapped_crossing", .ctx = ctx, .n = t};
  int64_t sum;
  a.x = random_int32(a.label, a.n, &sum);
  a.out = malloc(a.n * sizeof *a.out);
  a.want = malloc(a.n * sizeof *a.want);
  assert_non_null(a.out);
  assert_non_null(a.want);
  int32_t acc = 0;
  for (size_t i = 0; i < a.n; i++) a.want[i] = acc = (int32_t)((uint32_t)acc + (uint32_t)a.x[i]);
  assert_int_equal(xpar_map(ctx, a.x, a.n * sizeof *a.x, XPAR_MAP_TO), XPAR_OK);
  assert_int_equal(xpar_map(ctx, a.out, a.n * sizeof *a.out, XPAR_MAP_ALLOC), XPAR_OK);
  const xpar_tier cpu = a.n >= omp ? XPAR_TIER_CPU_OPENMP : XPAR_TIER_CPU_SERIAL;
  check_schedule(a.label, ctx, mapped_scan_call, &a, cpu, XPAR_TIER_CUDA, 1, 6);
  /* An in-place scan (x read and written) is not measured. */
  assert_int_equal(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a.x, a.x, a.n), XPAR_OK);
  assert_null(strstr(decision(ctx).reason, "adaptive"));
  assert_int_equal(xpar_unmap(ctx, a.out, XPAR_UNMAP_RELEASE), XPAR_OK);
  assert_int_equal(xpar_unmap(ctx, a.x, XPAR_UNMAP_RELEASE), XPAR_OK);
  free(a.x);
  free(a.out);
  free(a.want);
  xpar_context_destroy(ctx);
}

typedef struct device_arg {
  const char *label;
  const int32_t *dx;
  size_t n;
  int64_t sum;
} device_arg;

static void device_reduce_call(xpar_context *ctx, void *p, int k) {
  device_arg *a = p;
  int32_t got = 0x5A5A5A5A;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a->dx, a->n, &got), XPAR_OK);
  if (got != (int32_t)a->sum)
    xt_failf(a->label, "call %d: sum %d, expected %d", k + 1, got, (int32_t)a->sum);
}

/* Device memory: the CPU tier (copies) against CUDA, at the device-only
 * threshold and a class below it; a queued call is not measured. */
static void device_crossing(void **state) {
  (void)state;
  if (!xt_gpu_usable()) skip();
  xpar_context *ctx = new_ctx();
  const size_t t = threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA);
  const size_t omp = threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP);
  if (t < 4 || t == XPAR_NEVER || t >= (size_t)1 << 26) skip();
  const size_t sizes[2] = {t, t / 2 + 1};
  for (int s = 0; s < 2; s++) {
    device_arg a = {.label = s ? "device_crossing/below" : "device_crossing/at", .n = sizes[s]};
    int32_t *x = random_int32(a.label, a.n, &a.sum);
    int32_t *dx = NULL;
    assert_int_equal(cudaMalloc((void **)&dx, a.n * sizeof *dx), cudaSuccess);
    assert_int_equal(cudaMemcpy(dx, x, a.n * sizeof *dx, cudaMemcpyHostToDevice), cudaSuccess);
    a.dx = dx;
    const xpar_tier cpu = a.n >= omp ? XPAR_TIER_CPU_OPENMP : XPAR_TIER_CPU_SERIAL;
    check_schedule(a.label, ctx, device_reduce_call, &a, cpu, XPAR_TIER_CUDA, s == 0, 6);
    /* The device array is unchanged by the CPU side's copies. */
    int32_t *back = malloc(a.n * sizeof *back);
    assert_non_null(back);
    assert_int_equal(cudaMemcpy(back, dx, a.n * sizeof *dx, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(back, x, a.n * sizeof *x);
    free(back);
    assert_int_equal(cudaFree(dx), cudaSuccess);
    free(x);
  }
  xpar_context_destroy(ctx);
}
#else
static void mapped_crossing(void **state) {
  (void)state;
  skip();
}
static void device_crossing(void **state) {
  (void)state;
  skip();
}
#endif

int main(int argc, char **argv) {
  xt_init("test_adaptive", argc, argv);
  xt_unset_xpar_env(0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(openmp_crossing),
      cmocka_unit_test(what_restarts_or_stops_it),
      cmocka_unit_test(float_sums),
      {"mapped_crossing/cuda", mapped_crossing, NULL, NULL, NULL},
      {"device_crossing/cuda", device_crossing, NULL, NULL, NULL},
  };
  return cmocka_run_group_tests_name("adaptive", tests, NULL, NULL);
}
