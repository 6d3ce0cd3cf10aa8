/*
 * The occupancy scan kernels (variants v4 and v5): single pass, decoupled look-back, one
 * tile per block.  Templates on the tile shape (block, vectors per thread, resident
 * blocks, look-back window), so that the production variants (device_scan.cu, shapes in
 * launch_shape.cuh) and the bench's shape sweep (bench/cub/scan_sweep.cu) instantiate the
 * same code.
 */
#ifndef XPAR_BACKEND_CUDA_SCAN_OCCUPANCY_CUH
#define XPAR_BACKEND_CUDA_SCAN_OCCUPANCY_CUH

#include "scan_tile_status.cuh"

namespace xpar_cuda {
namespace {

/* ======================================================================================
 * Occupancy instead of persistence.
 *
 * grid = number of tiles (choose_shape: no persistent cap), blocks of BLOCK threads x
 * VECS 16-byte vectors with a register budget for MIN_BLOCKS resident blocks per SM
 * (v5: 256 x 6, 4 blocks): while some blocks wait for their prefix, the others load.
 * The look-back window is 32 lanes x LOOKBACK tiles (v5: 2; a wider window's status
 * words spill the 24 items out of registers).
 *
 * Tile order (xpar__cuda_scan_tuning.tile_order):
 *  - tickets: each block draws tile indices from the state's 64-bit counter and loops
 *    until it draws one >= num_tiles (any grid, 1 included, is correct: a tile only ever
 *    waits for tiles that have started; the host advances the ticket base by
 *    num_tiles + grid).  Costs one atomic round trip before the first load and one
 *    before the stores of every tile.
 *  - block index: tile = blockIdx.x, one tile per block, no counter (used only when
 *    grid >= num_tiles).  Like CUB's DeviceScan it relies on the hardware starting
 *    blocks in blockIdx order, so that the predecessors of a waiting tile have started.
 *
 * Per tile:
 *  1. load; lane total; warp inclusive shuffle scan -> warp aggregate -> shared; barrier
 *  2. every warp scans the warp aggregates itself (no second barrier): its exclusive
 *     offset inside the block and the block aggregate
 *  3. warp 0, lane 0 publishes the aggregate (tile 0: its inclusive prefix, init op
 *     aggregate) AT ONCE
 *  4. every warp (warp 0 too: it gives the predecessors time before the first poll)
 *     turns its items into block-local inclusive / exclusive values in registers
 *  5. warp 0 looks back (packed words for 4-byte types: one 64-bit load per tile, no
 *     fence; v3's flag + value arrays for 8-byte types), publishes the inclusive prefix,
 *     draws the next ticket (ticket order only); the other warps are done with
 *     everything but the stores.  Tile 0's prefix is the carry-in, init.
 *  6. barrier; every item = prefix op local value; store.  Tile 0 of xpar_scan
 *     (has_init = 0) has no prefix and stores its local values: folding the identity
 *     in instead would change no value (but -0.0), yet costs v4's double-sum kernel
 *     76 B of spills (ptxas, sm_90)
 * Two barriers per tile (v3 had three), and the look-back overlaps the local scan.
 * ====================================================================================== */

template <class T> struct ScanSharedV4 {
  T warp_aggregate[32];
  T prefix;
  size_t next_tile;
};

template <class T, int VECS> constexpr int occupancy_items_per_thread() {
  return (int)(VECS * (tuning::vector_bytes / sizeof(T)));
}

/*
 * One tile.  VECTOR: 16-byte accesses, the tile is whole.  Otherwise (unaligned data or
 * the last, partial tile) the same K x V layout with element-wise, bounds-checked
 * accesses: the register shape stays that of the vector path (4 warp scans, not 16), so
 * the kernel keeps its register budget without spills.
 */
template <class Op, int VECS, bool VECTOR, int LOOKBACK>
__device__ __forceinline__ void scan_tile_v4(const ScanParams &p, ScanSharedV4<typename Op::Type> &sh,
                                             size_t tile) {
  using T = typename Op::Type;
  constexpr bool PACKED = sizeof(T) == 4;
  constexpr int ITEMS = occupancy_items_per_thread<T, VECS>();
  constexpr int V = (int)(tuning::vector_bytes / sizeof(T));
  constexpr int K = ITEMS / V;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes = warp_lanes();
  const unsigned warps = (blockDim.x + 31u) / 32u;
  const unsigned mask = lane_mask(lanes);
  const T *in = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t chunk = tile * (size_t)blockDim.x * ITEMS + (size_t)warp * 32u * ITEMS;

  /* 1. load everything first (in-place safety), lane total, warp aggregate */
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
  T lane_total = x[0][0];
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (k || e) lane_total = Op::apply(lane_total, x[k][e]);
  const T warp_inclusive = warp_inclusive_scan<Op>(lane_total, lane, lanes);
  if (lane == lanes - 1u) sh.warp_aggregate[warp] = warp_inclusive;
  __syncthreads();

  /* 2. every warp: its offset in the block and the block aggregate */
  T warp_offset, block_total;
  {
    const T mine = lane < warps ? sh.warp_aggregate[lane] : Op::identity();
    const T incl = warp_inclusive_scan<Op>(mine, lane, lanes);
    const T excl = __shfl_up_sync(mask, incl, 1);
    /* lanes may be < warps only in a 1-thread-wide last warp of an odd block; then
     * read the shared array directly (rare override shapes). */
    if (warps <= lanes) {
      block_total = __shfl_sync(mask, incl, (int)warps - 1);
      warp_offset = __shfl_sync(mask, excl, (int)warp); /* warp 0: replaced below */
    } else {
      block_total = sh.warp_aggregate[0];
      for (unsigned w = 1; w < warps; ++w) block_total = Op::apply(block_total, sh.warp_aggregate[w]);
      warp_offset = Op::identity();
      for (unsigned w = 0; w < warp; ++w)
        warp_offset = w ? Op::apply(warp_offset, sh.warp_aggregate[w]) : sh.warp_aggregate[0];
    }
    if (warp == 0) warp_offset = Op::identity();
  }

  /* 3. publish the aggregate at once (tile 0: init op aggregate, its inclusive prefix) */
  if (warp == 0 && lane == 0)
    publish_v4<T, PACKED>(p, tile,
                          tile == 0 && p.has_init ? Op::apply(scan_init<T>(p), block_total)
                                                  : block_total,
                          tile == 0 ? kStatusInclusive : kStatusAggregate);

  /* 4. block-local values, in registers: per vector, a warp scan of the lanes' vector
   * totals seeds each lane; the lane runs through its items in element order */
  T running = warp_offset;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    T vector_total = x[k][0];
#pragma unroll
    for (int e = 1; e < V; ++e) vector_total = Op::apply(vector_total, x[k][e]);
    const T incl = warp_inclusive_scan<Op>(vector_total, lane, lanes);
    const T before = __shfl_up_sync(mask, incl, 1);
    T run = lane == 0 ? running : Op::apply(running, before);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (p.exclusive) {
        const T xe = x[k][e];
        x[k][e] = run;
        run = Op::apply(run, xe);
      } else {
        run = Op::apply(run, x[k][e]);
        x[k][e] = run;
      }
    }
    running = __shfl_sync(mask, run, (int)lanes - 1);
  }

