/*
 * Conformance of the histogram on every tier: xpar_histogram_even and
 * xpar_histogram_range (and their nowait variants), every dtype, samples at
 * element offsets 0..3, n = 0, 1, primes .. 2^18 + 3, 1, 2, 7, 32, 256, 4,096
 * and 100,000 bins (and one histogram past the CPU's private-histogram limit),
 * uniform and skewed samples, edge samples (lo, hi, just below hi, just below
 * and above lo, NaN of both signs, +-inf, -0.0, the dtype's extremes), ranges
 * that overflow a naive subtraction (INT64_MIN .. INT64_MAX, -DBL_MAX ..
 * DBL_MAX) and ranges of one unit.
 *
 * The oracle is written from the header's words, independently of the
 * library: integers with 128-bit integer arithmetic, floats with the stated
 * double formula, range bins by a linear scan of the boundaries.  Every count
 * is checked exactly, the guards around the counts (which start poisoned) and
 * the samples after the call.
 */
#include <float.h>
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

/* ---- the oracle ---------------------------------------------------------- */

typedef __int128 i128;

/* An integer element as a 128-bit value (exact for every integer dtype). */
static i128 int_at(xpar_dtype t, const void *p, size_t i) {
  const uint64_t bits = xt_bits(t, p, i);
  switch (t) {
    case XPAR_INT32: return (i128)(int32_t)(uint32_t)bits;
    case XPAR_INT64: return (i128)(int64_t)bits;
    case XPAR_UINT32: return (i128)(uint32_t)bits;
    default: return (i128)bits;
  }
}

static double dbl_at(xpar_dtype t, const void *p, size_t i) {
  if (t == XPAR_FLOAT) {
    float f;
    memcpy(&f, (const char *)p + i * 4, 4);
    return f;
  }
  double d;
  memcpy(&d, (const char *)p + i * 8, 8);
  return d;
}

/* The even bin of sample i, or -1: the header's definition. */
static long long even_bin(xpar_dtype t, const void *x, size_t i, const void *lo, const void *hi,
                          size_t nb) {
  if (!xt_is_float(t)) {
    const i128 v = int_at(t, x, i), l = int_at(t, lo, 0), h = int_at(t, hi, 0);
    if (v < l || v >= h) return -1;
    const unsigned __int128 q = (unsigned __int128)(v - l) * nb / (unsigned __int128)(h - l);
    return (long long)q;
  }
  const double v = dbl_at(t, x, i), l = dbl_at(t, lo, 0), h = dbl_at(t, hi, 0);
  if (!(v >= l && v < h)) return -1;
  volatile double w = h - l, f, tt;
  if (isfinite(w)) {
    volatile double d = v - l;
    f = d / w;
  } else {
    volatile double a = v * 0.5, b = l * 0.5, c = h * 0.5;
    volatile double d = a - b, e = c - b;
    f = d / e;
  }
  tt = f * (double)nb;
  long long b = (long long)tt;
  return b < (long long)nb ? b : (long long)nb - 1;
}

/* a < b, C's comparisons (floats in double: exact for float). */
static int less_at(xpar_dtype t, const void *a, size_t i, const void *b, size_t j) {
  if (xt_is_float(t)) return dbl_at(t, a, i) < dbl_at(t, b, j);
  return int_at(t, a, i) < int_at(t, b, j);
}

/* The range bin of sample i, or -1: the last i with b[i] <= x, when below b[nb]. */
static long long range_bin(xpar_dtype t, const void *x, size_t i, const void *b, size_t nb) {
  if (xt_is_float(t) && isnan(dbl_at(t, x, i))) return -1;
  if (less_at(t, x, i, b, 0) || !less_at(t, x, i, b, nb)) return -1;
  long long k = 0;
  for (size_t j = 1; j < nb; j++)
    if (!less_at(t, x, i, b, j)) k = (long long)j; /* b[j] <= x */
  return k;
}

/* ---- inputs ---------------------------------------------------------------- */

static void put_dbl(xpar_dtype t, void *p, size_t i, double v) {
  if (t == XPAR_FLOAT) {
    float f = (float)v;
    memcpy((char *)p + i * 4, &f, 4);
  } else {
    memcpy((char *)p + i * 8, &v, 8);
  }
}

