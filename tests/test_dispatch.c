/*
 * Dispatch decisions, read back through xpar_last_decision: the OpenMP
 * threshold of the CPU backend, forced tiers, AUTO with offload disabled,
 * AUTO without a GPU (falls back, says why), offload MANDATORY without a GPU
 * (XPAR_ERR_NO_DEVICE, nothing written), xpar_device_query, the record before
 * any call and for n = 0.  With a GPU: AUTO sends device-resident data and
 * large host arrays (GPU threshold 0) to cuda, and keeps small ones on the CPU
 * when the GPU threshold says never.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <cmocka.h>

#include "xt.h"

#if defined(XT_HAVE_CUDART)
#include <cuda_runtime.h>
#endif

static int contains_ci(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return 1;
  }
  return 0;
}

static xpar_decision decision(xpar_context *ctx) {
  xpar_decision d;
  memset(&d, 0x5A, sizeof d);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (memchr(d.reason, '\0', sizeof d.reason) == NULL) {
    print_error("decision reason is not NUL-terminated\n");
    fail();
  }
  return d;
}

static xpar_context *new_ctx(void) {
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  return ctx;
}

/* Run op `op` on n elements of double (arrays from the caller). */
static xpar_status run_op(xpar_context *ctx, xpar_op op, double *x, double *y, double *z, size_t n,
                          double *res) {
  static const double two = 2.0;
  switch (op) {
    case XPAR_OP_REDUCE: return xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, x, n, res);
    case XPAR_OP_SCAN: return xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, x, z, n);
    case XPAR_OP_AXPY: return xpar_axpy(ctx, XPAR_DOUBLE, &two, x, z, n);
    case XPAR_OP_ADD: return xpar_add(ctx, XPAR_DOUBLE, x, y, z, n);
    case XPAR_OP_FILL: return xpar_fill(ctx, XPAR_DOUBLE, &two, z, n);
    case XPAR_OP_SORT: return xpar_sort(ctx, XPAR_DOUBLE, XPAR_ASCENDING, x, z, n);
    case XPAR_OP_SELECT: {
      size_t k;
      return xpar_select(ctx, XPAR_DOUBLE, XPAR_GT, &two, NULL, x, z, n, &k);
    }
    case XPAR_OP_RUNS: {
      size_t k;
      return xpar_run_length_encode(ctx, XPAR_DOUBLE, x, n, z, (uint64_t *)y, &k);
    }
    case XPAR_OP_ARGREDUCE: {
      int64_t at;
      return xpar_argmin(ctx, XPAR_DOUBLE, x, n, res, &at);
    }
    case XPAR_OP_SEGMENTED: /* one segment of n: its sum in *res */
      return xpar_segmented_reduce_fixed(ctx, XPAR_DOUBLE, XPAR_SUM, x, n, n ? 1 : 0, res);
    case XPAR_OP_HISTOGRAM: { /* z: up to 64 counts (one on the stack for n = 0) */
      static const double zero = 0.0;
      uint64_t one;
      return xpar_histogram_even(ctx, XPAR_DOUBLE, x, n, &zero, &two, n ? (n < 64 ? n : 64) : 1,
                                 n ? (uint64_t *)z : &one);
    }
    case XPAR_OP_DOT: default: return xpar_dot(ctx, XPAR_DOUBLE, x, y, n, res);
  }
}

static void set_all_thresholds(xpar_context *ctx, xpar_threshold which, size_t v) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < XT_NDTYPES; d++)
      assert_int_equal(xpar_context_set_threshold(ctx, (xpar_op)op, xt_dtypes[d], which, v), XPAR_OK);
}

static void set_gpu_thresholds(xpar_context *ctx, size_t v) {
  set_all_thresholds(ctx, XPAR_THRESHOLD_GPU_DEVICE_DATA, v);
  set_all_thresholds(ctx, XPAR_THRESHOLD_GPU_PINNED_DATA, v);
  set_all_thresholds(ctx, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, v);
}

