/**
 * @file
 * The GPU side of xpar operators (XPAR_OPERATOR in xpar/xpar_kernel.h):
 * header-only templates instantiated in the application's translation unit
 * for its own accumulator type and functions.  Included by xpar_kernel.h
 * under nvcc; not meant to be included directly.
 *
 * The built-in reduce and scan's machinery, run on the application's types
 * (the layers are xpar/detail/, installed, shared with backend_cuda/):
 *  - thread: K rows of V consecutive items per lane, a warp's rows striped
 *    (row k of lane l is row k * lanes + l of the warp's chunk), so every
 *    warp-wide access is coalesced; when the input is 16-byte aligned and an
 *    element is 4 or 8 bytes, a row is one 16-byte vector (the application's
 *    transform reads in[i]: nvcc merges the V loads of a row, which the
 *    aligned instantiation lets it prove are one aligned vector);
 *  - warp / block: shuffle trees and scans that only ever combine a value
 *    with a later lane's (detail/cuda_warp_block.cuh, cuda_block_scan.cuh),
 *    so the operator need not be commutative;
 *  - device, scan: the single-pass decoupled look-back of the built-in scan
 *    (detail/cuda_tile_status.cuh): 4- and 8-byte accumulators travel in one
 *    single-copy-atomic status word with their state -- the context's words,
 *    the built-in scan's, tagged per call so that none is cleared per call
 *    (captured into a CUDA graph: words of the graph's own, zeroed there) --
 *    larger ones in a flag + value slot published by release / acquire, in
 *    the call's scratch, zeroed per call; tile shapes are the built-in
 *    ScanTuning<4> / <8> (checked against them in backend_cuda/device_kernel.cu);
 *  - device, reduce: every warp of the grid folds one contiguous range of
 *    whole batches (K rows) in index order -- per row a warp reduce, since a
 *    lane's items are not contiguous -- then the block combines its warps in
 *    order and the last block to finish (a ticket) combines the blocks'
 *    partials in order;
 *  - every kernel ends with the call's done signal (detail/cuda_done_signal.cuh):
 *    a synchronous call returns once the host sees its flag, without
 *    synchronising the stream, as the built-in kernels' calls do.
 * Every loop is correct for any grid and block, 1 x 1 included (cuda-serial:
 * one lane folds every element in index order from the identity, the CPU
 * serial loop operation for operation).
 */
#ifndef XPAR_XPAR_OPERATOR_CUH
#define XPAR_XPAR_OPERATOR_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <atomic>

#include "detail/cuda_block_scan.cuh"
#include "detail/cuda_done_signal.cuh"
#include "detail/cuda_tile_status.cuh"

/** The GPU side of xpar operators: reduce() and scan(), instantiated by
 *  XPAR_OPERATOR for the application's operator. */
