/*
 * CPU scan (inclusive / exclusive x sum / min / max), serial and OpenMP tiers.
 * out == in is allowed: every loop reads in[i] before it writes out[i].
 *
 * The strict serial tier (XPAR_BACKEND=serial, and cuda-serial's CPU side):
 * the exact formulas cuda-serial matches (init: the carry-in of
 * xpar_scan_init, the identity for xpar_scan):
 *   inclusive  run = init; for i: run = run op x[i]; out[i] = run
 *   exclusive  run = init; for i: out[i] = run; run = run op x[i]
 * AUTO's one-thread tier and the OpenMP tier's slices run the same formulas,
 * except float and double sums, which are regrouped (scan_sum_float_sse2,
 * scan_sum_grouped4 below): each output is the running carry plus its local
 * prefix within a group of 4 or 8 elements, so the chain through the carry
 * is one add per group instead of one per element.  Every output still folds
 * exactly its own prefix (a different rounding, within the same bound,
 * overflow excepted: where partial sums overflow, one grouping can give inf
 * and another a finite value or NaN, as between the OpenMP tier's slices).
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
 * one barrier per block is noise (development VM, 2026-11-22: 2^26 int32 on 2
 * threads is 512 blocks, 512 barriers of ~1 us each). */
#ifndef XPAR__CPU_SCAN_BLOCK_BYTES
#define XPAR__CPU_SCAN_BLOCK_BYTES (256u * 1024u)
#endif

/* Fewest elements per working thread in the OpenMP scan.  Smaller than the
 * reduce's XPAR__CPU_MIN_PER_THREAD: a scan's second pass was a dependency
 * chain (one add latency per float or double element, before the regrouped
 * kernels below), so a 4096-element part cost ~3 us where a reduce part
 * costs a few hundred ns, and at
 * 2^14..2^15 four parts of 4096 left xpar's tier 1.15-1.4x behind a plain
 * 16-thread two-pass loop on the H100 host (regret run, 2026-11-25).  The region (the team) is unchanged: only how many of its
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

/* The regrouped float and double sums (below) finish their last partial group
 * with the element-order loop, from the carry they reached. */
#define XPAR__CPU_SCAN_TAIL_(e, ctype)                                                    \
  static inline void scan_tail_##e(const void *in, void *out, size_t lo, size_t hi,      \
                                   ctype run, int exclusive) {                           \
    xpar__scalar carry;                                                                   \
    memcpy(carry.bytes, &run, sizeof run);                                                \
    scan_chunk_sum_##e(in, out, lo, hi, &carry, exclusive);                               \
  }
XPAR__CPU_SCAN_TAIL_(FLOAT, float)
XPAR__CPU_SCAN_TAIL_(DOUBLE, double)
#undef XPAR__CPU_SCAN_TAIL_

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

/*
 * Float sums, regrouped (AUTO's one-thread tier and the OpenMP tier's
 * slices; the strict serial tier keeps the element-order loop).  The element-
 * order loop is one dependent add per element; here each group of 4 floats
 * gets its local prefix in a register (two shift-and-adds), a second group
 * adds the first's total, and the carry takes one add per 8 elements.  The
 * shifts bring in -0.0, the exact additive identity (x + -0.0 == x for every
 * x, signed zeros included), so a group's first output is carry + x[i], as
 * in the serial formula, and an exclusive scan's is the carry itself.
 * Development VM (2026-11-25): 2.2x the element-order loop from 2^7 to 2^16;
 * the bound is the shuffle port (6 shuffles per 8 elements).
 */
static inline __m128 scan_f32_up1(__m128 v) { /* [-0, v0, v1, v2] */
  return _mm_or_ps(_mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(v), 4)),
                   _mm_castsi128_ps(_mm_set_epi32(0, 0, 0, (int)0x80000000u)));
}
static inline __m128 scan_f32_up2(__m128 v) { /* [-0, -0, v0, v1] */
  return _mm_or_ps(_mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(v), 8)),
                   _mm_castsi128_ps(_mm_set_epi32(0, 0, (int)0x80000000u, (int)0x80000000u)));
}
static inline __m128 scan_f32_last(__m128 v) { return _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 3, 3, 3)); }

static void scan_sum_float_sse2(const void *in, void *out, size_t lo, size_t hi,
                                const xpar__scalar *carry, int exclusive) {
  const float *x = (const float *)in;
  float *y = (float *)out;
  float run;
  memcpy(&run, carry->bytes, sizeof run);
  __m128 c = _mm_set1_ps(run);
  size_t i = lo;
  for (; hi - i >= 8; i += 8) {
    __m128 v0 = _mm_loadu_ps(x + i), v1 = _mm_loadu_ps(x + i + 4);
    __m128 p0 = _mm_add_ps(v0, scan_f32_up1(v0));
    __m128 p1 = _mm_add_ps(v1, scan_f32_up1(v1));
    p0 = _mm_add_ps(p0, scan_f32_up2(p0)); /* local inclusive prefixes */
    p1 = _mm_add_ps(p1, scan_f32_up2(p1));
    const __m128 total0 = scan_f32_last(p0);
    __m128 o0, o1;
    if (exclusive) {
      o0 = _mm_add_ps(c, scan_f32_up1(p0));
      o1 = _mm_add_ps(c, _mm_add_ps(scan_f32_up1(p1), total0));
      p1 = _mm_add_ps(p1, total0);
    } else {
      p1 = _mm_add_ps(p1, total0);
      o0 = _mm_add_ps(c, p0);
      o1 = _mm_add_ps(c, p1);
    }
    c = _mm_add_ps(c, scan_f32_last(p1));
    _mm_storeu_ps(y + i, o0);
    _mm_storeu_ps(y + i + 4, o1);
  }
  scan_tail_FLOAT(in, out, i, hi, _mm_cvtss_f32(c), exclusive);
}
#define XPAR__CPU_FLOAT_SUM_SCAN scan_sum_float_sse2
#endif /* __SSE2__ */