/* ---- before any call; n = 0 ----------------------------------------------------- */
static void none_before_any_call(void **state) {
  (void)state;
  xpar_context *ctx = new_ctx();
  xpar_decision d = decision(ctx);
  assert_int_equal(d.tier, XPAR_TIER_NONE);
  assert_int_equal(d.bytes_to_device, 0);
  assert_int_equal(d.bytes_to_host, 0);
  xpar_context_destroy(ctx);
}

static void decision_n0(void **state) {
  (void)state;
  xpar_context *ctx = new_ctx();
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    double r = -1;
    if (op == XPAR_OP_ARGREDUCE) continue; /* n = 0 is refused (numpy raises): test_argreduce */
    assert_int_equal(run_op(ctx, (xpar_op)op, NULL, NULL, NULL, 0, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    if (d.op != (xpar_op)op || d.dtype != XPAR_DOUBLE || d.n != 0)
      xt_failf("decision_n0", "op %s n=0: record says op %d dtype %d n %zu", xpar_op_name((xpar_op)op),
               (int)d.op, (int)d.dtype, d.n);
    assert_true(d.tier >= XPAR_TIER_NONE && d.tier < XPAR_TIER_COUNT_);
    assert_int_equal(d.bytes_to_device, 0);
    assert_int_equal(d.bytes_to_host, 0);
  }
  xpar_context_destroy(ctx);
}

/* ---- the CPU backend's OpenMP threshold ------------------------------------------ */
static void cpu_openmp_threshold(void **state) {
  (void)state;
  if (!xt_have_openmp()) skip();
  const size_t th = 1000;
  double *x = (double *)calloc(2 * th, sizeof *x), *y = (double *)calloc(2 * th, sizeof *y),
         *z = (double *)calloc(2 * th, sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  for (size_t i = 0; i < 2 * th; i++) x[i] = y[i] = 1.0;
  xpar_context *ctx = new_ctx();
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    for (int d = 0; d < XT_NDTYPES; d++)
      assert_int_equal(xpar_context_set_threshold(ctx, (xpar_op)op, xt_dtypes[d], XPAR_THRESHOLD_OPENMP, th),
                       XPAR_OK);
    const size_t ns[] = {1, th - 1, th, th + 1, 2 * th};
    for (size_t k = 0; k < 5; k++) {
      double r;
      char label[96];
      snprintf(label, sizeof label, "cpu backend, %s, n=%zu, openmp threshold %zu",
               xpar_op_name((xpar_op)op), ns[k], th);
      assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, ns[k], &r), XPAR_OK);
      xpar_decision d = decision(ctx);
      xpar_tier want = ns[k] >= th ? XPAR_TIER_CPU_OPENMP : XPAR_TIER_CPU_SERIAL;
      if (d.tier != want)
        xt_failf(label, "ran on %s, expected %s (reason \"%s\")", xpar_tier_name(d.tier),
                 xpar_tier_name(want), d.reason);
      if (!contains_ci(d.reason, "threshold"))
        xt_failf(label, "the reason \"%s\" does not mention the threshold", d.reason);
      if (d.op != (xpar_op)op || d.n != ns[k] || d.dtype != XPAR_DOUBLE)
        xt_failf(label, "record says op %d n %zu dtype %d", (int)d.op, d.n, (int)d.dtype);
      if (d.bytes_to_device || d.bytes_to_host)
        xt_failf(label, "a CPU call reports transfers (%zu to device, %zu to host)", d.bytes_to_device,
                 d.bytes_to_host);
    }
  }
  /* Per dtype: the float threshold does not move the double one. */
  assert_int_equal(xpar_context_set_threshold(ctx, XPAR_OP_REDUCE, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, 1), XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(ctx, XPAR_OP_REDUCE, XPAR_DOUBLE, XPAR_THRESHOLD_OPENMP, XPAR_NEVER),
                   XPAR_OK);
  double r;
  assert_int_equal(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, x, 2 * th, &r), XPAR_OK);
  assert_int_equal(decision(ctx).tier, XPAR_TIER_CPU_SERIAL);
  float fx[64] = {0};
  float fr;
  assert_int_equal(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, fx, 64, &fr), XPAR_OK);
  assert_int_equal(decision(ctx).tier, XPAR_TIER_CPU_OPENMP);
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  free(z);
}

