/*
 * Conformance of xpar_run_length_encode and xpar_reduce_by_key on every
 * tier: every key dtype, every value dtype with every key dtype (six x six)
 * and every op (SUM, MIN, MAX), sizes 0, 1, 2, primes and the GPU tiles +- 1
 * (up to 2^18 + 3), runs of mean length 1 (all distinct), ~3, ~32 and one run
 * (all equal), special float keys (NaN of both signs and payloads, +-0,
 * +-inf: -0.0 == +0.0 and NaN == NaN), element offsets 0..3.
 *
 * The oracle is a plain loop written from the header's words: run heads by
 * that equality, the first key's bits, the length, and the values reduced in
 * element order in value_dtype (integers wrap).  Float sums are exact where
 * the values are small integers (every order gives the same bits); random
 * float values are checked against the bound 2 gamma_len sum |v| of the run.
 * The count, every run, the outputs past the count (still their poison: not
 * written), the guards and the inputs are checked; nowait variants are waited
 * for.  Reproducible mode: every run's float and double sum equals, bit for
 * bit, reproducible xpar_reduce(SUM) over the run's values, on every tier.
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

/* ---- the oracle ---------------------------------------------------------- */

/* the runs' equality: the values equal (-0.0 == +0.0), or both NaN */
static int same_key(xpar_dtype t, const void *p, size_t i, size_t j) {
  const long double a = xt_get(t, p, i), b = xt_get(t, p, j);
  if (xt_is_float(t)) {
    if (isnan(a)) return isnan(b);
    return a == b;
  }
  /* integers: the bits (long double holds 64-bit integers exactly) */
  uint64_t x = 0, y = 0;
  memcpy(&x, (const char *)p + i * xt_size(t), xt_size(t));
  memcpy(&y, (const char *)p + j * xt_size(t), xt_size(t));
  return x == y;
}

/* acc = acc op v[i], in the value dtype (integers wrap). */
static void combine(xpar_dtype t, xpar_reduction op, void *acc, const void *v, size_t i) {
  const char *src = (const char *)v + i * xt_size(t);
#define XT_RUNS_OP_(ctype, utype)                                                \
  do {                                                                           \
    ctype a, b;                                                                  \
    memcpy(&a, acc, sizeof a);                                                   \
    memcpy(&b, src, sizeof b);                                                   \
    if (op == XPAR_SUM) a = (ctype)((utype)a + (utype)b);                        \
    else if (op == XPAR_MIN) a = b < a ? b : a;                                  \
    else a = b > a ? b : a;                                                      \
    memcpy(acc, &a, sizeof a);                                                   \
  } while (0)
  switch (t) {
    case XPAR_INT32: XT_RUNS_OP_(int32_t, uint32_t); break;
    case XPAR_INT64: XT_RUNS_OP_(int64_t, uint64_t); break;
    case XPAR_UINT32: XT_RUNS_OP_(uint32_t, uint32_t); break;
    case XPAR_UINT64: XT_RUNS_OP_(uint64_t, uint64_t); break;
    case XPAR_FLOAT: {
      float a, b;
      memcpy(&a, acc, 4);
      memcpy(&b, src, 4);
      a = op == XPAR_SUM ? a + b : op == XPAR_MIN ? (b < a ? b : a) : (b > a ? b : a);
      memcpy(acc, &a, 4);
      break;
    }
    default: {
      double a, b;
      memcpy(&a, acc, 8);
      memcpy(&b, src, 8);
      a = op == XPAR_SUM ? a + b : op == XPAR_MIN ? (b < a ? b : a) : (b > a ? b : a);
      memcpy(acc, &a, 8);
      break;
    }
  }
#undef XT_RUNS_OP_
}

typedef struct runs_ref {
  size_t runs;
  unsigned char *keys;  /* runs keys (bits) */
  unsigned char *vals;  /* runs values (element order) or uint64 lengths */
  size_t *start;        /* runs + 1 boundaries */
} runs_ref;

static void oracle(xpar_dtype kt, xpar_dtype vt, xpar_reduction op, int lengths,
                   const void *keys, const void *vals, size_t n, runs_ref *r) {
  const size_t ks = xt_size(kt), vs = lengths ? 8 : xt_size(vt);
  r->keys = malloc(n * ks + 1);
  r->vals = malloc(n * vs + 1);
  r->start = malloc((n + 1) * sizeof *r->start);
  assert_true(r->keys && r->vals && r->start);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || !same_key(kt, keys, i, i - 1)) {
      memcpy(r->keys + k * ks, (const char *)keys + i * ks, ks);
      r->start[k] = i;
      if (lengths) {
        const uint64_t one = 1;
        memcpy(r->vals + k * vs, &one, 8);
      } else {
        memcpy(r->vals + k * vs, (const char *)vals + i * vs, vs);
      }
      k++;
    } else if (lengths) {
      uint64_t l;
      memcpy(&l, r->vals + (k - 1) * vs, 8);
      l++;
      memcpy(r->vals + (k - 1) * vs, &l, 8);
    } else {
      combine(vt, op, r->vals + (k - 1) * vs, vals, i);
    }
  }
  r->start[k] = n;
  r->runs = k;
}

