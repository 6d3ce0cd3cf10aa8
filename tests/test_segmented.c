/*
 * Conformance of xpar_segmented_reduce and xpar_segmented_scan (offsets of
 * both widths, and the _fixed forms), with their nowait variants, on every
 * tier: every dtype x sum / min / max (x inclusive / exclusive), segment
 * sizes all 1, all 16, all 1,024, power-law, one half-size segment among tiny
 * ones, random sizes with empty segments first, in the middle and last, all
 * empty, n_segments 0 and 1; offsets[0] above 0 with data before and after
 * the segments; element offsets 0..3; in place (scan).  Bad offsets
 * (decreasing, negative, past n) are refused on every tier with nothing
 * written.
 *
 * Reproducible mode (test "reproducible"): every segment's float and double
 * sum (sum scan) equals, bit for bit, reproducible xpar_reduce(SUM)
 * (xpar_scan) on cpu-serial of the segment's elements as an array of their
 * own (so every tier gives the same bits), an empty segment's sum +0.
 *
 * The oracle is the whole-array reference of tests/common per segment (an
 * empty segment: the identity).  Floats are small integers (every order of
 * summation exact) except in the serial tiers' own case, where random floats
 * must match the element-order sum bit for bit.  Every output element, the
 * output outside the segments (not written: still its poison), the guards and
 * the input are checked.
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

enum { D_ONES, D_16, D_1024, D_POWER, D_HALF, D_EMPTIES, D_ALL_EMPTY, D_NONE, D_ONE, D_LONG_MIX,
       D_COUNT };
static const char *const dist_names[D_COUNT] = {"all-1",     "all-16",    "all-1024",
                                                "power-law", "half+tiny", "empties",
                                                "all-empty", "no-segments", "one-segment",
                                                "long-mix"};

/* Segment sizes of distribution `dist` for about `total` elements: sizes[] (of
 * at most cap entries); returns the segment count. */
static size_t make_sizes(xt_rng *r, int dist, size_t total, size_t *sizes, size_t cap) {
  size_t m = 0, sum = 0;
  switch (dist) {
    case D_NONE: return 0;
    case D_ONE: sizes[0] = total; return 1;
    case D_ALL_EMPTY:
      for (m = 0; m < 37 && m < cap; m++) sizes[m] = 0;
      return m;
    case D_HALF:
      sizes[m++] = 0; /* empty first */
      while (sum < total / 2 && m < cap) {
        sizes[m] = xt_below(r, 4);
        sum += sizes[m++];
      }
      if (m < cap) sizes[m++] = total / 2;
      while (m + 1 < cap && sum + total / 2 < total) {
        sizes[m] = xt_below(r, 3);
        sum += sizes[m++];
      }
      if (m < cap) sizes[m++] = 0; /* empty last */
      return m;
    default: break;
  }
  while (sum < total && m + 1 < cap) {
    size_t s;
    switch (dist) {
      case D_ONES: s = 1; break;
      case D_16: s = 16; break;
      case D_1024: s = 1024; break;
      case D_POWER: { /* P(size >= k) ~ k^-1.2, up to total / 4 */
        const double u = (double)(xt_next(r) >> 11) * 0x1p-53 + 1e-12;
        double v = pow(u, -1.0 / 1.2);
        if (v > (double)(total / 4 + 1)) v = (double)(total / 4 + 1);
        s = (size_t)v - 1;
        break;
      }
      case D_LONG_MIX: { /* long on average (the GPU's warp-per-span path), with empty,
                          * tiny and long segments among them */
        const uint64_t k = xt_below(r, 16);
        s = k < 2 ? 0 : k < 4 ? xt_below(r, 5) : k == 4 ? 2000 + xt_below(r, 9000) : 100 + xt_below(r, 700);
        break;
      }
      default: s = xt_below(r, 5) == 0 ? 0 : xt_below(r, 40); break;
    }
    sizes[m++] = s;
    sum += s;
  }
  if (dist == D_EMPTIES && m + 1 < cap) {
    sizes[0] = 0;
    sizes[m / 2] = 0;
    sizes[m++] = 0;
  }
  return m;
}