namespace xpar_operator_cuda {
/** @cond XPAR_INTERNAL */

/* The operator as the shared layers see it. */
template <class Ops> struct Op {
  using Type = typename Ops::acc_type;
  static __device__ __forceinline__ Type identity() { return Ops::id(); }
  static __device__ __forceinline__ Type apply(Type a, Type b) { return Ops::op(a, b); }
};

/* ---- shapes ------------------------------------------------------------------ */

/* Items of one 16-byte vector of In, or 1 when In does not divide 16 bytes. */
template <class In> struct InVector {
  static constexpr int items = sizeof(In) <= 16 && 16 % sizeof(In) == 0 ? (int)(16 / sizeof(In)) : 1;
};
/* The largest power of two <= `cap` that divides `items` (a row's width). */
constexpr int row_width(int items, int cap) {
  int v = 1;
  while (v * 2 <= cap && items % (v * 2) == 0) v *= 2;
  return v;
}

/* K rows of V items per thread, BLOCK threads, MIN_BLOCKS resident per SM
 * (the register budget, __launch_bounds__). */
template <int K_, int V_, unsigned BLOCK, unsigned MIN_BLOCKS> struct Shape {
  static constexpr int k = K_;
  static constexpr int v = V_;
  static constexpr int items = K_ * V_;
  static constexpr unsigned block = BLOCK;
  static constexpr unsigned min_blocks = MIN_BLOCKS;
};

/*
 * Tuning, by accumulator size.  Scan: the built-in ScanTuning<4> / <8>
 * (backend_cuda/launch_shape.cuh: 256 x 32 items / 3 blocks per SM and 256 x 14
 * / 4; window 1, sleeps 800 / 400 ns from 500 blocks), the figures behind them
 * are there.  Larger accumulators: 128 bytes of items per thread, as the 4-byte
 * tuning, 2 blocks per SM (not swept).  Reduce: the built-in reduce's 256
 * threads, up to 8 blocks per SM, 128 bytes of loads in flight per thread for
 * 4-byte accumulators (its 8 x 16-byte loads), fewer for larger ones
 * (registers: a row's items are accumulators, not input elements).
 */
template <size_t ACC> struct Tuning {
  static constexpr int scan_items = ACC <= 4 ? 32 : ACC <= 8 ? 14 : (ACC <= 16 ? 8 : 4);
  static constexpr unsigned scan_min_blocks = ACC <= 4 ? 3 : ACC <= 8 ? 4 : 2;
  /* A one-block scan of at most scan_small_block rows runs one row per thread (the
   * built-in's scan_small_block: a small tile is latency-bound, and a thread's chain of
   * rows is its latency). */
  static constexpr unsigned scan_small_block = 512;
  static constexpr int reduce_items = ACC <= 4 ? 32 : ACC <= 8 ? 16 : (ACC <= 16 ? 8 : 4);
  static constexpr unsigned block = 256;
  static constexpr unsigned reduce_max_blocks_per_sm = 8;
  /* A reduce of at most reduce_small_block rows runs one row per thread in one block:
   * every thread loads at once, where the tuned rows leave the whole call to one warp. */
  static constexpr unsigned reduce_small_block = 1024;
  static constexpr int window = 1;
  static constexpr unsigned first_poll_delay_ns = 800;
  static constexpr unsigned poll_delay_ns = 400;
  static constexpr unsigned delay_min_grid = 500;
};

template <class Ops> struct Shapes {
  using Acc = typename Ops::acc_type;
  using Tn = Tuning<sizeof(Acc)>;
  static constexpr int scan_v = row_width(Tn::scan_items, InVector<typename Ops::in_type>::items);
  static constexpr int reduce_v =
      row_width(Tn::reduce_items, InVector<typename Ops::in_type>::items);
  using Scan = Shape<Tn::scan_items / scan_v, scan_v, Tn::block, Tn::scan_min_blocks>;
  /* Any block up to 1024 threads must launch (64 registers): half the rows. */
  using GenericScan = Shape<(Scan::k > 1 ? Scan::k / 2 : 1), scan_v, 1024, 1>;
  /* One row per thread (the generic kernel itself where its rows are already one). */
  using SmallScan = Shape<1, scan_v, 1024, 1>;
  using Reduce = Shape<Tn::reduce_items / reduce_v, reduce_v, Tn::block, 1>;
  using SmallReduce = Shape<1, reduce_v, Tn::reduce_small_block, 1>;
};

/* Accumulator rows of V items from 16-byte aligned memory: one vector access
 * per 16 bytes where the accumulator is 4 or 8 bytes (nvcc splits a punned
 * int4 store into four, hence the PTX), element stores otherwise. */
template <class T, int V> __device__ __forceinline__ void store_row(T *p, const T (&x)[V]) {
  if constexpr ((sizeof(T) == 4 || sizeof(T) == 8) && (V * sizeof(T)) % 16 == 0) {
    constexpr int per = (int)(16 / sizeof(T));
#pragma unroll
    for (int g = 0; g < V; g += per) {
      if constexpr (sizeof(T) == 4) {
        unsigned u[4];
        memcpy(u, &x[g], 16);
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p + g), "r"(u[0]),
                     "r"(u[1]), "r"(u[2]), "r"(u[3])
                     : "memory");
      } else {
        unsigned long long u[2];
        memcpy(u, &x[g], 16);
        asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(p + g), "l"(u[0]), "l"(u[1])
                     : "memory");
      }
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) p[e] = x[e];
  }
}

