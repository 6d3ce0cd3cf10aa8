/*
 * Reproducible mode on the GPU: the summation order of docs/reproducible.md
 * (dispatch/repro_spec.h), bit for bit the CPU's (backend_cpu/cpu_repro.c),
 * at any launch shape.
 *
 * Three kernels, each a grid-stride loop over the spec's 8192-element blocks
 * (block b always starts at element 8192 b: alignment only decides whether
 * loads are vectors):
 *  totals   T_b of every block into scratch (the lanes and their tree)
 *  combine  one thread block: the tree over the T_b (a reduce's result), or
 *           the scan carries C_b, written over the T_b
 *  scan     every block's quads, seeded from C_b
 * A reduce is totals + combine, a scan totals + combine + scan: the input is
 * read twice, the output written once.
 *
 * Two ways to compute one block, the same bits:
 *  fast     the tuned shape, 256 threads on a whole block: thread t holds
 *           lanes 4t..4t+3 of each of the 8 rows (one 16-byte vector of
 *           floats, two of doubles, per row) -- which are also quads r*256+t
 *           of the scan -- so a lane's serial sum and a quad's total are in
 *           registers; the lanes are folded in halves through shared memory
 *           and warp 0's shuffles, the quads' aligned tree with shuffles inside
 *           warps (at step o, lanes that are multiples of 2o add the value o
 *           lanes up) and in shared memory across warps;
 *  generic  any block size (1 x 1 = cuda-serial, 7 x 33, ...) and the last,
 *           partial block: the lanes or quads strided over the threads, the
 *           trees level by level in shared memory, as the CPU builds them.
 * Every addition is __fadd_rn / __dadd_rn and every product __fmul_rn /
 * __dmul_rn (dtype_ops.cuh), so nothing is contracted into an FMA.
 */
#include <string.h>

#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "base/repro_spec.h"

