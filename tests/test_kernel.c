/*
 * Application kernels (xpar_launch) on every tier: the suite's kernels
 * (kernels/test_kernels.xk.c), written once, over the conformance sizes and
 * offsets.  Every element is checked; outputs start poisoned and their guard
 * zones must stay intact; inputs must be unchanged; the decision record must
 * name the kernel and the tier.  Integers are exact (wrapping); the double
 * kernel (c x^2 + x) is checked against long double within 4 eps (|c x^2| +
 * |x|): two roundings, or one under the GPU's fused multiply-add.
 * Odd offsets alternate xpar_launch_nowait (+ xpar_wait) with xpar_launch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/test_kernels.h"
#include "xt.h"

typedef enum { C_AXPY, C_AXPY_ALIASED, C_GATHER, C_POLY, C_COUNT } case_t;
static const char *const case_names[C_COUNT] = {"axpy_u32", "axpy_u32_x_eq_y", "gather_i64",
                                                "poly_f64"};

/* The tier's context, with the kernels' OpenMP threshold at 0 on the OpenMP
 * tier (as xt_tier_context does for the ops): every n runs in parallel. */
static xpar_context *kernel_context(xt_tier_state *st) {
  xpar_context *ctx = xt_tier_open(st);
  if (st->tier == XT_CPU_OPENMP) {
    const xpar_kernel *ks[] = {&xk_axpy_u32, &xk_gather_i64, &xk_poly_f64};
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
      xt_check_status("setup", "set_kernel_threshold(OPENMP, 0)",
                      xpar_context_set_kernel_threshold(ctx, ks[k], XPAR_THRESHOLD_OPENMP, 0),
                      XPAR_OK);
  }
  return ctx;
}

static void check_kernel_decision(const char *label, xpar_context *ctx, xt_tier tier,
                                  const xpar_kernel *k, xpar_dtype dtype, size_t n) {
  xt_check_decision(label, ctx, tier, XPAR_OP_KERNEL, dtype, n);
  xpar_decision d;
  xt_check_status(label, "xpar_last_decision", xpar_last_decision(ctx, &d), XPAR_OK);
  if (!d.kernel || strcmp(d.kernel, k->name) != 0)
    xt_failf(label, "decision record names kernel %s, expected %s", d.kernel ? d.kernel : "(null)",
             k->name);
}

static xpar_status launch(xpar_context *ctx, const xpar_kernel *k, size_t n, const xpar_arg *a,
                          int nargs, int nowait) {
  if (!nowait) return xpar_launch(ctx, k, n, a, nargs);
  xpar_status s = xpar_launch_nowait(ctx, k, n, a, nargs);
  return s == XPAR_OK ? xpar_wait(ctx) : s;
}

