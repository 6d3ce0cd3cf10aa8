/*
 * CPU reduce (sum / min / max) and reduce_sum_wide, serial and OpenMP tiers,
 * the parallel-reduce driver, and dot (a reduction of products).
 *
 * Serial tier: one accumulator, element order, the exact formulas that the
 * GPU's cuda-serial mode reproduces bit for bit:
 *   sum  acc = 0;        acc = acc + x[i]
 *   min  acc = identity; acc = (x[i] < acc) ? x[i] : acc
 *   max  acc = identity; acc = (x[i] > acc) ? x[i] : acc
 *   wide (float) acc = 0.0; acc = acc + (double)x[i]
 *
 * OpenMP tier: each thread reduces one contiguous chunk into
 * XPAR__CPU_LANES independent accumulators (lane j takes elements j, j + L,
 * ... of the chunk; the compiler turns the lanes into vector registers
 * without being allowed to reassociate anything), folds its lanes in lane
 * order, and the thread partials are combined in thread order.  One DRAM read
 * of the input, no atomics, no locks.
 */
#include "cpu_internal.h"

/* ---- the parallel driver ------------------------------------------------ */

void xpar__cpu_parallel_reduce(const xpar__exec *ex, const void *a, const void *b, size_t n,
                               xpar__cpu_chunk_reduce_fn chunk, xpar__cpu_combine_fn combine,
                               void *result, size_t result_size) {
  xpar__cpu_partial part[XPAR__CPU_MAX_THREADS];
  int team = xpar__cpu_team_size(ex, n);
  int used = 1;
  if (team <= 1) {
    chunk(a, b, 0, n, &part[0].v);
  } else {
    XPAR__CPU_PRAGMA(omp parallel num_threads(xpar__cpu_region_size(ex)))
    {
      int id = xpar__cpu_thread_num(), parts = xpar__cpu_parts_in_region(team);
      if (id < parts) { /* the rest of the region has no work (see xpar__cpu_region_size) */
        size_t lo, hi;
        xpar__cpu_split(0, n, id, parts, &lo, &hi);
        chunk(a, b, lo, hi, &part[id].v);
      }
      if (id == 0) used = parts;
    }
  }
  xpar__scalar acc = part[0].v;
  for (int t = 1; t < used; ++t) combine(&acc, &part[t].v);
  /* A constant-size copy compiles to one move; memcpy(result_size) would be
   * a library call on every small reduce. */
  if (result_size == 4)
    memcpy(result, &acc, 4);
  else
    memcpy(result, &acc, 8);
}

/* ---- per-dtype kernels --------------------------------------------------- */

/* Integer reductions are exact in any grouping, so their vector loops start
 * at a 32-byte boundary of x (XPAR__CPU_TO_32B_BOUNDARY), the elements before
 * it folded in apart (on the H100 host the one-thread int32 sum and dot took
 * 0.62-0.80x the time on page-aligned arrays that they took on malloc's
 * before).  Floats keep their lane order, which the address must not change:
 * for them the head is empty (a compile-time constant condition). */
#define XPAR__CPU_INT_HEAD_(ctype, i, hi, x, STEP) \
  if (!XPAR__CPU_IS_FLOAT(ctype)) XPAR__CPU_TO_32B_BOUNDARY(i, hi, x, STEP)

/* The dot's chunk loop reads two arrays 64 bytes a step each: from a 32-byte
 * boundary every step touches two cache lines of each, and on malloc'd arrays
 * (16 bytes past a boundary) the one-thread int32 dot ran 6-7 % slower than
 * from a line boundary at 2^13..2^15 (regret runs on the H100 host,
 * 2026-11-26: 5.5-7.5 %; development VM 7 %).  So
 * long chunks start at a line; short ones keep the 32-byte head (up to 15
 * scalar steps instead of 7 cost ~3 ns, more than a 2^10 call gains). */
#define XPAR__CPU_DOT_LINE_MIN 2048
#define XPAR__CPU_INT_DOT_HEAD_(ctype, i, hi, x, STEP)                                \
  if (!XPAR__CPU_IS_FLOAT(ctype)) {                                                   \
    const uintptr_t head_mask_ = (hi) - (i) >= XPAR__CPU_DOT_LINE_MIN ? 63 : 31;      \
    XPAR__CPU_TO_BOUNDARY(i, hi, x, head_mask_, STEP);                                \
  }

