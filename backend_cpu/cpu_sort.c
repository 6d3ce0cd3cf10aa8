/*
 * CPU stable sort (xpar_sort, xpar_sort_pairs, xpar_argsort): serial and
 * OpenMP tiers, in the order of base/sort_key.h.
 *
 * Every tier sorts by the radix key of base/sort_key.h, stably, so every tier
 * gives the one stable permutation and the same output bits.  Keys stay in
 * their original bits throughout: each pass computes the radix key of the
 * bits it reads (an XOR for integers; a few compares and an XOR for floats),
 * and only the digit it takes from it decides where the element goes.
 *
 * Methods, by n (one thread: the serial tier, and the OpenMP tier below
 * XPAR__SORT_MIN_PER_PART keys per thread):
 *  - n <= XPAR__SORT_RANK_MAX (128) on x86 with GCC/Clang (64-bit keys: with
 *    AVX2): rank sort, each key's place counted by vector compares against
 *    all the others (ranks in (radix key, position) order), branch-free.
 *  - else n <= XPAR__SORT_SMALL (48): stable insertion sort in the output arrays,
 *    radix keys computed at each compare (argsort without keys_out: the keys
 *    in a stack copy).
 *  - up to XPAR__SORT_MID_32 (192) / _MID_64 (640) keys of 4 / 8 bytes:
 *    bottom-up merge sort of packed records -- radix key << 32 | position
 *    (64-bit keys: the 52 radix-key bits from the highest that differs
 *    between keys down, << 12 | position, runs equal in those bits then
 *    insertion-sorted by the whole key) -- all distinct, so the branch-free
 *    merge of plain integers is the stable order; then a gather.
 *  - above: LSD radix sort, 8-bit digits (K passes at most), below.
 * OpenMP tier with more keys: the same LSD radix sort over contiguous
 * per-thread chunks.  Measured against std::sort, qsort and libstdc++'s
 * parallel mode: docs/sort.md.
 *
 * LSD radix sort: one read pass counts every digit of every key at once (per
 * thread chunk); a pass whose digit has one value for all n keys is skipped
 * (integers in a small range, floats of one sign or exponent range...), and
 * the number m of passes left decides where the first one writes, so that
 * the last lands in the output: they alternate between the output arrays and
 * scratch.  In place with m odd, the passes end in scratch and one copy brings
 * the result back.  Each pass is a stable counting scatter: the offset of
 * (digit d, chunk t) is the number of keys of digits below d plus those of
 * digit d in chunks before t (one chunk: the totals of the read pass).  The
 * first pass's per-chunk counts are the read pass's; a later pass's were
 * made by the scatter before it, per destination chunk, as it wrote the keys
 * (sort_scatter_wc), so no pass reads its keys twice.  The OpenMP tier's
 * scatter stages 64-byte lines per digit and streams whole lines
 * (non-temporal stores) for arrays larger than the cache: a pass moves each
 * key and value once in and once out.  Argsort's first pass
 * writes the positions instead of reading values; without keys_out its last
 * pass writes no keys.
 *
 * Working memory comes from the context's host scratch (ex->host_scratch):
 * one key buffer (two for argsort without keys_out), one value buffer and the
 * count tables.  Out of memory returns before anything is written.
 */
#include "base/sort_key.h"
#include "cpu_internal.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define XPAR__SORT_BITS 8
#define XPAR__SORT_BUCKETS (1u << XPAR__SORT_BITS)
#define XPAR__SORT_MASK (XPAR__SORT_BUCKETS - 1u)
#define XPAR__SORT_MAX_PASSES (64 / XPAR__SORT_BITS)
/* Insertion sort up to here (both key widths). */
#ifndef XPAR__SORT_SMALL
#define XPAR__SORT_SMALL 48
#endif
/* Merge sort up to here (one thread), by key width. */
#ifndef XPAR__SORT_MID_32
#define XPAR__SORT_MID_32 192
#endif
#ifndef XPAR__SORT_MID_64
#define XPAR__SORT_MID_64 640 /* at most 2^XPAR__SORT_POS_BITS */
#endif
/* Fewer keys than this per thread keep the OpenMP tier on one thread: a
 * part's fixed cost is its counts (K x 256) and two barriers per pass. */
#define XPAR__SORT_MIN_PER_PART 32768
/* Keys and values of at least this many bytes (one copy) leave the cache
 * between passes anyway: the OpenMP tier's scatter streams whole lines past
 * it (non-temporal stores, no read for ownership).  Below, the destination
 * is read again soon from the cache, and streaming it to memory would cost. */
#ifndef XPAR__SORT_NT_BYTES
#define XPAR__SORT_NT_BYTES ((size_t)16 << 20)
#endif

#define XPAR__SORT_INLINE static inline __attribute__((always_inline))

/* ---- radix keys --------------------------------------------------------- */

/* The radix key of a key's bits: integers `bits ^ xm` (xm: the sign flip and
 * the descending inversion), floats their canonical map then `^ xm` (xm: the
 * descending inversion).  The same values as xpar__sort_radix32/64. */
XPAR__SORT_INLINE uint32_t sort_rk32(uint32_t x, int F, uint32_t xm) {
  if (F) {
    const uint32_t mag = x & 0x7fffffffu;
    x = mag == 0 ? 0 : (mag > 0x7f800000u ? 0x7fc00000u : x);
    x ^= (uint32_t)((int32_t)x >> 31) | 0x80000000u;
  }
  return x ^ xm;
}
XPAR__SORT_INLINE uint64_t sort_rk64(uint64_t x, int F, uint64_t xm) {
  if (F) {
    const uint64_t mag = x & 0x7fffffffffffffffull;
    x = mag == 0 ? 0 : (mag > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : x);
    x ^= (uint64_t)((int64_t)x >> 63) | 0x8000000000000000ull;
  }
  return x ^ xm;
}
XPAR__SORT_INLINE uint64_t sort_rk(const void *keys, size_t i, int K, int F, uint64_t xm) {
  return K == 4 ? sort_rk32(((const uint32_t *)keys)[i], F, (uint32_t)xm)
                : sort_rk64(((const uint64_t *)keys)[i], F, xm);
}

/* ---- the pass kernels ----------------------------------------------------
 * Generated per key width K (4, 8), float or not F, and value mode: V value
 * bytes (0, 4, 8), I: the values are the positions (argsort's first pass), W:
 * write the keys (0: argsort's last pass without keys_out). */

/* Counts of every digit of keys [lo, hi): cnt[p * BUCKETS + d]. */
XPAR__SORT_INLINE void sort_count_all(const void *keys, size_t lo, size_t hi, size_t *cnt, int K,
                                      int F, uint64_t xm) {
  memset(cnt, 0, sizeof(size_t) * XPAR__SORT_BUCKETS * (size_t)K);
  size_t i = lo;
  if (K == 4) {
    for (; i < hi; ++i) {
      const uint32_t r = (uint32_t)sort_rk(keys, i, K, F, xm);
      ++cnt[r & 255u];
      ++cnt[256 + ((r >> 8) & 255u)];
      ++cnt[512 + ((r >> 16) & 255u)];
      ++cnt[768 + (r >> 24)];
    }
  } else {
    for (; i < hi; ++i) {
      const uint64_t r = sort_rk(keys, i, K, F, xm);
      const uint32_t a = (uint32_t)r, b = (uint32_t)(r >> 32);
      ++cnt[a & 255u];
      ++cnt[256 + ((a >> 8) & 255u)];
      ++cnt[512 + ((a >> 16) & 255u)];
      ++cnt[768 + (a >> 24)];
      ++cnt[1024 + (b & 255u)];
      ++cnt[1280 + ((b >> 8) & 255u)];
      ++cnt[1536 + ((b >> 16) & 255u)];
      ++cnt[1792 + (b >> 24)];
    }
  }
}

