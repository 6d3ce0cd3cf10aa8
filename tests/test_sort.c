/*
 * Conformance of xpar_sort, xpar_sort_pairs and xpar_argsort on every tier:
 * every key dtype, ascending and descending, keys / pairs (every value dtype
 * appears beside every key dtype over the pairs) / argsort (int32 and int64
 * indices), in place and out of place at element offsets 0..3, sizes 0 ..
 * 2^18 + 3 (tile sizes and powers of two +- 1, a prime), and inputs that are
 * random, random bits (floats: NaN of both signs with payloads, infinities,
 * subnormals), sorted, reversed, all equal, two values, sixteen values,
 * extremes (integer min / max; float specials: +-0, +-inf, NaNs, subnormals).
 *
 * The oracle is written from the header's words, not from the library's
 * radix keys: a stable merge sort whose comparison reads each key's value
 * (-0.0 == +0.0; every NaN equal to every other and after +inf ascending,
 * first descending).  Every output element is checked bit for bit (keys are
 * moved, never rewritten), values and indices carry the input position, so
 * stability is checked on every element; the bytes around every output and
 * the whole input (out of place) must be untouched, and argsort never
 * writes the keys.  Every tier matching the oracle bit for bit is every tier
 * giving the same bits.
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

/* The keys as the comparison reads them: each key's value (long double holds
 * every value of every dtype exactly) and whether it is a NaN. */
typedef struct key_view {
  const long double *value;
  const unsigned char *nan;
  int descending;
} key_view;

/* -1, 0, 1: key i before, equal to, after key j in the header's order. */
static int key_cmp(const key_view *v, size_t i, size_t j) {
  int c;
  if (v->nan[i] | v->nan[j]) {
    c = v->nan[i] && v->nan[j] ? 0 : v->nan[i] ? 1 : -1; /* NaN after everything */
  } else {
    const long double a = v->value[i], b = v->value[j];
    c = a < b ? -1 : a > b ? 1 : 0; /* -0.0 == +0.0 */
  }
  return v->descending ? -c : c;
}

/* The oracle's view of n keys of dtype t (free both arrays). */
static key_view view_of(xpar_dtype t, const void *keys, size_t n, int descending) {
  long double *value = (long double *)malloc((n + 1) * sizeof *value);
  unsigned char *nan = (unsigned char *)malloc(n + 1);
  assert_true(value && nan);
  for (size_t i = 0; i < n; i++) {
    value[i] = xt_get(t, keys, i);
    nan[i] = xt_is_float(t) && isnan(value[i]);
  }
  return (key_view){value, nan, descending};
}

static void view_free(key_view *v) {
  free((void *)v->value);
  free((void *)v->nan);
}

