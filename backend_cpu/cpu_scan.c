/*
 * CPU scan (inclusive / exclusive x sum / min / max), serial and OpenMP tiers.
 * out == in is allowed: every loop reads in[i] before it writes out[i].
 *
 * Serial tier, the exact formulas cuda-serial matches (init: the carry-in of
 * xpar_scan_init, the identity for xpar_scan):
 *   inclusive  run = init; for i: run = run op x[i]; out[i] = run
 *   exclusive  run = init; for i: out[i] = run; run = run op x[i]
 *
 * OpenMP tier: a cache-blocked reduce-then-scan inside one parallel region.
 * The plain two-pass OpenMP scan reads the whole array twice from DRAM
 * (reduce each thread's chunk, then scan it with its offset): 2 reads +
 * 1 write.  Here the array is processed in blocks of team x
 * XPAR__CPU_SCAN_BLOCK_BYTES.  Within a block each thread reduces its slice
 * (from DRAM), one barrier publishes the slice totals, each thread folds the
 * totals before its own into its offset, and scans its slice again -- now
 * from its own L2, where the first pass left it.  DRAM traffic is about
 * 1 read + 1 write.  The running carry between blocks, which starts at
 * init (no extra pass for the carry-in), is kept by every thread privately; all threads fold the same totals in the same order, so
 * they agree bit for bit, and the partials are double-buffered by block
 * parity, so one barrier per block suffices: a thread can only overwrite the
 * totals of block b (in block b + 2) after passing the barrier of block
 * b + 1, which every thread reaches only once it has finished reading them.
 */
#include "cpu_internal.h"

/* Bytes of input per thread per block: small enough that the slice and its
 * output stay in a 1-2 MiB L2 between the two passes, large enough that the
 * one barrier per block is noise (tuned in bench/NOTES.md). */
#ifndef XPAR__CPU_SCAN_BLOCK_BYTES
#define XPAR__CPU_SCAN_BLOCK_BYTES (256u * 1024u)
#endif

/* Fewest elements per working thread in the OpenMP scan.  Smaller than the
 * reduce's XPAR__CPU_MIN_PER_THREAD: a scan's second pass is a dependency
 * chain (one add latency per float or double element), so a 4096-element
 * part costs ~3 us where a reduce part costs a few hundred ns, and at
 * 2^14..2^15 four parts of 4096 left xpar's tier 1.15-1.4x behind a plain
 * 16-thread two-pass loop on the H100 host (regret run, bench/NOTES.md,
 * issue 12).  The region (the team) is unchanged: only how many of its
 * threads get work, hence the float rounding, depends on n. */
#ifndef XPAR__CPU_SCAN_MIN_PER_THREAD
#define XPAR__CPU_SCAN_MIN_PER_THREAD 1024u
#endif

/** Scan [lo, hi) starting from *carry (the fold of everything before lo). */
typedef void (*scan_chunk_fn)(const void *in, void *out, size_t lo, size_t hi,
                              const xpar__scalar *carry, int exclusive);