  /* 5. warp 0: the prefix, the inclusive publish, the next ticket (ticket order) */
  if (warp == 0) {
    if (tile > 0) {
      T prefix;
      if constexpr (PACKED)
        prefix = look_back_packed<Op, LOOKBACK>(p, tile, lane, lanes);
      else
        prefix = look_back<Op, LOOKBACK>(p, tile, lane, lanes);
      if (lane == 0) {
        publish_v4<T, PACKED>(p, tile, Op::apply(prefix, block_total), kStatusInclusive);
        sh.prefix = prefix;
      }
    } else if (lane == 0) {
      sh.prefix = scan_init<T>(p);
    }
    if (lane == 0 && !p.block_index_tiles)
      sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
  }
  __syncthreads();

  /* 6. prefix in, store */
  const bool has_prefix = tile > 0 || p.has_init;
  const T prefix = has_prefix ? sh.prefix : Op::identity();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    T y[V];
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = has_prefix ? Op::apply(prefix, x[k][e]) : x[k][e];
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (VECTOR) {
      store16<T>(out + at, y);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (at + e < p.n) out[at + e] = y[e];
    }
  }
}

template <class Op, int VECS, int LOOKBACK>
__device__ __forceinline__ void scan_v4_body(const ScanParams &p) {
  using T = typename Op::Type;
  constexpr int ITEMS = occupancy_items_per_thread<T, VECS>();
  __shared__ ScanSharedV4<T> sh;
  const size_t tile_items = (size_t)blockDim.x * ITEMS;
  if (p.block_index_tiles) {
    const size_t tile = blockIdx.x;
    if (tile >= p.num_tiles) return;
    if ((tile + 1) * tile_items <= p.n && p.vectorized)
      scan_tile_v4<Op, VECS, true, LOOKBACK>(p, sh, tile);
    else
      scan_tile_v4<Op, VECS, false, LOOKBACK>(p, sh, tile);
    return;
  }
  if (threadIdx.x == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
  __syncthreads();
  size_t tile = sh.next_tile;
  while (tile < p.num_tiles) {
    const bool full = (tile + 1) * tile_items <= p.n;
    if (full && p.vectorized)
      scan_tile_v4<Op, VECS, true, LOOKBACK>(p, sh, tile);
    else
      scan_tile_v4<Op, VECS, false, LOOKBACK>(p, sh, tile);
    tile = sh.next_tile; /* written before the tile's second barrier */
  }
}

/* One tile shape: BLOCK threads x VECS 16-byte vectors per thread, compiled for MIN_BLOCKS
 * resident blocks per SM (the register budget).  Block-size overrides other than BLOCK
 * run the <max_block, VECS, 1> instantiation. */
template <class Op, unsigned BLOCK, int VECS, unsigned MIN_BLOCKS,
          int LOOKBACK = tuning::scan_lookback_tiles_per_lane>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) scan_occupancy_kernel(ScanParams p) {
  scan_v4_body<Op, VECS, LOOKBACK>(p);
}

