/*
 * Internals of the CPU backend: per-dtype arithmetic (wrapping integer
 * operations, identities), the OpenMP shims, and the parallel drivers that
 * the per-op files share.
 *
 * Everything per dtype is generated from XPAR_DTYPE_MAP, so a new dtype is
 * the one line in xpar.h.  The traits a kernel needs are derived from the C
 * type itself: floating point or integer (_Generic), signed or not, and the
 * unsigned type of the same width (from the size column) in which integer
 * arithmetic wraps.
 *
 * Floating point: the serial tier promises exact formulas in element order,
 * matched bit for bit by the GPU's cuda-serial mode, so the compiler must not
 * reassociate or contract a*b+c into an FMA.  Reassociation needs
 * -ffast-math (refused below).  Contraction is off by default in GCC's ISO C
 * mode (-std=c11, which the build uses); clang honours the STDC pragma, which
 * every backend_cpu source gets through this header.
 */
#ifndef XPAR_BACKEND_CPU_INTERNAL_H
#define XPAR_BACKEND_CPU_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/backend.h"

#if defined(__FAST_MATH__)
#error "backend_cpu must not be built with -ffast-math: the serial tier's float results are exact formulas"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* The loops of axpy, add, fill, dot and reduce are compiled three times -- for
 * the baseline x86-64 (SSE2), for SSE4.2 and for AVX2 -- and the loader
 * picks one per process (target_clones: a GNU ifunc, so glibc on ELF only; one
 * build elsewhere, and where the whole build already targets SSE4.1 or more).
 * An application's plain loop, built for the same baseline, runs 16-byte
 * vectors and, for int32 products, emulates the 32-bit multiply SSE2 lacks
 * (two pmuludq and shuffles per four products; pmulld from SSE4.1 on).  On
 * the development VM (2 vCPUs of a Xeon, 2026-11-25) the one-thread elementwise
 * tier went from 1.0-1.6x such a loop at 2^8..2^12 to 0.4-1.25x.  Results do not
 * change: each element (or dot lane) sees the same IEEE operations in the
 * same order, and neither target has FMA to contract into.  Their vector
 * loops start at a 32-byte boundary (XPAR__CPU_TO_32B_BOUNDARY below). */
/* Not under ThreadSanitizer: the loader runs the ifunc resolvers while it
 * relocates the library, before TSan's runtime is up, and the instrumented
 * resolvers crash there (a -fsanitize=thread build died before main). */
#if defined(__SANITIZE_THREAD__)
#define XPAR__CPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XPAR__CPU_TSAN 1
#endif
#endif
#if defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) && !defined(__SSE4_1__) && \
    !defined(XPAR__CPU_TSAN) &&                                                            \
    ((defined(__clang__) && __clang_major__ >= 14) ||                                      \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 6))
#define XPAR__CPU_SIMD_CLONES __attribute__((target_clones("avx2", "sse4.2", "default")))
#else
#define XPAR__CPU_SIMD_CLONES
#endif

/* The scalar head of a vector loop: step i (from its current value, while
 * below hi) until p + i meets a 32-byte boundary, running STEP for each
 * element.  An AVX2 access across a cache line costs two, and malloc aligns a
 * block to 16 bytes only (16 mod 4096 above its mmap threshold): unaligned,
 * the AVX2 builds' elementwise stores ran 1.2-1.6x slower than SSE2 at
 * 2^10..2^13, the integer reductions' loads 1.2-1.7x slower than from an
 * aligned block (development VM and H100 host, 2026-11-25).  The exit depends on
 * the address, so the compiler keeps it a scalar loop: at most 31 / sizeof *p
 * iterations.  XPAR__CPU_TO_BOUNDARY: the same to a boundary of MASK + 1
 * bytes (a power of two). */
#define XPAR__CPU_TO_BOUNDARY(i, hi, p, MASK, STEP) \
  for (; (i) < (hi) && ((uintptr_t)((p) + (i)) & (MASK)); ++(i)) STEP
#define XPAR__CPU_TO_32B_BOUNDARY(i, hi, p, STEP) XPAR__CPU_TO_BOUNDARY(i, hi, p, 31, STEP)

