/*
 * xpar_launch beyond the element results (test_kernel.c has those): bad
 * input (a status and detail naming the kernel, nothing written, no decision),
 * kernels missing a side in this build (clear status when the policy demands
 * it, AUTO takes the side that exists), the kernel thresholds (defaults,
 * XPAR_ALL_*, XPAR_KERNEL_<NAME>_*, the API; their sources in the decision
 * record), the decision record and XPAR_VERBOSE naming the kernel, and the
 * serial tiers' index order (printf; cuda-serial skips without a GPU).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernels/test_kernels.h"
#include "xt.h"

#define N 100

static xpar_context *new_context(void) {
  xpar_context *ctx = NULL;
  xt_check_status("setup", "xpar_context_create", xpar_context_create(&ctx), XPAR_OK);
  return ctx;
}

static void check_detail_names(const char *label, const char *needle) {
  const char *d = xpar_last_error_detail();
  if (!strstr(d, needle)) xt_failf(label, "detail \"%s\" does not mention \"%s\"", d, needle);
}

static void check_reason(const char *label, xpar_context *ctx, const char *needle) {
  xpar_decision d;
  xt_check_status(label, "xpar_last_decision", xpar_last_decision(ctx, &d), XPAR_OK);
  if (!strstr(d.reason, needle))
    xt_failf(label, "reason \"%s\" does not contain \"%s\"", d.reason, needle);
}

/* ---- bad input: every check refuses, names the problem, writes nothing ---- */

typedef struct bad_case {
  const char *label;
  xpar_status want;
  const char *detail; /* a piece of the detail message */
} bad_case;