/* Floats keep their lanes (lane j: elements lo + j, lo + j + L, ... of the chunk, each
 * lane in element order), but malloc's arrays start 16 bytes past a 32-byte boundary
 * (mmap'd chunks: 16 past a page), where every other 32-byte load of the lane loop
 * splits a cache line: on the development VM the one-thread double sum and dot took
 * 1.6-1.7x, the float sum 1.4x, the time they take from a 64-byte boundary at 2^14-2^16,
 * and on the H100 host the pageable arrays' one-thread double sum and float dot 1.5-1.75x
 * the pinned (page-aligned) ones' (2026-11-26).  So a float chunk of at
 * least MIN_BYTES per array (below) that starts o elements past a 64-byte boundary
 * runs its lane loop from that boundary with the lanes rotated: rot[q] is lane
 * (q - o) mod L; the first block gives its elements from q = o on, the last whole
 * block's leftover (q < o) closes the lanes, and lane j is rot[(j + o) mod L] -- every
 * lane sums the same elements in the same order as from a boundary, then the lanes fold
 * in lane order and the tail follows, so the result's bits do not depend on the address
 * (tests/test_reduce.c: the address test).  A function of its own, NAME(x, y, lo, hi),
 * that returns the chunk's value: the rotation inside the chunk kernel kept its lanes out
 * of registers (the float sum of 2^11 took 101 ns instead of 66 on the VM, on aligned
 * arrays too).  The up to 2 x 15 scalar steps around the loop and the lane fold from
 * memory cost ~35 ns (the VM), so a chunk rotates from MIN_BYTES of each array on:
 * 64 KiB for a sum, min or max (the float sum from a 16-byte boundary: 131 -> 167 ns at
 * 2^12, 257 -> 295 at 2^13, 716 -> 560 at 2^14; the double sum 201 -> 209 at 2^12, 720
 * -> 448 at 2^13), 16 KiB for a dot (two arrays split: float 230 -> 195 ns at 2^12, 788
 * -> 485 at 2^13), never for the float wide sum (its float -> double conversions, not
 * its loads, bound it: 1443 -> 1358 ns at 2^14, a loss below).  STEP(acc, k, A, B) folds
 * element k into acc, COMBINE(acc, v, A) one lane's value. */
#define XPAR__CPU_ROTATE_SUM_BYTES 65536
#define XPAR__CPU_ROTATE_DOT_BYTES 16384
#define XPAR__CPU_ROTATES_(ctype, x, lo, hi, MIN_BYTES)                                    \
  (XPAR__CPU_IS_FLOAT(ctype) && ((hi) - (lo)) * sizeof(ctype) >= (MIN_BYTES) &&           \
   ((uintptr_t)((x) + (lo)) & 63u) != 0)
#define XPAR__CPU_ROTATED_CHUNK_(NAME, ctype, acctype, IDENTITY, STEP, COMBINE, A, B)       \
  static acctype NAME(const ctype *x, const ctype *y, size_t i, size_t hi) {               \
    (void)y;                                                                               \
    const size_t o_ = ((uintptr_t)(x + i) & 63u) / sizeof(ctype);                          \
    acctype rot_[XPAR__CPU_LANES];                                                         \
    for (int q_ = 0; q_ < XPAR__CPU_LANES; ++q_) rot_[q_] = IDENTITY;                      \
    const size_t blocks_ = (hi - i) / XPAR__CPU_LANES;                                     \
    for (size_t q_ = o_; q_ < XPAR__CPU_LANES; ++q_) STEP(rot_[q_], i + (q_ - o_), A, B);  \
    for (size_t at_ = i + XPAR__CPU_LANES - o_; at_ + XPAR__CPU_LANES <= i + blocks_ * XPAR__CPU_LANES; \
         at_ += XPAR__CPU_LANES)                                                           \
      for (int q_ = 0; q_ < XPAR__CPU_LANES; ++q_) STEP(rot_[q_], at_ + q_, A, B);         \
    for (size_t q_ = 0; q_ < o_; ++q_) STEP(rot_[q_], i + blocks_ * XPAR__CPU_LANES - o_ + q_, A, B); \
    acctype acc = rot_[o_];                                                                \
    for (size_t j_ = 1; j_ < XPAR__CPU_LANES; ++j_)                                        \
      acc = COMBINE(acc, rot_[(j_ + o_) % XPAR__CPU_LANES], A);                            \
    for (i += blocks_ * XPAR__CPU_LANES; i < hi; ++i) STEP(acc, i, A, B);                  \
    return acc;                                                                            \
  }