enum { O_INT32, O_INT64, O_FIXED, O_FORMS };
static const char *const form_names[O_FORMS] = {"offsets-int32", "offsets-int64", "fixed"};

static void put_offset(int form, void *offs, size_t i, size_t v) {
  if (form == O_INT32) ((int32_t *)offs)[i] = (int32_t)v;
  else ((int64_t *)offs)[i] = (int64_t)v;
}

static void put_special(xpar_dtype t, void *p, size_t i, uint64_t r) {
  static const double f[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 3.0};
  if (xt_is_float(t)) xt_put(t, p, i, (long double)f[r % 8]);
}

/* One case: kind 0 reduce, 1 scan; data 0 exact (small ints), 1 random floats
 * (serial tiers: bitwise against the element-order sum), 2 special floats
 * (min / max). */
typedef struct seg_case {
  int scan;
  xpar_reduction op;
  xpar_scan_kind kind;
  int dist, form, data, inplace, nowait;
  size_t total, in_off, out_off;
} seg_case;

static void run_case(xt_tier_state *st, xpar_context *ctx, xpar_dtype d, const seg_case *k) {
  const size_t es = xt_size(d);
  char label[320];
  snprintf(label, sizeof label, "%s/%s/%s/%s/%s/%s/total~%zu/data=%d/in_off=%zu/%s%s",
           k->scan ? "scan" : "reduce", xt_tier_name(st->tier), xt_dname(d),
           k->op == XPAR_SUM ? "sum" : k->op == XPAR_MIN ? "min" : "max", dist_names[k->dist],
           form_names[k->form], k->total, k->data, k->in_off,
           k->scan ? (k->kind == XPAR_EXCLUSIVE ? "exclusive" : "inclusive") : "",
           k->inplace ? "/in-place" : k->nowait ? "/nowait" : "");
  xt_rng rng;
  xt_rng_for(&rng, label);
  const size_t cap = k->total + 64;
  size_t *sizes = (size_t *)malloc(cap * sizeof *sizes);
  assert_non_null(sizes);
  size_t m = make_sizes(&rng, k->dist, k->total, sizes, cap);
  size_t fixed_size = 0;
  if (k->form == O_FIXED) { /* fixed: one size for all */
    fixed_size = m ? sizes[m / 2] : 0;
    for (size_t s = 0; s < m; s++) sizes[s] = fixed_size;
  }
  const size_t base = k->form == O_FIXED ? 0 : xt_below(&rng, 5); /* offsets[0] */
  size_t sum = 0;
  for (size_t s = 0; s < m; s++) sum += sizes[s];
  const size_t tail = k->form == O_FIXED ? 0 : xt_below(&rng, 4);
  const size_t n = base + sum + tail;
  if (n > xt_tier_max_n(st->tier)) {
    free(sizes);
    return;
  }
  void *offs = malloc((m + 1) * 8);
  assert_non_null(offs);
  size_t at = base;
  for (size_t s = 0; s <= m; s++) {
    put_offset(k->form, offs, s, at);
    if (s < m) at += sizes[s];
  }
  const xpar_dtype od = k->form == O_INT32 ? XPAR_INT32 : XPAR_INT64;
  xt_buf in, outb;
  xt_buf_alloc(&in, d, n, k->in_off);
  const int exact = !(xt_is_float(d) && k->data == 1);
  if (xt_is_float(d) && k->data != 1) xt_fill_random(&rng, d, in.p, n, XT_DATA_SMALLINT, 8);
  else xt_fill_random(&rng, d, in.p, n, XT_DATA_RANDOM, 8);
  if (k->data == 2)
    for (size_t i = xt_below(&rng, 5); i < n; i += 1 + xt_below(&rng, 13))
      put_special(d, in.p, i, xt_next(&rng));
  const size_t out_n = k->scan ? n : m;
  xt_buf *o = &in;
  if (!k->inplace) {
    xt_buf_alloc(&outb, d, out_n, k->out_off);
    o = &outb;
  }
  /* expected */
  xt_expect *want = (xt_expect *)calloc(out_n + 1, sizeof *want);
  assert_non_null(want);
  for (size_t s = 0, so = base; s < m; so += sizes[s], s++) {
    const void *seg = (const char *)in.p + so * es;
    if (k->scan) {
      xt_ref_scan(d, k->op, k->kind, NULL, seg, sizes[s], exact, want + so);
      if (!exact && k->op == XPAR_SUM && sizes[s]) {
        /* random floats: only the serial tiers promise an order (element order) */
        unsigned char *ser = (unsigned char *)malloc(sizes[s] * es);
        assert_non_null(ser);
        xt_serial_scan_sum(d, k->kind, NULL, seg, sizes[s], ser);
        for (size_t i = 0; i < sizes[s]; i++) {
          want[so + i].v = xt_get(d, ser, i);
          if (st->tier == XT_CPU_SERIAL || st->tier == XT_CUDA_SERIAL) want[so + i].tol = 0;
        }
        free(ser);
      }
    } else {
      want[s] = xt_ref_reduce(d, k->op, seg, sizes[s], exact);
      if (!exact && k->op == XPAR_SUM && (st->tier == XT_CPU_SERIAL || st->tier == XT_CUDA_SERIAL)) {
        unsigned char r8[8];
        xt_serial_sum(d, seg, sizes[s], r8);
        want[s].v = xt_get(d, r8, 0);
        want[s].tol = 0;
      }
    }
  }
  unsigned char *in_orig = xt_buf_copy(&in);
  unsigned char *out_orig = xt_buf_copy(o);
  xpar_status s;
  const int nw = k->nowait;
  if (k->scan) {
    if (k->form == O_FIXED)
      s = nw ? xpar_segmented_scan_fixed_nowait(ctx, d, k->op, k->kind, in.p, o->p, fixed_size, m)
             : xpar_segmented_scan_fixed(ctx, d, k->op, k->kind, in.p, o->p, fixed_size, m);
    else
      s = nw ? xpar_segmented_scan_nowait(ctx, d, k->op, k->kind, in.p, o->p, n, offs, od, m)
             : xpar_segmented_scan(ctx, d, k->op, k->kind, in.p, o->p, n, offs, od, m);
  } else {
    if (k->form == O_FIXED)
      s = nw ? xpar_segmented_reduce_fixed_nowait(ctx, d, k->op, in.p, fixed_size, m, o->p)
             : xpar_segmented_reduce_fixed(ctx, d, k->op, in.p, fixed_size, m, o->p);
    else
      s = nw ? xpar_segmented_reduce_nowait(ctx, d, k->op, in.p, n, offs, od, m, o->p)
             : xpar_segmented_reduce(ctx, d, k->op, in.p, n, offs, od, m, o->p);
  }
  xt_check_status(label, "call", s, XPAR_OK);
  if (nw) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
  xt_check_decision(label, ctx, st->tier, XPAR_OP_SEGMENTED, d, m ? n : 0);
  const size_t head = (size_t)((unsigned char *)o->p - o->base);
  if (k->scan) {
    const size_t lo = base, hi = base + sum;
    if (hi > lo)
      xt_check_array(label, "scan inside the segments", d, (char *)o->p + lo * es, want + lo, hi - lo);
    xt_check_bytes(label, "output before the segments, and the guard", o->base, out_orig,
                   head + lo * es);
    xt_check_bytes(label, "output after the segments, and the guard",
                   (unsigned char *)o->p + hi * es, out_orig + head + hi * es,
                   o->total - head - hi * es);
  } else {
    if (m) xt_check_array(label, "segment results", d, o->p, want, m);
    xt_check_guards(label, "out", o);
  }
  if (!k->inplace)
    xt_check_bytes(label, "input (and its guards) after the call", in.base, in_orig, in.total);
  free(out_orig);
  free(in_orig);
  free(want);
  if (!k->inplace) xt_buf_free(&outb);
  xt_buf_free(&in);
  free(offs);
  free(sizes);
}

