/*
 * Calibration profiles: save -> load round trip, use by dispatch (visible in
 * the decision record), precedence (profile < env < API), machine mismatch,
 * corrupt files (error naming the line), the default location, XPAR_PROFILE
 * naming a file not written yet (accepted where its directory exists) and
 * what xpar_profile_save writes (API and profile values, a written: line).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <xpar/xpar.h>

#include "kernels/test_kernels.h" /* xt_kernels */
#include "xt.h"

static char dir[256];

static const char *path_in_dir(const char *name) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  assert_true(xt_private_cache("profile", dir, sizeof dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return xt_remove_tree(dir);
}

/* Save thresholds from one context, load them in a fresh one through
 * XPAR_PROFILE: every value survives, and dispatch quotes "(profile)". */
static void round_trip(void **state) {
  (void)state;
  xpar_context *a, *b;
  assert_int_equal(xpar_context_create(&a), XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(a, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, 777),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(a, XPAR_OP_SCAN, XPAR_FLOAT,
                                              XPAR_THRESHOLD_GPU_PINNED_DATA, XPAR_NEVER),
                   XPAR_OK);
  const char *path = path_in_dir("sub/dir/profile.txt"); /* parents are created */
  assert_int_equal(xpar_profile_save(a, path), XPAR_OK);

  setenv("XPAR_PROFILE", path, 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
        size_t va, vb;
        assert_int_equal(xpar_context_get_threshold(a, op, t, k, &va), XPAR_OK);
        assert_int_equal(xpar_context_get_threshold(b, op, t, k, &vb), XPAR_OK);
        assert_true(va == vb);
      }

  /* Dispatch uses it: 1000 >= 777 runs OpenMP, and says where 777 came from. */
  int32_t in[1000];
  for (int i = 0; i < 1000; i++) in[i] = i - 300;
  int32_t sum = 0;
  assert_int_equal(xpar_context_set_backend(b, XPAR_BACKEND_CPU), XPAR_OK);
  assert_int_equal(xpar_reduce(b, XPAR_INT32, XPAR_SUM, in, 1000, &sum), XPAR_OK);
  assert_int_equal(sum, 1000 * 999 / 2 - 300 * 1000);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(b, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
  assert_non_null(strstr(d.reason, "openmp threshold 777 (profile)"));

  /* The API overrides the profile, and the record says so. */
  assert_int_equal(xpar_context_set_threshold(b, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, 5000),
                   XPAR_OK);
  assert_int_equal(xpar_reduce(b, XPAR_INT32, XPAR_SUM, in, 1000, &sum), XPAR_OK);
  assert_int_equal(xpar_last_decision(b, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_SERIAL);
  assert_non_null(strstr(d.reason, "openmp threshold 5000 (api)"));
  xpar_context_destroy(b);

  /* The environment overrides the profile. */
  setenv("XPAR_REDUCE_OPENMP_THRESHOLD", "2^5", 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  size_t v;
  assert_int_equal(xpar_context_get_threshold(b, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v == 32);
  assert_int_equal(xpar_context_get_threshold(b, XPAR_OP_SCAN, XPAR_FLOAT,
                                              XPAR_THRESHOLD_GPU_PINNED_DATA, &v),
                   XPAR_OK);
  assert_true(v == XPAR_NEVER);
  unsetenv("XPAR_REDUCE_OPENMP_THRESHOLD");
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(b);
  xpar_context_destroy(a);
}

static char *read_file(const char *path) {
  static char text[8192];
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = '\0';
  return text;
}

static size_t kernel_threshold(xpar_context *ctx, const xpar_kernel *k, xpar_threshold which) {
  size_t v = 0;
  assert_int_equal(xpar_context_get_kernel_threshold(ctx, k, which, &v), XPAR_OK);
  return v;
}

/* Kernel thresholds round-trip by kernel name: a kernel the loading context has met
 * (replaced), one it meets only after loading, one it never meets (written back by its
 * own save); the environment overrides the profile of creation, xpar_profile_load()
 * the environment. */
/* The split tier's settings survive a save and a load, quoted "(profile)". */
static void split_round_trip(void **state) {
  (void)state;
  xpar_context *a, *b;
  assert_int_equal(xpar_context_create(&a), XPAR_OK);
  assert_int_equal(xpar_context_set_split(a, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED,
                                          (size_t)1 << 26, 0.375),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_split(a, XPAR_OP_SCAN, XPAR_INT32, XPAR_SPLIT_PAGEABLE,
                                          XPAR_NEVER, 0.125),
                   XPAR_OK);
  const char *path = path_in_dir("split.txt");
  assert_int_equal(xpar_profile_save(a, path), XPAR_OK);
  setenv("XPAR_PROFILE", path, 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  unsetenv("XPAR_PROFILE");
  size_t from;
  double share;
  assert_int_equal(
      xpar_context_get_split(b, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED, &from, &share),
      XPAR_OK);
  assert_true(from == (size_t)1 << 26 && share == 0.375);
  assert_int_equal(
      xpar_context_get_split(b, XPAR_OP_SCAN, XPAR_INT32, XPAR_SPLIT_PAGEABLE, &from, &share),
      XPAR_OK);
  assert_true(from == XPAR_NEVER && share == 0.125);
  /* Not named: the built-in values. */
  assert_int_equal(
      xpar_context_get_split(b, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PAGEABLE, &from, &share),
      XPAR_OK);
  assert_true(from == XPAR_NEVER);
  xpar_context_destroy(a);
  xpar_context_destroy(b);
}

static void kernel_round_trip(void **state) {
  (void)state;
  xpar_context *a, *b;
  assert_int_equal(xpar_context_create(&a), XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(a, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, 4321),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(a, &xk_axpy_u32,
                                                     XPAR_THRESHOLD_GPU_DEVICE_DATA, XPAR_NEVER),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(a, &xk_poly_f64, XPAR_THRESHOLD_OPENMP, 99),
                   XPAR_OK);
  assert_int_equal(kernel_threshold(a, &xk_gather_i64, XPAR_THRESHOLD_OPENMP), 1u << 15);
  const char *path = path_in_dir("kernels/profile.txt");
  assert_int_equal(xpar_profile_save(a, path), XPAR_OK);
  const char *text = read_file(path);
  assert_non_null(strstr(text, "\nkernel xk_axpy_u32 openmp 4321\n"));
  assert_non_null(strstr(text, "\nkernel xk_axpy_u32 gpu never\n"));
  assert_non_null(strstr(text, "\nkernel xk_poly_f64 openmp 99\n"));
  assert_null(strstr(text, "xk_gather_i64")); /* defaults stay out */

  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, 7),
                   XPAR_OK);
  int applied = 0;
  assert_int_equal(xpar_profile_load(b, path, &applied), XPAR_OK);
  assert_int_equal(applied, 1);
  assert_int_equal(kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP), 4321); /* met */
  assert_true(kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA) == XPAR_NEVER);
  /* xk_poly_f64 not met yet: b's save keeps it, then b meets it */
  const char *path2 = path_in_dir("kernels/profile2.txt");
  assert_int_equal(xpar_profile_save(b, path2), XPAR_OK);
  text = read_file(path2);
  assert_non_null(strstr(text, "\nkernel xk_poly_f64 openmp 99\n"));
  assert_non_null(strstr(text, "\nkernel xk_axpy_u32 openmp 4321\n"));
  assert_int_equal(kernel_threshold(b, &xk_poly_f64, XPAR_THRESHOLD_OPENMP), 99);
  xpar_context_destroy(b);

  /* A context created with the profile: the environment overrides it. */
  setenv("XPAR_PROFILE", path, 1);
  setenv("XPAR_KERNEL_XK_POLY_F64_OPENMP_THRESHOLD", "2^5", 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  assert_int_equal(kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP), 4321);
  assert_int_equal(kernel_threshold(b, &xk_poly_f64, XPAR_THRESHOLD_OPENMP), 32);
  unsetenv("XPAR_KERNEL_XK_POLY_F64_OPENMP_THRESHOLD");
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(b);

  /* xpar_profile_load() after creation replaces what the environment set (xpar.h),
   * for a kernel met before the load and one met only after it alike; a second load
   * that does not name a kernel keeps what the first one said for it. */
  xpar_context *c;
  assert_int_equal(xpar_context_create(&c), XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(c, &xk_gather_i64, XPAR_THRESHOLD_OPENMP, 77),
                   XPAR_OK);
  char first[1024], path3[1024]; /* path_in_dir's buffer is reused */
  snprintf(first, sizeof first, "%s", path_in_dir("kernels/profile.txt"));
  snprintf(path3, sizeof path3, "%s", path_in_dir("kernels/profile3.txt"));
  assert_int_equal(xpar_profile_save(c, path3), XPAR_OK);
  xpar_context_destroy(c);
  setenv("XPAR_KERNEL_XK_POLY_F64_OPENMP_THRESHOLD", "999", 1);
  setenv("XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD", "999", 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  assert_int_equal(kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP), 999); /* met */
  assert_int_equal(xpar_profile_load(b, first, &applied), XPAR_OK);
  assert_int_equal(xpar_profile_load(b, path3, &applied), XPAR_OK);
  assert_int_equal(kernel_threshold(b, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP), 4321);
  assert_int_equal(kernel_threshold(b, &xk_poly_f64, XPAR_THRESHOLD_OPENMP), 99); /* met now */
  assert_int_equal(kernel_threshold(b, &xk_gather_i64, XPAR_THRESHOLD_OPENMP), 77);
  unsetenv("XPAR_KERNEL_XK_POLY_F64_OPENMP_THRESHOLD");
  unsetenv("XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD");
  xpar_context_destroy(b);
  xpar_context_destroy(a);
}

/* A kernel name of any length round-trips (C identifiers have no limit; a
 * save of 70 characters once wrote a file its own load refused, failing every
 * later xpar_context_create), and so does its environment variable; a name a
 * profile line cannot hold is refused by the save, which then writes nothing. */
static void kernel_long_name(void **state) {
  (void)state;
  char name[301];
  for (int i = 0; i < 300; i++) name[i] = "k_long_name_"[i % 12];
  name[300] = '\0';
  xpar_kernel longk = xk_square_cpu_only;
  longk.name = name;
  xpar_context *a, *b;
  assert_int_equal(xpar_context_create(&a), XPAR_OK);
  assert_int_equal(xpar_context_set_kernel_threshold(a, &longk, XPAR_THRESHOLD_OPENMP, 1234),
                   XPAR_OK);
  const char *path = path_in_dir("kernels/long.txt");
  assert_int_equal(xpar_profile_save(a, path), XPAR_OK);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  int applied = 0;
  assert_int_equal(xpar_profile_load(b, path, &applied), XPAR_OK);
  assert_int_equal(applied, 1);
  assert_int_equal(kernel_threshold(b, &longk, XPAR_THRESHOLD_OPENMP), 1234);
  xpar_context_destroy(b);
  /* Every context created later reads it; the kernel's variable, whole name upper case. */
  char var[400];
  snprintf(var, sizeof var, "XPAR_KERNEL_%s_GPU_THRESHOLD", name);
  for (char *c = var; *c; c++) *c = (char)toupper((unsigned char)*c);
  setenv("XPAR_PROFILE", path, 1);
  setenv(var, "2^9", 1);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  assert_int_equal(kernel_threshold(b, &longk, XPAR_THRESHOLD_OPENMP), 1234);
  assert_int_equal(kernel_threshold(b, &longk, XPAR_THRESHOLD_GPU_DEVICE_DATA), 512);
  unsetenv(var);
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(b);

  xpar_kernel blank = xk_square_cpu_only;
  blank.name = "two words";
  assert_int_equal(xpar_context_set_kernel_threshold(a, &blank, XPAR_THRESHOLD_OPENMP, 5), XPAR_OK);
  const char *path2 = path_in_dir("kernels/blank.txt");
  unlink(path2);
  assert_int_equal(xpar_profile_save(a, path2), XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "two words"));
  assert_int_equal(access(path2, F_OK), -1);
  xpar_context_destroy(a);
}

/* A profile written on another machine is ignored (with a notice). */
static void other_machine(void **state) {
  (void)state;
  const char *path = path_in_dir("other.txt");
  write_file(path,
             "xpar-profile 1\ncpu: Some Other CPU 9000\ncores: 4096\ngpu: none\n"
             "reduce int32 openmp 3\n");
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  int applied = 1;
  assert_int_equal(xpar_profile_load(ctx, path, &applied), XPAR_OK);
  assert_int_equal(applied, 0);
  size_t v;
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v != 3);
  xpar_context_destroy(ctx);

  setenv("XPAR_PROFILE", path, 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK); /* not an error */
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v != 3);
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(ctx);
}