/* A value other blocks wrote before a fence: read from L2 (a stale L1 line
 * must never be read), as 4-byte words where the size allows. */
template <class T> __device__ __forceinline__ T load_l2(const T *p) {
  T v;
  if constexpr (sizeof(T) % 4 == 0) {
    unsigned w[sizeof(T) / 4];
#pragma unroll
    for (unsigned k = 0; k < sizeof(T) / 4; k++) w[k] = __ldcg(reinterpret_cast<const unsigned *>(p) + k);
    memcpy(&v, w, sizeof v);
  } else {
    unsigned char b[sizeof(T)];
#pragma unroll
    for (unsigned k = 0; k < sizeof(T); k++) b[k] = __ldcg(reinterpret_cast<const unsigned char *>(p) + k);
    memcpy(&v, b, sizeof v);
  }
  return v;
}

/* Row `vec` (items vec * V .. vec * V + V - 1): x[e] = transform(in, vec * V + e).
 * ALIGNED (in is 16-byte aligned and a row is one 16-byte vector): nvcc merges
 * the V loads of the application's in[i] into one vector load when `in` is
 * declared aligned and the index is visibly vec * V + e (it does not prove it
 * from other forms of the same index, e.g. at + e with at a multiple of V:
 * ptxas listings of 2026-11-25). */
template <class Ops, int V, bool ALIGNED>
__device__ __forceinline__ void load_row(const typename Ops::in_type *in, size_t vec,
                                         typename Ops::acc_type (&x)[V]) {
  using In = typename Ops::in_type;
  if constexpr (ALIGNED) in = static_cast<const In *>(__builtin_assume_aligned(in, 16));
#pragma unroll
  for (int e = 0; e < V; ++e) x[e] = Ops::load(in, vec * V + e);
}

/* ---- reduce ------------------------------------------------------------------- */

template <class Ops> struct ReduceArgs {
  const typename Ops::in_type *in;
  size_t n;
  size_t batches;                  /* whole batches (32 lanes x K x V items) in [0, n) */
  typename Ops::acc_type *partials; /* one per block (grid > 1) */
  unsigned *ticket;                 /* zero; the last block leaves it zero (grid > 1) */
  typename Ops::acc_type *out;
  xpar_cuda::DoneSignal done;       /* a synchronous call's (flag NULL: none) */
};

/* Warp layer: [lo, hi) in index order; the total is lane 0's.  Full batches
 * (K rows of lanes x V items) load everything first, then combine row by row
 * (a row's lanes by a warp reduce); the rest row by row with bounds. */
template <class Ops, class S, bool ALIGNED>
__device__ __forceinline__ typename Ops::acc_type warp_range(const typename Ops::in_type *in,
                                                             size_t lo, size_t hi, unsigned lane,
                                                             unsigned lanes) {
  using O = Op<Ops>;
  using Acc = typename Ops::acc_type;
  constexpr int K = S::k, V = S::v;
  Acc acc = O::identity();
  if (lanes == 1) { /* one lane (cuda-serial): the CPU loop */
    for (size_t i = lo; i < hi; ++i) acc = O::apply(acc, Ops::load(in, i));
    return acc;
  }
  const size_t row = (size_t)lanes * V;
  size_t at = lo;
  for (; at + K * row <= hi; at += K * row) {
    Acc x[K][V];
    const size_t vec = at / V; /* lo is a multiple of V, and so is every row */
#pragma unroll
    for (int k = 0; k < K; ++k) load_row<Ops, V, ALIGNED>(in, vec + (size_t)k * lanes + lane, x[k]);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      Acc t = x[k][0];
#pragma unroll
      for (int e = 1; e < V; ++e) t = O::apply(t, x[k][e]);
      acc = O::apply(acc, xpar_cuda::warp_reduce_ordered<O>(t, lane, lanes, lanes));
    }
  }
  for (; at < hi; at += row) {
    const size_t left = hi - at, first = (size_t)lane * V;
    Acc t = O::identity();
    if (first < left) {
      t = Ops::load(in, at + first);
#pragma unroll
      for (int e = 1; e < V; ++e)
        if (first + e < left) t = O::apply(t, Ops::load(in, at + first + e));
    }
    const unsigned valid = left >= row ? lanes : (unsigned)((left + V - 1) / V);
    acc = O::apply(acc, xpar_cuda::warp_reduce_ordered<O>(t, lane, lanes, valid));
  }
  return acc;
}

