/*
 * CPU compaction (xpar__select_spec): select by predicate, select by flags,
 * stable partition, unique.  Kept elements go to out[0 .. count) in input
 * order; out beyond count is never written (a partition writes all n).
 *
 * One thread (ex->serial, one thread, or n too small for a team):
 *  - select, flagged, unique: a backward scan finds the last kept element L
 *    (about 1 / selectivity elements from the end; the whole array when
 *    nothing is kept, which then is the only pass), then one forward pass
 *    over [0, L] stores every element at out[k] and advances k by the keep
 *    test (no branch on the data).  A rejected element's store lands on
 *    out[k] with k below the final count, overwritten by the next kept
 *    element, and element L is kept, so nothing lands at or past the count.
 *    In place (out == in) holds: k <= i, the element is read before the
 *    store, and unique keeps the original previous element in a register.
 *    Bytes per element: read s, write s x selectivity.
 *  - partition: a count pass, then one pass storing every element either at
 *    out[k] or at out[count + r] (the address is chosen, not the branch).
 *    Read 2s, write s.
 *
 * OpenMP tier (select, flagged, unique): cache-sized blocks of team x
 * XPAR__CPU_SELECT_BLOCK_BYTES of input.  In each block every thread
 * compacts its contiguous slice into its own scratch (from the context's
 * host scratch, XPAR__CPU_SELECT_BLOCK_BYTES per thread, so it stays in
 * L2), publishes its count, and after one barrier copies its kept elements
 * to out at the block's running base plus the counts of the threads before
 * it.  DRAM traffic: read s + write s x selectivity per element, the same as
 * one thread; the extra cost is the copy of the kept elements from L2 and one
 * barrier per block.  In place is safe without a second pass: every thread
 * has read the whole block (into its scratch) before the barrier, the copies
 * of block b land in [base_b, base_b + kept in b), which lies below the end
 * of block b and above every copy of block b - 1, and never reach block
 * b + 1, which faster threads may already be reading.  The counts are
 * double-buffered by block parity (as the scan's partials): a thread rewrites
 * block b's counts only in block b + 2, after the barrier of block b + 1,
 * which every thread reaches only once it has read them.  Unique's slices
 * compare their first element with the one before: inside a block it is a
 * neighbouring slice's input, which nobody writes before the barrier; at a
 * block start it may already be overwritten by the previous block's copies,
 * so every thread reads a block's last element before the block's barrier
 * and carries it.
 *
 * OpenMP partition: contiguous chunks per thread, a count pass, one barrier,
 * then each thread writes its selected elements from their offset among
 * the selected and its rejected ones from the total selected plus the
 * rejected before it.  Read 2s, write s per element.
 */
#include "base/sort_key.h"
#include "cpu_internal.h"

/* Input bytes per thread per block of the OpenMP tier: the thread's scratch
 * (at most as large) stays in its L2 between the compaction and the copy out,
 * and the one barrier per block is noise (2^24 int32 on 2 threads is 128
 * blocks). */
#ifndef XPAR__CPU_SELECT_BLOCK_BYTES
#define XPAR__CPU_SELECT_BLOCK_BYTES (256u * 1024u)
#endif

typedef struct sel_args {
  const void *in;
  const unsigned char *flags;
  xpar__scalar value, hi;
} sel_args;

/* Compact [lo, hi) of a->in into out[0 ..), storing every element at out[k]
 * (k the kept count so far), so out[0 .. hi - lo) may be written; returns k.
 * prev: the element before lo (unique only; NULL: lo starts the array). */
typedef size_t (*sel_compact_fn)(const sel_args *a, size_t lo, size_t hi, void *out,
                                 const xpar__scalar *prev);
/* One past the last kept index in [lo, hi) (lo == 0 for unique), lo if none. */
typedef size_t (*sel_rfind_fn)(const sel_args *a, size_t lo, size_t hi);
/* Kept elements in [lo, hi) (predicates and flags only). */
typedef size_t (*sel_count_fn)(const sel_args *a, size_t lo, size_t hi);
/* Kept elements of [lo, hi) to sel[0 ..), the others to rej[0 ..). */
typedef void (*sel_partition_fn)(const sel_args *a, size_t lo, size_t hi, void *sel, void *rej);

typedef struct sel_kernels {
  sel_compact_fn compact;
  sel_rfind_fn rfind;
  sel_count_fn count;
  sel_partition_fn partition;
} sel_kernels;

