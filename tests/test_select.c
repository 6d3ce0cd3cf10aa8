/*
 * Conformance of the compaction family on every tier: xpar_select (every
 * predicate), xpar_select_flagged, xpar_partition and xpar_unique, every
 * dtype, in place (select, flagged, unique) and out of place at element
 * offsets 0..3, sizes 0 .. 2^18 + 3, selectivities 0 %, ~1 %, ~50 %, ~99 %
 * and 100 %, runs of every length for unique (all equal, all distinct,
 * random), special floats (NaN of both signs, +-0, +-inf).
 *
 * The oracle is a plain loop written from the header's words (C comparisons:
 * a NaN satisfies only XPAR_NE; unique's equality: -0.0 == +0.0 and NaN ==
 * NaN).  The count, every kept element bit for bit, the output past the count
 * (still its poison: not written), the guards around it and the input (out
 * of place) are checked; nowait variants are waited for.
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

enum { K_SELECT, K_FLAGGED, K_PARTITION, K_UNIQUE };

/* ---- the oracle ---------------------------------------------------------- */

static int holds(xpar_predicate p, long double x, long double v, long double hi) {
  switch (p) {
    case XPAR_LT: return x < v;
    case XPAR_LE: return x <= v;
    case XPAR_EQ: return x == v;
    case XPAR_NE: return x != v;
    case XPAR_GE: return x >= v;
    case XPAR_GT: return x > v;
    default: return v <= x && x < hi;
  }
}

/* unique's equality: the values equal (-0.0 == +0.0), or both NaN */
static int same_key(xpar_dtype t, const void *p, size_t i, size_t j) {
  const long double a = xt_get(t, p, i), b = xt_get(t, p, j);
  if (xt_is_float(t) && isnan(a)) return isnan(b);
  return a == b;
}

/* The expected output (n slots) and count. */
static size_t oracle(int kind, xpar_dtype t, xpar_predicate p, const void *value, const void *hi,
                     const void *in, const unsigned char *flags, size_t n, unsigned char *want) {
  const size_t es = xt_size(t);
  const long double v = value ? xt_get(t, value, 0) : 0, h = hi ? xt_get(t, hi, 0) : 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int keep;
    if (kind == K_FLAGGED) keep = flags[i] != 0;
    else if (kind == K_UNIQUE) keep = i == 0 || !same_key(t, in, i, i - 1);
    else keep = holds(p, xt_get(t, in, i), v, h);
    if (keep) memcpy(want + k++ * es, (const char *)in + i * es, es);
  }
  if (kind == K_PARTITION) {
    size_t r = k;
    for (size_t i = 0; i < n; i++)
      if (!holds(p, xt_get(t, in, i), v, h)) memcpy(want + r++ * es, (const char *)in + i * es, es);
  }
  return k;
}

/* ---- inputs ---------------------------------------------------------------- */

static void put_special(xpar_dtype t, void *p, size_t i, uint64_t r) {
  static const double f[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0};
  if (xt_is_float(t)) xt_put(t, p, i, (long double)f[r % 8]);
  else xt_put(t, p, i, (long double)(r % 3));
}

/* Data with runs: run lengths from 1 to max_run (1: all distinct). */
static void fill_runs(xt_rng *r, xpar_dtype t, void *p, size_t n, int max_run, int specials) {
  size_t i = 0;
  while (i < n) {
    size_t len = 1 + (size_t)xt_below(r, (uint64_t)max_run);
    unsigned char v[8];
    xt_random_scalar(r, t, v, XT_DATA_RANDOM, 8);
    const uint64_t sr = xt_next(r);
    for (size_t j = 0; j < len && i < n; j++, i++) {
      memcpy((char *)p + i * xt_size(t), v, xt_size(t));
      if (specials && (sr & 3) == 0) put_special(t, p, i, sr >> 2 ^ j);
    }
  }
}

static const size_t sel_sizes[] = {0,    1,    2,    3,    31,    32,   33,   255,
                                   256,  257,  1000, 4095, 4097,  7919, 65537, 262147};
#define NSEL_SIZES (sizeof sel_sizes / sizeof sel_sizes[0])

static const char *kind_name(int k) {
  return k == K_SELECT ? "select" : k == K_FLAGGED ? "select_flagged"
                                  : k == K_PARTITION ? "partition" : "unique";
}