/* The stable scatter of [lo, hi) by the digit at `shift`; off[d]: where the
 * next key of digit d goes (advanced). */
XPAR__SORT_INLINE void sort_scatter(const void *ks, void *kd, const void *vs, void *vd, size_t lo,
                                    size_t hi, int shift, size_t *off, int K, int F, int V, int I,
                                    int W, uint64_t xm) {
  for (size_t i = lo; i < hi; ++i) {
    const uint64_t r = sort_rk(ks, i, K, F, xm);
    const size_t p = off[(r >> shift) & XPAR__SORT_MASK]++;
    if (W) {
      if (K == 4)
        ((uint32_t *)kd)[p] = ((const uint32_t *)ks)[i];
      else
        ((uint64_t *)kd)[p] = ((const uint64_t *)ks)[i];
    }
    if (V == 4) ((uint32_t *)vd)[p] = I ? (uint32_t)i : ((const uint32_t *)vs)[i];
    if (V == 8) ((uint64_t *)vd)[p] = I ? (uint64_t)i : ((const uint64_t *)vs)[i];
  }
}

/* ---- the write-combined scatter (OpenMP tier) ------------------------------
 * A direct scatter keeps 256 store streams per thread open (one per digit),
 * each writing a few bytes at a time: every destination line is read for
 * ownership before it is written, and the streams thrash the TLB and L1.
 * sort_scatter_wc stages each digit's keys (and values) in a 64-byte line
 * per digit (XPAR__SORT_LINE(K) keys) in L1 and writes whole lines: when the
 * arrays are larger than the cache (sort_wc.nt), with non-temporal stores,
 * which skip the read for ownership -- a pass then moves K + V bytes in and
 * K + V out per key, nothing more.
 *
 * A slot of a digit's line is the destination index modulo the line
 * (shifted by sort_wc.ph so that full lines start on 64-byte boundaries of
 * the key array), so a flushed line is contiguous in the destination.  The
 * first and last lines of a digit's range in this part are partial (they
 * share their cache lines with the neighbouring ranges of other parts or
 * digits) and go out with ordinary stores.
 *
 * The next pass's counts, fused: pass q + 1 splits ITS source -- this pass's
 * destination -- into the same contiguous chunks, and needs the count of each
 * digit per chunk.  The keys of a chunk are written by every part, so each
 * part counts, for the keys it writes, the next digit by destination chunk:
 * hist[chunk][digit].  It does so as it flushes a line (the keys are in L1),
 * so the next pass needs no counting read of its source. */

/* Keys per staged line: 64 bytes of keys. */
#define XPAR__SORT_LINE(K) (64 / (K))

typedef struct sort_wc {
  void *kbuf, *vbuf; /* [BUCKETS][LINE] keys / values, 64-byte aligned (scratch) */
  size_t *hist;      /* [parts][BUCKETS]: the next pass's counts, or NULL: none */
  int nshift;        /* the next pass's digit shift (hist only) */
  int parts;         /* the next pass's chunks: xpar__cpu_split(0, n, c, parts) */
  size_t n;
  size_t ph;         /* destination index ph (mod LINE) starts a key line */
  int knt, vnt;      /* full key / value lines: non-temporal stores */
} sort_wc;

/* The chunk (of w->parts over [0, n)) that holds position p. */
static size_t sort_chunk_of(size_t p, size_t n, int parts) {
  const size_t q = n / (size_t)parts, r = n % (size_t)parts;
  return p < r * (q + 1) ? p / (q + 1) : r + (p - r * (q + 1)) / q;
}

/* Write `bytes` (a multiple of 16) from a 16-byte aligned buffer to 16-byte
 * aligned dst with non-temporal stores, or with memcpy where there are none. */
XPAR__SORT_INLINE void sort_stream(void *dst, const void *src, size_t bytes) {
#if defined(__SSE2__)
  for (size_t b = 0; b < bytes; b += 16)
    _mm_stream_si128((__m128i *)((char *)dst + b),
                     _mm_load_si128((const __m128i *)((const char *)src + b)));
#else
  memcpy(dst, src, bytes);
#endif
}

/* Flush destination positions [b, e) of digit d (one line or part of one).
 * ch / lim: per digit, the next pass's chunk of its current position and
 * that chunk's end (hist only). */
XPAR__SORT_INLINE void sort_wc_flush(const sort_wc *w, void *kd, void *vd, unsigned d, size_t b,
                                     size_t e, size_t *ch, size_t *lim, int K, int F, int V,
                                     int W, uint64_t xm) {
  const size_t L = XPAR__SORT_LINE(K), s = (b - w->ph) & (L - 1), full = e - b == L;
  const char *kl = (const char *)w->kbuf + (size_t)d * 64;
  const char *vl = (const char *)w->vbuf + (size_t)d * L * (size_t)V;
  if (W) {
    if (full && w->knt)
      sort_stream((char *)kd + b * (size_t)K, kl, 64);
    else
      memcpy((char *)kd + b * (size_t)K, kl + s * (size_t)K, (e - b) * (size_t)K);
  }
  if (V) {
    if (full && w->vnt)
      sort_stream((char *)vd + b * (size_t)V, vl, L * (size_t)V);
    else
      memcpy((char *)vd + b * (size_t)V, vl + s * (size_t)V, (e - b) * (size_t)V);
  }
  if (w->hist) { /* W is set: only a pass before the last counts */
    for (size_t x = b; x < e;) {
      while (x >= lim[d]) { /* the next chunk (positions rise within a digit) */
        size_t lo;
        xpar__cpu_split(0, w->n, (int)++ch[d], w->parts, &lo, &lim[d]);
      }
      const size_t y = e < lim[d] ? e : lim[d];
      size_t *row = w->hist + ch[d] * XPAR__SORT_BUCKETS;
      for (size_t i = s + (x - b), end = s + (y - b); i < end; ++i)
        ++row[(sort_rk(kl, i, K, F, xm) >> w->nshift) & XPAR__SORT_MASK];
      x = y;
    }
  }
}

/* The stable scatter of [lo, hi) by the digit at `shift` through w's lines;
 * off[d]: where this part's first key of digit d goes (advanced).  Writes
 * w->hist (zeroed here) when set. */