/* The kernels of one keep test KEEP (of v = x[i], i, and what SETUP sets up). */
#define XPAR__CPU_SEL_KERNELS_(NAME, ctype, SETUP, KEEP)                                   \
  static size_t sel_compact_##NAME(const sel_args *a, size_t lo, size_t hi, void *out,     \
                                   const xpar__scalar *prev) {                             \
    const ctype *x = (const ctype *)a->in;                                                 \
    ctype *y = (ctype *)out; /* may be x + lo's target: out == in */                       \
    SETUP;                                                                                 \
    (void)prev;                                                                            \
    size_t k = 0;                                                                          \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      y[k] = v;                                                                            \
      k += (size_t)(KEEP);                                                                 \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static size_t sel_rfind_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const ctype *x = (const ctype *)a->in;                                                 \
    SETUP;                                                                                 \
    for (size_t i = hi; i-- > lo;) {                                                       \
      const ctype v = x[i];                                                                \
      (void)v;                                                                             \
      if (KEEP) return i + 1;                                                              \
    }                                                                                      \
    return lo;                                                                             \
  }                                                                                        \
  static size_t sel_count_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const ctype *x = (const ctype *)a->in;                                                 \
    SETUP;                                                                                 \
    size_t k = 0;                                                                          \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      (void)v; /* unread by the flags' test */                                             \
      k += (size_t)(KEEP);                                                                 \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static void sel_partition_##NAME(const sel_args *a, size_t lo, size_t hi, void *sel,     \
                                   void *rej) {                                            \
    const ctype *x = (const ctype *)a->in;                                                 \
    ctype *s = (ctype *)sel, *r = (ctype *)rej;                                            \
    SETUP;                                                                                 \
    for (size_t i = lo; i < hi; ++i) {                                                     \
      const ctype v = x[i];                                                                \
      const int keep = (KEEP);                                                             \
      ctype *d = keep ? s : r; /* a select of the address, not a branch */                 \
      *d = v;                                                                              \
      s += keep;                                                                           \
      r += 1 - keep;                                                                       \
    }                                                                                      \
  }

/* The predicates' keep tests (C comparisons: a NaN satisfies only NE).  The
 * range test uses & so that both compares are evaluated, without a branch. */
#define XPAR__CPU_SEL_SETUP_(ctype)       \
  ctype a0, a1;                           \
  memcpy(&a0, a->value.bytes, sizeof a0); \
  memcpy(&a1, a->hi.bytes, sizeof a1);    \
  (void)a0;                               \
  (void)a1
#define XPAR__CPU_SEL_PREDICATES_(e, ctype, name, size)                                     \
  XPAR__CPU_SEL_KERNELS_(LT_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v < a0)               \
  XPAR__CPU_SEL_KERNELS_(LE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v <= a0)              \
  XPAR__CPU_SEL_KERNELS_(EQ_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v == a0)              \
  XPAR__CPU_SEL_KERNELS_(NE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v != a0)              \
  XPAR__CPU_SEL_KERNELS_(GE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v >= a0)              \
  XPAR__CPU_SEL_KERNELS_(GT_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), v > a0)               \
  XPAR__CPU_SEL_KERNELS_(IN_RANGE_##e, ctype, XPAR__CPU_SEL_SETUP_(ctype), (v >= a0) & (v < a1))
XPAR_DTYPE_MAP(XPAR__CPU_SEL_PREDICATES_)
#undef XPAR__CPU_SEL_PREDICATES_

/* Flags: the elements only move, so one set per element size. */
#define XPAR__CPU_SEL_FLAGS_SETUP_ const unsigned char *f = a->flags
XPAR__CPU_SEL_KERNELS_(FLAGGED_4, uint32_t, XPAR__CPU_SEL_FLAGS_SETUP_, f[i] != 0)
XPAR__CPU_SEL_KERNELS_(FLAGGED_8, uint64_t, XPAR__CPU_SEL_FLAGS_SETUP_, f[i] != 0)
#undef XPAR__CPU_SEL_FLAGS_SETUP_
#undef XPAR__CPU_SEL_SETUP_
#undef XPAR__CPU_SEL_KERNELS_

/*
 * Unique: element i is kept when i == 0 or its radix key (base/sort_key.h,
 * ascending) differs from element i - 1's.  Integers compare their bits; the
 * float key maps -0.0 to +0.0 and every NaN to one NaN.  The forward loop
 * keeps the previous input element's key in a register (out == in: the
 * element before i may already be overwritten).
 */
#define XPAR__CPU_UNIQUE_KERNELS_(NAME, utype, RADIX, CLASS)                                \
  static size_t sel_compact_##NAME(const sel_args *a, size_t lo, size_t hi, void *out,     \
                                   const xpar__scalar *prev) {                             \
    const utype *x = (const utype *)a->in;                                                 \
    utype *y = (utype *)out;                                                               \
    size_t k = 0, i = lo;                                                                  \
    utype pk;                                                                              \
    if (lo == hi) return 0;                                                                \
    if (prev) {                                                                            \
      utype pb;                                                                            \
      memcpy(&pb, prev->bytes, sizeof pb);                                                 \
      pk = RADIX(pb, CLASS, 0);                                                            \
    } else { /* the array's first element: kept */                                         \
      y[0] = x[lo];                                                                        \
      pk = RADIX(x[lo], CLASS, 0);                                                         \
      k = 1;                                                                               \
      i = lo + 1;                                                                          \
    }                                                                                      \
    for (; i < hi; ++i) {                                                                  \
      const utype v = x[i], vk = RADIX(v, CLASS, 0);                                       \
      y[k] = v;                                                                            \
      k += (size_t)(vk != pk);                                                             \
      pk = vk;                                                                             \
    }                                                                                      \
    return k;                                                                              \
  }                                                                                        \
  static size_t sel_rfind_##NAME(const sel_args *a, size_t lo, size_t hi) {                \
    const utype *x = (const utype *)a->in;                                                 \
    (void)lo; /* 0: element 0 is kept, so the answer is at least 1 */                      \
    if (hi == 0) return 0;                                                                 \
    utype nk = RADIX(x[hi - 1], CLASS, 0);                                                 \
    for (size_t i = hi - 1; i > 0; --i) {                                                  \
      const utype pk = RADIX(x[i - 1], CLASS, 0);                                          \
      if (pk != nk) return i + 1;                                                          \
      nk = pk;                                                                             \
    }                                                                                      \
    return 1;                                                                              \
  }
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_I4, uint32_t, xpar__sort_radix32, XPAR__SORT_KEY_UNSIGNED)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_I8, uint64_t, xpar__sort_radix64, XPAR__SORT_KEY_UNSIGNED)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_F4, uint32_t, xpar__sort_radix32, XPAR__SORT_KEY_FLOAT)
XPAR__CPU_UNIQUE_KERNELS_(UNIQUE_F8, uint64_t, xpar__sort_radix64, XPAR__SORT_KEY_FLOAT)
#undef XPAR__CPU_UNIQUE_KERNELS_