static void t_bad_input(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  uint32_t x[N], y[N], poison[N];
  xt_rng rng;
  xt_rng_for(&rng, "bad_input");
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, y, N, XT_DATA_RANDOM, 0);
  memcpy(poison, y, sizeof y);
  uint32_t a = 3;
  int64_t big[3] = {1, 2, 3};
  /* A good call first, so that a refused one must reset the decision. */
  xpar_arg good[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  xt_check_status("bad_input", "good launch", xpar_launch(ctx, &xk_axpy_u32, N, good, 3), XPAR_OK);
  memcpy(poison, y, sizeof y);

  xpar_kernel old_abi = xk_axpy_u32;
  old_abi.abi = XPAR_KERNEL_ABI + 1;
  xpar_kernel neither = xk_axpy_u32;
  neither.cpu = NULL;
  neither.gpu = NULL;
  neither.name = "neither";

  enum { NCASES = 15 };
  static const bad_case cases[NCASES] = {
      {"NULL kernel", XPAR_ERR_NULL_POINTER, "kernel is NULL"},
      {"another ABI", XPAR_ERR_INVALID_ARGUMENT, "layout version"},
      {"no variant", XPAR_ERR_NOT_SUPPORTED, "neither a CPU nor a GPU variant"},
      {"nargs -1", XPAR_ERR_INVALID_ARGUMENT, "nargs = -1"},
      {"nargs 9", XPAR_ERR_INVALID_ARGUMENT, "nargs = 9"},
      {"args NULL", XPAR_ERR_NULL_POINTER, "args is NULL"},
      {"bad role", XPAR_ERR_INVALID_ENUM, "unknown role"},
      {"bad dtype", XPAR_ERR_INVALID_ENUM, "unknown dtype"},
      {"NULL array", XPAR_ERR_NULL_POINTER, "args[1] is NULL"},
      {"misaligned", XPAR_ERR_INVALID_ARGUMENT, "not aligned"},
      {"NULL scalar", XPAR_ERR_NULL_POINTER, "scalar args[0] is NULL"},
      {"scalar too big", XPAR_ERR_INVALID_ARGUMENT, "XPAR_KERNEL_SCALAR_BYTES"},
      {"size overflow", XPAR_ERR_SIZE_OVERFLOW, "overflows size_t"},
      {"partial overlap", XPAR_ERR_OVERLAP, "overlaps"},
      {"same start, other count", XPAR_ERR_OVERLAP, "overlaps"},
  };
  for (int c = 0; c < NCASES; c++) {
    xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                        XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
    const xpar_kernel *k = &xk_axpy_u32;
    const xpar_arg *ap = args;
    int nargs = 3;
    switch (c) {
      case 0: k = NULL; break;
      case 1: k = &old_abi; break;
      case 2: k = &neither; break;
      case 3: nargs = -1; break;
      case 4: nargs = 9; break;
      case 5: ap = NULL; break;
      case 6: args[1].role = (xpar_arg_role)9; break;
      case 7: args[1].dtype = (xpar_dtype)99; break;
      case 8: args[1].ptr = NULL; break;
      case 9: args[1].ptr = (const char *)x + 1; args[1].count = N - 1; break;
      case 10: args[0].ptr = NULL; break;
      case 11: args[0] = (xpar_arg){XPAR_ARG_SCALAR, XPAR_INT64, 3, big}; break;
      case 12: args[1].count = SIZE_MAX / 2; break;
      case 13: args[1].ptr = y + 1; args[1].count = N - 1; break;
      case 14: args[1].ptr = y; args[1].count = N - 1; break;
    }
    xpar_status s = xpar_launch(ctx, k, N, ap, nargs);
    xt_check_status(cases[c].label, "launch", s, cases[c].want);
    check_detail_names(cases[c].label, cases[c].detail);
    if (k && c != 1 && c != 2) check_detail_names(cases[c].label, "xk_axpy_u32");
    xt_check_bytes(cases[c].label, "y after a refused launch", y, poison, sizeof y);
    xpar_decision d;
    xt_check_status(cases[c].label, "decision", xpar_last_decision(ctx, &d), XPAR_OK);
    if (d.tier != XPAR_TIER_NONE)
      xt_failf(cases[c].label, "refused launch left decision tier %s", xpar_tier_name(d.tier));
    /* The record names the refused launch: op kernel, n, the first array's
     * dtype where the arguments are readable, and the kernel's name only for
     * an object that passed its layout check. */
    const xpar_dtype want_dtype = (c >= 3 && c <= 5) ? XPAR_INT32 : XPAR_UINT32;
    const char *want_name = c == 0 || c == 1 ? NULL : c == 2 ? "neither" : "xk_axpy_u32";
    if (d.op != XPAR_OP_KERNEL || d.n != N || d.dtype != want_dtype ||
        (want_name ? !d.kernel || strcmp(d.kernel, want_name) : d.kernel != NULL) ||
        strcmp(d.reason, "the last call failed before running") != 0)
      xt_failf(cases[c].label,
               "refused launch recorded op %d, n %zu, dtype %s, kernel %s, reason \"%s\"; "
               "expected op kernel, n %d, dtype %s, kernel %s, \"the last call failed before "
               "running\"",
               (int)d.op, d.n, xpar_dtype_name(d.dtype), d.kernel ? d.kernel : "(none)", d.reason,
               N, xpar_dtype_name(want_dtype), want_name ? want_name : "(none)");
  }
  /* A calibration refused before anything ran says so too (after a good launch). */
  xt_check_status("bad_input", "good launch", xpar_launch(ctx, &xk_axpy_u32, N, good, 3), XPAR_OK);
  memcpy(poison, y, sizeof y);
  for (int c = 0; c < 2; c++) {
    const char *label = c ? "calibrate with n_max 0" : "calibrate a NULL kernel";
    xt_check_status(label, "calibrate",
                    xpar_kernel_calibrate(ctx, c ? &xk_axpy_u32 : NULL, c ? 0 : 1024, good, 3, NULL),
                    c ? XPAR_ERR_INVALID_ARGUMENT : XPAR_ERR_NULL_POINTER);
    xt_check_bytes(label, "y after a refused calibration", y, poison, sizeof y);
    xpar_decision d;
    xt_check_status(label, "decision", xpar_last_decision(ctx, &d), XPAR_OK);
    if (d.tier != XPAR_TIER_NONE || d.op != XPAR_OP_KERNEL || d.n != (c ? 0u : 1024u) ||
        strcmp(d.reason, "the last call failed before running") != 0)
      xt_failf(label, "refused calibration left a record of op %d, n %zu, tier %s (\"%s\")",
               (int)d.op, d.n, xpar_tier_name(d.tier), d.reason);
  }
  xt_check_status("NULL context", "launch", xpar_launch(NULL, &xk_axpy_u32, N, good, 3),
                  XPAR_ERR_NULL_CONTEXT);
  xt_check_status("threshold of a NULL kernel", "set",
                  xpar_context_set_kernel_threshold(ctx, NULL, XPAR_THRESHOLD_OPENMP, 1),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status("unknown threshold kind", "set",
                  xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_COUNT_, 1),
                  XPAR_ERR_INVALID_ENUM);
  xt_check_status("get into NULL", "get",
                  xpar_context_get_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, NULL),
                  XPAR_ERR_NULL_POINTER);
  xpar_context_destroy(ctx);
}