#define XPAR__CPU_SCAN_KERNELS_(e, ctype, OP)                                              \
  static void scan_chunk_##OP##_##e(const void *in, void *out, size_t lo, size_t hi,        \
                                    const xpar__scalar *carry, int exclusive) {            \
    const ctype *x = (const ctype *)in;                                                    \
    ctype *y = (ctype *)out;                                                               \
    ctype run;                                                                             \
    memcpy(&run, carry->bytes, sizeof run);                                                \
    if (exclusive) {                                                                       \
      for (size_t i = lo; i < hi; ++i) {                                                   \
        ctype v = x[i];                                                                    \
        y[i] = run;                                                                        \
        run = xpar__cpu_##OP##_##e(run, v);                                                \
      }                                                                                    \
    } else {                                                                               \
      for (size_t i = lo; i < hi; ++i) {                                                   \
        run = xpar__cpu_##OP##_##e(run, x[i]);                                             \
        y[i] = run;                                                                        \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  static xpar__scalar scan_identity_##OP##_##e(void) {                                     \
    xpar__scalar s;                                                                        \
    memset(&s, 0, sizeof s);                                                               \
    ctype v = xpar__cpu_id_##OP##_##e();                                                   \
    memcpy(s.bytes, &v, sizeof v);                                                         \
    return s;                                                                              \
  }

#define XPAR__CPU_ALL_SCANS_(e, ctype, name, size) \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, sum)           \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, min)           \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, max)
XPAR_DTYPE_MAP(XPAR__CPU_ALL_SCANS_)
#undef XPAR__CPU_ALL_SCANS_

/*
 * Integer sums: prefix sums inside SSE2 registers (SSE2 is part of x86-64,
 * so no run-time check).  A scalar scan is one dependent add per element;
 * here two vectors' local prefixes (shift-and-add, independent of the carry)
 * are computed first, so the dependency chain through the carry is one add
 * and one broadcast per 8 int32 (4 int64).  Integer adds wrap identically
 * in any order: the result is the serial formula's, bit for bit.  Both
 * vectors are loaded before either is stored, so out == in stays correct;
 * the exclusive scan is the inclusive one minus the element.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
#define XPAR__CPU_SIMD_SCAN 1

static void scan_chunk_sum_simd32(const void *in, void *out, size_t lo, size_t hi,
                                  const xpar__scalar *carry, int exclusive) {
  const uint32_t *x = (const uint32_t *)in;
  uint32_t *y = (uint32_t *)out;
  uint32_t run;
  memcpy(&run, carry->bytes, sizeof run);
  __m128i c = _mm_set1_epi32((int)run);
  size_t i = lo;
  for (; hi - i >= 8; i += 8) {
    __m128i v0 = _mm_loadu_si128((const __m128i *)(x + i));
    __m128i v1 = _mm_loadu_si128((const __m128i *)(x + i + 4));
    __m128i p0 = _mm_add_epi32(v0, _mm_slli_si128(v0, 4));
    __m128i p1 = _mm_add_epi32(v1, _mm_slli_si128(v1, 4));
    p0 = _mm_add_epi32(p0, _mm_slli_si128(p0, 8));
    p1 = _mm_add_epi32(p1, _mm_slli_si128(p1, 8));
    p1 = _mm_add_epi32(p1, _mm_shuffle_epi32(p0, _MM_SHUFFLE(3, 3, 3, 3)));
    p0 = _mm_add_epi32(p0, c);
    p1 = _mm_add_epi32(p1, c);
    c = _mm_shuffle_epi32(p1, _MM_SHUFFLE(3, 3, 3, 3));
    if (exclusive) {
      p0 = _mm_sub_epi32(p0, v0);
      p1 = _mm_sub_epi32(p1, v1);
    }
    _mm_storeu_si128((__m128i *)(y + i), p0);
    _mm_storeu_si128((__m128i *)(y + i + 4), p1);
  }
  run = (uint32_t)_mm_cvtsi128_si32(c);
  for (; i < hi; ++i) {
    uint32_t v = x[i];
    y[i] = exclusive ? run : run + v;
    run += v;
  }
}

static void scan_chunk_sum_simd64(const void *in, void *out, size_t lo, size_t hi,
                                  const xpar__scalar *carry, int exclusive) {
  const uint64_t *x = (const uint64_t *)in;
  uint64_t *y = (uint64_t *)out;
  uint64_t run;
  memcpy(&run, carry->bytes, sizeof run);
  __m128i c = _mm_set1_epi64x((long long)run);
  size_t i = lo;
  for (; hi - i >= 4; i += 4) {
    __m128i v0 = _mm_loadu_si128((const __m128i *)(x + i));
    __m128i v1 = _mm_loadu_si128((const __m128i *)(x + i + 2));
    __m128i p0 = _mm_add_epi64(v0, _mm_slli_si128(v0, 8));
    __m128i p1 = _mm_add_epi64(v1, _mm_slli_si128(v1, 8));
    p1 = _mm_add_epi64(p1, _mm_unpackhi_epi64(p0, p0));
    p0 = _mm_add_epi64(p0, c);
    p1 = _mm_add_epi64(p1, c);
    c = _mm_unpackhi_epi64(p1, p1);
    if (exclusive) {
      p0 = _mm_sub_epi64(p0, v0);
      p1 = _mm_sub_epi64(p1, v1);
    }
    _mm_storeu_si128((__m128i *)(y + i), p0);
    _mm_storeu_si128((__m128i *)(y + i + 2), p1);
  }
  run = (uint64_t)_mm_cvtsi128_si64(c);
  for (; i < hi; ++i) {
    uint64_t v = x[i];
    y[i] = exclusive ? run : run + v;
    run += v;
  }
}
/* The sum kernel of dtype e: the SIMD one for integers, else the element-order loop. */
#define XPAR__CPU_SCAN_SUM_CHUNK_(e, ctype, size)                           \
  (XPAR__CPU_IS_FLOAT(ctype) ? scan_chunk_sum_##e                           \
                             : (size) == 4 ? scan_chunk_sum_simd32 : scan_chunk_sum_simd64)
#else
#define XPAR__CPU_SCAN_SUM_CHUNK_(e, ctype, size) scan_chunk_sum_##e
#endif

typedef struct scan_kernels {
  scan_chunk_fn chunk;
  xpar__scalar (*identity)(void);
} scan_kernels;

#define XPAR__CPU_SSET_(e, OP) {scan_chunk_##OP##_##e, scan_identity_##OP##_##e}
#define XPAR__CPU_SROW_(e, ctype, name, size)                                              \
  [XPAR_##e] = {[XPAR_SUM] = {XPAR__CPU_SCAN_SUM_CHUNK_(e, ctype, size), scan_identity_sum_##e}, \
                [XPAR_MIN] = XPAR__CPU_SSET_(e, min), [XPAR_MAX] = XPAR__CPU_SSET_(e, max)},
static const scan_kernels scan_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_SROW_)};
#undef XPAR__CPU_SROW_

