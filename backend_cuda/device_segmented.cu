/*
 * Device layer: argmin / argmax and the segmented reduce and scan (xpar__seg_spec), the
 * entry point of the backend table.
 *
 * Paths:
 *  - cuda-serial (ex->serial): per_segment_kernel with grid = block = 1: segment by
 *    segment, element order, the CPU serial tier's formulas (bit for bit);
 *  - argmin / argmax of one segment (the whole array): arg_kernel, a one-pass grid
 *    reduce of (value, index) pairs -- each thread keeps the best of its elements
 *    (grid-stride, several independent loads in flight), warps and blocks combine by
 *    shuffles and shared memory, every block stores its pair, and the block that draws
 *    the last ticket combines the pairs and writes value and index.  Ties go to the
 *    smaller index and a NaN beats every number (the first NaN wins), so the result is
 *    the serial one whatever the order of combination;
 *  - segmented reduce: balanced by ELEMENTS.  The elements [offsets[0], offsets[m]) are
 *    cut into tiles of a block each (seg_tile_kernel), whatever the segments: a tile is
 *    loaded into shared memory with coalesced loads, each thread walks ITEMS contiguous
 *    elements of it and writes every segment that lies wholly in its range, and keeps a
 *    partial for the (at most two) segments crossing its range's edges; the block
 *    combines those partials in order (a segmented scan by segment over the records,
 *    one warp); a segment wholly inside the tile is written, one crossing a tile edge
 *    becomes the tile's record of it (a head: the segment began before the tile; a
 *    tail: it goes on after it), and the tile that draws the last ticket folds the
 *    records in tile order (crossing_records).  seg_bounds_kernel (one thread per tile
 *    edge) finds every tile's first segment once.  One huge segment among tiny ones
 *    costs a record per tile, not a serial loop.  A tile inside one segment that goes
 *    on past it (a large segment's middle) skips the shared-memory tile and the
 *    search: a block reduce from registers into its one record (not for a float min /
 *    max, which folds in element order);
 *  - long segments on average (n / m >= kSpanMinMean; not a float min / max reduce, which
 *    folds in element order), where built with XPAR_SEG_SPANS=1 (off: not yet run on a
 *    GPU): a warp per span of the work instead of the tiles
 *    (seg_span_kernel; the scan seg_span_tail_kernel, seg_scan_carry_kernel,
 *    seg_span_scan_kernel), the work being the elements and the segments' ends, so that
 *    neither one huge segment nor many short ones serialise a warp;
 *  - segmented scan: tiled (tile tails, one block scanning the carries across tiles,
 *    then a block-wide segmented scan per tile), balanced by elements;
 *  - argmin / argmax per segment (xpar_segmented_argmin / _argmax, any number of
 *    segments, one included): the segmented reduce's tiles and records (balanced by
 *    elements) folding (value, index) pairs (ArgFold) instead of values (ValueFold).
 *    The whole-array argmin / argmax (no offsets) is arg_kernel.
 *
 *  - reproducible mode, float or double SUM reduce or scan (either tier):
 *    repro_segment_kernel, one thread per segment (grid-stride; cuda-serial: one thread
 *    in all) computing the additions of docs/reproducible.md serially: the sum with
 *    runs::repro_sum_one_thread, the function reduce-by-key's reproducible runs use, the
 *    scan with repro_scan_one_thread below (both the additions cpu_repro.c makes): each
 *    segment's sum (scan) is reproducible xpar_reduce(SUM) (xpar_scan) of the segment as
 *    an array of its own.  Not balanced: a segment of m elements is m dependent adds
 *    (a scan: about 2m) in one thread.
 *
 * Every path combines in a fixed order, so a result is the same bits run to run; min and
 * max are the serial tiers' bits (the first of equal values wins: -0.0 or +0.0), float
 * sums differ from the serial tiers only by rounding (reproducible mode: not at all).
 *
 * Offsets: check_offsets_kernel checks every offset on the device (non-decreasing,
 * offsets[0] >= 0, offsets[m] <= n: one read of the m + 1 offsets) into a scratch word
 * before the work; every kernel after it reads the word first and writes nothing when
 * an offset is bad.  A call whose caller waits (s->report: not a nowait call, whether or
 * not dispatch copies its outputs back) reads the word back and refuses the call with
 * the first bad position (XPAR_ERR_INVALID_ARGUMENT); a nowait call has returned: its
 * bad offsets write nothing and are not reported.
 *
 * Outputs are always device memory here (dispatch stages host outputs).  Scratch: the
 * context's seg_scratch (grown, kept; freed by release_cache), or, for a call captured
 * into a CUDA graph, GraphScratch.
 */
#include <string.h>

#include <type_traits>

#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "runs_kernel.cuh" /* runs::repro_sum_one_thread: reproducible mode's sums */
#include "thread_load.cuh"