/* ---- a kernel without a GPU variant (compiled CPU_ONLY in every build) ---- */

static void t_no_gpu_variant(void **state) {
  (void)state;
  uint32_t x[N], out[N], poison[N];
  xt_rng rng;
  xt_rng_for(&rng, "no_gpu_variant");
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_poison(XPAR_UINT32, out, N);
  memcpy(poison, out, sizeof out);
  xpar_arg args[2] = {XPAR_ARG_IN(XPAR_UINT32, x, N), XPAR_ARG_OUT(XPAR_UINT32, out, N)};
  if (xk_square_cpu_only.gpu) xt_failf("no_gpu_variant", "a CPU_ONLY kernel has a GPU variant");

  /* Forced onto the GPU, or offload mandatory: refused, whether or not a
   * GPU exists (the kernel could not run there anyway). */
  static const xpar_backend gpu_backends[] = {XPAR_BACKEND_CUDA, XPAR_BACKEND_CUDA_SERIAL};
  for (int b = 0; b < 3; b++) {
    xpar_context *ctx = new_context();
    if (b < 2) xpar_context_set_backend(ctx, gpu_backends[b]);
    else xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY);
    const char *label = b < 2 ? xpar_backend_name(gpu_backends[b]) : "offload mandatory";
    xt_check_status(label, "launch", xpar_launch(ctx, &xk_square_cpu_only, N, args, 2),
                    XPAR_ERR_NOT_SUPPORTED);
    check_detail_names(label, "xk_square_cpu_only has no GPU variant");
    xt_check_bytes(label, "out after a refused launch", out, poison, sizeof out);
    /* The context's first call, refused by the policy (not by the argument
     * checks): the record is still that call's. */
    xpar_decision d;
    xpar_last_decision(ctx, &d);
    if (d.op != XPAR_OP_KERNEL || d.n != N || d.tier != XPAR_TIER_NONE || !d.kernel ||
        strcmp(d.kernel, "xk_square_cpu_only") != 0 ||
        strcmp(d.reason, "the last call failed before running") != 0)
      xt_failf(label, "record after the refused first launch: op %d, n %zu, tier %s, kernel %s, "
               "reason \"%s\"", (int)d.op, d.n, xpar_tier_name(d.tier),
               d.kernel ? d.kernel : "(none)", d.reason);
    xpar_context_destroy(ctx);
  }
  /* AUTO (even above the GPU threshold) runs it on the CPU and says why. */
  xpar_context *ctx = new_context();
  xt_check_status("auto", "set GPU threshold 0",
                  xpar_context_set_kernel_threshold(ctx, &xk_square_cpu_only,
                                                    XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0),
                  XPAR_OK);
  xt_check_status("auto", "launch", xpar_launch(ctx, &xk_square_cpu_only, N, args, 2), XPAR_OK);
  for (size_t i = 0; i < N; i++)
    if (out[i] != x[i] * x[i]) xt_failf("auto", "out[%zu] = %u, expected %u", i, out[i], x[i] * x[i]);
  check_reason("auto", ctx, "kernel xk_square_cpu_only has no GPU variant in this build");
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  if (d.tier != XPAR_TIER_CPU_SERIAL) xt_failf("auto", "ran on %s", xpar_tier_name(d.tier));
  xpar_context_destroy(ctx);
}

/* ---- a kernel without a CPU variant (made by hand from a GPU one) --------- */