static void run_kind(void **state, int kind) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    const size_t es = xt_size(d);
    for (size_t si = 0; si < NSEL_SIZES; si++) {
      const size_t n = sel_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      const int large = n > 8192;
      /* variants: a selectivity (select, flagged, partition) or a run shape (unique) */
      for (int var = 0; var < 5; var++) {
        for (int oi = 0; oi < (large ? 1 : XT_NOFFS); oi++) {
          for (int inplace = 0; inplace < (kind == K_PARTITION ? 1 : 2); inplace++) {
            char label[256];
            const xpar_predicate pred = (xpar_predicate)((var + oi + (int)si) % XPAR_PREDICATE_COUNT_);
            snprintf(label, sizeof label, "%s/%s/%s/n=%zu/variant=%d/pred=%d/in_off=%zu/%s",
                     kind_name(kind), xt_tier_name(st->tier), xt_dname(d), n, var, (int)pred,
                     xt_offs[oi][0], inplace ? "in-place" : "out-of-place");
            xt_rng rng;
            xt_rng_for(&rng, label);
            xt_buf in, out;
            xt_buf_alloc(&in, d, n, xt_offs[oi][0]);
            unsigned char *flags = (unsigned char *)malloc(n + 1);
            unsigned char value[8] = {0}, hi[8] = {0};
            assert_non_null(flags);
            if (kind == K_UNIQUE) {
              const int max_run[5] = {1, 2, 5, 64, 1 << 30};
              fill_runs(&rng, d, in.p, n, max_run[var], var == 2);
            } else {
              xt_fill_random(&rng, d, in.p, n, XT_DATA_RANDOM, 8);
              if (var == 4) /* special floats among the values */
                for (size_t i = 0; i < n; i += 7) put_special(d, in.p, i, xt_next(&rng));
              /* the predicate's value: another element (selectivity varies with the
               * predicate), or a value below / above everything for 0 % / 100 % */
              if (n && var < 3) memcpy(value, (char *)in.p + xt_below(&rng, n) * es, es);
              else xt_put(d, value, 0, var == 3 ? xt_min_value(d) : xt_max_value(d));
              if (n && var < 3) memcpy(hi, (char *)in.p + xt_below(&rng, n) * es, es);
              else xt_put(d, hi, 0, xt_max_value(d));
              const uint64_t pct[5] = {0, 1, 50, 99, 100};
              for (size_t i = 0; i < n; i++)
                flags[i] = (unsigned char)(xt_below(&rng, 100) < pct[var] ? 1 + (xt_next(&rng) % 255) : 0);
            }
            unsigned char *want = (unsigned char *)malloc(n * es + 1);
            assert_non_null(want);
            const size_t want_k = oracle(kind, d, pred, value, hi, in.p, flags, n, want);
            unsigned char *in_orig = xt_buf_copy(&in);
            xt_buf *o = &in;
            if (!inplace) {
              xt_buf_alloc(&out, d, n, xt_offs[oi][1]);
              o = &out;
            }
            unsigned char *out_orig = xt_buf_copy(o); /* in place: the input itself */
            const int nowait = (var + oi) % 3 == 0;
            size_t count = (size_t)0xdeadbeefcafe;
            xpar_status s;
            const void *hip = pred == XPAR_IN_RANGE ? (const void *)hi : NULL;
            switch (kind) {
              case K_SELECT:
                s = nowait ? xpar_select_nowait(ctx, d, pred, value, hip, in.p, o->p, n, &count)
                           : xpar_select(ctx, d, pred, value, hip, in.p, o->p, n, &count);
                break;
              case K_FLAGGED:
                s = nowait ? xpar_select_flagged_nowait(ctx, d, in.p, flags, o->p, n, &count)
                           : xpar_select_flagged(ctx, d, in.p, flags, o->p, n, &count);
                break;
              case K_PARTITION:
                s = nowait ? xpar_partition_nowait(ctx, d, pred, value, hip, in.p, o->p, n, &count)
                           : xpar_partition(ctx, d, pred, value, hip, in.p, o->p, n, &count);
                break;
              default:
                s = nowait ? xpar_unique_nowait(ctx, d, in.p, o->p, n, &count)
                           : xpar_unique(ctx, d, in.p, o->p, n, &count);
                break;
            }
            xt_check_status(label, "call", s, XPAR_OK);
            if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
            xt_check_decision(label, ctx, st->tier, XPAR_OP_SELECT, d, n);
            if (count != want_k) xt_failf(label, "count %zu, expected %zu", count, want_k);
            const size_t written = kind == K_PARTITION ? n : want_k;
            xt_check_bytes(label, "kept elements (bitwise)", o->p, want, written * es);
            /* past the count: what was there before the call */
            const size_t head = (size_t)((unsigned char *)o->p - o->base);
            xt_check_bytes(label, "output past the count, and the guards",
                           (unsigned char *)o->p + written * es,
                           out_orig + head + written * es, o->total - head - written * es);
            xt_check_bytes(label, "bytes before the output", o->base, out_orig, head);
            if (!inplace)
              xt_check_bytes(label, "input (and its guards) after the call", in.base, in_orig,
                             in.total);
            free(out_orig);
            free(in_orig);
            free(want);
            free(flags);
            if (!inplace) xt_buf_free(&out);
            xt_buf_free(&in);
          }
        }
      }
    }
  }
}

static void select_if(void **state) { run_kind(state, K_SELECT); }
static void select_flagged(void **state) { run_kind(state, K_FLAGGED); }
static void partition(void **state) { run_kind(state, K_PARTITION); }
static void unique(void **state) { run_kind(state, K_UNIQUE); }

int main(int argc, char **argv) {
  xt_init("test_select", argc, argv);
  static const char *const names[] = {"select", "select_flagged", "partition", "unique"};
  static const xt_body bodies[] = {select_if, select_flagged, partition, unique};
  return xt_run_tier_tests("select", names, bodies, sizeof names / sizeof names[0]);
}
