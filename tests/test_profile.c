/*
 * Calibration profiles: save -> load round trip, use by dispatch (visible in
 * the decision record), precedence (profile < env < API), machine mismatch,
 * corrupt files (error naming the line), the default location.
 */
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
  snprintf(dir, sizeof dir, "/tmp/xpar-test-profile-XXXXXX");
  assert_non_null(mkdtemp(dir));
  unsetenv("XPAR_PROFILE");
  setenv("XDG_CACHE_HOME", dir, 1); /* keep the user's real profile out */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
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
  /* A missing file named by XPAR_PROFILE is an error too; an empty name is a bad env value. */
  setenv("XPAR_PROFILE", path_in_dir("missing.txt"), 1);
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_PROFILE);
  assert_non_null(strstr(xpar_last_error_detail(), "missing.txt"));
  setenv("XPAR_PROFILE", "", 1);
  assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
  unsetenv("XPAR_PROFILE");
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
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(other_machine),
      cmocka_unit_test(corrupt),
      cmocka_unit_test(default_location),
      cmocka_unit_test(offload_disabled_skips_gpu_key),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