static void t_no_cpu_variant(void **state) {
  (void)state;
  if (!xk_axpy_u32.gpu) skip(); /* this build has no GPU variants to borrow */
  xpar_kernel gpu_only = xk_axpy_u32;
  gpu_only.cpu = NULL;
  gpu_only.name = "gpu_only";
  uint32_t a = 5, x[N], y[N], poison[N];
  xt_rng rng;
  xt_rng_for(&rng, "no_cpu_variant");
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, y, N, XT_DATA_RANDOM, 0);
  memcpy(poison, y, sizeof y);
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  for (int c = 0; c < 2; c++) {
    xpar_context *ctx = new_context();
    if (c == 0) xpar_context_set_backend(ctx, XPAR_BACKEND_CPU);
    else xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED);
    const char *label = c == 0 ? "forced cpu" : "offload disabled";
    xt_check_status(label, "launch", xpar_launch(ctx, &gpu_only, N, args, 3), XPAR_ERR_NOT_SUPPORTED);
    check_detail_names(label, "gpu_only has no CPU variant");
    xt_check_bytes(label, "y after a refused launch", y, poison, sizeof y);
    xpar_context_destroy(ctx);
  }
  xpar_context *ctx = new_context();
  xpar_status s = xpar_launch(ctx, &gpu_only, N, args, 3);
  if (!xt_gpu_usable()) {
    xt_check_status("auto without a GPU", "launch", s, XPAR_ERR_NO_DEVICE);
    xt_check_bytes("auto without a GPU", "y", y, poison, sizeof y);
  } else {
    xt_check_status("auto with a GPU", "launch", s, XPAR_OK);
    for (size_t i = 0; i < N; i++)
      if (y[i] != (uint32_t)(a * x[i] + poison[i])) xt_failf("auto with a GPU", "y[%zu] wrong", i);
    check_reason("auto with a GPU", ctx, "kernel gpu_only has no CPU variant");
  }
  xpar_context_destroy(ctx);
}

/* ---- thresholds: defaults, environment, API, and their sources ------------- */

static size_t get_threshold(xpar_context *ctx, const xpar_kernel *k, xpar_threshold w) {
  size_t v = 0;
  xt_check_status("thresholds", "get", xpar_context_get_kernel_threshold(ctx, k, w, &v), XPAR_OK);
  return v;
}

/* Any thread count >= 0 is accepted (xpar.h); a kernel's region opens at
 * most 256, as the built-in ops' do: 100,000 crashed inside libgomp before. */
static void t_thread_count_cap(void **state) {
  (void)state;
  uint32_t a = 5, x[N], y[N], want[N];
  xt_rng rng;
  xt_rng_for(&rng, "thread_count_cap");
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, y, N, XT_DATA_RANDOM, 0);
  for (int i = 0; i < N; i++) want[i] = a * x[i] + y[i];
  xpar_context *ctx = new_context();
  xt_check_status("cap", "set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  xt_check_status("cap", "set_num_threads(100000)", xpar_context_set_num_threads(ctx, 100000),
                  XPAR_OK);
  xt_check_status("cap", "set_kernel_threshold",
                  xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, 0),
                  XPAR_OK);
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  xt_check_status("cap", "launch", xpar_launch(ctx, &xk_axpy_u32, N, args, 3), XPAR_OK);
  if (memcmp(y, want, sizeof y) != 0) xt_failf("cap", "a * x + y wrong with 100,000 threads asked");
  xpar_context_destroy(ctx);
}

/* The teams that ran a launch: every index's team at most 256, and exactly
 * `expect` where the count is known (0: only the cap is checked). */
static void check_teams(const char *label, xpar_context *ctx, int expect) {
  int32_t team[N];
  xt_poison(XPAR_INT32, team, N);
  xpar_arg args[1] = {XPAR_ARG_OUT(XPAR_INT32, team, N)};
  xt_check_status(label, "launch", xpar_launch(ctx, &xk_team_size_cpu_only, N, args, 1), XPAR_OK);
  for (int i = 0; i < N; i++)
    if (team[i] < 1 || team[i] > 256 || (expect && team[i] != expect)) {
      xt_failf(label, "index %d ran in a team of %d (expected %s%d)", i, (int)team[i],
               expect ? "" : "at most ", expect ? expect : 256);
      return;
    }
}

/* The cap holds whoever asks for more: the context's count, or (count 0) the
 * OpenMP runtime's default, which OMP_NUM_THREADS or the application may set
 * above 256 (300 and 20,000 once opened that many). */
static void t_thread_count_cap_teams(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  xt_check_status("teams", "set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  xt_check_status("teams", "set_kernel_threshold",
                  xpar_context_set_kernel_threshold(ctx, &xk_team_size_cpu_only,
                                                    XPAR_THRESHOLD_OPENMP, 0),
                  XPAR_OK);
  const int omp = xt_have_openmp();
  xpar_context_set_num_threads(ctx, 3);
  check_teams("3 threads asked", ctx, omp ? 3 : 1);
  xpar_context_set_num_threads(ctx, 100000);
  check_teams("100,000 threads asked", ctx, omp ? 256 : 1);
  xpar_context_set_num_threads(ctx, 0);
  const int before = xk_set_default_threads(300);
  check_teams("the runtime's default of 300", ctx, omp ? 256 : 1);
  xk_set_default_threads(5);
  check_teams("the runtime's default of 5", ctx, omp ? 5 : 1);
  if (before > 0) xk_set_default_threads(before);
  xpar_context_destroy(ctx);
}

