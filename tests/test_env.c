/*
 * The environment, as read by xpar_context_create: every documented variable
 * with good values (checked through the context getters), bad values
 * (creation fails with XPAR_ERR_INVALID_ENV, *out set to NULL, the detail
 * naming the variable and value), read once at creation, and overridden by the
 * setters.  Every case starts and ends with no XPAR_* variable set.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "xt.h"


static void clear_env(void) { xt_unset_xpar_env(0); }

static int each_setup(void **state) {
  (void)state;
  clear_env();
  return 0;
}
static int each_teardown(void **state) {
  (void)state;
  clear_env();
  return 0;
}

static xpar_context *create_ok(const char *what) {
  xpar_context *ctx = NULL;
  xpar_status st = xpar_context_create(&ctx);
  if (st != XPAR_OK || !ctx)
    xt_failf(what, "xpar_context_create: %s (%s)", xpar_status_name(st), xpar_last_error_detail());
  return ctx;
}

/* Set one variable, create, expect refusal naming it. */
static void expect_bad(const char *var, const char *value) {
  char what[256];
  snprintf(what, sizeof what, "%s=\"%s\"", var, value);
  clear_env();
  assert_int_equal(setenv(var, value, 1), 0);
  xpar_context *ctx = (xpar_context *)(uintptr_t)0x1234; /* must come back NULL */
  xpar_status st = xpar_context_create(&ctx);
  if (st != XPAR_ERR_INVALID_ENV) {
    if (st == XPAR_OK) xpar_context_destroy(ctx);
    xt_failf(what, "xpar_context_create returned %s, expected ERR_INVALID_ENV", xpar_status_name(st));
  }
  if (ctx != NULL) xt_failf(what, "refused, but *out is %p, not NULL", (void *)ctx);
  const char *d = xpar_last_error_detail();
  if (!strstr(d, var)) xt_failf(what, "the detail \"%s\" does not name %s", d, var);
  /* The value too, where it has visible characters to find. */
  char trimmed[128];
  snprintf(trimmed, sizeof trimmed, "%s", value);
  size_t len = strlen(trimmed);
  while (len && trimmed[len - 1] == ' ') trimmed[--len] = '\0';
  if (len && !strstr(d, trimmed)) xt_failf(what, "the detail \"%s\" does not show the value", d);
  print_message("  refused %s: %s\n", what, d);
  clear_env();
}

/* ---- XPAR_BACKEND --------------------------------------------------------------- */
static void backend_values(void **state) {
  (void)state;
  static const struct { const char *s; xpar_backend b; } good[] = {
      {"auto", XPAR_BACKEND_AUTO},           {"cpu", XPAR_BACKEND_CPU},
      {"serial", XPAR_BACKEND_CPU_SERIAL},   {"cuda", XPAR_BACKEND_CUDA},
      {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    char what[64];
    snprintf(what, sizeof what, "XPAR_BACKEND=%s", good[i].s);
    setenv("XPAR_BACKEND", good[i].s, 1);
    xpar_context *ctx = create_ok(what);
    xpar_backend b = (xpar_backend)99;
    assert_int_equal(xpar_context_get_backend(ctx, &b), XPAR_OK);
    if (b != good[i].b) xt_failf(what, "get_backend gives %d, expected %d", (int)b, (int)good[i].b);
    xpar_context_destroy(ctx);
    clear_env();
  }
  /* Unset: AUTO. */
  xpar_context *ctx = create_ok("no XPAR_BACKEND");
  xpar_backend b = (xpar_backend)99;
  assert_int_equal(xpar_context_get_backend(ctx, &b), XPAR_OK);
  assert_int_equal(b, XPAR_BACKEND_AUTO);
  xpar_context_destroy(ctx);

  const char *bad[] = {"gpu", "", "cuda ", "CUDA ", " cpu", "cpu,cuda", "cuda-serial2", "12abc",
                       "-5", "automatic"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad("XPAR_BACKEND", bad[i]);
}

/* ---- XPAR_OFFLOAD ----------------------------------------------------------------- */
static void offload_values(void **state) {
  (void)state;
  static const struct { const char *s; xpar_offload o; } good[] = {
      {"default", XPAR_OFFLOAD_DEFAULT},
      {"disabled", XPAR_OFFLOAD_DISABLED},
      {"mandatory", XPAR_OFFLOAD_MANDATORY},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    char what[64];
    snprintf(what, sizeof what, "XPAR_OFFLOAD=%s", good[i].s);
    setenv("XPAR_OFFLOAD", good[i].s, 1);
    xpar_context *ctx = create_ok(what);
    xpar_offload o = (xpar_offload)99;
    assert_int_equal(xpar_context_get_offload(ctx, &o), XPAR_OK);
    if (o != good[i].o) xt_failf(what, "get_offload gives %d, expected %d", (int)o, (int)good[i].o);
    xpar_context_destroy(ctx);
    clear_env();
  }
  const char *bad[] = {"gpu", "", "mandatory ", "yes", "2", "-5", "12abc", "disable"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad("XPAR_OFFLOAD", bad[i]);
}

/* ---- XPAR_VERBOSE: 1 logs decisions to stderr, 0 does not --------------------------- */
static size_t stderr_bytes_of_a_call(void) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), 2) >= 0);
  xpar_context *ctx = NULL;
  xpar_status st = xpar_context_create(&ctx);
  double v[5] = {1, 2, 3, 4, 5}, r = 0;
  if (st == XPAR_OK) {
    xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL);
    xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, v, 5, &r);
    xpar_context_destroy(ctx);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  assert_int_equal(st, XPAR_OK);
  assert_true(r == 15.0);
  long size = (fseek(tmp, 0, SEEK_END) == 0) ? ftell(tmp) : -1;
  fclose(tmp);
  return size < 0 ? 0 : (size_t)size;
}