/* The OpenMP tier: see the comment at the top of the file. */
static void scan_parallel(xpar_dtype t, xpar_reduction op, const xpar__scalar *init,
                          const void *in, void *out, size_t n, int region, int team,
                          int exclusive) {
  xpar__cpu_chunk_reduce_fn reduce;
  xpar__cpu_combine_fn combine;
  xpar__cpu_reduce_kernels(t, op, &reduce, &combine);
  const scan_chunk_fn chunk = scan_table[t][op].chunk;
  size_t per_thread = XPAR__CPU_SCAN_BLOCK_BYTES / xpar__dtype_size(t);
  xpar__cpu_partial part[2][XPAR__CPU_MAX_THREADS];

  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    /* Threads past the parts (see xpar__cpu_region_size) take empty slices:
     * every thread of the region must still meet every barrier. */
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    size_t block = per_thread * (size_t)nt;
    xpar__scalar carry = *init;
    int parity = 0;
    for (size_t b0 = 0; b0 < n; b0 += block, parity ^= 1) {
      size_t b1 = (n - b0 < block) ? n : b0 + block;
      size_t lo = b1, hi = b1;
      if (id < nt) {
        xpar__cpu_split(b0, b1, id, nt, &lo, &hi);
        reduce(in, NULL, lo, hi, &part[parity][id].v);
      }
      XPAR__CPU_PRAGMA(omp barrier)
      xpar__scalar offset = carry;
      for (int u = 0; u < nt; ++u) {
        if (u == id) offset = carry;
        combine(&carry, &part[parity][u].v);
      }
      chunk(in, out, lo, hi, &offset, exclusive);
    }
  }
}

xpar_status xpar__cpu_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                           xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                           void *out, size_t n) {
  XPAR__RETURN_IF(!xpar__dtype_valid(t) || (unsigned)op >= (unsigned)XPAR_REDUCTION_COUNT_ ||
                      (unsigned)kind >= (unsigned)XPAR_SCAN_KIND_COUNT_,
                  XPAR_ERR_INTERNAL, "cpu scan: bad dtype %d, op %d or kind %d", (int)t, (int)op,
                  (int)kind);
  int exclusive = (kind == XPAR_EXCLUSIVE);
  const xpar__scalar start = init ? *init : scan_table[t][op].identity();
  /* One thread: the serial formulas over the whole array, from init. */
  int team = ex->serial ? 1 : xpar__cpu_team_size_min(ex, n, XPAR__CPU_SCAN_MIN_PER_THREAD);
  if (team <= 1)
    scan_table[t][op].chunk(in, out, 0, n, &start, exclusive);
  else
    scan_parallel(t, op, &start, in, out, n, xpar__cpu_region_size(ex), team, exclusive);
  return XPAR_OK;
}