/*
 * AVX2 compaction (x86-64, chosen at run time): select by predicate and by
 * flags over 4- and 8-byte elements.  Each step loads one 32-byte vector
 * (8 or 4 lanes), builds the keep mask (the compares below: a NaN satisfies
 * only NE, as the scalar tests), packs the kept lanes to the front with one
 * permutevar8x32 from a table indexed by the mask, stores all 32 bytes at
 * out[k] and advances k by the mask's popcount.  The lanes past the popcount
 * are garbage, so a vector step may run only where the full store stays below
 * the final count: a backward scan in vector steps from hi finds p with at
 * least W kept elements in [p, hi) (W the lanes), and vector steps run over
 * [i, i + W) with i + W <= p, after which [i + W, hi) still holds W kept
 * elements.  The rest is the scalar loop (the same bounds as before: hi - 1 is
 * kept on one thread; the OpenMP tier's scratch holds hi - lo).  The store
 * also stays below hi - lo (k <= i - lo).  In place: the store covers
 * [k, k + W) with k <= i, all loaded already (this step's load comes first);
 * the next load starts at i + W.  Measured: docs/compaction.md.
 */
#if defined(__x86_64__) &&                                                          \
    ((defined(__clang__) && __clang_major__ >= 8) ||                                \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 6))
#define XPAR__CPU_SEL_AVX2 1
#include <immintrin.h>

#define XPAR__CPU_SEL_AVX2_TARGET_ __attribute__((target("avx2,popcnt")))

/* Byte j of entry m: the lane (of 8 x 32 bits) that goes to lane j; the kept
 * lanes of mask m in order, then 0.  perm8: the same for 4 x 64-bit lanes. */
