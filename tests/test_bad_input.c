/*
 * Bad input: every refusal returns its own status, leaves a non-empty
 * thread-local detail, writes nothing (poisoned outputs, results and
 * context settings unchanged) and leaves the decision record at
 * XPAR_TIER_NONE.  Also: status names and strings, enum names for unknown
 * values, the detail cleared by a successful call and kept per thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <setjmp.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

/* Every call below gets pointers into these; after a refused call all of
 * them must hold exactly what they held before. */
#define NB 64
static double g_in[NB], g_in2[NB], g_out[NB], g_res[4];
static unsigned char g_snap[4][NB * sizeof(double)];
static xpar_context *g_ctx;

static void arm(void) {
  xt_rng r;
  xt_rng_for(&r, "bad_input/inputs");
  xt_fill_random(&r, XPAR_DOUBLE, g_in, NB, XT_DATA_RANDOM, 0);
  xt_fill_random(&r, XPAR_DOUBLE, g_in2, NB, XT_DATA_RANDOM, 0);
  xt_poison(XPAR_DOUBLE, g_out, NB);
  xt_poison(XPAR_DOUBLE, g_res, 4);
  memcpy(g_snap[0], g_in, sizeof g_in);
  memcpy(g_snap[1], g_in2, sizeof g_in2);
  memcpy(g_snap[2], g_out, sizeof g_out);
  memcpy(g_snap[3], g_res, sizeof g_res);
}

static void check_refused(const char *what, xpar_status got, xpar_status want) {
  if (got != want) {
    xt_failf(what, "status %s (%d), expected %s; detail \"%s\"", xpar_status_name(got), (int)got,
             xpar_status_name(want), xpar_last_error_detail());
  }
  const char *detail = xpar_last_error_detail();
  if (!detail || !*detail) xt_failf(what, "refused with %s but the detail is empty", xpar_status_name(got));
  xt_check_bytes(what, "input x", g_in, g_snap[0], sizeof g_in);
  xt_check_bytes(what, "input y", g_in2, g_snap[1], sizeof g_in2);
  xt_check_bytes(what, "output array", g_out, g_snap[2], sizeof g_out);
  xt_check_bytes(what, "result scalar", g_res, g_snap[3], sizeof g_res);
}

/* `ctx` documents which context the call used (NULL: none); the decision
 * record after refusals is checked by refusal_resets_decision. */