/* Before a loop whose iterations never read what another one writes: the
 * compiler may vectorise it without checking the pointers for overlap. */
#if defined(__clang__)
#define XPAR__CPU_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define XPAR__CPU_INDEPENDENT _Pragma("GCC ivdep")
#else
#define XPAR__CPU_INDEPENDENT
#endif

#if defined(XPAR_HAVE_OPENMP)
#include <omp.h>
#define XPAR__CPU_PRAGMA(x) _Pragma(#x)
static inline int xpar__cpu_default_threads(void) { return omp_get_max_threads(); }
static inline int xpar__cpu_thread_num(void) { return omp_get_thread_num(); }
static inline int xpar__cpu_team_threads(void) { return omp_get_num_threads(); }
#else
/* Without OpenMP the "OpenMP" tier runs the same chunked code on one thread. */
#define XPAR__CPU_PRAGMA(x)
static inline int xpar__cpu_default_threads(void) { return 1; }
static inline int xpar__cpu_thread_num(void) { return 0; }
static inline int xpar__cpu_team_threads(void) { return 1; }
#endif

/* Per-thread partial results live in fixed arrays on the stack (no malloc
 * per call), so the team is capped at this many threads. */
#define XPAR__CPU_MAX_THREADS 256
/* Fewer elements than this per thread do not pay for waking a thread: the
 * team shrinks (a team of one runs without a parallel region).  The chunking
 * and therefore the float rounding depend only on (n, team size). */
#define XPAR__CPU_MIN_PER_THREAD 4096
/* Once a region is open (n is past the team-of-one line above), an
 * elementwise op spreads over every thread of it down to this many elements
 * per part: its results do not depend on the split, and the region has woken
 * all its threads anyway (xpar__cpu_region_size), so idle ones only lengthen
 * the critical path.  512 is what a plain `omp parallel for` gives each of 16
 * threads at 2^13.  (Reductions and scans keep XPAR__CPU_MIN_PER_THREAD: their
 * float rounding follows the parts.) */
#define XPAR__CPU_EW_MIN_PER_PART 512
/* Independent accumulators per thread in the parallel reduce/dot kernels:
 * enough vector registers in flight to hide the add latency, and the lanes
 * are what lets the compiler vectorise float sums without -ffast-math. */
#define XPAR__CPU_LANES 16

/** A per-thread partial padded to its own cache line (no false sharing). */
typedef struct xpar__cpu_partial {
  _Alignas(64) xpar__scalar v;
} xpar__cpu_partial;

/** The team every parallel region of the OpenMP tier opens: the context's
 *  thread count, else the runtime's default (what the application's own
 *  `omp parallel` gets), whatever n.
 *
 *  Why not fewer threads for a small n (H100 host, 2026-11-25): libgomp
 *  keeps one pool, and a region larger than the one before must wake pool
 *  threads that may have gone to sleep; on the 16-core H100 host a team
 *  alternating between 16 and 8 took 100-290 us per call at the median
 *  (6 us at a constant size) and up to 4-10 ms, and an application's
 *  16-thread loop after xpar's smaller teams had a p99 of 300-400 us.  So
 *  the region's size never varies with n; threads beyond the useful parts
 *  (xpar__cpu_parts) get no work, and the chunking -- hence the float
 *  rounding -- is what it was. */
static inline int xpar__cpu_region_size(const xpar__exec *ex) {
  int t = (ex->num_threads > 0) ? ex->num_threads : xpar__cpu_default_threads();
  if (t < 1) t = 1;
  if (t > XPAR__CPU_MAX_THREADS) t = XPAR__CPU_MAX_THREADS;
  return t;
}

/** Parts (working threads) for n elements in the OpenMP tier: the region's
 *  size, fewer when a part would get under XPAR__CPU_MIN_PER_THREAD elements
 *  (the _min form: under min_per_part); 1 runs without a parallel region. */
static inline int xpar__cpu_team_size_min(const xpar__exec *ex, size_t n, size_t min_per_part) {
  int t = xpar__cpu_region_size(ex);
  size_t useful = n / min_per_part;
  if (useful < 1) useful = 1;
  if ((size_t)t > useful) t = (int)useful;
  return t;
}
static inline int xpar__cpu_team_size(const xpar__exec *ex, size_t n) {
  return xpar__cpu_team_size_min(ex, n, XPAR__CPU_MIN_PER_THREAD);
}