static const uint64_t sel_avx2_perm4[256] = {
    0x0000000000000000u, 0x0000000000000000u, 0x0000000000000001u, 0x0000000000000100u,
    0x0000000000000002u, 0x0000000000000200u, 0x0000000000000201u, 0x0000000000020100u,
    0x0000000000000003u, 0x0000000000000300u, 0x0000000000000301u, 0x0000000000030100u,
    0x0000000000000302u, 0x0000000000030200u, 0x0000000000030201u, 0x0000000003020100u,
    0x0000000000000004u, 0x0000000000000400u, 0x0000000000000401u, 0x0000000000040100u,
    0x0000000000000402u, 0x0000000000040200u, 0x0000000000040201u, 0x0000000004020100u,
    0x0000000000000403u, 0x0000000000040300u, 0x0000000000040301u, 0x0000000004030100u,
    0x0000000000040302u, 0x0000000004030200u, 0x0000000004030201u, 0x0000000403020100u,
    0x0000000000000005u, 0x0000000000000500u, 0x0000000000000501u, 0x0000000000050100u,
    0x0000000000000502u, 0x0000000000050200u, 0x0000000000050201u, 0x0000000005020100u,
    0x0000000000000503u, 0x0000000000050300u, 0x0000000000050301u, 0x0000000005030100u,
    0x0000000000050302u, 0x0000000005030200u, 0x0000000005030201u, 0x0000000503020100u,
    0x0000000000000504u, 0x0000000000050400u, 0x0000000000050401u, 0x0000000005040100u,
    0x0000000000050402u, 0x0000000005040200u, 0x0000000005040201u, 0x0000000504020100u,
    0x0000000000050403u, 0x0000000005040300u, 0x0000000005040301u, 0x0000000504030100u,
    0x0000000005040302u, 0x0000000504030200u, 0x0000000504030201u, 0x0000050403020100u,
    0x0000000000000006u, 0x0000000000000600u, 0x0000000000000601u, 0x0000000000060100u,
    0x0000000000000602u, 0x0000000000060200u, 0x0000000000060201u, 0x0000000006020100u,
    0x0000000000000603u, 0x0000000000060300u, 0x0000000000060301u, 0x0000000006030100u,
    0x0000000000060302u, 0x0000000006030200u, 0x0000000006030201u, 0x0000000603020100u,
    0x0000000000000604u, 0x0000000000060400u, 0x0000000000060401u, 0x0000000006040100u,
    0x0000000000060402u, 0x0000000006040200u, 0x0000000006040201u, 0x0000000604020100u,
    0x0000000000060403u, 0x0000000006040300u, 0x0000000006040301u, 0x0000000604030100u,
    0x0000000006040302u, 0x0000000604030200u, 0x0000000604030201u, 0x0000060403020100u,
    0x0000000000000605u, 0x0000000000060500u, 0x0000000000060501u, 0x0000000006050100u,
    0x0000000000060502u, 0x0000000006050200u, 0x0000000006050201u, 0x0000000605020100u,
    0x0000000000060503u, 0x0000000006050300u, 0x0000000006050301u, 0x0000000605030100u,
    0x0000000006050302u, 0x0000000605030200u, 0x0000000605030201u, 0x0000060503020100u,
    0x0000000000060504u, 0x0000000006050400u, 0x0000000006050401u, 0x0000000605040100u,
    0x0000000006050402u, 0x0000000605040200u, 0x0000000605040201u, 0x0000060504020100u,
    0x0000000006050403u, 0x0000000605040300u, 0x0000000605040301u, 0x0000060504030100u,
    0x0000000605040302u, 0x0000060504030200u, 0x0000060504030201u, 0x0006050403020100u,
    0x0000000000000007u, 0x0000000000000700u, 0x0000000000000701u, 0x0000000000070100u,
    0x0000000000000702u, 0x0000000000070200u, 0x0000000000070201u, 0x0000000007020100u,
    0x0000000000000703u, 0x0000000000070300u, 0x0000000000070301u, 0x0000000007030100u,
    0x0000000000070302u, 0x0000000007030200u, 0x0000000007030201u, 0x0000000703020100u,
    0x0000000000000704u, 0x0000000000070400u, 0x0000000000070401u, 0x0000000007040100u,
    0x0000000000070402u, 0x0000000007040200u, 0x0000000007040201u, 0x0000000704020100u,
    0x0000000000070403u, 0x0000000007040300u, 0x0000000007040301u, 0x0000000704030100u,
    0x0000000007040302u, 0x0000000704030200u, 0x0000000704030201u, 0x0000070403020100u,
    0x0000000000000705u, 0x0000000000070500u, 0x0000000000070501u, 0x0000000007050100u,
    0x0000000000070502u, 0x0000000007050200u, 0x0000000007050201u, 0x0000000705020100u,
    0x0000000000070503u, 0x0000000007050300u, 0x0000000007050301u, 0x0000000705030100u,
    0x0000000007050302u, 0x0000000705030200u, 0x0000000705030201u, 0x0000070503020100u,
    0x0000000000070504u, 0x0000000007050400u, 0x0000000007050401u, 0x0000000705040100u,
    0x0000000007050402u, 0x0000000705040200u, 0x0000000705040201u, 0x0000070504020100u,
    0x0000000007050403u, 0x0000000705040300u, 0x0000000705040301u, 0x0000070504030100u,
    0x0000000705040302u, 0x0000070504030200u, 0x0000070504030201u, 0x0007050403020100u,
    0x0000000000000706u, 0x0000000000070600u, 0x0000000000070601u, 0x0000000007060100u,
    0x0000000000070602u, 0x0000000007060200u, 0x0000000007060201u, 0x0000000706020100u,
    0x0000000000070603u, 0x0000000007060300u, 0x0000000007060301u, 0x0000000706030100u,
    0x0000000007060302u, 0x0000000706030200u, 0x0000000706030201u, 0x0000070603020100u,
    0x0000000000070604u, 0x0000000007060400u, 0x0000000007060401u, 0x0000000706040100u,
    0x0000000007060402u, 0x0000000706040200u, 0x0000000706040201u, 0x0000070604020100u,
    0x0000000007060403u, 0x0000000706040300u, 0x0000000706040301u, 0x0000070604030100u,
    0x0000000706040302u, 0x0000070604030200u, 0x0000070604030201u, 0x0007060403020100u,
    0x0000000000070605u, 0x0000000007060500u, 0x0000000007060501u, 0x0000000706050100u,
    0x0000000007060502u, 0x0000000706050200u, 0x0000000706050201u, 0x0000070605020100u,
    0x0000000007060503u, 0x0000000706050300u, 0x0000000706050301u, 0x0000070605030100u,
    0x0000000706050302u, 0x0000070605030200u, 0x0000070605030201u, 0x0007060503020100u,
    0x0000000007060504u, 0x0000000706050400u, 0x0000000706050401u, 0x0000070605040100u,
    0x0000000706050402u, 0x0000070605040200u, 0x0000070605040201u, 0x0007060504020100u,
    0x0000000706050403u, 0x0000070605040300u, 0x0000070605040301u, 0x0007060504030100u,
    0x0000070605040302u, 0x0007060504030200u, 0x0007060504030201u, 0x0706050403020100u,
};
static const uint64_t sel_avx2_perm8[16] = {
    0x0000000000000000u, 0x0000000000000100u, 0x0000000000000302u, 0x0000000003020100u,
    0x0000000000000504u, 0x0000000005040100u, 0x0000000005040302u, 0x0000050403020100u,
    0x0000000000000706u, 0x0000000007060100u, 0x0000000007060302u, 0x0000070603020100u,
    0x0000000007060504u, 0x0000070605040100u, 0x0000070605040302u, 0x0706050403020100u,
};