#define REFUSED(want, ctx, call)                  \
  do {                                            \
    (void)(ctx);                                  \
    arm();                                        \
    xpar_status s_ = (call);                      \
    check_refused(#call, s_, want);               \
  } while (0)

#define ACCEPTED(call)                                                                 \
  do {                                                                                 \
    xpar_status s_ = (call);                                                           \
    if (s_ != XPAR_OK)                                                                 \
      xt_failf(#call, "status %s, expected OK; detail \"%s\"", xpar_status_name(s_),  \
               xpar_last_error_detail());                                              \
  } while (0)

static int setup(void **state) {
  (void)state;
  return xpar_context_create(&g_ctx) == XPAR_OK ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  xpar_context_destroy(g_ctx);
  g_ctx = NULL;
  return 0;
}

static const double alpha = 2.0;

/* ---- NULL context ------------------------------------------------------------ */
static void null_context(void **state) {
  (void)state;
  xpar_status E = XPAR_ERR_NULL_CONTEXT;
  xpar_backend b = XPAR_BACKEND_AUTO;
  xpar_offload o = XPAR_OFFLOAD_DEFAULT;
  size_t th = 0;
  xpar_decision d;
  void *dp = NULL;
  REFUSED(E, NULL, xpar_reduce(NULL, XPAR_DOUBLE, XPAR_SUM, g_in, 8, g_res));
  REFUSED(E, NULL, xpar_reduce_sum_wide(NULL, XPAR_DOUBLE, g_in, 8, g_res));
  REFUSED(E, NULL, xpar_scan(NULL, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_scan_init(NULL, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, &alpha, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_axpy(NULL, XPAR_DOUBLE, &alpha, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_add(NULL, XPAR_DOUBLE, g_in, g_in2, g_out, 8));
  REFUSED(E, NULL, xpar_fill(NULL, XPAR_DOUBLE, &alpha, g_out, 8));
  REFUSED(E, NULL, xpar_dot(NULL, XPAR_DOUBLE, g_in, g_in2, 8, g_res));
  REFUSED(E, NULL, xpar_reduce_nowait(NULL, XPAR_DOUBLE, XPAR_SUM, g_in, 8, g_res));
  REFUSED(E, NULL, xpar_scan_nowait(NULL, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_scan_init_nowait(NULL, XPAR_DOUBLE, XPAR_SUM, XPAR_EXCLUSIVE, &alpha, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_axpy_nowait(NULL, XPAR_DOUBLE, &alpha, g_in, g_out, 8));
  REFUSED(E, NULL, xpar_add_nowait(NULL, XPAR_DOUBLE, g_in, g_in2, g_out, 8));
  REFUSED(E, NULL, xpar_fill_nowait(NULL, XPAR_DOUBLE, &alpha, g_out, 8));
  REFUSED(E, NULL, xpar_dot_nowait(NULL, XPAR_DOUBLE, g_in, g_in2, 8, g_res));
  REFUSED(E, NULL, xpar_wait(NULL));
  REFUSED(E, NULL, xpar_context_set_backend(NULL, XPAR_BACKEND_CPU));
  REFUSED(E, NULL, xpar_context_get_backend(NULL, &b));
  REFUSED(E, NULL, xpar_context_set_offload(NULL, XPAR_OFFLOAD_DISABLED));
  REFUSED(E, NULL, xpar_context_get_offload(NULL, &o));
  REFUSED(E, NULL, xpar_context_set_threshold(NULL, XPAR_OP_SCAN, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, 5));
  REFUSED(E, NULL, xpar_context_get_threshold(NULL, XPAR_OP_SCAN, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, &th));
  REFUSED(E, NULL, xpar_context_set_num_threads(NULL, 2));
  REFUSED(E, NULL, xpar_context_set_verbose(NULL, 0));
  REFUSED(E, NULL, xpar_context_set_device(NULL, 0));
  REFUSED(E, NULL, xpar_context_set_stream(NULL, NULL));
  REFUSED(E, NULL, xpar_context_set_launch_shape(NULL, 1, 1));
  REFUSED(E, NULL, xpar_last_decision(NULL, &d));
  REFUSED(E, NULL, xpar_map(NULL, g_out, sizeof g_out, XPAR_MAP_TO));
  REFUSED(E, NULL, xpar_update(NULL, g_out, XPAR_UPDATE_TO_DEVICE));
  REFUSED(E, NULL, xpar_unmap(NULL, g_out, XPAR_UNMAP_FROM));
  REFUSED(E, NULL, xpar_mapped_device_ptr(NULL, g_out, &dp));
  xpar_memory_kind mk = XPAR_MEMORY_KIND_COUNT_;
  REFUSED(E, NULL, xpar_memory_query(NULL, g_out, sizeof g_out, &mk));
  assert_true(b == XPAR_BACKEND_AUTO && o == XPAR_OFFLOAD_DEFAULT && th == 0 && dp == NULL);
  assert_true(mk == XPAR_MEMORY_KIND_COUNT_);
  /* Destroying NULL is a no-op. */
  assert_int_equal(xpar_context_destroy(NULL), XPAR_OK);
}

/* ---- NULL pointers with n > 0; accepted with n == 0 ---------------------------- */
static void null_pointers(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  xpar_status E = XPAR_ERR_NULL_POINTER;
  const xpar_dtype D = XPAR_DOUBLE;
  REFUSED(E, c, xpar_reduce(c, D, XPAR_SUM, NULL, 8, g_res));
  REFUSED(E, c, xpar_reduce(c, D, XPAR_MIN, g_in, 8, NULL));
  REFUSED(E, c, xpar_reduce_sum_wide(c, D, NULL, 8, g_res));
  REFUSED(E, c, xpar_reduce_sum_wide(c, D, g_in, 8, NULL));
  REFUSED(E, c, xpar_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, NULL, g_out, 8));
  REFUSED(E, c, xpar_scan(c, D, XPAR_SUM, XPAR_EXCLUSIVE, g_in, NULL, 8));
  REFUSED(E, c, xpar_scan_init(c, D, XPAR_SUM, XPAR_INCLUSIVE, NULL, g_in, g_out, 8));
  if (!strstr(xpar_last_error_detail(), "init"))
    xt_failf("scan_init with a NULL init", "the detail does not name init: \"%s\"",
             xpar_last_error_detail());
  REFUSED(E, c, xpar_scan_init(c, D, XPAR_MIN, XPAR_EXCLUSIVE, NULL, g_in, g_out, 1));
  REFUSED(E, c, xpar_scan_init(c, D, XPAR_SUM, XPAR_INCLUSIVE, &alpha, NULL, g_out, 8));
  REFUSED(E, c, xpar_scan_init(c, D, XPAR_SUM, XPAR_INCLUSIVE, &alpha, g_in, NULL, 8));
  REFUSED(E, c, xpar_scan_init(c, D, XPAR_MAX, XPAR_INCLUSIVE, NULL, g_out, g_out, 8));
  REFUSED(E, c, xpar_axpy(c, D, NULL, g_in, g_out, 8));
  REFUSED(E, c, xpar_axpy(c, D, &alpha, NULL, g_out, 8));
  REFUSED(E, c, xpar_axpy(c, D, &alpha, g_in, NULL, 8));
  REFUSED(E, c, xpar_add(c, D, NULL, g_in2, g_out, 8));
  REFUSED(E, c, xpar_add(c, D, g_in, NULL, g_out, 8));
  REFUSED(E, c, xpar_add(c, D, g_in, g_in2, NULL, 8));
  REFUSED(E, c, xpar_fill(c, D, NULL, g_out, 8));
  REFUSED(E, c, xpar_fill(c, D, &alpha, NULL, 8));
  REFUSED(E, c, xpar_dot(c, D, NULL, g_in2, 8, g_res));
  REFUSED(E, c, xpar_dot(c, D, g_in, NULL, 8, g_res));
  REFUSED(E, c, xpar_dot(c, D, g_in, g_in2, 8, NULL));
  REFUSED(E, c, xpar_reduce_nowait(c, D, XPAR_SUM, NULL, 8, g_res));
  REFUSED(E, c, xpar_scan_nowait(c, D, XPAR_SUM, XPAR_INCLUSIVE, g_in, NULL, 8));
  REFUSED(E, c, xpar_scan_init_nowait(c, D, XPAR_SUM, XPAR_INCLUSIVE, NULL, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan_init_nowait(c, D, XPAR_SUM, XPAR_INCLUSIVE, &alpha, g_in, NULL, 8));
  REFUSED(E, c, xpar_dot_nowait(c, D, g_in, g_in2, 8, NULL));
  /* Out-parameters of the context functions. */
  REFUSED(E, NULL, xpar_context_create(NULL));
  REFUSED(E, c, xpar_context_get_backend(c, NULL));
  REFUSED(E, c, xpar_context_get_offload(c, NULL));
  REFUSED(E, c, xpar_context_get_threshold(c, XPAR_OP_DOT, D, XPAR_THRESHOLD_OPENMP, NULL));
  REFUSED(E, NULL, xpar_last_decision(c, NULL));
  REFUSED(E, NULL, xpar_device_query(NULL));
  xpar_memory_kind mk = XPAR_MEMORY_KIND_COUNT_;
  REFUSED(E, NULL, xpar_memory_query(c, NULL, 8, &mk));
  assert_true(mk == XPAR_MEMORY_KIND_COUNT_);
  REFUSED(E, NULL, xpar_memory_query(c, g_out, 8, NULL));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, NULL, xpar_memory_query(c, g_out, SIZE_MAX, &mk));
  assert_true(mk == XPAR_MEMORY_KIND_COUNT_);

  /* n == 0: arrays may be NULL. */
  ACCEPTED(xpar_reduce(c, D, XPAR_SUM, NULL, 0, g_res));
  ACCEPTED(xpar_reduce_sum_wide(c, D, NULL, 0, g_res));
  ACCEPTED(xpar_scan(c, D, XPAR_MAX, XPAR_EXCLUSIVE, NULL, NULL, 0));
  ACCEPTED(xpar_scan_init(c, D, XPAR_SUM, XPAR_EXCLUSIVE, &alpha, NULL, NULL, 0));
  ACCEPTED(xpar_add(c, D, NULL, NULL, NULL, 0));
  ACCEPTED(xpar_dot(c, D, NULL, NULL, 0, g_res));
}

/* The header: "n = 0 is valid for every operation and reads and writes no
 * element: array pointers (and axpy's alpha, fill's value, a scan's init) are
 * then not checked and may be NULL or unaligned.  A reduce or dot still writes
 * its result (the identity), so `result` must be valid even for n = 0." */
static void n0_null_scalars(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE;
  ACCEPTED(xpar_axpy(c, D, NULL, NULL, NULL, 0));
  ACCEPTED(xpar_fill(c, D, NULL, NULL, 0));
  ACCEPTED(xpar_scan_init(c, D, XPAR_SUM, XPAR_INCLUSIVE, NULL, NULL, NULL, 0));
  ACCEPTED(xpar_scan_init_nowait(c, D, XPAR_MIN, XPAR_EXCLUSIVE, NULL, NULL, NULL, 0));
  /* A scan of nothing writes nothing, not even the init (exclusive out[0]). */
  arm();
  ACCEPTED(xpar_scan_init(c, D, XPAR_SUM, XPAR_EXCLUSIVE, NULL, g_in, g_out, 0));
  ACCEPTED(xpar_scan_init(c, D, XPAR_MAX, XPAR_EXCLUSIVE, &alpha, g_in, g_out, 0));
  xt_check_bytes("scan_init with n = 0", "output array", g_out, g_snap[2], sizeof g_out);
  xt_check_bytes("scan_init with n = 0", "input", g_in, g_snap[0], sizeof g_in);
  /* n = 0 reads and writes no element: unaligned arrays are not refused either
   * (and nothing is written through them). */
  const void *odd_in = (const char *)g_in + 1;
  void *odd_out = (char *)g_out + 3;
  arm();
  ACCEPTED(xpar_reduce(c, D, XPAR_SUM, odd_in, 0, g_res));
  ACCEPTED(xpar_dot(c, D, odd_in, odd_in, 0, g_res));
  ACCEPTED(xpar_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, odd_in, odd_out, 0));
  ACCEPTED(xpar_scan_init(c, D, XPAR_SUM, XPAR_EXCLUSIVE, &alpha, odd_in, odd_out, 0));
  ACCEPTED(xpar_axpy(c, D, &alpha, odd_in, odd_out, 0));
  ACCEPTED(xpar_add(c, D, odd_in, odd_in, odd_out, 0));
  ACCEPTED(xpar_fill(c, D, &alpha, odd_out, 0));
  xt_check_bytes("n = 0 with unaligned arrays", "output array", g_out, g_snap[2], sizeof g_out);
  xt_check_bytes("n = 0 with unaligned arrays", "input", g_in, g_snap[0], sizeof g_in);
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce(c, D, XPAR_SUM, NULL, 0, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce(c, D, XPAR_MIN, g_in, 0, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_sum_wide(c, D, NULL, 0, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_dot(c, D, NULL, NULL, 0, NULL));
  /* ... and with a result, n = 0 writes the identity there. */
  double r = -1;
  ACCEPTED(xpar_reduce(c, D, XPAR_SUM, NULL, 0, &r));
  assert_true(r == 0.0);
  r = -1;
  ACCEPTED(xpar_dot(c, D, NULL, NULL, 0, &r));
  assert_true(r == 0.0);
}

/* The header: XPAR_TIER_NONE is "no call yet, or the last call failed before
 * running", and the record is "what happened in the last call".  After a
 * successful call (an add of 5 int32), a refused one must reset the record
 * and name itself: its op, dtype and n, and that it failed before running --
 * also as a context's first call. */
static void refusal_resets_decision(void **state) {
  (void)state;
  double v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r = 0, out[8];
  int32_t a[5] = {1, 2, 3, 4, 5}, z[5];
  struct {
    const char *what;
    int which;
    xpar_op op;
    xpar_dtype dtype;
    size_t n;
  } cases[] = {{"NULL pointer", 0, XPAR_OP_REDUCE, XPAR_DOUBLE, 8},
               {"invalid dtype", 1, XPAR_OP_REDUCE, (xpar_dtype)99, 8},
               {"invalid reduction", 2, XPAR_OP_REDUCE, XPAR_DOUBLE, 8},
               {"size overflow", 3, XPAR_OP_DOT, XPAR_DOUBLE, SIZE_MAX},
               {"overlap", 4, XPAR_OP_SCAN, XPAR_DOUBLE, 7},
               {"NULL init", 5, XPAR_OP_SCAN, XPAR_DOUBLE, 8},
               {"NULL value", 6, XPAR_OP_FILL, XPAR_FLOAT, 3},
               {"NULL alpha", 7, XPAR_OP_AXPY, XPAR_INT32, 4}};
  for (int first = 0; first < 2; first++)
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      xpar_context *c = g_ctx;
      xpar_decision d;
      if (first) {
        ACCEPTED(xpar_context_create(&c));
      } else {
        ACCEPTED(xpar_add(c, XPAR_INT32, a, a, z, 5));
        ACCEPTED(xpar_last_decision(c, &d));
        assert_true(d.tier != XPAR_TIER_NONE);
      }
      xpar_status s;
      switch (cases[k].which) {
        case 0: s = xpar_reduce(c, XPAR_DOUBLE, XPAR_SUM, NULL, 8, &r); break;
        case 1: s = xpar_reduce(c, (xpar_dtype)99, XPAR_SUM, v, 8, &r); break;
        case 2: s = xpar_reduce(c, XPAR_DOUBLE, (xpar_reduction)9, v, 8, &r); break;
        case 3: s = xpar_dot(c, XPAR_DOUBLE, v, v, SIZE_MAX, &r); break;
        case 4: s = xpar_scan(c, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, v, v + 1, 7); break;
        case 5: s = xpar_scan_init(c, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, NULL, v, out, 8); break;
        case 6: s = xpar_fill(c, XPAR_FLOAT, NULL, out, 3); break;
        default: s = xpar_axpy(c, XPAR_INT32, NULL, a, z, 4); break;
      }
      assert_true(s != XPAR_OK);
      ACCEPTED(xpar_last_decision(c, &d));
      char label[96];
      snprintf(label, sizeof label, "%s (%s)", cases[k].what,
               first ? "the context's first call" : "after an add");
      if (d.tier != XPAR_TIER_NONE || d.op != cases[k].op || d.dtype != cases[k].dtype ||
          d.n != cases[k].n || strcmp(d.reason, "the last call failed before running") != 0)
        xt_failf(label, "after a refused call (%s) the decision record says op %d, dtype %d, "
                 "n %zu, tier %s (reason \"%s\"); expected op %d, dtype %d, n %zu, tier none, "
                 "\"the last call failed before running\"", xpar_status_name(s), (int)d.op,
                 (int)d.dtype, d.n, xpar_tier_name(d.tier), d.reason, (int)cases[k].op,
                 (int)cases[k].dtype, cases[k].n);
      if (first) xpar_context_destroy(c);
    }
}

/* ---- unknown enum values ------------------------------------------------------- */
static void invalid_enums(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  xpar_status E = XPAR_ERR_INVALID_ENUM;
  const xpar_dtype bad_dtypes[] = {(xpar_dtype)99, (xpar_dtype)-1, XPAR_DTYPE_COUNT_};
  for (size_t i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; i++) {
    xpar_dtype B = bad_dtypes[i];
    size_t th = 77;
    REFUSED(E, c, xpar_reduce(c, B, XPAR_SUM, g_in, 8, g_res));
    REFUSED(E, c, xpar_reduce_sum_wide(c, B, g_in, 8, g_res));
    REFUSED(E, c, xpar_scan(c, B, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, 8));
    REFUSED(E, c, xpar_scan_init(c, B, XPAR_SUM, XPAR_INCLUSIVE, &alpha, g_in, g_out, 8));
    REFUSED(E, c, xpar_axpy(c, B, &alpha, g_in, g_out, 8));
    REFUSED(E, c, xpar_add(c, B, g_in, g_in2, g_out, 8));
    REFUSED(E, c, xpar_fill(c, B, &alpha, g_out, 8));
    REFUSED(E, c, xpar_dot(c, B, g_in, g_in2, 8, g_res));
    REFUSED(E, c, xpar_reduce(c, B, XPAR_SUM, g_in, 0, g_res)); /* n == 0 too */
    REFUSED(E, c, xpar_context_set_threshold(c, XPAR_OP_SCAN, B, XPAR_THRESHOLD_OPENMP, 5));
    REFUSED(E, c, xpar_context_get_threshold(c, XPAR_OP_SCAN, B, XPAR_THRESHOLD_OPENMP, &th));
    assert_int_equal(th, 77);
  }
  REFUSED(E, c, xpar_reduce(c, XPAR_INT32, (xpar_reduction)3, g_in, 8, g_res));
  REFUSED(E, c, xpar_reduce(c, XPAR_INT32, (xpar_reduction)-1, g_in, 8, g_res));
  REFUSED(E, c, xpar_scan(c, XPAR_INT32, (xpar_reduction)99, XPAR_INCLUSIVE, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)2, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)-1, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan_init(c, XPAR_INT32, (xpar_reduction)3, XPAR_INCLUSIVE, &alpha, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan_init(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)2, &alpha, g_in, g_out, 8));
  /* The enum is checked before the pointers: a NULL init does not hide it. */
  REFUSED(E, c, xpar_scan_init(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)7, NULL, g_in, g_out, 8));
  REFUSED(E, c, xpar_reduce_nowait(c, XPAR_INT32, (xpar_reduction)7, g_in, 8, g_res));
  REFUSED(E, c, xpar_scan_nowait(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)5, g_in, g_out, 8));
  REFUSED(E, c, xpar_scan_init_nowait(c, XPAR_INT32, XPAR_SUM, (xpar_scan_kind)5, &alpha, g_in, g_out, 8));

  /* Settings: refused, and the setting keeps its value. */
  xpar_backend b;
  xpar_offload o;
  size_t th = 0;
  ACCEPTED(xpar_context_set_backend(c, XPAR_BACKEND_CPU_SERIAL));
  REFUSED(E, NULL, xpar_context_set_backend(c, (xpar_backend)99));
  REFUSED(E, NULL, xpar_context_set_backend(c, XPAR_BACKEND_COUNT_));
  ACCEPTED(xpar_context_get_backend(c, &b));
  assert_int_equal(b, XPAR_BACKEND_CPU_SERIAL);
  ACCEPTED(xpar_context_set_backend(c, XPAR_BACKEND_AUTO));
  ACCEPTED(xpar_context_set_offload(c, XPAR_OFFLOAD_DISABLED));
  REFUSED(E, NULL, xpar_context_set_offload(c, (xpar_offload)99));
  REFUSED(E, NULL, xpar_context_set_offload(c, (xpar_offload)-1));
  ACCEPTED(xpar_context_get_offload(c, &o));
  assert_int_equal(o, XPAR_OFFLOAD_DISABLED);
  ACCEPTED(xpar_context_set_offload(c, XPAR_OFFLOAD_DEFAULT));
  ACCEPTED(xpar_context_set_threshold(c, XPAR_OP_ADD, XPAR_INT64, XPAR_THRESHOLD_OPENMP, 12345));
  REFUSED(E, NULL, xpar_context_set_threshold(c, (xpar_op)99, XPAR_INT64, XPAR_THRESHOLD_OPENMP, 1));
  REFUSED(E, NULL, xpar_context_set_threshold(c, XPAR_OP_COUNT_, XPAR_INT64, XPAR_THRESHOLD_OPENMP, 1));
  REFUSED(E, NULL, xpar_context_set_threshold(c, XPAR_OP_ADD, XPAR_INT64, (xpar_threshold)99, 1));
  REFUSED(E, NULL, xpar_context_set_threshold(c, XPAR_OP_ADD, XPAR_INT64, XPAR_THRESHOLD_COUNT_, 1));
  REFUSED(E, NULL, xpar_context_get_threshold(c, (xpar_op)99, XPAR_INT64, XPAR_THRESHOLD_OPENMP, &th));
  REFUSED(E, NULL, xpar_context_get_threshold(c, XPAR_OP_ADD, XPAR_INT64, (xpar_threshold)-1, &th));
  ACCEPTED(xpar_context_get_threshold(c, XPAR_OP_ADD, XPAR_INT64, XPAR_THRESHOLD_OPENMP, &th));
  assert_int_equal(th, 12345);
  /* Mapping enums: an argument error comes before any device question. */
  REFUSED(E, NULL, xpar_map(c, g_out, sizeof g_out, (xpar_map_kind)99));
  REFUSED(E, NULL, xpar_update(c, g_out, (xpar_update_dir)99));
  REFUSED(E, NULL, xpar_unmap(c, g_out, (xpar_unmap_kind)99));
}

/* ---- n * sizeof(type) overflowing size_t ------------------------------------------ */
static void size_overflow(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  xpar_status E = XPAR_ERR_SIZE_OVERFLOW;
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype D = xt_dtypes[di];
    size_t sz = xt_size(D);
    const size_t ns[] = {SIZE_MAX / sz + 1, SIZE_MAX, SIZE_MAX / 2 + 1};
    for (size_t k = 0; k < 3; k++) {
      size_t n = ns[k];
      char what[96];
      snprintf(what, sizeof what, "%s n=%zu", xt_dname(D), n);
      print_message("  size overflow: %s\n", what);
      REFUSED(E, c, xpar_reduce(c, D, XPAR_SUM, g_in, n, g_res));
      REFUSED(E, c, xpar_reduce(c, D, XPAR_MAX, g_in, n, g_res));
      REFUSED(E, c, xpar_reduce_sum_wide(c, D, g_in, n, g_res));
      REFUSED(E, c, xpar_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, n));
      REFUSED(E, c, xpar_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, g_out, g_out, n));
      REFUSED(E, c, xpar_scan_init(c, D, XPAR_SUM, XPAR_INCLUSIVE, &alpha, g_in, g_out, n));
      REFUSED(E, c, xpar_axpy(c, D, &alpha, g_in, g_out, n));
      REFUSED(E, c, xpar_add(c, D, g_in, g_in2, g_out, n));
      REFUSED(E, c, xpar_fill(c, D, &alpha, g_out, n));
      REFUSED(E, c, xpar_dot(c, D, g_in, g_in2, n, g_res));
    }
  }
  /* The largest n whose byte count fits is not an overflow (the call may
   * then fail otherwise, but not with SIZE_OVERFLOW): not run, it would read
   * past the buffers.  The detail names n. */
  arm();
  xpar_status s = xpar_reduce(c, XPAR_DOUBLE, XPAR_SUM, g_in, SIZE_MAX / 8 + 1, g_res);
  assert_int_equal(s, E);
  char nbuf[32];
  snprintf(nbuf, sizeof nbuf, "%zu", SIZE_MAX / 8 + 1);
  if (!strstr(xpar_last_error_detail(), nbuf))
    print_message("  note: overflow detail does not name n: \"%s\"\n", xpar_last_error_detail());
}