namespace xpar_cuda {
namespace {

constexpr unsigned kLanes = XPAR__REPRO_LANES;
constexpr unsigned kRows = XPAR__REPRO_ROWS;
constexpr size_t kBlock = XPAR__REPRO_BLOCK;
constexpr unsigned kQuads = XPAR__REPRO_QUADS;
/* The fast path's block: 4 lanes (one quad) per thread per row. */
constexpr unsigned kFast = kLanes / 4;
/* The combine kernel's block when the call runs at the tuned shape. */
constexpr unsigned kCombineBlock = 1024;
constexpr unsigned kFull = 0xffffffffu;

template <class A> __device__ __forceinline__ A add(A a, A b) { return Arith<A>::add(a, b); }

/* ---- what is summed ----------------------------------------------------------- */

/* x[i] as the accumulator type (sum: A = T; wide: float -> double). */
template <class T, class A> struct SumSrc {
  using Acc = A;
  const T *x;
  bool vec; /* x is 16-byte aligned: quads load as vectors */
  __device__ __forceinline__ A term(size_t i) const { return (A)x[i]; }
  /* The 4 terms of elements i..i+3 (i a multiple of 4). */
  __device__ __forceinline__ void quad(size_t i, A (&v)[4]) const {
    T e[4];
    if (vec) {
      if constexpr (sizeof(T) == 4) {
        Pack16<T> p;
        p.raw = *reinterpret_cast<const int4 *>(x + i);
#pragma unroll
        for (int c = 0; c < 4; ++c) e[c] = p.e[c];
      } else {
        Pack16<T> p, q;
        p.raw = *reinterpret_cast<const int4 *>(x + i);
        q.raw = *reinterpret_cast<const int4 *>(x + i + 2);
        e[0] = p.e[0];
        e[1] = p.e[1];
        e[2] = q.e[0];
        e[3] = q.e[1];
      }
    } else {
#pragma unroll
      for (int c = 0; c < 4; ++c) e[c] = x[i + c];
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) v[c] = (A)e[c];
  }
};

/* x[i] * y[i], rounded to T, then summed in T. */
template <class T> struct DotSrc {
  using Acc = T;
  const T *x;
  const T *y;
  bool vec; /* both 16-byte aligned */
  __device__ __forceinline__ T term(size_t i) const { return Arith<T>::mul(x[i], y[i]); }
  __device__ __forceinline__ void quad(size_t i, T (&v)[4]) const {
    T a[4], b[4];
    SumSrc<T, T>{x, vec}.quad(i, a);
    SumSrc<T, T>{y, vec}.quad(i, b);
#pragma unroll
    for (int c = 0; c < 4; ++c) v[c] = Arith<T>::mul(a[c], b[c]);
  }
};

/* ---- trees in a warp ------------------------------------------------------------- */

/* Aligned tree over the 32 lanes' values: the total in lane 0. */
template <class A> __device__ __forceinline__ A warp_tree(A v, unsigned lane) {
#pragma unroll
  for (unsigned k = 0; k < 5; ++k) {
    const A other = __shfl_down_sync(kFull, v, 1u << k);
    if ((lane & ((2u << k) - 1)) == 0) v = add(v, other);
  }
  return v;
}

/* The seed of each lane: `seed` folded with the aligned subtrees of the 32
 * lanes' values that cover the lanes before it, largest first. */
template <class A> __device__ __forceinline__ A warp_seeds(A v, A seed, unsigned lane) {
  A level[5]; /* level[k]: this lane's subtree of 2^k values (if aligned) */
#pragma unroll
  for (unsigned k = 0; k < 5; ++k) {
    level[k] = v;
    const A other = __shfl_down_sync(kFull, v, 1u << k);
    if ((lane & ((2u << k) - 1)) == 0) v = add(v, other);
  }
  A run = seed;
#pragma unroll
  for (int k = 4; k >= 0; --k) {
    const A node = __shfl_sync(kFull, level[k], (int)((lane >> (k + 1)) << (k + 1)));
    if ((lane >> k) & 1u) run = add(run, node);
  }
  return run;
}

/* ---- block totals ------------------------------------------------------------------ */

/* Level k of a tree of 2^levels leaves stored level after level. */
__device__ __forceinline__ unsigned level_offset(unsigned leaves2, unsigned k) {
  return leaves2 - (leaves2 >> k); /* leaves2 = 2 * leaves */
}

/* Build levels 1..top of an aligned tree whose `leaves` leaves are level 0
 * of sh (level k at level_offset(2 * leaves, k)), one level per barrier,
 * the nodes of a level strided over the threads.  Ends with a barrier. */
template <class A> __device__ void build_levels(A *sh, unsigned leaves, unsigned top) {
  for (unsigned k = 1; k <= top; ++k) {
    __syncthreads();
    A *cur = sh + level_offset(2 * leaves, k);
    const A *below = sh + level_offset(2 * leaves, k - 1);
    for (unsigned i = threadIdx.x; i < (leaves >> k); i += blockDim.x)
      cur[i] = add(below[2 * i], below[2 * i + 1]);
  }
  __syncthreads();
}

/* Any block size, any len <= kBlock.  sh: kLanes values.  The total is
 * returned to every thread. */
template <class Src>
__device__ typename Src::Acc block_total_generic(const Src &src, size_t lo, size_t len,
                                                 typename Src::Acc *sh) {
  using A = typename Src::Acc;
  for (unsigned j = threadIdx.x; j < kLanes; j += blockDim.x) {
    A acc = A(0);
    for (unsigned r = 0; r < kRows; ++r) {
      const size_t i = (size_t)r * kLanes + j;
      if (i < len) acc = add(acc, src.term(lo + i));
    }
    sh[j] = acc;
  }
  /* folded in halves, in place: lane i + lane i + h, h = 512 .. 1 */
  for (unsigned h = kLanes / 2; h >= 1; h /= 2) {
    __syncthreads();
    for (unsigned i = threadIdx.x; i < h; i += blockDim.x) sh[i] = add(sh[i], sh[i + h]);
  }
  __syncthreads();
  const A total = sh[0];
  __syncthreads();
  return total;
}

/* 256 threads, a whole block.  The total in thread 0. */
template <class Src>
__device__ __forceinline__ typename Src::Acc block_total_fast(const Src &src, size_t lo,
                                                              typename Src::Acc *sh) {
  using A = typename Src::Acc;
  const unsigned t = threadIdx.x, lane = t & 31u, warp = t >> 5;
  A v[kRows][4];
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) src.quad(lo + (size_t)r * kLanes + 4 * t, v[r]);
  A acc[4] = {A(0), A(0), A(0), A(0)};
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] = add(acc[c], v[r][c]);
  /* The halving over lanes 4t + c: the levels h = 512, 256, 128 pair
   * threads t, t + 128, t + 64, t + 32 (through shared memory), h = 64 .. 4
   * lanes of warp 0 16 .. 1 apart (shuffles), h = 2, 1 the thread's own
   * components. */
#pragma unroll
  for (int c = 0; c < 4; ++c) sh[4 * t + c] = acc[c];
  __syncthreads();
  A total = A(0);
  if (warp == 0) {
    A d[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const unsigned i = 4 * lane + c;
      const A b0 = add(add(sh[i], sh[i + 512]), add(sh[i + 256], sh[i + 768]));
      const A b1 = add(add(sh[i + 128], sh[i + 640]), add(sh[i + 384], sh[i + 896]));
      d[c] = add(b0, b1);
#pragma unroll
      for (unsigned o = 16; o >= 1; o /= 2) {
        const A other = __shfl_down_sync(kFull, d[c], o);
        if (lane < o) d[c] = add(d[c], other);
      }
    }
    total = add(add(d[0], d[2]), add(d[1], d[3]));
  }
  __syncthreads();
  return total;
}