/** Inside a region: the parts of a team of `parts` wanted, given the threads
 *  the runtime actually started (it may give fewer). */
static inline int xpar__cpu_parts_in_region(int parts) {
  int nt = xpar__cpu_team_threads();
  return parts < nt ? parts : nt;
}

/** [lo, hi) of part p of `parts` over [begin, end): contiguous, balanced. */
static inline void xpar__cpu_split(size_t begin, size_t end, int p, int parts, size_t *lo,
                                   size_t *hi) {
  size_t len = end - begin, q = len / (size_t)parts, r = len % (size_t)parts;
  size_t up = (size_t)p;
  *lo = begin + up * q + (up < r ? up : r);
  *hi = *lo + q + (up < r ? 1 : 0);
}

/* ---- per-dtype traits and arithmetic ------------------------------------ */

typedef uint32_t xpar__cpu_uint4;
typedef uint64_t xpar__cpu_uint8;
/* The unsigned type of `size` bytes (size is the literal 4 or 8 of the map). */
#define XPAR__CPU_UINT(size) xpar__cpu_uint##size

/* Signed integer: all-ones (-1) is below all-ones shifted right (the max).
 * Written without comparing against 0, which -Wtype-limits flags. */
#define XPAR__CPU_IS_SIGNED(ctype, size) \
  ((ctype)(XPAR__CPU_UINT(size))-1 < (ctype)((XPAR__CPU_UINT(size))-1 >> 1))
#define XPAR__CPU_IS_FLOAT(ctype) _Generic((ctype)0, float: 1, double: 1, long double: 1, default: 0)

/*
 * Integers add and multiply in the unsigned type of their width (wrapping
 * mod 2^bits, never signed overflow) and convert back (modular in every
 * compiler xpar supports).  Floats use their own arithmetic.  The arm of
 * _Generic not selected is never evaluated.
 */
#define XPAR__CPU_ARITH_(e, ctype, name, size)                                           \
  static inline ctype xpar__cpu_sum_##e(ctype a, ctype b) {                              \
    return _Generic((ctype)0, float: a + b, double: a + b,                               \
                    default: (ctype)((XPAR__CPU_UINT(size))a + (XPAR__CPU_UINT(size))b)); \
  }                                                                                      \
  static inline ctype xpar__cpu_mul_##e(ctype a, ctype b) {                              \
    return _Generic((ctype)0, float: a * b, double: a * b,                               \
                    default: (ctype)((XPAR__CPU_UINT(size))a * (XPAR__CPU_UINT(size))b)); \
  }                                                                                      \
  static inline ctype xpar__cpu_min_##e(ctype acc, ctype x) { return (x < acc) ? x : acc; } \
  static inline ctype xpar__cpu_max_##e(ctype acc, ctype x) { return (x > acc) ? x : acc; } \
  /* identities: sum 0, min the largest value, max the lowest */                         \
  static inline ctype xpar__cpu_id_sum_##e(void) { return (ctype)0; }                    \
  static inline ctype xpar__cpu_id_min_##e(void) {                                       \
    return _Generic((ctype)0, float: INFINITY, double: (double)INFINITY,                 \
                    default: XPAR__CPU_IS_SIGNED(ctype, size)                                \
                                 ? (ctype)((XPAR__CPU_UINT(size))-1 >> 1)                \
                                 : (ctype)(XPAR__CPU_UINT(size))-1);                     \
  }                                                                                      \
  static inline ctype xpar__cpu_id_max_##e(void) {                                       \
    return _Generic((ctype)0, float: -INFINITY, double: -(double)INFINITY,               \
                    default: XPAR__CPU_IS_SIGNED(ctype, size)                                \
                                 ? (ctype)(-(ctype)((XPAR__CPU_UINT(size))-1 >> 1) - 1)  \
                                 : (ctype)0);                                            \
  }
XPAR_DTYPE_MAP(XPAR__CPU_ARITH_)
#undef XPAR__CPU_ARITH_