/* Each corrupt file fails creation with XPAR_ERR_PROFILE and a detail that
 * names the file and, where there is one, the line. */
static void corrupt(void **state) {
  (void)state;
  static const struct {
    const char *text, *detail;
  } cases[] = {
      {"", "empty file"},
      {"# only a comment\n", "empty file"},
      {"xpar-profile 2\n", ":1: expected"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduc int32 openmp 1\n", ":5: unknown op"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int31 openmp 1\n", ":5: unknown dtype"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int32 opnemp 1\n", ":5: unknown threshold"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int32 openmp -1\n", ":5: \"-1\" is not"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int32 openmp 12abc\n", ":5:"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int32 openmp\n", ":5: expected"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nreduce int32 openmp 1 2\n", ":5: expected"},
      {"xpar-profile 1\ncpu: x\ncores: zero\ngpu: none\n", ":3: cores"},
      {"xpar-profile 1\ncpu: x\ncolour: blue\n", ":3: unknown key"},
      {"xpar-profile 1\ncpu: x\ngpu: none\n", "missing machine key"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ncores: 3\ngpu: none\n", ":4: \"cores\" given twice"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nscan int32 gpu 1\nscan int32 gpu 2\n",
       ":6: scan int32 gpu given twice"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nkernel saxpy opnemp 1\n",
       ":5: unknown threshold"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nkernel saxpy gpu lots\n", ":5: \"lots\" is not"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nkernel saxpy gpu 1\nkernel saxpy gpu 1\n",
       ":6: kernel saxpy gpu given twice"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nkernel saxpy gpu\n", ":5: expected"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit sort int32 pinned 1 0.5\n",
       ":5: \"sort\" has no split"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit dot int32 mapped 1 0.5\n",
       ":5: unknown split memory"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit dot int32 pinned 1 1.0\n",
       ":5: share \"1.0\""},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit dot int32 pinned x 0.5\n",
       ":5: \"x\" is not"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit dot int32 pinned 1 0.5\n"
       "split dot int32 pinned 2 0.5\n",
       ":6: split dot int32 pinned given twice"},
      {"xpar-profile 1\ncpu: x\ncores: 2\ngpu: none\nsplit dot int32 pinned 1\n", ":5: expected"},
  };
  const char *path = path_in_dir("corrupt.txt");
  setenv("XPAR_PROFILE", path, 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_file(path, cases[i].text);
    xpar_context *ctx = (xpar_context *)&ctx;
    xpar_status st = xpar_context_create(&ctx);
    if (st != XPAR_ERR_PROFILE || ctx != NULL || !strstr(xpar_last_error_detail(), cases[i].detail) ||
        !strstr(xpar_last_error_detail(), "corrupt.txt"))
      fail_msg("case %zu: status %s, detail \"%s\", wanted \"%s\"", i, xpar_status_name(st),
               xpar_last_error_detail(), cases[i].detail);
  }
  /* An empty name is a bad env value (missing files: missing_profile_*). */
  xpar_context *ctx;
  setenv("XPAR_PROFILE", "", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
  unsetenv("XPAR_PROFILE");
}

/* Creates a context with stderr sent to a file; returns how many lines of
 * what it printed contain `needle`.  The context is destroyed. */
static int create_counting_stderr(const char *needle) {
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0);
  const char *log = path_in_dir("stderr.txt");
  FILE *f = fopen(log, "w+");
  assert_non_null(f);
  assert_true(dup2(fileno(f), 2) >= 0);
  xpar_context *ctx = NULL;
  xpar_status st = xpar_context_create(&ctx);
  char detail[512];
  snprintf(detail, sizeof detail, "%s", xpar_last_error_detail());
  fflush(stderr);
  assert_true(dup2(saved, 2) >= 0);
  close(saved);
  if (st != XPAR_OK) fail_msg("xpar_context_create: %s: %s", xpar_status_name(st), detail);
  xpar_context_destroy(ctx);
  rewind(f);
  char line[1024];
  int count = 0;
  while (fgets(line, sizeof line, f)) count += strstr(line, needle) != NULL;
  fclose(f);
  unlink(log);
  return count;
}