/* ---- partial overlap of input and output ------------------------------------------- */
static void overlap(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  xpar_status E = XPAR_ERR_OVERLAP;
  const size_t n = 16;
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype D = xt_dtypes[di];
    size_t sz = xt_size(D);
    char *in = (char *)g_out; /* the arrays all live in g_out: all must stay poisoned */
    unsigned char a8[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    const ptrdiff_t shifts[] = {1, -1, (ptrdiff_t)n - 1, -((ptrdiff_t)n - 1)};
    for (size_t k = 0; k < 4; k++) {
      char *base = in + 2 * n * sz / 2; /* room on both sides */
      char *other = base + shifts[k] * (ptrdiff_t)sz;
      print_message("  overlap: %s shift %td\n", xt_dname(D), shifts[k]);
      REFUSED(E, c, xpar_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, base, other, n));
      REFUSED(E, c, xpar_scan(c, D, XPAR_MIN, XPAR_EXCLUSIVE, base, other, n));
      REFUSED(E, c, xpar_axpy(c, D, a8, base, other, n));
      REFUSED(E, c, xpar_add(c, D, base, g_in2, other, n));
      REFUSED(E, c, xpar_add(c, D, g_in2, base, other, n));
      REFUSED(E, c, xpar_scan_nowait(c, D, XPAR_SUM, XPAR_INCLUSIVE, base, other, n));
      REFUSED(E, c, xpar_scan_init(c, D, XPAR_MAX, XPAR_INCLUSIVE, a8, base, other, n));
      REFUSED(E, c, xpar_scan_init_nowait(c, D, XPAR_SUM, XPAR_EXCLUSIVE, a8, base, other, n));
      REFUSED(E, c, xpar_axpy_nowait(c, D, a8, base, other, n));
      REFUSED(E, c, xpar_add_nowait(c, D, base, g_in2, other, n));
    }
  }
  /* Adjacent ranges do not overlap, and exact aliasing is allowed where
   * documented: in place scan, axpy with x == y, add with z == x or z == y. */
  double buf[64];
  for (int i = 0; i < 64; i++) buf[i] = i;
  ACCEPTED(xpar_scan(c, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, buf, buf + 16, 16));
  ACCEPTED(xpar_scan(c, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, buf + 16, buf, 16));
  ACCEPTED(xpar_scan(c, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, buf, buf, 16));
  ACCEPTED(xpar_scan_init(c, XPAR_DOUBLE, XPAR_SUM, XPAR_EXCLUSIVE, &alpha, buf, buf, 16));
  ACCEPTED(xpar_scan_init(c, XPAR_DOUBLE, XPAR_MIN, XPAR_INCLUSIVE, &alpha, buf + 16, buf, 16));
  ACCEPTED(xpar_axpy(c, XPAR_DOUBLE, &alpha, buf, buf, 16));
  ACCEPTED(xpar_add(c, XPAR_DOUBLE, buf, buf + 32, buf, 16));
  ACCEPTED(xpar_add(c, XPAR_DOUBLE, buf, buf + 32, buf + 32, 16));
  ACCEPTED(xpar_add(c, XPAR_DOUBLE, buf, buf + 16, buf + 32, 16));
}