/*
 * Double sums (and float sums without SSE2), regrouped in plain C: four
 * elements' local prefixes, independent of the carry, then the carry plus
 * each; the chain is one add per 4 elements.  Development VM (2026-11-25):
 * 1.6x the element-order loop (SSE2 pairs of doubles were 1.45x inclusive and
 * 1.1x exclusive: a shuffle per two elements).  All four loads come before the
 * stores (out == in).
 */
#define XPAR__CPU_SCAN_GROUPED4_(e, ctype)                                                    \
  static void scan_sum_grouped4_##e(const void *in, void *out, size_t lo, size_t hi,          \
                                    const xpar__scalar *carry, int exclusive) {               \
    const ctype *x = (const ctype *)in;                                                       \
    ctype *y = (ctype *)out;                                                                  \
    ctype run;                                                                                \
    memcpy(&run, carry->bytes, sizeof run);                                                   \
    size_t i = lo;                                                                            \
    if (exclusive) {                                                                          \
      for (; hi - i >= 4; i += 4) {                                                           \
        const ctype a = x[i], b = x[i + 1], c = x[i + 2], d = x[i + 3];                       \
        const ctype ab = a + b, abc = ab + c, abcd = ab + (c + d);                            \
        y[i] = run;                                                                           \
        y[i + 1] = run + a;                                                                   \
        y[i + 2] = run + ab;                                                                  \
        y[i + 3] = run + abc;                                                                 \
        run += abcd;                                                                          \
      }                                                                                       \
    } else {                                                                                  \
      for (; hi - i >= 4; i += 4) {                                                           \
        const ctype a = x[i], b = x[i + 1], c = x[i + 2], d = x[i + 3];                       \
        const ctype ab = a + b, abc = ab + c, abcd = ab + (c + d);                            \
        y[i] = run + a;                                                                       \
        y[i + 1] = run + ab;                                                                  \
        y[i + 2] = run + abc;                                                                 \
        run += abcd;                                                                          \
        y[i + 3] = run;                                                                       \
      }                                                                                       \
    }                                                                                         \
    scan_tail_##e(in, out, i, hi, run, exclusive);                                            \
  }
XPAR__CPU_SCAN_GROUPED4_(DOUBLE, double)
#ifndef XPAR__CPU_FLOAT_SUM_SCAN
XPAR__CPU_SCAN_GROUPED4_(FLOAT, float)
#define XPAR__CPU_FLOAT_SUM_SCAN scan_sum_grouped4_FLOAT
#endif
#undef XPAR__CPU_SCAN_GROUPED4_

/* The sum kernels of dtype e: the strict one (element order for floats; the
 * integer SIMD scans equal it bit for bit) and the one the other tiers run. */
#ifdef XPAR__CPU_SIMD_SCAN
#define XPAR__CPU_SCAN_SUM_STRICT_(e, ctype, size)                          \
  (XPAR__CPU_IS_FLOAT(ctype) ? scan_chunk_sum_##e                           \
                             : (size) == 4 ? scan_chunk_sum_simd32 : scan_chunk_sum_simd64)
#else
#define XPAR__CPU_SCAN_SUM_STRICT_(e, ctype, size) scan_chunk_sum_##e
#endif
#define XPAR__CPU_SCAN_SUM_FAST_(e, ctype, size)                                         \
  (XPAR_##e == XPAR_FLOAT    ? XPAR__CPU_FLOAT_SUM_SCAN                                  \
   : XPAR_##e == XPAR_DOUBLE ? scan_sum_grouped4_DOUBLE                                  \
                             : XPAR__CPU_SCAN_SUM_STRICT_(e, ctype, size))

typedef struct scan_kernels {
  scan_chunk_fn chunk;  /* AUTO's one-thread tier, the OpenMP tier's slices */
  scan_chunk_fn strict; /* the serial formulas, element by element */
  xpar__scalar (*identity)(void);
} scan_kernels;

#define XPAR__CPU_SSET_(e, OP) {scan_chunk_##OP##_##e, scan_chunk_##OP##_##e, scan_identity_##OP##_##e}
#define XPAR__CPU_SROW_(e, ctype, name, size)                                              \
  [XPAR_##e] = {[XPAR_SUM] = {XPAR__CPU_SCAN_SUM_FAST_(e, ctype, size),                    \
                              XPAR__CPU_SCAN_SUM_STRICT_(e, ctype, size), scan_identity_sum_##e}, \
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
  /* The strict serial tier: the serial formulas, element by element. */
  if (ex->serial) {
    scan_table[t][op].strict(in, out, 0, n, &start, exclusive);
    return XPAR_OK;
  }
  int team = xpar__cpu_team_size_min(ex, n, XPAR__CPU_SCAN_MIN_PER_THREAD);
  if (team <= 1)
    scan_table[t][op].chunk(in, out, 0, n, &start, exclusive);
  else
    scan_parallel(t, op, &start, in, out, n, xpar__cpu_region_size(ex), team, exclusive);
  return XPAR_OK;
}
