/*
 * Reproducible mode on the CPU: float and double sum, wide sum (float ->
 * double), dot, and sum scans (inclusive / exclusive, with a carry-in) in
 * the order of docs/reproducible.md, which every tier computes: the same
 * bits for any thread count, on the serial and OpenMP tiers alike, and on
 * the GPU (backend_cuda/device_repro.cu).
 *
 * How the CPU computes the specification:
 *  - a block's 1024 lanes are accumulated a register group at a time through
 *    the 8 rows (vertical adds the compiler vectorises, with no reassociation:
 *    every lane is its own serial sum), then folded in halves (lane i + lane
 *    i + 512, then i + 256, ...): vertical adds again;
 *  - a block shorter than the 1024 lanes has lanes that are exactly +0 past
 *    its end; they change nothing (x + 0 == x for every x that is not -0, and
 *    no lane is ever -0), so the halving starts at the power of two that
 *    covers the live lanes: the same bits;
 *  - blocks are grouped into aligned chunks of a power of two blocks; OpenMP
 *    threads take chunks, each chunk's subtree is built with the stack, and the
 *    chunk totals are combined by the same stack: an aligned tree is the same
 *    tree whatever power of two it is cut at, so the thread count and the
 *    schedule cannot change a bit;
 *  - the scan works in groups of blocks that fit in the threads' L2 (as the
 *    default scan does): block totals in parallel, the carries serially from
 *    the stack of block-total subtrees (the subtrees that cover [0, b) are
 *    exactly the stack's entries, largest first), then every block's scan in
 *    parallel, from cache.
 * Nothing here may be contracted into an FMA (the build uses -ffp-contract=off;
 * cpu_internal.h refuses -ffast-math).
 */
#include <stdlib.h>

#include "cpu_internal.h"
#include "cpu_repro.h"
#include "base/repro_spec.h"

#define L XPAR__REPRO_LANES
#define R XPAR__REPRO_ROWS
#define B XPAR__REPRO_BLOCK
#define Q XPAR__REPRO_QUAD

/* Aligned subtrees built in order: a binary counter of partial sums.  The
 * stack holds the completed subtrees that cover everything pushed so far,
 * largest (leftmost) at the bottom. */
#define XPAR__REPRO_STACK_(A)                                                                \
  typedef struct stack_##A {                                                                 \
    A v[66];                                                                                 \
    uint64_t size[66];                                                                       \
    int top;                                                                                 \
  } stack_##A;                                                                               \
  static inline void push_##A(stack_##A *s, A v) {                                           \
    uint64_t size = 1;                                                                       \
    while (s->top && s->size[s->top - 1] == size) {                                          \
      v = s->v[s->top - 1] + v;                                                              \
      size *= 2;                                                                             \
      s->top--;                                                                              \
    }                                                                                        \
    s->v[s->top] = v;                                                                        \
    s->size[s->top] = size;                                                                  \
    s->top++;                                                                                \
  }                                                                                          \
  /* The tree over everything pushed, missing leaves at the right skipped. */                \
  static inline A finish_##A(const stack_##A *s) {                                           \
    if (!s->top) return (A)0;                                                                \
    A acc = s->v[s->top - 1];                                                                \
    for (int i = s->top - 2; i >= 0; --i) acc = s->v[i] + acc;                               \
    return acc;                                                                              \
  }                                                                                          \
  /* init folded with the subtrees that cover what was pushed, largest first. */            \
  static inline A fold_##A(const stack_##A *s, A init) {                                     \
    A acc = init;                                                                            \
    for (int i = 0; i < s->top; ++i) acc = acc + s->v[i];                                    \
    return acc;                                                                              \
  }                                                                                          \
  /* The lanes' tree (halving): lane[i] + lane[i + h] for h = P/2 .. 1, in */                \
  /* place; every level is one vertical vector loop.  Over P lanes: the */                  \
  /* levels above P/2 would add lanes that are +0, which change nothing. */                 \
  static A lane_tree_##A(A *lane, unsigned P) {                                              \
    for (unsigned h = P / 2; h >= 1; h /= 2)                                                 \
      for (unsigned i = 0; i < h; ++i) lane[i] = lane[i] + lane[i + h];                      \
    return lane[0];                                                                          \
  }
XPAR__REPRO_STACK_(float)
XPAR__REPRO_STACK_(double)
#undef XPAR__REPRO_STACK_

/*
 * Block total of `len` (<= B) elements for one kind of term.  TERM(i) is the
 * term of element i of the block (x and y already point at the block).
 * Lanes start at +0, so a -0 term never leaves a lane at -0.
 */