/* The steps: x[k] folded with FOLD; x[k] * y[k] (MUL) added with FOLD; x[k] as double;
 * and the lane folds: with FOLD, or +. */
#define XPAR__CPU_STEP_X_(acc, k, FOLD, unused) acc = FOLD(acc, x[k])
#define XPAR__CPU_STEP_XY_(acc, k, FOLD, MUL) acc = FOLD(acc, MUL(x[k], y[k]))
#define XPAR__CPU_STEP_WIDE_(acc, k, unused1, unused2) acc = acc + (double)x[k]
#define XPAR__CPU_COMBINE_FOLD_(acc, v, FOLD) FOLD(acc, v)
#define XPAR__CPU_COMBINE_ADD_(acc, v, unused) ((acc) + (v))

/* Kernels of one dtype and one reduction OP (sum, min or max). */
#define XPAR__CPU_REDUCE_KERNELS_(e, ctype, OP)                                              \
  XPAR__CPU_SIMD_CLONES                                                                     \
  static void reduce_serial_##OP##_##e(const void *in, size_t n, void *result) {            \
    const ctype *x = (const ctype *)in;                                                      \
    ctype acc = xpar__cpu_id_##OP##_##e();                                                   \
    size_t i = 0;                                                                            \
    XPAR__CPU_INT_HEAD_(ctype, i, n, x, acc = xpar__cpu_##OP##_##e(acc, x[i]));              \
    for (; i < n; ++i) acc = xpar__cpu_##OP##_##e(acc, x[i]);                                \
    memcpy(result, &acc, sizeof acc);                                                        \
  }                                                                                          \
  XPAR__CPU_SIMD_CLONES                                                                      \
  XPAR__CPU_ROTATED_CHUNK_(reduce_rotated_##OP##_##e, ctype, ctype, xpar__cpu_id_##OP##_##e(), \
                           XPAR__CPU_STEP_X_, XPAR__CPU_COMBINE_FOLD_, xpar__cpu_##OP##_##e, _) \
  XPAR__CPU_SIMD_CLONES                                                                      \
  static void reduce_chunk_##OP##_##e(const void *in, const void *unused, size_t lo,         \
                                      size_t hi, xpar__scalar *out) {                        \
    (void)unused;                                                                            \
    const ctype *x = (const ctype *)in;                                                      \
    if (XPAR__CPU_ROTATES_(ctype, x, lo, hi, XPAR__CPU_ROTATE_SUM_BYTES)) {                  \
      const ctype v = reduce_rotated_##OP##_##e(x, NULL, lo, hi);                            \
      memcpy(out->bytes, &v, sizeof v);                                                      \
      return;                                                                                \
    }                                                                                        \
    ctype lane[XPAR__CPU_LANES];                                                             \
    for (int j = 0; j < XPAR__CPU_LANES; ++j) lane[j] = xpar__cpu_id_##OP##_##e();           \
    size_t i = lo;                                                                           \
    XPAR__CPU_INT_HEAD_(ctype, i, hi, x, lane[0] = xpar__cpu_##OP##_##e(lane[0], x[i]));     \
    for (; hi - i >= XPAR__CPU_LANES; i += XPAR__CPU_LANES)                                  \
      for (int j = 0; j < XPAR__CPU_LANES; ++j) lane[j] = xpar__cpu_##OP##_##e(lane[j], x[i + j]); \
    ctype acc = lane[0];                                                                     \
    for (int j = 1; j < XPAR__CPU_LANES; ++j) acc = xpar__cpu_##OP##_##e(acc, lane[j]);      \
    for (; i < hi; ++i) acc = xpar__cpu_##OP##_##e(acc, x[i]);                               \
    memcpy(out->bytes, &acc, sizeof acc);                                                    \
  }                                                                                          \
  static void reduce_combine_##OP##_##e(xpar__scalar *acc, const xpar__scalar *x) {          \
    ctype p, q;                                                                              \
    memcpy(&p, acc->bytes, sizeof p);                                                        \
    memcpy(&q, x->bytes, sizeof q);                                                          \
    p = xpar__cpu_##OP##_##e(p, q);                                                          \
    memcpy(acc->bytes, &p, sizeof p);                                                        \
  }