static void run_case(void **state, case_t c) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = kernel_context(st);
  const char *tier = xt_tier_name(st->tier);
  for (int si = 0; si < XT_NSIZES; si++) {
    const size_t n = xt_sizes[si];
    if (n > xt_tier_max_n(st->tier)) continue;
    xt_expect *exp = (xt_expect *)malloc((n ? n : 1) * sizeof *exp);
    assert_non_null(exp);
    for (int oi = 0; oi < XT_NOFFS; oi++) {
      const size_t xo = xt_offs[oi][0], yo = xt_offs[oi][1];
      const int nowait = oi & 1;
      char label[256];
      snprintf(label, sizeof label, "%s/%s/n=%zu/offs=%zu,%zu/%s", case_names[c], tier, n, xo, yo,
               nowait ? "nowait" : "sync");
      xt_rng rng;
      xt_rng_for(&rng, label);
      xt_buf x, y, t;
      memset(&y, 0, sizeof y);
      memset(&t, 0, sizeof t);
      unsigned char *x_copy = NULL, *t_copy = NULL;
      const xpar_kernel *k = NULL;
      xpar_dtype out_type = XPAR_UINT32;
      xt_buf *out = &y;
      xpar_status s = XPAR_OK;
      switch (c) {
        case C_AXPY:
        case C_AXPY_ALIASED: {
          k = &xk_axpy_u32;
          uint32_t a = (uint32_t)xt_next(&rng);
          xt_buf_alloc(&x, XPAR_UINT32, n, xo);
          xt_fill_random(&rng, XPAR_UINT32, x.p, n, XT_DATA_RANDOM, 0);
          const uint32_t *xv = (const uint32_t *)x.p;
          if (c == C_AXPY) {
            xt_buf_alloc(&y, XPAR_UINT32, n, yo);
            xt_fill_random(&rng, XPAR_UINT32, y.p, n, XT_DATA_RANDOM, 0);
            const uint32_t *yv = (const uint32_t *)y.p;
            for (size_t i = 0; i < n; i++) exp[i] = (xt_expect){(long double)(uint32_t)(a * xv[i] + yv[i]), 0};
            x_copy = xt_buf_copy(&x);
          } else {
            for (size_t i = 0; i < n; i++) exp[i] = (xt_expect){(long double)(uint32_t)(a * xv[i] + xv[i]), 0};
            out = &x;
          }
          xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a),
                              XPAR_ARG_IN(XPAR_UINT32, x.p, n),
                              XPAR_ARG_INOUT(XPAR_UINT32, out->p, n)};
          s = launch(ctx, k, n, args, 3, nowait);
          break;
        }
        case C_GATHER: {
          k = &xk_gather_i64;
          out_type = XPAR_INT64;
          const size_t m = 1 + xt_below(&rng, 1000);
          int64_t sc[2] = {(int64_t)m, (int64_t)xt_next(&rng)};
          xt_buf_alloc(&t, XPAR_INT64, m, yo);
          xt_fill_random(&rng, XPAR_INT64, t.p, m, XT_DATA_RANDOM, 0);
          xt_buf_alloc(&x, XPAR_UINT32, n, xo);
          xt_fill_random(&rng, XPAR_UINT32, x.p, n, XT_DATA_RANDOM, 0);
          xt_buf_alloc(&y, XPAR_INT64, n, yo); /* poisoned: write-only */
          const int64_t *tv = (const int64_t *)t.p;
          const uint32_t *iv = (const uint32_t *)x.p;
          for (size_t i = 0; i < n; i++)
            exp[i] = (xt_expect){xt_int_from_bits(XPAR_INT64, (uint64_t)tv[iv[i] % m] + (uint64_t)sc[1]), 0};
          x_copy = xt_buf_copy(&x);
          t_copy = xt_buf_copy(&t);
          xpar_arg args[4] = {XPAR_ARG_IN(XPAR_INT64, t.p, m), XPAR_ARG_IN(XPAR_UINT32, x.p, n),
                              XPAR_ARG_OUT(XPAR_INT64, y.p, n),
                              {XPAR_ARG_SCALAR, XPAR_INT64, 2, sc}};
          s = launch(ctx, k, n, args, 4, nowait);
          break;
        }
        case C_POLY:
        default: {
          k = &xk_poly_f64;
          out_type = XPAR_DOUBLE;
          double cc;
          xt_random_scalar(&rng, XPAR_DOUBLE, &cc, XT_DATA_RANDOM, 0);
          xt_buf_alloc(&x, XPAR_DOUBLE, n, xo);
          xt_fill_random(&rng, XPAR_DOUBLE, x.p, n, XT_DATA_RANDOM, 0);
          xt_buf_alloc(&y, XPAR_DOUBLE, n, yo);
          const double *xv = (const double *)x.p;
          for (size_t i = 0; i < n; i++) {
            long double q = (long double)cc * xv[i] * xv[i];
            long double mag = (q < 0 ? -q : q) + (xv[i] < 0 ? -xv[i] : xv[i]);
            exp[i] = (xt_expect){q + xv[i], 4 * xt_eps(XPAR_DOUBLE) * mag};
          }
          x_copy = xt_buf_copy(&x);
          xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_DOUBLE, &cc), XPAR_ARG_IN(XPAR_DOUBLE, x.p, n),
                              XPAR_ARG_OUT(XPAR_DOUBLE, y.p, n)};
          s = launch(ctx, k, n, args, 3, nowait);
          break;
        }
      }
      xt_check_status(label, "launch", s, XPAR_OK);
      check_kernel_decision(label, ctx, st->tier, k,
                            c == C_GATHER ? XPAR_INT64 : c == C_POLY ? XPAR_DOUBLE : XPAR_UINT32, n);
      xt_check_array(label, "output", out_type, out->p, exp, n);
      xt_check_guards(label, "output", out);
      if (x_copy) xt_check_bytes(label, "x (and its guards) after the call", x.base, x_copy, x.total);
      if (t_copy) xt_check_bytes(label, "table (and its guards) after the call", t.base, t_copy, t.total);
      if (n == 0) { /* NULL arrays accepted with count 0 */
        uint32_t a = 1;
        xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, NULL, 0),
                            XPAR_ARG_INOUT(XPAR_UINT32, NULL, 0)};
        xt_check_status(label, "launch with NULL arrays, n == 0",
                        xpar_launch(ctx, &xk_axpy_u32, 0, args, 3), XPAR_OK);
      }
      free(x_copy);
      free(t_copy);
      xt_buf_free(&x);
      if (y.base) xt_buf_free(&y);
      if (t.base) xt_buf_free(&t);
    }
    free(exp);
  }
}

#define K_TEST(C, name) \
  static void name(void **state) { run_case(state, C); }
K_TEST(C_AXPY, t_axpy)
K_TEST(C_AXPY_ALIASED, t_axpy_aliased)
K_TEST(C_GATHER, t_gather)
K_TEST(C_POLY, t_poly)

int main(int argc, char **argv) {
  xt_init("test_kernel", argc, argv);
  static const xt_body bodies[C_COUNT] = {t_axpy, t_axpy_aliased, t_gather, t_poly};
  return xt_run_tier_tests("kernel", case_names, bodies, C_COUNT);
}
