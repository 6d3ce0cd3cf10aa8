/*
 * The scan kernel: inclusive / exclusive scan (sum, min, max) in one pass with decoupled
 * look-back (Merrill & Garland, as CUB's DeviceScan), templated on the operator and on a
 * tuning (launch_shape.cuh's ScanTuning<4> / <8>; bench/cub/scan_sweep.cu instantiates
 * other shapes from the same code).
 *
 * Layers (as CUB's AgentScan: ConsumeTile over BlockScan over WarpScan):
 *   thread      K 16-byte vectors per thread in registers (thread_load.cuh)
 *   warp/block  xpar/detail/cuda_block_scan.cuh: warp totals -> warp offsets, items scanned in registers
 *   device      scan_tile_status.cuh: status words, the look-back
 *   tile        consume_tile below: ONE tile body for both paths
 *
 * Tiles.  A tile is blockDim.x x ITEMS elements.  Warp w owns the contiguous chunk
 * [w * 32 * ITEMS, ...) of the tile; inside it the warp walks K vectors in striped order
 * (vector k of lane l is vector k * lanes + l of the chunk), so every warp-wide access is
 * fully coalesced and, on the aligned path, 16 bytes per lane.  Each thread reads all of
 * its items before it writes any, and only its own items: in-place scans are safe.
 * Partial or unaligned tiles keep the K x V register layout with bounds-checked scalar
 * accesses, so the register shape (and budget) is that of the vector path.
 *
 * consume_tile, per tile:
 *  1. load; thread total; block_warp_offsets (barrier 1): warp offsets, block total
 *  2. look-back path: lane 0 of warp 0 publishes the block total AT ONCE (tile 0: its
 *     inclusive prefix, init op total).  One-block path: the prefix is the carry, known
 *     now, and seeds the local scan
 *  3. every warp scans its items in registers from its seed (thread_scan_items)
 *  4. look-back path: warp 0 looks back, publishes the inclusive prefix (and, in ticket
 *     order, draws the next tile); barrier 2; prefix op local value.  Warp 0's own local
 *     scan (3) gave the predecessors time before its first poll
 *  5. store.  One-block path: barrier; the last thread's running value is the carry
 * One block (grid = 1: cuda-serial, 1 x N overrides, small n) needs no look-back: the
 * block walks the tiles in order and carries the running value into the next tile,
 * starting from init; with block = 1 every item is folded one after the other from the
 * carry: the CPU serial loop, operation for operation (tests/test_serial_exact.c).
 * The look-back path applies the prefix after the local scan (re-associated: float
 * results differ from the serial loop in the last bits, as CUB's do).
 */
#ifndef XPAR_BACKEND_CUDA_SCAN_KERNEL_CUH
#define XPAR_BACKEND_CUDA_SCAN_KERNEL_CUH

#include "xpar/detail/cuda_block_scan.cuh" /* shared with the application's operators */
#include "scan_tile_status.cuh"

namespace xpar_cuda {
namespace {

template <class T> struct ScanShared {
  T warp_totals[32];
  T prefix; /* look-back path: the tile's exclusive prefix; one block: the carry */
  size_t next_tile;
};

/* Tn::fixed_block, false for a tuning that does not name it. */
template <class Tn> constexpr auto tuning_fixes_block_(int) -> decltype(Tn::fixed_block, bool()) {
  return Tn::fixed_block;
}
template <class Tn> constexpr bool tuning_fixes_block_(long) { return false; }
template <class Tn> constexpr bool tuning_fixes_block() { return tuning_fixes_block_<Tn>(0); }

template <class T, int VECTORS> constexpr int scan_items_per_thread() {
  return (int)(VECTORS * (tuning::vector_bytes / sizeof(T)));
}

template <class Op, class Tn, bool VECTOR, bool ONE_BLOCK>
__device__ __forceinline__ void consume_tile(const ScanParams &p,
                                             ScanShared<typename Op::Type> &sh, size_t tile) {
  using T = typename Op::Type;
  constexpr int V = (int)(tuning::vector_bytes / sizeof(T));
  constexpr int K = Tn::vectors;
  constexpr int ITEMS = K * V;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes = warp_lanes();
  const T *in = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t chunk = tile * (size_t)blockDim.x * ITEMS + (size_t)warp * 32u * ITEMS;

  /* 1. load everything first (in-place safety) */
  T x[K][V];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (VECTOR) {
      Pack16<T> pack;
      pack.raw = load16(in + at);
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = pack.e[e];
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = at + e < p.n ? in[at + e] : Op::identity();
    }
  }
  T warp_offset, block_total;
  block_warp_offsets<Op>(thread_total<Op>(x), sh.warp_totals, &warp_offset, &block_total);