namespace xpar_cuda {
namespace seg {
namespace {

constexpr int kBlock = 256;
constexpr size_t kNone = ~(size_t)0;
constexpr size_t kPartialsOffset = 256; /* scratch: [0] the check word, [8] the ticket */

/* The check word: 0 while every offset is good, else ULLONG_MAX - (first bad index). */
__device__ __forceinline__ bool offsets_bad(const unsigned long long *check) {
  return check && *check != 0ull;
}

/* ---- segment descriptions -------------------------------------------------------- */

template <class O> struct OffArray {
  const O *p;
  __device__ __forceinline__ size_t at(size_t i) const { return (size_t)p[i]; }
};
struct OffFixed {
  size_t size;
  __device__ __forceinline__ size_t at(size_t i) const { return i * size; }
};

/* The first segment g with at(g + 1) >= x, searched in [lo, hi). */
template <class Off>
__device__ size_t first_reaching(const Off &off, size_t lo, size_t hi, size_t x) {
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (off.at(mid + 1) >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

template <class O>
__global__ void check_offsets_kernel(const O *off, size_t m, size_t n,
                                     unsigned long long *check) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i <= m; i += stride) {
    const long long v = (long long)off[i];
    const bool bad = (i == 0 && v < 0) || (i > 0 && v < (long long)off[i - 1]) ||
                     (i == m && v >= 0 && (unsigned long long)v > (unsigned long long)n);
    if (bad) atomicMax(check, ~0ull - (unsigned long long)i);
  }
}

/* ---- NaN, and the (value, index) order of argmin / argmax -------------------------- */

template <class T> __device__ __forceinline__ bool is_nan(T) { return false; }
template <> __device__ __forceinline__ bool is_nan<float>(float v) { return v != v; }
template <> __device__ __forceinline__ bool is_nan<double>(double v) { return v != v; }

/* (av, ai) comes before (bv, bi): a NaN first (the smaller index among NaNs), then the
 * smaller (argmin) or larger (argmax) value, then the smaller index.  The neutral pair
 * is (the identity, INT64_MAX): every element comes before it. */
template <class T, bool MAX>
__device__ __forceinline__ bool arg_before(T av, long long ai, T bv, long long bi) {
  const bool an = is_nan(av), bn = is_nan(bv);
  if (an || bn) return an && (!bn || ai < bi);
  if (MAX ? av > bv : av < bv) return true;
  return av == bv && ai < bi;
}

template <class T, bool MAX> __device__ __forceinline__ T arg_identity() {
  return MAX ? Limits<T>::lowest() : Limits<T>::max();
}

template <class T> struct ArgPair {
  T v;
  long long i;
};

struct SegParams {
  const void *in;
  void *out;
  long long *index;
  size_t n;      /* in's elements */
  size_t m;      /* segments */
  int exclusive; /* scan */
  const unsigned long long *check; /* NULL: no offsets to check */
  unsigned int *ticket;
  void *partials;
  const size_t *reach, *hold; /* the tiles' first segments (seg_bounds_kernel) */
  size_t *rec_seg;            /* the reduce: two records per tile (crossing_records) */
  void *rec_val;
  bool streaming;             /* argmin / argmax: the input is larger than L2 */
};

/* ---- what the balanced reduce folds: values, or (value, index) pairs --------------- */

/* A fold policy F of seg_tile_kernel: F::Acc the partial of a piece of a segment,
 * F::lift(x[i], i) an element's, F::apply(earlier, later), F::store the result of
 * segment g.  kOrdered: the fold must take the elements in order (a float min / max,
 * whose result keeps the first of equal values, -0.0 or +0.0). */
template <class T, class Op> struct ValueFold {
  using Acc = T;
  static constexpr bool kOrdered =
      std::is_floating_point<T>::value && !std::is_same<Op, SumOp<T>>::value;
  static __device__ __forceinline__ Acc identity() { return Op::identity(); }
  static __device__ __forceinline__ Acc lift(T v, size_t) { return v; }
  static __device__ __forceinline__ Acc apply(Acc a, Acc b) { return Op::apply(a, b); }
  static __device__ __forceinline__ void store(const SegParams &p, size_t g, Acc a) {
    static_cast<T *>(p.out)[g] = a;
  }
};

/* argmin / argmax per segment: arg_before is a total order of (value, index) pairs, so
 * any grouping gives the serial pair (not kOrdered).  The identity (arg_identity,
 * INT64_MAX) comes after every element; a segment left with it is empty: the value
 * identity and index -1, as the per-segment kernel writes. */
template <class T, bool MAX> struct ArgFold {
  using Acc = ArgPair<T>;
  static constexpr bool kOrdered = false;
  static __device__ __forceinline__ Acc identity() { return Acc{arg_identity<T, MAX>(), INT64_MAX}; }
  static __device__ __forceinline__ Acc lift(T v, size_t i) { return Acc{v, (long long)i}; }
  static __device__ __forceinline__ Acc apply(Acc a, Acc b) {
    return arg_before<T, MAX>(b.v, b.i, a.v, a.i) ? b : a;
  }
  static __device__ __forceinline__ void store(const SegParams &p, size_t g, Acc a) {
    static_cast<T *>(p.out)[g] = a.v;
    p.index[g] = a.i == INT64_MAX ? -1 : a.i;
  }
};

/* Warp shuffles of a fold's partial: a value, or a pair field by field. */
template <class A> __device__ __forceinline__ A shfl_up(A a, int d) {
  return __shfl_up_sync(0xffffffffu, a, d);
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_up(ArgPair<T> a, int d) {
  return ArgPair<T>{__shfl_up_sync(0xffffffffu, a.v, d), __shfl_up_sync(0xffffffffu, a.i, d)};
}
template <class A> __device__ __forceinline__ A shfl_down(A a, int d) {
  return __shfl_down_sync(0xffffffffu, a, d);
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_down(ArgPair<T> a, int d) {
  return ArgPair<T>{__shfl_down_sync(0xffffffffu, a.v, d), __shfl_down_sync(0xffffffffu, a.i, d)};
}
template <class A> __device__ __forceinline__ A shfl_from(A a, int lane) {
  return __shfl_sync(0xffffffffu, a, lane);
}
template <class T> __device__ __forceinline__ ArgPair<T> shfl_from(ArgPair<T> a, int lane) {
  return ArgPair<T>{__shfl_sync(0xffffffffu, a.v, lane), __shfl_sync(0xffffffffu, a.i, lane)};
}

/* A partial another block wrote (and fenced): read through L2 (ld.global.cg) --
 * a value by thread_load.cuh's load_cg, a pair field by field. */
using xpar_cuda::load_cg;
template <class T> __device__ __forceinline__ ArgPair<T> load_cg(const ArgPair<T> *q) {
  return ArgPair<T>{load_cg(&q->v), __ldcg(&q->i)};
}

/* ---- per segment: the serial path (cuda-serial), grid = block = 1 ------------------ */

template <class T, class Op, class Off, int KIND>
__global__ void per_segment_kernel(SegParams p, Off off) {
  constexpr bool MAX = std::is_same<Op, MaxOp<T>>::value; /* ARGREDUCE */
  if (offsets_bad(p.check)) return;
  const T *x = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < p.m; g += stride) {
    const size_t lo = off.at(g), hi = off.at(g + 1);
    if (KIND == XPAR__SEG_REDUCE) {
      T acc = Op::identity();
      for (size_t i = lo; i < hi; ++i) acc = Op::apply(acc, x[i]);
      out[g] = acc;
    } else if (KIND == XPAR__SEG_SCAN) {
      T acc = Op::identity();
      if (p.exclusive) {
        for (size_t i = lo; i < hi; ++i) {
          const T v = x[i]; /* read before the write: in place */
          out[i] = acc;
          acc = Op::apply(acc, v);
        }
      } else {
        for (size_t i = lo; i < hi; ++i) {
          acc = Op::apply(acc, x[i]);
          out[i] = acc;
        }
      }
    } else { /* ARGREDUCE: Op is MinOp or MaxOp */
      T best = Op::identity();
      long long bi = -1;
      for (size_t i = lo; i < hi; ++i) {
        const T v = x[i];
        if (bi < 0 || arg_before<T, MAX>(v, (long long)i, best, bi)) {
          best = v;
          bi = (long long)i;
        }
      }
      out[g] = best;
      p.index[g] = bi;
    }
  }
}

/* The reproducible scan of x[0, len) into out (out == x allowed), from +0, one thread,
 * as docs/reproducible.md states it: block b's carry is +0 folded with the block-total
 * tree's nodes covering [0, b), largest first -- the entries of a binary-counter stack
 * of the totals, bottom to top; inside the block, quad q's seed is the carry folded with
 * the stack of the quad totals U_q = ((x0 + x1) + x2) + x3 the same way, and the quad
 * runs serially from its seed.  A block's total and a quad's total are read before the
 * block's (the quad's) outputs are written. */
template <class A>
__device__ void repro_scan_one_thread(const A *x, A *out, size_t len, bool exclusive) {
  runs::ReproStack<A> blocks;
  blocks.top = 0;
  for (size_t b0 = 0; b0 < len; b0 += XPAR__REPRO_BLOCK) {
    const size_t bl = len - b0 < XPAR__REPRO_BLOCK ? len - b0 : XPAR__REPRO_BLOCK;
    A carry = A(0);
    for (int i = 0; i < blocks.top; ++i) carry = carry + blocks.v[i];
    const A total = runs::repro_sum_one_thread<A>(x + b0, bl); /* T_b: one block */
    runs::ReproStack<A> quads;
    quads.top = 0;
    for (size_t q0 = 0; q0 < bl; q0 += XPAR__REPRO_QUAD) {
      const size_t ql = bl - q0 < XPAR__REPRO_QUAD ? bl - q0 : XPAR__REPRO_QUAD;
      A v[XPAR__REPRO_QUAD];
      for (size_t k = 0; k < ql; ++k) v[k] = x[b0 + q0 + k];
      A acc = carry;
      for (int i = 0; i < quads.top; ++i) acc = acc + quads.v[i];
      A u = v[0];
      for (size_t k = 1; k < ql; ++k) u = u + v[k];
      for (size_t k = 0; k < ql; ++k) {
        if (exclusive) {
          out[b0 + q0 + k] = acc;
          acc = acc + v[k];
        } else {
          acc = acc + v[k];
          out[b0 + q0 + k] = acc;
        }
      }
      quads.push(u);
    }
    blocks.push(total);
  }
}

/* Reproducible mode: out[g] = the reproducible sum of segment g (an empty one: +0), or
 * out[lo, hi) its reproducible scan (an empty one: nothing). */
template <class T, class Off, int KIND>
__global__ void __launch_bounds__(kBlock) repro_segment_kernel(SegParams p, Off off) {
  if (offsets_bad(p.check)) return;
  const T *x = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < p.m; g += stride) {
    const size_t lo = off.at(g), hi = off.at(g + 1);
    if (KIND == XPAR__SEG_SCAN)
      repro_scan_one_thread<T>(x + lo, out + lo, hi - lo, p.exclusive != 0);
    else
      out[g] = runs::repro_sum_one_thread<T>(x + lo, hi - lo);
  }
}

/* ---- argmin / argmax of one segment ------------------------------------------------- */

template <class T, bool MAX>
__device__ __forceinline__ void arg_take(T &bv, long long &bi, T v, long long i) {
  if (arg_before<T, MAX>(v, i, bv, bi)) {
    bv = v;
    bi = i;
  }
}

/* The block's best pair, in thread 0. */
template <class T, bool MAX> __device__ void arg_block(T &bv, long long &bi) {
  __shared__ T s_v[kBlock / 32];
  __shared__ long long s_i[kBlock / 32];
  for (int d = 16; d > 0; d >>= 1) {
    const T ov = __shfl_down_sync(0xffffffffu, bv, d);
    const long long oi = __shfl_down_sync(0xffffffffu, bi, d);
    arg_take<T, MAX>(bv, bi, ov, oi);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    s_v[warp] = bv;
    s_i[warp] = bi;
  }
  __syncthreads();
  if (warp == 0) {
    bv = lane < kBlock / 32 ? s_v[lane] : arg_identity<T, MAX>();
    bi = lane < kBlock / 32 ? s_i[lane] : INT64_MAX;
    for (int d = 16; d > 0; d >>= 1) {
      const T ov = __shfl_down_sync(0xffffffffu, bv, d);
      const long long oi = __shfl_down_sync(0xffffffffu, bi, d);
      arg_take<T, MAX>(bv, bi, ov, oi);
    }
  }
}

/* 16-byte vectors in flight per thread and iteration. */
constexpr int kArgVectors = 2;
template <class T> constexpr int arg_unroll() { return kArgVectors * 16 / (int)sizeof(T); }

/* Every thread: the best of its elements -- the scalar head before x's first 16-byte
 * boundary (global thread 0), whole 16-byte vectors grid-stride (kArgVectors loads in
 * flight, the reduce's read path: streaming hints past L2's size), the scalar tail. */
template <class T, bool MAX> __global__ void __launch_bounds__(kBlock) arg_kernel(SegParams p) {
  const T *x = static_cast<const T *>(p.in);
  const size_t n = p.n;
  constexpr int PER = Pack16<T>::count;
  T bv = arg_identity<T, MAX>();
  long long bi = INT64_MAX;
  const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t head = (size_t)((16 - ((uintptr_t)x & 15)) & 15) / sizeof(T);
  if (head > n) head = n;
  const size_t vectors = (n - head) / PER;
  if (tid == 0)
    for (size_t i = 0; i < head; ++i) arg_take<T, MAX>(bv, bi, __ldg(x + i), (long long)i);
  const T *xv = x + head;
  const bool streaming = p.streaming;
  size_t v = tid;
  for (; v + (kArgVectors - 1) * stride < vectors; v += kArgVectors * stride) {
    Pack16<T> l[kArgVectors];
#pragma unroll
    for (int u = 0; u < kArgVectors; ++u) l[u].raw = load16_readonly(xv + (v + u * stride) * PER, streaming);
#pragma unroll
    for (int u = 0; u < kArgVectors; ++u)
#pragma unroll
      for (int e = 0; e < PER; ++e)
        arg_take<T, MAX>(bv, bi, l[u].e[e], (long long)(head + (v + u * stride) * PER + e));
  }
  for (; v < vectors; v += stride) {
    Pack16<T> l;
    l.raw = load16_readonly(xv + v * PER, streaming);
#pragma unroll
    for (int e = 0; e < PER; ++e) arg_take<T, MAX>(bv, bi, l.e[e], (long long)(head + v * PER + e));
  }
  for (size_t i = head + vectors * PER + tid; i < n; i += stride)
    arg_take<T, MAX>(bv, bi, __ldg(x + i), (long long)i);
  arg_block<T, MAX>(bv, bi);
  ArgPair<T> *parts = static_cast<ArgPair<T> *>(p.partials);
  __shared__ bool s_last;
  if (threadIdx.x == 0) {
    parts[blockIdx.x].v = bv;
    parts[blockIdx.x].i = bi;
    __threadfence();
    s_last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  bv = arg_identity<T, MAX>();
  bi = INT64_MAX;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    const volatile ArgPair<T> *q = parts + b;
    arg_take<T, MAX>(bv, bi, q->v, q->i);
  }
  __syncthreads(); /* arg_block's shared memory is reused */
  arg_block<T, MAX>(bv, bi);
  if (threadIdx.x == 0) {
    static_cast<T *>(p.out)[0] = bv;
    p.index[0] = bi;
    *p.ticket = 0; /* for the next call */
  }
}

/* ---- segmented reduce, balanced by elements ------------------------------------------ */

/* Elements per thread: 64 bytes. */
template <class T> constexpr int seg_items() { return 64 / (int)sizeof(T); }

/* XPAR_SEG_TILE_EARLY_LOADS=1 (e.g. CUDAFLAGS=-DXPAR_SEG_TILE_EARLY_LOADS=1 at the first
 * configure): seg_tile_kernel issues its tile's loads into registers before thread 0
 * reads where the tile lies (the fast path's test), so that the two latencies overlap
 * instead of adding up on every tile.  Off until the GPU check and the segmented bench
 * have run it (docs/segmented.md). */
#ifndef XPAR_SEG_TILE_EARLY_LOADS
#define XPAR_SEG_TILE_EARLY_LOADS 0
#endif
constexpr bool kEarlyLoads = XPAR_SEG_TILE_EARLY_LOADS != 0;
/* Shared-memory index of tile element j: one pad slot per 32 elements (the threads of a
 * warp read 16 or 8 apart). */
__device__ __forceinline__ int pad(int j) { return j + (j >> 5); }

/* Where each tile begins in the segments, found once for all tiles (a tile's own binary
 * search would cost every block ~log2(m) dependent loads of latency): for each tile edge
 * k in [0, tiles] at element x = min(offsets[0] + k * tile, offsets[m]), reach[k] the
 * first segment ending at or after x and hold[k] the segment holding element x (the
 * first ending after it). */
template <class Off>
__global__ void seg_bounds_kernel(SegParams p, Off off, size_t tile, size_t tiles, size_t *reach,
                                  size_t *hold) {
  if (offsets_bad(p.check)) return;
  const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k > tiles) return;
  const size_t begin = off.at(0), end = off.at(p.m);
  const size_t x = end - begin > k * tile ? begin + k * tile : end;
  reach[k] = first_reaching(off, 0, p.m, x);
  hold[k] = first_reaching(off, 0, p.m, x + 1);
}

/* The last tile of the reduce, once every tile has stored its records: each segment
 * crossing a tile edge is its pieces' fold in tile order (its first record, a tile's
 * tail, then the next tiles' heads), so the result does not depend on the order the
 * tiles finish in: float sums are the same bits run to run, and min / max keep the
 * first of equal values (-0.0 or +0.0) as the serial tiers do.  records: count records
 * in order (kNone: none), their segments non-decreasing.  Each thread folds a contiguous
 * chunk: a run wholly inside it is written at once, its first and last runs go to
 * shared memory, and the thread where a segment's records begin folds the following
 * chunks' first runs of it (at most one per thread, in shared memory). */
template <class F>
__device__ void crossing_records(const SegParams &p, size_t count,
                                 void *smem /* kBlock * (16 + 2 * sizeof(Acc)) bytes, 8-aligned */) {
  using Acc = typename F::Acc;
  size_t *s_fk = static_cast<size_t *>(smem), *s_lk = s_fk + kBlock;
  Acc *s_fv = reinterpret_cast<Acc *>(s_lk + kBlock), *s_lv = s_fv + kBlock;
  /* The records were written by other blocks (fenced before their tickets): read
   * through L2 (ld.global.cg), eight at a time (pairs: four) so that the loads overlap. */
  const unsigned long long *lseg = reinterpret_cast<const unsigned long long *>(p.rec_seg);
  const Acc *lval = static_cast<const Acc *>(p.rec_val);
  const size_t per = (count + kBlock - 1) / kBlock;
  const size_t lo = (size_t)threadIdx.x * per < count ? (size_t)threadIdx.x * per : count;
  const size_t hi = lo + per < count ? lo + per : count;
  size_t fk = kNone, ck = kNone; /* the first run's segment, the current run's */
  Acc fv = F::identity(), cv = F::identity();
  /* 16-byte pairs: four at a time (eight keep too many registers live in every block
   * of the kernel, though only the last block runs this) */
  constexpr int BATCH = sizeof(Acc) > 8 ? 4 : 8;
  for (size_t i0 = lo; i0 < hi; i0 += BATCH) {
    size_t gs[BATCH];
    Acc vs[BATCH];
#pragma unroll
    for (int k = 0; k < BATCH; ++k) {
      const bool in = i0 + k < hi;
      gs[k] = in ? (size_t)__ldcg(lseg + i0 + k) : kNone;
      vs[k] = in ? load_cg(lval + i0 + k) : F::identity();
    }
#pragma unroll
    for (int k = 0; k < BATCH; ++k) {
      const size_t g = gs[k];
      if (g == kNone) continue;
      const Acc v = vs[k];
      if (g == ck) {
        cv = F::apply(cv, v);
        continue;
      }
      if (ck != kNone) {
        if (fk == kNone) {
          fk = ck;
          fv = cv;
        } else {
          F::store(p, ck, cv); /* a run between the first and the last: whole */
        }
      }
      ck = g;
      cv = v;
    }
  }
  if (fk == kNone) { /* one run (or none): it is both */
    fk = ck;
    fv = cv;
  }
  s_fk[threadIdx.x] = fk;
  s_fv[threadIdx.x] = fv;
  s_lk[threadIdx.x] = ck;
  s_lv[threadIdx.x] = cv;
  __syncthreads();
  if (fk == kNone) return;
  /* the last non-empty chunk before this one: does its last run continue here? */
  size_t before = kNone;
  for (int u = (int)threadIdx.x - 1; u >= 0; --u)
    if (s_lk[u] != kNone) {
      before = s_lk[u];
      break;
    }
  const bool single = fk == ck;
  /* the run this thread owns and must finish: its first unless that began earlier, and
   * its last when that differs from its first */
  for (int pass = 0; pass < 2; ++pass) {
    size_t g;
    Acc v;
    if (pass == 0) {
      if (fk == before) continue;
      g = fk;
      v = fv;
      if (!single) {
        F::store(p, g, v); /* followed by another run here: whole */
        continue;
      }
    } else {
      if (single) break;
      g = ck;
      v = cv;
    }
    for (int u = (int)threadIdx.x + 1; u < kBlock; ++u) {
      if (s_fk[u] == kNone) continue;
      if (s_fk[u] != g) break;
      v = F::apply(v, s_fv[u]);
      if (s_lk[u] != g) break;
    }
    F::store(p, g, v);
  }
}

/* A tile's end, once its records are stored (and fenced): it draws a ticket, and the
 * last of the `used` tiles folds every tile's records.  smem: crossing_records' room. */
template <class F> __device__ void tile_ticket(const SegParams &p, size_t used, void *smem) {
  if (used < 2) return; /* one tile: nothing crosses an edge */
  __shared__ bool s_last;
  if (threadIdx.x == 0) s_last = atomicAdd(p.ticket, 1u) == (unsigned)(used - 1);
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  crossing_records<F>(p, 2 * used, smem);
  if (threadIdx.x == 0) *p.ticket = 0; /* for the next call */
}

template <class T, class F, class Off>
__global__ void __launch_bounds__(kBlock) seg_tile_kernel(SegParams p, Off off) {
  using Acc = typename F::Acc;
  if (offsets_bad(p.check)) return;
  constexpr int ITEMS = seg_items<T>();
  constexpr int TILE = kBlock * ITEMS;
  __shared__ __align__(16) T s_tile[TILE + TILE / 32]; /* then crossing_records' room */
  __shared__ size_t s_rseg[2 * kBlock];
  __shared__ Acc s_rval[2 * kBlock];
  __shared__ int s_wsum[kBlock / 32];
  __shared__ size_t s_g0, s_g1;
  const T *x = static_cast<const T *>(p.in);
  /* the tiles cover [offsets[0], offsets[m]), read here: the grid is sized for n */
  const size_t begin = off.at(0), end = off.at(p.m);
  if (begin == end) { /* no elements: every segment the identity */
    if (blockIdx.x == 0)
      for (size_t g = threadIdx.x; g < p.m; g += blockDim.x) F::store(p, g, F::identity());
    return;
  }
  const size_t tile_lo = begin + (size_t)blockIdx.x * TILE;
  if (tile_lo >= end) return;
  const size_t tile_hi = end - tile_lo < (size_t)TILE ? end : tile_lo + TILE;
  const int len = (int)(tile_hi - tile_lo);
  const size_t used = (end - begin + TILE - 1) / TILE; /* the tiles holding elements */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  [[maybe_unused]] T v[ITEMS]; /* kEarlyLoads: the tile's elements, loaded first */
  if constexpr (kEarlyLoads) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = (int)threadIdx.x + k * kBlock;
      v[k] = j < len ? __ldg(x + tile_lo + j) : T();
    }
    if (threadIdx.x == 0) s_g0 = p.reach[blockIdx.x];
    if (threadIdx.x == 32) s_g1 = p.reach[blockIdx.x + 1];
  }
  /* A tile inside one segment that goes on past it (the middle of a large segment):
   * no segment starts or ends in it, so it is a plain block reduce from registers
   * (no shared-memory tile, no search) into its one record.  Not for a float min /
   * max, which must fold in element order (the general path below does). */
  if constexpr (!F::kOrdered) {
    __shared__ int s_inside;
    if (threadIdx.x == 0) {
      /* hold: the segment holding tile_lo; reach == hold: none ends at tile_lo */
      const size_t g = p.hold[blockIdx.x];
      s_inside = g == p.reach[blockIdx.x] && g < p.m && off.at(g + 1) > tile_hi;
    }
    __syncthreads();
    if (s_inside) {
      Acc acc = F::identity();
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const int j = (int)threadIdx.x + k * kBlock;
        if (j < len) {
          T e;
          if constexpr (kEarlyLoads) e = v[k];
          else e = __ldg(x + tile_lo + j);
          acc = F::apply(acc, F::lift(e, tile_lo + j));
        }
      }
      for (int d = 16; d > 0; d >>= 1) acc = F::apply(acc, shfl_down(acc, d));
      if (lane == 0) s_rval[warp] = acc;
      __syncthreads();
      if (threadIdx.x == 0) {
        Acc v = s_rval[0];
        for (int w = 1; w < kBlock / 32; ++w) v = F::apply(v, s_rval[w]);
        const size_t g = p.hold[blockIdx.x];
        const int slot = off.at(g) < tile_lo ? 0 : 1; /* a head, or the segment's first tile */
        size_t *rec_seg = p.rec_seg + 2 * (size_t)blockIdx.x;
        rec_seg[slot] = g;
        rec_seg[1 - slot] = kNone;
        static_cast<Acc *>(p.rec_val)[2 * (size_t)blockIdx.x + slot] = v;
        __threadfence(); /* the record, before the ticket */
      }
      tile_ticket<F>(p, used, s_tile);
      return;
    }
  }
  if constexpr (!kEarlyLoads) {
    if (threadIdx.x == 0) s_g0 = p.reach[blockIdx.x];
    if (threadIdx.x == 32) s_g1 = p.reach[blockIdx.x + 1];
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = (int)threadIdx.x + k * kBlock;
    if (j < len) {
      if constexpr (kEarlyLoads) s_tile[pad(j)] = v[k];
      else s_tile[pad(j)] = __ldg(x + tile_lo + j);
    }
  }
  __syncthreads();
  /* this thread's elements and segments */
  const size_t t_lo = tile_lo + (size_t)threadIdx.x * ITEMS;
  const size_t t_hi = t_lo < tile_hi ? (tile_hi - t_lo < (size_t)ITEMS ? tile_hi : t_lo + ITEMS)
                                     : t_lo;
  const bool owns_end = t_lo < t_hi && t_hi == end; /* the empty segments at the end */
  size_t head_g = kNone, tail_g = kNone;
  Acc head_v = F::identity(), tail_v = F::identity();
  if (t_lo < t_hi) {
    const size_t hi_g = s_g1 + 1 < p.m ? s_g1 + 1 : p.m;
    for (size_t g = first_reaching(off, s_g0, hi_g, t_lo); g < p.m; ++g) {
      const size_t so = off.at(g), eo = off.at(g + 1);
      if (!(so < t_hi || (owns_end && so <= t_hi))) break;
      if (so < t_lo && eo <= t_lo) continue; /* ended at t_lo: the thread before owns it */
      const size_t a = so > t_lo ? so : t_lo, b = eo < t_hi ? eo : t_hi;
      Acc acc = F::identity();
      for (size_t i = a; i < b; ++i) acc = F::apply(acc, F::lift(s_tile[pad((int)(i - tile_lo))], i));
      if (so >= t_lo && eo <= t_hi) {
        F::store(p, g, acc);
      } else if (so < t_lo) {
        head_g = g;
        head_v = acc;
      } else {
        tail_g = g;
        tail_v = acc;
      }
    }
  }
  /* the records, compacted in thread order: exclusive scan of the counts */
  const int cnt = (head_g != kNone) + (tail_g != kNone);
  int incl = cnt;
  for (int d = 1; d < 32; d <<= 1) {
    const int o = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += o;
  }
  if (lane == 31) s_wsum[warp] = incl;
  __syncthreads();
  int before = 0, total = 0;
  for (int w = 0; w < kBlock / 32; ++w) {
    if (w < warp) before += s_wsum[w];
    total += s_wsum[w];
  }
  int at = before + incl - cnt;
  if (head_g != kNone) {
    s_rseg[at] = head_g;
    s_rval[at++] = head_v;
  }
  if (tail_g != kNone) {
    s_rseg[at] = tail_g;
    s_rval[at] = tail_v;
  }
  __syncthreads();
  if (warp == 0) {
    /* one warp: a segmented scan of the records by segment, in order; each run's last
     * record holds its segment's value in this tile.  A segment crossing the tile's
     * first edge (head) or last edge (tail) becomes this tile's record of it */
    size_t *rec_seg = p.rec_seg + 2 * (size_t)blockIdx.x;
    Acc *rec_val = static_cast<Acc *>(p.rec_val) + 2 * (size_t)blockIdx.x;
    if (lane == 0) rec_seg[0] = rec_seg[1] = kNone;
    __syncwarp();
    size_t carry_g = kNone;
    Acc carry_v = F::identity();
    for (int base = 0; base < total; base += 32) {
      const int r = base + lane;
      size_t g = r < total ? s_rseg[r] : kNone;
      Acc v = r < total ? s_rval[r] : F::identity();
      for (int d = 1; d < 32; d <<= 1) {
        const size_t og = __shfl_up_sync(0xffffffffu, g, d);
        const Acc ov = shfl_up(v, d);
        if (lane >= d && og == g) v = F::apply(ov, v);
      }
      if (carry_g == g && g != kNone) v = F::apply(carry_v, v);
      const bool run_end = r < total && (r + 1 == total || s_rseg[r + 1] != g);
      if (run_end) {
        if (off.at(g) >= tile_lo && off.at(g + 1) <= tile_hi) {
          F::store(p, g, v);
        } else {
          const int slot = off.at(g) < tile_lo ? 0 : 1;
          rec_seg[slot] = g;
          rec_val[slot] = v;
        }
      }
      carry_g = __shfl_sync(0xffffffffu, g, 31);
      carry_v = shfl_from(v, 31);
    }
    __threadfence(); /* the records, before the ticket */
    __syncwarp();
  }
  static_assert(sizeof s_tile >= kBlock * (16 + 2 * sizeof(Acc)), "crossing_records' room");
  tile_ticket<F>(p, used, s_tile);
}