/* ---- forced serial ---------------------------------------------------------------- */
static void cpu_serial_forced(void **state) {
  (void)state;
  const size_t n = 1 << 20;
  double *x = (double *)calloc(n, sizeof *x), *y = (double *)calloc(n, sizeof *y),
         *z = (double *)calloc(n, sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  xpar_context *ctx = new_ctx();
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  set_all_thresholds(ctx, XPAR_THRESHOLD_OPENMP, 0);
  set_gpu_thresholds(ctx, 0);
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    double r;
    assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, n, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    if (d.tier != XPAR_TIER_CPU_SERIAL)
      xt_failf("cpu-serial forced", "%s ran on %s (reason \"%s\")", xpar_op_name((xpar_op)op),
               xpar_tier_name(d.tier), d.reason);
    assert_true(d.reason[0] != '\0');
  }
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  free(z);
}

/* ---- AUTO, offload disabled: never a CUDA tier, GPU or not ---------------------- */
static void auto_offload_disabled(void **state) {
  (void)state;
  const size_t ns[] = {1, 1000, (1 << 20) + 3};
  double *x = (double *)calloc(ns[2], sizeof *x), *y = (double *)calloc(ns[2], sizeof *y),
         *z = (double *)calloc(ns[2], sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  xpar_context *ctx = new_ctx();
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED), XPAR_OK);
  set_gpu_thresholds(ctx, 0); /* the GPU would win every call */
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (size_t k = 0; k < 3; k++) {
      double r;
      assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, ns[k], &r), XPAR_OK);
      xpar_decision d = decision(ctx);
      if (d.tier != XPAR_TIER_CPU_SERIAL && d.tier != XPAR_TIER_CPU_OPENMP)
        xt_failf("auto, offload disabled", "%s n=%zu ran on %s (reason \"%s\")",
                 xpar_op_name((xpar_op)op), ns[k], xpar_tier_name(d.tier), d.reason);
      assert_int_equal(d.bytes_to_device, 0);
      assert_int_equal(d.bytes_to_host, 0);
    }
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  free(z);
}

/* ---- no GPU: AUTO falls back and says why; MANDATORY refuses ---------------------- */
static void auto_without_gpu(void **state) {
  (void)state;
  if (xt_gpu_usable()) skip();
  const size_t n = (1 << 20) + 3;
  double *x = (double *)calloc(n, sizeof *x), *y = (double *)calloc(n, sizeof *y),
         *z = (double *)calloc(n, sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  for (size_t i = 0; i < n; i++) x[i] = y[i] = 0.5;
  xpar_context *ctx = new_ctx();
  set_gpu_thresholds(ctx, 0); /* wants the GPU for every n */
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    double r = 0;
    assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, n, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    char label[96];
    snprintf(label, sizeof label, "auto without GPU, %s n=%zu", xpar_op_name((xpar_op)op), n);
    if (d.tier != XPAR_TIER_CPU_SERIAL && d.tier != XPAR_TIER_CPU_OPENMP)
      xt_failf(label, "ran on %s (reason \"%s\")", xpar_tier_name(d.tier), d.reason);
    if (!contains_ci(d.reason, "gpu") && !contains_ci(d.reason, "cuda") && !contains_ci(d.reason, "device"))
      xt_failf(label, "the reason \"%s\" does not say why the GPU was not used", d.reason);
    if (op == XPAR_OP_REDUCE && r != 0.5 * (double)n) xt_failf(label, "sum %.17g", r);
  }
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  free(z);
}