/*
 * GROUPS: 1 keeps G lanes in registers through the 8 rows (one load and one
 * add per element; storing all lanes after every row made the loop
 * store-bound); 0 adds each row into the lane array in L1, streaming the rows
 * in order -- for the float -> double wide sum, whose register groups gcc
 * compiles into spills of half vectors (0.51x the default at 16 threads on
 * the H100 host, against 0.8x row by row).  The same additions either way.
 */
#define XPAR__REPRO_BLOCK_FN_(NAME, T, A, TERM, GROUPS)                                      \
  static A block_full_##NAME(const T *x, const T *y) {                                       \
    (void)y;                                                                                 \
    enum { G = 128 / sizeof(A) };                                                            \
    A lane[L];                                                                               \
    if (GROUPS) {                                                                            \
      for (unsigned jb = 0; jb < L; jb += G) {                                               \
        A acc[G];                                                                            \
        for (unsigned j = 0; j < G; ++j) acc[j] = (A)0 + (TERM(jb + j));                     \
        for (unsigned r = 1; r < R; ++r)                                                     \
          for (unsigned j = 0; j < G; ++j) acc[j] = acc[j] + (TERM(r * L + jb + j));         \
        for (unsigned j = 0; j < G; ++j) lane[jb + j] = acc[j];                              \
      }                                                                                      \
    } else {                                                                                 \
      for (unsigned j = 0; j < L; ++j) lane[j] = (A)0 + (TERM(j));                            \
      for (unsigned r = 1; r < R; ++r)                                                       \
        for (unsigned j = 0; j < L; ++j) lane[j] = lane[j] + (TERM(r * L + j));              \
    }                                                                                        \
    return lane_tree_##A(lane, L);                                                           \
  }                                                                                          \
  static A block_##NAME(const T *x, const T *y, size_t len) {                                \
    (void)y;                                                                                 \
    if (len == B) return block_full_##NAME(x, y);                                            \
    A lane[L];                                                                               \
    const size_t live = len < L ? len : L; /* lanes that hold an element */                  \
    unsigned P = 1;                                                                          \
    while (P < live) P *= 2;                                                                 \
    for (unsigned j = 0; j < P; ++j) lane[j] = (A)0;                                         \
    for (size_t base = 0; base < len; base += L) {                                           \
      const size_t m = len - base < L ? len - base : L;                                      \
      for (size_t j = 0; j < m; ++j) lane[j] = lane[j] + (TERM(base + j));                   \
    }                                                                                        \
    return lane_tree_##A(lane, P);                                                           \
  }

#define TERM_SUM(i) x[i]
#define TERM_WIDE(i) ((double)x[i])
#define TERM_DOT(i) (x[i] * y[i])
XPAR__REPRO_BLOCK_FN_(sum_f32, float, float, TERM_SUM, 1)
XPAR__REPRO_BLOCK_FN_(sum_f64, double, double, TERM_SUM, 1)
XPAR__REPRO_BLOCK_FN_(wide_f32, float, double, TERM_WIDE, 0)
XPAR__REPRO_BLOCK_FN_(dot_f32, float, float, TERM_DOT, 1)
XPAR__REPRO_BLOCK_FN_(dot_f64, double, double, TERM_DOT, 1)
#undef TERM_SUM
#undef TERM_WIDE
#undef TERM_DOT

/* Most chunk totals the reduce keeps (on the stack): chunks are the aligned
 * power of two of blocks that makes at most this many. */
#define XPAR__REPRO_MAX_CHUNKS 1024

static size_t chunk_blocks(size_t nb) {
  size_t cb = 1;
  while ((nb + cb - 1) / cb > XPAR__REPRO_MAX_CHUNKS) cb *= 2;
  return cb;
}

/* The whole reduction of one kind: chunks of blocks in parallel, then the
 * chunk totals.  x (and y) are element pointers; y == x when unused. */
#define XPAR__REPRO_REDUCE_FN_(NAME, T, A)                                                   \
  static A reduce_##NAME(const xpar__exec *ex, const T *x, const T *y, size_t n) {           \
    if (n == 0) return (A)0;                                                                 \
    const size_t nb = (n + B - 1) / B, cb = chunk_blocks(nb), nch = (nb + cb - 1) / cb;       \
    A part[XPAR__REPRO_MAX_CHUNKS];                                                          \
    int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);                                  \
    if ((size_t)team > nch) team = (int)nch;                                                 \
    XPAR__CPU_PRAGMA(omp parallel for num_threads(team) schedule(static) if (team > 1))      \
    for (size_t c = 0; c < nch; ++c) {                                                       \
      stack_##A s;                                                                           \
      s.top = 0;                                                                             \
      const size_t b1 = (c + 1) * cb < nb ? (c + 1) * cb : nb;                               \
      for (size_t b = c * cb; b < b1; ++b) {                                                 \
        const size_t lo = b * B, len = n - lo < B ? n - lo : B;                              \
        push_##A(&s, block_##NAME(x + lo, y + lo, len));                                     \
      }                                                                                      \
      part[c] = finish_##A(&s);                                                              \
    }                                                                                        \
    stack_##A s;                                                                             \
    s.top = 0;                                                                               \
    for (size_t c = 0; c < nch; ++c) push_##A(&s, part[c]);                                  \
    return finish_##A(&s);                                                                   \
  }