static void run(void **state, int scan) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  static const size_t totals[] = {1000, 300007};
  int variant = 0;
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    for (int op = 0; op < XPAR_REDUCTION_COUNT_; op++)
      for (int dist = 0; dist < D_COUNT; dist++)
        for (int form = 0; form < O_FORMS; form++)
          for (size_t ti = 0; ti < sizeof totals / sizeof totals[0]; ti++) {
            if (form == O_FIXED && (dist == D_POWER || dist == D_HALF || dist == D_EMPTIES ||
                                     dist == D_LONG_MIX))
              continue;
            if (totals[ti] > 1000 && (dist == D_NONE || dist == D_ALL_EMPTY)) continue;
            variant++;
            seg_case k;
            memset(&k, 0, sizeof k);
            k.scan = scan;
            k.op = (xpar_reduction)op;
            k.kind = (variant & 1) ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
            k.dist = dist;
            k.form = form;
            k.total = totals[ti];
            k.data = xt_is_float(d) ? (op == XPAR_SUM ? variant % 2 : 2 * (variant % 2)) : 0;
            k.inplace = scan && variant % 5 == 0;
            k.nowait = !k.inplace && variant % 3 == 0;
            const int oi = ti == 0 ? variant % XT_NOFFS : 0;
            k.in_off = xt_offs[oi][0];
            k.out_off = xt_offs[oi][1];
            run_case(st, ctx, d, &k);
            if (scan && dist == D_16 && ti == 0) { /* the other scan kind too */
              k.kind = k.kind == XPAR_INCLUSIVE ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
              run_case(st, ctx, d, &k);
            }
          }
  }
}