/* Every threshold of a equals b's. */
static void assert_same_thresholds(xpar_context *a, xpar_context *b) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
        size_t va, vb;
        assert_int_equal(xpar_context_get_threshold(a, op, t, k, &va), XPAR_OK);
        assert_int_equal(xpar_context_get_threshold(b, op, t, k, &vb), XPAR_OK);
        if (va != vb) fail_msg("op %d dtype %d threshold %d: %zu != %zu", op, t, k, va, vb);
      }
}

/* Runs reduce int32 n = 1000 on the CPU backend; returns the decision's reason. */
static const char *reduce_reason(xpar_context *ctx) {
  static xpar_decision d;
  int32_t in[1000];
  for (int i = 0; i < 1000; i++) in[i] = i;
  int32_t sum = 0;
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, in, 1000, &sum), XPAR_OK);
  assert_int_equal(sum, 1000 * 999 / 2);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  return d.reason;
}

/* XPAR_PROFILE naming a file not written yet, in a directory that exists:
 * creation succeeds with the built-in thresholds (sources "default"), and
 * says so once per process on stderr, not once per context. */
static void missing_profile_in_existing_dir(void **state) {
  (void)state;
  char default_path[512];
  assert_int_equal(xpar_profile_default_path(default_path, sizeof default_path), XPAR_OK);
  assert_int_not_equal(access(default_path, F_OK), 0); /* the reference below is built-in */
  xpar_context *builtin, *ctx;
  assert_int_equal(xpar_context_create(&builtin), XPAR_OK);

  char path[512];
  snprintf(path, sizeof path, "%s", path_in_dir("not-yet.txt"));
  setenv("XPAR_PROFILE", path, 1);
  assert_int_equal(create_counting_stderr("not-yet.txt does not exist yet"), 1);
  assert_int_equal(create_counting_stderr("not-yet.txt"), 0);
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_string_equal(xpar_last_error_detail(), "");
  assert_same_thresholds(ctx, builtin);
  const char *reason = reduce_reason(ctx);
  if (!strstr(reason, "openmp threshold") || !strstr(reason, "(default)") ||
      strstr(reason, "(profile)"))
    fail_msg("decision record \"%s\": expected a default openmp threshold", reason);
  assert_int_not_equal(access(path, F_OK), 0); /* nothing was created */

  /* An explicit xpar_profile_load of a missing file is still an error. */
  assert_int_equal(xpar_profile_load(ctx, path, NULL), XPAR_ERR_PROFILE);
  assert_non_null(strstr(xpar_last_error_detail(), "not-yet.txt"));
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(ctx);
  xpar_context_destroy(builtin);
}

