/*
 * The bin of a sample in an equal-width histogram (xpar_histogram_even), as
 * every tier computes it: one set of inline functions for C and CUDA C++, fed
 * by one set of parameters prepared once per call on the host
 * (xpar__hist_even_prepare), so every tier puts every sample in the same bin.
 *
 * The definition (xpar.h states it for users):
 *  - integers: floor((x - lo) * num_bins / (hi - lo)), exact.  Samples are read
 *    as ordered unsigned 64-bit keys (signed values with the sign bit flipped),
 *    so x - lo and hi - lo are plain unsigned differences below 2^64 and the
 *    product with num_bins (<= 2^31) fits 128 bits.  Where that product stays
 *    below 2^63 (every 32-bit dtype; 64-bit ranges up to 2^63 / num_bins) the
 *    quotient is the high half of its product with floor((2^64 - 1) / range),
 *    which is the quotient or one less, plus one where the remainder shows it
 *    (no division per sample); otherwise it is estimated in double and
 *    corrected by exact 128-bit compares.  Either way the result is the exact
 *    quotient: the estimate may differ between tiers (fused or not), the
 *    corrected quotient cannot.
 *  - floats, in double (a float converts exactly), round-to-nearest, no fused
 *    multiply-add (the CUDA side calls the _rn intrinsics, which nvcc never
 *    contracts): t = ((x - lo) / (hi - lo)) * num_bins, or with every operand
 *    halved where hi - lo overflows; bin = min(floor(t), num_bins - 1).  Since
 *    lo <= x < hi, 0 <= (x - lo) / (hi - lo) <= 1 after rounding, so
 *    0 <= t <= num_bins: the clamp only catches t == num_bins (a sample within
 *    rounding of hi).
 * Samples outside [lo, hi) and NaN are not counted (xpar__hist_*_bin returns
 * XPAR__HIST_SKIP).
 */
#ifndef XPAR_BASE_HIST_BIN_H
#define XPAR_BASE_HIST_BIN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "xpar/xpar.h"

#if defined(__CUDACC__)
#define XPAR__HIST_FN static inline __host__ __device__
#else
#define XPAR__HIST_FN static inline
#endif

/** The bin of a sample that is not counted. */
#define XPAR__HIST_SKIP 0xffffffffu

/** An equal-width histogram's parameters, prepared once per call. */
typedef struct xpar__hist_even {
  uint32_t num_bins; /* 1 .. XPAR_HISTOGRAM_MAX_BINS                         */
  int is_float;      /* float, double: the double fields; else the key fields */
  /* integers: ordered keys (xpar__hist_key_*) of lo and hi, their difference
   * (>= 1); whether the narrow path applies ((range - 1) * num_bins < 2^63) and
   * its reciprocal floor((2^64 - 1) / range); num_bins / range, the wide path's
   * estimate */
  uint64_t key_lo, key_hi, range;
  int narrow;
  uint64_t recip;
  double scale;
  /* floats: lo and hi, and the subtrahend and divisor of t (lo and hi - lo, or
   * lo * 0.5 and hi * 0.5 - lo * 0.5 with halved) */
  double lo, hi, base, width;
  int halved;
} xpar__hist_even;

/* ---- double arithmetic without contraction ---------------------------------- */
#if defined(__CUDA_ARCH__)
#define XPAR__HIST_DSUB(a, b) __dsub_rn((a), (b))
#define XPAR__HIST_DMUL(a, b) __dmul_rn((a), (b))
#define XPAR__HIST_DDIV(a, b) __ddiv_rn((a), (b))
#else
#define XPAR__HIST_DSUB(a, b) ((a) - (b))
#define XPAR__HIST_DMUL(a, b) ((a) * (b))
#define XPAR__HIST_DDIV(a, b) ((a) / (b))
#endif

/** An integer's ordered key: unsigned order is numeric order. */
XPAR__HIST_FN uint64_t xpar__hist_key_i32(int32_t v) {
  return (uint64_t)((uint32_t)v ^ 0x80000000u);
}
XPAR__HIST_FN uint64_t xpar__hist_key_i64(int64_t v) {
  return (uint64_t)v ^ 0x8000000000000000ull;
}
XPAR__HIST_FN uint64_t xpar__hist_key_u32(uint32_t v) { return (uint64_t)v; }
XPAR__HIST_FN uint64_t xpar__hist_key_u64(uint64_t v) { return v; }

/** a * b as 128 bits, hi:lo. */
XPAR__HIST_FN void xpar__hist_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__CUDA_ARCH__)
  *lo = a * b;
  *hi = __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
  const unsigned __int128 p = (unsigned __int128)a * b;
  *lo = (uint64_t)p;
  *hi = (uint64_t)(p >> 64);
#else
  const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
  *lo = (mid << 32) | (uint32_t)p00;
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/** a * b, the high 64 bits. */
XPAR__HIST_FN uint64_t xpar__hist_mulhi(uint64_t a, uint64_t b) {
  uint64_t hi, lo;
  xpar__hist_mul128(a, b, &hi, &lo);
  return hi;
}

