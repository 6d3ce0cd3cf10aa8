/*
 * Conformance of xpar_reduce (SUM, MIN, MAX) and xpar_reduce_sum_wide on every
 * tier: every dtype, sizes 0 .. 2^20 + 3, inputs at element offsets 0..3,
 * fresh seeded inputs, a poisoned result, the input left untouched.
 * Floats are checked against a long double sum with a tolerance of
 * 2 n eps sum|x|, and once more on small integers, where every order of
 * summation is exact; the serial CPU tier must also equal an element-order
 * loop bit for bit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

typedef enum { K_SUM, K_MIN, K_MAX, K_SUM_WIDE } kind_t;
static const char *const kind_names[] = {"reduce_sum", "reduce_min", "reduce_max",
                                         "reduce_sum_wide"};

static void run_kind(void **state, kind_t kind) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const char *tier = xt_tier_name(st->tier);
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype d = xt_dtypes[di];
    xpar_dtype rd = kind == K_SUM_WIDE ? xt_wide(d) : d;
    for (int si = 0; si < XT_NSIZES; si++) {
      size_t n = xt_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      for (int oi = 0; oi < XT_NOFFS; oi++) {
        size_t off = xt_offs[oi][0];
        for (int var = 0; var < (xt_is_float(d) ? 2 : 1); var++) {
          int exact = var == 1;
          char label[256];
          snprintf(label, sizeof label, "%s/%s/%s/n=%zu/in_off=%zu/%s", kind_names[kind], tier,
                   xt_dname(d), n, off, exact ? "smallint" : "random");
          xt_rng rng;
          xt_rng_for(&rng, label);
          xt_buf in, res;
          xt_buf_alloc(&in, d, n, off);
          xt_fill_random(&rng, d, in.p, n, exact ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
          unsigned char *orig = xt_buf_copy(&in);
          xt_buf_alloc(&res, rd, 1, 0);

          xpar_status s;
          xpar_op op = XPAR_OP_REDUCE;
          if (kind == K_SUM_WIDE) s = xpar_reduce_sum_wide(ctx, d, in.p, n, res.p);
          else
            s = xpar_reduce(ctx, d, kind == K_SUM ? XPAR_SUM : kind == K_MIN ? XPAR_MIN : XPAR_MAX,
                            in.p, n, res.p);
          xt_check_status(label, "call", s, XPAR_OK);
          xt_check_decision(label, ctx, st->tier, op, d, n);

          xt_expect e;
          if (kind == K_SUM_WIDE) e = xt_ref_sum_wide(d, in.p, n, exact);
          else
            e = xt_ref_reduce(d, kind == K_SUM ? XPAR_SUM : kind == K_MIN ? XPAR_MIN : XPAR_MAX,
                              in.p, n, exact);
          xt_check_scalar(label, "result", rd, res.p, e);
          xt_check_guards(label, "result", &res);
          xt_check_bytes(label, "input (and its guards) after the call", in.base, orig, in.total);

          /* The serial tier adds in element order, in the accumulator type. */
          if (st->tier == XT_CPU_SERIAL && xt_is_float(d) && (kind == K_SUM || kind == K_SUM_WIDE)) {
            unsigned char want[8];
            if (kind == K_SUM) xt_serial_sum(d, in.p, n, want);
            else xt_serial_sum_wide(d, in.p, n, want);
            xt_check_bytes(label, "cpu-serial result vs element-order loop (bitwise)", res.p, want,
                           xt_size(rd));
          }

          /* n = 0 accepts a NULL input and still writes the identity. */
          if (n == 0) {
            xt_buf_poison(&res);
            if (kind == K_SUM_WIDE) s = xpar_reduce_sum_wide(ctx, d, NULL, 0, res.p);
            else
              s = xpar_reduce(ctx, d,
                              kind == K_SUM ? XPAR_SUM : kind == K_MIN ? XPAR_MIN : XPAR_MAX, NULL,
                              0, res.p);
            xt_check_status(label, "call with in == NULL, n == 0", s, XPAR_OK);
            xt_check_scalar(label, "result with in == NULL, n == 0", rd, res.p, e);
            xt_check_guards(label, "result with in == NULL", &res);
          }
          free(orig);
          xt_buf_free(&in);
          xt_buf_free(&res);
        }
      }
    }
  }
}

static void reduce_sum(void **state) { run_kind(state, K_SUM); }
static void reduce_min(void **state) { run_kind(state, K_MIN); }
static void reduce_max(void **state) { run_kind(state, K_MAX); }
static void reduce_sum_wide(void **state) { run_kind(state, K_SUM_WIDE); }

