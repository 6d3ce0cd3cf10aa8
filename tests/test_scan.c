/*
 * Conformance of xpar_scan and xpar_scan_init on every tier: inclusive and
 * exclusive, SUM, MIN and MAX, out of place (input and output at different
 * element offsets) and in place (out == in), every dtype, sizes 0 .. 2^20 + 3;
 * xpar_scan_init from a random carry-in (never the identity).  Every output
 * element is checked (ints exactly, wrapping; floats against a long double
 * prefix sum with a tolerance of 2 k eps sum|terms| for an element that folds
 * k terms, init included, and exactly on small integers); the guard zones
 * around the output and the whole input must be untouched.  The serial CPU
 * tier must equal an element-order loop (from init) bit for bit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

static const char *op_name(xpar_reduction op) {
  return op == XPAR_SUM ? "sum" : op == XPAR_MIN ? "min" : "max";
}

static void run_scan(void **state, xpar_scan_kind kind, xpar_reduction op, int with_init) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const char *tier = xt_tier_name(st->tier);
  const char *kname = kind == XPAR_INCLUSIVE ? "inclusive" : "exclusive";
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype d = xt_dtypes[di];
    for (int si = 0; si < XT_NSIZES; si++) {
      size_t n = xt_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      xt_expect *exp = (xt_expect *)malloc((n ? n : 1) * sizeof *exp);
      assert_non_null(exp);
      for (int oi = 0; oi < XT_NOFFS; oi++) {
        for (int inplace = 0; inplace < 2; inplace++) {
          size_t in_off = xt_offs[oi][0], out_off = inplace ? in_off : xt_offs[oi][1];
          for (int var = 0; var < (xt_is_float(d) ? 2 : 1); var++) {
            int exact = var == 1;
            char label[256];
            snprintf(label, sizeof label, "scan%s_%s_%s/%s/%s/n=%zu/in_off=%zu/out_off=%zu/%s/%s",
                     with_init ? "_init" : "", kname, op_name(op), tier, xt_dname(d), n, in_off,
                     out_off, inplace ? "in-place" : "out-of-place",
                     exact ? "smallint" : "random");
            xt_rng rng;
            xt_rng_for(&rng, label);
            xt_buf in, out;
            xt_buf_alloc(&in, d, n, in_off);
            xt_fill_random(&rng, d, in.p, n, exact ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
            /* A carry-in that is not the identity: random floats are never 0
             * or infinite (small integers are redrawn until not 0), random
             * integers hit 0 or an extreme with probability 2^-32 or less. */
            unsigned char init_value[8];
            do
              xt_random_scalar(&rng, d, init_value, exact ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
            while (exact && xt_get(d, init_value, 0) == 0);
            const void *init = with_init ? init_value : NULL;
            unsigned char *orig = xt_buf_copy(&in);
            xt_ref_scan(d, op, kind, init, in.p, n, exact, exp);
            unsigned char *serial = NULL;
            if (st->tier == XT_CPU_SERIAL && op == XPAR_SUM && xt_is_float(d)) {
              serial = (unsigned char *)malloc(n * xt_size(d) + 1);
              assert_non_null(serial);
              xt_serial_scan_sum(d, kind, init, in.p, n, serial);
            }
            xt_buf *o = &in;
            if (!inplace) {
              xt_buf_alloc(&out, d, n, out_off);
              o = &out;
            }

            xpar_status s = with_init ? xpar_scan_init(ctx, d, op, kind, init, in.p, o->p, n)
                                      : xpar_scan(ctx, d, op, kind, in.p, o->p, n);
            xt_check_status(label, "call", s, XPAR_OK);
            xt_check_decision(label, ctx, st->tier, XPAR_OP_SCAN, d, n);
            xt_check_array(label, "output", d, o->p, exp, n);
            xt_check_guards(label, "output", o);
            if (!inplace) {
              xt_check_bytes(label, "input (and its guards) after the call", in.base, orig,
                             in.total);
            }
            if (serial) {
              xt_check_bytes(label, "cpu-serial output vs element-order loop (bitwise)", o->p,
                             serial, n * xt_size(d));
            }
            if (n == 0 && !with_init) {
              /* NULL arrays are fine with n == 0; nothing is written. */
              s = xpar_scan(ctx, d, op, kind, NULL, NULL, 0);
              xt_check_status(label, "call with NULL arrays, n == 0", s, XPAR_OK);
              s = xpar_scan(ctx, d, op, kind, in.p, o->p, 0);
              xt_check_status(label, "call with n == 0", s, XPAR_OK);
              xt_check_guards(label, "output of n == 0", o);
            } else if (n == 0) {
              /* ... and so is a NULL init. */
              s = xpar_scan_init(ctx, d, op, kind, NULL, NULL, NULL, 0);
              xt_check_status(label, "call with NULL init and arrays, n == 0", s, XPAR_OK);
              s = xpar_scan_init(ctx, d, op, kind, NULL, in.p, o->p, 0);
              xt_check_status(label, "call with NULL init, n == 0", s, XPAR_OK);
              xt_check_guards(label, "output of n == 0", o);
            }
            free(serial);
            free(orig);
            if (!inplace) xt_buf_free(&out);
            xt_buf_free(&in);
          }
        }
      }
      free(exp);
    }
  }
}

#define SCAN_TEST(K, O, k, o)                                                   \
  static void scan_##k##_##o(void **state) { run_scan(state, K, O, 0); }        \
  static void scan_init_##k##_##o(void **state) { run_scan(state, K, O, 1); }
SCAN_TEST(XPAR_INCLUSIVE, XPAR_SUM, inclusive, sum)
SCAN_TEST(XPAR_INCLUSIVE, XPAR_MIN, inclusive, min)
SCAN_TEST(XPAR_INCLUSIVE, XPAR_MAX, inclusive, max)
SCAN_TEST(XPAR_EXCLUSIVE, XPAR_SUM, exclusive, sum)
SCAN_TEST(XPAR_EXCLUSIVE, XPAR_MIN, exclusive, min)
SCAN_TEST(XPAR_EXCLUSIVE, XPAR_MAX, exclusive, max)

int main(int argc, char **argv) {
  xt_init("test_scan", argc, argv);
  static const char *const names[] = {
      "scan_inclusive_sum",      "scan_inclusive_min",      "scan_inclusive_max",
      "scan_exclusive_sum",      "scan_exclusive_min",      "scan_exclusive_max",
      "scan_init_inclusive_sum", "scan_init_inclusive_min", "scan_init_inclusive_max",
      "scan_init_exclusive_sum", "scan_init_exclusive_min", "scan_init_exclusive_max"};
  static const xt_body bodies[] = {
      scan_inclusive_sum,      scan_inclusive_min,      scan_inclusive_max,
      scan_exclusive_sum,      scan_exclusive_min,      scan_exclusive_max,
      scan_init_inclusive_sum, scan_init_inclusive_min, scan_init_inclusive_max,
      scan_init_exclusive_sum, scan_init_exclusive_min, scan_init_exclusive_max};
  return xt_run_tier_tests("scan", names, bodies, sizeof names / sizeof names[0]);
}