/* Launch one occupancy scan over n > 0 elements with `shape` (grid > 1, from
 * xpar__cuda_choose_shape with items_per_thread = occupancy_items_per_thread<T, VECS>),
 * from the carry-in *init (NULL: the identity). */
template <class Op, unsigned BLOCK, int VECS, unsigned MIN_BLOCKS,
          int LOOKBACK = tuning::scan_lookback_tiles_per_lane>
xpar_status scan_occupancy_launch(const xpar__exec *ex, const xpar__cuda_shape &shape,
                                  bool exclusive, const xpar__scalar *init, const void *in,
                                  void *out, size_t n) {
  using T = typename Op::Type;
  xpar__cuda_state *st = ex->cuda;
  void (*kernel)(ScanParams) = shape.block == BLOCK
                                   ? scan_occupancy_kernel<Op, BLOCK, VECS, MIN_BLOCKS, LOOKBACK>
                                   : scan_occupancy_kernel<Op, tuning::max_block, VECS, 1, LOOKBACK>;
  const size_t tile_items = (size_t)shape.block * occupancy_items_per_thread<T, VECS>();
  const size_t num_tiles = n / tile_items + (n % tile_items != 0);
  ScanParams p;
  memset(&p, 0, sizeof p);
  p.in = in;
  p.out = out;
  p.n = n;
  p.num_tiles = num_tiles;
  p.exclusive = exclusive;
  p.vectorized = aligned_to(in, 16) && aligned_to(out, 16);
  p.block_index_tiles =
      st->scan_tuning.tile_order == XPAR_CUDA_TILES_BLOCK_INDEX && shape.grid >= num_tiles;
  scan_params_set_init<Op>(&p, init);
  XPAR__FORWARD(scan_prepare_tile_status(st, num_tiles, &p));
  if (shape.grid < st->scan_tuning.delay_min_grid) p.first_poll_delay_ns = p.poll_delay_ns = 0;
  kernel<<<shape.grid, shape.block, 0, st->stream>>>(p);
  XPAR__FORWARD(xpar__cuda_check_launch(st, "scan"));
  if (!p.block_index_tiles) st->scan_tile_base += num_tiles + shape.grid;
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, "scan"));
  return XPAR_OK;
}

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SCAN_OCCUPANCY_CUH */
