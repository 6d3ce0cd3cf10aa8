/*
 * CPU histogram (xpar__histogram_spec): even bins (base/hist_bin.h says where
 * each sample goes, the same arithmetic as every other tier) or bins between
 * boundaries (binary search, C's comparisons).  Every count is exact, so every
 * tier and thread count gives the same counts.
 *
 * Samples go in blocks of XPAR__CPU_HIST_BLOCK: the block's bins first (a loop
 * with no branch for floats and 32-bit integers, which the compiler
 * vectorises), then the counts.
 * Up to XPAR__CPU_HIST_LANES_MAX_BINS bins, and with four samples per count or
 * more, a histogram is four interleaved copies (sample j bumps copy j % 4),
 * summed at the end: a run of samples in one bin then does not wait on one
 * counter's store per sample.  On the development VM (2 vCPUs, loaded), one
 * thread, 2^20 samples, 256 bins, 7 of 8 in one bin: 2.0 ns per float sample
 * with the copies, 3.0 without; uniform samples 2.0 either way.
 *
 * One thread (ex->serial, one thread, or n too small for a team): the counts
 * (or the four copies, from the context's host scratch) are zeroed, then each
 * counted sample bumps its count.  Bytes: read n samples, write num_bins
 * counts (and read them back while counting: they stay in cache up to its
 * size).
 *
 * OpenMP tier, two schemes by the private histograms' size:
 *  - team x num_bins <= XPAR__CPU_HIST_PRIVATE_MAX_COUNTS: each thread counts
 *    its contiguous slice into its own histogram (64-bit counts, from the
 *    context's host scratch, so nothing is allocated per call once it has
 *    grown), then after one barrier every thread sums a slice of the bins
 *    across the team's histograms into counts.  Extra traffic: the private
 *    histograms zeroed, then read once (team x num_bins x 8 bytes each way),
 *    noise next to n samples for 32 .. 4,096 bins;
 *  - larger (huge bin counts, where the private histograms would outweigh
 *    the samples): counts are zeroed by the team, then every thread bumps the
 *    shared counts with relaxed atomic adds.  No scratch; contention only
 *    where many samples share a bin, which a huge histogram rarely has.
 * Nothing can fail once counts is first written: the scratch is taken before.
 */
#include "base/hist_bin.h"
#include "cpu_internal.h"

/* The most private counts (team x num_bins) the OpenMP tier keeps: 32 MiB of
 * scratch.  16 threads keep private histograms up to 262,144 bins. */
#ifndef XPAR__CPU_HIST_PRIVATE_MAX_COUNTS
#define XPAR__CPU_HIST_PRIVATE_MAX_COUNTS ((size_t)1 << 22)
#endif
/* Up to this many bins a histogram is kept as four interleaved copies (4 x 8
 * x 8,192 bytes = 256 KiB: the L2), where there are at least four samples per
 * count to be had. */
#ifndef XPAR__CPU_HIST_LANES_MAX_BINS
#define XPAR__CPU_HIST_LANES_MAX_BINS 8192
#endif

/* Samples are taken in blocks: a block's bins (XPAR__HIST_SKIP: not counted)
 * are computed first, then counted.  The float formula vectorises that way,
 * and the counting loop is one shape for every dtype and variant. */
#define XPAR__CPU_HIST_BLOCK 512

/* The bins of m samples x[0 .. m) of the call's dtype. */
typedef void (*hist_bins_fn)(const xpar__histogram_spec *s, const void *x, size_t m,
                             uint32_t *bins);

/* Even bins, integers: the ordered key, then the exact quotient. */
#define XPAR__CPU_HIST_EVEN_INT_(e, ctype, keyfn)                                                \
  static void hist_bins_even_##e(const xpar__histogram_spec *s, const void *xv, size_t m,     \
                                 uint32_t *bins) {                                           \
    const ctype *x = (const ctype *)xv;                                                       \
    const xpar__hist_even *p = s->even;                                                       \
    for (size_t j = 0; j < m; j++) bins[j] = xpar__hist_int_bin(p, keyfn(x[j]));              \
  }
