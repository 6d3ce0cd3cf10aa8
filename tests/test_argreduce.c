/*
 * Conformance of xpar_argmin / xpar_argmax (and their nowait variants) on every
 * tier: every dtype, sizes 1 .. 2^20 + 5 at element offsets 0..3, inputs with
 * the extreme first, last, repeated (ties: the first index), all equal,
 * random, and special floats (NaN of both signs among +-0, +-inf: the first
 * NaN wins, as numpy.argmin / argmax).
 *
 * The oracle is a plain loop written from the header's words.  The index, the
 * value bit for bit (in[index]'s bits), the guards around both outputs and the
 * input are checked; n = 0 is refused with nothing written.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

/* The first NaN, else the first strict extreme. */
static size_t oracle(xpar_dtype t, int is_max, const void *in, size_t n) {
  size_t best = 0;
  long double b = xt_get(t, in, 0);
  if (xt_is_float(t) && isnan(b)) return 0;
  for (size_t i = 1; i < n; i++) {
    const long double v = xt_get(t, in, i);
    if (xt_is_float(t) && isnan(v)) return i;
    if (is_max ? v > b : v < b) {
      b = v;
      best = i;
    }
  }
  return best;
}

static void put_special(xpar_dtype t, void *p, size_t i, uint64_t r) {
  static const double f[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0};
  if (xt_is_float(t)) xt_put(t, p, i, (long double)f[r % 8]);
  else xt_put(t, p, i, r % 2 ? xt_max_value(t) : xt_min_value(t));
}

enum { P_RANDOM, P_SMALL, P_EQUAL, P_FIRST, P_LAST, P_SPECIAL, P_NAN_LATE, P_PATTERNS };
static const char *const pattern_names[P_PATTERNS] = {"random",     "small-ties", "all-equal",
                                                      "extreme-first", "extreme-last", "special",
                                                      "nan-late"};

static const size_t arg_sizes[] = {1,    2,    3,     31,    32,     33,     255,  256,
                                   257,  1000, 4095,  4097,  7919,   65537,  262147,
                                   (1u << 20) + 5};
#define NARG_SIZES (sizeof arg_sizes / sizeof arg_sizes[0])

static void fill(xt_rng *r, xpar_dtype t, void *p, size_t n, int pattern, int is_max) {
  switch (pattern) {
    case P_SMALL:
      if (xt_is_float(t)) xt_fill_random(r, t, p, n, XT_DATA_SMALLINT, 3);
      else
        for (size_t i = 0; i < n; i++) xt_put(t, p, i, (long double)xt_below(r, 4));
      break;
    case P_EQUAL:
      for (size_t i = 0; i < n; i++) xt_put(t, p, i, 7);
      break;
    default: xt_fill_random(r, t, p, n, XT_DATA_RANDOM, 8); break;
  }
  const long double extreme = is_max ? xt_max_value(t) : xt_min_value(t);
  if (pattern == P_FIRST) {
    xt_put(t, p, 0, extreme);
    if (n > 2) xt_put(t, p, n / 2, extreme); /* a tie after it */
  }
  if (pattern == P_LAST) xt_put(t, p, n - 1, extreme);
  if (pattern == P_SPECIAL)
    for (size_t i = xt_below(r, 7); i < n; i += 1 + xt_below(r, 97)) put_special(t, p, i, xt_next(r));
  if (pattern == P_NAN_LATE && xt_is_float(t)) {
    xt_put(t, p, n - 1, NAN);
    if (n > 3) xt_put(t, p, n - 3, -NAN);
  }
}

static void run(void **state, int is_max) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    const size_t es = xt_size(d);
    for (size_t si = 0; si < NARG_SIZES; si++) {
      const size_t n = arg_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      const int large = n > 8192;
      for (int pat = 0; pat < P_PATTERNS; pat++)
        for (int oi = 0; oi < (large ? 1 : XT_NOFFS); oi++) {
          char label[256];
          snprintf(label, sizeof label, "%s/%s/%s/n=%zu/%s/in_off=%zu", is_max ? "argmax" : "argmin",
                   xt_tier_name(st->tier), xt_dname(d), n, pattern_names[pat], xt_offs[oi][0]);
          xt_rng rng;
          xt_rng_for(&rng, label);
          xt_buf in, val, idx;
          xt_buf_alloc(&in, d, n, xt_offs[oi][0]);
          xt_buf_alloc(&val, d, 1, xt_offs[oi][1]);
          xt_buf_alloc(&idx, XPAR_INT64, 1, 0);
          fill(&rng, d, in.p, n, pat, is_max);
          const size_t want = oracle(d, is_max, in.p, n);
          unsigned char *in_orig = xt_buf_copy(&in);
          const int nowait = (pat + oi) % 3 == 0;
          int64_t *ip = (int64_t *)idx.p;
          xpar_status s;
          if (is_max)
            s = nowait ? xpar_argmax_nowait(ctx, d, in.p, n, val.p, ip)
                       : xpar_argmax(ctx, d, in.p, n, val.p, ip);
          else
            s = nowait ? xpar_argmin_nowait(ctx, d, in.p, n, val.p, ip)
                       : xpar_argmin(ctx, d, in.p, n, val.p, ip);
          xt_check_status(label, "call", s, XPAR_OK);
          if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
          xt_check_decision(label, ctx, st->tier, XPAR_OP_ARGREDUCE, d, n);
          if (*ip != (int64_t)want)
            xt_failf(label, "index %lld, expected %zu", (long long)*ip, want);
          xt_check_bytes(label, "value (bitwise, in[index])", val.p, (char *)in.p + want * es, es);
          xt_check_guards(label, "value", &val);
          xt_check_guards(label, "index", &idx);
          xt_check_bytes(label, "input (and its guards) after the call", in.base, in_orig, in.total);
          free(in_orig);
          xt_buf_free(&idx);
          xt_buf_free(&val);
          xt_buf_free(&in);
        }
    }
  }
  /* n = 0: refused, nothing written */
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    char label[96];
    snprintf(label, sizeof label, "%s/%s/%s/n=0", is_max ? "argmax" : "argmin",
             xt_tier_name(st->tier), xt_dname(d));
    xt_buf val, idx;
    xt_buf_alloc(&val, d, 1, 0);
    xt_buf_alloc(&idx, XPAR_INT64, 1, 0);
    const double dummy = 0;
    xpar_status s = is_max ? xpar_argmax(ctx, d, &dummy, 0, val.p, (int64_t *)idx.p)
                           : xpar_argmin(ctx, d, &dummy, 0, val.p, (int64_t *)idx.p);
    xt_check_status(label, "n = 0", s, XPAR_ERR_INVALID_ARGUMENT);
    if (!xpar_last_error_detail()[0]) xt_failf(label, "empty detail");
    if (!xt_is_poison(d, val.p, 1)) xt_failf(label, "value written");
    if (!xt_is_poison(XPAR_INT64, idx.p, 1)) xt_failf(label, "index written");
    xt_buf_free(&idx);
    xt_buf_free(&val);
  }
}

static void argmin(void **state) { run(state, 0); }
static void argmax(void **state) { run(state, 1); }

int main(int argc, char **argv) {
  xt_init("test_argreduce", argc, argv);
  static const char *const names[] = {"argmin", "argmax"};
  static const xt_body bodies[] = {argmin, argmax};
  return xt_run_tier_tests("argreduce", names, bodies, sizeof names / sizeof names[0]);
}