/* Extremes: min/max find the type's own limits, sums wrap at them. */
static void reduce_extremes(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const char *tier = xt_tier_name(st->tier);
  const size_t n = 4099; /* crosses blocks at any shape, not a power of two */
  for (int di = 0; di < XT_NDTYPES; di++) {
    xpar_dtype d = xt_dtypes[di];
    if (xt_is_float(d)) continue;
    for (size_t pos = 0; pos < n; pos += 1365) { /* extremes first, middle, last */
      char label[256];
      snprintf(label, sizeof label, "reduce_extremes/%s/%s/n=%zu/at=%zu", tier, xt_dname(d), n, pos);
      xt_rng rng;
      xt_rng_for(&rng, label);
      xt_buf in, res;
      xt_buf_alloc(&in, d, n, 1);
      xt_fill_random(&rng, d, in.p, n, XT_DATA_RANDOM, 0);
      xt_put(d, in.p, pos, xt_max_value(d));
      xt_put(d, in.p, n - 1 - pos, xt_min_value(d));
      xt_buf_alloc(&res, d, 1, 0);
      const xpar_reduction ops[] = {XPAR_MIN, XPAR_MAX, XPAR_SUM};
      for (int k = 0; k < 3; k++) {
        xt_buf_poison(&res);
        xt_check_status(label, "call", xpar_reduce(ctx, d, ops[k], in.p, n, res.p), XPAR_OK);
        xt_check_scalar(label, ops[k] == XPAR_MIN ? "min" : ops[k] == XPAR_MAX ? "max" : "sum", d,
                        res.p, xt_ref_reduce(d, ops[k], in.p, n, 0));
      }
      xt_buf_free(&in);
      xt_buf_free(&res);
    }
  }
}

/* A float sum, wide sum or dot on the CPU does not depend on where the array
 * lies: the same values at every 4- or 8-byte offset inside a cache line give
 * the same bits (the integer loops start at a 32-byte boundary, the float
 * ones keep their lane order, from a 64-byte boundary with the lanes rotated
 * on long chunks: backend_cpu/cpu_reduce.c).  The GPU tiers'
 * vector loads may group a misaligned head differently: CPU tiers only. */
static void float_sums_ignore_the_address(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  if (xt_tier_is_gpu(st->tier)) skip();
  xpar_context *ctx = xt_tier_open(st);
  /* The calls compared must run on one tier: AUTO's adaptation may move one
   * call and not the next on a loaded machine (xpar.h, xpar_context_set_adapt),
   * and float sums depend on the tier.  Adaptation is tested in test_adapt.c. */
  assert_int_equal(xpar_context_set_adapt(ctx, 0), XPAR_OK);
  /* 16411: one chunk past the size from which the float loops start at a 64-byte
   * boundary with rotated lanes (a sum of 64 KiB, a dot of 16 KiB), a tail after it */
  const size_t sizes[] = {1000, 16411, 100003};
  const xpar_dtype dts[] = {XPAR_FLOAT, XPAR_DOUBLE};
  for (int di = 0; di < 2; di++)
    for (int si = 0; si < 3; si++) {
      const xpar_dtype d = dts[di];
      const size_t n = sizes[si], size = xt_size(d);
      char label[160];
      snprintf(label, sizeof label, "float_sums_ignore_the_address/%s/%s/n=%zu",
               xt_tier_name(st->tier), xt_dname(d), n);
      xt_rng rng;
      xt_rng_for(&rng, label);
      unsigned char *vals = malloc(2 * n * size);
      /* aligned_alloc's size: a multiple of the alignment (ASan refuses others) */
      unsigned char *buf = aligned_alloc(64, ((2 * n + 64) * size + 63) / 64 * 64);
      assert_non_null(vals);
      assert_non_null(buf);
      xt_fill_random(&rng, d, vals, 2 * n, XT_DATA_RANDOM, 8);
      unsigned char first[3][8];
      for (size_t k = 0; k < 64 / size; k++) {
        unsigned char *x = buf + k * size, *y = x + n * size, got[3][8];
        memcpy(x, vals, 2 * n * size);
        xt_check_status(label, "sum", xpar_reduce(ctx, d, XPAR_SUM, x, n, got[0]), XPAR_OK);
        xt_check_status(label, "wide sum", xpar_reduce_sum_wide(ctx, d, x, n, got[1]), XPAR_OK);
        xt_check_status(label, "dot", xpar_dot(ctx, d, x, y, n, got[2]), XPAR_OK);
        if (k == 0) memcpy(first, got, sizeof first);
        const size_t bytes[3] = {size, 8, size};
        for (int r = 0; r < 3; r++)
          if (memcmp(got[r], first[r], bytes[r]) != 0)
            xt_failf(label, "the %s at byte offset %zu differs from the one at offset 0",
                     r == 0 ? "sum" : r == 1 ? "wide sum" : "dot", k * size);
      }
      free(vals);
      free(buf);
    }
}

int main(int argc, char **argv) {
  xt_init("test_reduce", argc, argv);
  static const char *const names[] = {"reduce_sum",      "reduce_min",      "reduce_max",
                                      "reduce_sum_wide", "reduce_extremes",
                                      "float_sums_ignore_the_address"};
  static const xt_body bodies[] = {reduce_sum,      reduce_min,      reduce_max,
                                   reduce_sum_wide, reduce_extremes, float_sums_ignore_the_address};
  return xt_run_tier_tests("reduce", names, bodies, sizeof names / sizeof names[0]);
}
