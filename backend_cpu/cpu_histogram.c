/*
 * CPU histogram (xpar__histogram_spec): even bins (base/hist_bin.h says where
 * each sample goes, the same arithmetic as every other tier) or bins between
 * boundaries (binary search, C's comparisons).  Every count is exact, so every
 * tier and thread count gives the same counts.
 *
 * One thread (ex->serial, one thread, or n too small for a team): the counts
 * are zeroed, then each counted sample bumps its count in place.  Bytes:
 * read n samples, write num_bins counts (and read them back while counting:
 * they stay in cache up to its size).
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

/* Count samples [lo, hi) into hist (added to what it holds); `atomic`: hist
 * is shared, bumped with relaxed atomic adds. */
typedef void (*hist_count_fn)(const xpar__histogram_spec *s, size_t lo, size_t hi,
                              uint64_t *hist, int atomic);

static inline void bump(uint64_t *hist, uint32_t b, int atomic) {
  if (atomic)
    __atomic_fetch_add(&hist[b], 1, __ATOMIC_RELAXED);
  else
    hist[b]++;
}

/* Even bins, integers: the ordered key, then the exact quotient. */
#define XPAR__CPU_HIST_EVEN_INT_(e, ctype, keyfn)                                               \
  static void hist_even_##e(const xpar__histogram_spec *s, size_t lo, size_t hi,             \
                            uint64_t *hist, int atomic) {                                    \
    const ctype *x = (const ctype *)s->samples;                                               \
    const xpar__hist_even *p = s->even;                                                       \
    for (size_t i = lo; i < hi; i++) {                                                        \
      const uint32_t b = xpar__hist_int_bin(p, keyfn(x[i]));                                  \
      if (b != XPAR__HIST_SKIP) bump(hist, b, atomic);                                        \
    }                                                                                         \
  }
XPAR__CPU_HIST_EVEN_INT_(INT32, int32_t, xpar__hist_key_i32)
XPAR__CPU_HIST_EVEN_INT_(INT64, int64_t, xpar__hist_key_i64)
XPAR__CPU_HIST_EVEN_INT_(UINT32, uint32_t, xpar__hist_key_u32)
XPAR__CPU_HIST_EVEN_INT_(UINT64, uint64_t, xpar__hist_key_u64)
#undef XPAR__CPU_HIST_EVEN_INT_

/* Even bins, floats: the double formula of base/hist_bin.h. */
#define XPAR__CPU_HIST_EVEN_FLOAT_(e, ctype)                                                    \
  static void hist_even_##e(const xpar__histogram_spec *s, size_t lo, size_t hi,             \
                            uint64_t *hist, int atomic) {                                    \
    const ctype *x = (const ctype *)s->samples;                                               \
    const xpar__hist_even *p = s->even;                                                       \
    for (size_t i = lo; i < hi; i++) {                                                        \
      const uint32_t b = xpar__hist_float_bin(p, (double)x[i]);                               \
      if (b != XPAR__HIST_SKIP) bump(hist, b, atomic);                                        \
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
  static void hist_range_##e(const xpar__histogram_spec *s, size_t lo, size_t hi,            \
                             uint64_t *hist, int atomic) {                                   \
    const ctype *x = (const ctype *)s->samples;                                               \
    const ctype *b = (const ctype *)s->boundaries;                                            \
    const size_t nb = s->num_bins;                                                            \
    const ctype first = b[0], last = b[nb];                                                   \
    for (size_t i = lo; i < hi; i++) {                                                        \
      const ctype v = x[i];                                                                   \
      if (!(v >= first && v < last)) continue;                                                \
      size_t l = 0, h = nb; /* b[l] <= v < b[h] */                                            \
      while (h - l > 1) {                                                                     \
        const size_t m = l + (h - l) / 2;                                                     \
        if (v >= b[m])                                                                        \
          l = m;                                                                              \
        else                                                                                  \
          h = m;                                                                              \
      }                                                                                       \
      bump(hist, (uint32_t)l, atomic);                                                        \
    }                                                                                         \
  }
XPAR_DTYPE_MAP(XPAR__CPU_HIST_RANGE_)
#undef XPAR__CPU_HIST_RANGE_

static hist_count_fn hist_fn(const xpar__histogram_spec *s) {
  if (s->boundaries) {
    switch (s->dtype) {
#define XPAR__CPU_HIST_CASE_(e, ctype, name, size) \
  case XPAR_##e: return hist_range_##e;
      XPAR_DTYPE_MAP(XPAR__CPU_HIST_CASE_)
#undef XPAR__CPU_HIST_CASE_
      default: return NULL;
    }
  }
  switch (s->dtype) {
#define XPAR__CPU_HIST_CASE_(e, ctype, name, size) \
  case XPAR_##e: return hist_even_##e;
    XPAR_DTYPE_MAP(XPAR__CPU_HIST_CASE_)
#undef XPAR__CPU_HIST_CASE_
    default: return NULL;
  }
}

/* Private histograms: each thread counts its slice into priv + id * nb, then
 * sums its slice of the bins over the team into counts. */
static void hist_private(hist_count_fn fn, const xpar__histogram_spec *s, uint64_t *priv,
                         int region, int team) {
  const size_t n = s->n, nb = s->num_bins;
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    const int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    if (id < nt) {
      uint64_t *mine = priv + (size_t)id * nb;
      memset(mine, 0, nb * sizeof *mine);
      size_t lo, hi;
      xpar__cpu_split(0, n, id, nt, &lo, &hi);
      fn(s, lo, hi, mine, 0);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    if (id < nt) {
      size_t b0, b1;
      xpar__cpu_split(0, nb, id, nt, &b0, &b1);
      for (size_t j = b0; j < b1; j++) {
        uint64_t sum = 0;
        for (int t = 0; t < nt; t++) sum += priv[(size_t)t * nb + j];
        s->counts[j] = sum;
      }
    }
  }
}

/* Shared counts with atomic adds: zeroed by the team, one barrier, counted. */
static void hist_atomic(hist_count_fn fn, const xpar__histogram_spec *s, int region, int team) {
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
      fn(s, lo, hi, s->counts, 1);
    }
  }
}

xpar_status xpar__cpu_histogram(const xpar__exec *ex, const xpar__histogram_spec *s) {
  const size_t n = s->n, nb = s->num_bins;
  if (n == 0) {
    memset(s->counts, 0, nb * sizeof *s->counts);
    return XPAR_OK;
  }
  const hist_count_fn fn = hist_fn(s);
  if (!fn) return xpar__fail(XPAR_ERR_INVALID_ENUM, "histogram: unknown dtype %d", (int)s->dtype);
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (team <= 1) {
    memset(s->counts, 0, nb * sizeof *s->counts);
    fn(s, 0, n, s->counts, 0);
    return XPAR_OK;
  }
  const int region = xpar__cpu_region_size(ex);
  if ((size_t)team * nb <= XPAR__CPU_HIST_PRIVATE_MAX_COUNTS) {
    void *scratch;
    XPAR__FORWARD(xpar__host_scratch_get(ex->host_scratch, (size_t)team * nb * sizeof(uint64_t),
                                         "histogram", &scratch));
    hist_private(fn, s, (uint64_t *)scratch, region, team);
  } else {
    hist_atomic(fn, s, region, team);
  }
  return XPAR_OK;
}