/* ---- long segments: a warp per span of the work ---------------------------------------
 * Where the segments are long on average (kSpanMinMean), the tiles above cost more
 * than the data: every 16 KB tile is a short-lived block that looks its place up,
 * stages through shared memory and draws a ticket.  Here the work is cut into `spans`
 * equal spans, one per warp.  The work is the elements and the segments' ends in order
 * (merge-path style): segment g's elements, then its end, which counts as kSegCost
 * elements -- a walk costs a load's latency per segment, so a span of many short
 * segments gets fewer elements, and no warp walks more than about span / kSegCost
 * segments whatever the layout.  A warp finds where its span begins (a 32-way search, a
 * few dependent loads), then walks the segments meeting its span: each piece is folded
 * by the whole warp from 16-byte vectors (kSpanVectors in flight per lane, the reduce's
 * read path) plus scalar ends, and the warp's shuffles combine the lanes.  A segment
 * whose first element (or, empty, its end) and end both fall in the span is written; a
 * piece of one begun before the span is the span's head record, of one going on past it
 * its tail record, and the block that draws the last ticket folds the records in span
 * order (crossing_records, as the tiles' records): the same bits run to run on a device
 * (where the spans fall depends on its SM count).  The lanes take the elements strided,
 * so not for a fold that must take them in order (a float min / max: F::kOrdered); sums,
 * integer min / max and (value, index) pairs group freely. */