static void ref_free(runs_ref *r) {
  free(r->keys);
  free(r->vals);
  free(r->start);
}

/* ---- inputs ---------------------------------------------------------------- */

static void put_special(xpar_dtype t, void *p, size_t i, uint64_t r) {
  if (xt_is_float(t)) {
    /* NaNs of both signs and two payloads, zeros of both signs, infinities */
    const int which = (int)(r % 8);
    if (t == XPAR_FLOAT) {
      static const uint32_t b[8] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0xffc00001u, 0x3f800000u, 0x7fa00000u};
      memcpy((char *)p + i * 4, &b[which], 4);
    } else {
      static const uint64_t b[8] = {0, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                    0xfff0000000000000ull, 0x7ff8000000000000ull,
                                    0xfff8000000000001ull, 0x3ff0000000000000ull,
                                    0x7ff4000000000000ull};
      memcpy((char *)p + i * 8, &b[which], 8);
    }
  } else {
    xt_put(t, p, i, (long double)(r % 3));
  }
}

/* Keys in runs of 1 .. max_run (1: all distinct; 0: one run); specials: runs
 * of special floats whose elements differ in sign or payload (one run each). */
static void fill_keys(xt_rng *r, xpar_dtype t, void *p, size_t n, int max_run, int specials) {
  size_t i = 0;
  while (i < n) {
    size_t len = max_run ? 1 + (size_t)xt_below(r, (uint64_t)max_run) : n;
    unsigned char v[8];
    xt_random_scalar(r, t, v, XT_DATA_RANDOM, 8);
    const uint64_t sr = xt_next(r);
    const int special = specials && (sr & 3) == 0;
    for (size_t j = 0; j < len && i < n; j++, i++) {
      memcpy((char *)p + i * xt_size(t), v, xt_size(t));
      if (special) {
        /* one run each: zeros of both signs; +inf; NaNs of both signs and
         * three payloads; or a mix (neighbours equal or not) */
        const uint64_t base = (sr >> 2) % 4;
        const uint64_t pick = base == 0   ? (j & 1)
                              : base == 1 ? 2
                              : base == 2 ? (j % 3 == 0 ? 4 : j % 3 == 1 ? 5 : 7)
                                          : (sr >> 4) + j / 2;
        put_special(t, p, i, pick);
      }
    }
  }
}

static const size_t runs_sizes[] = {0,    1,    2,    3,    31,   32,    33,    255,  257,
                                    1000, 2047, 2048, 2049, 4095, 4096,  4097,  7919, 8191,
                                    8193, 65537, 262147};
#define NRUNS_SIZES (sizeof runs_sizes / sizeof runs_sizes[0])

/* Whether a float sum over these values is exact in any order: small integers. */
static int exact_values(int var) { return var != 3; }