/* A missing directory is taken for a mistake: XPAR_ERR_PROFILE, naming the
 * file and the directory, and *out is NULL. */
static void missing_profile_dir(void **state) {
  (void)state;
  static const char *const names[] = {"no-such-dir/profile.txt", "no/such/dirs/profile.txt"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s", path_in_dir(names[i]));
    setenv("XPAR_PROFILE", path, 1);
    xpar_context *ctx = (xpar_context *)&ctx;
    xpar_status st = xpar_context_create(&ctx);
    const char *detail = xpar_last_error_detail();
    if (st != XPAR_ERR_PROFILE || ctx != NULL || !strstr(detail, path) ||
        !strstr(detail, "no directory"))
      fail_msg("%s: status %s, detail \"%s\"", names[i], xpar_status_name(st), detail);
  }
  unsetenv("XPAR_PROFILE");
}

static int count_lines_starting(const char *path, const char *prefix) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  int count = 0;
  while (fgets(line, sizeof line, f)) count += strncmp(line, prefix, strlen(prefix)) == 0;
  fclose(f);
  return count;
}

/* What `XPAR_PROFILE=new.txt xpar-bench calibrate` does: contexts created
 * with XPAR_PROFILE naming a file not written yet, thresholds set through
 * the API, saved to that path, loaded by the next context.  The profile
 * holds the thresholds set through the API and a "written:" line, but
 * neither built-in defaults nor environment values; the thresholds not in
 * it stay "(default)" in decision records. */