/*
 * reduce_sum_wide: floats accumulate in double, integers in uint64_t (whose
 * bits are the wrapping int64 sum for signed types).  The branch on the
 * dtype's kind is a compile-time constant; the arm not taken is dead code.
 */
#define XPAR__CPU_WIDE_KERNELS_(e, ctype)                                                    \
  XPAR__CPU_SIMD_CLONES                                                                     \
  static void wide_serial_##e(const void *in, size_t n, void *result) {                     \
    const ctype *x = (const ctype *)in;                                                      \
    if (XPAR__CPU_IS_FLOAT(ctype)) {                                                         \
      double acc = 0.0;                                                                      \
      for (size_t i = 0; i < n; ++i) acc = acc + (double)x[i];                               \
      memcpy(result, &acc, sizeof acc);                                                      \
    } else {                                                                                 \
      uint64_t acc = 0;                                                                      \
      for (size_t i = 0; i < n; ++i) acc = acc + (uint64_t)x[i];                             \
      memcpy(result, &acc, sizeof acc);                                                      \
    }                                                                                        \
  }                                                                                          \
  XPAR__CPU_SIMD_CLONES                                                                      \
  XPAR__CPU_ROTATED_CHUNK_(wide_rotated_##e, ctype, double, 0.0, XPAR__CPU_STEP_WIDE_,        \
                           XPAR__CPU_COMBINE_ADD_, _, _)                                     \
  XPAR__CPU_SIMD_CLONES                                                                      \
  static void wide_chunk_##e(const void *in, const void *unused, size_t lo, size_t hi,       \
                             xpar__scalar *out) {                                            \
    (void)unused;                                                                            \
    const ctype *x = (const ctype *)in;                                                      \
    if (sizeof(ctype) == 8 && XPAR__CPU_ROTATES_(ctype, x, lo, hi, XPAR__CPU_ROTATE_SUM_BYTES)) { \
      out->f64 = wide_rotated_##e(x, NULL, lo, hi);                                          \
      return;                                                                                \
    }                                                                                        \
    if (XPAR__CPU_IS_FLOAT(ctype)) {                                                         \
      double lane[XPAR__CPU_LANES] = {0};                                                    \
      size_t i = lo;                                                                         \
      for (; hi - i >= XPAR__CPU_LANES; i += XPAR__CPU_LANES)                      \
        for (int j = 0; j < XPAR__CPU_LANES; ++j) lane[j] = lane[j] + (double)x[i + j];      \
      double acc = lane[0];                                                                  \
      for (int j = 1; j < XPAR__CPU_LANES; ++j) acc = acc + lane[j];                         \
      for (; i < hi; ++i) acc = acc + (double)x[i];                                          \
      out->f64 = acc;                                                                        \
    } else {                                                                                 \
      uint64_t acc = 0;                                                                      \
      size_t i = lo;                                                                         \
      XPAR__CPU_INT_HEAD_(ctype, i, hi, x, acc = acc + (uint64_t)x[i]);                      \
      for (; i < hi; ++i) acc = acc + (uint64_t)x[i];                                        \
      out->u64 = acc;                                                                        \
    }                                                                                        \
  }

#define XPAR__CPU_ALL_KERNELS_(e, ctype, name, size) \
  XPAR__CPU_REDUCE_KERNELS_(e, ctype, sum)           \
  XPAR__CPU_REDUCE_KERNELS_(e, ctype, min)           \
  XPAR__CPU_REDUCE_KERNELS_(e, ctype, max)           \
  XPAR__CPU_WIDE_KERNELS_(e, ctype)
XPAR_DTYPE_MAP(XPAR__CPU_ALL_KERNELS_)
#undef XPAR__CPU_ALL_KERNELS_