XPAR__SORT_INLINE void sort_scatter_wc(const void *ks, void *kd, const void *vs, void *vd,
                                       size_t lo, size_t hi, int shift, size_t *off,
                                       const sort_wc *w, int K, int F, int V, int I, int W,
                                       uint64_t xm) {
  const size_t L = XPAR__SORT_LINE(K), ph = w->ph;
  size_t start[XPAR__SORT_BUCKETS], ch[XPAR__SORT_BUCKETS], lim[XPAR__SORT_BUCKETS];
  memcpy(start, off, sizeof start);
  if (w->hist) {
    memset(w->hist, 0, sizeof(size_t) * XPAR__SORT_BUCKETS * (size_t)w->parts);
    for (unsigned d = 0; d < XPAR__SORT_BUCKETS; ++d) {
      size_t c = start[d] < w->n ? sort_chunk_of(start[d], w->n, w->parts) : (size_t)w->parts - 1;
      size_t clo;
      ch[d] = c;
      xpar__cpu_split(0, w->n, (int)c, w->parts, &clo, &lim[d]);
    }
  }
  for (size_t i = lo; i < hi; ++i) {
    const uint64_t r = sort_rk(ks, i, K, F, xm);
    const unsigned d = (unsigned)(r >> shift) & XPAR__SORT_MASK;
    const size_t p = off[d]++, s = (p - ph) & (L - 1);
    if (W) {
      if (K == 4)
        ((uint32_t *)w->kbuf)[d * L + s] = ((const uint32_t *)ks)[i];
      else
        ((uint64_t *)w->kbuf)[d * L + s] = ((const uint64_t *)ks)[i];
    }
    if (V == 4) ((uint32_t *)w->vbuf)[d * L + s] = I ? (uint32_t)i : ((const uint32_t *)vs)[i];
    if (V == 8) ((uint64_t *)w->vbuf)[d * L + s] = I ? (uint64_t)i : ((const uint64_t *)vs)[i];
    if (s == L - 1) { /* the line is complete (its start may precede this part's range) */
      const size_t b = p + 1 - start[d] < L ? start[d] : p + 1 - L; /* no wrap below 0 */
      sort_wc_flush(w, kd, vd, d, b, p + 1, ch, lim, K, F, V, W, xm);
    }
  }
  for (unsigned d = 0; d < XPAR__SORT_BUCKETS; ++d) { /* the partial last lines */
    const size_t e = off[d], k = (e - ph) & (L - 1); /* k: slots filled in e's line */
    if (e == start[d] || k == 0) continue;             /* none, or flushed */
    sort_wc_flush(w, kd, vd, d, e - start[d] < k ? start[d] : e - k, e, ch, lim, K, F, V, W, xm);
  }
#if defined(__SSE2__)
  if (w->knt || w->vnt) _mm_sfence(); /* the streamed lines, before the pass's barrier */
#endif
}

typedef void (*sort_count_all_fn)(const void *keys, size_t lo, size_t hi, size_t *cnt,
                                  uint64_t xm);
typedef void (*sort_scatter_fn)(const void *ks, void *kd, const void *vs, void *vd, size_t lo,
                                size_t hi, int shift, size_t *off, uint64_t xm);
typedef void (*sort_scatter_wc_fn)(const void *ks, void *kd, const void *vs, void *vd, size_t lo,
                                   size_t hi, int shift, size_t *off, const sort_wc *w,
                                   uint64_t xm);

#define XPAR__SORT_COUNTS_(K, F)                                                             \
  static void sort_count_all_##K##_##F(const void *keys, size_t lo, size_t hi, size_t *cnt,  \
                                       uint64_t xm) {                                        \
    sort_count_all(keys, lo, hi, cnt, K, F, xm);                                             \
  }
XPAR__SORT_COUNTS_(4, 0)
XPAR__SORT_COUNTS_(4, 1)
XPAR__SORT_COUNTS_(8, 0)
XPAR__SORT_COUNTS_(8, 1)
#undef XPAR__SORT_COUNTS_

#define XPAR__SORT_SCATTER_(K, F, V, I, W)                                                    \
  static void sort_scatter_##K##_##F##_##V##_##I##_##W(const void *ks, void *kd,              \
                                                       const void *vs, void *vd, size_t lo,   \
                                                       size_t hi, int shift, size_t *off,     \
                                                       uint64_t xm) {                         \
    sort_scatter(ks, kd, vs, vd, lo, hi, shift, off, K, F, V, I, W, xm);                      \
  }                                                                                           \
  static void sort_scatter_wc_##K##_##F##_##V##_##I##_##W(                                    \
      const void *ks, void *kd, const void *vs, void *vd, size_t lo, size_t hi, int shift,    \
      size_t *off, const sort_wc *w, uint64_t xm) {                                           \
    sort_scatter_wc(ks, kd, vs, vd, lo, hi, shift, off, w, K, F, V, I, W, xm);                \
  }
/* value modes: 0 none, 4 / 8 bytes, 4 / 8 positions (I); W 1 or 0 */
#define XPAR__SORT_SCATTER_V_(K, F)   \
  XPAR__SORT_SCATTER_(K, F, 0, 0, 1)  \
  XPAR__SORT_SCATTER_(K, F, 4, 0, 1)  \
  XPAR__SORT_SCATTER_(K, F, 8, 0, 1)  \
  XPAR__SORT_SCATTER_(K, F, 4, 1, 1)  \
  XPAR__SORT_SCATTER_(K, F, 8, 1, 1)  \
  XPAR__SORT_SCATTER_(K, F, 4, 0, 0)  \
  XPAR__SORT_SCATTER_(K, F, 8, 0, 0)  \
  XPAR__SORT_SCATTER_(K, F, 4, 1, 0)  \
  XPAR__SORT_SCATTER_(K, F, 8, 1, 0)
XPAR__SORT_SCATTER_V_(4, 0)
XPAR__SORT_SCATTER_V_(4, 1)
XPAR__SORT_SCATTER_V_(8, 0)
XPAR__SORT_SCATTER_V_(8, 1)
#undef XPAR__SORT_SCATTER_V_
#undef XPAR__SORT_SCATTER_

/* [K == 8][F][value mode: 0 none, 1 / 2 four / eight bytes, 3 / 4 four / eight
 * byte positions][W] */