/* One block's part of the reduce; every return is uniform across the block. */
template <class Ops, class S, bool ALIGNED>
__device__ __forceinline__ void reduce_block(const ReduceArgs<Ops> &a) {
  using O = Op<Ops>;
  using Acc = typename Ops::acc_type;
  __shared__ Acc warp_totals[32];
  __shared__ int is_last_block;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned lanes = xpar_cuda::warp_lanes();
  const unsigned warps = (blockDim.x + 31u) / 32u;
  /* Warp w of the grid (block-major: index order) folds batches
   * [B w / W, B (w + 1) / W); the last warp also the ragged end. */
  const size_t all = (size_t)gridDim.x * warps, w = (size_t)blockIdx.x * warps + warp;
  const size_t batch = (size_t)32 * S::items;
  const size_t lo = a.batches * w / all * batch;
  const size_t hi = w + 1 == all ? a.n : a.batches * (w + 1) / all * batch;
  const Acc mine = warp_range<Ops, S, ALIGNED>(a.in, lo, hi, lane, lanes);

  /* Block: the warps' totals in warp order (one value: no operation). */
  if (lane == 0) warp_totals[warp] = mine;
  __syncthreads();
  Acc block_total = mine;
  if (warp == 0) {
    const Acc v = lane < warps ? warp_totals[lane] : O::identity();
    block_total = xpar_cuda::warp_reduce_ordered<O>(v, lane, lanes, warps);
  }
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *a.out = block_total;
    return;
  }

  /* Device: publish the partial, fence, draw a ticket; the last block combines. */
  if (threadIdx.x == 0) {
    a.partials[blockIdx.x] = block_total;
    __threadfence();
    is_last_block = atomicAdd(a.ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  __threadfence(); /* every block's partial is visible past this */
  /* Thread t folds a contiguous run of partials (one each while there are
   * fewer partials than threads), then the block combines the threads in
   * order: index order throughout. */
  const unsigned g = gridDim.x, b = blockDim.x, t = threadIdx.x;
  const unsigned first = g <= b ? t : (unsigned)((size_t)g * t / b);
  const unsigned last = g <= b ? t + 1 : (unsigned)((size_t)g * (t + 1) / b);
  Acc acc = O::identity();
  if (first < g) {
    acc = load_l2(a.partials + first);
    for (unsigned i = first + 1; i < last; ++i) acc = O::apply(acc, load_l2(a.partials + i));
  }
  const unsigned valid = g < b ? g : b; /* threads [0, valid) hold partials */
  const unsigned first_of_warp = warp * 32u;
  const unsigned in_warp = valid > first_of_warp ? (valid - first_of_warp < 32u ? valid - first_of_warp : 32u) : 0u;
  if (in_warp) {
    acc = xpar_cuda::warp_reduce_ordered<O>(acc, lane, lanes, in_warp);
    if (lane == 0) warp_totals[warp] = acc;
  }
  __syncthreads();
  const unsigned warps_valid = (valid + 31u) / 32u;
  if (warp == 0) {
    const Acc v = lane < warps_valid ? warp_totals[lane] : O::identity();
    acc = xpar_cuda::warp_reduce_ordered<O>(v, lane, lanes, warps_valid);
    if (lane == 0) {
      *a.ticket = 0; /* ready for the next reduce on this context */
      *a.out = acc;
    }
  }
}

template <class Ops, class S, bool ALIGNED>
__global__ void __launch_bounds__(1024) reduce_kernel(ReduceArgs<Ops> a) {
  reduce_block<Ops, S, ALIGNED>(a);
  xpar_cuda::signal_block_done(a.done);
}

/* ---- scan --------------------------------------------------------------------- */

template <class Ops> struct ScanArgs {
  const typename Ops::in_type *in;
  typename Ops::acc_type *out;
  size_t n, num_tiles;
  int exclusive;
  int vectorized; /* in and out 16-byte aligned */
  xpar_cuda::LookBack status; /* num_tiles TileWords: the context's (this call's
                                 epoch) or the scratch's (zeroed; epoch 1) */
  /* tile = blockIdx.x when the grid covers the tiles; otherwise blocks draw
   * tiles from the counter (zeroed), so a tile only waits for started ones. */
  int block_index_tiles;
  unsigned long long *counter;
  xpar_cuda::DoneSignal done; /* a synchronous call's (flag NULL: none) */
};

template <class T> struct ScanShared {
  T warp_totals[32];
  T prefix; /* look-back: the tile's exclusive prefix; one block: the carry */
  size_t next_tile;
};

/* One tile, as the built-in scan's consume_tile (backend_cuda/scan_kernel.cuh
 * has the steps): load, warp totals in index order, warp offsets and block
 * total (one barrier), publish the aggregate at once, scan the items in
 * registers from the warp's seed, warp 0 looks back (the window combined in
 * index order) and publishes the inclusive prefix, prefix applied, store.
 * ONE_BLOCK: the block walks the tiles in order carrying the running value (no
 * look-back; with one thread, every item folded from the carry: the CPU loop
 * operation for operation). */
template <class Ops, class S, bool VECTOR, bool ONE_BLOCK>
__device__ __forceinline__ void consume_tile(const ScanArgs<Ops> &a,
                                             ScanShared<typename Ops::acc_type> &sh, size_t tile) {
  using O = Op<Ops>;
  using T = typename Ops::acc_type;
  using W = xpar_cuda::TileWord<T>;
  constexpr int K = S::k, V = S::v;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned lanes = xpar_cuda::warp_lanes();
  const size_t chunk = tile * (size_t)blockDim.x * S::items + (size_t)warp * 32u * S::items;
  const size_t chunk_vec = tile * (size_t)blockDim.x * K + (size_t)warp * 32u * K; /* rows */
  T x[K][V];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (VECTOR) {
      load_row<Ops, V, true>(a.in, chunk_vec + (size_t)k * lanes + lane, x[k]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = at + e < a.n ? Ops::load(a.in, at + e) : O::identity();
    }
  }

  /* The warp's total in index order: a lane's items are rows k * lanes + lane,
   * not adjacent, so (unlike the built-in scan, whose operators commute) the
   * lanes' own totals are no pieces of it; row k's lanes are combined by an
   * ordered warp reduce, the K rows in order (K independent reduces: the
   * aggregate is published as early as the built-in's). */
  T warp_total = O::identity();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    T t = x[k][0];
#pragma unroll
    for (int e = 1; e < V; ++e) t = O::apply(t, x[k][e]);
    t = xpar_cuda::warp_reduce_ordered<O>(t, lane, lanes, lanes);
    warp_total = k ? O::apply(warp_total, t) : t;
  }
  T warp_offset, block_total;
  xpar_cuda::block_warp_offsets<O>(lane == 0 ? warp_total : O::identity(), sh.warp_totals,
                                   &warp_offset, &block_total);

  T seed = warp_offset;
  if constexpr (ONE_BLOCK) {
    if (tile > 0) seed = warp == 0 ? sh.prefix : O::apply(sh.prefix, warp_offset);
  } else if (threadIdx.x == 0) {
    W::store(const_cast<void *>(a.status.status), tile,
             W::make(block_total, a.status.epoch,
                     tile == 0 ? xpar_cuda::kStatusInclusive : xpar_cuda::kStatusAggregate));
  }

  const T running = xpar_cuda::thread_scan_items<O>(x, seed, a.exclusive != 0);

  if constexpr (!ONE_BLOCK) {
    if (warp == 0) {
      if (tile > 0) {
        const T prefix = xpar_cuda::look_back_words<O, Tuning<sizeof(T)>::window, W, true>(
            a.status, tile, lane, lanes);
        if (lane == 0) {
          W::store(const_cast<void *>(a.status.status), tile,
                   W::make(O::apply(prefix, block_total), a.status.epoch,
                           xpar_cuda::kStatusInclusive));
          sh.prefix = prefix;
        }
      }
      if (lane == 0 && !a.block_index_tiles) sh.next_tile = (size_t)atomicAdd(a.counter, 1ull);
    }
    __syncthreads();
    if (tile > 0) {
      const T prefix = sh.prefix;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e) x[k][e] = O::apply(prefix, x[k][e]);
    }
  }