static void wide_combine_f64(xpar__scalar *acc, const xpar__scalar *x) { acc->f64 = acc->f64 + x->f64; }
static void wide_combine_u64(xpar__scalar *acc, const xpar__scalar *x) { acc->u64 = acc->u64 + x->u64; }

/* ---- kernel tables ------------------------------------------------------- */

typedef struct reduce_kernels {
  void (*serial)(const void *in, size_t n, void *result);
  xpar__cpu_chunk_reduce_fn chunk;
  xpar__cpu_combine_fn combine;
} reduce_kernels;

#define XPAR__CPU_KSET_(e, OP) \
  { reduce_serial_##OP##_##e, reduce_chunk_##OP##_##e, reduce_combine_##OP##_##e }
#define XPAR__CPU_ROW_(e, ctype, name, size)                                            \
  [XPAR_##e] = {[XPAR_SUM] = XPAR__CPU_KSET_(e, sum), [XPAR_MIN] = XPAR__CPU_KSET_(e, min), \
                [XPAR_MAX] = XPAR__CPU_KSET_(e, max)},
static const reduce_kernels reduce_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_ROW_)};
#undef XPAR__CPU_ROW_

#define XPAR__CPU_WROW_(e, ctype, name, size)                      \
  [XPAR_##e] = {wide_serial_##e, wide_chunk_##e,                   \
                XPAR__CPU_IS_FLOAT(ctype) ? wide_combine_f64 : wide_combine_u64},
static const reduce_kernels wide_table[XPAR_DTYPE_COUNT_] = {XPAR_DTYPE_MAP(XPAR__CPU_WROW_)};
#undef XPAR__CPU_WROW_

void xpar__cpu_reduce_kernels(xpar_dtype t, xpar_reduction op, xpar__cpu_chunk_reduce_fn *chunk,
                              xpar__cpu_combine_fn *combine) {
  *chunk = reduce_table[t][op].chunk;
  *combine = reduce_table[t][op].combine;
}

/* ---- entry points -------------------------------------------------------- */

xpar_status xpar__cpu_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op, const void *in,
                             size_t n, void *result) {
  XPAR__RETURN_IF(!xpar__dtype_valid(t) || (unsigned)op >= (unsigned)XPAR_REDUCTION_COUNT_,
                  XPAR_ERR_INTERNAL, "cpu reduce: bad dtype %d or op %d", (int)t, (int)op);
  const reduce_kernels *k = &reduce_table[t][op];
  if (ex->serial)
    k->serial(in, n, result);
  else
    xpar__cpu_parallel_reduce(ex, in, NULL, n, k->chunk, k->combine, result, xpar__dtype_size(t));
  return XPAR_OK;
}

xpar_status xpar__cpu_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t, const void *in, size_t n,
                                      void *result) {
  XPAR__RETURN_IF(!xpar__dtype_valid(t), XPAR_ERR_INTERNAL, "cpu reduce_sum_wide: bad dtype %d",
                  (int)t);
  const reduce_kernels *k = &wide_table[t];
  if (ex->serial)
    k->serial(in, n, result);
  else
    xpar__cpu_parallel_reduce(ex, in, NULL, n, k->chunk, k->combine, result,
                              xpar__dtype_size(xpar__wide_dtype(t)));
  return XPAR_OK;
}

/* ---- dot: the reduction of products (device_reduce.cu on the GPU) ----------
 * Serial tier: acc = 0; acc = acc + x[i]*y[i] (cuda-serial matches it bit for
 * bit); OpenMP tier: the lane-wise chunk reduction above, over products. */