#define XPAR__SORT_SCATTER_ROW_(S, K, F)                                \
  {{NULL, S##K##_##F##_0_0_1},                                          \
   {S##K##_##F##_4_0_0, S##K##_##F##_4_0_1},                            \
   {S##K##_##F##_8_0_0, S##K##_##F##_8_0_1},                            \
   {S##K##_##F##_4_1_0, S##K##_##F##_4_1_1},                            \
   {S##K##_##F##_8_1_0, S##K##_##F##_8_1_1}}
static const sort_scatter_fn sort_scatters[2][2][5][2] = {
    {XPAR__SORT_SCATTER_ROW_(sort_scatter_, 4, 0), XPAR__SORT_SCATTER_ROW_(sort_scatter_, 4, 1)},
    {XPAR__SORT_SCATTER_ROW_(sort_scatter_, 8, 0), XPAR__SORT_SCATTER_ROW_(sort_scatter_, 8, 1)}};
static const sort_scatter_wc_fn sort_scatters_wc[2][2][5][2] = {
    {XPAR__SORT_SCATTER_ROW_(sort_scatter_wc_, 4, 0),
     XPAR__SORT_SCATTER_ROW_(sort_scatter_wc_, 4, 1)},
    {XPAR__SORT_SCATTER_ROW_(sort_scatter_wc_, 8, 0),
     XPAR__SORT_SCATTER_ROW_(sort_scatter_wc_, 8, 1)}};
#undef XPAR__SORT_SCATTER_ROW_
static const sort_count_all_fn sort_counts_all[2][2] = {{sort_count_all_4_0, sort_count_all_4_1},
                                                        {sort_count_all_8_0, sort_count_all_8_1}};

/* ---- small n: insertion sort on the stack -------------------------------- */

XPAR__SORT_INLINE void sort_small(const xpar__sort_spec *s, int K, int F, uint64_t xm, int V) {
  const size_t n = s->n;
  /* keys: the output, or (argsort without keys_out) a stack copy */
  uint64_t kbuf[XPAR__SORT_SMALL];
  void *ko = s->keys_out ? s->keys_out : (void *)kbuf;
  if (ko != s->keys_in) memcpy(ko, s->keys_in, n * (size_t)K);
  void *vo = s->values_out;
  if (s->values_are_indices) {
    if (V == 4)
      for (size_t i = 0; i < n; ++i) ((uint32_t *)vo)[i] = (uint32_t)i;
    else
      for (size_t i = 0; i < n; ++i) ((uint64_t *)vo)[i] = i;
  } else if (V && vo != s->values_in) {
    memcpy(vo, s->values_in, n * (size_t)V);
  }
  /* stable insertion sort of (ko, vo) by radix key: a key moves past strictly
   * greater ones only */
  if (K == 4) {
    uint32_t *k = (uint32_t *)ko;
    for (size_t i = 1; i < n; ++i) {
      const uint32_t kt = k[i], rt = sort_rk32(kt, F, (uint32_t)xm);
      size_t j = i;
      if (V == 4) {
        uint32_t *v = (uint32_t *)vo;
        const uint32_t vt = v[i];
        for (; j > 0 && sort_rk32(k[j - 1], F, (uint32_t)xm) > rt; --j) {
          k[j] = k[j - 1];
          v[j] = v[j - 1];
        }
        v[j] = vt;
      } else if (V == 8) {
        uint64_t *v = (uint64_t *)vo;
        const uint64_t vt = v[i];
        for (; j > 0 && sort_rk32(k[j - 1], F, (uint32_t)xm) > rt; --j) {
          k[j] = k[j - 1];
          v[j] = v[j - 1];
        }
        v[j] = vt;
      } else {
        for (; j > 0 && sort_rk32(k[j - 1], F, (uint32_t)xm) > rt; --j) k[j] = k[j - 1];
      }
      k[j] = kt;
    }
  } else {
    uint64_t *k = (uint64_t *)ko;
    for (size_t i = 1; i < n; ++i) {
      const uint64_t kt = k[i], rt = sort_rk64(kt, F, xm);
      size_t j = i;
      if (V == 4) {
        uint32_t *v = (uint32_t *)vo;
        const uint32_t vt = v[i];
        for (; j > 0 && sort_rk64(k[j - 1], F, xm) > rt; --j) {
          k[j] = k[j - 1];
          v[j] = v[j - 1];
        }
        v[j] = vt;
      } else if (V == 8) {
        uint64_t *v = (uint64_t *)vo;
        const uint64_t vt = v[i];
        for (; j > 0 && sort_rk64(k[j - 1], F, xm) > rt; --j) {
          k[j] = k[j - 1];
          v[j] = v[j - 1];
        }
        v[j] = vt;
      } else {
        for (; j > 0 && sort_rk64(k[j - 1], F, xm) > rt; --j) k[j] = k[j - 1];
      }
      k[j] = kt;
    }
  }
}

#define XPAR__SORT_SMALL_FN_(K, F, V)                                                     \
  static void sort_small_##K##_##F##_##V(const xpar__sort_spec *s, uint64_t xm) {         \
    sort_small(s, K, F, xm, V);                                                           \
  }
#define XPAR__SORT_SMALL_V_(K, F) \
  XPAR__SORT_SMALL_FN_(K, F, 0) XPAR__SORT_SMALL_FN_(K, F, 4) XPAR__SORT_SMALL_FN_(K, F, 8)
XPAR__SORT_SMALL_V_(4, 0)
XPAR__SORT_SMALL_V_(4, 1)
XPAR__SORT_SMALL_V_(8, 0)
XPAR__SORT_SMALL_V_(8, 1)
#undef XPAR__SORT_SMALL_V_
#undef XPAR__SORT_SMALL_FN_
typedef void (*sort_small_fn)(const xpar__sort_spec *s, uint64_t xm);
#define XPAR__SORT_SMALL_ROW_(K, F) \
  {sort_small_##K##_##F##_0, sort_small_##K##_##F##_4, sort_small_##K##_##F##_8}
static const sort_small_fn sort_smalls[2][2][3] = {
    {XPAR__SORT_SMALL_ROW_(4, 0), XPAR__SORT_SMALL_ROW_(4, 1)},
    {XPAR__SORT_SMALL_ROW_(8, 0), XPAR__SORT_SMALL_ROW_(8, 1)}};
#undef XPAR__SORT_SMALL_ROW_

/* ---- small n: rank sort ----------------------------------------------------
 * Each key's place is its rank in (radix key, position) order: i, less the
 * keys before it with a greater radix key, plus the keys after it with a
 * smaller one.  All n^2 compares, branch-free, a vector of keys at a time
 * (GCC vector extensions: AVX2 where the CPU has it, else SSE2 pairs; 64-bit
 * keys only with AVX2, which compares 64-bit lanes).  The ranks are a
 * permutation; each key (its original bits) and value goes to its rank. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define XPAR__SORT_HAVE_RANK 1
#ifndef XPAR__SORT_RANK_MAX
#define XPAR__SORT_RANK_MAX 128 /* a multiple of 8 */
#endif
typedef int32_t sort_v8i __attribute__((vector_size(32)));
typedef int64_t sort_v4l __attribute__((vector_size(32)));

/* rank[i] for signed-comparable r[0, n), padded with the maximum to a whole
 * vector; T the lane type, VT the vector, W lanes. */
#define XPAR__SORT_RANK_BODY_(T, VT, W)                                        \
  const VT *rv = (const VT *)r;                                                \
  VT lane;                                                                     \
  for (int l = 0; l < (W); ++l) lane[l] = (T)l;                                \
  for (size_t c = 0; c * (W) < n; ++c) { /* lanes: keys i = c W + l */         \
    const VT x = rv[c], iv = lane + (T)(c * (W));                              \
    const size_t lo = c * (W), hi = n - lo < (W) ? n : lo + (W);               \
    VT g0 = {0}, g1 = {0}, s0 = {0}, s1 = {0};                                 \
    size_t j = 0;                                                              \
    for (; j + 1 < lo; j += 2) { /* before every lane: -(greater) */           \
      g0 += ((VT){0} + r[j]) > x;                                              \
      g1 += ((VT){0} + r[j + 1]) > x;                                          \
    }                                                                          \
    if (j < lo) g0 += ((VT){0} + r[j]) > x;                                    \
    for (j = lo; j < hi; ++j) { /* the lanes' own vector */                    \
      const VT bj = (VT){0} + r[j], jv = (VT){0} + (T)j;                       \
      g0 += (bj > x) & (jv < iv);                                              \
      s0 -= (bj < x) & (jv > iv);                                              \
    }                                                                          \
    for (j = hi; j + 1 < n; j += 2) { /* after every lane: +(smaller) */       \
      s0 -= ((VT){0} + r[j]) < x;                                              \
      s1 -= ((VT){0} + r[j + 1]) < x;                                          \
    }                                                                          \
    if (j < n) s0 -= ((VT){0} + r[j]) < x;                                     \
    const VT rk = iv + g0 + g1 + s0 + s1;                                      \
    for (size_t l = 0; l < hi - lo; ++l) rank[lo + l] = (uint32_t)rk[l];       \
  }

__attribute__((target("avx2"))) static void sort_rank32_avx2(const int32_t *r, size_t n,
                                                            uint32_t *rank) {
  XPAR__SORT_RANK_BODY_(int32_t, sort_v8i, 8)
}
static void sort_rank32_base(const int32_t *r, size_t n, uint32_t *rank) {
  XPAR__SORT_RANK_BODY_(int32_t, sort_v8i, 8)
}
__attribute__((target("avx2"))) static void sort_rank64_avx2(const int64_t *r, size_t n,
                                                            uint32_t *rank) {
  XPAR__SORT_RANK_BODY_(int64_t, sort_v4l, 4)
}
#undef XPAR__SORT_RANK_BODY_

static int sort_avx2(void) {
  static int have = -1;
  if (have < 0) {
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx2") ? 1 : 0;
  }
  return have;
}

/* The rank sort of s (n <= XPAR__SORT_RANK_MAX); 0: not available here (64-bit
 * keys without AVX2), nothing written. */
XPAR__SORT_INLINE int sort_rank(const xpar__sort_spec *s, int K, int F, uint64_t xm, int V) {
  const size_t n = s->n;
  uint32_t rank[XPAR__SORT_RANK_MAX];
  uint64_t kcopy[XPAR__SORT_RANK_MAX], vcopy[XPAR__SORT_RANK_MAX];
  if (K == 4) {
    int32_t r[XPAR__SORT_RANK_MAX] __attribute__((aligned(32)));
    const uint32_t *k = (const uint32_t *)s->keys_in;
    for (size_t i = 0; i < n; ++i) r[i] = (int32_t)(sort_rk32(k[i], F, (uint32_t)xm) ^ 0x80000000u);
    for (size_t i = n; i & 7; ++i) r[i] = INT32_MAX;
    if (sort_avx2())
      sort_rank32_avx2(r, n, rank);
    else
      sort_rank32_base(r, n, rank);
  } else {
    if (!sort_avx2()) return 0;
    int64_t r[XPAR__SORT_RANK_MAX] __attribute__((aligned(32)));
    const uint64_t *k = (const uint64_t *)s->keys_in;
    for (size_t i = 0; i < n; ++i) r[i] = (int64_t)(sort_rk64(k[i], F, xm) ^ 0x8000000000000000ull);
    for (size_t i = n; i & 3; ++i) r[i] = INT64_MAX;
    sort_rank64_avx2(r, n, rank);
  }
  if (s->keys_out) {
    const void *src = s->keys_in;
    if (s->keys_out == s->keys_in) {
      memcpy(kcopy, s->keys_in, n * (size_t)K);
      src = kcopy;
    }
    if (K == 4)
      for (size_t i = 0; i < n; ++i) ((uint32_t *)s->keys_out)[rank[i]] = ((const uint32_t *)src)[i];
    else
      for (size_t i = 0; i < n; ++i) ((uint64_t *)s->keys_out)[rank[i]] = ((const uint64_t *)src)[i];
  }
  if (V) {
    if (s->values_are_indices) {
      if (V == 4)
        for (size_t i = 0; i < n; ++i) ((uint32_t *)s->values_out)[rank[i]] = (uint32_t)i;
      else
        for (size_t i = 0; i < n; ++i) ((uint64_t *)s->values_out)[rank[i]] = i;
    } else {
      const void *src = s->values_in;
      if (s->values_out == s->values_in) {
        memcpy(vcopy, s->values_in, n * (size_t)V);
        src = vcopy;
      }
      if (V == 4)
        for (size_t i = 0; i < n; ++i)
          ((uint32_t *)s->values_out)[rank[i]] = ((const uint32_t *)src)[i];
      else
        for (size_t i = 0; i < n; ++i)
          ((uint64_t *)s->values_out)[rank[i]] = ((const uint64_t *)src)[i];
    }
  }
  return 1;
}

#define XPAR__SORT_RANK_FN_(K, F, V)                                                      \
  static int sort_rank_##K##_##F##_##V(const xpar__sort_spec *s, uint64_t xm) {           \
    return sort_rank(s, K, F, xm, V);                                                     \
  }
#define XPAR__SORT_RANK_V_(K, F) \
  XPAR__SORT_RANK_FN_(K, F, 0) XPAR__SORT_RANK_FN_(K, F, 4) XPAR__SORT_RANK_FN_(K, F, 8)
XPAR__SORT_RANK_V_(4, 0)
XPAR__SORT_RANK_V_(4, 1)
XPAR__SORT_RANK_V_(8, 0)
XPAR__SORT_RANK_V_(8, 1)
#undef XPAR__SORT_RANK_V_
#undef XPAR__SORT_RANK_FN_
typedef int (*sort_rank_fn)(const xpar__sort_spec *s, uint64_t xm);
#define XPAR__SORT_RANK_ROW_(K, F) \
  {sort_rank_##K##_##F##_0, sort_rank_##K##_##F##_4, sort_rank_##K##_##F##_8}
static const sort_rank_fn sort_ranks[2][2][3] = {
    {XPAR__SORT_RANK_ROW_(4, 0), XPAR__SORT_RANK_ROW_(4, 1)},
    {XPAR__SORT_RANK_ROW_(8, 0), XPAR__SORT_RANK_ROW_(8, 1)}};
#undef XPAR__SORT_RANK_ROW_
#endif

/* ---- mid n: merge sort of packed (radix key, position) records ----------- */

/* Insertion sort of runs of XPAR__SORT_RUN records, then bottom-up merges
 * between a and b (two adjacent runs already in order are copied); returns
 * the buffer holding the result.  The records are distinct, so any order of
 * equal ones cannot arise: the merge is branch-free. */
#define XPAR__SORT_RUN 16
static uint64_t *sort_merge64(uint64_t *a, uint64_t *b, size_t n) {
  for (size_t lo = 0; lo < n; lo += XPAR__SORT_RUN) {
    const size_t hi = n - lo < XPAR__SORT_RUN ? n : lo + XPAR__SORT_RUN;
    for (size_t i = lo + 1; i < hi; ++i) {
      const uint64_t t = a[i];
      size_t j = i;
      for (; j > lo && t < a[j - 1]; --j) a[j] = a[j - 1];
      a[j] = t;
    }
  }
  for (size_t w = XPAR__SORT_RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      const size_t mid = n - lo < w ? n : lo + w;
      const size_t hi = n - lo < 2 * w ? n : lo + 2 * w;
      size_t i = lo, j = mid, k = lo;
      if (mid < hi && a[mid] < a[mid - 1]) {
        while (i < mid && j < hi) {
          const uint64_t x = a[i], y = a[j];
          const int t = y < x;
          b[k++] = t ? y : x;
          i += (size_t)!t;
          j += (size_t)t;
        }
      }
      while (i < mid) b[k++] = a[i++];
      while (j < hi) b[k++] = a[j++];
    }
    uint64_t *const swap = a;
    a = b;
    b = swap;
  }
  return a;
}

/* 64-bit keys pack 52 bits of the radix key with a 12-bit position. */
#define XPAR__SORT_POS_BITS 12

/* Bytes of scratch sort_mid needs. */
static size_t sort_mid_bytes(size_t n, int K, int V) {
  return (K == 4 ? 2 : 3) * n * sizeof(uint64_t) + n * (size_t)(K + V);
}

/* Records (radix key << 32 | position) for 32-bit keys; for 64-bit keys
 * (n <= 2^12) the 52 bits of the radix key from its highest bit that differs
 * between keys down, << 12 | position, and runs of records equal in those
 * bits (keys that differ only below them) insertion-sorted by the whole radix
 * key afterwards.  Records are distinct: sorted, they are the stable order.
 * Then the keys and values are gathered from the input (from a copy of it in
 * scratch where the output is the input). */
XPAR__SORT_INLINE void sort_mid(const xpar__sort_spec *s, void *scratch, int K, int F,
                                uint64_t xm, int V) {
  const size_t n = s->n;
  uint64_t *a = (uint64_t *)scratch, *b = a + n, *ord;
  uint64_t pmask;
  char *tail;
  if (K == 4) {
    const uint32_t *k = (const uint32_t *)s->keys_in;
    for (size_t i = 0; i < n; ++i) a[i] = (uint64_t)sort_rk32(k[i], F, (uint32_t)xm) << 32 | i;
    ord = sort_merge64(a, b, n);
    pmask = 0xffffffffu;
    tail = (char *)(b + n);
  } else {
    const uint64_t *k = (const uint64_t *)s->keys_in;
    uint64_t *rk = b + n, diff = 0;
    for (size_t i = 0; i < n; ++i) {
      rk[i] = sort_rk64(k[i], F, xm);
      diff |= rk[i] ^ rk[0];
    }
    const int top = diff ? 63 - __builtin_clzll(diff) : 0;
    const int wbits = 64 - XPAR__SORT_POS_BITS, sh = top >= wbits ? top - wbits + 1 : 0;
    const uint64_t wmask = ((uint64_t)1 << wbits) - 1;
    for (size_t i = 0; i < n; ++i) a[i] = ((rk[i] >> sh) & wmask) << XPAR__SORT_POS_BITS | i;
    ord = sort_merge64(a, b, n);
    pmask = ((uint64_t)1 << XPAR__SORT_POS_BITS) - 1;
    if (sh > 0) { /* ties in the window: by the whole key, stably */
      for (size_t lo = 0; lo < n;) {
        size_t hi = lo + 1;
        while (hi < n && (ord[hi] >> XPAR__SORT_POS_BITS) == (ord[lo] >> XPAR__SORT_POS_BITS)) ++hi;
        for (size_t i = lo + 1; i < hi; ++i) {
          const uint64_t t = ord[i], rt = rk[t & pmask];
          size_t j = i;
          for (; j > lo && rk[ord[j - 1] & pmask] > rt; --j) ord[j] = ord[j - 1];
          ord[j] = t;
        }
        lo = hi;
      }
    }
    tail = (char *)(rk + n);
  }
#define XPAR__SORT_POS_(i) ((size_t)(ord[i] & pmask))
  if (s->keys_out) {
    const void *src = s->keys_in;
    if (s->keys_out == s->keys_in) {
      memcpy(tail, s->keys_in, n * (size_t)K);
      src = tail;
    }
    if (K == 4)
      for (size_t i = 0; i < n; ++i)
        ((uint32_t *)s->keys_out)[i] = ((const uint32_t *)src)[XPAR__SORT_POS_(i)];
    else
      for (size_t i = 0; i < n; ++i)
        ((uint64_t *)s->keys_out)[i] = ((const uint64_t *)src)[XPAR__SORT_POS_(i)];
  }
  if (V) {
    const void *src = s->values_in;
    if (!s->values_are_indices && s->values_out == s->values_in) {
      memcpy(tail + n * (size_t)K, s->values_in, n * (size_t)V);
      src = tail + n * (size_t)K;
    }
    if (s->values_are_indices) {
      if (V == 4)
        for (size_t i = 0; i < n; ++i) ((uint32_t *)s->values_out)[i] = (uint32_t)XPAR__SORT_POS_(i);
      else
        for (size_t i = 0; i < n; ++i) ((uint64_t *)s->values_out)[i] = XPAR__SORT_POS_(i);
    } else if (V == 4) {
      for (size_t i = 0; i < n; ++i)
        ((uint32_t *)s->values_out)[i] = ((const uint32_t *)src)[XPAR__SORT_POS_(i)];
    } else {
      for (size_t i = 0; i < n; ++i)
        ((uint64_t *)s->values_out)[i] = ((const uint64_t *)src)[XPAR__SORT_POS_(i)];
    }
  }
#undef XPAR__SORT_POS_
}

#define XPAR__SORT_MID_FN_(K, F, V)                                                          \
  static void sort_mid_##K##_##F##_##V(const xpar__sort_spec *s, void *scratch, uint64_t xm) { \
    sort_mid(s, scratch, K, F, xm, V);                                                       \
  }
#define XPAR__SORT_MID_V_(K, F) \
  XPAR__SORT_MID_FN_(K, F, 0) XPAR__SORT_MID_FN_(K, F, 4) XPAR__SORT_MID_FN_(K, F, 8)
XPAR__SORT_MID_V_(4, 0)
XPAR__SORT_MID_V_(4, 1)
XPAR__SORT_MID_V_(8, 0)
XPAR__SORT_MID_V_(8, 1)
#undef XPAR__SORT_MID_V_
#undef XPAR__SORT_MID_FN_
typedef void (*sort_mid_fn)(const xpar__sort_spec *s, void *scratch, uint64_t xm);
#define XPAR__SORT_MID_ROW_(K, F) \
  {sort_mid_##K##_##F##_0, sort_mid_##K##_##F##_4, sort_mid_##K##_##F##_8}
static const sort_mid_fn sort_mids[2][2][3] = {
    {XPAR__SORT_MID_ROW_(4, 0), XPAR__SORT_MID_ROW_(4, 1)},
    {XPAR__SORT_MID_ROW_(8, 0), XPAR__SORT_MID_ROW_(8, 1)}};
#undef XPAR__SORT_MID_ROW_

/* ---- the LSD radix sort ---------------------------------------------------- */

typedef struct sort_job {
  int K, V;            /* key and value bytes (V 0: no values) */
  int iota;            /* argsort: the values are the positions */
  uint64_t xm;         /* the radix key's XOR (sort_rk32/64) */
  size_t n;
  sort_count_all_fn count_all;
  const sort_scatter_fn (*scatter)[2];       /* [value mode][W] */
  const sort_scatter_wc_fn (*scatter_wc)[2]; /* the same, write-combined */
  int vmode;           /* scatter's value mode for values read from memory */
  /* the buffers of pass j: keys from kbuf[j & 1 ^ 1]... (see sort_run) */
  const void *kin, *vin;
  void *kb[2], *vb[2]; /* pass j writes kb[j & 1], vb[j & 1] */
  int keys_last;       /* 0: the last pass writes no keys */
  int pass[XPAR__SORT_MAX_PASSES]; /* the passes that run: digit numbers */
  int m;                           /* how many */
  size_t *cnt;   /* [part][K * BUCKETS]: the read pass's counts (pass 0's per part) */
  size_t *base;  /* [K * BUCKETS]: keys of lower digits, per digit position */
  int parts;
  /* OpenMP tier: [2][part][chunk][BUCKETS], the counts that pass q's scatter
   * writes for pass q + 1 (sort_wc.hist) in half (q + 1) & 1: pass q + 1
   * reads its half while the scatter writes the other */
  size_t *next;
  char *wcbuf;   /* [part][wcbytes]: each part's staged lines */
  size_t wcbytes;
  int nt;        /* the arrays outgrow the cache: stream whole lines */
} sort_job;

/* The passes that move anything (a digit position where one value holds all
 * n keys is skipped), and the base offsets; after the read pass. */
static void sort_plan(sort_job *j) {
  const size_t nb = (size_t)j->K * XPAR__SORT_BUCKETS;
  for (size_t x = 0; x < nb; ++x) {
    size_t tot = 0;
    for (int t = 0; t < j->parts; ++t) tot += j->cnt[(size_t)t * nb + x];
    j->base[x] = tot;
  }
  j->m = 0;
  for (int p = 0; p < j->K; ++p) {
    size_t *b = j->base + (size_t)p * XPAR__SORT_BUCKETS, run = 0;
    int trivial = 0;
    for (unsigned d = 0; d < XPAR__SORT_BUCKETS; ++d) {
      const size_t c = b[d];
      if (c == j->n) trivial = 1;
      b[d] = run;
      run += c;
    }
    if (!trivial) j->pass[j->m++] = p;
  }
}

/* Pass number q (of j->m) for part t of parts over [lo, hi): its source is the
 * input for q == 0, else the buffers pass q - 1 wrote. */
static void sort_pass(const sort_job *j, int q, int t, size_t lo, size_t hi, size_t *off) {
  const int p = j->pass[q];
  const void *ks = q == 0 ? j->kin : j->kb[(q - 1) & 1];
  const void *vs = q == 0 ? j->vin : j->vb[(q - 1) & 1];
  const int vmode = (q == 0 && j->iota) ? (j->V == 4 ? 3 : 4) : j->vmode;
  const int w = (q == j->m - 1) ? j->keys_last : 1;
  const sort_scatter_fn fn = j->scatter[vmode][w];
  fn(ks, j->kb[q & 1], vs, j->vb[q & 1], lo, hi, p * XPAR__SORT_BITS, off, j->xm);
  (void)t;
}

/* The offsets of part t for pass q: base + the counts of parts before t. */
static void sort_offsets(const sort_job *j, int q, int t, size_t *off) {
  const size_t nb = (size_t)j->K * XPAR__SORT_BUCKETS;
  const size_t at = (size_t)j->pass[q] * XPAR__SORT_BUCKETS;
  memcpy(off, j->base + at, sizeof(size_t) * XPAR__SORT_BUCKETS);
  for (int u = 0; u < t; ++u) {
    const size_t *c = j->cnt + (size_t)u * nb + at;
    for (unsigned d = 0; d < XPAR__SORT_BUCKETS; ++d) off[d] += c[d];
  }
}

/* The offsets of chunk t for pass q > 0 (OpenMP tier): base + the counts
 * every part's scatter of pass q - 1 made for the chunks before t. */
static void sort_offsets_next(const sort_job *j, int q, int t, size_t *off) {
  const size_t at = (size_t)j->pass[q] * XPAR__SORT_BUCKETS;
  const size_t rows = (size_t)j->parts * (size_t)j->parts;
  const size_t *h = j->next + (size_t)(q & 1) * rows * XPAR__SORT_BUCKETS;
  memcpy(off, j->base + at, sizeof(size_t) * XPAR__SORT_BUCKETS);
  for (int u = 0; u < j->parts; ++u)
    for (int c = 0; c < t; ++c) {
      const size_t *r = h + ((size_t)u * (size_t)j->parts + (size_t)c) * XPAR__SORT_BUCKETS;
      for (unsigned d = 0; d < XPAR__SORT_BUCKETS; ++d) off[d] += r[d];
    }
}

/* Pass q for part t over [lo, hi), write-combined (OpenMP tier); a pass
 * before the last also counts the next pass's digits by destination chunk. */
static void sort_pass_wc(const sort_job *j, int q, int t, size_t lo, size_t hi, size_t *off) {
  const void *ks = q == 0 ? j->kin : j->kb[(q - 1) & 1];
  const void *vs = q == 0 ? j->vin : j->vb[(q - 1) & 1];
  void *kd = j->kb[q & 1], *vd = j->vb[q & 1];
  const int vmode = (q == 0 && j->iota) ? (j->V == 4 ? 3 : 4) : j->vmode;
  const int w = (q == j->m - 1) ? j->keys_last : 1;
  const size_t L = XPAR__SORT_LINE(j->K);
  sort_wc wc;
  wc.kbuf = j->wcbuf + (size_t)t * j->wcbytes;
  wc.vbuf = (char *)wc.kbuf + XPAR__SORT_BUCKETS * 64;
  wc.hist = NULL;
  wc.nshift = 0;
  wc.parts = j->parts;
  wc.n = j->n;
  if (q + 1 < j->m && j->parts > 1) {
    const size_t rows = (size_t)j->parts * (size_t)j->parts;
    wc.hist = j->next + ((size_t)((q + 1) & 1) * rows + (size_t)t * (size_t)j->parts) *
                            XPAR__SORT_BUCKETS;
    wc.nshift = j->pass[q + 1] * XPAR__SORT_BITS;
  }
  /* key lines start where the key array is 64-byte aligned (keys not on
   * their own alignment: no alignment to seek, ordinary stores) */
  const uintptr_t ka = (uintptr_t)kd;
  const int kal = ka % (uintptr_t)j->K == 0;
  wc.ph = kal ? ((64 - (ka & 63)) & 63) / (size_t)j->K : 0;
  wc.knt = j->nt && kal && w;
  /* a value line (L * V bytes) is streamed where it falls on 16 bytes, and
   * only when it fills a cache line (a half line would go out alone) */
  wc.vnt = j->nt && kal && j->V && L * (size_t)j->V >= 64 &&
           ((uintptr_t)vd + wc.ph * (size_t)j->V) % 16 == 0;
  j->scatter_wc[vmode][w](ks, kd, vs, vd, lo, hi, j->pass[q] * XPAR__SORT_BITS, off, &wc, j->xm);
}

/* After the plan: the buffers each pass writes.  Pass q writes kb[q & 1] and
 * vb[q & 1]; the last (m - 1) writes the output, except in place with m odd
 * (pass 0 must not write its own input): then every pass alternates from
 * scratch, the last writes scratch too and *copy_back is set. */
static void sort_buffers(sort_job *j, const xpar__sort_spec *s, void *ks1, void *ks2, void *vs,
                         int *copy_back) {
  void *kout = s->keys_out ? s->keys_out : ks2;
  const int in_place = (s->keys_out && s->keys_out == s->keys_in) ||
                       (j->V && !s->values_are_indices && s->values_out == s->values_in);
  *copy_back = in_place && (j->m & 1);
  if (!*copy_back) {
    const int o = (j->m - 1) & 1;
    j->kb[o] = kout;
    j->kb[o ^ 1] = ks1;
    j->vb[o] = s->values_out;
    j->vb[o ^ 1] = vs;
  } else {
    j->kb[0] = ks1;
    j->kb[1] = kout;
    j->vb[0] = vs;
    j->vb[1] = s->values_out;
  }
}

/* The whole sort on one thread, no region (the serial tier; a team of one). */
static void sort_run_serial(sort_job *j, const xpar__sort_spec *s, void *ks1, void *ks2,
                            void *vs, int *copy_back) {
  size_t off[XPAR__SORT_BUCKETS];
  j->parts = 1;
  j->count_all(j->kin, 0, j->n, j->cnt, j->xm);
  sort_plan(j);
  if (j->m == 0) return;
  sort_buffers(j, s, ks1, ks2, vs, copy_back);
  for (int q = 0; q < j->m; ++q) { /* one part: the offsets are the bases */
    sort_offsets(j, q, 0, off);
    sort_pass(j, q, 0, 0, j->n, off);
  }
}

#if defined(XPAR_HAVE_OPENMP)
/* The same over `team` contiguous chunks in a region of `region` threads (the
 * rest idle: xpar__cpu_region_size), write-combined.  Pass 0's offsets come
 * from the read pass's counts per chunk of the input, a later pass's from the
 * counts the previous scatter made by destination chunk (sort_wc): one
 * barrier a pass, after the scatter. */
static void sort_run_parallel(sort_job *j, const xpar__sort_spec *s, void *ks1, void *ks2,
                              void *vs, int *copy_back, int region, int team) {
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    const size_t nb = (size_t)j->K * XPAR__SORT_BUCKETS;
    size_t lo = 0, hi = 0, off[XPAR__SORT_BUCKETS];
    if (id < parts) {
      xpar__cpu_split(0, j->n, id, parts, &lo, &hi);
      j->count_all(j->kin, lo, hi, j->cnt + (size_t)id * nb, j->xm);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    XPAR__CPU_PRAGMA(omp single)
    {
      j->parts = parts;
      sort_plan(j);
      if (j->m > 0) sort_buffers(j, s, ks1, ks2, vs, copy_back);
    } /* its implied barrier publishes the plan */
    const int m = j->m;
    for (int q = 0; q < m; ++q) {
      if (id < parts) {
        if (q == 0)
          sort_offsets(j, q, id, off);
        else
          sort_offsets_next(j, q, id, off);
        sort_pass_wc(j, q, id, lo, hi, off);
      }
      XPAR__CPU_PRAGMA(omp barrier)
    }
  }
}
#endif

/* Copy n elements of `size` bytes (the serial tier: one thread). */
static void sort_copy(const xpar__exec *ex, void *dst, const void *src, size_t bytes, int team) {
  if (dst == src || bytes == 0) return;
#if defined(XPAR_HAVE_OPENMP)
  if (team > 1 && !ex->serial) {
    XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
    {
      const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
      if (id < parts) {
        size_t lo, hi;
        xpar__cpu_split(0, bytes / 64, id, parts, &lo, &hi);
        if (id == parts - 1) hi = bytes; else hi *= 64;
        lo *= 64;
        memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
      }
    }
    return;
  }
#else
  (void)ex;
  (void)team;
#endif
  memcpy(dst, src, bytes);
}

static void sort_iota(void *out, size_t n, int V) {
  if (V == 4)
    for (size_t i = 0; i < n; ++i) ((uint32_t *)out)[i] = (uint32_t)i;
  else
    for (size_t i = 0; i < n; ++i) ((uint64_t *)out)[i] = (uint64_t)i;
}

static size_t sort_round64(size_t b) { return (b + 63) & ~(size_t)63; }

xpar_status xpar__cpu_sort(const xpar__exec *ex, const xpar__sort_spec *s) {
  const size_t n = s->n;
  const int K = (int)xpar__dtype_size(s->key_dtype);
  const int F = s->key_dtype == XPAR_FLOAT || s->key_dtype == XPAR_DOUBLE;
  const int has_values = s->values_are_indices || s->values_in != NULL;
  const int V = has_values ? (int)xpar__dtype_size(s->value_dtype) : 0;
  const int cls = F ? XPAR__SORT_KEY_FLOAT
                    : (s->key_dtype == XPAR_INT32 || s->key_dtype == XPAR_INT64)
                          ? XPAR__SORT_KEY_SIGNED
                          : XPAR__SORT_KEY_UNSIGNED;
  uint64_t xm = s->descending ? ~0ull : 0;
  if (cls == XPAR__SORT_KEY_SIGNED) xm ^= K == 4 ? 0x80000000ull : 0x8000000000000000ull;
  if (K == 4) xm &= 0xffffffffull;

  if (n <= 1) {
    if (n == 1) {
      if (s->keys_out) memcpy(s->keys_out, s->keys_in, (size_t)K);
      if (s->values_are_indices)
        sort_iota(s->values_out, 1, V);
      else if (V)
        memcpy(s->values_out, s->values_in, (size_t)V);
    }
    return XPAR_OK;
  }
#if defined(XPAR__SORT_HAVE_RANK)
  if (n <= XPAR__SORT_RANK_MAX && sort_ranks[K == 8][F][V / 4](s, xm)) return XPAR_OK;
#endif
  if (n <= XPAR__SORT_SMALL) {
    sort_smalls[K == 8][F][V / 4](s, xm);
    return XPAR_OK;
  }

  int team = 1, region = 1;
  if (!ex->serial && ex->num_threads != 1) {
    region = xpar__cpu_region_size(ex);
    team = xpar__cpu_team_size_min(ex, n, XPAR__SORT_MIN_PER_PART);
  }
#if !defined(XPAR_HAVE_OPENMP)
  team = region = 1;
  (void)region;
#endif

  if (team <= 1 && n <= (K == 4 ? XPAR__SORT_MID_32 : XPAR__SORT_MID_64)) {
    void *scratch;
    xpar_status st =
        xpar__host_scratch_get(ex->host_scratch, sort_mid_bytes(n, K, V), "sort", &scratch);
    if (st != XPAR_OK) return st;
    sort_mids[K == 8][F][V / 4](s, scratch, xm);
    return XPAR_OK;
  }

  /* scratch: key buffer(s), value buffer, counts [region][K * 256], bases;
   * its size must not wrap (dispatch only checks the arrays') */
  XPAR__RETURN_IF(n > SIZE_MAX / 32, XPAR_ERR_OUT_OF_MEMORY,
                  "host scratch for sort (%zu keys)", n);
  const int keys_out = s->keys_out != NULL;
  const size_t kbytes = sort_round64(n * (size_t)K), vbytes = sort_round64(n * (size_t)V);
  const size_t nb = (size_t)K * XPAR__SORT_BUCKETS;
  const size_t cbytes = sizeof(size_t) * nb * (size_t)(team > 0 ? team : 1);
  const size_t bbytes = sizeof(size_t) * nb;
  /* the OpenMP tier's staged lines and next-pass counts (sort_job.next) */
  const size_t tm = (size_t)(team > 1 ? team : 0);
  const size_t wcbytes = XPAR__SORT_BUCKETS * (64 + XPAR__SORT_LINE(K) * (size_t)V);
  const size_t xbytes = tm * wcbytes + 2 * tm * tm * XPAR__SORT_BUCKETS * sizeof(size_t);
  const size_t total = kbytes * (keys_out ? 1 : 2) + vbytes + cbytes + bbytes + xbytes;
  void *scratch;
  xpar_status st = xpar__host_scratch_get(ex->host_scratch, total, "sort", &scratch);
  if (st != XPAR_OK) return st;
  char *at = (char *)scratch;
  void *ks1 = at;
  at += kbytes;
  void *ks2 = NULL;
  if (!keys_out) {
    ks2 = at;
    at += kbytes;
  }
  void *vs = V ? (void *)at : NULL;
  at += vbytes;

  sort_job j;
  memset(&j, 0, sizeof j);
  j.K = K;
  j.V = V;
  j.iota = s->values_are_indices;
  j.xm = xm;
  j.n = n;
  j.count_all = sort_counts_all[K == 8][F];
  j.scatter = sort_scatters[K == 8][F];
  j.scatter_wc = sort_scatters_wc[K == 8][F];
  j.vmode = V / 4;
  j.kin = s->keys_in;
  j.vin = s->values_in;
  j.keys_last = keys_out;
  j.cnt = (size_t *)at;
  at += cbytes;
  j.base = (size_t *)at;
  at += bbytes;
  j.wcbuf = at; /* 64-byte aligned: every size above is a multiple of 64 */
  j.wcbytes = wcbytes;
  at += tm * wcbytes;
  j.next = (size_t *)at;
  j.nt = n * (size_t)(K + V) >= XPAR__SORT_NT_BYTES;

  int copy_back = 0;
#if defined(XPAR_HAVE_OPENMP)
  if (team > 1)
    sort_run_parallel(&j, s, ks1, ks2, vs, &copy_back, region, team);
  else
#endif
    sort_run_serial(&j, s, ks1, ks2, vs, &copy_back);

  if (j.m == 0) { /* every radix key equal: the input order */
    if (keys_out) sort_copy(ex, s->keys_out, s->keys_in, n * (size_t)K, team);
    if (s->values_are_indices)
      sort_iota(s->values_out, n, V);
    else if (V)
      sort_copy(ex, s->values_out, s->values_in, n * (size_t)V, team);
  } else if (copy_back) {
    if (keys_out) sort_copy(ex, s->keys_out, ks1, n * (size_t)K, team);
    if (V) sort_copy(ex, s->values_out, vs, n * (size_t)V, team);
  }
  return XPAR_OK;
}
