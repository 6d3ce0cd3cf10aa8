/*
 * CPU segmented reduce, segmented scan and argmin / argmax (xpar__seg_spec),
 * serial and OpenMP tiers.
 *
 * Serial tier (ex->serial): segment by segment, element order, the formulas of
 * the whole-array serial kernels (cpu_reduce.c, cpu_scan.c) applied to each
 * segment from the identity -- what cuda-serial reproduces bit for bit.
 *
 * OpenMP tier: the load is balanced by ELEMENTS, not by segments: the element
 * range [offsets[0], offsets[n_segments]) is cut into equal parts, one per
 * thread, whatever the segments' sizes (one huge segment among tiny ones is
 * spread over every thread).  A part finds its first segment by binary search
 * in the offsets, writes every segment that lies wholly inside it, and keeps
 * a partial for the (at most two) segments that cross its edges; the
 * partials are combined in part order after the parallel region.  A scan
 * first reduces each part's last segment piece, carries it in part order, then
 * scans each part from its carry.  Long pieces use the vectorised chunk
 * kernels of the whole-array reduce (cpu_reduce.c): float sums of a long
 * segment are then grouped as xpar_reduce groups them, not in element order.
 *
 * argmin / argmax are exact in any grouping (a comparison, the first index on
 * ties), so every tier gives the same value and index: the first NaN wins, as
 * in NumPy, else the first occurrence of the extreme.  The one-thread loop
 * finds each block's extreme with vectorisable lanes and looks for its first
 * index only in a block that improves on the best so far.
 *
 * Offsets are checked first (one pass over the n_segments + 1 offsets, before
 * anything is written): non-decreasing, offsets[0] >= 0, the last <= n.
 *
 * Reproducible mode (ex->reproducible, a float or double SUM reduce or scan):
 * each segment's sum (scan) is reproducible xpar_reduce(SUM) (xpar_scan) of
 * the segment's elements as an array of its own, computed by cpu_repro.c
 * itself: the same code, the same bits.  The serial tier sums segment by segment on one thread.  The OpenMP
 * tier gives each segment of fewer than XPAR__SEG_REPRO_BIG elements whole to
 * the part (an equal element range) where it starts, one thread each, and then
 * sums the larger ones one after another with the parallel reproducible reduce
 * (its bits do not depend on the thread count): no segment is split into
 * pieces of this file's own, so no split can change the bits.
 */
#include <math.h>

#include "cpu_internal.h"
#include "cpu_repro.h"

/* ---- offsets ---------------------------------------------------------------- */

static inline size_t seg_off(const xpar__seg_spec *s, size_t i) {
  if (!s->offsets) return i * s->segment_size;
  if (s->offset_dtype == XPAR_INT32) return (size_t)((const int32_t *)s->offsets)[i];
  return (size_t)((const int64_t *)s->offsets)[i];
}

static xpar_status check_offsets(const xpar__seg_spec *s) {
  if (!s->offsets) return XPAR_OK;
  const size_t m = s->n_segments;
  long long prev = 0;
  for (size_t i = 0; i <= m; i++) {
    const long long v = s->offset_dtype == XPAR_INT32
                            ? (long long)((const int32_t *)s->offsets)[i]
                            : (long long)((const int64_t *)s->offsets)[i];
    XPAR__RETURN_IF(i == 0 && v < 0, XPAR_ERR_INVALID_ARGUMENT,
                    "offsets[0] = %lld is negative; nothing written", v);
    XPAR__RETURN_IF(i > 0 && v < prev, XPAR_ERR_INVALID_ARGUMENT,
                    "offsets[%zu] = %lld is below offsets[%zu] = %lld: offsets must not "
                    "decrease; nothing written",
                    i, v, i - 1, prev);
    prev = v;
  }
  XPAR__RETURN_IF((unsigned long long)prev > (unsigned long long)s->n, XPAR_ERR_INVALID_ARGUMENT,
                  "offsets[%zu] = %lld is past the end of in (n = %zu); nothing written", m,
                  prev, s->n);
  return XPAR_OK;
}

/* The first segment s with offsets[s + 1] >= x (so: empty segments at x, and
 * the segment holding x or ending at x); n_segments when none. */