#define XPAR__CPU_DOT_KERNELS_(e, ctype, name, size)                                         \
  XPAR__CPU_SIMD_CLONES                                                                      \
  static void dot_serial_##e(const void *xv, const void *yv, size_t n, void *result) {       \
    const ctype *x = (const ctype *)xv, *y = (const ctype *)yv;                            \
    ctype acc = (ctype)0;                                                                  \
    size_t i = 0;                                                                          \
    XPAR__CPU_INT_HEAD_(ctype, i, n, x,                                                    \
                        acc = xpar__cpu_sum_##e(acc, xpar__cpu_mul_##e(x[i], y[i])));      \
    for (; i < n; ++i) acc = xpar__cpu_sum_##e(acc, xpar__cpu_mul_##e(x[i], y[i]));        \
    memcpy(result, &acc, sizeof acc);                                                      \
  }                                                                                        \
  XPAR__CPU_SIMD_CLONES                                                                      \
  XPAR__CPU_ROTATED_CHUNK_(dot_rotated_##e, ctype, ctype, (ctype)0, XPAR__CPU_STEP_XY_,       \
                           XPAR__CPU_COMBINE_FOLD_, xpar__cpu_sum_##e, xpar__cpu_mul_##e)    \
  XPAR__CPU_SIMD_CLONES                                                                      \
  static void dot_chunk_##e(const void *xv, const void *yv, size_t lo, size_t hi,            \
                            xpar__scalar *out) {                                           \
    const ctype *x = (const ctype *)xv, *y = (const ctype *)yv;                            \
    if (XPAR__CPU_ROTATES_(ctype, x, lo, hi, XPAR__CPU_ROTATE_DOT_BYTES)) {                \
      const ctype v = dot_rotated_##e(x, y, lo, hi);                                       \
      memcpy(out->bytes, &v, sizeof v);                                                    \
      return;                                                                              \
    }                                                                                      \
    ctype lane[XPAR__CPU_LANES];                                                           \
    for (int j = 0; j < XPAR__CPU_LANES; ++j) lane[j] = (ctype)0;                          \
    size_t i = lo;                                                                         \
    XPAR__CPU_INT_DOT_HEAD_(ctype, i, hi, x,                                               \
                        lane[0] = xpar__cpu_sum_##e(lane[0], xpar__cpu_mul_##e(x[i], y[i]))); \
    for (; hi - i >= XPAR__CPU_LANES; i += XPAR__CPU_LANES)                                \
      for (int j = 0; j < XPAR__CPU_LANES; ++j)                                            \
        lane[j] = xpar__cpu_sum_##e(lane[j], xpar__cpu_mul_##e(x[i + j], y[i + j]));       \
    ctype acc = lane[0];                                                                   \
    for (int j = 1; j < XPAR__CPU_LANES; ++j) acc = xpar__cpu_sum_##e(acc, lane[j]);       \
    for (; i < hi; ++i) acc = xpar__cpu_sum_##e(acc, xpar__cpu_mul_##e(x[i], y[i]));       \
    memcpy(out->bytes, &acc, sizeof acc);                                                  \
  }                                                                                        \
  static void dot_combine_##e(xpar__scalar *acc, const xpar__scalar *x) {                  \
    ctype p, q;                                                                            \
    memcpy(&p, acc->bytes, sizeof p);                                                      \
    memcpy(&q, x->bytes, sizeof q);                                                        \
    p = xpar__cpu_sum_##e(p, q);                                                           \
    memcpy(acc->bytes, &p, sizeof p);                                                      \
  }
XPAR_DTYPE_MAP(XPAR__CPU_DOT_KERNELS_)
#undef XPAR__CPU_DOT_KERNELS_

typedef struct dot_kernels {
  void (*serial)(const void *x, const void *y, size_t n, void *result);
  xpar__cpu_chunk_reduce_fn chunk;
  xpar__cpu_combine_fn combine;
} dot_kernels;

#define XPAR__CPU_DOTROW_(e, ctype, name, size) \
  [XPAR_##e] = {dot_serial_##e, dot_chunk_##e, dot_combine_##e},
static const dot_kernels dot_table[XPAR_DTYPE_COUNT_] = {XPAR_DTYPE_MAP(XPAR__CPU_DOTROW_)};
#undef XPAR__CPU_DOTROW_

xpar_status xpar__cpu_dot(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, size_t n,
                          void *result) {
  XPAR__RETURN_IF(!xpar__dtype_valid(t), XPAR_ERR_INTERNAL, "cpu dot: bad dtype %d", (int)t);
  const dot_kernels *k = &dot_table[t];
  if (ex->serial)
    k->serial(x, y, n, result);
  else
    xpar__cpu_parallel_reduce(ex, x, y, n, k->chunk, k->combine, result, xpar__dtype_size(t));
  return XPAR_OK;
}