static void verbose_values(void **state) {
  (void)state;
  setenv("XPAR_VERBOSE", "1", 1);
  size_t on = stderr_bytes_of_a_call();
  clear_env();
  setenv("XPAR_VERBOSE", "0", 1);
  size_t off = stderr_bytes_of_a_call();
  clear_env();
  if (on == 0) xt_failf("XPAR_VERBOSE=1", "a call logged nothing to stderr");
  if (off != 0) xt_failf("XPAR_VERBOSE=0", "a call logged %zu bytes to stderr", off);
  const char *bad[] = {"2", "", "yes", "-1", "1 ", "01x", "true"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad("XPAR_VERBOSE", bad[i]);
}

/* ---- XPAR_DEVICE ---------------------------------------------------------------------- */
static void device_values(void **state) {
  (void)state;
  /* Creation does not touch CUDA, so a device ordinal is accepted here with or
   * without a GPU. */
  setenv("XPAR_DEVICE", "0", 1);
  xpar_context *ctx = create_ok("XPAR_DEVICE=0");
  xpar_context_destroy(ctx);
  clear_env();
  /* An ordinal is not a count: the thresholds' 2^k and never do not apply. */
  const char *bad[] = {"-1", "", "abc", "0x", "1.5", "12abc", "0 ", "99999999999999999999",
                       "2^1", "2^0", "never", "1025", "+1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad("XPAR_DEVICE", bad[i]);
}

/* ---- thresholds ------------------------------------------------------------------------ */
static const char *const op_env[XPAR_OP_COUNT_] = {"REDUCE", "SCAN", "AXPY", "ADD", "FILL", "DOT",
                                                     "SORT", "SELECT", "RUNS",
                                                     "ARGREDUCE", "SEGMENTED", "HISTOGRAM"};
static const char *const kind_env[XPAR_THRESHOLD_COUNT_] = {"OPENMP", "GPU", "GPU_PINNED",
                                                            "GPU_PAGEABLE", "GPU_DEVICE_ONLY"};

typedef struct {
  size_t v[XPAR_OP_COUNT_][XT_NDTYPES][XPAR_THRESHOLD_COUNT_];
} thresholds_t;

static void read_thresholds(xpar_context *ctx, thresholds_t *t) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < XT_NDTYPES; d++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++)
        assert_int_equal(xpar_context_get_threshold(ctx, (xpar_op)op, xt_dtypes[d],
                                                    (xpar_threshold)k, &t->v[op][d][k]),
                         XPAR_OK);
}

/* With env var NAME=VALUE set, every threshold equals the defaults except
 * (op, kind) pairs selected by `which` (op = -1: all ops), which equal want. */
static void expect_threshold(const char *name, const char *value, int which_op, int which_kind,
                             size_t want, const thresholds_t *defaults) {
  char what[160];
  snprintf(what, sizeof what, "%s=%s", name, value);
  clear_env();
  setenv(name, value, 1);
  xpar_context *ctx = create_ok(what);
  thresholds_t got;
  read_thresholds(ctx, &got);
  xpar_context_destroy(ctx);
  clear_env();
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int d = 0; d < XT_NDTYPES; d++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
        int hit = (which_op < 0 || which_op == op) && which_kind == k;
        size_t w = hit ? want : defaults->v[op][d][k];
        if (got.v[op][d][k] != w)
          xt_failf(what, "threshold of op %s, dtype %s, kind %s is %zu, expected %zu%s",
                   op_env[op], xt_dname(xt_dtypes[d]), kind_env[k], got.v[op][d][k], w,
                   hit ? "" : " (the default: this variable should not change it)");
      }
}