#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (VECTOR) {
      store_row<T, V>(a.out + at, x[k]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (at + e < a.n) a.out[at + e] = x[k][e];
    }
  }
  if constexpr (ONE_BLOCK) {
    __syncthreads(); /* every thread has read this tile's carry and warp totals */
    if (threadIdx.x == blockDim.x - 1u) sh.prefix = running;
  }
}

template <class Ops, class S, bool ONE_BLOCK>
__device__ __forceinline__ void consume_tile_at(const ScanArgs<Ops> &a,
                                                ScanShared<typename Ops::acc_type> &sh,
                                                size_t tile) {
  if (a.vectorized && (tile + 1) * (size_t)blockDim.x * S::items <= a.n)
    consume_tile<Ops, S, true, ONE_BLOCK>(a, sh, tile);
  else
    consume_tile<Ops, S, false, ONE_BLOCK>(a, sh, tile);
}

/* TUNED: the look-back path at the tuned block (grid > 1); otherwise any block
 * up to 1024, both paths (one block: small n, cuda-serial; overrides). */
template <class Ops, class S, bool TUNED>
__global__ void __launch_bounds__(TUNED ? S::block : 1024, TUNED ? S::min_blocks : 1)
    scan_kernel(ScanArgs<Ops> a) {
  __shared__ ScanShared<typename Ops::acc_type> sh;
  if (!TUNED && gridDim.x == 1) {
    for (size_t tile = 0; tile < a.num_tiles; ++tile) consume_tile_at<Ops, S, true>(a, sh, tile);
  } else if (a.block_index_tiles) {
    if (blockIdx.x < a.num_tiles) consume_tile_at<Ops, S, false>(a, sh, blockIdx.x);
  } else {
    if (threadIdx.x == 0) sh.next_tile = (size_t)atomicAdd(a.counter, 1ull);
    __syncthreads();
    size_t tile = sh.next_tile;
    while (tile < a.num_tiles) {
      consume_tile_at<Ops, S, false>(a, sh, tile);
      tile = sh.next_tile; /* written before the tile's second barrier */
    }
  }
  xpar_cuda::signal_block_done(a.done);
}