template <class Src>
__global__ void __launch_bounds__(kFast) totals_fast_kernel(Src src, size_t n,
                                                            typename Src::Acc *totals) {
  using A = typename Src::Acc;
  __shared__ A sh[kLanes];
  const size_t nb = (n + kBlock - 1) / kBlock;
  for (size_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const size_t lo = b * kBlock, len = n - lo < kBlock ? n - lo : kBlock;
    const A total = len == kBlock ? block_total_fast(src, lo, sh)
                                  : block_total_generic(src, lo, len, sh);
    if (threadIdx.x == 0) totals[b] = total;
  }
}

template <class Src>
__global__ void __launch_bounds__(tuning::max_block) totals_generic_kernel(
    Src src, size_t n, typename Src::Acc *totals) {
  using A = typename Src::Acc;
  __shared__ A sh[kLanes];
  const size_t nb = (n + kBlock - 1) / kBlock;
  for (size_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const size_t lo = b * kBlock, len = n - lo < kBlock ? n - lo : kBlock;
    const A total = block_total_generic(src, lo, len, sh);
    if (threadIdx.x == 0) totals[b] = total;
  }
}

/* ---- combining the block totals ------------------------------------------------------ */

/* Aligned subtrees pushed in order (the CPU's binary-counter stack). */
template <class A> struct Stack {
  A v[48];
  unsigned char level[48];
  int top;
  __device__ __forceinline__ void push(A x) {
    unsigned char l = 0;
    while (top && level[top - 1] == l) {
      x = add(v[top - 1], x);
      l++;
      top--;
    }
    v[top] = x;
    level[top] = l;
    top++;
  }
  __device__ __forceinline__ A finish() const {
    if (!top) return A(0);
    A acc = v[top - 1];
    for (int i = top - 2; i >= 0; --i) acc = add(v[i], acc);
    return acc;
  }
  __device__ __forceinline__ A fold(A init) const {
    A acc = init;
    for (int i = 0; i < top; ++i) acc = add(acc, v[i]);
    return acc;
  }
};

enum CombineMode { kTotal = 0, kCarries = 1 };

/* A thread's range of block totals is read kChunk at a time, the loads
 * independent of the additions: at 2^30 floats a thread of the combine has
 * 128 totals, and one load per push would wait for L2 128 times in a row. */