/* The range of case r: 0 random, 1 the dtype's widest, 2 one unit / a few ulps,
 * 3 a narrow range inside the data (skewed: most samples outside). */
static void pick_range(xt_rng *r, xpar_dtype t, int which, unsigned char *lo, unsigned char *hi) {
  const size_t es = xt_size(t);
  for (;;) {
    if (which == 1) {
      if (t == XPAR_FLOAT) {
        put_dbl(t, lo, 0, -FLT_MAX);
        put_dbl(t, hi, 0, FLT_MAX);
      } else if (t == XPAR_DOUBLE) {
        put_dbl(t, lo, 0, -DBL_MAX);
        put_dbl(t, hi, 0, DBL_MAX);
      } else {
        xt_put(t, lo, 0, xt_min_value(t));
        xt_put(t, hi, 0, xt_max_value(t));
      }
      return;
    }
    xt_random_scalar(r, t, lo, XT_DATA_RANDOM, 8);
    if (which == 2) {
      if (xt_is_float(t)) {
        const double l = dbl_at(t, lo, 0);
        double h = l;
        for (int k = 0; k < 3; k++)
          h = t == XPAR_FLOAT ? (double)nextafterf((float)h, INFINITY) : nextafter(h, INFINITY);
        put_dbl(t, hi, 0, h);
      } else {
        const i128 l = int_at(t, lo, 0);
        if (l >= (i128)xt_max_value(t) - 3) continue;
        xt_put(t, hi, 0, (long double)(l + 1 + (i128)xt_below(r, 3)));
      }
    } else {
      xt_random_scalar(r, t, hi, XT_DATA_RANDOM, 8);
      if (which == 3 && !xt_is_float(t)) { /* a narrow window above lo */
        const i128 l = int_at(t, lo, 0);
        const i128 span = ((i128)xt_max_value(t) - (i128)xt_min_value(t)) >> 6;
        if (l + span > (i128)xt_max_value(t)) continue;
        xt_put(t, hi, 0, (long double)(l + span));
      }
    }
    if (less_at(t, lo, 0, hi, 0)) return;
    if (less_at(t, hi, 0, lo, 0)) { /* swap */
      unsigned char tmp[8];
      memcpy(tmp, lo, es);
      memcpy(lo, hi, es);
      memcpy(hi, tmp, es);
      return;
    }
  }
}

/* Samples: random in and around [lo, hi) (or over the whole dtype), skewed
 * ones (a few values repeated), and the edge samples scattered in. */
static void fill_samples(xt_rng *r, xpar_dtype t, void *x, size_t n, const void *lo,
                         const void *hi, int skewed) {
  const size_t es = xt_size(t);
  unsigned char few[4][8];
  for (int k = 0; k < 4; k++) xt_random_scalar(r, t, few[k], XT_DATA_RANDOM, 8);
  if (xt_is_float(t)) {
    const double l = dbl_at(t, lo, 0), h = dbl_at(t, hi, 0);
    for (int k = 0; k < 4; k++) put_dbl(t, few[k], 0, l + (h * 0.5 - l * 0.5) * (double)k * 0.5);
  } else {
    for (int k = 0; k < 4; k++) memcpy(few[k], k & 1 ? lo : few[k], es);
  }
  for (size_t i = 0; i < n; i++) {
    const uint64_t c = xt_below(r, 16);
    if (skewed && c < 12) {
      memcpy((char *)x + i * es, few[c & 3], es);
    } else if (xt_is_float(t) && c < 10) { /* inside the range */
      const double l = dbl_at(t, lo, 0), h = dbl_at(t, hi, 0);
      const double u = (double)xt_below(r, 1u << 30) / (double)(1u << 30);
      double v = l * 0.5 + (h * 0.5 - l * 0.5) * u;
      v = v + v; /* l + (h - l) u without overflowing */
      if (!(v >= l && v < h)) v = l;
      put_dbl(t, x, i, v);
    } else if (!xt_is_float(t) && c < 10) { /* inside the range */
      const i128 l = int_at(t, lo, 0), h = int_at(t, hi, 0);
      const unsigned __int128 span = (unsigned __int128)(h - l);
      const unsigned __int128 off = ((unsigned __int128)xt_next(r) << 64 | xt_next(r)) % span;
      xt_put(t, x, i, (long double)(l + (i128)off));
    } else {
      xt_random_scalar(r, t, (char *)x + i * es, XT_DATA_RANDOM, 8);
    }
  }
  /* the edges, at random places */
  if (n == 0) return;
  for (int e = 0; e < 12; e++) {
    const size_t i = xt_below(r, n);
    if (xt_is_float(t)) {
      const double l = dbl_at(t, lo, 0), h = dbl_at(t, hi, 0);
      const int f = t == XPAR_FLOAT;
      const double v[12] = {l,
                            h,
                            f ? (double)nextafterf((float)h, -INFINITY) : nextafter(h, -INFINITY),
                            f ? (double)nextafterf((float)l, -INFINITY) : nextafter(l, -INFINITY),
                            f ? (double)nextafterf((float)l, INFINITY) : nextafter(l, INFINITY),
                            NAN,
                            -NAN,
                            INFINITY,
                            -INFINITY,
                            -0.0,
                            0.0,
                            f ? (double)FLT_MAX : DBL_MAX};
      put_dbl(t, x, i, v[e]);
    } else {
      const i128 l = int_at(t, lo, 0), h = int_at(t, hi, 0);
      const i128 mn = (i128)xt_min_value(t), mx = (i128)xt_max_value(t);
      const i128 v[12] = {l, h, h - 1, l > mn ? l - 1 : l, l + 1 < h ? l + 1 : l, mn, mx, 0,
                          mn + 1, mx - 1, h < mx ? h + 1 : h, (l + h) / 2};
      xt_put(t, x, i, (long double)v[e]);
    }
  }
}

