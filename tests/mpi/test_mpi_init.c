/*
 * The MPI component before MPI_Init and after MPI_Finalize: every function
 * returns XPAR_ERR_INVALID_ARGUMENT with a detail that says so, writes
 * nothing and does not crash (MPI_Initialized / MPI_Finalized are the only
 * MPI calls allowed then).  In between, a call on MPI_COMM_WORLD works.
 * One process (CTest runs it under mpiexec -n 1).  The cmocka tests run in
 * order: before, during, after.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"
#include "xpar/xpar_mpi.h"

static void expect_refused(xpar_context *ctx, const char *needle) {
  enum { N = 8 };
  int32_t in[N];
  for (int i = 0; i < N; i++) in[i] = i + 1;
  xt_buf res, out;
  xt_buf_alloc(&res, XPAR_INT64, 1, 0);
  xt_buf_alloc(&out, XPAR_INT32, N, 0);
  const struct {
    const char *name;
    xpar_status st;
  } calls[] = {
      {"xpar_mpi_reduce", xpar_mpi_reduce(ctx, MPI_COMM_WORLD, XPAR_INT32, XPAR_SUM, in, N, res.p)},
      {"xpar_mpi_reduce_sum_wide",
       xpar_mpi_reduce_sum_wide(ctx, MPI_COMM_WORLD, XPAR_INT32, in, N, res.p)},
      {"xpar_mpi_dot", xpar_mpi_dot(ctx, MPI_COMM_WORLD, XPAR_INT32, in, in, N, res.p)},
      {"xpar_mpi_scan",
       xpar_mpi_scan(ctx, MPI_COMM_WORLD, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, in, out.p, N)},
  };
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    if (calls[i].st != XPAR_ERR_INVALID_ARGUMENT)
      xt_failf(calls[i].name, "status %s, expected ERR_INVALID_ARGUMENT",
               xpar_status_name(calls[i].st));
  /* The detail is the last call's (the scan's). */
  if (!strstr(xpar_mpi_last_error_detail(), needle) ||
      !strstr(xpar_mpi_last_error_detail(), "xpar_mpi_scan"))
    xt_failf("detail", "\"%s\" does not say \"%s\" and name the function",
             xpar_mpi_last_error_detail(), needle);
  if (!xt_is_poison(XPAR_INT64, res.base, res.total / 8) ||
      !xt_is_poison(XPAR_INT32, out.base, out.total / 4))
    xt_failf("outputs", "written although every call failed");

  int device = -7;
  if (xpar_mpi_local_device(MPI_COMM_WORLD, &device) != XPAR_ERR_INVALID_ARGUMENT || device != -7)
    xt_failf("xpar_mpi_local_device", "not refused, or wrote %d", device);
  xpar_context *made = NULL;
  if (xpar_mpi_context_create(MPI_COMM_WORLD, &made) != XPAR_ERR_INVALID_ARGUMENT || made)
    xt_failf("xpar_mpi_context_create", "not refused, or made a context");
  if (!strstr(xpar_mpi_last_error_detail(), needle))
    xt_failf("detail", "\"%s\" does not say \"%s\"", xpar_mpi_last_error_detail(), needle);
  xt_buf_free(&res);
  xt_buf_free(&out);
}

static void before_init(void **state) {
  int flag = 1;
  MPI_Initialized(&flag);
  assert_int_equal(flag, 0);
  expect_refused((xpar_context *)*state, "MPI is not initialised");
}

static void initialised(void **state) {
  assert_int_equal(MPI_Init(NULL, NULL), MPI_SUCCESS);
  int64_t sum = 0;
  const int32_t in[3] = {1, 2, 3};
  xpar_status st = xpar_mpi_reduce_sum_wide((xpar_context *)*state, MPI_COMM_WORLD, XPAR_INT32,
                                            in, 3, &sum);
  if (st != XPAR_OK) xt_failf("initialised", "%s: %s", xpar_status_name(st), xpar_mpi_last_error_detail());
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  assert_int_equal(sum, 6 * size);
  assert_int_equal(MPI_Finalize(), MPI_SUCCESS);
}

static void after_finalize(void **state) {
  expect_refused((xpar_context *)*state, "MPI is already finalised");
}

static int setup(void **state) {
  xpar_context *ctx = NULL;
  if (xpar_context_create(&ctx) != XPAR_OK) return -1;
  *state = ctx;
  return 0;
}

static int teardown(void **state) {
  xpar_context_destroy((xpar_context *)*state);
  return 0;
}

int main(int argc, char **argv) {
  xt_init("test_mpi_init", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(before_init),
      cmocka_unit_test(initialised),
      cmocka_unit_test(after_finalize),
  };
  return cmocka_run_group_tests_name("mpi_init", tests, setup, teardown);
}