/* argmin / argmax per segment: the first NaN, else the first strict extreme; an
 * empty segment index -1 and the identity. */
static void seg_arg(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  static const size_t totals[] = {1000, 300007};
  int variant = 0;
  for (int di = 0; di < XT_NDTYPES; di++) {
    const xpar_dtype d = xt_dtypes[di];
    const size_t es = xt_size(d);
    for (int is_max = 0; is_max < 2; is_max++)
      for (int dist = 0; dist < D_COUNT; dist++)
        for (int form = 0; form < 2; form++)
          for (size_t ti = 0; ti < 2; ti++) {
            if (totals[ti] > 1000 && (dist == D_NONE || dist == D_ALL_EMPTY)) continue;
            variant++;
            char label[256];
            snprintf(label, sizeof label, "seg_%s/%s/%s/%s/%s/total~%zu", is_max ? "argmax" : "argmin",
                     xt_tier_name(st->tier), xt_dname(d), dist_names[dist], form_names[form],
                     totals[ti]);
            xt_rng rng;
            xt_rng_for(&rng, label);
            const size_t cap = totals[ti] + 64;
            size_t *sizes = (size_t *)malloc(cap * sizeof *sizes);
            assert_non_null(sizes);
            const size_t m = make_sizes(&rng, dist, totals[ti], sizes, cap);
            const size_t base = xt_below(&rng, 5);
            size_t sum = 0;
            for (size_t g = 0; g < m; g++) sum += sizes[g];
            const size_t n = base + sum + xt_below(&rng, 3);
            if (n > xt_tier_max_n(st->tier)) {
              free(sizes);
              continue;
            }
            void *offs = malloc((m + 1) * 8);
            assert_non_null(offs);
            for (size_t g = 0, at = base; g <= m; g++) {
              put_offset(form, offs, g, at);
              if (g < m) at += sizes[g];
            }
            xt_buf in, vals, idx;
            const size_t oi = (size_t)variant % XT_NOFFS;
            xt_buf_alloc(&in, d, n, xt_offs[oi][0]);
            if (variant % 2) xt_fill_random(&rng, d, in.p, n, XT_DATA_RANDOM, 8);
            else if (xt_is_float(d)) xt_fill_random(&rng, d, in.p, n, XT_DATA_SMALLINT, 2);
            else
              for (size_t i = 0; i < n; i++) xt_put(d, in.p, i, (long double)xt_below(&rng, 3));
            if (xt_is_float(d) && variant % 3 == 0)
              for (size_t i = xt_below(&rng, 9); i < n; i += 1 + xt_below(&rng, 61))
                put_special(d, in.p, i, xt_next(&rng));
            xt_buf_alloc(&vals, d, m, xt_offs[oi][1]);
            xt_buf_alloc(&idx, XPAR_INT64, m, 0);
            unsigned char *in_orig = xt_buf_copy(&in);
            const int nw = variant % 3 == 1;
            const xpar_dtype od = form == O_INT32 ? XPAR_INT32 : XPAR_INT64;
            xpar_status s;
            if (is_max)
              s = nw ? xpar_segmented_argmax_nowait(ctx, d, in.p, n, offs, od, m, vals.p, (int64_t *)idx.p)
                     : xpar_segmented_argmax(ctx, d, in.p, n, offs, od, m, vals.p, (int64_t *)idx.p);
            else
              s = nw ? xpar_segmented_argmin_nowait(ctx, d, in.p, n, offs, od, m, vals.p, (int64_t *)idx.p)
                     : xpar_segmented_argmin(ctx, d, in.p, n, offs, od, m, vals.p, (int64_t *)idx.p);
            xt_check_status(label, "call", s, XPAR_OK);
            if (nw) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
            xt_check_decision(label, ctx, st->tier, XPAR_OP_SEGMENTED, d, m ? n : 0);
            for (size_t g = 0, so = base; g < m; so += sizes[g], g++) {
              long long want = -1;
              long double b = 0;
              for (size_t i = so; i < so + sizes[g]; i++) {
                const long double v = xt_get(d, in.p, i);
                if (xt_is_float(d) && isnan(v)) {
                  want = (long long)i;
                  break;
                }
                if (want < 0 || (is_max ? v > b : v < b)) {
                  want = (long long)i;
                  b = v;
                }
              }
              const int64_t got = ((const int64_t *)idx.p)[g];
              if (got != want)
                xt_failf(label, "segment %zu: index %lld, expected %lld", g, (long long)got, want);
              unsigned char wv[8];
              if (want >= 0) memcpy(wv, (char *)in.p + (size_t)want * es, es);
              else xt_put(d, wv, 0, is_max ? xt_min_value(d) : xt_max_value(d));
              xt_check_bytes(label, "segment value (bitwise)", (char *)vals.p + g * es, wv, es);
            }
            xt_check_guards(label, "values", &vals);
            xt_check_guards(label, "indices", &idx);
            xt_check_bytes(label, "input (and its guards) after the call", in.base, in_orig, in.total);
            free(in_orig);
            xt_buf_free(&idx);
            xt_buf_free(&vals);
            xt_buf_free(&in);
            free(offs);
            free(sizes);
          }
  }
}