/* Boundaries for a range histogram: nb + 1 sorted values, some repeated
 * (empty bins), the samples' edges among them. */
static int cmp_dtype;
static int cmp_elems(const void *a, const void *b) {
  return less_at((xpar_dtype)cmp_dtype, a, 0, b, 0) ? -1
         : less_at((xpar_dtype)cmp_dtype, b, 0, a, 0) ? 1
                                                       : 0;
}
static void make_boundaries(xt_rng *r, xpar_dtype t, void *b, size_t nb, const void *x,
                            size_t n) {
  const size_t es = xt_size(t);
  for (size_t i = 0; i <= nb; i++) {
    if (n && xt_below(r, 4) == 0) {
      memcpy((char *)b + i * es, (const char *)x + xt_below(r, n) * es, es);
      if (xt_is_float(t) && isnan(dbl_at(t, b, i))) put_dbl(t, b, i, 1.0);
    } else if (i > 0 && xt_below(r, 8) == 0) {
      memcpy((char *)b + i * es, (char *)b + (i - 1) * es, es); /* a repeat */
    } else {
      xt_random_scalar(r, t, (char *)b + i * es, XT_DATA_RANDOM, 8);
    }
  }
  cmp_dtype = (int)t;
  qsort(b, nb + 1, es, cmp_elems);
}

/* ---- the cases --------------------------------------------------------------- */

static const size_t hist_sizes[] = {0, 1, 2, 3, 31, 257, 1000, 4097, 7919, 65537, 262147};
#define NHIST_SIZES (sizeof hist_sizes / sizeof hist_sizes[0])
static const size_t hist_bins[] = {1, 2, 7, 32, 256, 4096, 100000};
#define NHIST_BINS (sizeof hist_bins / sizeof hist_bins[0])