static size_t first_seg_reaching(const xpar__seg_spec *s, size_t x) {
  size_t lo = 0, hi = s->n_segments;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (seg_off(s, mid + 1) >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* ---- per-dtype kernels ------------------------------------------------------- */

/* A best-so-far of an argmin / argmax: the value's bits, its index; nan set
 * once a NaN was taken (it wins for good). */
typedef struct arg_best {
  xpar__scalar v;
  int64_t i;
  int nan;
} arg_best;

typedef struct seg_kernels {
  /* op over [a, b) in element order, from the identity */
  void (*strict)(const void *in, size_t a, size_t b, xpar__scalar *out);
  /* scan of [a, b) from *carry (element order); carry updated to the total */
  void (*scan)(const void *in, void *out, size_t a, size_t b, int exclusive,
               xpar__scalar *carry);
  /* acc = acc op x */
  void (*combine)(xpar__scalar *acc, const xpar__scalar *x);
  void (*identity)(xpar__scalar *out);
  /* argmin (is_max 0) / argmax of [a, b): the first extreme, the first NaN */
  void (*arg)(const void *in, size_t a, size_t b, int is_max, arg_best *out);
  /* a better than b for an ordered combine (a later): is a taken? */
  int (*arg_takes)(const arg_best *best, const arg_best *later, int is_max);
} seg_kernels;

/* v is a NaN (integers never: their arm returns 0 without comparing). */
static inline int seg_nan_f(float v) { return v != v; }
static inline int seg_nan_d(double v) { return v != v; }
static inline int seg_nan_none(double v) {
  (void)v;
  return 0;
}
#define XPAR__SEG_ISNAN_(ctype, v) \
  _Generic((ctype)0, float: seg_nan_f, double: seg_nan_d, default: seg_nan_none)(v)

#define XPAR__SEG_OP_KERNELS_(e, ctype, OP)                                                  \
  static void seg_strict_##OP##_##e(const void *in, size_t a, size_t b, xpar__scalar *out) {  \
    const ctype *x = (const ctype *)in;                                                      \
    ctype acc = xpar__cpu_id_##OP##_##e();                                                   \
    for (size_t i = a; i < b; ++i) acc = xpar__cpu_##OP##_##e(acc, x[i]);                    \
    memcpy(out->bytes, &acc, sizeof acc);                                                    \
  }                                                                                          \
  static void seg_scan_##OP##_##e(const void *in, void *outp, size_t a, size_t b,            \
                                  int exclusive, xpar__scalar *carry) {                      \
    const ctype *x = (const ctype *)in;                                                      \
    ctype *o = (ctype *)outp;                                                                \
    ctype acc;                                                                               \
    memcpy(&acc, carry->bytes, sizeof acc);                                                  \
    if (exclusive) {                                                                         \
      for (size_t i = a; i < b; ++i) {                                                       \
        const ctype v = x[i]; /* read before the write: in place */                          \
        o[i] = acc;                                                                          \
        acc = xpar__cpu_##OP##_##e(acc, v);                                                  \
      }                                                                                      \
    } else {                                                                                 \
      for (size_t i = a; i < b; ++i) {                                                       \
        acc = xpar__cpu_##OP##_##e(acc, x[i]);                                               \
        o[i] = acc;                                                                          \
      }                                                                                      \
    }                                                                                        \
    memcpy(carry->bytes, &acc, sizeof acc);                                                  \
  }                                                                                          \
  static void seg_combine_##OP##_##e(xpar__scalar *accp, const xpar__scalar *xp) {           \
    ctype acc, v;                                                                            \
    memcpy(&acc, accp->bytes, sizeof acc);                                                   \
    memcpy(&v, xp->bytes, sizeof v);                                                         \
    acc = xpar__cpu_##OP##_##e(acc, v);                                                      \
    memcpy(accp->bytes, &acc, sizeof acc);                                                   \
  }                                                                                          \
  static void seg_identity_##OP##_##e(xpar__scalar *out) {                                   \
    const ctype v = xpar__cpu_id_##OP##_##e();                                               \
    memset(out, 0, sizeof *out);                                                             \
    memcpy(out->bytes, &v, sizeof v);                                                        \
  }

/* The argmin / argmax of one dtype: blocks of ARG_BLOCK elements; each block's
 * extreme with XPAR__CPU_LANES lanes (vectorisable: a compare and a select per
 * element, a NaN count beside), then its first index only where the block
 * beats the best so far strictly, or holds a NaN (its first NaN ends the
 * search: nothing can beat it). */