  /* 2. the seed of the local scan; publish the aggregate at once */
  const bool has_prefix = tile > 0 || p.has_init; /* uniform */
  T seed = warp_offset;
  if constexpr (ONE_BLOCK) {
    if (has_prefix) seed = warp == 0 ? sh.prefix : Op::apply(sh.prefix, warp_offset);
  } else {
    if (threadIdx.x == 0)
      publish<T>(p, tile, tile == 0 && p.has_init ? Op::apply(scan_init<T>(p), block_total)
                                                  : block_total,
                 tile == 0 ? kStatusInclusive : kStatusAggregate);
  }

  /* 3. local scan in registers */
  const T running = thread_scan_items<Op>(x, seed, p.exclusive != 0);

  /* 4. the prefix from the predecessors */
  if constexpr (!ONE_BLOCK) {
    if (warp == 0) {
      if (tile > 0) {
        const T prefix = look_back<Op, Tn::window>(p, tile, lane, lanes);
        if (lane == 0) {
          publish<T>(p, tile, Op::apply(prefix, block_total), kStatusInclusive);
          sh.prefix = prefix;
        }
      } else if (lane == 0) {
        sh.prefix = scan_init<T>(p);
      }
      if (lane == 0 && !p.block_index_tiles)
        sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
    }
    __syncthreads();
    if (has_prefix) {
      const T prefix = sh.prefix;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e) x[k][e] = Op::apply(prefix, x[k][e]);
    }
  }

  /* 5. store */
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (VECTOR) {
      store16<T>(out + at, x[k]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (at + e < p.n) out[at + e] = x[k][e];
    }
  }
  if constexpr (ONE_BLOCK) {
    /* Every thread has read this tile's carry and warp totals: the next tile may
     * overwrite them. */
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1u) sh.prefix = running;
  }
}

template <class Op, class Tn, bool ONE_BLOCK>
__device__ __forceinline__ void consume_tile_at(const ScanParams &p,
                                                ScanShared<typename Op::Type> &sh, size_t tile) {
  using T = typename Op::Type;
  const size_t tile_items = (size_t)blockDim.x * scan_items_per_thread<T, Tn::vectors>();
  if (p.vectorized && (tile + 1) * tile_items <= p.n)
    consume_tile<Op, Tn, true, ONE_BLOCK>(p, sh, tile);
  else
    consume_tile<Op, Tn, false, ONE_BLOCK>(p, sh, tile);
}

/* TUNED: compiled for Tn::block threads and Tn::min_blocks resident blocks per SM, the
 * look-back path only (grid > 1); otherwise for any block up to max_block, both paths
 * (one block: small n, cuda-serial; launch-shape overrides).  The one-block path in the
 * tuned kernel cost it registers: int32 sum spill stores 228 B instead of 76 (ptxas). */