static void run_case(xt_tier_state *st, xpar_context *ctx, int range, xpar_dtype d, size_t n,
                     size_t nb, int which, int skewed, size_t off, int nowait) {
  char label[256];
  snprintf(label, sizeof label, "histogram_%s/%s/%s/n=%zu/bins=%zu/range=%d/skewed=%d/off=%zu%s",
           range ? "range" : "even", xt_tier_name(st->tier), xt_dname(d), n, nb, which, skewed,
           off, nowait ? "/nowait" : "");
  xt_rng rng;
  xt_rng_for(&rng, label);
  const size_t es = xt_size(d);
  unsigned char lo[8] = {0}, hi[8] = {0};
  pick_range(&rng, d, which, lo, hi);
  xt_buf x, counts;
  xt_buf_alloc(&x, d, n, off);
  fill_samples(&rng, d, x.p, n, lo, hi, skewed);
  void *bounds = NULL;
  if (range) {
    bounds = malloc((nb + 1) * es);
    assert_non_null(bounds);
    make_boundaries(&rng, d, bounds, nb, x.p, n);
  }
  xt_buf_alloc(&counts, XPAR_UINT64, nb, 0);
  uint64_t *want = (uint64_t *)calloc(nb, sizeof *want);
  assert_non_null(want);
  for (size_t i = 0; i < n; i++) {
    const long long b = range ? range_bin(d, x.p, i, bounds, nb) : even_bin(d, x.p, i, lo, hi, nb);
    if (b >= 0) want[b]++;
  }
  unsigned char *x_orig = xt_buf_copy(&x);
  unsigned char *c_orig = xt_buf_copy(&counts);
  xpar_status s;
  if (range)
    s = nowait ? xpar_histogram_range_nowait(ctx, d, x.p, n, bounds, nb, (uint64_t *)counts.p)
               : xpar_histogram_range(ctx, d, x.p, n, bounds, nb, (uint64_t *)counts.p);
  else
    s = nowait ? xpar_histogram_even_nowait(ctx, d, x.p, n, lo, hi, nb, (uint64_t *)counts.p)
               : xpar_histogram_even(ctx, d, x.p, n, lo, hi, nb, (uint64_t *)counts.p);
  xt_check_status(label, "call", s, XPAR_OK);
  if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
  xt_check_decision(label, ctx, st->tier, XPAR_OP_HISTOGRAM, d, n);
  const uint64_t *got = (const uint64_t *)counts.p;
  for (size_t j = 0; j < nb; j++)
    if (got[j] != want[j])
      xt_failf(label, "counts[%zu] = %llu, expected %llu", j, (unsigned long long)got[j],
               (unsigned long long)want[j]);
  const size_t head = (size_t)((unsigned char *)counts.p - counts.base);
  xt_check_bytes(label, "bytes before the counts", counts.base, c_orig, head);
  xt_check_bytes(label, "bytes after the counts", (unsigned char *)counts.p + nb * 8,
                 c_orig + head + nb * 8, counts.total - head - nb * 8);
  xt_check_bytes(label, "samples (and their guards) after the call", x.base, x_orig, x.total);
  free(x_orig);
  free(c_orig);
  free(want);
  free(bounds);
  xt_buf_free(&counts);
  xt_buf_free(&x);
}

static void run_variant(void **state, int range) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  int k = 0;
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    for (size_t si = 0; si < NHIST_SIZES; si++) {
      const size_t n = hist_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      for (size_t bi = 0; bi < NHIST_BINS; bi++) {
        const size_t nb = hist_bins[bi];
        /* the range variant's oracle scans every boundary: keep n x nb modest */
        if (range && (double)n * (double)nb > 4e8) continue;
        if (nb >= 100000 && n > 65537) continue;
        const int which = (int)((si + bi) % 4), skewed = (int)((si + bi + (size_t)di) % 3 == 0);
        const size_t off = (size_t)(k % 4);
        run_case(st, ctx, range, d, n, nb, which, skewed, off, k % 3 == 0);
        k++;
      }
    }
    /* every range kind at a middling size */
    for (int which = 0; which < 4; which++)
      run_case(st, ctx, range, d, 7919, 256, which, which == 3, (size_t)which, which == 1);
  }
  /* past the OpenMP tier's private histograms (team x bins > 2^22): the shared
   * counts with atomic adds */
  if (!range)
    for (int di = 0; di < XT_NDTYPES; di += 5)
      run_case(st, ctx, 0, xt_dtypes[di], 65537, ((size_t)1 << 22) + 3, 0, 0, 1, 0);
}

static void hist_even(void **state) { run_variant(state, 0); }
static void hist_range(void **state) { run_variant(state, 1); }

int main(int argc, char **argv) {
  xt_init("test_histogram", argc, argv);
  static const char *const names[] = {"histogram_even", "histogram_range"};
  static const xt_body bodies[] = {hist_even, hist_range};
  return xt_run_tier_tests("histogram", names, bodies, sizeof names / sizeof names[0]);
}