constexpr unsigned kChunk = 8;
/* f(b, v[b]) for b in [b0, b1), in order, the loads kChunk at a time. */
template <class A, class F>
__device__ __forceinline__ void for_each_total(const A *v, size_t b0, size_t b1, F &&f) {
  for (size_t b = b0; b < b1; b += kChunk) {
    A chunk[kChunk];
#pragma unroll
    for (unsigned k = 0; k < kChunk; ++k) chunk[k] = b + k < b1 ? v[b + k] : A(0);
#pragma unroll
    for (unsigned k = 0; k < kChunk; ++k)
      if (b + k < b1) f(b + k, chunk[k]);
  }
}

/*
 * One thread block.  kTotal: *result = the tree over v[0, nb).  kCarries:
 * v[b] = C_b = init folded with the subtrees covering [0, b).
 * Fast when blockDim is a power of two >= 32: thread t takes the aligned range
 * [t m, (t + 1) m) of blocks, m the power of two that covers nb; the threads'
 * subtrees are combined by warp trees (a tree over P m blocks padded with +0
 * is the tree over nb: no total is -0).  Otherwise thread 0 does it all.
 */
template <class A>
__global__ void __launch_bounds__(tuning::max_block) combine_kernel(A *v, size_t nb, A init,
                                                                    int mode, A *result) {
  __shared__ A warp_value[32];
  __shared__ A warp_seed[32];
  const unsigned P = blockDim.x, t = threadIdx.x;
  if (P < 32 || (P & (P - 1))) { /* generic: one thread, in order */
    if (t != 0) return;
    Stack<A> s;
    s.top = 0;
    for (size_t b = 0; b < nb; ++b) {
      const A total = v[b];
      if (mode == kCarries) v[b] = s.fold(init);
      s.push(total);
    }
    if (mode == kTotal) *result = s.finish();
    return;
  }
  const unsigned lane = t & 31u, warp = t >> 5, warps = P >> 5;
  size_t m = 1;
  while (m * P < nb) m *= 2;
  const size_t b0 = (size_t)t * m, b1 = b0 + m < nb ? b0 + m : nb;
  Stack<A> s;
  s.top = 0;
  for_each_total(v, b0, b1, [&](size_t, A total) { s.push(total); });
  const A mine = s.finish();
  const A wtotal = warp_tree(mine, lane);
  if (lane == 0) warp_value[warp] = wtotal;
  __syncthreads();
  if (mode == kTotal) {
    if (warp == 0) {
      const A total = warp_tree(lane < warps ? warp_value[lane] : A(0), lane);
      if (lane == 0) *result = total;
    }
    return;
  }
  if (warp == 0) warp_seed[lane] = warp_seeds(lane < warps ? warp_value[lane] : A(0), init, lane);
  __syncthreads();
  const A seed = warp_seeds(mine, warp_seed[warp], lane);
  s.top = 0;
  for_each_total(v, b0, b1, [&](size_t b, A total) {
    v[b] = s.fold(seed);
    s.push(total);
  });
}

/* ---- the scan of every block ------------------------------------------------------------ */

template <class T> struct ScanArgs {
  const T *x;
  T *out;
  size_t n;
  const T *carry;
  int exclusive;
  bool vec_in, vec_out; /* 16-byte aligned */
};

/* Run a quad's elements from its seed: inclusive out = seed + x0, ...;
 * exclusive out0 = seed, out1 = seed + x0, ... */
template <class T>
__device__ __forceinline__ void run_quad(const T (&x)[4], T seed, int exclusive, T (&o)[4]) {
  T run = seed;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (exclusive) {
      o[c] = run;
      run = add(run, x[c]);
    } else {
      run = add(run, x[c]);
      o[c] = run;
    }
  }
}

template <class T> __device__ __forceinline__ void store_quad(T *p, const T (&o)[4], bool vec) {
  if (vec) {
    if constexpr (sizeof(T) == 4) {
      store16(p, o);
    } else {
      const T a[2] = {o[0], o[1]}, b[2] = {o[2], o[3]};
      store16(p, a);
      store16(p + 2, b);
    }
  } else {
#pragma unroll
    for (int c = 0; c < 4; ++c) p[c] = o[c];
  }
}

/* Any block size, any len.  sh: 2 * kQuads values: the quad-total tree, then
 * the seeds over it, level after level, as the CPU does with P = 2048. */