/* ---- sort: every refusal of xpar_sort, xpar_sort_pairs, xpar_argsort -------------- */
static void sort_refusals(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE, I = XPAR_INT32;
  const xpar_sort_order A = XPAR_ASCENDING;
  char *o = (char *)g_out; /* outputs and overlapping inputs live in g_out: all stay poisoned */
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_sort(NULL, D, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_sort_nowait(NULL, D, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_sort_pairs(NULL, D, D, A, g_in, g_in2, g_out, o + 256, 8));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_argsort(NULL, D, I, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_argsort_nowait(NULL, D, I, A, g_in, g_out, 8));
  /* NULL arrays with n > 0 */
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort(c, D, A, NULL, g_out, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort(c, D, A, g_in, NULL, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort_pairs(c, D, D, A, NULL, g_in2, g_out, o + 256, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort_pairs(c, D, D, A, g_in, NULL, g_out, o + 256, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort_pairs(c, D, D, A, g_in, g_in2, NULL, o + 256, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_sort_pairs(c, D, D, A, g_in, g_in2, g_out, NULL, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_argsort(c, D, I, A, NULL, g_out, 8));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_argsort(c, D, I, A, g_in, NULL, 8));
  /* unknown enums, and index dtypes argsort does not take */
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_sort(c, (xpar_dtype)99, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_sort(c, D, (xpar_sort_order)2, g_in, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_sort(c, D, (xpar_sort_order)-1, g_in, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ENUM, c,
          xpar_sort_pairs(c, D, (xpar_dtype)-1, A, g_in, g_in2, g_out, o + 256, 8));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_argsort(c, D, (xpar_dtype)99, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argsort(c, D, XPAR_DOUBLE, A, g_in, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argsort(c, D, XPAR_UINT32, A, g_in, g_out, 8));
  /* more keys than int32 indices can number: refused before any array is read */
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c,
          xpar_argsort(c, XPAR_INT32, I, A, g_in, g_out, (size_t)INT32_MAX + 1));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_sort(c, D, A, g_in, g_out, SIZE_MAX));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c,
          xpar_sort_pairs(c, XPAR_INT32, D, A, g_in, g_in2, g_out, o + 256, SIZE_MAX / 6));
  /* misaligned arrays */
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_sort(c, D, A, (char *)g_in + 4, g_out, 8));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_sort(c, D, A, g_in, o + 4, 8));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c,
          xpar_sort_pairs(c, XPAR_INT32, D, A, g_in, g_in2, g_out, o + 260, 8));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c,
          xpar_argsort(c, XPAR_INT32, XPAR_INT64, A, g_in, o + 4, 8));
  /* overlaps: partial in/out; keys with values; argsort's keys with its indices */
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort(c, D, A, o, o + 8, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_nowait(c, D, A, o + 8, o, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, g_in, g_in2, o, o + 56, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, g_in, g_in, g_out, o + 256, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, o, o + 64, o, o + 56, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, o, g_in2, o + 128, o + 32, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, g_in, o + 128, o + 120, o + 256, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, D, A, g_in, o, o + 256, o + 8, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_sort_pairs(c, D, XPAR_INT32, A, o, o + 60, o, o + 60, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argsort(c, D, XPAR_INT64, A, o, o + 8, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argsort(c, D, XPAR_INT64, A, o, o, 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argsort_nowait(c, D, I, A, o + 16, o, 8));
  /* n = 0: anything goes, nothing is written */
  arm();
  ACCEPTED(xpar_sort(c, D, A, NULL, NULL, 0));
  ACCEPTED(xpar_sort_pairs(c, D, I, XPAR_DESCENDING, NULL, NULL, NULL, NULL, 0));
  ACCEPTED(xpar_argsort(c, D, XPAR_INT64, A, NULL, NULL, 0));
  ACCEPTED(xpar_sort(c, D, A, (char *)g_in + 1, o + 3, 0));
  xt_check_bytes("sort with n = 0", "output array", g_out, g_snap[2], sizeof g_out);
  /* exact aliasing where documented: in place keys and values */
  double k[16], v[16];
  for (int i = 0; i < 16; i++) k[i] = 16 - i, v[i] = i;
  ACCEPTED(xpar_sort_pairs(c, D, D, A, k, v, k, v, 16));
  assert_true(k[0] == 1 && v[0] == 15 && k[15] == 16 && v[15] == 0);
  ACCEPTED(xpar_sort(c, D, XPAR_DESCENDING, k, k, 16));
  assert_true(k[0] == 16 && k[15] == 1);
}

/* ---- argmin / argmax and the segmented ops: every refusal ------------------------ */
static void segmented_refusals(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE;
  char *o = (char *)g_out; /* outputs and overlapping inputs live in g_out: all stay poisoned */
  int64_t *ix = (int64_t *)g_res + 1; /* argmin's index lives in g_res: stays poisoned */
  const int32_t off32[4] = {0, 2, 5, 8};
  const int64_t off64[4] = {0, 2, 5, 8};
  const int32_t dec32[4] = {0, 5, 2, 8};   /* decreasing: checked by the backend */
  const int64_t past64[4] = {0, 2, 5, 70}; /* past n */
  const int64_t neg64[4] = {-3, 2, 5, 8};  /* negative */
  /* argmin / argmax */
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_argmin(NULL, D, g_in, 8, g_res, ix));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_argmax_nowait(NULL, D, g_in, 8, g_res, ix));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argmin(c, D, g_in, 0, g_res, ix));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argmax(c, D, NULL, 0, NULL, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_argmin(c, D, NULL, 8, g_res, ix));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_argmin(c, D, g_in, 8, NULL, ix));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_argmax(c, D, g_in, 8, g_res, NULL));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_argmin(c, (xpar_dtype)77, g_in, 8, g_res, ix));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_argmin(c, D, g_in, SIZE_MAX, g_res, ix));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argmin(c, D, (char *)g_in + 4, 8, g_res, ix));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argmin(c, D, g_in, 8, (char *)g_res + 4, ix));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_argmax(c, D, g_in, 8, g_res, (int64_t *)((char *)g_res + 12)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argmin(c, D, (const double *)o, 8, o + 16, ix));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argmax(c, D, (const double *)o, 8, g_res, (int64_t *)(o + 8)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_argmin(c, D, g_in, 8, g_res, (int64_t *)g_res));
  /* segmented reduce */
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_segmented_reduce(NULL, D, XPAR_SUM, g_in, 8, off32, XPAR_INT32, 3, g_out));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, NULL, XPAR_INT32, 3, g_out));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_segmented_reduce(c, D, XPAR_SUM, NULL, 8, off32, XPAR_INT32, 3, g_out));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, off32, XPAR_INT32, 3, NULL));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_segmented_reduce(c, D, (xpar_reduction)9, g_in, 8, off32, XPAR_INT32, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, off32, (xpar_dtype)77, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, off32, XPAR_UINT32, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, dec32, XPAR_INT32, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, past64, XPAR_INT64, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_MAX, g_in, 8, neg64, XPAR_INT64, 3, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, (const char *)off64 + 4, XPAR_INT64, 2, g_out));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, off32, XPAR_INT32, 3, o + 4));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, off32, XPAR_INT32, SIZE_MAX, g_out));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_segmented_reduce_fixed(c, D, XPAR_SUM, g_in, SIZE_MAX / 2, 4, g_out));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_reduce(c, D, XPAR_SUM, (const double *)o, 8, off32, XPAR_INT32, 3, o + 8));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_reduce(c, D, XPAR_SUM, g_in, 8, o, XPAR_INT32, 3, o + 8));
  /* segmented scan */
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_segmented_scan_nowait(NULL, D, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, 8, off32, XPAR_INT32, 3));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_segmented_scan(c, D, XPAR_SUM, (xpar_scan_kind)5, g_in, g_out, 8, off32, XPAR_INT32, 3));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_segmented_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, g_in, NULL, 8, off32, XPAR_INT32, 3));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, g_in, g_out, 8, dec32, XPAR_INT32, 3));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_scan_fixed(c, D, XPAR_MIN, XPAR_EXCLUSIVE, (const double *)o, o + 8, 4, 2));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, (const double *)o, o + 8, 8, off32, XPAR_INT32, 3));
  /* argmin / argmax per segment */
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_segmented_argmin(c, D, g_in, 8, off32, XPAR_INT32, 3, g_out, NULL));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_segmented_argmax(c, D, g_in, 8, dec32, XPAR_INT32, 3, g_out, ix));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_argmin(c, D, g_in, 8, off32, XPAR_INT32, 3, o, (int64_t *)(o + 16)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_segmented_argmax_nowait(c, D, (const double *)o, 8, off32, XPAR_INT32, 1, o + 8, ix));
  /* n_segments = 0: nothing read or written, NULL arrays allowed */
  ACCEPTED(xpar_segmented_reduce(c, D, XPAR_SUM, NULL, 0, NULL, XPAR_INT32, 0, NULL));
  ACCEPTED(xpar_segmented_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, NULL, NULL, 0, NULL, XPAR_INT64, 0));
  ACCEPTED(xpar_segmented_reduce_fixed(c, D, XPAR_MAX, NULL, 5, 0, NULL));
  /* in place where documented: the scan */
  double v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[3];
  ACCEPTED(xpar_segmented_scan(c, D, XPAR_SUM, XPAR_INCLUSIVE, v, v, 8, off64, XPAR_INT64, 3));
  assert_true(v[0] == 1 && v[1] == 3 && v[2] == 3 && v[4] == 12 && v[5] == 6 && v[7] == 21);
  ACCEPTED(xpar_segmented_reduce(c, D, XPAR_MAX, v, 8, off32, XPAR_INT32, 3, r));
  assert_true(r[0] == 3 && r[1] == 12 && r[2] == 21);
}