/* Bad offsets: refused on every tier, nothing written. */
static void bad_offsets(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  const size_t n = 100;
  xt_buf in, out;
  xt_buf_alloc(&in, XPAR_INT32, n, 0);
  for (size_t i = 0; i < n; i++) xt_put(XPAR_INT32, in.p, i, (long double)i);
  static const int64_t cases[][4] = {
      {0, 10, 5, 100},  /* decreasing in the middle */
      {0, 10, 20, 101}, /* past n */
      {-1, 10, 20, 30}, /* negative first */
      {50, 40, 60, 70}, /* decreasing at the start */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int w = 0; w < 2; w++)
      for (int scan = 0; scan < 2; scan++) {
        char label[128];
        snprintf(label, sizeof label, "bad offsets/%s/case %zu/%s/%s", xt_tier_name(st->tier), c,
                 w ? "int64" : "int32", scan ? "scan" : "reduce");
        int32_t o32[4];
        int64_t o64[4];
        for (int i = 0; i < 4; i++) {
          o32[i] = (int32_t)cases[c][i];
          o64[i] = cases[c][i];
        }
        const void *offs = w ? (const void *)o64 : (const void *)o32;
        xt_buf_alloc(&out, XPAR_INT32, scan ? n : 3, 0);
        xpar_status s =
            scan ? xpar_segmented_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, in.p, out.p, n,
                                       offs, w ? XPAR_INT64 : XPAR_INT32, 3)
                 : xpar_segmented_reduce(ctx, XPAR_INT32, XPAR_SUM, in.p, n, offs,
                                         w ? XPAR_INT64 : XPAR_INT32, 3, out.p);
        xt_check_status(label, "call", s, XPAR_ERR_INVALID_ARGUMENT);
        if (!strstr(xpar_last_error_detail(), "offsets"))
          xt_failf(label, "detail does not name the offsets: \"%s\"", xpar_last_error_detail());
        if (!xt_is_poison(XPAR_INT32, out.p, scan ? n : 3)) xt_failf(label, "output written");
        xt_check_guards(label, "out", &out);
        xt_buf_free(&out);
      }
  xt_buf_free(&in);
}

