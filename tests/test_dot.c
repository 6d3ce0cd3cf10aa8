/*
 * Conformance of xpar_dot on every tier: every dtype, sizes 0 .. 2^20 + 3,
 * x and y at different element offsets, and x == y (a squared norm).
 * Integers wrap (full-range inputs: products and sums overflow); floats are
 * checked against long double within 2 (n+1) eps sum|x_i y_i|, and exactly on
 * small integers (|x|, |y| <= 3: every partial sum below 2^24).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

static void run_dot(void **state, int same) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const char *tier = xt_tier_name(st->tier);
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype d = xt_dtypes[di];
    for (int si = 0; si < XT_NSIZES; si++) {
      size_t n = xt_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      for (int oi = 0; oi < XT_NOFFS; oi++) {
        size_t xo = xt_offs[oi][0], yo = xt_offs[oi][1];
        for (int var = 0; var < (xt_is_float(d) ? 2 : 1); var++) {
          int exact = var == 1;
          xt_data kind = exact ? XT_DATA_SMALLINT : XT_DATA_RANDOM;
          char label[256];
          snprintf(label, sizeof label, "%s/%s/%s/n=%zu/offs=%zu,%zu/%s", same ? "dot_x_eq_y" : "dot",
                   tier, xt_dname(d), n, xo, yo, exact ? "smallint" : "random");
          xt_rng rng;
          xt_rng_for(&rng, label);
          xt_buf x, y, res;
          xt_buf_alloc(&x, d, n, xo);
          xt_fill_random(&rng, d, x.p, n, kind, 3);
          if (!same) {
            xt_buf_alloc(&y, d, n, yo);
            xt_fill_random(&rng, d, y.p, n, kind, 3);
          } else {
            y = x;
          }
          unsigned char *ox = xt_buf_copy(&x), *oy = xt_buf_copy(&y);
          xt_buf_alloc(&res, d, 1, 0);

          xpar_status s = xpar_dot(ctx, d, x.p, y.p, n, res.p);
          xt_check_status(label, "call", s, XPAR_OK);
          xt_check_decision(label, ctx, st->tier, XPAR_OP_DOT, d, n);
          xt_check_scalar(label, "result", d, res.p, xt_ref_dot(d, x.p, y.p, n, exact));
          xt_check_guards(label, "result", &res);
          xt_check_bytes(label, "x (and its guards) after the call", x.base, ox, x.total);
          xt_check_bytes(label, "y (and its guards) after the call", y.base, oy, y.total);
          if (n == 0) {
            xt_buf_poison(&res);
            s = xpar_dot(ctx, d, NULL, NULL, 0, res.p);
            xt_check_status(label, "call with NULL arrays, n == 0", s, XPAR_OK);
            xt_check_scalar(label, "result with NULL arrays, n == 0", d, res.p,
                            xt_ref_dot(d, NULL, NULL, 0, 1));
          }
          free(ox);
          free(oy);
          xt_buf_free(&x);
          if (!same) xt_buf_free(&y);
          xt_buf_free(&res);
        }
      }
    }
  }
}

static void dot(void **state) { run_dot(state, 0); }
static void dot_x_eq_y(void **state) { run_dot(state, 1); }

int main(int argc, char **argv) {
  xt_init("test_dot", argc, argv);
  static const char *const names[] = {"dot", "dot_x_eq_y"};
  static const xt_body bodies[] = {dot, dot_x_eq_y};
  return xt_run_tier_tests("dot", names, bodies, 2);
}