/* ---- compaction: every refusal of select, select_flagged, partition, unique -------- */
static void select_refusals(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE;
  char *o = (char *)g_out; /* outputs and overlapping inputs live in g_out: all stay poisoned */
  size_t *cnt = (size_t *)g_res; /* the count lives in g_res: it must stay poisoned too */
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_select(NULL, D, XPAR_LT, &alpha, NULL, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_unique_nowait(NULL, D, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_LT, NULL, NULL, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_IN_RANGE, &alpha, NULL, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_GT, &alpha, NULL, NULL, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_GT, &alpha, NULL, g_in, NULL, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_GT, &alpha, NULL, g_in, g_out, 8, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select(c, D, XPAR_GT, &alpha, NULL, g_in, g_out, 0, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_select_flagged(c, D, g_in, NULL, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_partition(c, D, XPAR_NE, NULL, NULL, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_unique(c, D, g_in, g_out, 8, NULL));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_select(c, D, (xpar_predicate)7, &alpha, &alpha, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_partition(c, D, (xpar_predicate)-1, &alpha, NULL, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_unique(c, (xpar_dtype)77, g_in, g_out, 8, cnt));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_unique(c, D, g_in, g_out, SIZE_MAX, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_select(c, D, XPAR_EQ, &alpha, NULL, (char *)g_in + 4, g_out, 8, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_unique(c, D, g_in, o + 4, 8, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_unique_nowait(c, D, g_in, g_out, 8, (size_t *)((char *)g_res + 4)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_select(c, D, XPAR_EQ, &alpha, NULL, o, o + 8, 8, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_unique(c, D, o + 8, o, 8, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_partition(c, D, XPAR_EQ, &alpha, NULL, o, o, 8, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_partition_nowait(c, D, XPAR_EQ, &alpha, NULL, o, o + 8, 8, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_select_flagged(c, D, g_in, (const unsigned char *)o + 3, o, 8, cnt));
  /* n = 0: NULL arrays and scalars; the count is written (0) */
  size_t k = 99;
  ACCEPTED(xpar_select(c, D, XPAR_IN_RANGE, NULL, NULL, NULL, NULL, 0, &k));
  assert_true(k == 0);
  k = 99;
  ACCEPTED(xpar_select_flagged(c, D, NULL, NULL, NULL, 0, &k));
  assert_true(k == 0);
  /* in place where documented */
  double v[8] = {3, 3, 1, 1, 1, 2, 3, 3};
  ACCEPTED(xpar_unique(c, D, v, v, 8, &k));
  assert_true(k == 4 && v[0] == 3 && v[1] == 1 && v[2] == 2 && v[3] == 3);
  ACCEPTED(xpar_select(c, D, XPAR_GE, &alpha, NULL, v, v, 4, &k));
  assert_true(k == 3 && v[0] == 3 && v[1] == 2 && v[2] == 3);
}

/* ---- runs: every refusal of run_length_encode and reduce_by_key ---------------------- */
static void runs_refusals(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE;
  char *o = (char *)g_out; /* outputs and overlapping inputs live in g_out: all stay poisoned */
  uint64_t *len = (uint64_t *)(o + 64);
  size_t *cnt = (size_t *)g_res;
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_run_length_encode(NULL, D, g_in, 8, o, len, cnt));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL,
          xpar_reduce_by_key_nowait(NULL, D, D, XPAR_SUM, g_in, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_run_length_encode(c, D, NULL, 8, o, len, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_run_length_encode(c, D, g_in, 8, NULL, len, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_run_length_encode(c, D, g_in, 8, o, NULL, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_run_length_encode(c, D, g_in, 8, o, len, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_run_length_encode(c, D, g_in, 0, o, len, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, NULL, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, NULL, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, g_in2, 8, NULL, o + 64, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, g_in2, 8, o, NULL, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, g_in2, 8, o, o + 64, NULL));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_run_length_encode(c, (xpar_dtype)77, g_in, 8, o, len, cnt));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_reduce_by_key(c, (xpar_dtype)-1, D, XPAR_SUM, g_in, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_reduce_by_key(c, D, (xpar_dtype)6, XPAR_SUM, g_in, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_reduce_by_key(c, D, D, (xpar_reduction)3, g_in, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_run_length_encode(c, D, g_in, SIZE_MAX, o, len, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_run_length_encode(c, D, (char *)g_in + 4, 8, o, len, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_run_length_encode(c, D, g_in, 8, o, (uint64_t *)(o + 68), cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_reduce_by_key(c, D, XPAR_FLOAT, XPAR_SUM, g_in, (char *)g_in2 + 2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_run_length_encode_nowait(c, D, g_in, 8, o, len, (size_t *)((char *)g_res + 4)));
  /* no in place, no overlap among the arrays */
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_run_length_encode(c, D, o, 8, o, len, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_run_length_encode(c, D, o + 8, 8, o, len, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_run_length_encode(c, D, g_in, 8, o + 8, (uint64_t *)(o + 64 - 8), cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_run_length_encode(c, D, o + 64, 8, o, len, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_run_length_encode(c, D, g_in, 8, o, len, (size_t *)(o + 8)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, o, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, o + 64, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, o + 8, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, o + 72, g_in2, 8, o, o + 64, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_reduce_by_key(c, D, D, XPAR_SUM, g_in, g_in2, 8, o, o + 32, cnt));
  /* n = 0: NULL arrays; the count is written (0) */
  size_t k = 99;
  ACCEPTED(xpar_run_length_encode(c, D, NULL, 0, NULL, NULL, &k));
  assert_true(k == 0);
  k = 99;
  ACCEPTED(xpar_reduce_by_key(c, D, D, XPAR_MAX, NULL, NULL, 0, NULL, NULL, &k));
  assert_true(k == 0);
  /* the runs of a small input */
  double keys[8] = {3, 3, -0.0, 0.0, 1, NAN, -NAN, 3}, vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double ko[8], vo[8];
  uint64_t lo[8];
  ACCEPTED(xpar_run_length_encode(c, D, keys, 8, ko, lo, &k));
  assert_true(k == 5 && ko[0] == 3 && lo[0] == 2 && ko[1] == 0 && signbit(ko[1]) && lo[1] == 2 &&
              ko[2] == 1 && lo[2] == 1 && isnan(ko[3]) && lo[3] == 2 && ko[4] == 3 && lo[4] == 1);
  ACCEPTED(xpar_reduce_by_key(c, D, D, XPAR_SUM, keys, vals, 8, ko, vo, &k));
  assert_true(k == 5 && vo[0] == 3 && vo[1] == 7 && vo[2] == 5 && vo[3] == 13 && vo[4] == 8);
}

/* ---- histogram: every refusal of histogram_even and histogram_range ---------------- */
static void histogram_refusals(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  const xpar_dtype D = XPAR_DOUBLE;
  char *o = (char *)g_out; /* counts live in g_out: they must stay poisoned */
  uint64_t *cnt = (uint64_t *)g_out;
  const double lo = -1.0, hi = 1.0, nan = NAN, inf = INFINITY;
  const double b[5] = {-1, 0, 0.5, 0.5, 1}, bdown[5] = {-1, 0, 0.5, 0.25, 1};
  const double bnan[5] = {-1, 0, NAN, 0.75, 1};
  const int64_t bi[4] = {1, 5, 3, 9};
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_histogram_even(NULL, D, g_in, 8, &lo, &hi, 4, cnt));
  REFUSED(XPAR_ERR_NULL_CONTEXT, NULL, xpar_histogram_range_nowait(NULL, D, g_in, 8, b, 4, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_even(c, D, g_in, 8, &lo, &hi, 4, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_even(c, D, g_in, 0, &lo, &hi, 4, NULL));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_even(c, D, NULL, 8, &lo, &hi, 4, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_even(c, D, g_in, 8, NULL, &hi, 4, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_even(c, D, g_in, 8, &lo, NULL, 4, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_range(c, D, g_in, 8, NULL, 4, cnt));
  REFUSED(XPAR_ERR_NULL_POINTER, c, xpar_histogram_range(c, D, g_in, 8, b, 4, NULL));
  REFUSED(XPAR_ERR_INVALID_ENUM, c, xpar_histogram_even(c, (xpar_dtype)77, g_in, 8, &lo, &hi, 4, cnt));
  REFUSED(XPAR_ERR_SIZE_OVERFLOW, c, xpar_histogram_even(c, D, g_in, SIZE_MAX, &lo, &hi, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &hi, 0, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_range(c, D, g_in, 8, b, 0, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &hi, XPAR_HISTOGRAM_MAX_BINS + 1, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_range(c, D, g_in, 8, b, SIZE_MAX, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &hi, &lo, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &lo, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &nan, &hi, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &nan, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &inf, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_range(c, D, g_in, 8, bdown, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_range(c, D, g_in, 8, bnan, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_range(c, XPAR_INT64, g_in, 8, bi, 3, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, (char *)g_in + 4, 8, &lo, &hi, 4, cnt));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, c, xpar_histogram_even(c, D, g_in, 8, &lo, &hi, 4, (uint64_t *)(o + 4)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_histogram_even(c, D, (double *)o, 8, &lo, &hi, 4, (uint64_t *)(o + 32)));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_histogram_range(c, D, (double *)(o + 64), 8, b, 16, cnt));
  REFUSED(XPAR_ERR_OVERLAP, c, xpar_histogram_range(c, D, g_in, 8, (double *)(o + 8), 4, cnt));
  /* n = 0: no sample read, NULL scalars; the counts are zeroed */
  uint64_t z[3] = {7, 7, 7};
  ACCEPTED(xpar_histogram_even(c, D, NULL, 0, NULL, NULL, 3, z));
  assert_true(z[0] == 0 && z[1] == 0 && z[2] == 0);
  z[1] = 7;
  ACCEPTED(xpar_histogram_range(c, D, NULL, 0, NULL, 3, z));
  assert_true(z[0] == 0 && z[1] == 0 && z[2] == 0);
  /* equal boundaries make an empty bin; hi is not counted (NumPy counts it) */
  const double x[8] = {-1, -0.5, 0, 0.5, 0.75, 1, NAN, -INFINITY};
  uint64_t h[4];
  ACCEPTED(xpar_histogram_range(c, D, x, 8, b, 4, h));
  assert_true(h[0] == 2 && h[1] == 1 && h[2] == 0 && h[3] == 2);
  ACCEPTED(xpar_histogram_even(c, D, x, 8, &lo, &hi, 4, h));
  assert_true(h[0] == 1 && h[1] == 1 && h[2] == 1 && h[3] == 2);
  /* a range that overflows int64 subtraction */
  const int64_t xl[5] = {INT64_MIN, -1, 0, INT64_MAX - 1, INT64_MAX};
  const int64_t l64 = INT64_MIN, h64 = INT64_MAX;
  ACCEPTED(xpar_histogram_even(c, XPAR_INT64, xl, 5, &l64, &h64, 2, h));
  assert_true(h[0] == 2 && h[1] == 2);
}

/* ---- context setters with bad values ----------------------------------------------- */
static void bad_settings(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, NULL, xpar_context_set_num_threads(c, -1));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, NULL, xpar_context_set_num_threads(c, INT32_MIN));
  REFUSED(XPAR_ERR_INVALID_ARGUMENT, NULL, xpar_context_set_device(c, -1));
  ACCEPTED(xpar_context_set_num_threads(c, 0));
  ACCEPTED(xpar_context_set_num_threads(c, 1));
  ACCEPTED(xpar_context_set_launch_shape(c, 0, 0));
  /* A refused setting leaves the context usable. */
  double v[3] = {1, 2, 3}, r = 0;
  ACCEPTED(xpar_reduce(c, XPAR_DOUBLE, XPAR_SUM, v, 3, &r));
  assert_true(r == 6.0);
  ACCEPTED(xpar_context_set_num_threads(c, 0));
}

/* ---- status names and strings ------------------------------------------------------- */
static void status_strings(void **state) {
  (void)state;
  int count = 0;
#define XT_CHECK_STATUS_(name, value, text)                                                    \
  do {                                                                                         \
    const char *s_ = xpar_status_string(XPAR_##name), *n_ = xpar_status_name(XPAR_##name);    \
    assert_non_null(s_);                                                                       \
    assert_non_null(n_);                                                                       \
    assert_string_equal(s_, text);                                                             \
    assert_string_equal(n_, #name);                                                            \
    assert_int_equal((int)XPAR_##name, value);                                                 \
    count++;                                                                                   \
  } while (0);
  XPAR_STATUS_MAP(XT_CHECK_STATUS_)
#undef XT_CHECK_STATUS_
  assert_true(count >= 20);
  const int unknown[] = {1, 99, 109, 199, 999, -1, 12345};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *s = xpar_status_string((xpar_status)unknown[i]);
    const char *n = xpar_status_name((xpar_status)unknown[i]);
    assert_non_null(s);
    assert_non_null(n);
    assert_true(*s != '\0');
    assert_true(*n != '\0');
  }
  /* Names of the other enums: never NULL, "?" style for unknown values. */
  assert_string_equal(xpar_dtype_name(XPAR_UINT32), "uint32");
  assert_non_null(xpar_dtype_name((xpar_dtype)99));
  assert_int_equal(xpar_dtype_size((xpar_dtype)99), 0);
  assert_int_equal(xpar_dtype_size((xpar_dtype)-1), 0);
  assert_int_equal(xpar_dtype_size(XPAR_DTYPE_COUNT_), 0);
  for (int d = 0; d < XT_NDTYPES; d++) {
    assert_string_equal(xpar_dtype_name(xt_dtypes[d]), xt_dname(xt_dtypes[d]));
    assert_int_equal(xpar_dtype_size(xt_dtypes[d]), xt_size(xt_dtypes[d]));
  }
  assert_string_equal(xpar_op_name(XPAR_OP_REDUCE), "reduce");
  assert_string_equal(xpar_backend_name(XPAR_BACKEND_CUDA_SERIAL), "cuda-serial");
  assert_string_equal(xpar_tier_name(XPAR_TIER_CPU_OPENMP), "cpu-openmp");
  assert_non_null(xpar_op_name((xpar_op)99));
  assert_non_null(xpar_backend_name((xpar_backend)99));
  assert_non_null(xpar_tier_name((xpar_tier)99));
}

/* ---- the detail message: cleared on success, per thread ----------------------------- */
static void detail_cleared(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  double v[4] = {1, 2, 3, 4}, r;
  assert_int_equal(xpar_reduce(c, XPAR_DOUBLE, XPAR_SUM, NULL, 4, &r), XPAR_ERR_NULL_POINTER);
  assert_true(xpar_last_error_detail()[0] != '\0');
  assert_int_equal(xpar_reduce(c, XPAR_DOUBLE, XPAR_SUM, v, 4, &r), XPAR_OK);
  assert_string_equal(xpar_last_error_detail(), "");
  /* A successful call on another function clears it too. */
  assert_int_equal(xpar_reduce(NULL, XPAR_DOUBLE, XPAR_SUM, v, 4, &r), XPAR_ERR_NULL_CONTEXT);
  assert_true(xpar_last_error_detail()[0] != '\0');
  xpar_backend b;
  assert_int_equal(xpar_context_get_backend(c, &b), XPAR_OK);
  assert_string_equal(xpar_last_error_detail(), "");
}

typedef struct {
  char detail[512];
  xpar_status st;
} thread_out;

static void *other_thread(void *arg) {
  thread_out *o = (thread_out *)arg;
  double r;
  o->st = xpar_dot(NULL, XPAR_FLOAT, NULL, NULL, 3, &r);
  snprintf(o->detail, sizeof o->detail, "%s", xpar_last_error_detail());
  return NULL;
}

static void detail_thread_local(void **state) {
  (void)state;
  xpar_context *c = g_ctx;
  double r = 0;
  assert_int_equal(xpar_reduce(c, (xpar_dtype)42, XPAR_SUM, &r, 1, &r), XPAR_ERR_INVALID_ENUM);
  char mine[512];
  snprintf(mine, sizeof mine, "%s", xpar_last_error_detail());
  assert_true(mine[0] != '\0');
  pthread_t th;
  thread_out o;
  memset(&o, 0, sizeof o);
  assert_int_equal(pthread_create(&th, NULL, other_thread, &o), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(o.st, XPAR_ERR_NULL_CONTEXT);
  assert_true(o.detail[0] != '\0');
  if (strcmp(mine, o.detail) == 0)
    xt_failf("detail_thread_local", "two different failures gave the same detail \"%s\"", mine);
  assert_string_equal(xpar_last_error_detail(), mine);
}

static void *fresh_thread(void *arg) {
  snprintf((char *)arg, 512, "%s", xpar_last_error_detail());
  return NULL;
}

static void detail_fresh_thread_empty(void **state) {
  (void)state;
  double r = 0;
  assert_int_equal(xpar_reduce(NULL, XPAR_DOUBLE, XPAR_SUM, &r, 1, &r), XPAR_ERR_NULL_CONTEXT);
  char seen[512] = "unset";
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fresh_thread, seen), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_string_equal(seen, "");
  assert_true(xpar_last_error_detail()[0] != '\0');
}

int main(int argc, char **argv) {
  xt_init("test_bad_input", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(null_context),        cmocka_unit_test(null_pointers),
      cmocka_unit_test(n0_null_scalars),     cmocka_unit_test(refusal_resets_decision),
      cmocka_unit_test(invalid_enums),       cmocka_unit_test(size_overflow),
      cmocka_unit_test(overlap),             cmocka_unit_test(bad_settings),
      cmocka_unit_test(status_strings),      cmocka_unit_test(detail_cleared),
      cmocka_unit_test(detail_thread_local), cmocka_unit_test(detail_fresh_thread_empty),
      cmocka_unit_test(sort_refusals),       cmocka_unit_test(select_refusals),
      cmocka_unit_test(runs_refusals),
      cmocka_unit_test(segmented_refusals),
      cmocka_unit_test(histogram_refusals),
  };
  return cmocka_run_group_tests_name("bad_input", tests, setup, teardown);
}