/* Stable merge sort of the positions 0..n-1 by key. */
static void merge_sort(const key_view *v, size_t *idx, size_t *tmp, size_t n) {
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = key_cmp(v, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
      while (a < mid) tmp[k++] = idx[a++];
      while (b < hi) tmp[k++] = idx[b++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

/* ---- inputs ------------------------------------------------------------- */

enum {
  P_RANDOM,
  P_BITS,
  P_SORTED,
  P_REVERSED,
  P_EQUAL,
  P_TWO,
  P_SIXTEEN,
  P_EXTREMES,
  P_COUNT
};
static const char *const pattern_names[P_COUNT] = {"random",  "bits",  "sorted", "reversed",
                                                   "all-equal", "two", "sixteen", "extremes"};

static void put_bits(xpar_dtype t, void *p, size_t i, uint64_t bits) {
  if (xt_size(t) == 4) {
    uint32_t b = (uint32_t)bits;
    memcpy((char *)p + 4 * i, &b, 4);
  } else {
    memcpy((char *)p + 8 * i, &bits, 8);
  }
}

/* A special value of t, k-th of a list: floats +-0, +-inf, NaNs of both
 * signs with payloads, subnormals, the largest and smallest normals, +-1;
 * integers their min, max, 0, +-1. */
static uint64_t special_bits(xpar_dtype t, uint64_t k) {
  if (t == XPAR_FLOAT) {
    static const uint32_t f[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffa5a5a5u,
                                 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu,
                                 0x3f800000u, 0xbf800000u, 0x00800000u, 0x80800000u};
    return f[k % 16];
  }
  if (t == XPAR_DOUBLE) {
    static const uint64_t f[] = {0ull,
                                 0x8000000000000000ull,
                                 0x7ff0000000000000ull,
                                 0xfff0000000000000ull,
                                 0x7ff8000000000000ull,
                                 0xfff8000000000000ull,
                                 0x7ff0000000000001ull,
                                 0xfff5a5a5a5a5a5a5ull,
                                 1ull,
                                 0x800fffffffffffffull,
                                 0x7fefffffffffffffull,
                                 0xffefffffffffffffull,
                                 0x3ff0000000000000ull,
                                 0xbff0000000000000ull,
                                 0x0010000000000000ull,
                                 0x8010000000000000ull};
    return f[k % 16];
  }
  const int wide = xt_size(t) == 8, sgn = xt_is_signed(t);
  const uint64_t mask = wide ? ~0ull : 0xffffffffull;
  const uint64_t min = sgn ? (wide ? 0x8000000000000000ull : 0x80000000ull) : 0;
  const uint64_t list[] = {min, min ^ mask /* max */, 0, 1, mask /* -1 or max */, min + 1};
  return list[k % 6];
}

static void fill_pattern(xt_rng *r, xpar_dtype t, void *p, size_t n, int pattern) {
  switch (pattern) {
    case P_RANDOM:
    case P_SORTED:
    case P_REVERSED: xt_fill_random(r, t, p, n, XT_DATA_RANDOM, 8); break;
    case P_BITS:
      for (size_t i = 0; i < n; i++) put_bits(t, p, i, xt_next(r));
      break;
    case P_EQUAL: {
      const uint64_t b = xt_next(r);
      for (size_t i = 0; i < n; i++) put_bits(t, p, i, b);
      break;
    }
    case P_TWO:
    case P_SIXTEEN: {
      uint64_t v[16];
      for (int k = 0; k < 16; k++) v[k] = xt_next(r);
      if (xt_is_float(t)) /* numbers, with a -0.0 among them (equal to +0.0) */
        for (int k = 0; k < 16; k++) {
          xt_put(t, &v[k], 0, (long double)((int)(v[k] % 201) - 100) / 4);
          if (xt_size(t) == 4) v[k] &= 0xffffffffu;
        }
      if (xt_is_float(t)) v[3] = special_bits(t, 1);
      for (size_t i = 0; i < n; i++)
        put_bits(t, p, i, v[xt_below(r, pattern == P_TWO ? 2 : 16)]);
      break;
    }
    case P_EXTREMES:
    default:
      for (size_t i = 0; i < n; i++) put_bits(t, p, i, special_bits(t, xt_next(r)));
      break;
  }
}

/* ---- one case ------------------------------------------------------------ */

enum { FORM_KEYS, FORM_PAIRS, FORM_ARGSORT };

static void put_index(xpar_dtype t, void *p, size_t i, size_t v) {
  if (xt_is_float(t)) {
    xt_put(t, p, i, (long double)v);
  } else {
    put_bits(t, p, i, (uint64_t)v);
  }
}

/* The value dtype a pairs case of key dtype d uses at variant k: over the
 * suite every value dtype meets every key dtype. */
static xpar_dtype value_dtype_for(int di, int k) {
  return xt_dtypes[(di + k) % XT_NDTYPES];
}

typedef struct sort_case {
  xt_tier_state *st;
  xpar_context *ctx;
  xpar_dtype d;
  int form, descending, inplace, nowait;
  xpar_dtype vt;                 /* values (pairs) or indices (argsort) */
  size_t n, in_off, out_off;
  const unsigned char *keys;     /* the input keys, n of them */
  const size_t *perm;            /* the oracle's permutation */
  const char *pattern;
} sort_case;

static void run_case(const sort_case *k) {
  const xpar_dtype d = k->d, vt = k->vt;
  const size_t n = k->n, ks = xt_size(d), vs = xt_size(vt);
  char label[256];
  snprintf(label, sizeof label, "%s/%s/%s%s%s/%s/%s/n=%zu/in_off=%zu/out_off=%zu/%s%s",
           k->form == FORM_KEYS ? "sort" : k->form == FORM_PAIRS ? "sort_pairs" : "argsort",
           xt_tier_name(k->st->tier), xt_dname(d), k->form == FORM_KEYS ? "" : "+",
           k->form == FORM_KEYS ? "" : xt_dname(vt), k->descending ? "descending" : "ascending",
           k->pattern, n, k->in_off, k->out_off, k->inplace ? "in-place" : "out-of-place",
           k->nowait ? "/nowait" : "");
  xt_buf kin, kout, vin, vout;
  xt_buf_alloc(&kin, d, n, k->in_off);
  if (n) memcpy(kin.p, k->keys, n * ks);
  xt_buf *ko = &kin, *vo = NULL;
  if (k->form != FORM_ARGSORT && !k->inplace) {
    xt_buf_alloc(&kout, d, n, k->out_off);
    ko = &kout;
  }
  if (k->form == FORM_PAIRS) {
    xt_buf_alloc(&vin, vt, n, k->out_off);
    for (size_t i = 0; i < n; i++) put_index(vt, vin.p, i, i);
    vo = &vin;
    if (!k->inplace) {
      xt_buf_alloc(&vout, vt, n, k->in_off);
      vo = &vout;
    }
  } else if (k->form == FORM_ARGSORT) {
    xt_buf_alloc(&vout, vt, n, k->out_off);
    vo = &vout;
  }
  unsigned char *kin_orig = xt_buf_copy(&kin);
  unsigned char *vin_orig = k->form == FORM_PAIRS ? xt_buf_copy(&vin) : NULL;
  const xpar_sort_order order = k->descending ? XPAR_DESCENDING : XPAR_ASCENDING;

  xpar_status s;
  if (k->form == FORM_KEYS)
    s = k->nowait ? xpar_sort_nowait(k->ctx, d, order, kin.p, ko->p, n)
                  : xpar_sort(k->ctx, d, order, kin.p, ko->p, n);
  else if (k->form == FORM_PAIRS)
    s = k->nowait
            ? xpar_sort_pairs_nowait(k->ctx, d, vt, order, kin.p, vin.p, ko->p, vo->p, n)
            : xpar_sort_pairs(k->ctx, d, vt, order, kin.p, vin.p, ko->p, vo->p, n);
  else
    s = k->nowait ? xpar_argsort_nowait(k->ctx, d, vt, order, kin.p, vo->p, n)
                  : xpar_argsort(k->ctx, d, vt, order, kin.p, vo->p, n);
  xt_check_status(label, "call", s, XPAR_OK);
  if (k->nowait) xt_check_status(label, "wait", xpar_wait(k->ctx), XPAR_OK);
  xt_check_decision(label, k->ctx, k->st->tier, XPAR_OP_SORT, d, n);

  /* Keys: the input's bits, permuted. */
  if (k->form != FORM_ARGSORT) {
    unsigned char *want = (unsigned char *)malloc(n * ks + 1);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) memcpy(want + i * ks, k->keys + k->perm[i] * ks, ks);
    xt_check_bytes(label, "sorted keys (bitwise)", ko->p, want, n * ks);
    xt_check_guards(label, "keys output", ko);
    free(want);
  }
  if (vo) { /* values and indices: the input positions, in order */
    unsigned char *want = (unsigned char *)malloc(n * vs + 1);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) put_index(vt, want, i, k->perm[i]);
    xt_check_bytes(label, k->form == FORM_ARGSORT ? "indices" : "values (bitwise)", vo->p, want,
                   n * vs);
    xt_check_guards(label, "values output", vo);
    free(want);
  }
  if (ko != &kin || k->form == FORM_ARGSORT)
    xt_check_bytes(label, "keys input (and its guards) after the call", kin.base, kin_orig,
                   kin.total);
  if (k->form == FORM_PAIRS && vo != &vin)
    xt_check_bytes(label, "values input (and its guards) after the call", vin.base, vin_orig,
                   vin.total);
  free(kin_orig);
  free(vin_orig);
  if (ko != &kin) xt_buf_free(&kout);
  if (k->form == FORM_PAIRS) {
    if (vo != &vin) xt_buf_free(&vout);
    xt_buf_free(&vin);
  } else if (k->form == FORM_ARGSORT) {
    xt_buf_free(&vout);
  }
  xt_buf_free(&kin);
}

/* Sizes: 0..3, a warp's edges, the one-thread small sorts' edges (64, 128),
 * tile and power-of-two edges of 2^8 .. 2^16, a prime, and 2^18 + 3 (many
 * tiles and several chunks per thread). */
static const size_t sort_sizes[] = {0,    1,    2,    3,     31,    32,    33,  63,
                                    64,   65,   127,  128,   129,   255,   256, 257,
                                    1000, 4095, 4096, 4097,  7919,  65535, 65537, 262147};
#define NSORT_SIZES (sizeof sort_sizes / sizeof sort_sizes[0])

static void run_form(void **state, int form) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    for (size_t si = 0; si < NSORT_SIZES; si++) {
      const size_t n = sort_sizes[si];
      if (n > xt_tier_max_n(st->tier)) continue;
      const int large = n > 8192;
      size_t *perm = (size_t *)malloc((n + 1) * sizeof *perm);
      size_t *tmp = (size_t *)malloc((n + 1) * sizeof *tmp);
      unsigned char *keys = (unsigned char *)malloc(n * xt_size(d) + 1);
      assert_true(perm && tmp && keys);
      for (int pat = 0; pat < P_COUNT; pat++) {
        /* Large sizes: the patterns that stress different digits. */
        if (large && pat != P_BITS && pat != P_SIXTEEN && pat != P_REVERSED) continue;
        for (int desc = 0; desc < 2; desc++) {
          char seed_label[128];
          snprintf(seed_label, sizeof seed_label, "sort/%s/%zu/%s/%d", xt_dname(d), n,
                   pattern_names[pat], desc);
          xt_rng rng;
          xt_rng_for(&rng, seed_label);
          fill_pattern(&rng, d, keys, n, pat);
          for (size_t i = 0; i < n; i++) perm[i] = i;
          if (pat == P_SORTED || pat == P_REVERSED) { /* the input in (reverse) order */
            key_view ord = view_of(d, keys, n, pat == P_REVERSED);
            merge_sort(&ord, perm, tmp, n);
            view_free(&ord);
            unsigned char *sorted = (unsigned char *)malloc(n * xt_size(d) + 1);
            assert_non_null(sorted);
            for (size_t i = 0; i < n; i++)
              memcpy(sorted + i * xt_size(d), keys + perm[i] * xt_size(d), xt_size(d));
            memcpy(keys, sorted, n * xt_size(d));
            free(sorted);
            for (size_t i = 0; i < n; i++) perm[i] = i;
          }
          key_view v = view_of(d, keys, n, desc);
          merge_sort(&v, perm, tmp, n);
          view_free(&v);
          for (int oi = 0; oi < (large ? 1 : XT_NOFFS); oi++)
            for (int inplace = 0; inplace < 2; inplace++) {
              const int variant = oi * 2 + inplace + pat;
              sort_case c = {.st = st,
                             .ctx = ctx,
                             .d = d,
                             .form = form,
                             .descending = desc,
                             .inplace = inplace,
                             .nowait = variant % 3 == 0,
                             .vt = form == FORM_ARGSORT ? (variant % 2 ? XPAR_INT64 : XPAR_INT32)
                                   : value_dtype_for(di, variant + desc),
                             .n = n,
                             .in_off = xt_offs[oi][0],
                             .out_off = inplace ? xt_offs[oi][0] : xt_offs[oi][1],
                             .keys = keys,
                             .perm = perm,
                             .pattern = pattern_names[pat]};
              if (form == FORM_ARGSORT && inplace) continue; /* argsort writes no keys */
              run_case(&c);
            }
        }
      }
      free(perm);
      free(tmp);
      free(keys);
    }
  }
}

static void sort_keys(void **state) { run_form(state, FORM_KEYS); }
static void sort_pairs(void **state) { run_form(state, FORM_PAIRS); }
static void argsort(void **state) { run_form(state, FORM_ARGSORT); }

int main(int argc, char **argv) {
  xt_init("test_sort", argc, argv);
  static const char *const names[] = {"sort_keys", "sort_pairs", "argsort"};
  static const xt_body bodies[] = {sort_keys, sort_pairs, argsort};
  return xt_run_tier_tests("sort", names, bodies, sizeof names / sizeof names[0]);
}