static void calibrate_into_xpar_profile(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s", path_in_dir("calibrated.txt"));
  setenv("XPAR_PROFILE", path, 1);
  setenv("XPAR_SCAN_OPENMP_THRESHOLD", "2^7", 1);
  xpar_context *cal, *builtin, *loaded;
  assert_int_equal(xpar_context_create(&cal), XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(cal, XPAR_OP_REDUCE, XPAR_INT32,
                                              XPAR_THRESHOLD_OPENMP, 640),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(cal, XPAR_OP_DOT, XPAR_FLOAT,
                                              XPAR_THRESHOLD_GPU_PAGEABLE_DATA, XPAR_NEVER),
                   XPAR_OK);
  assert_int_equal(xpar_profile_save(cal, getenv("XPAR_PROFILE")), XPAR_OK);
  unsetenv("XPAR_SCAN_OPENMP_THRESHOLD");

  assert_int_equal(count_lines_starting(path, "reduce int32 openmp 640\n"), 1);
  assert_int_equal(count_lines_starting(path, "dot float gpu_pageable never\n"), 1);
  assert_int_equal(count_lines_starting(path, "reduce "), 1);
  assert_int_equal(count_lines_starting(path, "dot "), 1);
  assert_int_equal(count_lines_starting(path, "scan "), 0);
  for (const char *const *op = (const char *const[]){"axpy ", "add ", "fill ", NULL}; *op; op++)
    assert_int_equal(count_lines_starting(path, *op), 0);
  /* "written: 2026-01-31T12:00:00Z by test_profile (xpar 0.1.0)" */
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512], when[64], by[64], tool[64];
  int written = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "written:", 8) == 0) {
      written++;
      int year, mon, day, h, m, sec;
      char z;
      assert_int_equal(sscanf(line, "written: %63s %63s %63s", when, by, tool), 3);
      assert_int_equal(sscanf(when, "%4d-%2d-%2dT%2d:%2d:%2d%c", &year, &mon, &day, &h, &m, &sec, &z), 7);
      assert_true(year >= 2024 && mon >= 1 && mon <= 12 && day >= 1 && day <= 31 && z == 'Z');
      assert_string_equal(by, "by");
      assert_string_equal(tool, "test_profile");
      assert_non_null(strstr(line, "(xpar 0.1.0)"));
    }
  fclose(f);
  assert_int_equal(written, 1);

  /* The next context loads it: the two values, the rest built-in. */
  unsetenv("XPAR_PROFILE");
  assert_int_equal(xpar_context_create(&builtin), XPAR_OK);
  setenv("XPAR_PROFILE", path, 1);
  assert_int_equal(xpar_context_create(&loaded), XPAR_OK);
  size_t v;
  assert_int_equal(xpar_context_set_threshold(builtin, XPAR_OP_REDUCE, XPAR_INT32,
                                              XPAR_THRESHOLD_OPENMP, 640),
                   XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(builtin, XPAR_OP_DOT, XPAR_FLOAT,
                                              XPAR_THRESHOLD_GPU_PAGEABLE_DATA, XPAR_NEVER),
                   XPAR_OK);
  assert_same_thresholds(loaded, builtin);
  assert_int_equal(xpar_context_get_threshold(loaded, XPAR_OP_REDUCE, XPAR_INT32,
                                              XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v == 640);
  const char *reason = reduce_reason(loaded);
  if (!strstr(reason, "openmp threshold 640 (profile)"))
    fail_msg("decision record \"%s\": expected the profile's 640", reason);

  /* Saving a context that loaded it writes the loaded values again. */
  char copy[512];
  snprintf(copy, sizeof copy, "%s", path_in_dir("copy.txt"));
  assert_int_equal(xpar_profile_save(loaded, copy), XPAR_OK);
  assert_int_equal(count_lines_starting(copy, "reduce int32 openmp 640\n"), 1);
  assert_int_equal(count_lines_starting(copy, "dot float gpu_pageable never\n"), 1);
  assert_int_equal(count_lines_starting(copy, "scan "), 0);
  unsetenv("XPAR_PROFILE");
  xpar_context_destroy(loaded);
  xpar_context_destroy(builtin);
  xpar_context_destroy(cal);
}