/* An operator's OpenMP regions have the context's team whatever n, as the
 * kernels' and the built-in ops' (README: libgomp's pool is never resized);
 * fewer elements than threads leave threads idle. */
static void t_operator_team(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  xt_check_status("operator team", "set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CPU),
                  XPAR_OK);
  xt_check_status("operator team", "set_operator_threshold",
                  xpar_context_set_operator_threshold(ctx, &xk_team_max_cpu_only,
                                                      XPAR_THRESHOLD_OPENMP, 0),
                  XPAR_OK);
  /* the getter reads what the setter set, and the defaults it did not touch */
  size_t got = 1;
  xt_check_status("operator team", "get_operator_threshold",
                  xpar_context_get_operator_threshold(ctx, &xk_team_max_cpu_only,
                                                      XPAR_THRESHOLD_OPENMP, &got),
                  XPAR_OK);
  if (got != 0) xt_failf("operator team", "openmp threshold read back as %zu, set 0", got);
  xt_check_status("operator team", "get_operator_threshold",
                  xpar_context_get_operator_threshold(ctx, &xk_team_max_cpu_only,
                                                      XPAR_THRESHOLD_GPU_DEVICE_DATA, &got),
                  XPAR_OK);
  if (got != (size_t)1 << 19) xt_failf("operator team", "gpu default read as %zu", got);
  xt_check_status("operator team", "get_operator_threshold NULL out",
                  xpar_context_get_operator_threshold(ctx, &xk_team_max_cpu_only,
                                                      XPAR_THRESHOLD_OPENMP, NULL),
                  XPAR_ERR_NULL_POINTER);
  xt_check_status("operator team", "get_operator_threshold NULL op",
                  xpar_context_get_operator_threshold(ctx, NULL, XPAR_THRESHOLD_OPENMP, &got),
                  XPAR_ERR_NULL_POINTER);
  xpar_context_set_num_threads(ctx, 6);
  const int32_t want = xt_have_openmp() ? 6 : 1;
  int32_t in[16] = {0}, out[16];
  for (size_t n = 1; n <= 16; n++) {
    char label[64];
    snprintf(label, sizeof label, "operator team n=%zu", n);
    int32_t r = -1;
    xt_check_status(label, "reduce", xpar_reduce_op(ctx, &xk_team_max_cpu_only, in, n, &r),
                    XPAR_OK);
    if (r != want) xt_failf(label, "the reduce ran in a team of %d, expected %d", (int)r, (int)want);
    xt_check_status(label, "scan",
                    xpar_scan_op(ctx, &xk_team_max_cpu_only, XPAR_INCLUSIVE, in, out, n), XPAR_OK);
    /* the scan's first pass runs in a team only where it has more than one part */
    if (n > 1 && out[n - 1] != want)
      xt_failf(label, "the scan ran in a team of %d, expected %d", (int)out[n - 1], (int)want);
  }
  xpar_context_destroy(ctx);
}