/* ---- host side ------------------------------------------------------------------ */

static inline size_t div_up(size_t v, size_t a) { return (v + a - 1) / a; }
static inline size_t align_up(size_t v, size_t a) { return div_up(v, a) * a; }
/* A one-block call's block: no more warps than rows of `items` fill n (one at n = 0),
 * at most `limit` threads. */
static inline unsigned one_block_threads(size_t n, size_t items, size_t limit) {
  const size_t threads = div_up(div_up(n, items), 32) * 32;
  return (unsigned)(threads == 0 ? 32 : threads < limit ? threads : limit);
}
static inline bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }
/* The scan's scratch starts with a 256-byte control block (the tile counter). */
constexpr size_t kControlBytes = 256;

/* Resident blocks of the reduce kernel at `block` threads per SM, asked of the
 * runtime once per block size (every call asks twice: scratch size, then launch). */
template <class Ops, class S, bool ALIGNED> cudaError_t resident_blocks(unsigned block, int *out) {
  static std::atomic<unsigned long long> memo{0}; /* block << 32 | blocks, 0: none yet */
  const unsigned long long m = memo.load(std::memory_order_relaxed);
  if (m >> 32 == block) {
    *out = (int)(m & 0xffffffffu);
    return cudaSuccess;
  }
  cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      out, reduce_kernel<Ops, S, ALIGNED>, (int)block, 0);
  if (err == cudaSuccess)
    memo.store((unsigned long long)block << 32 | (unsigned)*out, std::memory_order_relaxed);
  return err;
}