/* Keep masks of a vector v against a broadcast operand A (bit j: lane j). */
#define XPAR__SEL_M4_(c) ((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(c)))
#define XPAR__SEL_M8_(c) ((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)))
/* Signed integers (unsigned: both sides with the sign bit flipped first). */
#define XPAR__SEL_I4_LT_(v, A) XPAR__SEL_M4_(_mm256_cmpgt_epi32(A, v))
#define XPAR__SEL_I4_GT_(v, A) XPAR__SEL_M4_(_mm256_cmpgt_epi32(v, A))
#define XPAR__SEL_I4_EQ_(v, A) XPAR__SEL_M4_(_mm256_cmpeq_epi32(v, A))
#define XPAR__SEL_I4_LE_(v, A) (XPAR__SEL_I4_GT_(v, A) ^ 0xFFu)
#define XPAR__SEL_I4_GE_(v, A) (XPAR__SEL_I4_LT_(v, A) ^ 0xFFu)
#define XPAR__SEL_I4_NE_(v, A) (XPAR__SEL_I4_EQ_(v, A) ^ 0xFFu)
#define XPAR__SEL_I8_LT_(v, A) XPAR__SEL_M8_(_mm256_cmpgt_epi64(A, v))
#define XPAR__SEL_I8_GT_(v, A) XPAR__SEL_M8_(_mm256_cmpgt_epi64(v, A))
#define XPAR__SEL_I8_EQ_(v, A) XPAR__SEL_M8_(_mm256_cmpeq_epi64(v, A))
#define XPAR__SEL_I8_LE_(v, A) (XPAR__SEL_I8_GT_(v, A) ^ 0xFu)
#define XPAR__SEL_I8_GE_(v, A) (XPAR__SEL_I8_LT_(v, A) ^ 0xFu)
#define XPAR__SEL_I8_NE_(v, A) (XPAR__SEL_I8_EQ_(v, A) ^ 0xFu)
/* Floating point: ordered, quiet compares; NE unordered (true for a NaN). */
#define XPAR__SEL_F4_(v, A, P) \
  ((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_castsi256_ps(v), _mm256_castsi256_ps(A), P)))
#define XPAR__SEL_F4_LT_(v, A) XPAR__SEL_F4_(v, A, _CMP_LT_OQ)
#define XPAR__SEL_F4_LE_(v, A) XPAR__SEL_F4_(v, A, _CMP_LE_OQ)
#define XPAR__SEL_F4_EQ_(v, A) XPAR__SEL_F4_(v, A, _CMP_EQ_OQ)
#define XPAR__SEL_F4_NE_(v, A) XPAR__SEL_F4_(v, A, _CMP_NEQ_UQ)
#define XPAR__SEL_F4_GE_(v, A) XPAR__SEL_F4_(v, A, _CMP_GE_OQ)
#define XPAR__SEL_F4_GT_(v, A) XPAR__SEL_F4_(v, A, _CMP_GT_OQ)
#define XPAR__SEL_F8_(v, A, P) \
  ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_castsi256_pd(v), _mm256_castsi256_pd(A), P)))
#define XPAR__SEL_F8_LT_(v, A) XPAR__SEL_F8_(v, A, _CMP_LT_OQ)
#define XPAR__SEL_F8_LE_(v, A) XPAR__SEL_F8_(v, A, _CMP_LE_OQ)
#define XPAR__SEL_F8_EQ_(v, A) XPAR__SEL_F8_(v, A, _CMP_EQ_OQ)
#define XPAR__SEL_F8_NE_(v, A) XPAR__SEL_F8_(v, A, _CMP_NEQ_UQ)
#define XPAR__SEL_F8_GE_(v, A) XPAR__SEL_F8_(v, A, _CMP_GE_OQ)
#define XPAR__SEL_F8_GT_(v, A) XPAR__SEL_F8_(v, A, _CMP_GT_OQ)

/* One compact kernel: W lanes of ctype, PERM the table, SETUP the scalar and
 * vector operands, MASK the keep mask (an expression of the loaded vector vv
 * at x + iv), KEEP the scalar test of v = x[i]. */
#define XPAR__CPU_SEL_AVX2_KERNEL_(NAME, ctype, W, PERM, SETUP, MASK, KEEP)                   \
  XPAR__CPU_SEL_AVX2_TARGET_ static size_t sel_compact_avx2_##NAME(                         \
      const sel_args *a, size_t lo, size_t hi, void *out, const xpar__scalar *prev) {         \
    const ctype *x = (const ctype *)a->in;                                                    \
    ctype *y = (ctype *)out; /* may be x: out == in */                                        \
    SETUP;                                                                                    \
    (void)prev;                                                                               \
    size_t p = hi, k = 0, i = lo;                                                             \
    unsigned seen = 0;                                                                        \
    while (seen < (W) && p - lo >= (W)) {                                                     \
      p -= (W);                                                                               \
      const size_t iv = p;                                                                    \
      const __m256i vv = _mm256_loadu_si256((const __m256i *)(x + iv));                       \
      (void)iv;                                                                               \
      (void)vv;                                                                               \
      seen += (unsigned)__builtin_popcount(MASK);                                             \
    }                                                                                         \
    if (seen < (W)) p = lo; /* fewer than W kept: no vector step */                           \
    for (; i + (W) <= p; i += (W)) {                                                          \
      const size_t iv = i;                                                                    \
      const __m256i vv = _mm256_loadu_si256((const __m256i *)(x + iv));                       \
      (void)iv;                                                                               \
      const unsigned m = (MASK);                                                              \
      const __m256i ix = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&PERM[m]));    \
      _mm256_storeu_si256((__m256i *)(y + k), _mm256_permutevar8x32_epi32(vv, ix));           \
      k += (size_t)__builtin_popcount(m);                                                     \
    }                                                                                         \
    for (; i < hi; ++i) {                                                                     \
      const ctype v = x[i];                                                                   \
      y[k] = v;                                                                               \
      k += (size_t)(KEEP);                                                                    \
    }                                                                                         \
    return k;                                                                                 \
  }