#define XPAR__SEG_ARG_BLOCK 2048
#define XPAR__SEG_ARG_KERNELS_(e, ctype, name, size)                                         \
  XPAR__SEG_OP_KERNELS_(e, ctype, sum)                                                       \
  XPAR__SEG_OP_KERNELS_(e, ctype, min)                                                       \
  XPAR__SEG_OP_KERNELS_(e, ctype, max)                                                       \
  XPAR__CPU_SIMD_CLONES                                                                      \
  static void seg_arg_##e(const void *in, size_t a, size_t b, int is_max, arg_best *out) {   \
    const ctype *x = (const ctype *)in;                                                      \
    ctype best = x[a];                                                                       \
    size_t best_i = a;                                                                       \
    int nan = XPAR__SEG_ISNAN_(ctype, best);                                                 \
    for (size_t lo = a; lo < b && !nan; lo += XPAR__SEG_ARG_BLOCK) {                         \
      const size_t hi = b - lo > XPAR__SEG_ARG_BLOCK ? lo + XPAR__SEG_ARG_BLOCK : b;         \
      ctype lane[XPAR__CPU_LANES];                                                           \
      int nans[XPAR__CPU_LANES];                                                             \
      for (int q = 0; q < XPAR__CPU_LANES; ++q) {                                            \
        lane[q] = best;                                                                      \
        nans[q] = 0;                                                                         \
      }                                                                                      \
      size_t i = lo;                                                                         \
      if (is_max) {                                                                          \
        for (; i + XPAR__CPU_LANES <= hi; i += XPAR__CPU_LANES)                              \
          for (int q = 0; q < XPAR__CPU_LANES; ++q) {                                        \
            const ctype v = x[i + q];                                                        \
            lane[q] = v > lane[q] ? v : lane[q];                                             \
            nans[q] |= XPAR__SEG_ISNAN_(ctype, v);                                           \
          }                                                                                  \
      } else {                                                                               \
        for (; i + XPAR__CPU_LANES <= hi; i += XPAR__CPU_LANES)                              \
          for (int q = 0; q < XPAR__CPU_LANES; ++q) {                                        \
            const ctype v = x[i + q];                                                        \
            lane[q] = v < lane[q] ? v : lane[q];                                             \
            nans[q] |= XPAR__SEG_ISNAN_(ctype, v);                                           \
          }                                                                                  \
      }                                                                                      \
      ctype m = best;                                                                        \
      int any_nan = 0;                                                                       \
      for (int q = 0; q < XPAR__CPU_LANES; ++q) {                                            \
        m = is_max ? (lane[q] > m ? lane[q] : m) : (lane[q] < m ? lane[q] : m);              \
        any_nan |= nans[q];                                                                  \
      }                                                                                      \
      for (; i < hi; ++i) {                                                                  \
        const ctype v = x[i];                                                                \
        m = is_max ? (v > m ? v : m) : (v < m ? v : m);                                      \
        any_nan |= XPAR__SEG_ISNAN_(ctype, v);                                               \
      }                                                                                      \
      const int better = is_max ? m > best : m < best;                                       \
      if (!any_nan && !better) continue;                                                     \
      /* The block's first NaN, else the first element equal to its extreme m (which    \
       * beats the best so far; -0.0 == +0.0: the first zero, with its own sign): no     \
       * dependence from one element to the next, LANES compares at a time. */           \
      size_t j = lo;                                                                         \
      for (; j + XPAR__CPU_LANES <= hi; j += XPAR__CPU_LANES) {                              \
        int hit = 0;                                                                         \
        for (int q = 0; q < XPAR__CPU_LANES; ++q)                                            \
          hit |= any_nan ? XPAR__SEG_ISNAN_(ctype, x[j + q]) : x[j + q] == m;                \
        if (hit) break;                                                                      \
      }                                                                                      \
      while (!(any_nan ? XPAR__SEG_ISNAN_(ctype, x[j]) : x[j] == m)) ++j;                    \
      best = x[j];                                                                           \
      best_i = j;                                                                            \
      nan = any_nan;                                                                         \
    }                                                                                        \
    memset(&out->v, 0, sizeof out->v);                                                       \
    memcpy(out->v.bytes, &best, sizeof best);                                                \
    out->i = (int64_t)best_i;                                                                \
    out->nan = nan;                                                                          \
  }                                                                                          \
  static int seg_arg_takes_##e(const arg_best *best, const arg_best *later, int is_max) {    \
    if (best->nan) return 0;                                                                 \
    if (later->nan) return 1;                                                                \
    ctype a, b;                                                                              \
    memcpy(&a, best->v.bytes, sizeof a);                                                     \
    memcpy(&b, later->v.bytes, sizeof b);                                                    \
    return is_max ? b > a : b < a;                                                           \
  }
XPAR_DTYPE_MAP(XPAR__SEG_ARG_KERNELS_)
#undef XPAR__SEG_ARG_KERNELS_
#undef XPAR__SEG_OP_KERNELS_

#define XPAR__SEG_ROW_(e, OP)                                                         \
  {seg_strict_##OP##_##e, seg_scan_##OP##_##e, seg_combine_##OP##_##e,               \
   seg_identity_##OP##_##e, seg_arg_##e, seg_arg_takes_##e}
#define XPAR__SEG_ROWS_(e, ctype, name, size) \
  [XPAR_##e] = {XPAR__SEG_ROW_(e, sum), XPAR__SEG_ROW_(e, min), XPAR__SEG_ROW_(e, max)},
static const seg_kernels seg_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__SEG_ROWS_)};
#undef XPAR__SEG_ROWS_
#undef XPAR__SEG_ROW_

/* ---- runs of whole segments, typed ------------------------------------------------
 * Segments [g0, g1) that one thread owns whole: the reduce writes out[g], the scan
 * scans each from the identity.  Typed per dtype, op and offset form, so that a run of
 * tiny segments (all of size 1, 16...) costs a loop, not a call per segment.  `chunk`
 * (the OpenMP tier's vectorised whole-array kernel) takes segments of
 * XPAR__SEG_VECTOR_MIN elements or more; NULL keeps element order (serial tier). */
typedef void (*seg_reduce_run_fn)(const void *in, const void *offs, size_t size, size_t g0,
                                  size_t g1, void *out, xpar__cpu_chunk_reduce_fn chunk);
typedef void (*seg_scan_run_fn)(const void *in, const void *offs, size_t size, size_t g0,
                                size_t g1, void *out, int exclusive);