/** The bin of an integer sample's key k (XPAR__HIST_SKIP outside [lo, hi)). */
XPAR__HIST_FN uint32_t xpar__hist_int_bin(const xpar__hist_even *p, uint64_t k) {
  if (k < p->key_lo || k >= p->key_hi) return XPAR__HIST_SKIP;
  const uint64_t d = k - p->key_lo; /* < range */
  const uint64_t nb = p->num_bins, r = p->range;
  if (p->narrow) {
    /* num < 2^63, recip = floor((2^64 - 1) / r): num * recip / 2^64 lies in
     * (num / r - 1, num / r], so its floor is the quotient or one less */
    const uint64_t num = d * nb;
    uint64_t q = xpar__hist_mulhi(num, p->recip);
    q += num - q * r >= r;
    return (uint32_t)q;
  }
  /* the estimate: off by at most one or two either way; q <= nb - 1 */
  double t = (double)d * p->scale;
  uint64_t q = t < (double)nb ? (uint64_t)t : nb - 1;
  if (q >= nb) q = nb - 1;
  uint64_t nh, nl, ph, pl;
  xpar__hist_mul128(d, nb, &nh, &nl);
  xpar__hist_mul128(q, r, &ph, &pl);
  while (ph > nh || (ph == nh && pl > nl)) { /* q * r > d * nb */
    --q;
    ph -= pl < r;
    pl -= r;
  }
  for (;;) { /* (q + 1) * r <= d * nb, i.e. the remainder d * nb - q * r >= r */
    const uint64_t rl = nl - pl, rh = nh - ph - (nl < pl);
    if (rh == 0 && rl < r) break;
    ++q;
    pl += r;
    ph += pl < r;
  }
  return (uint32_t)q;
}

/** The bin of a float or double sample (converted to double: exact). */
XPAR__HIST_FN uint32_t xpar__hist_float_bin(const xpar__hist_even *p, double x) {
  if (!(x >= p->lo && x < p->hi)) return XPAR__HIST_SKIP; /* NaN too */
  const double xs = p->halved ? XPAR__HIST_DMUL(x, 0.5) : x;
  const double f = XPAR__HIST_DDIV(XPAR__HIST_DSUB(xs, p->base), p->width);
  const double t = XPAR__HIST_DMUL(f, (double)p->num_bins);
  const uint32_t b = (uint32_t)t; /* 0 <= t <= num_bins <= 2^31 */
  return b < p->num_bins ? b : p->num_bins - 1;
}

/** Prepare p from host scalars lo, hi of dtype (checked by api/: valid dtype,
 *  lo < hi, finite floats, 1 <= num_bins <= XPAR_HISTOGRAM_MAX_BINS).  Host
 *  code only (a plain function: host-side under nvcc too). */
static inline void xpar__hist_even_prepare(xpar_dtype dtype, const void *lo, const void *hi,
                                           size_t num_bins, xpar__hist_even *p) {
  memset(p, 0, sizeof *p);
  p->num_bins = (uint32_t)num_bins;
  if (dtype == XPAR_FLOAT || dtype == XPAR_DOUBLE) {
    double l, h;
    if (dtype == XPAR_FLOAT) {
      float lf, hf;
      memcpy(&lf, lo, sizeof lf);
      memcpy(&hf, hi, sizeof hf);
      l = lf;
      h = hf;
    } else {
      memcpy(&l, lo, sizeof l);
      memcpy(&h, hi, sizeof h);
    }
    p->is_float = 1;
    p->lo = l;
    p->hi = h;
    const volatile double w = h - l; /* volatile: evaluated in double, once */
    if (isfinite(w)) {
      p->base = l;
      p->width = w;
    } else {
      p->halved = 1;
      p->base = l * 0.5;
      p->width = h * 0.5 - l * 0.5;
    }
    return;
  }
  uint64_t kl, kh;
  switch (dtype) {
    case XPAR_INT32: {
      int32_t a, b;
      memcpy(&a, lo, 4);
      memcpy(&b, hi, 4);
      kl = xpar__hist_key_i32(a);
      kh = xpar__hist_key_i32(b);
      break;
    }
    case XPAR_INT64: {
      int64_t a, b;
      memcpy(&a, lo, 8);
      memcpy(&b, hi, 8);
      kl = xpar__hist_key_i64(a);
      kh = xpar__hist_key_i64(b);
      break;
    }
    case XPAR_UINT32: {
      uint32_t a, b;
      memcpy(&a, lo, 4);
      memcpy(&b, hi, 4);
      kl = a;
      kh = b;
      break;
    }
    default: {
      memcpy(&kl, lo, 8);
      memcpy(&kh, hi, 8);
      break;
    }
  }
  p->key_lo = kl;
  p->key_hi = kh;
  p->range = kh - kl;
  p->narrow = p->range - 1 < ((uint64_t)1 << 63) / num_bins;
  p->recip = UINT64_MAX / p->range;
  p->scale = (double)num_bins / (double)p->range;
}

#endif /* XPAR_BASE_HIST_BIN_H */