template <class Op, class Tn, bool TUNED>
__global__ void __launch_bounds__(TUNED ? Tn::block : tuning::max_block,
                                  TUNED ? Tn::min_blocks : 1) scan_kernel(ScanParams p) {
  using T = typename Op::Type;
  __shared__ ScanShared<T> sh;
  /* The tuned kernel is only launched with Tn::block threads (scan_launch: tuned_block).
   * With Tn::fixed_block the compiler is told so, which makes every warp whole at compile
   * time (warp_lanes() = 32, full shuffle masks, no partial-warp branches in
   * cuda_block_scan.cuh and the look-back).  ptxas, sm_90, nvcc 13.0: the 8-byte kernels went
   * from 64 registers + 76-104 B of spill stores to 62-64 registers and none; the 4-byte
   * ones from 80 registers to 72-80, also without spills, but measured 7 % slower
   * (2500 vs 2670 GB/s, int32 2^28), so ScanTuning<4> leaves it off (H100 host, 2026-11-25).
   * Both facts are needed: with the block size alone the 4-byte kernels spilled 68 B. */
  if (TUNED && tuning_fixes_block<Tn>()) {
    __builtin_assume(blockDim.x == Tn::block);
    __builtin_assume(threadIdx.x < Tn::block);
  }
  if (!TUNED && gridDim.x == 1) {
    if (threadIdx.x == 0) sh.prefix = scan_init<T>(p);
    for (size_t tile = 0; tile < p.num_tiles; ++tile)
      consume_tile_at<Op, Tn, true>(p, sh, tile);
  } else if (p.block_index_tiles) {
    if (blockIdx.x < p.num_tiles) consume_tile_at<Op, Tn, false>(p, sh, blockIdx.x);
  } else {
    if (threadIdx.x == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
    __syncthreads();
    size_t tile = sh.next_tile;
    while (tile < p.num_tiles) {
      consume_tile_at<Op, Tn, false>(p, sh, tile);
      tile = sh.next_tile; /* written before the tile's second barrier */
    }
  }
  signal_block_done(p.done);
}

/* One block of at most tuning::scan_small_block threads, one vector each: the whole scan
 * of a small n as one tile (scan_launch picks it; launch_shape.cuh says why).  The same
 * tile body as every other path, with the one-block carry. */
struct SmallScanTuning {
  static constexpr unsigned block = tuning::scan_small_block;
  static constexpr int vectors = 1;
  static constexpr unsigned min_blocks = 1;
  static constexpr int window = 1;
  static constexpr bool fixed_block = false;
};

template <class Op>
__global__ void __launch_bounds__(tuning::scan_small_block, 1) scan_small_kernel(ScanParams p) {
  using T = typename Op::Type;
  __shared__ ScanShared<T> sh;
  if (threadIdx.x == 0) sh.prefix = scan_init<T>(p);
  for (size_t tile = 0; tile < p.num_tiles; ++tile)
    consume_tile_at<Op, SmallScanTuning, true>(p, sh, tile);
  signal_block_done(p.done);
}

/* The generic kernel's shape: any block up to max_block must launch, i.e. 64 registers
 * per thread; 4 vectors per thread fit them without spills (8 spilled 600 B, ptxas). */
template <class Tn> struct GenericScanTuning {
  static constexpr unsigned block = tuning::max_block;
  static constexpr int vectors = Tn::vectors < 4 ? Tn::vectors : 4;
  static constexpr unsigned min_blocks = 1;
  static constexpr int window = Tn::window;
  static constexpr bool fixed_block = false; /* any block size */
};

/* The look-back's sleeps (ScanTuning's by default; the bench sweeps and checks others). */
struct ScanDelays {
  unsigned first_poll_ns, poll_ns, min_grid;
  template <class Tn> static ScanDelays of() {
    return {Tn::first_poll_delay_ns, Tn::poll_delay_ns, Tn::delay_min_grid};
  }
};

/* One scan of n > 0 elements with tuning Tn, from the carry-in *init (NULL: none). */
template <class Op, class Tn>
xpar_status scan_launch(const xpar__exec *ex, bool exclusive, const xpar__scalar *init,
                        const void *in, void *out, size_t n, const ScanDelays &delays) {
  using T = typename Op::Type;
  using Gn = GenericScanTuning<Tn>;
  constexpr int TUNED_ITEMS = scan_items_per_thread<T, Tn::vectors>();
  constexpr int GENERIC_ITEMS = scan_items_per_thread<T, Gn::vectors>();
  xpar__cuda_state *st = ex->cuda;
  /* The tuned kernel runs the look-back path at Tn's block; everything else (one block,
   * cuda-serial, block overrides) the generic kernel, each with its own tile size. */
  const bool tuned_block = !ex->serial && (ex->block == 0 || ex->block == Tn::block);
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(
      ex, st, sizeof(T) == 4 ? XPAR_CUDA_FAMILY_SCAN4 : XPAR_CUDA_FAMILY_SCAN8,
      (const void *)scan_kernel<Op, Tn, true>, n,
      (unsigned)(tuned_block ? TUNED_ITEMS : GENERIC_ITEMS), &shape));
  const bool tuned = tuned_block && shape.grid > 1;
  /* One block with no block override (small n): the small tile (one vector per thread, up
   * to scan_small_block threads) where it holds n, else the generic tile; either in one
   * tile where max_block threads can hold it (launch_shape.cuh says why), and no more warps
   * than the elements fill (64 elements: one warp, not a 256-thread tile read element by
   * element). */
  constexpr int SMALL_ITEMS = scan_items_per_thread<T, SmallScanTuning::vectors>();
  const bool one_block = shape.grid == 1 && !ex->serial && ex->block == 0;
  const bool small = one_block && n <= (size_t)tuning::scan_small_block * SMALL_ITEMS;
  const int items = small ? SMALL_ITEMS : tuned ? TUNED_ITEMS : GENERIC_ITEMS;
  if (one_block) {
    const size_t threads = (n + items - 1) / items;
    const size_t warps = (threads + 31) / 32;
    const unsigned limit = small ? tuning::scan_small_block : tuning::max_block;
    shape.block = (unsigned)(warps * 32 < limit ? warps * 32 : limit);
  }
  void (*kernel)(ScanParams) = small   ? scan_small_kernel<Op>
                               : tuned ? scan_kernel<Op, Tn, true>
                                       : scan_kernel<Op, Gn, false>;
  const size_t tile_items = (size_t)shape.block * items;
  const size_t num_tiles = n / tile_items + (n % tile_items != 0);

  ScanParams p;
  memset(&p, 0, sizeof p);
  p.in = in;
  p.out = out;
  p.n = n;
  p.num_tiles = num_tiles;
  p.exclusive = exclusive;
  p.vectorized = aligned_to(in, 16) && aligned_to(out, 16);
  scan_params_set_init<Op>(&p, init);
  /* A synchronous call of moderate size waits for the kernel's done signal, not for the
   * stream (done_signal.cuh). */
  const bool spin = !ex->nowait && n <= tuning::flag_wait_max_n;
  XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &p.done));
  GraphScratch graph_scratch(st); /* the tile status of a call captured into a CUDA graph */
  if (shape.grid > 1) {
    XPAR__FORWARD(scan_prepare_tile_status(ex, num_tiles, TileWord<T>::bytes, &p, &graph_scratch,
                                           "scan"));
    p.block_index_tiles = shape.grid >= num_tiles;
    if (shape.grid >= delays.min_grid) {
      p.first_poll_delay_ns = delays.first_poll_ns;
      p.poll_delay_ns = delays.poll_ns;
    }
  }
  /* A synchronous one-block call is latency-bound: the driver's launch
   * (xpar__cuda_launch with a handle); the small kernel or the generic one (one block is
   * never the tuned kernel, which only runs the look-back). */
  static const void *const generic_handle =
      kernel_handle((const void *)scan_kernel<Op, Gn, false>);
  static const void *const small_handle = kernel_handle((const void *)scan_small_kernel<Op>);
  void *args[] = {&p};
  const void *handle = !spin || shape.grid != 1 ? NULL : small ? small_handle : generic_handle;
  XPAR__FORWARD(xpar__cuda_launch(st, (const void *)kernel, handle, shape.grid, shape.block, 0,
                                  args, "scan"));
  XPAR__FORWARD(graph_scratch.free("scan"));
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, p.done, "scan"));
  if (shape.grid > 1) scan_tile_counter_advance(ex, p, shape.grid);
  return XPAR_OK;
}

template <class Op>
xpar_status scan_launch(const xpar__exec *ex, bool exclusive, const xpar__scalar *init,
                        const void *in, void *out, size_t n) {
  using Tn = tuning::ScanTuning<sizeof(typename Op::Type)>;
  return scan_launch<Op, Tn>(ex, exclusive, init, in, out, n, ScanDelays::of<Tn>());
}

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SCAN_KERNEL_CUH */