/* The predicates of one dtype: T the compare family above, SET1 a broadcast,
 * PRE the transform of both sides before a signed compare. */
#define XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE) \
  ctype a0, a1;                                     \
  memcpy(&a0, a->value.bytes, sizeof a0);           \
  memcpy(&a1, a->hi.bytes, sizeof a1);              \
  const __m256i A0 = PRE(SET1(a0)), A1 = PRE(SET1(a1));  \
  (void)A1
#define XPAR__CPU_SEL_AVX2_PREDICATES_(e, ctype, W, PERM, T, SET1, PRE)                      \
  XPAR__CPU_SEL_AVX2_KERNEL_(LT_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_LT_(PRE(vv), A0), v < a0)                       \
  XPAR__CPU_SEL_AVX2_KERNEL_(LE_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_LE_(PRE(vv), A0), v <= a0)                      \
  XPAR__CPU_SEL_AVX2_KERNEL_(EQ_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_EQ_(PRE(vv), A0), v == a0)                      \
  XPAR__CPU_SEL_AVX2_KERNEL_(NE_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_NE_(PRE(vv), A0), v != a0)                      \
  XPAR__CPU_SEL_AVX2_KERNEL_(GE_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_GE_(PRE(vv), A0), v >= a0)                      \
  XPAR__CPU_SEL_AVX2_KERNEL_(GT_##e, ctype, W, PERM,                                         \
                             XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),                    \
                             XPAR__SEL_##T##_GT_(PRE(vv), A0), v > a0)                       \
  XPAR__CPU_SEL_AVX2_KERNEL_(                                                                \
      IN_RANGE_##e, ctype, W, PERM, XPAR__CPU_SEL_AVX2_SETUP_(ctype, SET1, PRE),             \
      (XPAR__SEL_##T##_GE_(PRE(vv), A0) & XPAR__SEL_##T##_LT_(PRE(vv), A1)),                 \
      (v >= a0) & (v < a1))

#define XPAR__SEL_ID_(v) (v)
#define XPAR__SEL_FLIP4_(v) _mm256_xor_si256(v, _mm256_set1_epi32(INT32_MIN))
#define XPAR__SEL_FLIP8_(v) _mm256_xor_si256(v, _mm256_set1_epi64x(INT64_MIN))
#define XPAR__SEL_SET_I4_(s) _mm256_set1_epi32((int32_t)(s))
#define XPAR__SEL_SET_I8_(s) _mm256_set1_epi64x((long long)(s))
#define XPAR__SEL_SET_F4_(s) _mm256_castps_si256(_mm256_set1_ps(s))
#define XPAR__SEL_SET_F8_(s) _mm256_castpd_si256(_mm256_set1_pd(s))
XPAR__CPU_SEL_AVX2_PREDICATES_(INT32, int32_t, 8, sel_avx2_perm4, I4, XPAR__SEL_SET_I4_,
                               XPAR__SEL_ID_)
XPAR__CPU_SEL_AVX2_PREDICATES_(UINT32, uint32_t, 8, sel_avx2_perm4, I4, XPAR__SEL_SET_I4_,
                               XPAR__SEL_FLIP4_)
XPAR__CPU_SEL_AVX2_PREDICATES_(FLOAT, float, 8, sel_avx2_perm4, F4, XPAR__SEL_SET_F4_,
                               XPAR__SEL_ID_)
XPAR__CPU_SEL_AVX2_PREDICATES_(INT64, int64_t, 4, sel_avx2_perm8, I8, XPAR__SEL_SET_I8_,
                               XPAR__SEL_ID_)
XPAR__CPU_SEL_AVX2_PREDICATES_(UINT64, uint64_t, 4, sel_avx2_perm8, I8, XPAR__SEL_SET_I8_,
                               XPAR__SEL_FLIP8_)
XPAR__CPU_SEL_AVX2_PREDICATES_(DOUBLE, double, 4, sel_avx2_perm8, F8, XPAR__SEL_SET_F8_,
                               XPAR__SEL_ID_)

/* Flags: bit j set where f[j] is not 0, for 8 or 4 flags. */
XPAR__CPU_SEL_AVX2_TARGET_ static inline unsigned sel_avx2_flags8(const unsigned char *f) {
  const __m128i b = _mm_loadl_epi64((const __m128i *)f);
  return ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128())) & 0xFFu) ^ 0xFFu;
}
XPAR__CPU_SEL_AVX2_TARGET_ static inline unsigned sel_avx2_flags4(const unsigned char *f) {
  int32_t w;
  memcpy(&w, f, sizeof w);
  const __m128i b = _mm_cvtsi32_si128(w);
  return ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128())) & 0xFu) ^ 0xFu;
}
#define XPAR__CPU_SEL_AVX2_FLAGS_SETUP_ const unsigned char *f = a->flags
XPAR__CPU_SEL_AVX2_KERNEL_(FLAGGED_4, uint32_t, 8, sel_avx2_perm4,
                           XPAR__CPU_SEL_AVX2_FLAGS_SETUP_, sel_avx2_flags8(f + iv), f[i] != 0)