XPAR__CPU_HIST_EVEN_INT_(INT32, int32_t, xpar__hist_key_i32)
XPAR__CPU_HIST_EVEN_INT_(INT64, int64_t, xpar__hist_key_i64)
XPAR__CPU_HIST_EVEN_INT_(UINT32, uint32_t, xpar__hist_key_u32)
XPAR__CPU_HIST_EVEN_INT_(UINT64, uint64_t, xpar__hist_key_u64)
#undef XPAR__CPU_HIST_EVEN_INT_

/* Even bins, 32-bit integers (lo < hi makes their range 1 .. 2^32 - 1, which
 * hist_fn still checks before choosing these): the same exact
 * quotient floor(d * num_bins / range), found with lane operations the
 * compiler vectorises instead of a 128-bit product per sample.  The estimate
 * t = d * (num_bins / range) in double is within 2^-20 of the quotient's real
 * value (d < 2^32, num_bins <= 2^31, two roundings of 2^-53), so its floor is
 * the quotient or one off either way; the 64-bit products of 32-bit factors
 * d * num_bins and q * range (< 2^63) say which.  d wraps below lo, so one
 * compare, d < range, tells a counted sample. */
#define XPAR__CPU_HIST_EVEN32_(e, ctype, bias)                                                   \
  XPAR__CPU_SIMD_CLONES static void hist_bins_even32_##e(const xpar__histogram_spec *s,      \
                                                         const void *xv, size_t m,           \
                                                         uint32_t *bins) {                   \
    const ctype *x = (const ctype *)xv;                                                       \
    const xpar__hist_even *p = s->even;                                                       \
    const uint32_t klo = (uint32_t)p->key_lo, r = (uint32_t)p->range, nb = p->num_bins;      \
    const double sc = (double)nb / (double)r, top = (double)(nb - 1);                         \
    for (size_t j = 0; j < m; j++) {                                                          \
      const uint32_t d = ((uint32_t)x[j] ^ (bias)) - klo;                                     \
      /* d as a double through a signed conversion (the one SIMD has) */                      \
      double t = ((double)(int32_t)(d ^ 0x80000000u) + 2147483648.0) * sc;                    \
      t = t < top ? t : top; /* keeps the conversion defined for samples outside */           \
      const uint32_t q0 = (uint32_t)(int32_t)t;                                               \
      const uint64_t num = (uint64_t)d * nb, qr = (uint64_t)q0 * r;                           \
      const uint32_t q = q0 - (uint32_t)(qr > num) + (uint32_t)(qr <= num && num - qr >= r);  \
      bins[j] = d < r ? q : XPAR__HIST_SKIP;                                                  \
    }                                                                                         \
  }
XPAR__CPU_HIST_EVEN32_(INT32, int32_t, 0x80000000u)
XPAR__CPU_HIST_EVEN32_(UINT32, uint32_t, 0u)
#undef XPAR__CPU_HIST_EVEN32_

/* Even bins, floats: the double formula of base/hist_bin.h by a loop with no
 * branch (the compiler vectorises its division: 2 or 4 lanes).  The same IEEE
 * operations as xpar__hist_float_bin, in the same order (x * 1.0 is x), so the
 * same bins: clamping t to num_bins - 1 before truncating equals truncating,
 * then clamping (t >= 0). */
#define XPAR__CPU_HIST_EVEN_FLOAT_(e, ctype)                                                    \
  XPAR__CPU_SIMD_CLONES static void hist_bins_even_##e(const xpar__histogram_spec *s,       \
                                                       const void *xv, size_t m,             \
                                                       uint32_t *bins) {                     \
    const ctype *x = (const ctype *)xv;                                                       \
    const xpar__hist_even *p = s->even;                                                       \
    const double lo = p->lo, hi = p->hi, base = p->base, width = p->width;                    \
    const double scale = p->halved ? 0.5 : 1.0, nb = (double)p->num_bins;                     \
    const double top = (double)(p->num_bins - 1);                                             \
    for (size_t j = 0; j < m; j++) {                                                          \
      const double v = (double)x[j];                                                          \
      const int in = v >= lo && v < hi;                                                       \
      double t = ((v * scale - base) / width) * nb;                                           \
      t = in ? t : 0.0;                                                                       \
      t = t < nb ? t : top;                                                                   \
      bins[j] = in ? (uint32_t)(int32_t)t : XPAR__HIST_SKIP;                                  \
    }                                                                                         \
  }