/** @endcond */

/** out (device-visible, one accumulator) = the reduction of in[0, n). */
template <class Ops> int reduce(const xpar_operator_gpu_call *c) {
  using Acc = typename Ops::acc_type;
  using S = typename Shapes<Ops>::Reduce;
  using Small = typename Shapes<Ops>::SmallReduce;
  using Tn = Tuning<sizeof(Acc)>;
  const bool aligned = S::v > 1 && aligned16(c->in);
  /* Small n with no override: one block of one row per thread, no more warps than the
   * rows fill (the built-in one-block reduce's shape). */
  const bool small = !c->serial && !c->grid && !c->block &&
                     c->n <= (size_t)Tn::reduce_small_block * Small::items;
  void (*kernel)(ReduceArgs<Ops>) =
      small ? (aligned ? reduce_kernel<Ops, Small, true> : reduce_kernel<Ops, Small, false>)
            : (aligned ? reduce_kernel<Ops, S, true> : reduce_kernel<Ops, S, false>);
  const size_t batch = (size_t)32 * (small ? Small::items : S::items);
  unsigned grid = 1, block = 1;
  if (small) {
    block = one_block_threads(c->n, Small::items, Tn::reduce_small_block);
  } else if (!c->serial) {
    block = c->block ? c->block : Tn::block;
    /* At least one batch per warp; at most the override, else the resident blocks. */
    const unsigned warps = (block + 31) / 32;
    const size_t per_block = batch * warps;
    const size_t work = c->n ? div_up(c->n, per_block) : 1;
    if (c->grid) {
      grid = (unsigned)(c->grid < work ? c->grid : work);
    } else {
      int resident = 0;
      cudaError_t err = aligned ? resident_blocks<Ops, S, true>(block, &resident)
                                : resident_blocks<Ops, S, false>(block, &resident);
      if (err != cudaSuccess) return (int)err;
      if (resident < 1) resident = 1;
      if ((unsigned)resident > Tn::reduce_max_blocks_per_sm)
        resident = (int)Tn::reduce_max_blocks_per_sm;
      const size_t cap = (size_t)(c->multiprocessors > 0 ? c->multiprocessors : 1) * resident;
      grid = (unsigned)(work < cap ? work : cap);
    }
  }
  const size_t need = align_up((size_t)grid * sizeof(Acc), 256);
  if (!c->scratch) {
    *c->scratch_bytes = need;
    return 0;
  }
  if (*c->scratch_bytes < need || (grid > 1 && !c->ticket)) return (int)cudaErrorInvalidValue;
  ReduceArgs<Ops> a;
  a.in = (const typename Ops::in_type *)c->in;
  a.n = c->n;
  a.batches = c->n / batch;
  a.ticket = c->ticket;
  a.partials = (Acc *)c->scratch;
  a.out = (Acc *)c->out;
  a.done = c->done;
  kernel<<<grid, block, 0, (cudaStream_t)c->stream>>>(a);
  return (int)cudaGetLastError();
}

/** out[0, n) = the scan of in[0, n).  Tile status: 4- and 8-byte accumulators
 * use the context's words (c->status, the built-in scan's buffer and layout,
 * `TileWord<T, 4>` / `<T, 8>`), tagged with a per-call epoch, so nothing is
 * cleared per call (an older word never matches; a call captured into a CUDA
 * graph is handed zeroed words of the graph's own and epoch 1); other sizes keep theirs in
 * the scratch after the control block, zeroed here (epoch 1 never matches a
 * zero word).  The control block's tile counter is zeroed only when blocks
 * draw tiles from it (a grid override smaller than the tile count). */