/* Reproducible mode: each segment's float / double sum (scan) is reproducible
 * xpar_reduce(SUM) (xpar_scan) of its elements on cpu-serial, bit for bit, on
 * every tier; segments of 2^16 elements and more take the OpenMP tier's
 * parallel path.  Scans: inclusive and exclusive, in place too; the output
 * outside the segments keeps its poison. */
static void reproducible(void **state) {
  xt_tier_state *st = (xt_tier_state *)*state;
  xpar_context *ctx = xt_tier_open(st);
  XT_OK(xpar_context_set_reproducible(ctx, 1));
  xpar_context *ref_ctx = NULL;
  XT_OK(xpar_context_create(&ref_ctx));
  XT_OK(xpar_context_set_backend(ref_ctx, XPAR_BACKEND_CPU_SERIAL));
  XT_OK(xpar_context_set_reproducible(ref_ctx, 1));
  static const size_t totals[] = {1000, 300007};
  static const int dists[] = {D_ONES, D_16, D_1024, D_POWER, D_HALF, D_EMPTIES, D_ALL_EMPTY,
                              D_ONE};
  int variant = 0;
  for (int scan = 0; scan < 2; scan++)
    for (int vi = 0; vi < 2; vi++) {
      const xpar_dtype d = vi ? XPAR_DOUBLE : XPAR_FLOAT;
      const size_t es = xt_size(d);
      for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++)
        for (int form = 0; form < O_FORMS; form++)
          for (size_t ti = 0; ti < sizeof totals / sizeof totals[0]; ti++) {
            const int dist = dists[di];
            if (form == O_FIXED && (dist == D_POWER || dist == D_HALF || dist == D_EMPTIES ||
                                     dist == D_LONG_MIX))
              continue;
            if (totals[ti] > 1000 && dist == D_ALL_EMPTY) continue;
            if (totals[ti] > xt_tier_max_n(st->tier)) continue;
            variant++;
            const xpar_scan_kind kind = variant % 2 ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
            const int inplace = scan && variant % 5 == 0;
            const int nowait = !inplace && variant % 3 == 0;
            char label[256];
            snprintf(label, sizeof label, "reproducible/%s/%s/%s/%s/%s/total~%zu%s%s",
                     scan ? (kind == XPAR_EXCLUSIVE ? "scan-exclusive" : "scan-inclusive")
                          : "reduce",
                     xt_tier_name(st->tier), xt_dname(d), dist_names[dist], form_names[form],
                     totals[ti], nowait ? "/nowait" : "", inplace ? "/in-place" : "");
            xt_rng rng;
            xt_rng_for(&rng, label);
            const size_t cap = totals[ti] + 64;
            size_t *sizes = (size_t *)malloc(cap * sizeof *sizes);
            assert_non_null(sizes);
            const size_t m = make_sizes(&rng, dist, totals[ti], sizes, cap);
            const size_t fixed_size = form == O_FIXED && m ? sizes[m / 2] : 0;
            if (form == O_FIXED)
              for (size_t g = 0; g < m; g++) sizes[g] = fixed_size;
            /* offsets from `lead` on, with data before and after the segments */
            const size_t lead = form == O_FIXED ? 0 : 3;
            size_t n = lead;
            for (size_t g = 0; g < m; g++) n += sizes[g];
            n += form == O_FIXED ? 0 : 5;
            void *offs = malloc((m + 1) * 8);
            assert_non_null(offs);
            size_t at = lead;
            for (size_t g = 0; g <= m; g++) {
              if (form != O_FIXED) put_offset(form, offs, g, at);
              if (g < m) at += sizes[g];
            }
            xt_buf in, outb;
            xt_buf_alloc(&in, d, n ? n : 1, 0);
            xt_fill_random(&rng, d, in.p, n, XT_DATA_RANDOM, 8);
            const size_t out_n = scan ? n : m;
            if (!inplace) xt_buf_alloc(&outb, d, out_n ? out_n : 1, 0);
            xt_buf *o = inplace ? &in : &outb;
            /* the expected output: the poison (or, in place, the input) where not written */
            unsigned char *want = (unsigned char *)malloc((out_n + 1) * es);
            unsigned char *in_orig = (unsigned char *)malloc((n + 1) * es);
            assert_true(want && in_orig);
            memcpy(in_orig, in.p, n * es);
            memcpy(want, o->p, out_n * es);
            at = lead;
            for (size_t g = 0; g < m; g++) {
              if (scan)
                XT_OK(xpar_scan(ref_ctx, d, XPAR_SUM, kind, in_orig + at * es, want + at * es,
                                sizes[g]));
              else
                XT_OK(xpar_reduce(ref_ctx, d, XPAR_SUM, in_orig + at * es, sizes[g],
                                  want + g * es));
              at += sizes[g];
            }
            const xpar_dtype od = form == O_INT32 ? XPAR_INT32 : XPAR_INT64;
            xpar_status s;
            if (scan && form == O_FIXED)
              s = nowait ? xpar_segmented_scan_fixed_nowait(ctx, d, XPAR_SUM, kind, in.p, o->p,
                                                            fixed_size, m)
                         : xpar_segmented_scan_fixed(ctx, d, XPAR_SUM, kind, in.p, o->p,
                                                     fixed_size, m);
            else if (scan)
              s = nowait ? xpar_segmented_scan_nowait(ctx, d, XPAR_SUM, kind, in.p, o->p, n, offs,
                                                      od, m)
                         : xpar_segmented_scan(ctx, d, XPAR_SUM, kind, in.p, o->p, n, offs, od, m);
            else if (form == O_FIXED)
              s = nowait ? xpar_segmented_reduce_fixed_nowait(ctx, d, XPAR_SUM, in.p, fixed_size,
                                                              m, o->p)
                         : xpar_segmented_reduce_fixed(ctx, d, XPAR_SUM, in.p, fixed_size, m,
                                                       o->p);
            else
              s = nowait ? xpar_segmented_reduce_nowait(ctx, d, XPAR_SUM, in.p, n, offs, od, m,
                                                        o->p)
                         : xpar_segmented_reduce(ctx, d, XPAR_SUM, in.p, n, offs, od, m, o->p);
            xt_check_status(label, "call", s, XPAR_OK);
            if (nowait) xt_check_status(label, "wait", xpar_wait(ctx), XPAR_OK);
            xpar_decision dec;
            XT_OK(xpar_last_decision(ctx, &dec));
            if (!dec.reproducible) xt_failf(label, "the record does not say reproducible");
            for (size_t i = 0; i < out_n; i++)
              if (memcmp((const char *)o->p + i * es, want + i * es, es) != 0) {
                xt_failf(label, "%s %zu: %.17Lg, expected (reproducible %s) %.17Lg",
                         scan ? "element" : "segment", i, xt_get(d, o->p, i),
                         scan ? "scan of its segment" : "reduce", xt_get(d, want, i));
                break;
              }
            if (!out_n && !inplace && !xt_is_poison(d, o->p, 1))
              xt_failf(label, "output written for no elements");
            xt_check_guards(label, "out", o);
            if (!inplace)
              xt_check_bytes(label, "input after the call", in.p, in_orig, n * es);
            free(want);
            free(in_orig);
            if (!inplace) xt_buf_free(&outb);
            xt_buf_free(&in);
            free(offs);
            free(sizes);
          }
    }
  xpar_context_destroy(ref_ctx);
}

static void seg_reduce(void **state) { run(state, 0); }
static void seg_scan(void **state) { run(state, 1); }

int main(int argc, char **argv) {
  xt_init("test_segmented", argc, argv);
  static const char *const names[] = {"segmented_reduce", "segmented_scan", "segmented_arg",
                                      "bad_offsets", "reproducible"};
  static const xt_body bodies[] = {seg_reduce, seg_scan, seg_arg, bad_offsets, reproducible};
  return xt_run_tier_tests("segmented", names, bodies, sizeof names / sizeof names[0]);
}