XPAR__CPU_SEL_AVX2_KERNEL_(FLAGGED_8, uint64_t, 4, sel_avx2_perm8,
                           XPAR__CPU_SEL_AVX2_FLAGS_SETUP_, sel_avx2_flags4(f + iv), f[i] != 0)
#undef XPAR__CPU_SEL_AVX2_FLAGS_SETUP_

#define XPAR__CPU_SEL_AVX2_ROW_(e, ctype, name, size)                                         \
  [XPAR_##e] = {[XPAR_LT] = sel_compact_avx2_LT_##e, [XPAR_LE] = sel_compact_avx2_LE_##e,    \
                [XPAR_EQ] = sel_compact_avx2_EQ_##e, [XPAR_NE] = sel_compact_avx2_NE_##e,    \
                [XPAR_GE] = sel_compact_avx2_GE_##e, [XPAR_GT] = sel_compact_avx2_GT_##e,    \
                [XPAR_IN_RANGE] = sel_compact_avx2_IN_RANGE_##e},
static const sel_compact_fn sel_avx2_table[XPAR_DTYPE_COUNT_][XPAR_PREDICATE_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_SEL_AVX2_ROW_)};
#undef XPAR__CPU_SEL_AVX2_ROW_
static const sel_compact_fn sel_avx2_flagged[2] = {sel_compact_avx2_FLAGGED_4,
                                                   sel_compact_avx2_FLAGGED_8};

/* Whether this CPU runs the kernels above (checked once per call: a load). */
static int sel_avx2_ok(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}
#endif /* XPAR__CPU_SEL_AVX2 */