template <class T>
__device__ void scan_block_generic(const ScanArgs<T> &a, size_t lo, size_t len, T carry, T *sh) {
  const size_t full = len / 4, nq = (len + 3) / 4;
  for (unsigned q = threadIdx.x; q < kQuads; q += blockDim.x) {
    T u = T(0);
    if (q < full) {
      const T *p = a.x + lo + 4 * (size_t)q;
      u = add(add(add(p[0], p[1]), p[2]), p[3]);
    }
    sh[q] = u;
  }
  build_levels(sh, kQuads, 10); /* level 11 (the block's total) is not needed */
  if (threadIdx.x == 0) {
    T *top = sh + level_offset(2 * kQuads, 10);
    const T left = top[0];
    top[0] = carry;
    top[1] = add(carry, left);
  }
  for (int k = 9; k >= 0; --k) {
    __syncthreads();
    T *cur = sh + level_offset(2 * kQuads, (unsigned)k);
    const T *above = sh + level_offset(2 * kQuads, (unsigned)k + 1);
    for (unsigned i = threadIdx.x; i < (kQuads >> (k + 1)); i += blockDim.x) {
      const T s = above[i], l = cur[2 * i];
      cur[2 * i] = s;
      cur[2 * i + 1] = add(s, l);
    }
  }
  __syncthreads();
  for (size_t q = threadIdx.x; q < nq; q += blockDim.x) {
    T run = sh[q];
    const size_t i0 = lo + 4 * q, i1 = i0 + 4 < lo + len ? i0 + 4 : lo + len;
    for (size_t i = i0; i < i1; ++i) {
      const T v = a.x[i];
      if (a.exclusive) {
        a.out[i] = run;
        run = add(run, v);
      } else {
        run = add(run, v);
        a.out[i] = run;
      }
    }
  }
  __syncthreads();
}

/* 256 threads, a whole block: thread t holds quads r * 256 + t. */
template <class T>
__device__ __forceinline__ void scan_block_fast(const ScanArgs<T> &a, size_t lo, T carry, T *sh) {
  const unsigned t = threadIdx.x, lane = t & 31u, warp = t >> 5;
  T x[kRows][4];
  const SumSrc<T, T> src{a.x, a.vec_in};
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) src.quad(lo + (size_t)r * kLanes + 4 * t, x[r]);
  T u[kRows];
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) {
    u[r] = add(add(add(x[r][0], x[r][1]), x[r][2]), x[r][3]);
    const T w = warp_tree(u[r], lane); /* level-5 node r * 8 + warp */
    if (lane == 0) sh[r * 8 + warp] = w;
  }
  __syncthreads();
  if (warp == 0) { /* seeds of the 64 level-5 nodes, through the 32 level-6 ones */
    const T left = sh[2 * lane], right = sh[2 * lane + 1];
    const T s6 = warp_seeds(add(left, right), carry, lane);
    sh[64 + 2 * lane] = s6;
    sh[64 + 2 * lane + 1] = add(s6, left);
  }
  __syncthreads();
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) {
    const T seed = warp_seeds(u[r], sh[64 + r * 8 + warp], lane);
    T o[4];
    run_quad(x[r], seed, a.exclusive, o);
    store_quad(a.out + lo + (size_t)r * kLanes + 4 * t, o, a.vec_out);
  }
  __syncthreads();
}

template <class T>
__global__ void __launch_bounds__(kFast) scan_fast_kernel(ScanArgs<T> a) {
  __shared__ T sh[2 * kQuads];
  const size_t nb = (a.n + kBlock - 1) / kBlock;
  for (size_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const size_t lo = b * kBlock, len = a.n - lo < kBlock ? a.n - lo : kBlock;
    if (len == kBlock) scan_block_fast(a, lo, a.carry[b], sh);
    else scan_block_generic(a, lo, len, a.carry[b], sh);
  }
}

template <class T>
__global__ void __launch_bounds__(tuning::max_block) scan_generic_kernel(ScanArgs<T> a) {
  __shared__ T sh[2 * kQuads];
  const size_t nb = (a.n + kBlock - 1) / kBlock;
  for (size_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const size_t lo = b * kBlock, len = a.n - lo < kBlock ? a.n - lo : kBlock;
    scan_block_generic(a, lo, len, a.carry[b], sh);
  }
}