#define XPAR__SEG_VECTOR_MIN 256
/* Segments of at most this many elements take a fixed-length, branch-free path. */
#define XPAR__SEG_TINY 4

/* keep ? v : other, by bit masks: a compiler turns a plain select into a branch on the
 * length, which random short segments mispredict; the empty asm hides the mask's
 * origin so that it stays a mask. */
static inline uint64_t seg_pick_bits(int keep, uint64_t v, uint64_t other) {
  uint64_t m = -(uint64_t)(keep != 0);
  __asm__("" : "+r"(m));
  return (v & m) | (other & ~m);
}
#define XPAR__SEG_PICK_(ctype, keep, v, other)                                     \
  __extension__({                                                                  \
    const ctype pv_ = (v), po_ = (other);                                          \
    uint64_t bv_ = 0, bo_ = 0;                                                     \
    memcpy(&bv_, &pv_, sizeof(ctype));                                             \
    memcpy(&bo_, &po_, sizeof(ctype));                                             \
    const uint64_t br_ = seg_pick_bits((keep), bv_, bo_);                          \
    ctype pr_;                                                                     \
    memcpy(&pr_, &br_, sizeof(ctype));                                             \
    pr_;                                                                           \
  })

/* Whether the run's segments vary in length (among its first 64): only then does the
 * tiny path pay -- equal lengths are branches the processor predicts. */
#define XPAR__SEG_MIXED_(OT)                                                         \
  __extension__({                                                                  \
    int mx_ = 0;                                                                   \
    const size_t l0_ = XPAR__SEG_OFF_##OT(g0 + 1 < g1 ? g0 + 1 : g1) - XPAR__SEG_OFF_##OT(g0); \
    for (size_t k_ = g0 + 1; k_ < g1 && k_ < g0 + 64 && !mx_; ++k_)                \
      mx_ = XPAR__SEG_OFF_##OT(k_ + 1) - XPAR__SEG_OFF_##OT(k_) != l0_;            \
    mx_;                                                                           \
  })
#define XPAR__SEG_OFF_fixed(i) ((i) * size)
#define XPAR__SEG_OFF_i32(i) ((size_t)((const int32_t *)offs)[i])
#define XPAR__SEG_OFF_i64(i) ((size_t)((const int64_t *)offs)[i])

#define XPAR__SEG_RUNS_(e, ctype, OP, OT)                                                   \
  static void seg_rrun_##OP##_##e##_##OT(const void *in, const void *offs, size_t size,     \
                                         size_t g0, size_t g1, void *outp,                  \
                                         xpar__cpu_chunk_reduce_fn chunk) {                 \
    (void)offs, (void)size;                                                                 \
    const ctype *x = (const ctype *)in;                                                     \
    ctype *out = (ctype *)outp;                                                             \
    size_t so = XPAR__SEG_OFF_##OT(g0);                                                     \
    const size_t end = XPAR__SEG_OFF_##OT(g1); /* the run's elements end here */           \
    const int mixed = XPAR__SEG_MIXED_(OT);                                                 \
    for (size_t g = g0; g < g1; ++g) {                                                      \
      const size_t eo = XPAR__SEG_OFF_##OT(g + 1);                                          \
      if (chunk && eo - so >= XPAR__SEG_VECTOR_MIN) {                                       \
        xpar__scalar v;                                                                     \
        chunk(in, NULL, so, eo, &v);                                                        \
        memcpy(&out[g], v.bytes, sizeof(ctype));                                            \
      } else if (mixed && eo - so <= XPAR__SEG_TINY && so + XPAR__SEG_TINY <= end) {      \
        /* tiny, away from the run's end: XPAR__SEG_TINY loads, the elements past the     \
         * segment replaced by the identity -- no branch on the length, which random      \
         * short segments mispredict (the identity changes no bits: 0 + x, min(x, max)) */ \
        const ctype id = xpar__cpu_id_##OP##_##e();                                         \
        ctype acc = id;                                                                     \
        for (size_t k = 0; k < XPAR__SEG_TINY; ++k) {                                       \
          const ctype v = x[so + k];                                                        \
          acc = xpar__cpu_##OP##_##e(acc, XPAR__SEG_PICK_(ctype, k < eo - so, v, id));      \
        }                                                                                   \
        out[g] = acc;                                                                       \
      } else if (eo - so <= 3) { /* tiny, equal lengths: no loop set up, branches that the \
                                  * processor predicts */                                 \
        ctype acc = xpar__cpu_id_##OP##_##e();                                              \
        if (eo > so) acc = xpar__cpu_##OP##_##e(acc, x[so]);                                \
        if (eo > so + 1) acc = xpar__cpu_##OP##_##e(acc, x[so + 1]);                        \
        if (eo > so + 2) acc = xpar__cpu_##OP##_##e(acc, x[so + 2]);                        \
        out[g] = acc;                                                                       \
      } else {                                                                              \
        ctype acc = xpar__cpu_id_##OP##_##e();                                              \
        for (size_t i = so; i < eo; ++i) acc = xpar__cpu_##OP##_##e(acc, x[i]);             \
        out[g] = acc;                                                                       \
      }                                                                                     \
      so = eo;                                                                              \
    }                                                                                       \
  }                                                                                         \
  static void seg_srun_##OP##_##e##_##OT(const void *in, const void *offs, size_t size,     \
                                         size_t g0, size_t g1, void *outp, int exclusive) { \
    (void)offs, (void)size;                                                                 \
    const ctype *x = (const ctype *)in;                                                     \
    ctype *out = (ctype *)outp;                                                             \
    size_t so = XPAR__SEG_OFF_##OT(g0);                                                     \
    const size_t end = XPAR__SEG_OFF_##OT(g1); /* the run's elements end here */           \
    const int mixed = XPAR__SEG_MIXED_(OT);                                                 \
    for (size_t g = g0; g < g1; ++g) {                                                      \
      const size_t eo = XPAR__SEG_OFF_##OT(g + 1);                                          \
      ctype acc = xpar__cpu_id_##OP##_##e();                                                \
      if (mixed && eo - so <= XPAR__SEG_TINY && so + XPAR__SEG_TINY <= end) {              \
        /* tiny, away from the run's end: every load first, then XPAR__SEG_TINY stores, \
         * those past the segment storing back what they read (in place: the next       \
         * segments' inputs unchanged; else a place the next segments of this run       \
         * write again) -- no branch on the length */                                   \
        ctype v[XPAR__SEG_TINY];                                                            \
        for (size_t k = 0; k < XPAR__SEG_TINY; ++k) v[k] = x[so + k];                       \
        for (size_t k = 0; k < XPAR__SEG_TINY; ++k) {                                       \
          const ctype nx = xpar__cpu_##OP##_##e(acc, v[k]);                                 \
          const ctype r = exclusive ? acc : nx;                                             \
          out[so + k] = XPAR__SEG_PICK_(ctype, k < eo - so, r, v[k]);                       \
          acc = nx;                                                                         \
        }                                                                                   \
      } else if (eo - so == 1) { /* a one-element segment: no loop set up */               \
        out[so] = exclusive ? acc : xpar__cpu_##OP##_##e(acc, x[so]);                       \
      } else if (exclusive) {                                                               \
        for (size_t i = so; i < eo; ++i) {                                                  \
          const ctype v = x[i];                                                             \
          out[i] = acc;                                                                     \
          acc = xpar__cpu_##OP##_##e(acc, v);                                               \
        }                                                                                   \
      } else {                                                                              \
        for (size_t i = so; i < eo; ++i) {                                                  \
          acc = xpar__cpu_##OP##_##e(acc, x[i]);                                            \
          out[i] = acc;                                                                     \
        }                                                                                   \
      }                                                                                     \
      so = eo;                                                                              \
    }                                                                                       \
  }