static void t_thresholds(void **state) {
  (void)state;
  uint32_t a = 7, x[N], y[N];
  xt_rng rng;
  xt_rng_for(&rng, "thresholds");
  xt_fill_random(&rng, XPAR_UINT32, x, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, y, N, XT_DATA_RANDOM, 0);
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  xpar_context *ctx = new_context();
  /* The defaults (dispatch/kernel.c). */
  if (get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP) != 32768 ||
      get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA) != 524288 ||
      get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_PINNED_DATA) != XPAR_NEVER ||
      get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_PAGEABLE_DATA) != XPAR_NEVER ||
      get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA) != 0)
    xt_failf("defaults", "kernel defaults are not 2^15, 2^19, never, never, 0");
  xt_check_status("defaults", "launch", xpar_launch(ctx, &xk_axpy_u32, N, args, 3), XPAR_OK);
  check_reason("defaults", ctx, "n=100 below openmp threshold 32768 (default)");
  check_reason("defaults", ctx, "not measured for kernels");
  /* The API overrides, per kernel. */
  xt_check_status("api", "set",
                  xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP, 64),
                  XPAR_OK);
  if (get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP) != 64) xt_failf("api", "not set");
  if (get_threshold(ctx, &xk_poly_f64, XPAR_THRESHOLD_OPENMP) != 32768)
    xt_failf("api", "setting one kernel's threshold changed another's");
  xpar_context_set_backend(ctx, XPAR_BACKEND_CPU);
  xt_check_status("api", "launch", xpar_launch(ctx, &xk_axpy_u32, N, args, 3), XPAR_OK);
  if (xt_have_openmp()) check_reason("api", ctx, "n=100 at or above openmp threshold 64 (api)");
  xpar_context_destroy(ctx);

  /* The environment: XPAR_ALL_*, overridden by the kernel's own variable. */
  setenv("XPAR_ALL_OPENMP_THRESHOLD", "5", 1);
  setenv("XPAR_ALL_GPU_THRESHOLD", "2^10", 1);
  setenv("XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD", "2^12", 1);
  ctx = new_context();
  if (get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_OPENMP) != 4096 ||
      get_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA) != 1024 ||
      get_threshold(ctx, &xk_poly_f64, XPAR_THRESHOLD_OPENMP) != 5)
    xt_failf("env", "XPAR_ALL_* / XPAR_KERNEL_XK_AXPY_U32_* not applied in order");
  xt_check_status("env", "launch", xpar_launch(ctx, &xk_axpy_u32, N, args, 3), XPAR_OK);
  check_reason("env", ctx, "n=100 below openmp threshold 4096 (env)");
  xpar_context_destroy(ctx);
  /* An invalid value fails the first launch of the kernel, naming it. */
  setenv("XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD", "lots", 1);
  ctx = new_context();
  uint32_t before[N];
  memcpy(before, y, sizeof y);
  xt_check_status("invalid env", "launch", xpar_launch(ctx, &xk_axpy_u32, N, args, 3),
                  XPAR_ERR_INVALID_ENV);
  check_detail_names("invalid env", "XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD=\"lots\"");
  xt_check_bytes("invalid env", "y", y, before, sizeof y);
  xpar_context_destroy(ctx);
  unsetenv("XPAR_ALL_OPENMP_THRESHOLD");
  unsetenv("XPAR_ALL_GPU_THRESHOLD");
  unsetenv("XPAR_KERNEL_XK_AXPY_U32_OPENMP_THRESHOLD");
}

/* ---- output captured from a file descriptor (stdout or stderr) --------------- */

/* Run xpar_launch(ctx, k, n, args, nargs) with file descriptor fd (1 or 2)
 * sent to a file; returns what was written there (malloc'd), the status in
 * *st. */
static char *captured_launch(int fd, xpar_context *ctx, const xpar_kernel *k, size_t n,
                             const xpar_arg *args, int nargs, xpar_status *st) {
  char path[] = "/tmp/xpar_test_kernel_XXXXXX";
  int tmp = mkstemp(path);
  assert_true(tmp >= 0);
  FILE *stream = fd == 1 ? stdout : stderr;
  fflush(stream);
  int saved = dup(fd);
  dup2(tmp, fd);
  *st = xpar_launch(ctx, k, n, args, nargs);
  fflush(stream);
  dup2(saved, fd);
  close(saved);
  off_t size = lseek(tmp, 0, SEEK_END);
  lseek(tmp, 0, SEEK_SET);
  char *text = (char *)calloc((size_t)size + 1, 1);
  assert_non_null(text);
  ssize_t got = read(tmp, text, (size_t)size);
  text[got > 0 ? got : 0] = '\0';
  close(tmp);
  unlink(path);
  return text;
}

static void check_in_order(const char *label, xpar_context *ctx, xpar_tier want) {
  enum { LINES = 40 };
  xpar_status st;
  char *text = captured_launch(1, ctx, &xk_print, LINES, NULL, 0, &st);
  xt_check_status(label, "launch", st, XPAR_OK);
  char expected[LINES * 20] = "";
  size_t used = 0;
  for (int i = 0; i < LINES; i++)
    used += (size_t)snprintf(expected + used, sizeof expected - used, "xk_print i=%d\n", i);
  if (strcmp(text, expected) != 0)
    xt_failf(label, "printed, not in index order:\n%s", text);
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  if (d.tier != want) xt_failf(label, "ran on %s", xpar_tier_name(d.tier));
  free(text);
}