/* XPAR_SEG_SPANS=1 (CUDAFLAGS=-DXPAR_SEG_SPANS=1 at the first configure) turns the
 * span paths on; off until a GPU check and the segmented bench have run them
 * (docs/segmented.md): they are compiled either way. */
#ifndef XPAR_SEG_SPANS
#define XPAR_SEG_SPANS 0
#endif
constexpr bool kSpans = XPAR_SEG_SPANS != 0;
constexpr int kSpanWarps = kBlock / 32;
/* blocks an SM keeps (the register cap __launch_bounds__ asks for): the grid is this many
 * per SM at most, one wave */
constexpr int kSpanBlocksPerSM = 4;
constexpr int kSpanVectors = 4;
/* the host's choice: n / m at least this (below it the tiles' thread-level walk wins) */
constexpr size_t kSpanMinMean = 128;
/* elements per span at least (spans are also capped by the warps a grid keeps busy) */
constexpr size_t kSpanMinElements = 2048;
/* a segment's end, in elements of a span's work: about a dependent load's latency at a
 * warp's share of the bandwidth */
constexpr size_t kSegCost = 128;

/* The first g in [lo, hi) where yes(g) holds (yes is false, then true), or hi: the
 * whole warp searches, each round its 32 lanes probing 32 evenly spaced points. */
template <class Yes> __device__ size_t warp_first(size_t lo, size_t hi, const Yes &yes, int lane) {
  while (hi - lo > 32) {
    const size_t step = (hi - lo + 31) / 32;
    const size_t g = lo + (size_t)lane * step;
    const unsigned mask = __ballot_sync(0xffffffffu, g >= hi || yes(g)); /* past hi: true */
    if (!mask) { /* every probe false: the answer lies past the last one */
      lo += 31 * step + 1;
      continue;
    }
    const int f = __ffs(mask) - 1;
    if (f == 0) return lo;
    const size_t hi_new = lo + (size_t)f * step;
    lo = lo + (size_t)(f - 1) * step + 1;
    if (hi_new < hi) hi = hi_new;
  }
  const size_t g = lo + (size_t)lane;
  const unsigned mask = __ballot_sync(0xffffffffu, g < hi && yes(g));
  return mask ? lo + (size_t)(__ffs(mask) - 1) : hi;
}

/* The spans of the work: segment g begins at position at(g) = (off(g) - begin) + g *
 * kSegCost, its elements take the positions after it one each and its end kSegCost;
 * the work is at(m).  Span w is the positions [lo, hi). */
template <class Off> struct Spans {
  Off off;
  size_t begin, m, work, len, count;
  __device__ Spans(const Off &o, size_t m_, size_t spans) : off(o), m(m_), count(spans) {
    begin = off.at(0);
    work = off.at(m) - begin + m * kSegCost;
    len = (work + spans - 1) / spans;
  }
  /* span w's positions [*lo, *hi); false where it holds none */
  __device__ __forceinline__ bool bounds(size_t w, size_t *lo, size_t *hi) const {
    if (w >= count || w * len >= work) return false;
    *lo = w * len;
    *hi = work - *lo > len ? *lo + len : work;
    return true;
  }
  __device__ __forceinline__ size_t at(size_t g) const { return off.at(g) - begin + g * kSegCost; }
  /* the segment holding position d (d < work): the last g with at(g) <= d */
  __device__ size_t holding(size_t d, int lane) const {
    return warp_first(0, m, [&](size_t g) { return at(g + 1) > d; }, lane);
  }
};

/* A segment met by a span [lo, hi): where its piece lies and what the span owes it. */
struct SpanPiece {
  size_t a, b;  /* its elements in the span */
  bool starts;  /* its first position (its first element, or its end) is in the span */
  bool ends;    /* its end is */
};
/* Segment g = [so, eo) beginning at position pg, in the span [lo, hi) (pg < hi);
 * false where the span holds nothing of it (its end began before lo). */
__device__ __forceinline__ bool span_piece(size_t so, size_t eo, size_t pg, size_t lo, size_t hi,
                                           SpanPiece *q) {
  const size_t pend = pg + (eo - so); /* where its end begins */
  if (pend < lo) return false;
  q->starts = pg >= lo;
  q->ends = pend < hi;
  q->a = so + (q->starts ? 0 : lo - pg);
  q->b = so + (q->ends ? eo - so : hi - pg);
  return true;
}

/* The walk of a warp's span [lo, hi): f(g, q) for each segment g meeting it, in order,
 * with its piece q (possibly empty); every lane calls f alike.  The offsets are read 32
 * at a time: lane k holds off.at(base + k). */
template <class Off, class Fn>
__device__ __forceinline__ void span_walk(const Spans<Off> &sp, size_t lo, size_t hi, int lane,
                                          Fn &&f) {
  size_t g = sp.holding(lo, lane);
  size_t base = g;
  size_t o = sp.off.at(base + lane < sp.m ? base + lane : sp.m);
  for (; g < sp.m; ++g) {
    if (g - base == 31) {
      base = g;
      o = sp.off.at(base + lane < sp.m ? base + lane : sp.m);
    }
    const size_t so = __shfl_sync(0xffffffffu, o, (int)(g - base));
    const size_t eo = __shfl_sync(0xffffffffu, o, (int)(g - base) + 1);
    const size_t pg = so - sp.begin + g * kSegCost;
    if (pg >= hi) break;
    SpanPiece q;
    if (span_piece(so, eo, pg, lo, hi, &q)) f(g, q);
  }
}