static void threshold_values(void **state) {
  (void)state;
  xpar_context *ctx = create_ok("defaults");
  thresholds_t defaults;
  read_thresholds(ctx, &defaults);
  xpar_context_destroy(ctx);

  /* The header's examples. */
  expect_threshold("XPAR_SCAN_GPU_THRESHOLD", "65536", XPAR_OP_SCAN, XPAR_THRESHOLD_GPU_DEVICE_DATA,
                   65536, &defaults);
  expect_threshold("XPAR_REDUCE_OPENMP_THRESHOLD", "2^10", XPAR_OP_REDUCE, XPAR_THRESHOLD_OPENMP,
                   1024, &defaults);
  expect_threshold("XPAR_ALL_OPENMP_THRESHOLD", "never", -1, XPAR_THRESHOLD_OPENMP, XPAR_NEVER,
                   &defaults);
  /* Every op x kind name maps to its own threshold, for every dtype. */
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
      char name[64], value[32];
      snprintf(name, sizeof name, "XPAR_%s_%s_THRESHOLD", op_env[op], kind_env[k]);
      size_t v = 1000 + 10 * (size_t)op + (size_t)k;
      snprintf(value, sizeof value, "%zu", v);
      expect_threshold(name, value, op, k, v, &defaults);
    }
  for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
    char name[64];
    snprintf(name, sizeof name, "XPAR_ALL_%s_THRESHOLD", kind_env[k]);
    expect_threshold(name, "2^20", -1, k, (size_t)1 << 20, &defaults);
  }
  /* Edges of the syntax. */
  expect_threshold("XPAR_DOT_OPENMP_THRESHOLD", "0", XPAR_OP_DOT, XPAR_THRESHOLD_OPENMP, 0, &defaults);
  expect_threshold("XPAR_DOT_OPENMP_THRESHOLD", "2^0", XPAR_OP_DOT, XPAR_THRESHOLD_OPENMP, 1, &defaults);
  expect_threshold("XPAR_FILL_GPU_PINNED_THRESHOLD", "2^63", XPAR_OP_FILL,
                   XPAR_THRESHOLD_GPU_PINNED_DATA, (size_t)1 << 63, &defaults);
  expect_threshold("XPAR_ADD_GPU_PAGEABLE_THRESHOLD", "18446744073709551615", XPAR_OP_ADD,
                   XPAR_THRESHOLD_GPU_PAGEABLE_DATA, SIZE_MAX, &defaults);

  const char *bad[] = {"12abc", "-5", "2^99", "2^64", "", "2^", "2^-1", "1e6", "never5",
                       "18446744073709551616", "3.5", "5 "};
  const char *names[] = {"XPAR_SCAN_GPU_THRESHOLD", "XPAR_REDUCE_OPENMP_THRESHOLD",
                         "XPAR_ALL_OPENMP_THRESHOLD", "XPAR_DOT_GPU_PAGEABLE_THRESHOLD"};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad(names[n], bad[i]);
}

/* ---- the split tier's settings: XPAR_<OP>_SPLIT_<MEMORY>="FROM,SHARE" ------------------ */
static void expect_split(xpar_context *ctx, xpar_op op, xpar_split_memory m, size_t from,
                         double share) {
  for (int t = 0; t < XPAR_DTYPE_COUNT_; t++) {
    size_t f = 0;
    double s = 0;
    assert_int_equal(xpar_context_get_split(ctx, op, (xpar_dtype)t, m, &f, &s), XPAR_OK);
    if (f != from || fabs(s - share) > 1e-6)
      xt_failf("split", "%s %s memory %d: (%zu, %g), expected (%zu, %g)", xpar_op_name(op),
               xpar_dtype_name((xpar_dtype)t), (int)m, f, s, from, share);
  }
}