static void t_print_cpu_serial(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL);
  check_in_order("print/cpu-serial", ctx, XPAR_TIER_CPU_SERIAL);
  xpar_context_destroy(ctx);
}

static void t_print_cuda_serial(void **state) {
  (void)state;
  if (!xt_gpu_usable()) skip();
  xpar_context *ctx = new_context();
  xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA_SERIAL);
  xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY);
  check_in_order("print/cuda-serial", ctx, XPAR_TIER_CUDA_SERIAL);
  xpar_context_destroy(ctx);
}

/* ---- XPAR_VERBOSE: the log line names the kernel -------------------------- */

static void t_verbose(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  xpar_context_set_verbose(ctx, 1);
  uint32_t a = 1, x[N] = {0}, y[N] = {0};
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, N),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, N)};
  xpar_status st;
  char *text = captured_launch(2, ctx, &xk_axpy_u32, N, args, 3, &st);
  xt_check_status("verbose", "launch", st, XPAR_OK);
  if (!strstr(text, "xpar: kernel xk_axpy_u32 n=100 -> cpu-serial: "))
    xt_failf("verbose", "log line \"%s\" does not name the kernel", text);
  free(text);
  xpar_context_destroy(ctx);
}

/* An operator object whose layout breaks a rule: refused for both reduce and
 * scan, the detail naming the rule broken and the value that broke it, and
 * nothing written. */
static void t_operator_bad_layout(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  uint32_t in[N], out[N], poison[N];
  xt_rng rng;
  xt_rng_for(&rng, "operator_bad_layout");
  xt_fill_random(&rng, XPAR_UINT32, in, N, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_UINT32, out, N, XT_DATA_RANDOM, 0);
  memcpy(poison, out, sizeof out);
  enum { NCASES = 5 };
  static const struct {
    const char *label, *detail;
  } cases[NCASES] = {
      {"input alignment 3", "input alignment 3; an alignment is a power of two"},
      {"accumulator alignment 6", "accumulator alignment 6; an alignment is a power of two"},
      {"accumulator of 0 bytes", "accumulator of 0 bytes; an accumulator has 1 to"},
      {"accumulator too large", "accumulator of 4096 bytes; an accumulator has 1 to"},
      {"input of 0 bytes", "input element of 0 bytes; an input element has at least 1 byte"},
  };
  for (int c = 0; c < NCASES; c++) {
    xpar_operator op = xk_team_max_cpu_only;
    switch (c) {
      case 0: op.in_align = 3; break;
      case 1: op.acc_align = 6; break;
      case 2: op.acc_size = 0; break;
      case 3: op.acc_size = 4096; break;
      case 4: op.in_size = 0; break;
    }
    uint64_t result = 0x5a5a5a5a5a5a5a5aull;
    xt_check_status(cases[c].label, "reduce_op",
                    xpar_reduce_op(ctx, &op, in, N, &result), XPAR_ERR_INVALID_ARGUMENT);
    check_detail_names(cases[c].label, cases[c].detail);
    if (result != 0x5a5a5a5a5a5a5a5aull) xt_failf(cases[c].label, "a refused reduce wrote its result");
    xt_check_status(cases[c].label, "scan_op",
                    xpar_scan_op(ctx, &op, XPAR_INCLUSIVE, in, out, N), XPAR_ERR_INVALID_ARGUMENT);
    check_detail_names(cases[c].label, cases[c].detail);
    xt_check_bytes(cases[c].label, "out after a refused scan", out, poison, sizeof out);
  }
  xpar_context_destroy(ctx);
}

int main(int argc, char **argv) {
  xt_init("test_kernel_api", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_bad_input),        cmocka_unit_test(t_no_gpu_variant),
      cmocka_unit_test(t_no_cpu_variant),   cmocka_unit_test(t_thresholds),
      cmocka_unit_test(t_thread_count_cap), cmocka_unit_test(t_thread_count_cap_teams),
      cmocka_unit_test(t_operator_team),    cmocka_unit_test(t_operator_bad_layout),
      cmocka_unit_test(t_print_cpu_serial), cmocka_unit_test(t_print_cuda_serial),
      cmocka_unit_test(t_verbose),
  };
  return cmocka_run_group_tests_name("kernel_api", tests, NULL, NULL);
}