XPAR__REPRO_REDUCE_FN_(sum_f32, float, float)
XPAR__REPRO_REDUCE_FN_(sum_f64, double, double)
XPAR__REPRO_REDUCE_FN_(wide_f32, float, double)
XPAR__REPRO_REDUCE_FN_(dot_f32, float, float)
XPAR__REPRO_REDUCE_FN_(dot_f64, double, double)
#undef XPAR__REPRO_REDUCE_FN_

/*
 * One block of the scan from its carry `seed`.  The quad-total tree is built
 * over P = the power of two at or above the block's quads (a quad past them
 * is +0 and never a left sibling of a live one, so P = 2048 would give the
 * same bits), then pushed down: a node's seed goes to its left child, seed +
 * left total to its right child, which folds, for every quad, the subtrees
 * covering the quads before it, largest first.  Level k lives at
 * tree[2P - (2P >> k)], P >> k nodes; seeds overwrite totals in place.
 */
#define XPAR__REPRO_SCAN_BLOCK_FN_(T)                                                        \
  static void scan_block_##T(const T *x, T *out, size_t len, T seed, int exclusive) {        \
    T tree[2 * XPAR__REPRO_QUADS];                                                           \
    const size_t nq = (len + Q - 1) / Q, full = len / Q;                                     \
    size_t P = 1;                                                                            \
    unsigned levels = 0;                                                                     \
    while (P < nq) {                                                                         \
      P *= 2;                                                                                \
      levels++;                                                                              \
    }                                                                                        \
    for (size_t q = 0; q < P; ++q)                                                           \
      tree[q] = q < full ? ((x[4 * q] + x[4 * q + 1]) + x[4 * q + 2]) + x[4 * q + 3] : (T)0;  \
    for (unsigned k = 1; k < levels; ++k) {                                                  \
      T *cur = tree + (2 * P - ((2 * P) >> k));                                              \
      const T *below = tree + (2 * P - ((2 * P) >> (k - 1)));                                \
      for (size_t i = 0; i < (P >> k); ++i) cur[i] = below[2 * i] + below[2 * i + 1];        \
    }                                                                                        \
    if (levels == 0) {                                                                       \
      tree[0] = seed;                                                                        \
    } else {                                                                                 \
      T *top = tree + (2 * P - ((2 * P) >> (levels - 1)));                                   \
      const T left = top[0];                                                                 \
      top[0] = seed;                                                                         \
      top[1] = seed + left;                                                                  \
      for (unsigned k = levels - 1; k-- > 0;) {                                              \
        T *cur = tree + (2 * P - ((2 * P) >> k));                                            \
        const T *above = tree + (2 * P - ((2 * P) >> (k + 1)));                              \
        for (size_t i = 0; i < (P >> (k + 1)); ++i) {                                        \
          const T s = above[i], l = cur[2 * i];                                              \
          cur[2 * i] = s;                                                                    \
          cur[2 * i + 1] = s + l;                                                            \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    for (size_t q = 0; q < nq; ++q) {                                                        \
      T run = tree[q];                                                                       \
      const size_t e1 = 4 * q + 4 < len ? 4 * q + 4 : len;                                   \
      if (exclusive) {                                                                       \
        for (size_t i = 4 * q; i < e1; ++i) {                                                \
          const T v = x[i];                                                                  \
          out[i] = run;                                                                      \
          run = run + v;                                                                     \
        }                                                                                    \
      } else {                                                                               \
        for (size_t i = 4 * q; i < e1; ++i) {                                                \
          run = run + x[i];                                                                  \
          out[i] = run;                                                                      \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
XPAR__REPRO_SCAN_BLOCK_FN_(float)
XPAR__REPRO_SCAN_BLOCK_FN_(double)
#undef XPAR__REPRO_SCAN_BLOCK_FN_

/* Blocks per thread in one scan group: 8 blocks of 32 / 64 KiB stay in L2
 * between the two passes (the default scan's 256 KiB per thread). */
#define XPAR__REPRO_SCAN_BLOCKS_PER_THREAD 8

#define XPAR__REPRO_SCAN_FN_(T, SUFFIX)                                                      \
  static void scan_##T(const xpar__exec *ex, const T *x, T *out, size_t n, T init,           \
                       int exclusive) {                                                      \
    const size_t nb = (n + B - 1) / B;                                                       \
    int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);                                  \
    if ((size_t)team > nb) team = (int)nb;                                                   \
    if (team < 1) team = 1;                                                                  \
    const size_t group = (size_t)team * XPAR__REPRO_SCAN_BLOCKS_PER_THREAD;                  \
    T carry[XPAR__CPU_MAX_THREADS * XPAR__REPRO_SCAN_BLOCKS_PER_THREAD];                     \
    stack_##T totals; /* block totals so far, as aligned subtrees */                         \
    totals.top = 0;                                                                          \
    XPAR__CPU_PRAGMA(omp parallel num_threads(team) if (team > 1))                           \
    for (size_t g0 = 0; g0 < nb; g0 += group) {                                              \
      const size_t g1 = nb - g0 < group ? nb : g0 + group;                                   \
      XPAR__CPU_PRAGMA(omp for schedule(static))                                             \
      for (size_t b = g0; b < g1; ++b) {                                                     \
        const size_t lo = b * B, len = n - lo < B ? n - lo : B;                              \
        carry[b - g0] = block_sum_##SUFFIX(x + lo, x + lo, len);                             \
      }                                                                                      \
      XPAR__CPU_PRAGMA(omp single)                                                           \
      for (size_t b = g0; b < g1; ++b) {                                                     \
        const T total = carry[b - g0];                                                       \
        carry[b - g0] = fold_##T(&totals, init);                                             \
        push_##T(&totals, total);                                                            \
      }                                                                                      \
      XPAR__CPU_PRAGMA(omp for schedule(static))                                             \
      for (size_t b = g0; b < g1; ++b) {                                                     \
        const size_t lo = b * B, len = n - lo < B ? n - lo : B;                              \
        scan_block_##T(x + lo, out + lo, len, carry[b - g0], exclusive);                     \
      }                                                                                      \
    }                                                                                        \
  }
XPAR__REPRO_SCAN_FN_(float, f32)
XPAR__REPRO_SCAN_FN_(double, f64)
#undef XPAR__REPRO_SCAN_FN_

/* ---- entry points (the backend table's repro_reduce / repro_scan) ------- */

xpar_status xpar__cpu_repro_reduce(const xpar__exec *ex, xpar__repro_kind kind, xpar_dtype t,
                                   const void *x, const void *y, size_t n, void *result) {
  const int f32 = t == XPAR_FLOAT;
  XPAR__RETURN_IF(!f32 && t != XPAR_DOUBLE, XPAR_ERR_INTERNAL,
                  "cpu reproducible reduce: dtype %d is not a float type", (int)t);
  const float *xf = (const float *)x, *yf = y ? (const float *)y : xf;
  const double *xd = (const double *)x, *yd = y ? (const double *)y : xd;
  float rf;
  double rd;
  switch (kind) {
    case XPAR__REPRO_SUM:
      if (f32) rf = reduce_sum_f32(ex, xf, xf, n);
      else rd = reduce_sum_f64(ex, xd, xd, n);
      break;
    case XPAR__REPRO_WIDE:
      if (f32) {
        rd = reduce_wide_f32(ex, xf, xf, n);
        memcpy(result, &rd, sizeof rd);
        return XPAR_OK;
      }
      rd = reduce_sum_f64(ex, xd, xd, n);
      break;
    case XPAR__REPRO_DOT:
      if (f32) rf = reduce_dot_f32(ex, xf, yf, n);
      else rd = reduce_dot_f64(ex, xd, yd, n);
      break;
    default:
      return xpar__fail(XPAR_ERR_INTERNAL, "cpu reproducible reduce: kind %d", (int)kind);
  }
  if (f32) memcpy(result, &rf, sizeof rf);
  else memcpy(result, &rd, sizeof rd);
  return XPAR_OK;
}

xpar_status xpar__cpu_repro_scan(const xpar__exec *ex, xpar_dtype t, xpar_scan_kind kind,
                                 const xpar__scalar *init, const void *in, void *out,
                                 size_t n) {
  const int exclusive = kind == XPAR_EXCLUSIVE;
  if (t == XPAR_FLOAT)
    scan_float(ex, (const float *)in, (float *)out, n, init ? init->f32 : 0.0f, exclusive);
  else if (t == XPAR_DOUBLE)
    scan_double(ex, (const double *)in, (double *)out, n, init ? init->f64 : 0.0, exclusive);
  else
    return xpar__fail(XPAR_ERR_INTERNAL, "cpu reproducible scan: dtype %d is not a float type",
                      (int)t);
  return XPAR_OK;
}