/* cuda-serial without a GPU runs the CPU's strict element-order loop (the
 * debugging intent), whatever n: the record says cpu-serial and the float sum
 * equals the serial backend's bit for bit. */
static void cuda_serial_without_gpu(void **state) {
  (void)state;
  if (xt_gpu_usable()) skip();
  const size_t n = (1 << 20) + 3;
  float *x = (float *)malloc(n * sizeof *x);
  assert_non_null(x);
  xt_rng r;
  xt_rng_for(&r, "cuda_serial_without_gpu");
  xt_fill_random(&r, XPAR_FLOAT, x, n, XT_DATA_RANDOM, 0);
  xpar_context *dbg = new_ctx(), *ser = new_ctx();
  assert_int_equal(xpar_context_set_backend(dbg, XPAR_BACKEND_CUDA_SERIAL), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ser, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  float a, b;
  assert_int_equal(xpar_reduce(dbg, XPAR_FLOAT, XPAR_SUM, x, n, &a), XPAR_OK);
  assert_int_equal(xpar_reduce(ser, XPAR_FLOAT, XPAR_SUM, x, n, &b), XPAR_OK);
  xpar_decision d = decision(dbg);
  if (d.tier != XPAR_TIER_CPU_SERIAL)
    xt_failf("cuda-serial without GPU", "ran on %s (reason \"%s\")", xpar_tier_name(d.tier),
             d.reason);
  if (!contains_ci(d.reason, "not usable"))
    xt_failf("cuda-serial without GPU", "the reason \"%s\" does not say why", d.reason);
  assert_memory_equal(&a, &b, sizeof a);
  xpar_context_destroy(dbg);
  xpar_context_destroy(ser);
  free(x);
}

static void mandatory_without_gpu(void **state) {
  (void)state;
  if (xt_gpu_usable()) skip();
  const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA, XPAR_BACKEND_CUDA_SERIAL};
  for (size_t b = 0; b < 3; b++)
    for (int op = 0; op < XPAR_OP_COUNT_; op++) {
      const size_t n = 100;
      double x[100], y[100], z[100], r[2], sx[100], sy[100], sz[100], sr[2];
      xt_poison(XPAR_DOUBLE, z, n);
      xt_poison(XPAR_DOUBLE, r, 2);
      for (size_t i = 0; i < n; i++) x[i] = y[i] = (double)i;
      memcpy(sx, x, sizeof x);
      memcpy(sy, y, sizeof y);
      memcpy(sz, z, sizeof z);
      memcpy(sr, r, sizeof r);
      char label[96];
      snprintf(label, sizeof label, "offload mandatory, backend %s, %s",
               xpar_backend_name(backends[b]), xpar_op_name((xpar_op)op));
      xpar_context *ctx = new_ctx();
      assert_int_equal(xpar_context_set_backend(ctx, backends[b]), XPAR_OK);
      assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY), XPAR_OK);
      xt_check_status(label, "call", run_op(ctx, (xpar_op)op, x, y, z, n, r), XPAR_ERR_NO_DEVICE);
      if (!xpar_last_error_detail()[0]) xt_failf(label, "empty detail");
      xt_check_bytes(label, "x", x, sx, sizeof x);
      xt_check_bytes(label, "y", y, sy, sizeof y);
      xt_check_bytes(label, "output", z, sz, sizeof z);
      xt_check_bytes(label, "result", r, sr, sizeof r);
      xpar_decision d = decision(ctx);
      if (d.tier != XPAR_TIER_NONE) xt_failf(label, "decision tier %s after a refusal", xpar_tier_name(d.tier));
      xpar_context_destroy(ctx);
    }
}