#define XPAR__CPU_SEL_SET_(NAME) \
  {sel_compact_##NAME, sel_rfind_##NAME, sel_count_##NAME, sel_partition_##NAME}
#define XPAR__CPU_SEL_ROW_(e, ctype, name, size)                                           \
  [XPAR_##e] = {[XPAR_LT] = XPAR__CPU_SEL_SET_(LT_##e), [XPAR_LE] = XPAR__CPU_SEL_SET_(LE_##e), \
                [XPAR_EQ] = XPAR__CPU_SEL_SET_(EQ_##e), [XPAR_NE] = XPAR__CPU_SEL_SET_(NE_##e), \
                [XPAR_GE] = XPAR__CPU_SEL_SET_(GE_##e), [XPAR_GT] = XPAR__CPU_SEL_SET_(GT_##e), \
                [XPAR_IN_RANGE] = XPAR__CPU_SEL_SET_(IN_RANGE_##e)},
static const sel_kernels sel_table[XPAR_DTYPE_COUNT_][XPAR_PREDICATE_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_SEL_ROW_)};
#undef XPAR__CPU_SEL_ROW_
static const sel_kernels sel_flagged[2] = {XPAR__CPU_SEL_SET_(FLAGGED_4),
                                           XPAR__CPU_SEL_SET_(FLAGGED_8)};
#undef XPAR__CPU_SEL_SET_
static const sel_kernels sel_unique[4] = {{sel_compact_UNIQUE_I4, sel_rfind_UNIQUE_I4, NULL, NULL},
                                          {sel_compact_UNIQUE_I8, sel_rfind_UNIQUE_I8, NULL, NULL},
                                          {sel_compact_UNIQUE_F4, sel_rfind_UNIQUE_F4, NULL, NULL},
                                          {sel_compact_UNIQUE_F8, sel_rfind_UNIQUE_F8, NULL, NULL}};

/** A count per thread and block, padded to its own cache line. */
typedef struct sel_part {
  _Alignas(64) size_t k;
} sel_part;

/* The OpenMP tier of select, flagged and unique: see the top of the file. */
static size_t sel_parallel(const sel_kernels *kn, const sel_args *a, int unique, size_t es,
                           void *out, size_t n, int region, int team, unsigned char *scratch) {
  const size_t per_thread = XPAR__CPU_SELECT_BLOCK_BYTES / es;
  sel_part part[2][XPAR__CPU_MAX_THREADS];
  size_t total = 0;
  const unsigned char *in = (const unsigned char *)a->in;

  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    /* Threads past the parts take empty slices but meet every barrier. */
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    unsigned char *mine = scratch + (size_t)id * per_thread * es;
    const size_t block = per_thread * (size_t)nt;
    size_t base = 0;        /* kept before the block */
    xpar__scalar carry;     /* unique: the original element before the block */
    memset(&carry, 0, sizeof carry);
    int parity = 0;
    for (size_t b0 = 0; b0 < n; b0 += block, parity ^= 1) {
      const size_t b1 = (n - b0 < block) ? n : b0 + block;
      size_t lo = b1, hi = b1, k = 0;
      xpar__scalar next;
      if (id < nt) {
        xpar__cpu_split(b0, b1, id, nt, &lo, &hi);
        if (lo < hi) {
          const xpar__scalar *prev = NULL;
          xpar__scalar before;
          if (unique && lo > 0) {
            if (lo == b0) {
              prev = &carry;
            } else { /* a neighbouring slice's input: not written before the barrier */
              memcpy(before.bytes, in + (lo - 1) * es, es);
              prev = &before;
            }
          }
          k = kn->compact(a, lo, hi, mine, prev);
        }
        part[parity][id].k = k;
      }
      if (unique) memcpy(next.bytes, in + (b1 - 1) * es, es); /* before the barrier */
      XPAR__CPU_PRAGMA(omp barrier)
      size_t off = base;
      for (int u = 0; u < nt; ++u) {
        if (u == id) off = base;
        base += part[parity][u].k;
      }
      if (k) memcpy((unsigned char *)out + off * es, mine, k * es);
      if (unique) carry = next;
    }
    if (id == 0) total = base;
  }
  return total;
}

/* The OpenMP tier of partition: see the top of the file. */
static size_t sel_partition_parallel(const sel_kernels *kn, const sel_args *a, size_t es,
                                     void *out, size_t n, int region, int team) {
  sel_part part[XPAR__CPU_MAX_THREADS];
  size_t total = 0;
  XPAR__CPU_PRAGMA(omp parallel num_threads(region))
  {
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_parts_in_region(team);
    size_t lo = n, hi = n;
    if (id < nt) {
      xpar__cpu_split(0, n, id, nt, &lo, &hi);
      part[id].k = kn->count(a, lo, hi);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    size_t sel = 0, all = 0;
    for (int u = 0; u < nt; ++u) {
      if (u == id) sel = all;
      all += part[u].k;
    }
    if (id < nt && lo < hi) {
      unsigned char *o = (unsigned char *)out;
      kn->partition(a, lo, hi, o + sel * es, o + (all + (lo - sel)) * es);
    }
    if (id == 0) total = all;
  }
  return total;
}

xpar_status xpar__cpu_select(const xpar__exec *ex, const xpar__select_spec *s) {
  XPAR__RETURN_IF(!xpar__dtype_valid(s->dtype) || (unsigned)s->kind > (unsigned)XPAR__UNIQUE ||
                      ((s->kind == XPAR__SELECT_IF || s->kind == XPAR__PARTITION) &&
                       (unsigned)s->pred >= (unsigned)XPAR_PREDICATE_COUNT_),
                  XPAR_ERR_INTERNAL, "cpu select: bad kind %d, dtype %d or predicate %d",
                  (int)s->kind, (int)s->dtype, (int)s->pred);
  const size_t n = s->n, es = xpar__dtype_size(s->dtype);
  const int wide = (es == 8);
  const int is_float = (s->dtype == XPAR_FLOAT || s->dtype == XPAR_DOUBLE);
  const sel_kernels *kn;
  switch (s->kind) {
  case XPAR__SELECT_FLAGGED: kn = &sel_flagged[wide]; break;
  case XPAR__UNIQUE: kn = &sel_unique[2 * is_float + wide]; break;
  default: kn = &sel_table[s->dtype][s->pred]; break;
  }
#if defined(XPAR__CPU_SEL_AVX2)
  sel_kernels vk;
  if ((s->kind == XPAR__SELECT_IF || s->kind == XPAR__SELECT_FLAGGED) && sel_avx2_ok()) {
    vk = *kn;
    vk.compact = s->kind == XPAR__SELECT_FLAGGED ? sel_avx2_flagged[wide]
                                                 : sel_avx2_table[s->dtype][s->pred];
    kn = &vk;
  }
#endif
  sel_args a;
  a.in = s->in;
  a.flags = s->flags;
  a.value = s->value;
  a.hi = s->hi;

  size_t count = 0;
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (n == 0) {
    count = 0;
  } else if (s->kind == XPAR__PARTITION) {
    if (team <= 1) {
      count = kn->count(&a, 0, n);
      kn->partition(&a, 0, n, s->out, (unsigned char *)s->out + count * es);
    } else {
      count = sel_partition_parallel(kn, &a, es, s->out, n, xpar__cpu_region_size(ex), team);
    }
  } else if (team <= 1) {
    const size_t last = kn->rfind(&a, 0, n);
    count = last ? kn->compact(&a, 0, last, s->out, NULL) : 0;
  } else {
    const int region = xpar__cpu_region_size(ex);
    void *scratch;
    xpar_status st = xpar__host_scratch_get(
        ex->host_scratch, (size_t)region * (XPAR__CPU_SELECT_BLOCK_BYTES / es) * es, "select",
        &scratch);
    if (st != XPAR_OK) return st;
    count = sel_parallel(kn, &a, s->kind == XPAR__UNIQUE, es, s->out, n, region, team,
                         (unsigned char *)scratch);
  }
  *s->count = (uint64_t)count;
  return XPAR_OK;
}