/* ---- host side --------------------------------------------------------------------------- */

/* The fast kernels run at the tuned shape: 256 threads (no override, or an
 * override of exactly that), not cuda-serial. */
bool fast_shape(const xpar__exec *ex) { return !ex->serial && (ex->block == 0 || ex->block == kFast); }

/* Launch the totals kernel of src over n elements into st's scratch, or, for a call
 * captured into a CUDA graph, into scratch the graph owns (*graph_scratch, which the
 * caller frees after its last kernel); *totals points at them, and the shape goes to
 * *shape (the scan kernel uses it too). */
template <class Src>
xpar_status launch_totals(const xpar__exec *ex, const Src &src, size_t n, xpar__cuda_shape *shape,
                          typename Src::Acc **totals, GraphScratch *graph_scratch,
                          const char *name) {
  using A = typename Src::Acc;
  xpar__cuda_state *st = ex->cuda;
  const bool fast = fast_shape(ex);
  const void *kernel = fast ? (const void *)totals_fast_kernel<Src>
                            : (const void *)totals_generic_kernel<Src>;
  /* The fast kernels are written for 256 threads, whatever the reduce family's
   * tuned block is: ask for that block unless the caller overrode it. */
  xpar__exec own = *ex;
  if (!own.serial && !own.block) own.block = kFast;
  XPAR__FORWARD(xpar__cuda_choose_shape(&own, st, XPAR_CUDA_FAMILY_REDUCE, kernel, n,
                                        (unsigned)(kBlock / kFast), shape));
  const size_t nb = (n + kBlock - 1) / kBlock;
  if (ex->captured) {
    XPAR__FORWARD(graph_scratch->take(nb * sizeof(A), 0, name));
    *totals = static_cast<A *>(graph_scratch->get());
  } else {
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->reduce_partials, nb * sizeof(A),
                                         "reproducible block totals", NULL));
    *totals = static_cast<A *>(st->reduce_partials.ptr);
  }
  if (fast && shape->block == kFast)
    totals_fast_kernel<Src><<<shape->grid, shape->block, 0, st->stream>>>(src, n, *totals);
  else
    totals_generic_kernel<Src><<<shape->grid, shape->block, 0, st->stream>>>(src, n, *totals);
  return xpar__cuda_check_launch(st, name);
}

/* The combine kernel's block: 1024 threads at the tuned shape, else the
 * call's own block (1 for cuda-serial). */
unsigned combine_block(const xpar__exec *ex, const xpar__cuda_shape &shape) {
  return fast_shape(ex) && shape.block == kFast ? kCombineBlock : shape.block;
}

template <class Src>
xpar_status run_reduce(const xpar__exec *ex, const Src &src, size_t n, void *result,
                       const char *name) {
  using A = typename Src::Acc;
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  if (n == 0) {
    const A zero = A(0);
    if (ex->result_on_device) {
      /* A memset, not a copy from this stack frame: a graph capturing the call replays
       * the copy from an address long gone.  0.0 is all zero bits. */
      XPAR_CUDA_TRY(cudaMemsetAsync(result, 0, sizeof zero, st->stream),
                    "%s: writing the result of n = 0", name);
      if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
    } else {
      memcpy(result, &zero, sizeof zero);
    }
    return XPAR_OK;
  }
  if (!ex->result_on_device) XPAR__FORWARD(xpar__cuda_ensure_control(st)); /* the pinned slot */
  xpar__cuda_shape shape;
  A *totals = NULL;
  GraphScratch graph_scratch(st);
  XPAR__FORWARD(launch_totals(ex, src, n, &shape, &totals, &graph_scratch, name));
  const size_t nb = (n + kBlock - 1) / kBlock;
  A *out = ex->result_on_device ? static_cast<A *>(result) : static_cast<A *>(st->result_device);
  combine_kernel<A><<<1, combine_block(ex, shape), 0, st->stream>>>(totals, nb, A(0), kTotal, out);
  XPAR__FORWARD(xpar__cuda_check_launch(st, name));
  XPAR__FORWARD(graph_scratch.free(name));
  if (ex->result_on_device) {
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
    return XPAR_OK;
  }
  XPAR__FORWARD(xpar__cuda_sync(st, name));
  memcpy(result, (const void *)st->result_host, sizeof(A));
  return XPAR_OK;
}