/* ---- reasons end whole ------------------------------------------------------------ */
/* Run op `op` on n elements of dtype t (arrays of 8-byte slots from the caller). */
static xpar_status run_op_t(xpar_context *ctx, xpar_op op, xpar_dtype t, void *x, void *y, void *z,
                            size_t n, const void *scalar, void *res) {
  switch (op) {
    case XPAR_OP_REDUCE: return xpar_reduce(ctx, t, XPAR_SUM, x, n, res);
    case XPAR_OP_SCAN: return xpar_scan(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, z, n);
    case XPAR_OP_AXPY: return xpar_axpy(ctx, t, scalar, x, z, n);
    case XPAR_OP_ADD: return xpar_add(ctx, t, x, y, z, n);
    case XPAR_OP_FILL: return xpar_fill(ctx, t, scalar, z, n);
    case XPAR_OP_SORT: return xpar_sort(ctx, t, XPAR_ASCENDING, x, z, n);
    case XPAR_OP_SELECT: {
      size_t k;
      return xpar_unique(ctx, t, x, z, n, &k);
    }
    case XPAR_OP_RUNS: {
      size_t k;
      return xpar_run_length_encode(ctx, t, x, n, z, (uint64_t *)y, &k);
    }
    case XPAR_OP_ARGREDUCE: {
      int64_t at;
      return xpar_argmax(ctx, t, x, n, res, &at);
    }
    case XPAR_OP_SEGMENTED: return xpar_segmented_scan_fixed(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, z, n, n ? 1 : 0);
    case XPAR_OP_HISTOGRAM: { /* z: up to 64 counts (one on the stack for n = 0) */
      uint64_t zero = 0, hi = 1, one;
      return xpar_histogram_even(ctx, t, x, n, &zero, &hi, n ? (n < 64 ? n : 64) : 1,
                                 n ? (uint64_t *)z : &one);
    }
    case XPAR_OP_DOT: default: return xpar_dot(ctx, t, x, y, n, res);
  }
}

static int reason_matches(const char *reason, const char *pattern) {
  regex_t re;
  assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
  const int hit = regexec(&re, reason, 0, NULL, 0) == 0;
  regfree(&re);
  return hit;
}

/* How a record ends when it is whole: where the quoted built-in defaults were
 * measured, last, as their machine and date; else the shadow note; else the
 * reproducible mode's. */
#define XT_DATE "[0-9]{4}-[0-9]{2}-[0-9]{2}"
#define XT_ORIGIN "\\([^(),]+, " XT_DATE "\\)"
static const char *const ends_with_origin =
    "; (defaults? " XT_ORIGIN "|defaults \\([^(),;]+; GPU " XT_DATE ", openmp " XT_DATE "\\)|"
    "GPU default " XT_ORIGIN ", openmp default " XT_ORIGIN ")$";
static const char *const ends_with_shadow =
    "; shadow [a-z-]+: (match|not run \\(.*\\)|MISMATCH .*\\))$";

/* The longest records of every op x dtype x backend on host data -- both
 * thresholds quoted, reproducible and shadow mode on, the GPU wanted but
 * perhaps not usable -- fit the public field whole (256 bytes): none is cut
 * ("..."), and each ends in the note it must end in: where the quoted
 * defaults were measured, as their machine and date (never a results
 * folder), else the shadow note.  Only a record at the field's end may have
 * a quoted text shortened ("[...]") and leave the defaults' origin out (a
 * long reason why the GPU is not usable); tests/test_policy.c checks those
 * against the record formatted without a limit. */