/* One case: keys kt, values vt (lengths: run-length encode), op. */
static void one_case(xt_tier_state *st, xpar_context *ctx, xpar_dtype kt, xpar_dtype vt,
                     xpar_reduction op, int lengths, size_t n, int var, int oi) {
  const size_t ks = xt_size(kt), vs = lengths ? 8 : xt_size(vt);
  char label[256];
  snprintf(label, sizeof label, "%s/%s/keys=%s/values=%s/op=%d/n=%zu/variant=%d/off=%zu",
           lengths ? "run_length_encode" : "reduce_by_key", xt_tier_name(st->tier),
           xt_dname(kt), lengths ? "lengths" : xt_dname(vt), (int)op, n, var, xt_offs[oi][0]);
  xt_rng rng;
  xt_rng_for(&rng, label);
  const int max_run[5] = {1, 5, 64, 8, 0};
  xt_buf keys, vals, ko, vo;
  xt_buf_alloc(&keys, kt, n, xt_offs[oi][0]);
  fill_keys(&rng, kt, keys.p, n, max_run[var], var == 3);
  if (!lengths) {
    xt_buf_alloc(&vals, vt, n, xt_offs[oi][1]);
    if (exact_values(var) || !xt_is_float(vt))
      xt_fill_random(&rng, vt, vals.p, n, xt_is_float(vt) ? XT_DATA_SMALLINT : XT_DATA_RANDOM, 8);
    else
      xt_fill_random(&rng, vt, vals.p, n, XT_DATA_RANDOM, 8);
  }
  xt_buf_alloc(&ko, kt, n, xt_offs[oi][1]);
  xt_buf_alloc(&vo, lengths ? XPAR_UINT64 : vt, n, xt_offs[oi][0]);
  runs_ref ref;
  oracle(kt, vt, op, lengths, keys.p, lengths ? NULL : vals.p, n, &ref);
  unsigned char *keys_orig = xt_buf_copy(&keys);
  unsigned char *vals_orig = lengths ? NULL : xt_buf_copy(&vals);
  unsigned char *ko_orig = xt_buf_copy(&ko), *vo_orig = xt_buf_copy(&vo);
  const int nowait = (var + oi + (int)n) % 3 == 0;
  size_t count = (size_t)0xdeadbeefcafe;
  xpar_status s;
  if (lengths)
    s = nowait ? xpar_run_length_encode_nowait(ctx, kt, keys.p, n, ko.p, (uint64_t *)vo.p, &count)
               : xpar_run_length_encode(ctx, kt, keys.p, n, ko.p, (uint64_t *)vo.p, &count);
  else
    s = nowait ? xpar_reduce_by_key_nowait(ctx, kt, vt, op, keys.p, vals.p, n, ko.p, vo.p, &count)
               : xpar_reduce_by_key(ctx, kt, vt, op, keys.p, vals.p, n, ko.p, vo.p, &count);
  xt_check_status(label, "call", s, XPAR_OK);
  if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
  xt_check_decision(label, ctx, st->tier, XPAR_OP_RUNS, kt, n);
  if (count != ref.runs) xt_failf(label, "num_runs %zu, expected %zu", count, ref.runs);
  xt_check_bytes(label, "first keys (bitwise)", ko.p, ref.keys, ref.runs * ks);
  const xpar_dtype ot = lengths ? XPAR_UINT64 : vt;
  if (lengths || !xt_is_float(vt) || op != XPAR_SUM || exact_values(var)) {
    if (lengths || !xt_is_float(vt)) {
      xt_check_bytes(label, "values (bitwise)", vo.p, ref.vals, ref.runs * vs);
    } else {
      for (size_t r = 0; r < ref.runs; r++) {
        const long double g = xt_get(ot, vo.p, r), w = xt_get(ot, ref.vals, r);
        if (!(g == w || (isnan(g) && isnan(w))))
          xt_failf(label, "value of run %zu: %.21Lg, expected %.21Lg", r, g, w);
      }
    }
  } else {
    const long double u = vt == XPAR_FLOAT ? ldexpl(1.0L, -24) : ldexpl(1.0L, -53);
    for (size_t r = 0; r < ref.runs; r++) {
      long double mag = 0;
      const size_t len = ref.start[r + 1] - ref.start[r];
      for (size_t i = ref.start[r]; i < ref.start[r + 1]; i++) mag += fabsl(xt_get(vt, vals.p, i));
      const long double tol = 2.0L * (long double)len * u / (1.0L - (long double)len * u) * mag;
      const long double g = xt_get(vt, vo.p, r), w = xt_get(vt, ref.vals, r);
      if (!(fabsl(g - w) <= tol)) xt_failf(label, "sum of run %zu: %.21Lg, expected %.21Lg (tol %.3Lg)", r, g, w, tol);
    }
  }
  /* past the count: the poison; the guards; the inputs */
  const size_t kh = (size_t)((unsigned char *)ko.p - ko.base);
  const size_t vh = (size_t)((unsigned char *)vo.p - vo.base);
  xt_check_bytes(label, "keys_out past the count, and the guards",
                 (unsigned char *)ko.p + ref.runs * ks, ko_orig + kh + ref.runs * ks,
                 ko.total - kh - ref.runs * ks);
  xt_check_bytes(label, "values_out past the count, and the guards",
                 (unsigned char *)vo.p + ref.runs * vs, vo_orig + vh + ref.runs * vs,
                 vo.total - vh - ref.runs * vs);
  xt_check_bytes(label, "bytes before keys_out", ko.base, ko_orig, kh);
  xt_check_bytes(label, "bytes before values_out", vo.base, vo_orig, vh);
  xt_check_bytes(label, "keys (and guards) after the call", keys.base, keys_orig, keys.total);
  if (!lengths)
    xt_check_bytes(label, "values (and guards) after the call", vals.base, vals_orig, vals.total);
  free(keys_orig);
  free(vals_orig);
  free(ko_orig);
  free(vo_orig);
  ref_free(&ref);
  xt_buf_free(&keys);
  if (!lengths) xt_buf_free(&vals);
  xt_buf_free(&ko);
  xt_buf_free(&vo);
}