static void split_values(void **state) {
  (void)state;
  xpar_context *ctx = create_ok("no split variables");
  size_t from0;
  double share0;
  assert_int_equal(xpar_context_get_split(ctx, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED, &from0,
                                          &share0),
                   XPAR_OK);
  xpar_context_destroy(ctx);
  setenv("XPAR_REDUCE_SPLIT_PINNED", "2^26,0.33", 1);
  setenv("XPAR_ALL_SPLIT_PAGEABLE", "never,0.1", 1);
  setenv("XPAR_HISTOGRAM_SPLIT_PAGEABLE", "1000,0.5", 1); /* over ALL */
  ctx = create_ok("split variables");
  expect_split(ctx, XPAR_OP_REDUCE, XPAR_SPLIT_PINNED, (size_t)1 << 26, 0.33);
  expect_split(ctx, XPAR_OP_DOT, XPAR_SPLIT_PINNED, from0, share0); /* untouched */
  const xpar_op split_ops[] = {XPAR_OP_REDUCE, XPAR_OP_SCAN, XPAR_OP_AXPY, XPAR_OP_ADD,
                               XPAR_OP_FILL,   XPAR_OP_DOT};
  for (int i = 0; i < 6; i++) expect_split(ctx, split_ops[i], XPAR_SPLIT_PAGEABLE, XPAR_NEVER, 0.1);
  expect_split(ctx, XPAR_OP_HISTOGRAM, XPAR_SPLIT_PAGEABLE, 1000, 0.5);
  /* The API overrides the environment. */
  assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_SPLIT_PINNED, 5,
                                          0.25),
                   XPAR_OK);
  size_t f;
  double s;
  assert_int_equal(xpar_context_get_split(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_SPLIT_PINNED, &f,
                                          &s),
                   XPAR_OK);
  assert_true(f == 5 && fabs(s - 0.25) < 1e-6);
  xpar_context_destroy(ctx);
  clear_env();
  /* An op without a split has no variable: not read. */
  setenv("XPAR_SORT_SPLIT_PINNED", "whatever", 1);
  ctx = create_ok("XPAR_SORT_SPLIT_PINNED ignored");
  xpar_context_destroy(ctx);
  const char *bad[] = {"2^26", "2^26,", ",0.5", "abc,0.5", "2^26,0", "2^26,1", "2^26,1.5",
                       "2^26,-0.2", "2^26,0.5x", "2^26,nan", "-1,0.5", "2^99,0.5", ""};
  const char *names[] = {"XPAR_REDUCE_SPLIT_PINNED", "XPAR_ALL_SPLIT_PAGEABLE",
                         "XPAR_HISTOGRAM_SPLIT_PINNED"};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad(names[n], bad[i]);
}

/* ---- read once, at creation; setters override ------------------------------------------ */
static void read_once_and_overridden(void **state) {
  (void)state;
  setenv("XPAR_BACKEND", "serial", 1);
  setenv("XPAR_OFFLOAD", "disabled", 1);
  setenv("XPAR_AXPY_OPENMP_THRESHOLD", "777", 1);
  xpar_context *ctx = create_ok("serial/disabled/777");
  /* Changing (even breaking) the environment later changes nothing. */
  setenv("XPAR_BACKEND", "gpu", 1);
  setenv("XPAR_AXPY_OPENMP_THRESHOLD", "12", 1);
  xpar_backend b;
  xpar_offload o;
  size_t th;
  assert_int_equal(xpar_context_get_backend(ctx, &b), XPAR_OK);
  assert_int_equal(b, XPAR_BACKEND_CPU_SERIAL);
  assert_int_equal(xpar_context_get_offload(ctx, &o), XPAR_OK);
  assert_int_equal(o, XPAR_OFFLOAD_DISABLED);
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_AXPY, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, &th),
                   XPAR_OK);
  assert_int_equal(th, 777);
  double v[3] = {1, 2, 3}, r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, v, 3, &r), XPAR_OK);
  assert_true(r == 6.0);
  /* Setters win over the environment the context was made with. */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  assert_int_equal(xpar_context_get_backend(ctx, &b), XPAR_OK);
  assert_int_equal(b, XPAR_BACKEND_CPU);
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DEFAULT), XPAR_OK);
  assert_int_equal(xpar_context_get_offload(ctx, &o), XPAR_OK);
  assert_int_equal(o, XPAR_OFFLOAD_DEFAULT);
  assert_int_equal(xpar_context_set_threshold(ctx, XPAR_OP_AXPY, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, 5),
                   XPAR_OK);
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_AXPY, XPAR_FLOAT, XPAR_THRESHOLD_OPENMP, &th),
                   XPAR_OK);
  assert_int_equal(th, 5);
  /* ... for that one dtype only. */
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_AXPY, XPAR_DOUBLE, XPAR_THRESHOLD_OPENMP, &th),
                   XPAR_OK);
  assert_int_equal(th, 777);
  xpar_context_destroy(ctx);
}

/* Several bad variables at once: still refused (which one is named is the
 * library's choice); and a bad value is never replaced by a default. */
static void several_bad(void **state) {
  (void)state;
  setenv("XPAR_BACKEND", "cpu", 1);
  setenv("XPAR_OFFLOAD", "sometimes", 1);
  setenv("XPAR_SCAN_OPENMP_THRESHOLD", "lots", 1);
  xpar_context *ctx = (xpar_context *)(uintptr_t)0x10;
  assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
  assert_null(ctx);
  const char *d = xpar_last_error_detail();
  if (!strstr(d, "XPAR_OFFLOAD") && !strstr(d, "XPAR_SCAN_OPENMP_THRESHOLD"))
    xt_failf("several bad", "the detail \"%s\" names neither bad variable", d);
}

int main(int argc, char **argv) {
  xt_init("test_env", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(backend_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(offload_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(verbose_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(device_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(threshold_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(split_values, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(read_once_and_overridden, each_setup, each_teardown),
      cmocka_unit_test_setup_teardown(several_bad, each_setup, each_teardown),
  };
  return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