XPAR__CPU_HIST_EVEN_FLOAT_(FLOAT, float)
XPAR__CPU_HIST_EVEN_FLOAT_(DOUBLE, double)
#undef XPAR__CPU_HIST_EVEN_FLOAT_

/* Range bins: the last boundary <= x, by binary search over b[0 .. nb], for x
 * in [b[0], b[nb]) (NaN fails both compares).  b does not decrease, so that
 * boundary is below b[nb] and its bin is the one bin i with b[i] <= x <
 * b[i + 1] (an empty bin between equal boundaries is never it). */
#define XPAR__CPU_HIST_RANGE_(e, ctype, name, size)                                             \
  static void hist_bins_range_##e(const xpar__histogram_spec *s, const void *xv, size_t m,    \
                                  uint32_t *bins) {                                          \
    const ctype *x = (const ctype *)xv;                                                       \
    const ctype *b = (const ctype *)s->boundaries;                                            \
    const size_t nb = s->num_bins;                                                            \
    const ctype first = b[0], last = b[nb];                                                   \
    for (size_t j = 0; j < m; j++) {                                                          \
      const ctype v = x[j];                                                                   \
      if (!(v >= first && v < last)) {                                                        \
        bins[j] = XPAR__HIST_SKIP;                                                            \
        continue;                                                                             \
      }                                                                                       \
      size_t l = 0, h = nb; /* b[l] <= v < b[h] */                                            \
      while (h - l > 1) {                                                                     \
        const size_t mid = l + (h - l) / 2;                                                   \
        if (v >= b[mid])                                                                      \
          l = mid;                                                                            \
        else                                                                                  \
          h = mid;                                                                            \
      }                                                                                       \
      bins[j] = (uint32_t)l;                                                                  \
    }                                                                                         \
  }
XPAR_DTYPE_MAP(XPAR__CPU_HIST_RANGE_)
#undef XPAR__CPU_HIST_RANGE_

static hist_bins_fn hist_fn(const xpar__histogram_spec *s) {
  if (s->boundaries) {
    switch (s->dtype) {
#define XPAR__CPU_HIST_CASE_(e, ctype, name, size) \
  case XPAR_##e: return hist_bins_range_##e;
      XPAR_DTYPE_MAP(XPAR__CPU_HIST_CASE_)
#undef XPAR__CPU_HIST_CASE_
      default: return NULL;
    }
  }
  if (s->even->range <= 0xffffffffu) {
    if (s->dtype == XPAR_INT32) return hist_bins_even32_INT32;
    if (s->dtype == XPAR_UINT32) return hist_bins_even32_UINT32;
  }
  switch (s->dtype) {
#define XPAR__CPU_HIST_CASE_(e, ctype, name, size) \
  case XPAR_##e: return hist_bins_even_##e;
    XPAR_DTYPE_MAP(XPAR__CPU_HIST_CASE_)
#undef XPAR__CPU_HIST_CASE_
    default: return NULL;
  }
}

/* Count samples [lo, hi) into hist.  lanes 4: hist holds 4 histograms of nb
 * counts, sample j bumping copy j % 4 -- runs of samples in one bin (skewed
 * data, few bins) then bump 4 counters in turn instead of waiting on one
 * counter's store each time; 1: one histogram; atomic: shared counts, bumped
 * with relaxed atomic adds. */
static void hist_count(hist_bins_fn fn, const xpar__histogram_spec *s, size_t lo, size_t hi,
                       uint64_t *hist, int lanes, int atomic) {
  const size_t es = xpar__dtype_size(s->dtype), nb = s->num_bins;
  const unsigned char *x = (const unsigned char *)s->samples;
  uint32_t bins[XPAR__CPU_HIST_BLOCK];
  for (size_t i = lo; i < hi; i += XPAR__CPU_HIST_BLOCK) {
    const size_t m = hi - i < XPAR__CPU_HIST_BLOCK ? hi - i : XPAR__CPU_HIST_BLOCK;
    fn(s, x + i * es, m, bins);
    if (atomic) {
      for (size_t j = 0; j < m; j++)
        if (bins[j] != XPAR__HIST_SKIP) __atomic_fetch_add(&hist[bins[j]], 1, __ATOMIC_RELAXED);
    } else if (lanes == 4) {
      for (size_t j = 0; j < m; j++)
        if (bins[j] != XPAR__HIST_SKIP) hist[(j & 3) * nb + bins[j]]++;
    } else {
      for (size_t j = 0; j < m; j++)
        if (bins[j] != XPAR__HIST_SKIP) hist[bins[j]]++;
    }
  }
}