#define XPAR__SEG_RUNS_ALL_(e, ctype, name, size_)                                          \
  XPAR__SEG_RUNS_(e, ctype, sum, fixed) XPAR__SEG_RUNS_(e, ctype, sum, i32)                \
  XPAR__SEG_RUNS_(e, ctype, sum, i64) XPAR__SEG_RUNS_(e, ctype, min, fixed)                \
  XPAR__SEG_RUNS_(e, ctype, min, i32) XPAR__SEG_RUNS_(e, ctype, min, i64)                  \
  XPAR__SEG_RUNS_(e, ctype, max, fixed) XPAR__SEG_RUNS_(e, ctype, max, i32)                \
  XPAR__SEG_RUNS_(e, ctype, max, i64)
XPAR_DTYPE_MAP(XPAR__SEG_RUNS_ALL_)
#undef XPAR__SEG_RUNS_ALL_
#undef XPAR__SEG_RUNS_

/* [dtype][op][form: fixed, int32, int64] */
#define XPAR__SEG_RUN_ROW_(e, OP, K) \
  {seg_##K##run_##OP##_##e##_fixed, seg_##K##run_##OP##_##e##_i32, seg_##K##run_##OP##_##e##_i64}
#define XPAR__SEG_RUN_ROWS_(e, ctype, name, size) \
  [XPAR_##e] = {XPAR__SEG_RUN_ROW_(e, sum, r), XPAR__SEG_RUN_ROW_(e, min, r), XPAR__SEG_RUN_ROW_(e, max, r)},
static const seg_reduce_run_fn seg_rrun_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_][3] = {
    XPAR_DTYPE_MAP(XPAR__SEG_RUN_ROWS_)};
#undef XPAR__SEG_RUN_ROWS_
#define XPAR__SEG_RUN_ROWS_(e, ctype, name, size) \
  [XPAR_##e] = {XPAR__SEG_RUN_ROW_(e, sum, s), XPAR__SEG_RUN_ROW_(e, min, s), XPAR__SEG_RUN_ROW_(e, max, s)},
static const seg_scan_run_fn seg_srun_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_][3] = {
    XPAR_DTYPE_MAP(XPAR__SEG_RUN_ROWS_)};
#undef XPAR__SEG_RUN_ROWS_
#undef XPAR__SEG_RUN_ROW_
#undef XPAR__SEG_MIXED_
#undef XPAR__SEG_PICK_
#undef XPAR__SEG_OFF_fixed
#undef XPAR__SEG_OFF_i32
#undef XPAR__SEG_OFF_i64

static int seg_form(const xpar__seg_spec *s) {
  return !s->offsets ? 0 : s->offset_dtype == XPAR_INT32 ? 1 : 2;
}

/* The first segment g with offsets[g] >= x; n_segments when none. */
static size_t first_seg_starting(const xpar__seg_spec *s, size_t x) {
  size_t lo = 0, hi = s->n_segments;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (seg_off(s, mid) >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* ---- one piece of a segment --------------------------------------------------- */


typedef struct seg_ctx {
  const xpar__seg_spec *s;
  const seg_kernels *k;
  xpar__cpu_chunk_reduce_fn chunk; /* NULL: strict loops only (serial tier) */
  size_t elem;
  int is_max;
} seg_ctx;

/* The value of a piece [a, b) of one segment (reduce: op; argreduce: the best). */
typedef struct piece {
  xpar__scalar v;
  arg_best arg;
  int empty;
} piece;

static void piece_of(const seg_ctx *c, size_t a, size_t b, piece *p) {
  p->empty = a >= b;
  if (c->s->kind == XPAR__SEG_ARGREDUCE) {
    if (!p->empty) c->k->arg(c->s->in, a, b, c->is_max, &p->arg);
    return;
  }
  if (p->empty)
    c->k->identity(&p->v);
  else if (c->chunk && b - a >= XPAR__SEG_VECTOR_MIN)
    c->chunk(c->s->in, NULL, a, b, &p->v);
  else
    c->k->strict(c->s->in, a, b, &p->v);
}

/* acc (earlier pieces) then p (a later piece of the same segment). */
static void piece_fold(const seg_ctx *c, piece *acc, const piece *p) {
  if (p->empty) return;
  if (acc->empty) {
    *acc = *p;
    return;
  }
  if (c->s->kind == XPAR__SEG_ARGREDUCE) {
    if (c->k->arg_takes(&acc->arg, &p->arg, c->is_max)) acc->arg = p->arg;
  } else {
    c->k->combine(&acc->v, &p->v);
  }
}

/* Write segment seg's result.  An empty argreduce segment: the identity of
 * min / max and index -1 (docs/segmented.md). */
static void piece_write(const seg_ctx *c, size_t seg, const piece *p) {
  unsigned char *out = (unsigned char *)c->s->out + seg * c->elem;
  if (c->s->kind == XPAR__SEG_ARGREDUCE) {
    if (p->empty) {
      xpar__scalar id;
      seg_table[c->s->dtype][c->is_max ? XPAR_MAX : XPAR_MIN].identity(&id);
      memcpy(out, id.bytes, c->elem);
      c->s->index[seg] = -1;
    } else {
      memcpy(out, p->arg.v.bytes, c->elem);
      c->s->index[seg] = p->arg.i;
    }
    return;
  }
  memcpy(out, p->v.bytes, c->elem);
}

/* ---- reduce and argreduce ------------------------------------------------------- */

typedef struct seg_record {
  size_t seg;
  piece p;
} seg_record;

/* Part [lo, hi) of the elements (last: the part that also owns the empty
 * segments at the end): writes the segments wholly inside it, records the
 * pieces of those crossing its edges (at most two) in rec; returns how many. */
static int reduce_part(const seg_ctx *c, size_t lo, size_t hi, int last, seg_record rec[2]) {
  const xpar__seg_spec *s = c->s;
  int nrec = 0;
  for (size_t g = first_seg_reaching(s, lo); g < s->n_segments; ++g) {
    const size_t so = seg_off(s, g), eo = seg_off(s, g + 1);
    if (!(so < hi || (last && so <= hi))) break;
    if (so < lo && eo <= lo) continue; /* ended at lo: the part before owns it */
    if (so >= lo && eo <= hi && s->kind == XPAR__SEG_REDUCE) {
      /* a run of whole segments: up to the first that ends past hi or, but in the
       * last part, starts at hi (the next part owns the empty ones there) */
      size_t stop = last ? s->n_segments : first_seg_starting(s, hi);
      const size_t past = first_seg_reaching(s, hi + 1);
      if (past < stop) stop = past;
      if (stop > g) {
        seg_rrun_table[s->dtype][s->op][seg_form(s)](s->in, s->offsets, s->segment_size, g,
                                                     stop, s->out, c->chunk);
        g = stop - 1;
        continue;
      }
    }
    const size_t a = so > lo ? so : lo, b = eo < hi ? eo : hi;
    piece p;
    piece_of(c, a, b, &p);
    if (so >= lo && eo <= hi) {
      piece_write(c, g, &p);
    } else {
      rec[nrec].seg = g;
      rec[nrec].p = p;
      nrec++;
    }
  }
  return nrec;
}

static void reduce_serial(const seg_ctx *c) {
  const xpar__seg_spec *s = c->s;
  if (s->kind == XPAR__SEG_REDUCE) {
    seg_rrun_table[s->dtype][s->op][seg_form(s)](s->in, s->offsets, s->segment_size, 0,
                                                 s->n_segments, s->out, c->chunk);
    return;
  }
  for (size_t g = 0; g < s->n_segments; ++g) {
    piece p;
    piece_of(c, seg_off(s, g), seg_off(s, g + 1), &p);
    piece_write(c, g, &p);
  }
}

static xpar_status reduce_run(const xpar__exec *ex, const seg_ctx *c) {
  const xpar__seg_spec *s = c->s;
  const size_t begin = seg_off(s, 0), end = seg_off(s, s->n_segments);
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, end - begin);
  if (team <= 1) {
    reduce_serial(c);
    return XPAR_OK;
  }
  seg_record rec[XPAR__CPU_MAX_THREADS][2];
  int nrec[XPAR__CPU_MAX_THREADS];
  int used = 1;
  XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
  {
    const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    if (id < parts) {
      size_t lo, hi;
      xpar__cpu_split(begin, end, id, parts, &lo, &hi);
      nrec[id] = reduce_part(c, lo, hi, id == parts - 1, rec[id]);
    }
    if (id == 0) used = parts;
  }
  /* The crossing segments, their pieces in part order. */
  int open = 0;
  seg_record acc;
  for (int t = 0; t < used; ++t)
    for (int r = 0; r < nrec[t]; ++r) {
      const seg_record *x = &rec[t][r];
      if (open && x->seg == acc.seg) {
        piece_fold(c, &acc.p, &x->p);
        continue;
      }
      if (open) piece_write(c, acc.seg, &acc.p);
      acc = *x;
      open = 1;
    }
  if (open) piece_write(c, acc.seg, &acc.p);
  return XPAR_OK;
}

/* ---- scan -------------------------------------------------------------------------- */

/* Scan the segments' pieces inside [lo, hi); the segment holding lo starts from
 * *carry when it began before lo. */
static void scan_part(const seg_ctx *c, size_t lo, size_t hi, const xpar__scalar *carry) {
  const xpar__seg_spec *s = c->s;
  const int exclusive = s->scan_kind == XPAR_EXCLUSIVE;
  for (size_t g = first_seg_reaching(s, lo); g < s->n_segments; ++g) {
    const size_t so = seg_off(s, g), eo = seg_off(s, g + 1);
    if (so >= hi) break;
    if (eo <= lo) continue;
    if (so >= lo && eo <= hi) { /* a run of whole segments, up to the first ending past hi */
      const size_t stop = first_seg_reaching(s, hi + 1);
      seg_srun_table[s->dtype][s->op][seg_form(s)](s->in, s->offsets, s->segment_size, g, stop,
                                                   s->out, exclusive);
      g = stop - 1;
      continue;
    }
    const size_t a = so > lo ? so : lo, b = eo < hi ? eo : hi;
    xpar__scalar acc;
    if (so < lo)
      acc = *carry;
    else
      c->k->identity(&acc);
    c->k->scan(s->in, s->out, a, b, exclusive, &acc);
  }
}

/* The reduction of the last segment piece of [lo, hi) (lo < hi), and that
 * segment. */
static void scan_tail(const seg_ctx *c, size_t lo, size_t hi, size_t *seg, xpar__scalar *v) {
  const xpar__seg_spec *s = c->s;
  size_t g = first_seg_reaching(s, hi); /* the segment holding hi - 1 ends at or after hi */
  while (seg_off(s, g + 1) < hi || seg_off(s, g) >= hi) ++g; /* skip empties at hi */
  const size_t so = seg_off(s, g);
  const size_t a = so > lo ? so : lo;
  *seg = g;
  piece p;
  piece_of(c, a, hi, &p);
  *v = p.v;
}

static xpar_status scan_run(const xpar__exec *ex, const seg_ctx *c) {
  const xpar__seg_spec *s = c->s;
  const size_t begin = seg_off(s, 0), end = seg_off(s, s->n_segments);
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, end - begin);
  if (team <= 1) {
    xpar__scalar id;
    c->k->identity(&id);
    scan_part(c, begin, end, &id);
    return XPAR_OK;
  }
  size_t tail_seg[XPAR__CPU_MAX_THREADS];
  xpar__cpu_partial tail[XPAR__CPU_MAX_THREADS], carry[XPAR__CPU_MAX_THREADS];
  XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
  {
    const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    size_t lo = 0, hi = 0;
    if (id < parts) {
      xpar__cpu_split(begin, end, id, parts, &lo, &hi);
      if (lo < hi) scan_tail(c, lo, hi, &tail_seg[id], &tail[id].v);
    }
    XPAR__CPU_PRAGMA(omp barrier)
    XPAR__CPU_PRAGMA(omp single)
    {
      /* carry[p]: the segment holding lo_p, over the elements before lo_p */
      c->k->identity(&carry[0].v);
      for (int p = 1; p < parts; ++p) {
        size_t plo, phi, qlo, qhi;
        xpar__cpu_split(begin, end, p - 1, parts, &qlo, &qhi);
        xpar__cpu_split(begin, end, p, parts, &plo, &phi);
        c->k->identity(&carry[p].v);
        if (qlo >= qhi || plo >= phi) continue;
        const size_t g = tail_seg[p - 1];
        if (seg_off(c->s, g + 1) <= plo) continue; /* it ended at the edge */
        if (seg_off(c->s, g) < qlo) carry[p].v = carry[p - 1].v; /* it began before */
        c->k->combine(&carry[p].v, &tail[p - 1].v);
      }
    }
    if (id < parts && lo < hi) scan_part(c, lo, hi, &carry[id].v);
  }
  return XPAR_OK;
}

/* ---- reproducible mode ---------------------------------------------------------------- */

/* Segments of at least this many elements are summed by the parallel reproducible
 * reduce, one after another; shorter ones whole on one thread each. */
#define XPAR__SEG_REPRO_BIG ((size_t)1 << 16)

static const xpar__exec seg_repro_one_thread = {.serial = 1, .num_threads = 1, .reproducible = 1};

/* Segment g's reproducible sum into out[g] (an empty segment: +0), or its
 * reproducible scan into out[lo, hi) (an empty segment: nothing). */
static void repro_segment(const xpar__exec *ex, const xpar__seg_spec *s, size_t g) {
  const size_t es = xpar__dtype_size(s->dtype);
  const size_t lo = seg_off(s, g), hi = seg_off(s, g + 1);
  if (s->kind == XPAR__SEG_SCAN) {
    (void)xpar__cpu_repro_scan(ex, s->dtype, s->scan_kind, NULL, (const char *)s->in + lo * es,
                               (char *)s->out + lo * es, hi - lo);
    return;
  }
  (void)xpar__cpu_repro_reduce(ex, XPAR__REPRO_SUM, s->dtype, (const char *)s->in + lo * es,
                               NULL, hi - lo, (char *)s->out + g * es);
}

static xpar_status repro_run(const xpar__exec *ex, const xpar__seg_spec *s) {
  const size_t begin = seg_off(s, 0), end = seg_off(s, s->n_segments);
  const int team = ex->serial ? 1 : xpar__cpu_team_size(ex, end - begin);
  if (team <= 1) {
    for (size_t g = 0; g < s->n_segments; ++g) repro_segment(&seg_repro_one_thread, s, g);
    return XPAR_OK;
  }
  /* part p owns the segments starting in [lo_p, hi_p) (the last: from lo_p on) */
  size_t first[XPAR__CPU_MAX_THREADS], stop[XPAR__CPU_MAX_THREADS];
  int big[XPAR__CPU_MAX_THREADS];
  int used = 1;
  XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
  {
    const int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
    if (id < parts) {
      size_t lo, hi;
      xpar__cpu_split(begin, end, id, parts, &lo, &hi);
      const size_t g0 = id == 0 ? 0 : first_seg_starting(s, lo);
      const size_t g1 = id == parts - 1 ? s->n_segments : first_seg_starting(s, hi);
      first[id] = g0;
      stop[id] = g1;
      big[id] = 0;
      for (size_t g = g0; g < g1; ++g) {
        if (seg_off(s, g + 1) - seg_off(s, g) >= XPAR__SEG_REPRO_BIG)
          big[id] = 1;
        else
          repro_segment(&seg_repro_one_thread, s, g);
      }
    }
    if (id == 0) used = parts;
  }
  for (int p = 0; p < used; ++p) {
    if (!big[p]) continue;
    for (size_t g = first[p]; g < stop[p]; ++g)
      if (seg_off(s, g + 1) - seg_off(s, g) >= XPAR__SEG_REPRO_BIG) repro_segment(ex, s, g);
  }
  return XPAR_OK;
}

/* ---- the entry point ------------------------------------------------------------------ */

xpar_status xpar__cpu_segmented(const xpar__exec *ex, const xpar__seg_spec *s) {
  XPAR__RETURN_IF(!xpar__dtype_valid(s->dtype) || (unsigned)s->op >= XPAR_REDUCTION_COUNT_,
                  XPAR_ERR_INTERNAL, "cpu segmented: bad dtype %d or op %d", (int)s->dtype,
                  (int)s->op);
  if (s->n_segments == 0) return XPAR_OK;
  XPAR__FORWARD(check_offsets(s));
  if (ex->reproducible && s->kind != XPAR__SEG_ARGREDUCE && s->op == XPAR_SUM &&
      (s->dtype == XPAR_FLOAT || s->dtype == XPAR_DOUBLE))
    return repro_run(ex, s);
  seg_ctx c = {.s = s,
               .k = &seg_table[s->dtype][s->op],
               .chunk = NULL,
               .elem = xpar__dtype_size(s->dtype),
               .is_max = s->op == XPAR_MAX};
  if (!ex->serial && s->kind == XPAR__SEG_REDUCE) {
    xpar__cpu_combine_fn unused;
    xpar__cpu_reduce_kernels(s->dtype, s->op, &c.chunk, &unused);
  }
  if (s->kind == XPAR__SEG_SCAN) return scan_run(ex, &c);
  return reduce_run(ex, &c);
}