/* ---- parallel drivers (shared by the per-op files) ---------------------- */

/** Reduce [lo, hi) of (a, b) into *out (b unused for a plain reduce). */
typedef void (*xpar__cpu_chunk_reduce_fn)(const void *a, const void *b, size_t lo, size_t hi,
                                          xpar__scalar *out);
/** acc = acc op x, for the partials of one reduction. */
typedef void (*xpar__cpu_combine_fn)(xpar__scalar *acc, const xpar__scalar *x);
/** The elementwise work on [lo, hi); args is the op's own argument block. */
typedef void (*xpar__cpu_range_fn)(const void *args, size_t lo, size_t hi);

/**
 * OpenMP tier of every reduction-shaped op (reduce, reduce_sum_wide, dot):
 * each thread reduces one contiguous chunk with `chunk`, the partials are
 * combined in thread order (deterministic for a given n and team size), and
 * `result_size` bytes of the total go to `result`.
 */
void xpar__cpu_parallel_reduce(const xpar__exec *ex, const void *a, const void *b, size_t n,
                               xpar__cpu_chunk_reduce_fn chunk, xpar__cpu_combine_fn combine,
                               void *result, size_t result_size);

/** The OpenMP-tier chunk kernel and combiner of reduce(t, op) (scan's first
 *  pass uses them); t and op must be valid. */
void xpar__cpu_reduce_kernels(xpar_dtype t, xpar_reduction op, xpar__cpu_chunk_reduce_fn *chunk,
                              xpar__cpu_combine_fn *combine);

/** OpenMP tier of the elementwise ops: fn over contiguous static chunks. */
void xpar__cpu_parallel_for(const xpar__exec *ex, size_t n, xpar__cpu_range_fn fn,
                            const void *args);

/* ---- the operations (the backend table's entries) ----------------------- */

xpar_status xpar__cpu_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op, const void *in,
                             size_t n, void *result);
xpar_status xpar__cpu_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t, const void *in, size_t n,
                                      void *result);
xpar_status xpar__cpu_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                           xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                           void *out, size_t n);
xpar_status xpar__cpu_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha, const void *x,
                           void *y, size_t n);
xpar_status xpar__cpu_add(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, void *z,
                          size_t n);
xpar_status xpar__cpu_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                           size_t n);
xpar_status xpar__cpu_host_copy(const xpar__exec *ex, void *dst, const void *src, size_t bytes);
xpar_status xpar__cpu_launch(const xpar__exec *ex, const struct xpar_kernel *k, size_t n,
                             const struct xpar_kernel_args *args);
xpar_status xpar__cpu_op_reduce(const xpar__exec *ex, const struct xpar_operator *op, size_t n,
                                const void *in, void *result);
xpar_status xpar__cpu_op_scan(const xpar__exec *ex, const struct xpar_operator *op,
                              xpar_scan_kind kind, size_t n, const void *in, void *out);
xpar_status xpar__cpu_op_select(const xpar__exec *ex, const struct xpar_predicate_op *pred,
                                int partition, size_t n, const void *in, void *out,
                                uint64_t *count);
xpar_status xpar__cpu_dot(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, size_t n,
                          void *result);
/* Stable sort by the radix key of base/sort_key.h (cpu_sort.c). */
xpar_status xpar__cpu_sort(const xpar__exec *ex, const xpar__sort_spec *s);
/* Compaction: select, select by flags, stable partition, unique (cpu_select.c). */
xpar_status xpar__cpu_select(const xpar__exec *ex, const xpar__select_spec *s);
/* Runs: run-length encode and reduce by key (cpu_runs.c). */
xpar_status xpar__cpu_runs(const xpar__exec *ex, const xpar__runs_spec *s);
/* Segmented reduce / scan and argmin / argmax (cpu_segmented.c). */
xpar_status xpar__cpu_segmented(const xpar__exec *ex, const xpar__seg_spec *s);

/* Histogram: even or range bins (cpu_histogram.c). */
xpar_status xpar__cpu_histogram(const xpar__exec *ex, const xpar__histogram_spec *s);

#endif /* XPAR_BACKEND_CPU_INTERNAL_H */