static void reasons_end_whole(void **state) {
  (void)state;
  const size_t n_max = (size_t)1 << 18; /* above every built-in OpenMP threshold */
  xt_rng rng;
  xt_rng_for(&rng, "reasons_end_whole");
  uint64_t *x = malloc(n_max * 8), *y = malloc(n_max * 8), *z = malloc(n_max * 8);
  assert_non_null(x), assert_non_null(y), assert_non_null(z);
  const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CPU, XPAR_BACKEND_CPU_SERIAL,
                                   XPAR_BACKEND_CUDA, XPAR_BACKEND_CUDA_SERIAL};
  /* 0: plain; 1: reproducible, shadow cpu-serial; 2: reproducible, shadow cuda
   * (not run without a GPU); 3: as 1, host data at or above its GPU threshold
   * (1, api): the GPU wanted, and without one not usable. */
  for (int mode = 0; mode < 4; mode++)
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
      xpar_context *ctx = new_ctx();
      assert_int_equal(xpar_context_set_backend(ctx, backends[b]), XPAR_OK);
      if (mode) {
        assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
        assert_int_equal(xpar_context_set_shadow(ctx, mode == 2 ? XPAR_TIER_CUDA : XPAR_TIER_CPU_SERIAL, 0),
                         XPAR_OK);
      }
      if (mode == 3) {
        set_all_thresholds(ctx, XPAR_THRESHOLD_GPU_PINNED_DATA, 1);
        set_all_thresholds(ctx, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 1);
      }
      for (int t = 0; t < XT_NDTYPES; t++) {
        const xpar_dtype dt = xt_dtypes[t];
        xt_fill_random(&rng, dt, x, n_max, xt_is_float(dt) ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
        xt_fill_random(&rng, dt, y, n_max, xt_is_float(dt) ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
        uint64_t scalar = 0, res = 0;
        xt_random_scalar(&rng, dt, &scalar, xt_is_float(dt) ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
        const size_t ns[] = {1000, n_max};
        for (int op = 0; op <= XPAR_OP_DOT; op++)
          for (int k = 0; k < 2; k++) {
            assert_int_equal(run_op_t(ctx, (xpar_op)op, dt, x, y, z, ns[k], &scalar, &res), XPAR_OK);
            const xpar_decision d = decision(ctx);
            const size_t len = strlen(d.reason);
            char label[128];
            snprintf(label, sizeof label, "%s %s n=%zu, backend %s, mode %d",
                     xpar_op_name((xpar_op)op), xt_dname(dt), ns[k],
                     xpar_backend_name(backends[b]), mode);
            if (len >= 3 && !strcmp(d.reason + len - 3, "..."))
              xt_failf(label, "the reason was cut off: \"%s\"", d.reason);
            /* A quoted text (the GPU's reason) is shortened only where the whole
             * record would not fit; then where the defaults were measured may
             * be left out too. */
            const char *shortened = strstr(d.reason, "[...]");
            const int full = /* the longest origin the built-in defaults give */
                len + strlen("; defaults (H100 host; GPU 2026-11-25, openmp 2026-11-26)") >=
                sizeof d.reason;
            if (shortened && (!full || shortened[5] != ')'))
              xt_failf(label, "a quoted text was shortened: \"%s\"", d.reason);
            const int shadow_last = reason_matches(d.reason, ends_with_shadow);
            const int whole = strstr(d.reason, "(default)")
                                  ? reason_matches(d.reason, ends_with_origin) ||
                                        (full && (!mode || shadow_last))
                                  : !mode || shadow_last;
            if (!whole)
              xt_failf(label, "the reason does not end in its last note: \"%s\"", d.reason);
            const char *shadow = strstr(d.reason, "; shadow ");
            if (mode && (!shadow || !strstr(d.reason, "; reproducible mode")))
              xt_failf(label, "the modes' notes are missing: \"%s\"", d.reason);
          }
      }
      xpar_context_destroy(ctx);
    }
  free(x), free(y), free(z);
}

/* ---- xpar_device_query ----------------------------------------------------------------- */
static void device_query(void **state) {
  (void)state;
  xpar_device_info info;
  memset(&info, 0x5A, sizeof info);
  assert_int_equal(xpar_device_query(&info), XPAR_OK);
  assert_non_null(memchr(info.reason, '\0', sizeof info.reason));
  assert_non_null(memchr(info.name, '\0', sizeof info.name));
#if defined(XT_BUILT_WITH_CUDA)
  assert_int_equal(info.built_with_cuda, 1);
#else
  assert_int_equal(info.built_with_cuda, 0);
#endif
  print_message("  device_query: usable %d, built_with_cuda %d, count %d, device %d, \"%s\", reason \"%s\"\n",
                info.usable, info.built_with_cuda, info.device_count, info.device, info.name, info.reason);
  if (!info.usable) {
    assert_true(info.reason[0] != '\0');
    assert_true(info.device_count >= 0);
    if (!info.built_with_cuda) assert_true(contains_ci(info.reason, "without cuda") || contains_ci(info.reason, "built"));
  } else {
    assert_int_equal(info.built_with_cuda, 1);
    assert_true(info.device_count >= 1);
    assert_true(info.device >= 0 && info.device < info.device_count);
    assert_true(info.name[0] != '\0');
    assert_true(info.compute_major >= 1);
    assert_true(info.multiprocessors > 0);
    assert_true(info.total_memory > 0);
  }
  /* Asking twice gives the same answer. */
  xpar_device_info again;
  memset(&again, 0, sizeof again);
  assert_int_equal(xpar_device_query(&again), XPAR_OK);
  assert_int_equal(again.usable, info.usable);
  assert_int_equal(again.device_count, info.device_count);
}

/* ---- with a GPU -------------------------------------------------------------------------- */
static void auto_picks_gpu(void **state) {
  (void)state;
  if (!xt_gpu_usable()) {
    print_message("  skipped: no usable GPU (%s)\n", xt_gpu_reason());
    skip();
  }
  const size_t n = (1 << 22) + 1;
  double *x = (double *)malloc(n * sizeof *x), *y = (double *)malloc(n * sizeof *y),
         *z = (double *)malloc(n * sizeof *z);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(z);
  for (size_t i = 0; i < n; i++) x[i] = y[i] = 1.0;
  xpar_context *ctx = new_ctx();
  /* Host pageable data: thresholds 0 send every call to the GPU, with the
   * transfers counted; NEVER keeps every call on the CPU. */
  set_gpu_thresholds(ctx, 0);
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    double r = 0;
    assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, n, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    if (d.tier != XPAR_TIER_CUDA)
      xt_failf("auto, GPU thresholds 0", "%s ran on %s (reason \"%s\")", xpar_op_name((xpar_op)op),
               xpar_tier_name(d.tier), d.reason);
    if (op != XPAR_OP_FILL && d.bytes_to_device == 0)
      xt_failf("auto, GPU thresholds 0", "%s on pageable host data moved no bytes to the device",
               xpar_op_name((xpar_op)op));
    if (op == XPAR_OP_REDUCE && r != (double)n) xt_failf("auto gpu", "sum %.17g", r);
    if (op == XPAR_OP_DOT && r != (double)n) xt_failf("auto gpu", "dot %.17g", r);
  }
  set_gpu_thresholds(ctx, XPAR_NEVER);
  for (int op = 0; op < XPAR_OP_COUNT_; op++) {
    double r = 0;
    for (size_t i = 0; i < n; i++) x[i] = y[i] = 1.0;
    assert_int_equal(run_op(ctx, (xpar_op)op, x, y, z, n, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    if (d.tier == XPAR_TIER_CUDA || d.tier == XPAR_TIER_CUDA_SERIAL)
      xt_failf("auto, GPU thresholds never", "%s ran on %s (reason \"%s\")", xpar_op_name((xpar_op)op),
               xpar_tier_name(d.tier), d.reason);
  }
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  free(z);
}

static void auto_device_pointers(void **state) {
  (void)state;
  if (!xt_gpu_usable()) skip();
#if !defined(XT_HAVE_CUDART)
  skip();
#else
  const size_t sizes[] = {1000, (1 << 20) + 3};
  for (size_t k = 0; k < 2; k++) {
    size_t n = sizes[k];
    double *h = (double *)malloc(n * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) h[i] = (double)(i % 7);
    double *dx = NULL, *dz = NULL;
    assert_int_equal(cudaMalloc((void **)&dx, n * sizeof *dx), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&dz, n * sizeof *dz), cudaSuccess);
    assert_int_equal(cudaMemcpy(dx, h, n * sizeof *h, cudaMemcpyHostToDevice), cudaSuccess);
    xpar_context *ctx = new_ctx();
    /* Device-only data stays on the GPU from the calibrated device-only
     * threshold on; below it the call is copied to (pinned) host memory,
     * run on the CPU and, for an array output, copied back. */
    size_t thr_reduce = 0, thr_scan = 0;
    assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_REDUCE, XPAR_DOUBLE,
                                                XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, &thr_reduce),
                     XPAR_OK);
    assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_SCAN, XPAR_DOUBLE,
                                                XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, &thr_scan),
                     XPAR_OK);
    double r = 0, want = 0;
    for (size_t i = 0; i < n; i++) want += h[i];
    assert_int_equal(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, dx, n, &r), XPAR_OK);
    xpar_decision d = decision(ctx);
    if ((d.tier == XPAR_TIER_CUDA) != (n >= thr_reduce) || !strstr(d.reason, "only on the device"))
      xt_failf("auto, device pointer", "n=%zu reduce (device-only threshold %zu) ran on %s (reason \"%s\")", n,
               thr_reduce, xpar_tier_name(d.tier), d.reason);
    if (d.tier != XPAR_TIER_CUDA && (d.bytes_to_host != n * sizeof *h || d.bytes_to_device != 0))
      xt_failf("auto, device pointer", "n=%zu reduce on the CPU moved %zu bytes to the host, %zu to "
               "the device (expected %zu and 0)", n, d.bytes_to_host, d.bytes_to_device, n * sizeof *h);
    if (r != want) xt_failf("auto, device pointer", "n=%zu sum %.17g, expected %.17g", n, r, want);
    assert_int_equal(cudaMemset(dz, 0xA5, n * sizeof *dz), cudaSuccess); /* poison the output */
    assert_int_equal(xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, dx, dz, n), XPAR_OK);
    d = decision(ctx);
    if ((d.tier == XPAR_TIER_CUDA) != (n >= thr_scan))
      xt_failf("auto, device pointer", "n=%zu scan (device-only threshold %zu) ran on %s (reason \"%s\")", n,
               thr_scan, xpar_tier_name(d.tier), d.reason);
    if (d.tier == XPAR_TIER_CUDA) assert_int_equal(d.bytes_to_device, 0);
    assert_int_equal(cudaMemcpy(h, dz, n * sizeof *h, cudaMemcpyDeviceToHost), cudaSuccess);
    double acc = 0;
    for (size_t i = 0; i < n; i++) {
      acc += (double)(i % 7);
      if (h[i] != acc) xt_failf("auto, device pointer", "scan[%zu] = %.17g, expected %.17g", i, h[i], acc);
    }
    xpar_context_destroy(ctx);
    cudaFree(dx);
    cudaFree(dz);
    free(h);
  }
#endif
}

int main(int argc, char **argv) {
  xt_init("test_dispatch", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(none_before_any_call),
      cmocka_unit_test(decision_n0),
      cmocka_unit_test(cpu_openmp_threshold),
      cmocka_unit_test(cpu_serial_forced),
      cmocka_unit_test(auto_offload_disabled),
      cmocka_unit_test(device_query),
      cmocka_unit_test(reasons_end_whole),
      /* Named by what they need: "/no-gpu" runs only without a usable GPU,
       * "/cuda" only with one; the other skips by name. */
      {"auto_without_gpu/no-gpu", auto_without_gpu, NULL, NULL, NULL},
      {"mandatory_without_gpu/no-gpu", mandatory_without_gpu, NULL, NULL, NULL},
      {"cuda_serial_without_gpu/no-gpu", cuda_serial_without_gpu, NULL, NULL, NULL},
      {"auto_host_data_thresholds/cuda", auto_picks_gpu, NULL, NULL, NULL},
      {"auto_device_pointers/cuda", auto_device_pointers, NULL, NULL, NULL},
  };
  return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