/* The elements of x[a, b) before the first 16-byte boundary (all of them if none). */
template <class T> __device__ __forceinline__ size_t lead_elements(const T *x, size_t a, size_t b) {
  const size_t head = (size_t)((16 - ((uintptr_t)(x + a) & 15)) & 15) / sizeof(T);
  return head < b - a ? head : b - a;
}

/* The warp's fold of x[a, b), in lane 0: the scalar head before the first 16-byte
 * boundary, whole vectors strided over the lanes, the scalar tail. */
template <class T, class F>
__device__ __forceinline__ typename F::Acc warp_piece(const T *x, size_t a, size_t b, int lane,
                                                      bool streaming) {
  using Acc = typename F::Acc;
  constexpr int PER = Pack16<T>::count;
  Acc acc = F::identity();
  const size_t head = lead_elements(x, a, b);
  if ((size_t)lane < head) acc = F::lift(__ldg(x + a + lane), a + lane);
  const size_t va = a + head, vectors = (b - va) / PER;
  const T *xv = x + va;
  size_t v = (size_t)lane;
  for (; v + (kSpanVectors - 1) * 32 < vectors; v += kSpanVectors * 32) {
    Pack16<T> l[kSpanVectors];
#pragma unroll
    for (int u = 0; u < kSpanVectors; ++u) l[u].raw = load16_readonly(xv + (v + u * 32) * PER, streaming);
#pragma unroll
    for (int u = 0; u < kSpanVectors; ++u)
#pragma unroll
      for (int e = 0; e < PER; ++e)
        acc = F::apply(acc, F::lift(l[u].e[e], va + (v + u * 32) * PER + e));
  }
  for (; v < vectors; v += 32) {
    Pack16<T> l;
    l.raw = load16_readonly(xv + v * PER, streaming);
#pragma unroll
    for (int e = 0; e < PER; ++e) acc = F::apply(acc, F::lift(l.e[e], va + v * PER + e));
  }
  const size_t tail = va + vectors * PER + (size_t)lane;
  if (tail < b) acc = F::apply(acc, F::lift(__ldg(x + tail), tail));
  for (int d = 16; d > 0; d >>= 1) acc = F::apply(acc, shfl_down(acc, d));
  return acc;
}

template <class T, class F, class Off>
__global__ void __launch_bounds__(kBlock, kSpanBlocksPerSM) seg_span_kernel(SegParams p, Off off, size_t spans) {
  using Acc = typename F::Acc;
  __shared__ __align__(16) unsigned char s_fold[kBlock * (16 + 2 * sizeof(Acc))];
  if (offsets_bad(p.check)) return;
  const T *x = static_cast<const T *>(p.in);
  const size_t begin = off.at(0), end = off.at(p.m);
  if (begin == end) { /* no elements: every segment the identity */
    if (blockIdx.x == 0)
      for (size_t g = threadIdx.x; g < p.m; g += blockDim.x) F::store(p, g, F::identity());
    return;
  }
  const int lane = threadIdx.x % 32;
  const size_t w = (size_t)blockIdx.x * kSpanWarps + threadIdx.x / 32;
  const Spans<Off> sp(off, p.m, spans);
  size_t head_g = kNone, tail_g = kNone; /* the span's records */
  Acc head_v = F::identity(), tail_v = F::identity();
  size_t lo, hi;
  if (sp.bounds(w, &lo, &hi))
    span_walk(sp, lo, hi, lane, [&](size_t g, const SpanPiece &q) {
      const Acc acc = warp_piece<T, F>(x, q.a, q.b, lane, p.streaming);
      if (q.starts && q.ends) {
        if (lane == 0) F::store(p, g, acc);
      } else if (!q.starts) { /* began before the span: a head */
        head_g = g;
        head_v = acc;
      } else { /* goes on after it: a tail */
        tail_g = g;
        tail_v = acc;
      }
    });
  if (w < spans && lane == 0) {
    p.rec_seg[2 * w] = head_g;
    p.rec_seg[2 * w + 1] = tail_g;
    static_cast<Acc *>(p.rec_val)[2 * w] = head_v;
    static_cast<Acc *>(p.rec_val)[2 * w + 1] = tail_v;
    __threadfence(); /* the records, before the ticket */
  }
  __syncthreads();
  __shared__ bool s_last;
  if (threadIdx.x == 0) s_last = gridDim.x == 1 || atomicAdd(p.ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  crossing_records<F>(p, 2 * spans, s_fold);
  if (threadIdx.x == 0) *p.ticket = 0; /* for the next call */
}

/* ---- segmented scan, balanced by elements ---------------------------------------------
 * The reduce's tiles, in three launches:
 *  1. seg_scan_tail_kernel: each tile's last segment piece (the segment holding its last
 *     element, from that segment's start or the tile's) reduced, with the segment;
 *  2. seg_scan_carry_kernel (one block): a segmented scan of those over the tiles gives
 *     each tile the carry of the segment holding its first element (the identity when
 *     that segment starts in the tile);
 *  3. seg_scan_tile_kernel: each tile in shared memory; each thread reduces its last
 *     piece, a block-wide segmented scan of those (keyed by segment, the tile's carry
 *     first) gives each thread the carry of its first segment, and the thread scans its
 *     elements in order into the tile, which is stored with coalesced stores.
 * Reads the input twice (steps 1 and 3) and writes it once.  In place is safe: every
 * tile is read by step 1 before step 3 writes any, and step 3 reads its own tile whole
 * before writing it. */

/* (k1, v1) then (k2, v2): the segmented operator over records sorted by segment. */
template <class T, class Op>
__device__ __forceinline__ void seg_fold(size_t k1, T v1, size_t k2, T &v2) {
  if (k1 == k2) v2 = Op::apply(v1, v2);
}

/* Block-wide exclusive segmented scan of (key, val) in thread order, after (in_key,
 * in_val): *ek, *ev for this thread.  Keys must not decrease with the thread index. */
template <class T, class Op>
__device__ void block_seg_scan_excl(size_t key, T val, size_t in_key, T in_val, size_t *ek,
                                    T *ev) {
  __shared__ size_t s_k[kBlock / 32];
  __shared__ T s_v[kBlock / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T v = val;
  for (int d = 1; d < 32; d <<= 1) {
    const size_t ok = __shfl_up_sync(0xffffffffu, key, d);
    const T ov = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) seg_fold<T, Op>(ok, ov, key, v);
  }
  if (lane == 31) {
    s_k[warp] = key;
    s_v[warp] = v;
  }
  __syncthreads();
  size_t pk = in_key; /* the prefix before this warp */
  T pv = in_val;
  for (int w = 0; w < warp; ++w) {
    T tv = s_v[w];
    seg_fold<T, Op>(pk, pv, s_k[w], tv);
    pk = s_k[w];
    pv = tv;
  }
  size_t lk = __shfl_up_sync(0xffffffffu, key, 1); /* the lane before: its inclusive */
  T lv = __shfl_up_sync(0xffffffffu, v, 1);
  if (lane == 0) {
    *ek = pk;
    *ev = pv;
  } else {
    seg_fold<T, Op>(pk, pv, lk, lv);
    *ek = lk;
    *ev = lv;
  }
  __syncthreads(); /* s_k, s_v reused by the next call */
}

struct ScanScratch {
  size_t *tail_seg; /* per tile */
  void *tail_val;
  void *carry;
};

template <class T, class Op, class Off>
__global__ void __launch_bounds__(kBlock) seg_scan_tail_kernel(SegParams p, Off off,
                                                               ScanScratch sc) {
  if (offsets_bad(p.check)) return;
  constexpr int ITEMS = seg_items<T>();
  constexpr int TILE = kBlock * ITEMS;
  __shared__ size_t s_g;
  __shared__ size_t s_lo;
  const size_t begin = off.at(0), end = off.at(p.m);
  const size_t tile_lo = begin + (size_t)blockIdx.x * TILE;
  if (tile_lo >= end) return;
  const size_t tile_hi = end - tile_lo < (size_t)TILE ? end : tile_lo + TILE;
  if (threadIdx.x == 0) {
    const size_t g = p.reach[blockIdx.x + 1]; /* holds tile_hi - 1 */
    s_g = g;
    const size_t so = off.at(g);
    s_lo = so > tile_lo ? so : tile_lo;
  }
  __syncthreads();
  const T *x = static_cast<const T *>(p.in);
  const size_t lo = s_lo;
  T acc = Op::identity();
  /* A float min / max folds in element order, as the serial tiers do (the first of
   * -0.0 and +0.0 wins): the piece through shared memory, each thread a contiguous
   * ITEMS of it.  Sums and integers take the strided loads (any order is theirs). */
  constexpr bool kOrdered = std::is_floating_point<T>::value && !std::is_same<Op, SumOp<T>>::value;
  if constexpr (kOrdered) {
    __shared__ T s_piece[TILE + TILE / 32];
    const int len = (int)(tile_hi - lo);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = (int)threadIdx.x + k * kBlock;
      if (j < len) s_piece[pad(j)] = __ldg(x + lo + j);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = (int)threadIdx.x * ITEMS + k;
      if (j < len) acc = Op::apply(acc, s_piece[pad(j)]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const size_t i = lo + threadIdx.x + (size_t)k * kBlock;
      if (i < tile_hi) acc = Op::apply(acc, __ldg(x + i));
    }
  }
  /* the block's fold of the piece, in thread 0: lane 0 folds lanes [0, 2d) at step d
   * (d rising: in lane order, which the float min / max needs), then the warps in order */
  __shared__ T s_w[kBlock / 32];
  for (int d = 1; d < 32; d <<= 1) acc = Op::apply(acc, __shfl_down_sync(0xffffffffu, acc, d));
  if (threadIdx.x % 32 == 0) s_w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    T t = s_w[0];
    for (int w = 1; w < kBlock / 32; ++w) t = Op::apply(t, s_w[w]);
    sc.tail_seg[blockIdx.x] = s_g;
    static_cast<T *>(sc.tail_val)[blockIdx.x] = t;
  }
}