/* This machine's CPU key line ("cpu: ...") and core count, as a profile
 * written here has them. */
static void this_machine_key(char *cpu_line, size_t size, long *cores) {
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED), XPAR_OK);
  const char *path = path_in_dir("key.txt");
  assert_int_equal(xpar_profile_save(ctx, path), XPAR_OK);
  xpar_context_destroy(ctx);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "cpu:", 4) == 0) snprintf(cpu_line, size, "%s", line);
    if (strncmp(line, "cores:", 6) == 0) *cores = strtol(line + 6, NULL, 10);
  }
  fclose(f);
}

/* With XPAR_OFFLOAD=disabled the GPU key is not checked (and no CUDA call is
 * made): the environment's policy is read before the profile.  Comments may
 * be longer than any data line. */
static void offload_disabled_skips_gpu_key(void **state) {
  (void)state;
  char cpu_line[512], text[2048];
  long cores = 0;
  this_machine_key(cpu_line, sizeof cpu_line, &cores);
  char comment[700];
  memset(comment, 'x', sizeof comment - 1);
  comment[0] = '#';
  comment[sizeof comment - 1] = '\0';
  snprintf(text, sizeof text,
           "%s\nxpar-profile 1\n%scores: %ld\ngpu: Some GPU That Is Not Here\n"
           "reduce int32 openmp 123\n",
           comment, cpu_line, cores);
  const char *path = path_in_dir("gpu-key.txt");
  write_file(path, text);
  setenv("XPAR_PROFILE", path, 1);
  setenv("XPAR_OFFLOAD", "disabled", 1);
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  size_t v;
  assert_int_equal(xpar_context_get_threshold(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v == 123);
  xpar_context_destroy(ctx);
  unsetenv("XPAR_OFFLOAD");
  unsetenv("XPAR_PROFILE");
}

/* Without XPAR_PROFILE, the default location is used when the file exists. */
static void default_location(void **state) {
  (void)state;
  char path[512];
  assert_int_equal(xpar_profile_default_path(path, sizeof path), XPAR_OK);
  char want[512];
  snprintf(want, sizeof want, "%s/xpar/profile.txt", dir);
  assert_string_equal(path, want);
  char small[8];
  assert_int_equal(xpar_profile_default_path(small, sizeof small), XPAR_ERR_INVALID_ARGUMENT);

  xpar_context *a, *b;
  assert_int_equal(xpar_context_create(&a), XPAR_OK);
  assert_int_equal(xpar_context_set_threshold(a, XPAR_OP_DOT, XPAR_DOUBLE, XPAR_THRESHOLD_OPENMP, 4242),
                   XPAR_OK);
  assert_int_equal(xpar_profile_save(a, path), XPAR_OK);
  assert_int_equal(xpar_context_create(&b), XPAR_OK);
  size_t v;
  assert_int_equal(xpar_context_get_threshold(b, XPAR_OP_DOT, XPAR_DOUBLE, XPAR_THRESHOLD_OPENMP, &v),
                   XPAR_OK);
  assert_true(v == 4242);
  xpar_context_destroy(a);
  xpar_context_destroy(b);
  unlink(path);
}

int main(void) {
  setenv("XPAR_ADAPT", "off", 1); /* decisions checked against thresholds, whatever the load */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_profile_in_existing_dir), /* first: the notice is once per process */
      cmocka_unit_test(missing_profile_dir),
      cmocka_unit_test(calibrate_into_xpar_profile),
      cmocka_unit_test(round_trip),
      cmocka_unit_test(kernel_round_trip),
      cmocka_unit_test(split_round_trip),
      cmocka_unit_test(kernel_long_name),
      cmocka_unit_test(other_machine),
      cmocka_unit_test(corrupt),
      cmocka_unit_test(default_location),
      cmocka_unit_test(offload_disabled_skips_gpu_key),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
