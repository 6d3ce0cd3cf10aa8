/*
 * Conformance of the elementwise operations on every tier: xpar_axpy (also
 * with x == y), xpar_add (out of place, z == x, z == y, x == y) and xpar_fill;
 * every dtype, sizes 0 .. 2^20 + 3, arrays at element offsets 0..3 (the
 * arrays of one call at different offsets).  Every element is checked, the
 * guard zones of outputs must be untouched and inputs unchanged.
 * Integers wrap (axpy's alpha is full-range); floats are checked against long
 * double within 2 eps (|a x| + |y|) per element, and exactly on small integers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

typedef enum {
  C_AXPY,        /* y = a x + y                      */
  C_AXPY_XY,     /* x == y: y = a y + y              */
  C_ADD,         /* z = x + y, three arrays          */
  C_ADD_ZX,      /* z == x                           */
  C_ADD_ZY,      /* z == y                           */
  C_ADD_XY,      /* x == y, z separate: z = 2 x      */
  C_FILL,
  C_COUNT
} case_t;
static const char *const case_names[C_COUNT] = {"axpy",   "axpy_x_eq_y", "add", "add_z_eq_x",
                                                "add_z_eq_y", "add_x_eq_y", "fill"};

static void run_case(void **state, case_t c) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const char *tier = xt_tier_name(st->tier);
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype d = xt_dtypes[di];
    for (int si = 0; si < XT_NSIZES; si++) {
      size_t n = xt_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      xt_expect *exp = (xt_expect *)malloc((n ? n : 1) * sizeof *exp);
      assert_non_null(exp);
      for (int oi = 0; oi < XT_NOFFS; oi++) {
        /* x at the first offset, y (and z) at the second, z at a third. */
        size_t xo = xt_offs[oi][0], yo = xt_offs[oi][1], zo = xt_offs[(oi + 1) % XT_NOFFS][1];
        for (int var = 0; var < (xt_is_float(d) ? 2 : 1); var++) {
          int exact = var == 1;
          xt_data kind = exact ? XT_DATA_SMALLINT : XT_DATA_RANDOM;
          char label[256];
          snprintf(label, sizeof label, "%s/%s/%s/n=%zu/offs=%zu,%zu,%zu/%s", case_names[c], tier,
                   xt_dname(d), n, xo, yo, zo, exact ? "smallint" : "random");
          xt_rng rng;
          xt_rng_for(&rng, label);
          xt_buf x, y, z;
          memset(&y, 0, sizeof y);
          memset(&z, 0, sizeof z);
          xt_buf_alloc(&x, d, n, xo);
          unsigned char scalar[8];
          xt_random_scalar(&rng, d, scalar, kind, 3);
          xpar_status s = XPAR_OK;
          xpar_op op;
          unsigned char *x_copy = NULL, *y_copy = NULL; /* inputs the call must not touch */
          const xt_buf *out = NULL;

          switch (c) {
            case C_AXPY:
              xt_buf_alloc(&y, d, n, yo);
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_fill_random(&rng, d, y.p, n, kind, 8);
              xt_ref_axpy(d, scalar, x.p, y.p, n, exact, exp);
              x_copy = xt_buf_copy(&x);
              s = xpar_axpy(ctx, d, scalar, x.p, y.p, n);
              op = XPAR_OP_AXPY;
              out = &y;
              break;
            case C_AXPY_XY:
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_ref_axpy(d, scalar, x.p, x.p, n, exact, exp);
              s = xpar_axpy(ctx, d, scalar, x.p, x.p, n);
              op = XPAR_OP_AXPY;
              out = &x;
              break;
            case C_ADD:
              xt_buf_alloc(&y, d, n, yo);
              xt_buf_alloc(&z, d, n, zo);
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_fill_random(&rng, d, y.p, n, kind, 8);
              xt_ref_add(d, x.p, y.p, n, exact, exp);
              x_copy = xt_buf_copy(&x);
              y_copy = xt_buf_copy(&y);
              s = xpar_add(ctx, d, x.p, y.p, z.p, n);
              op = XPAR_OP_ADD;
              out = &z;
              break;
            case C_ADD_ZX:
              xt_buf_alloc(&y, d, n, yo);
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_fill_random(&rng, d, y.p, n, kind, 8);
              xt_ref_add(d, x.p, y.p, n, exact, exp);
              y_copy = xt_buf_copy(&y);
              s = xpar_add(ctx, d, x.p, y.p, x.p, n);
              op = XPAR_OP_ADD;
              out = &x;
              break;
            case C_ADD_ZY:
              xt_buf_alloc(&y, d, n, yo);
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_fill_random(&rng, d, y.p, n, kind, 8);
              xt_ref_add(d, x.p, y.p, n, exact, exp);
              x_copy = xt_buf_copy(&x);
              s = xpar_add(ctx, d, x.p, y.p, y.p, n);
              op = XPAR_OP_ADD;
              out = &y;
              break;
            case C_ADD_XY:
              xt_buf_alloc(&z, d, n, zo);
              xt_fill_random(&rng, d, x.p, n, kind, 8);
              xt_ref_add(d, x.p, x.p, n, exact, exp);
              x_copy = xt_buf_copy(&x);
              s = xpar_add(ctx, d, x.p, x.p, z.p, n);
              op = XPAR_OP_ADD;
              out = &z;
              break;
            case C_FILL:
            default:
              for (size_t i = 0; i < n; i++) {
                exp[i].v = xt_get(d, scalar, 0);
                exp[i].tol = 0;
              }
              s = xpar_fill(ctx, d, scalar, x.p, n);
              op = XPAR_OP_FILL;
              out = &x;
              break;
          }
          xt_check_status(label, "call", s, XPAR_OK);
          xt_check_decision(label, ctx, st->tier, op, d, n);
          xt_check_array(label, "output", d, out->p, exp, n);
          xt_check_guards(label, "output", out);
          if (c == C_FILL) { /* bit for bit: the value is stored, not computed */
            for (size_t i = 0; i < n; i++)
              if (memcmp((char *)x.p + i * xt_size(d), scalar, xt_size(d)) != 0)
                xt_failf(label, "fill: element %zu differs bitwise from the value", i);
          }
          if (x_copy) xt_check_bytes(label, "x (and its guards) after the call", x.base, x_copy, x.total);
          if (y_copy) xt_check_bytes(label, "y (and its guards) after the call", y.base, y_copy, y.total);

          if (n == 0) { /* NULL arrays accepted with n == 0, and a NULL alpha / value */
            switch (c) {
              case C_AXPY: case C_AXPY_XY: s = xpar_axpy(ctx, d, scalar, NULL, NULL, 0); break;
              case C_FILL: s = xpar_fill(ctx, d, scalar, NULL, 0); break;
              default: s = xpar_add(ctx, d, NULL, NULL, NULL, 0); break;
            }
            xt_check_status(label, "call with NULL arrays, n == 0", s, XPAR_OK);
            if (c != C_ADD) {
              /* on the GPU tiers too (a forced cuda axpy once read *alpha
               * before looking at n) */
              s = c == C_FILL ? xpar_fill(ctx, d, NULL, NULL, 0)
                              : xpar_axpy(ctx, d, NULL, NULL, NULL, 0);
              xt_check_status(label, "NULL alpha / value with n == 0", s, XPAR_OK);
            }
          }
          free(x_copy);
          free(y_copy);
          xt_buf_free(&x);
          if (y.base) xt_buf_free(&y);
          if (z.base) xt_buf_free(&z);
        }
      }
      free(exp);
    }
  }
}

#define EW_TEST(C, name) \
  static void name(void **state) { run_case(state, C); }
EW_TEST(C_AXPY, t_axpy)
EW_TEST(C_AXPY_XY, t_axpy_xy)
EW_TEST(C_ADD, t_add)
EW_TEST(C_ADD_ZX, t_add_zx)
EW_TEST(C_ADD_ZY, t_add_zy)
EW_TEST(C_ADD_XY, t_add_xy)
EW_TEST(C_FILL, t_fill)

int main(int argc, char **argv) {
  xt_init("test_elementwise", argc, argv);
  static const xt_body bodies[C_COUNT] = {t_axpy, t_axpy_xy, t_add, t_add_zx,
                                          t_add_zy, t_add_xy, t_fill};
  return xt_run_tier_tests("elementwise", case_names, bodies, C_COUNT);
}