/* One block: carry[k] for every tile k (the identity for tile 0). */
template <class T, class Op, class Off>
__global__ void __launch_bounds__(kBlock) seg_scan_carry_kernel(SegParams p, Off off,
                                                                ScanScratch sc, size_t tiles,
                                                                size_t tile) {
  if (offsets_bad(p.check)) return;
  const size_t begin = off.at(0), end = off.at(p.m);
  /* tile 0: the spans of the work (Spans), `tiles` of them */
  const Spans<Off> sp(off, p.m, tiles ? tiles : 1);
  const size_t len = tile ? tile : sp.len;
  const size_t used = tile ? (end > begin ? (end - begin + tile - 1) / tile : 0)
                           : (sp.work + len - 1) / len;
  if (used < tiles) tiles = used;
  const T *tv = static_cast<const T *>(sc.tail_val);
  T *carry = static_cast<T *>(sc.carry);
  /* each thread a contiguous chunk of the tiles */
  const size_t per = (tiles + kBlock - 1) / kBlock;
  const size_t c_lo = (size_t)threadIdx.x * per;
  const size_t c_hi = c_lo + per < tiles ? c_lo + per : tiles;
  size_t k_agg = kNone;
  T v_agg = Op::identity();
#pragma unroll 8
  for (size_t k = c_lo; k < c_hi; ++k) {
    T v = tv[k];
    seg_fold<T, Op>(k_agg, v_agg, sc.tail_seg[k], v);
    k_agg = sc.tail_seg[k];
    v_agg = v;
  }
  size_t ek;
  T ev;
  block_seg_scan_excl<T, Op>(k_agg, v_agg, kNone, Op::identity(), &ek, &ev);
  /* again, from the carry-in: carry[k + 1] from the inclusive value at k */
  size_t kk = ek;
  T vv = ev;
  if (threadIdx.x == 0 && tiles > 0) carry[0] = Op::identity();
#pragma unroll 8
  for (size_t k = c_lo; k < c_hi; ++k) {
    T v = tv[k];
    seg_fold<T, Op>(kk, vv, sc.tail_seg[k], v);
    kk = sc.tail_seg[k];
    vv = v;
    if (k + 1 < tiles) {
      /* does the tail's segment go on into the next tile (span)? */
      const bool on = tile ? off.at(kk + 1) > begin + (k + 1) * tile
                           : off.at(kk + 1) - begin + kk * kSegCost >= (k + 1) * len;
      carry[k + 1] = on ? vv : Op::identity();
    }
  }
}