static void rle(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  for (int di = 0; di < XT_NDTYPES; di++)
    for (size_t si = 0; si < NRUNS_SIZES; si++) {
      const size_t n = runs_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      for (int var = 0; var < 5; var++)
        for (int oi = 0; oi < (n > 8192 ? 1 : XT_NOFFS); oi++)
          one_case(st, ctx, xt_dtypes[di], XPAR_UINT64, XPAR_SUM, 1, n, var, oi);
    }
}

/* Every key dtype with every value dtype and op up to the tiles + 1; the
 * larger sizes on a diagonal of the pairs. */
static void reduce_by_key(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  for (int ki = 0; ki < XT_NDTYPES; ki++)
    for (int vi = 0; vi < XT_NDTYPES; vi++)
      for (int op = 0; op < XPAR_REDUCTION_COUNT_; op++)
        for (size_t si = 0; si < NRUNS_SIZES; si++) {
          const size_t n = runs_sizes[si];
          if (n > xt_tier_max_n(st->tier)) continue;
          if (n > 4097 && (ki + op) % XT_NDTYPES != vi) continue;
          for (int var = 0; var < 5; var++) {
            if (n > 4097 && var % 2 && var != 3) continue;
            const int oi = (var + (int)si + ki + vi) % XT_NOFFS;
            one_case(st, ctx, xt_dtypes[ki], xt_dtypes[vi], (xpar_reduction)op, 0, n, var, oi);
          }
        }
}

/* Reproducible mode: every run's float and double sum is reproducible
 * xpar_reduce(SUM) over the run's values, the same bits on every tier. */
static void reproducible(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  XT_OK(xpar_context_set_reproducible(ctx, 1));
  xpar_context *ref_ctx = NULL;
  XT_OK(xpar_context_create(&ref_ctx));
  XT_OK(xpar_context_set_backend(ref_ctx, XPAR_BACKEND_CPU_SERIAL));
  XT_OK(xpar_context_set_reproducible(ref_ctx, 1));
  static const size_t sizes[] = {1, 2, 1000, 8191, 8193, 40000, 262147};
  for (int vi = 0; vi < 2; vi++) {
    const xpar_dtype vt = vi ? XPAR_DOUBLE : XPAR_FLOAT;
    const size_t vs = xt_size(vt);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      const size_t n = sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      for (int var = 0; var < 5; var++) {
        char label[192];
        snprintf(label, sizeof label, "reproducible/%s/values=%s/n=%zu/variant=%d",
                 xt_tier_name(st->tier), xt_dname(vt), n, var);
        xt_rng rng;
        xt_rng_for(&rng, label);
        const int max_run[5] = {1, 5, 64, 20000, 0};
        int32_t *keys = malloc(n * 4);
        unsigned char *vals = malloc(n * vs), *vo = malloc(n * vs), *want = malloc(vs);
        int32_t *ko = malloc(n * 4);
        assert_true(keys && vals && vo && want && ko);
        fill_keys(&rng, XPAR_INT32, keys, n, max_run[var], 0);
        xt_fill_random(&rng, vt, vals, n, XT_DATA_RANDOM, 8);
        size_t count = 0;
        XT_OK(xpar_reduce_by_key(ctx, XPAR_INT32, vt, XPAR_SUM, keys, vals, n, ko, vo, &count));
        xpar_decision d;
        XT_OK(xpar_last_decision(ctx, &d));
        if (!d.reproducible) xt_failf(label, "the record does not say reproducible");
        size_t start = 0, r = 0;
        for (size_t i = 1; i <= n; i++) {
          if (i < n && keys[i] == keys[i - 1]) continue;
          if (r >= count) xt_failf(label, "num_runs %zu too small", count);
          XT_OK(xpar_reduce(ref_ctx, vt, XPAR_SUM, vals + start * vs, i - start, want));
          if (memcmp(vo + r * vs, want, vs) != 0)
            xt_failf(label, "run %zu [%zu, %zu): %.17Lg, reproducible reduce %.17Lg", r, start,
                     i, xt_get(vt, vo, r), xt_get(vt, want, 0));
          r++;
          start = i;
        }
        if (r != count) xt_failf(label, "num_runs %zu, expected %zu", count, r);
        free(keys);
        free(vals);
        free(vo);
        free(want);
        free(ko);
      }
    }
  }
  xpar_context_destroy(ref_ctx);
}

int main(int argc, char **argv) {
  xt_init("test_runs", argc, argv);
  static const char *const names[] = {"run_length_encode", "reduce_by_key", "reproducible"};
  static const xt_body bodies[] = {rle, reduce_by_key, reproducible};
  return xt_run_tier_tests("runs", names, bodies, sizeof names / sizeof names[0]);
}