template <class Ops> int scan(const xpar_operator_gpu_call *c) {
  using Acc = typename Ops::acc_type;
  using S = typename Shapes<Ops>::Scan;
  using G = typename Shapes<Ops>::GenericScan;
  using Small = typename Shapes<Ops>::SmallScan;
  using Tn = Tuning<sizeof(Acc)>;
  using W = xpar_cuda::TileWord<Acc>;
  constexpr bool shared_status = sizeof(Acc) == 4 || sizeof(Acc) == 8;
  /* The tuned kernel runs the look-back path at its block; everything else
   * (one block, cuda-serial, block overrides) the generic kernel. */
  const bool tuned_block = !c->serial && (c->block == 0 || c->block == S::block);
  unsigned block = c->serial ? 1 : (c->block ? c->block : S::block);
  size_t tile_items = (size_t)block * (tuned_block ? S::items : G::items);
  size_t tiles = c->n ? div_up(c->n, tile_items) : 1;
  unsigned grid = 1;
  if (!c->serial) grid = (unsigned)(c->grid && c->grid < tiles ? c->grid : tiles);
  const bool tuned = tuned_block && grid > 1;
  /* One block with no block override (small n), as the built-in scan_launch: one row
   * per thread where Tn::scan_small_block rows hold n, else the generic rows in one tile
   * where 1024 threads hold it; no more warps than the items fill. */
  const bool one_block = grid == 1 && !c->serial && c->block == 0;
  const bool small = one_block && c->n <= (size_t)Tn::scan_small_block * Small::items;
  if (one_block || (tuned_block && !tuned)) { /* one block: the small or generic tiles */
    const size_t items = small ? Small::items : G::items;
    if (one_block) block = one_block_threads(c->n, items, small ? Tn::scan_small_block : 1024);
    tile_items = (size_t)block * items;
    tiles = c->n ? div_up(c->n, tile_items) : 1;
  }
  const bool context_status = shared_status && grid > 1;
  const size_t need = kControlBytes + (context_status ? 0 : align_up(tiles * W::bytes, 256));
  if (!c->scratch) {
    *c->scratch_bytes = need;
    if (c->status_tiles) *c->status_tiles = context_status ? tiles : 0;
    return 0;
  }
  if (*c->scratch_bytes < need || (context_status && !c->status)) return (int)cudaErrorInvalidValue;
  if (c->n == 0) return 0;
  cudaStream_t stream = (cudaStream_t)c->stream;
  ScanArgs<Ops> a;
  a.in = (const typename Ops::in_type *)c->in;
  a.out = (Acc *)c->out;
  a.n = c->n;
  a.num_tiles = tiles;
  a.exclusive = c->exclusive;
  a.vectorized = aligned16(c->in) && aligned16(c->out);
  a.counter = (unsigned long long *)c->scratch;
  a.status.status = context_status ? c->status : (unsigned char *)c->scratch + kControlBytes;
  a.status.epoch = context_status ? c->status_epoch : 1;
  a.status.first_poll_ns = a.status.poll_ns = 0;
  a.block_index_tiles = grid >= tiles;
  a.done = c->done;
  if (grid > 1) {
    const size_t clear = context_status ? (a.block_index_tiles ? 0 : sizeof *a.counter)
                                        : kControlBytes + tiles * W::bytes;
    if (clear) {
      cudaError_t err = cudaMemsetAsync(c->scratch, 0, clear, stream);
      if (err != cudaSuccess) return (int)err;
    }
    if (grid >= Tn::delay_min_grid) {
      a.status.first_poll_ns = Tn::first_poll_delay_ns;
      a.status.poll_ns = Tn::poll_delay_ns;
    }
  }
  if (tuned)
    scan_kernel<Ops, S, true><<<grid, block, 0, stream>>>(a);
  else if (small)
    scan_kernel<Ops, Small, false><<<grid, block, 0, stream>>>(a);
  else
    scan_kernel<Ops, G, false><<<grid, block, 0, stream>>>(a);
  return (int)cudaGetLastError();
}

} // namespace xpar_operator_cuda

#endif /* XPAR_XPAR_OPERATOR_CUH */