template <class T, class Op, class Off>
__global__ void __launch_bounds__(kBlock) seg_scan_tile_kernel(SegParams p, Off off,
                                                               ScanScratch sc) {
  if (offsets_bad(p.check)) return;
  constexpr int ITEMS = seg_items<T>();
  constexpr int TILE = kBlock * ITEMS;
  __shared__ T s_tile[TILE + TILE / 32];
  __shared__ size_t s_g0, s_g1;
  const T *x = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t begin = off.at(0), end = off.at(p.m);
  const size_t tile_lo = begin + (size_t)blockIdx.x * TILE;
  if (tile_lo >= end) return;
  const size_t tile_hi = end - tile_lo < (size_t)TILE ? end : tile_lo + TILE;
  const int len = (int)(tile_hi - tile_lo);
  if (threadIdx.x == 0) s_g0 = p.hold[blockIdx.x]; /* holds tile_lo */
  if (threadIdx.x == 32) s_g1 = p.reach[blockIdx.x + 1];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = (int)threadIdx.x + k * kBlock;
    if (j < len) s_tile[pad(j)] = __ldg(x + tile_lo + j);
  }
  __syncthreads();
  const size_t t_lo = tile_lo + (size_t)threadIdx.x * ITEMS;
  const size_t t_hi = t_lo < tile_hi ? (tile_hi - t_lo < (size_t)ITEMS ? tile_hi : t_lo + ITEMS)
                                     : t_lo;
  const size_t hi_g = s_g1 + 1 < p.m ? s_g1 + 1 : p.m;
  /* the thread's first and last segment (those holding t_lo and t_hi - 1) and the
   * reduction of its last piece */
  size_t g_first = kNone, g_last = kNone;
  T last_v = Op::identity();
  if (t_lo < t_hi) {
    g_first = first_reaching(off, s_g0, hi_g, t_lo + 1);
    g_last = first_reaching(off, g_first, hi_g, t_hi);
    const size_t so = off.at(g_last);
    for (size_t i = so > t_lo ? so : t_lo; i < t_hi; ++i)
      last_v = Op::apply(last_v, s_tile[pad((int)(i - tile_lo))]);
  }
  const size_t in_key = s_g0;
  const T in_val = static_cast<const T *>(sc.carry)[blockIdx.x];
  size_t ek;
  T ev;
  block_seg_scan_excl<T, Op>(g_last, last_v, in_key, in_val, &ek, &ev);
  if (t_lo < t_hi) {
    T acc = ek == g_first && off.at(g_first) < t_lo ? ev : Op::identity();
    size_t g = g_first;
    size_t seg_end = off.at(g + 1);
    for (size_t i = t_lo; i < t_hi; ++i) {
      while (i >= seg_end) { /* the next segment holding i (empty ones skipped) */
        ++g;
        seg_end = off.at(g + 1);
        acc = Op::identity();
      }
      const int j = pad((int)(i - tile_lo));
      const T v = s_tile[j];
      if (p.exclusive) {
        s_tile[j] = acc;
        acc = Op::apply(acc, v);
      } else {
        acc = Op::apply(acc, v);
        s_tile[j] = acc;
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = (int)threadIdx.x + k * kBlock;
    if (j < len) out[tile_lo + j] = s_tile[pad(j)];
  }
}

/* ---- segmented scan of long segments: a warp per span ---------------------------------
 * Where the segments are long on average (kSpanMinMean), the scan takes the reduce's
 * spans of the work (Spans: elements and segment ends, one span per warp) in three
 * launches:
 *  1. seg_span_tail_kernel: each span's last segment piece, where that segment goes on
 *     past the span (from its start or the span's), folded in element order by the
 *     warp -- a piece, not the span: segments shorter than the span cost a fraction of
 *     it, and one ending in the span costs nothing;
 *  2. seg_scan_carry_kernel over the spans (one block): each span's carry;
 *  3. seg_span_scan_kernel: each warp walks its span's segments and scans each piece
 *     from its carry (the span's for a segment begun before it, else the identity):
 *     lane j takes the j-th 16-byte vector of each 32, scans it in registers, and the
 *     lanes' totals are scanned by shuffles in lane order, so every output is its
 *     prefix folded in element order (a float min / max keeps the first of equal
 *     values as the serial tiers do).
 * Reads the input once plus the spans' last pieces, writes it once.  In place is safe:
 * step 1 reads before step 3 writes, and a warp reads its elements before it writes
 * them and touches no other span.  out need not lie as in does against 16 bytes: the
 * vectors are stored whole only where it does. */

/* Inclusive scan of v over the lanes, in lane order. */
template <class T, class Op> __device__ __forceinline__ T warp_scan_incl(T v, int lane) {
  for (int d = 1; d < 32; d <<= 1) {
    const T o = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v = Op::apply(o, v);
  }
  return v;
}

/* The warp's fold of x[a, b) in element order, in lane 0: vectors of 32 lanes, each
 * group of 32 folded by a halving tree in lane order (d rising), the groups in order;
 * the scalar head first and the tail last. */
template <class T, class Op>
__device__ T warp_piece_ordered(const T *x, size_t a, size_t b, int lane, bool streaming) {
  constexpr int PER = Pack16<T>::count;
  const size_t head = lead_elements(x, a, b);
  auto fold_lanes = [&](T v) {
    for (int d = 1; d < 32; d <<= 1) {
      const T o = __shfl_down_sync(0xffffffffu, v, d);
      if (lane + d < 32) v = Op::apply(v, o);
    }
    return v; /* lane 0: lanes 0..31 in order */
  };
  T acc = fold_lanes((size_t)lane < head ? __ldg(x + a + lane) : Op::identity());
  const size_t va = a + head, vectors = (b - va) / PER;
  const T *xv = x + va;
  for (size_t c = 0; c < vectors; c += 32 * kSpanVectors) {
    Pack16<T> l[kSpanVectors];
#pragma unroll
    for (int u = 0; u < kSpanVectors; ++u) {
      const size_t v = c + (size_t)u * 32 + lane;
      if (v < vectors) l[u].raw = load16_readonly(xv + v * PER, streaming);
    }
#pragma unroll
    for (int u = 0; u < kSpanVectors; ++u) {
      const size_t v = c + (size_t)u * 32 + lane;
      T t = Op::identity();
      if (v < vectors)
#pragma unroll
        for (int e = 0; e < PER; ++e) t = Op::apply(t, l[u].e[e]);
      acc = Op::apply(acc, fold_lanes(t));
    }
  }
  const size_t tail = va + vectors * PER + (size_t)lane;
  return Op::apply(acc, fold_lanes(tail < b ? __ldg(x + tail) : Op::identity()));
}

template <class T, class Op, class Off>
__global__ void __launch_bounds__(kBlock, kSpanBlocksPerSM)
    seg_span_tail_kernel(SegParams p, Off off, ScanScratch sc, size_t spans) {
  if (offsets_bad(p.check)) return;
  const int lane = threadIdx.x % 32;
  const size_t w = (size_t)blockIdx.x * kSpanWarps + threadIdx.x / 32;
  const Spans<Off> sp(off, p.m, spans);
  size_t lo, hi;
  if (!sp.bounds(w, &lo, &hi)) return;
  const size_t g = sp.holding(hi - 1, lane);
  const size_t so = off.at(g), eo = off.at(g + 1), pg = sp.at(g);
  T t = Op::identity(); /* a segment ending in the span carries nothing on */
  if (pg + (eo - so) >= hi)
    t = warp_piece_ordered<T, Op>(static_cast<const T *>(p.in), so + (pg < lo ? lo - pg : 0),
                                  so + (hi - pg), lane, p.streaming);
  if (lane == 0) {
    sc.tail_seg[w] = g;
    static_cast<T *>(sc.tail_val)[w] = t;
  }
}

template <class T, class Op, class Off>
__global__ void __launch_bounds__(kBlock, kSpanBlocksPerSM)
    seg_span_scan_kernel(SegParams p, Off off, ScanScratch sc, size_t spans) {
  if (offsets_bad(p.check)) return;
  constexpr int PER = Pack16<T>::count;
  const int lane = threadIdx.x % 32;
  const size_t w = (size_t)blockIdx.x * kSpanWarps + threadIdx.x / 32;
  const Spans<Off> sp(off, p.m, spans);
  size_t lo, hi;
  if (!sp.bounds(w, &lo, &hi)) return;
  const T *x = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const bool excl = p.exclusive != 0;
  const T span_carry = static_cast<const T *>(sc.carry)[w];
  span_walk(sp, lo, hi, lane, [&](size_t, const SpanPiece &q) {
    if (q.a == q.b) return;
    const size_t a = q.a, b = q.b;
    T c = q.starts ? Op::identity() : span_carry; /* the prefix before x[a], every lane */
    /* a run of fewer than 32 scalars (the head before the first 16-byte boundary, the
     * tail): lane k scans x[at + k] */
    auto scalars = [&](size_t at, size_t count) {
      const T v = (size_t)lane < count ? x[at + lane] : Op::identity();
      const T incl = warp_scan_incl<T, Op>(v, lane);
      const T before = __shfl_up_sync(0xffffffffu, incl, 1);
      if ((size_t)lane < count)
        out[at + lane] = excl ? (lane ? Op::apply(c, before) : c) : Op::apply(c, incl);
      c = Op::apply(c, __shfl_sync(0xffffffffu, incl, 31));
    };
    const size_t head = lead_elements(x, a, b);
    if (head) scalars(a, head);
    const size_t va = a + head, vectors = (b - va) / PER;
    const T *xv = x + va;
    T *ov = out + va;
    const bool whole = ((uintptr_t)ov & 15) == 0; /* out lies as in does: store vectors */
    for (size_t c0 = 0; c0 < vectors; c0 += 32 * kSpanVectors) {
      Pack16<T> l[kSpanVectors];
#pragma unroll
      for (int u = 0; u < kSpanVectors; ++u) {
        const size_t v = c0 + (size_t)u * 32 + lane;
        if (v < vectors) l[u].raw = load16_readonly(xv + v * PER, p.streaming);
      }
#pragma unroll
      for (int u = 0; u < kSpanVectors; ++u) {
        const size_t v = c0 + (size_t)u * 32 + lane;
        if (c0 + (size_t)u * 32 >= vectors) break; /* warp-uniform */
        T t = Op::identity();
        if (v < vectors)
#pragma unroll
          for (int e = 0; e < PER; ++e) t = Op::apply(t, l[u].e[e]);
        const T incl = warp_scan_incl<T, Op>(t, lane);
        const T before = __shfl_up_sync(0xffffffffu, incl, 1);
        T run = lane ? Op::apply(c, before) : c; /* the prefix before this vector */
        if (v < vectors) {
          Pack16<T> r;
#pragma unroll
          for (int e = 0; e < PER; ++e) {
            const T nx = Op::apply(run, l[u].e[e]);
            r.e[e] = excl ? run : nx;
            run = nx;
          }
          if (whole) {
            *reinterpret_cast<int4 *>(ov + v * PER) = r.raw;
          } else {
#pragma unroll
            for (int e = 0; e < PER; ++e) ov[v * PER + e] = r.e[e];
          }
        }
        c = Op::apply(c, __shfl_sync(0xffffffffu, incl, 31));
      }
    }
    const size_t tail = va + vectors * PER;
    if (tail < b) scalars(tail, b - tail);
  });
}

/* ---- the host side -------------------------------------------------------------------- */

const char *seg_name(const xpar__seg_spec *s) {
  switch (s->kind) {
    case XPAR__SEG_REDUCE: return "segmented reduce";
    case XPAR__SEG_SCAN: return "segmented scan";
    default: return s->op == XPAR_MAX ? "argmax" : "argmin";
  }
}

/* Threads for a grid-stride kernel over `work` items. */
unsigned grid_for(const xpar__cuda_state *st, size_t work) {
  size_t g = (work + kBlock - 1) / kBlock;
  const size_t cap = (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1) * 8;
  if (g > cap) g = cap;
  return (unsigned)(g ? g : 1);
}

/* seg_span_kernel's spans for `elems` elements: kSpanMinElements each at least, and no
 * more than the warps one wave of the grid holds. */
size_t span_count(const xpar__cuda_state *st, size_t elems) {
  size_t spans = elems / kSpanMinElements;
  const size_t cap =
      (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1) * kSpanBlocksPerSM * kSpanWarps;
  if (spans > cap) spans = cap;
  return spans ? spans : 1;
}

/* seg_bounds_kernel over the tiles' edges; p.reach and p.hold set (the first (tiles + 1) *
 * 16 bytes of the partials). */
template <class Off>
xpar_status launch_bounds(xpar__cuda_state *st, SegParams &p, Off off, size_t tile,
                          size_t tiles) {
  size_t *reach = static_cast<size_t *>(p.partials), *hold = reach + tiles + 1;
  p.reach = reach;
  p.hold = hold;
  size_t tl = tile, nt = tiles;
  void *args[] = {&p, &off, &tl, &nt, &reach, &hold};
  return xpar__cuda_launch(st, (const void *)seg_bounds_kernel<Off>, NULL,
                           (unsigned)((tiles + 1 + kBlock - 1) / kBlock), kBlock, 0, args,
                           "segmented (tile bounds)");
}

template <class T, class Op, class Off>
xpar_status run_typed(const xpar__exec *ex, const xpar__seg_spec *s, SegParams &p, Off off) {
  xpar__cuda_state *st = ex->cuda;
  const char *name = seg_name(s);
  if constexpr (std::is_floating_point<T>::value && std::is_same<Op, SumOp<T>>::value) {
    if (ex->reproducible && s->kind != XPAR__SEG_ARGREDUCE) {
      void *args[] = {&p, &off};
      const void *kernel = s->kind == XPAR__SEG_SCAN
                               ? (const void *)repro_segment_kernel<T, Off, XPAR__SEG_SCAN>
                               : (const void *)repro_segment_kernel<T, Off, XPAR__SEG_REDUCE>;
      return xpar__cuda_launch(st, kernel, NULL, ex->serial ? 1u : grid_for(st, s->n_segments),
                               ex->serial ? 1u : (unsigned)kBlock, 0, args, name);
    }
  }
  if (s->kind == XPAR__SEG_SCAN && !ex->serial) {
    const size_t tile = (size_t)kBlock * seg_items<T>();
    const size_t span = s->offsets ? s->n : s->segment_size * s->n_segments;
    size_t tiles = (span + tile - 1) / tile;
    if (tiles == 0) return XPAR_OK; /* no elements: a scan writes nothing */
    if (kSpans && span / s->n_segments >= kSpanMinMean) { /* long segments: a warp per span */
      size_t spans = span_count(st, span), spans_mode = 0;
      unsigned char *base = static_cast<unsigned char *>(p.partials);
      ScanScratch sc;
      sc.tail_seg = reinterpret_cast<size_t *>(base);
      sc.tail_val = base + spans * 8;
      sc.carry = base + spans * 16;
      const unsigned grid = (unsigned)((spans + kSpanWarps - 1) / kSpanWarps);
      void *args[] = {&p, &off, &sc, &spans};
      XPAR__FORWARD(xpar__cuda_launch(st, (const void *)seg_span_tail_kernel<T, Op, Off>, NULL,
                                      grid, kBlock, 0, args, "segmented scan (span tails)"));
      void *cargs[] = {&p, &off, &sc, &spans, &spans_mode};
      XPAR__FORWARD(xpar__cuda_launch(st, (const void *)seg_scan_carry_kernel<T, Op, Off>, NULL,
                                      1, kBlock, 0, cargs, "segmented scan (carries)"));
      return xpar__cuda_launch(st, (const void *)seg_span_scan_kernel<T, Op, Off>, NULL, grid,
                               kBlock, 0, args, name);
    }
    XPAR__RETURN_IF(tiles > 0x7fffffffu, XPAR_ERR_NOT_SUPPORTED,
                    "%s: %zu elements need %zu tiles, more than a grid holds", name, span, tiles);
    XPAR__FORWARD(launch_bounds(st, p, off, tile, tiles));
    unsigned char *base = static_cast<unsigned char *>(p.partials) + (tiles + 1) * 16;
    ScanScratch sc;
    sc.tail_seg = reinterpret_cast<size_t *>(base);
    sc.tail_val = base + tiles * 8;
    sc.carry = base + tiles * 16;
    void *args[] = {&p, &off, &sc};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)seg_scan_tail_kernel<T, Op, Off>, NULL,
                                    (unsigned)tiles, kBlock, 0, args, "segmented scan (tails)"));
    size_t tile_len = tile;
    void *cargs[] = {&p, &off, &sc, &tiles, &tile_len};
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)seg_scan_carry_kernel<T, Op, Off>, NULL, 1,
                                    kBlock, 0, cargs, "segmented scan (carries)"));
    return xpar__cuda_launch(st, (const void *)seg_scan_tile_kernel<T, Op, Off>, NULL,
                             (unsigned)tiles, kBlock, 0, args, name);
  }
  constexpr bool MAX = std::is_same<Op, MaxOp<T>>::value; /* argmax */
  /* the whole-array argmin / argmax (no offsets: xpar_argmin's one segment [0, n)); a
   * per-segment call with one segment of offsets takes the tiles below, which read its
   * bounds, its empty case and the offsets' verdict */
  if (s->kind == XPAR__SEG_ARGREDUCE && !ex->serial && s->n_segments == 1 && !s->offsets) {
    const unsigned grid =
        grid_for(st, (s->n + (size_t)arg_unroll<T>() - 1) / (size_t)arg_unroll<T>());
    void *args[] = {&p};
    return xpar__cuda_launch(st, (const void *)arg_kernel<T, MAX>, NULL, grid, kBlock, 0, args,
                             name);
  }
  if (ex->serial) { /* grid = block = 1: segment by segment, element order */
    void *args[] = {&p, &off};
    const unsigned grid = 1, block = 1;
    switch (s->kind) {
      case XPAR__SEG_REDUCE:
        return xpar__cuda_launch(st, (const void *)per_segment_kernel<T, Op, Off, XPAR__SEG_REDUCE>,
                                 NULL, grid, block, 0, args, name);
      case XPAR__SEG_SCAN:
        return xpar__cuda_launch(st, (const void *)per_segment_kernel<T, Op, Off, XPAR__SEG_SCAN>,
                                 NULL, grid, block, 0, args, name);
      default:
        return xpar__cuda_launch(
            st, (const void *)per_segment_kernel<T, Op, Off, XPAR__SEG_ARGREDUCE>, NULL, grid,
            block, 0, args, name);
    }
  }
  /* long segments on average (n / m): a warp per span */
  const size_t elems = s->offsets ? s->n : s->segment_size * s->n_segments;
  if (kSpans && elems / s->n_segments >= kSpanMinMean) {
    const size_t spans = span_count(st, elems);
    p.rec_seg = static_cast<size_t *>(p.partials);
    p.rec_val = static_cast<unsigned char *>(p.partials) + 2 * spans * 8;
    const unsigned grid = (unsigned)((spans + kSpanWarps - 1) / kSpanWarps);
    size_t sp = spans;
    void *args[] = {&p, &off, &sp};
    if constexpr (!std::is_same<Op, SumOp<T>>::value) {
      if (s->kind == XPAR__SEG_ARGREDUCE)
        return xpar__cuda_launch(st, (const void *)seg_span_kernel<T, ArgFold<T, MAX>, Off>, NULL,
                                 grid, kBlock, 0, args, name);
    }
    if constexpr (!ValueFold<T, Op>::kOrdered) {
      if (s->kind == XPAR__SEG_REDUCE)
        return xpar__cuda_launch(st, (const void *)seg_span_kernel<T, ValueFold<T, Op>, Off>,
                                 NULL, grid, kBlock, 0, args, name);
    }
  }
  /* the balanced reduce and argmin / argmax: tiles sized for n (the kernels read where
   * the segments begin and end, and the tiles past them return at once) */
  const size_t tile = (size_t)kBlock * seg_items<T>();
  const size_t span = s->offsets ? s->n : s->segment_size * s->n_segments;
  const size_t tiles = span ? (span + tile - 1) / tile : 1;
  XPAR__RETURN_IF(tiles > 0x7fffffffu, XPAR_ERR_NOT_SUPPORTED,
                  "%s: %zu elements need %zu tiles, more than a grid holds", name, span, tiles);
  XPAR__FORWARD(launch_bounds(st, p, off, tile, tiles));
  unsigned char *records = static_cast<unsigned char *>(p.partials) + (tiles + 1) * 16;
  p.rec_seg = reinterpret_cast<size_t *>(records);
  p.rec_val = records + 2 * tiles * 8;
  void *args[] = {&p, &off};
  if constexpr (!std::is_same<Op, SumOp<T>>::value) {
    if (s->kind == XPAR__SEG_ARGREDUCE)
      return xpar__cuda_launch(st, (const void *)seg_tile_kernel<T, ArgFold<T, MAX>, Off>, NULL,
                               (unsigned)tiles, kBlock, 0, args, name);
  } else if (s->kind == XPAR__SEG_ARGREDUCE) {
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: a sum has no argument", name);
  }
  return xpar__cuda_launch(st, (const void *)seg_tile_kernel<T, ValueFold<T, Op>, Off>, NULL,
                           (unsigned)tiles, kBlock, 0, args, name);
}