/* Private histograms of `lanes` copies: each thread counts its slice into
 * priv + id * lanes * nb, then sums its slice of the bins over the team's
 * copies into counts. */
static void hist_private(hist_bins_fn fn, const xpar__histogram_spec *s, uint64_t *priv,
                         int lanes, int region, int team) {
  const size_t n = s->n, nb = s->num_bins, per = (size_t)lanes * nb;
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    const int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    if (id < nt) {
      uint64_t *mine = priv + (size_t)id * per;
      memset(mine, 0, per * sizeof *mine);
      size_t lo, hi;
      xpar__cpu_split(0, n, id, nt, &lo, &hi);
      hist_count(fn, s, lo, hi, mine, lanes, 0);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    if (id < nt) {
      size_t b0, b1;
      xpar__cpu_split(0, nb, id, nt, &b0, &b1);
      for (size_t j = b0; j < b1; j++) {
        uint64_t sum = 0;
        for (size_t c = 0; c < (size_t)nt * (size_t)lanes; c++) sum += priv[c * nb + j];
        s->counts[j] = sum;
      }
    }
  }
}

/* Shared counts with atomic adds: zeroed by the team, one barrier, counted. */
static void hist_atomic(hist_bins_fn fn, const xpar__histogram_spec *s, int region, int team) {
  const size_t n = s->n, nb = s->num_bins;
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    const int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    size_t lo, hi;
    if (id < nt) {
      xpar__cpu_split(0, nb, id, nt, &lo, &hi);
      memset(s->counts + lo, 0, (hi - lo) * sizeof *s->counts);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    if (id < nt) {
      xpar__cpu_split(0, n, id, nt, &lo, &hi);
      hist_count(fn, s, lo, hi, s->counts, 1, 1);
    }
  }
}

xpar_status xpar__cpu_histogram(const xpar__exec *ex, const xpar__histogram_spec *s) {
  const size_t n = s->n, nb = s->num_bins;
  if (n == 0) {
    memset(s->counts, 0, nb * sizeof *s->counts);
    return XPAR_OK;
  }
  const hist_bins_fn fn = hist_fn(s);
  if (!fn) return xpar__fail(XPAR_ERR_INVALID_ENUM, "histogram: unknown dtype %d", (int)s->dtype);
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  /* four copies per histogram where they stay in L2 and the samples outnumber them */
  const int lanes = nb <= XPAR__CPU_HIST_LANES_MAX_BINS && n >= 4 * nb * (size_t)team ? 4 : 1;
  if (team <= 1) {
    if (lanes == 1) {
      memset(s->counts, 0, nb * sizeof *s->counts);
      hist_count(fn, s, 0, n, s->counts, 1, 0);
      return XPAR_OK;
    }
    void *scratch;
    XPAR__FORWARD(xpar__host_scratch_get(ex->host_scratch, 4 * nb * sizeof(uint64_t),
                                         "histogram", &scratch));
    uint64_t *h = (uint64_t *)scratch;
    memset(h, 0, 4 * nb * sizeof *h);
    hist_count(fn, s, 0, n, h, 4, 0);
    for (size_t j = 0; j < nb; j++) s->counts[j] = h[j] + h[nb + j] + h[2 * nb + j] + h[3 * nb + j];
    return XPAR_OK;
  }
  const int region = xpar__cpu_region_size(ex);
  if ((size_t)team * (size_t)lanes * nb <= XPAR__CPU_HIST_PRIVATE_MAX_COUNTS) {
    void *scratch;
    XPAR__FORWARD(xpar__host_scratch_get(ex->host_scratch,
                                         (size_t)team * (size_t)lanes * nb * sizeof(uint64_t),
                                         "histogram", &scratch));
    hist_private(fn, s, (uint64_t *)scratch, lanes, region, team);
  } else {
    hist_atomic(fn, s, region, team);
  }
  return XPAR_OK;
}