template <class T>
xpar_status run_scan(const xpar__exec *ex, const T *in, T *out, size_t n, T init, int exclusive) {
  const char *name = "reproducible scan";
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  if (n == 0) return XPAR_OK;
  const SumSrc<T, T> src{in, aligned_to(in, 16) != 0};
  xpar__cuda_shape shape;
  T *carry = NULL;
  GraphScratch graph_scratch(st);
  XPAR__FORWARD(launch_totals(ex, src, n, &shape, &carry, &graph_scratch, name));
  const size_t nb = (n + kBlock - 1) / kBlock;
  combine_kernel<T><<<1, combine_block(ex, shape), 0, st->stream>>>(carry, nb, init, kCarries,
                                                                      NULL);
  XPAR__FORWARD(xpar__cuda_check_launch(st, name));
  ScanArgs<T> a{in, out, n, carry, exclusive, aligned_to(in, 16) != 0, aligned_to(out, 16) != 0};
  if (fast_shape(ex) && shape.block == kFast)
    scan_fast_kernel<T><<<shape.grid, shape.block, 0, st->stream>>>(a);
  else
    scan_generic_kernel<T><<<shape.grid, shape.block, 0, st->stream>>>(a);
  XPAR__FORWARD(xpar__cuda_check_launch(st, name));
  XPAR__FORWARD(graph_scratch.free(name));
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
  return XPAR_OK;
}

} // namespace
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_repro_reduce(const xpar__exec *ex, xpar__repro_kind kind,
                                               xpar_dtype t, const void *x, const void *y,
                                               size_t n, void *result) {
  const bool vx = aligned_to(x, 16), vy = y ? aligned_to(y, 16) : true;
  if (t == XPAR_FLOAT) {
    const float *xf = static_cast<const float *>(x);
    switch (kind) {
      case XPAR__REPRO_SUM:
        return run_reduce(ex, SumSrc<float, float>{xf, vx}, n, result, "reproducible sum");
      case XPAR__REPRO_WIDE:
        return run_reduce(ex, SumSrc<float, double>{xf, vx}, n, result, "reproducible wide sum");
      case XPAR__REPRO_DOT:
        return run_reduce(ex, DotSrc<float>{xf, static_cast<const float *>(y), vx && vy}, n,
                          result, "reproducible dot");
    }
  } else if (t == XPAR_DOUBLE) {
    const double *xd = static_cast<const double *>(x);
    switch (kind) {
      case XPAR__REPRO_SUM:
      case XPAR__REPRO_WIDE:
        return run_reduce(ex, SumSrc<double, double>{xd, vx}, n, result, "reproducible sum");
      case XPAR__REPRO_DOT:
        return run_reduce(ex, DotSrc<double>{xd, static_cast<const double *>(y), vx && vy}, n,
                          result, "reproducible dot");
    }
  }
  return xpar__fail(XPAR_ERR_INTERNAL, "cuda reproducible reduce: dtype %d, kind %d", (int)t,
                    (int)kind);
}

extern "C" xpar_status xpar__cuda_repro_scan(const xpar__exec *ex, xpar_dtype t,
                                             xpar_scan_kind kind, const xpar__scalar *init,
                                             const void *in, void *out, size_t n) {
  const int exclusive = kind == XPAR_EXCLUSIVE;
  if (t == XPAR_FLOAT)
    return run_scan(ex, static_cast<const float *>(in), static_cast<float *>(out), n,
                    init ? init->f32 : 0.0f, exclusive);
  if (t == XPAR_DOUBLE)
    return run_scan(ex, static_cast<const double *>(in), static_cast<double *>(out), n,
                    init ? init->f64 : 0.0, exclusive);
  return xpar__fail(XPAR_ERR_INTERNAL, "cuda reproducible scan: dtype %d", (int)t);
}