template <class T, class Off>
xpar_status run_op(const xpar__exec *ex, const xpar__seg_spec *s, SegParams &p, Off off) {
  switch (s->op) {
    case XPAR_SUM: return run_typed<T, SumOp<T>, Off>(ex, s, p, off);
    case XPAR_MIN: return run_typed<T, MinOp<T>, Off>(ex, s, p, off);
    default: return run_typed<T, MaxOp<T>, Off>(ex, s, p, off);
  }
}

template <class T> xpar_status run_dtype(const xpar__exec *ex, const xpar__seg_spec *s, SegParams &p) {
  if (!s->offsets) return run_op<T, OffFixed>(ex, s, p, OffFixed{s->segment_size});
  if (s->offset_dtype == XPAR_INT32)
    return run_op<T, OffArray<int32_t>>(ex, s, p, OffArray<int32_t>{(const int32_t *)s->offsets});
  return run_op<T, OffArray<int64_t>>(ex, s, p, OffArray<int64_t>{(const int64_t *)s->offsets});
}

/* The detail of a refused call: the first bad offset and its neighbour, read back. */
xpar_status refuse_offsets(xpar__cuda_state *st, const xpar__seg_spec *s, unsigned long long word,
                           const char *name) {
  const size_t i = (size_t)(~0ull - word);
  const size_t w = s->offset_dtype == XPAR_INT32 ? 4 : 8;
  long long v[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    if (i == 0 && k == 0) continue;
    const size_t at = i - 1 + (size_t)k;
    int64_t raw = 0;
    XPAR_CUDA_TRY(cudaMemcpyAsync(&raw, (const char *)s->offsets + at * w, w,
                                  cudaMemcpyDeviceToHost, st->stream),
                  "%s: reading a bad offset", name);
    XPAR__FORWARD(xpar__cuda_sync(st, name));
    v[k] = w == 4 ? (long long)(int32_t)raw : (long long)raw;
  }
  if (i == 0)
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "offsets[0] = %lld is negative; nothing written",
                      v[1]);
  if (v[1] < v[0])
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "offsets[%zu] = %lld is below offsets[%zu] = %lld: offsets must not "
                      "decrease; nothing written",
                      i, v[1], i - 1, v[0]);
  return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                    "offsets[%zu] = %lld is past the end of in (n = %zu); nothing written", i,
                    v[1], s->n);
}

xpar_status segmented_run(const xpar__exec *ex, const xpar__seg_spec *s) {
  xpar__cuda_state *st = ex->cuda;
  const char *name = seg_name(s);
  const bool check = s->offsets != NULL;
  const bool arg_grid =
      s->kind == XPAR__SEG_ARGREDUCE && !ex->serial && s->n_segments == 1 && !s->offsets;
  /* scratch: the check word, the ticket, argmin's partials */
  const size_t parts = arg_grid ? (size_t)grid_for(st, s->n) : 0;
  /* the balanced reduce, argmin / argmax and scan: the tiles' bounds (2 x 8 bytes per
   * edge); the scan also a segment, a value and a carry per tile (8 bytes each), the
   * reduce two records of a segment and a value per tile (32 bytes), argmin / argmax
   * two of a segment and a (value, index) pair (48 bytes) */
  const size_t tile = (size_t)kBlock * (64 / xpar__dtype_size(s->dtype));
  const size_t span = s->offsets ? s->n : s->segment_size * s->n_segments;
  const size_t tiles = (span + tile - 1) / tile + 1;
  const bool tiled = !ex->serial && !arg_grid;
  const size_t per_tile = s->kind == XPAR__SEG_SCAN     ? 24
                          : s->kind == XPAR__SEG_REDUCE ? 32
                                                        : 16 + 2 * 16;
  /* seg_span_kernel: two records of a segment and a value or pair per span (48 bytes);
   * the span scan a segment, a value and a carry per span (24) */
  size_t tiled_bytes = tiled ? (tiles + 1) * 16 + tiles * per_tile : 0;
  if (kSpans && tiled && span_count(st, span) * 48 > tiled_bytes)
    tiled_bytes = span_count(st, span) * 48;
  const size_t bytes = kPartialsOffset + (parts * 16 > tiled_bytes ? parts * 16 : tiled_bytes);
  GraphScratch graph_scratch(st);
  unsigned char *scratch;
  if (ex->captured) {
    XPAR__FORWARD(graph_scratch.take(bytes, kPartialsOffset, name));
    scratch = static_cast<unsigned char *>(graph_scratch.get());
  } else {
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->seg_scratch, bytes, "segmented scratch", NULL));
    scratch = static_cast<unsigned char *>(st->seg_scratch.ptr);
    XPAR_CUDA_TRY(cudaMemsetAsync(scratch, 0, 16, st->stream), "%s: clearing its scratch", name);
  }
  SegParams p;
  memset(&p, 0, sizeof p);
  p.in = s->in;
  p.out = s->out;
  p.index = (long long *)s->index;
  p.n = s->n;
  p.m = s->n_segments;
  p.exclusive = s->scan_kind == XPAR_EXCLUSIVE;
  p.check = check ? reinterpret_cast<unsigned long long *>(scratch) : NULL;
  p.ticket = reinterpret_cast<unsigned int *>(scratch + 8);
  p.partials = scratch + kPartialsOffset;
  p.streaming = s->n * xpar__dtype_size(s->dtype) > st->l2_bytes;
  if (check) {
    /* a bad offset stops every kernel after this one, whatever they read */
    unsigned long long *word = reinterpret_cast<unsigned long long *>(scratch);
    const unsigned grid = ex->serial ? 1 : grid_for(st, s->n_segments + 1);
    const unsigned block = ex->serial ? 1 : kBlock;
    size_t m = s->n_segments, n = s->n;
    const void *off = s->offsets;
    void *args[] = {(void *)&off, &m, &n, &word};
    XPAR__FORWARD(xpar__cuda_launch(st,
                                    s->offset_dtype == XPAR_INT32
                                        ? (const void *)check_offsets_kernel<int32_t>
                                        : (const void *)check_offsets_kernel<int64_t>,
                                    NULL, grid, block, 0, args, "segmented (offsets check)"));
  }
  xpar_status rs = XPAR_OK;
  switch (s->dtype) {
#define XPAR_SEG_DTYPE_CASE_(e, ctype, nm, size) \
  case XPAR_##e:                                 \
    rs = run_dtype<ctype>(ex, s, p);             \
    break;
    XPAR_DTYPE_MAP(XPAR_SEG_DTYPE_CASE_)
#undef XPAR_SEG_DTYPE_CASE_
    default: rs = xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown dtype %d", name, (int)s->dtype);
  }
  XPAR__FORWARD(rs);
  if (ex->captured) XPAR__FORWARD(graph_scratch.free(name));
  /* A caller that waits hears of bad offsets, even where dispatch copies the
   * outputs back itself (ex->nowait with host outputs) */
  if (check && s->report && !ex->captured) {
    unsigned long long bad = 0;
    XPAR_CUDA_TRY(cudaMemcpyAsync(&bad, scratch, 8, cudaMemcpyDeviceToHost, st->stream),
                  "%s: reading the offsets' check", name);
    XPAR__FORWARD(xpar__cuda_sync(st, name));
    if (bad) return refuse_offsets(st, s, bad, name);
    return XPAR_OK;
  }
  if (ex->nowait) return XPAR_OK;
  if (check) {
    unsigned long long bad = 0;
    XPAR_CUDA_TRY(cudaMemcpyAsync(&bad, scratch, 8, cudaMemcpyDeviceToHost, st->stream),
                  "%s: reading the offsets' check", name);
    XPAR__FORWARD(xpar__cuda_sync(st, name));
    if (bad) return refuse_offsets(st, s, bad, name);
    return XPAR_OK;
  }
  return xpar__cuda_sync(st, name);
}

} // namespace
} // namespace seg
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_segmented(const xpar__exec *ex, const xpar__seg_spec *s) {
  const char *name = seg::seg_name(s);
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, name));
  if (s->n_segments == 0) return XPAR_OK;
  const size_t es = xpar__dtype_size(s->dtype);
  if (es != 4 && es != 8)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown dtype %d", name, (int)s->dtype);
  if ((unsigned)s->op >= XPAR_REDUCTION_COUNT_)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown reduction %d", name, (int)s->op);
  return seg::segmented_run(ex, s);
}
