/*
 * Device layer: inclusive / exclusive scan (sum, min, max) in one pass with
 * decoupled look-back (Merrill & Garland, as in CUB's DeviceScan).
 *
 * This file: the entry point and the variant choice (run_scan), the tile-status
 * buffer (scan_prepare_tile_status), and v3, the persistent kernel described
 * below, whose single-block path also serves every variant when the grid is 1
 * (cuda-serial).  The default, v5, and v4 are the occupancy kernels of
 * scan_occupancy.cuh; the tile status and the look-back are in
 * scan_tile_status.cuh.  v3 in detail:
 *
 * Tiles.  A tile is blockDim.x * ITEMS elements.  Warp w owns the contiguous
 * chunk [w * 32 * ITEMS, ...) of the tile; inside the chunk the warp walks
 * K vectors in striped order (vector k of lane l is vector k * lanes + l of
 * the chunk), so every warp-wide load and store is fully coalesced and, on
 * the aligned path, 16 bytes per lane.  Each thread reads all of its items
 * before it writes any, and only its own items: in-place scans are safe.
 *
 * Per tile:
 *  thread  load K vectors; fold them into the lane's aggregate
 *  warp    inclusive shuffle scan -> warp aggregate (last lane)
 *  block   warp 0 scans the warp aggregates -> block aggregate and the
 *          exclusive prefix of every warp
 *  device  warp 0 publishes the block aggregate, looks back over up to 32
 *          predecessor tiles at once (a predecessor's inclusive prefix ends
 *          the look-back; aggregates are folded in and the window moves on),
 *          then publishes the tile's inclusive prefix.  Tile 0's prefix is the
 *          carry-in of xpar_scan_init: it publishes init op its aggregate (for
 *          xpar_scan, the aggregate) as its inclusive prefix at once
 *  thread  pass 2: per vector, a warp scan of the lanes' vector totals gives
 *          each lane its seed; the lane then runs through its items in
 *          element order from that seed and stores them
 *
 * Tile order.  Blocks are persistent and draw tile indices from a 64-bit
 * counter that only ever grows (atomicAdd; the host passes the value it had
 * at the start of the call), so tiles start in order and a tile only ever
 * waits for tiles that have started.  Each block fetches until it draws an
 * index >= num_tiles, so one call draws exactly num_tiles + gridDim.x
 * indices and the host advances its base by that: no reset, no memset.
 *
 * Tile status.  flags[t] = epoch << 2 | state (0 none, 1 aggregate,
 * 2 inclusive), with separate value arrays for the aggregate and the
 * inclusive prefix so a reader never mixes them; a value is written, then
 * its flag with a release store (GPU-scope fence + store), and readers poll
 * flags with acquire loads.  The epoch is the state's per-call tag: flags of earlier
 * calls simply do not match, so no per-call memset is needed (only when the
 * buffer grows or the 30-bit epoch wraps).
 *
 * One block (grid = 1, which includes cuda-serial) needs no look-back: the
 * block walks the tiles in order and carries the running value of the last
 * item of one tile into the next, starting from init, so with block = 1 the
 * result is the CPU serial loop, operation for operation.
 */
#include "cuda_ops.h"
#include "scan_occupancy.cuh"

namespace xpar_cuda {
namespace {

template <class T> struct ScanShared {
  T warp_aggregate[32];
  T warp_seed[32];
  T carry; /* one block: running value at the end of the previous tile (init at first) */
  size_t next_tile;
};
template <class T> constexpr int items_per_thread() {
  return (int)(tuning::scan_vectors_per_thread * (tuning::vector_bytes / sizeof(T)));
}
/*
 * One tile.  V = elements per access (16 / sizeof(T) on the aligned path,
 * 1 on the scalar path); GUARD: the tile may run past n.
 */
template <class Op, int V, bool GUARD>
__device__ __forceinline__ void scan_tile(const ScanParams &p, ScanShared<typename Op::Type> &sh,
                                          size_t tile, bool single_block,
                                          unsigned long long next_ticket) {
  using T = typename Op::Type;
  constexpr int ITEMS = items_per_thread<T>();
  constexpr int K = ITEMS / V;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes = warp_lanes();
  const unsigned warps = (blockDim.x + 31u) / 32u;
  const T *in = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t chunk = tile * (size_t)blockDim.x * ITEMS + (size_t)warp * 32u * ITEMS;

  /* Thread: load every item of this lane first (in-place safety). */
  T x[K][V];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (V > 1) {
      Pack16<T> pack;
      pack.raw = load16(in + at);
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = pack.e[e];
    } else {
      x[k][0] = (!GUARD || at < p.n) ? in[at] : Op::identity();
    }
  }
  T lane_total = x[0][0];
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (k || e) lane_total = Op::apply(lane_total, x[k][e]);

  /* Warp: aggregate in the last lane. */
  const T warp_inclusive = warp_inclusive_scan<Op>(lane_total, lane, lanes);
  if (lane == lanes - 1u) sh.warp_aggregate[warp] = warp_inclusive;
  __syncthreads();

  /* Block + device: warp 0 scans warp aggregates and settles the tile prefix. */
  if (warp == 0) {
    const unsigned mask = lane_mask(lanes);
    const T mine = lane < warps ? sh.warp_aggregate[lane] : Op::identity();
    const T incl = warp_inclusive_scan<Op>(mine, lane, lanes);
    const T excl = __shfl_up_sync(mask, incl, 1);
    const T block_total = __shfl_sync(mask, incl, (int)warps - 1);
    /* xpar_scan (has_init = 0): tile 0 has no prefix, its seeds are the block's own. */
    T prefix = Op::identity();
    bool has_prefix;
    if (single_block) {
      prefix = sh.carry;
      has_prefix = tile > 0 || p.has_init;
    } else if (tile == 0) {
      prefix = scan_init<T>(p);
      has_prefix = p.has_init;
      if (lane == 0)
        publish(p, static_cast<T *>(p.inclusives), tile,
                has_prefix ? Op::apply(prefix, block_total) : block_total, kStatusInclusive);
    } else {
      if (lane == 0) {
        publish(p, static_cast<T *>(p.aggregates), tile, block_total, kStatusAggregate);
        /* The draw's round trip overlaps the look-back. */
        if (p.ticket_draw == XPAR_CUDA_TICKET_AFTER_AGGREGATE)
          next_ticket = atomicAdd(p.tile_counter, 1ull);
      }
      prefix = look_back<Op>(p, tile, lane, lanes);
      has_prefix = true;
      if (lane == 0)
        publish(p, static_cast<T *>(p.inclusives), tile, Op::apply(prefix, block_total),
                kStatusInclusive);
    }
    if (lane < warps) {
      T seed = Op::identity();
      if (lane == 0)
        seed = prefix; /* the identity when there is no prefix */
      else
        seed = has_prefix ? Op::apply(prefix, excl) : excl;
      sh.warp_seed[lane] = seed;
    }
    if (lane == 0 && !single_block && p.ticket_draw != XPAR_CUDA_TICKET_AT_END) {
      /* Tile 0 publishes no aggregate: it draws here. */
      if (p.ticket_draw == XPAR_CUDA_TICKET_AFTER_AGGREGATE && tile == 0)
        next_ticket = atomicAdd(p.tile_counter, 1ull);
      sh.next_tile = (size_t)(next_ticket - p.tile_base);
    }
  }
  __syncthreads();

  /* Pass 2: per vector, seed each lane from the warp's running value and the
   * totals of the lanes before it, then run through the items in order. */
  const unsigned mask = lane_mask(lanes);
  T running = sh.warp_seed[warp];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    T vector_total = x[k][0];
#pragma unroll
    for (int e = 1; e < V; ++e) vector_total = Op::apply(vector_total, x[k][e]);
    const T incl = warp_inclusive_scan<Op>(vector_total, lane, lanes);
    const T before = __shfl_up_sync(mask, incl, 1);
    T run = lane == 0 ? running : Op::apply(running, before);
    T y[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (p.exclusive) {
        y[e] = run;
        run = Op::apply(run, x[k][e]);
      } else {
        run = Op::apply(run, x[k][e]);
        y[e] = run;
      }
    }
    const size_t at = chunk + ((size_t)k * lanes + lane) * V;
    if constexpr (V > 1) {
      store16<T>(out + at, y);
    } else {
      if (!GUARD || at < p.n) out[at] = y[0];
    }
    running = __shfl_sync(mask, run, (int)lanes - 1);
  }
  if (single_block && threadIdx.x == blockDim.x - 1u) sh.carry = running;
}

template <class Op>
__global__ void __launch_bounds__(tuning::max_block) scan_kernel(ScanParams p) {
  using T = typename Op::Type;
  constexpr int ITEMS = items_per_thread<T>();
  constexpr int V = (int)(tuning::vector_bytes / sizeof(T));
  __shared__ ScanShared<T> sh;
  const bool single_block = gridDim.x == 1;
  const size_t tile_items = (size_t)blockDim.x * ITEMS;

  size_t tile = 0;
  if (single_block) {
    if (threadIdx.x == 0) sh.carry = scan_init<T>(p);
  } else {
    if (threadIdx.x == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
    __syncthreads();
    tile = sh.next_tile;
  }
  while (tile < p.num_tiles) {
    /* The next index is drawn at the start of this tile (its latency hides
     * behind the tile, but successors of the drawn tile wait a whole tile for
     * its aggregate), after this tile's aggregate is published (the round
     * trip overlaps the look-back), or at the end (nothing waits on a drawn
     * tile that has not started, but the round trip is exposed). */
    unsigned long long next_ticket = 0;
    if (!single_block && threadIdx.x == 0 && p.ticket_draw == XPAR_CUDA_TICKET_AT_START)
      next_ticket = atomicAdd(p.tile_counter, 1ull);
    const bool full = (tile + 1) * tile_items <= p.n;
    if (full && p.vectorized)
      scan_tile<Op, V, false>(p, sh, tile, single_block, next_ticket);
    else
      scan_tile<Op, 1, true>(p, sh, tile, single_block, next_ticket);
    if (!single_block && p.ticket_draw == XPAR_CUDA_TICKET_AT_END) {
      if (threadIdx.x == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
      __syncthreads();
    }
    tile = single_block ? tile + 1 : sh.next_tile;
  }
}


template <class Op> xpar_status run_scan(const xpar__exec *ex, xpar_scan_kind kind,
                                         const xpar__scalar *init, const void *in, void *out,
                                         size_t n) {
  using T = typename Op::Type;
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, "scan"));
  if (n == 0) return XPAR_OK;
  if (!aligned_to(in, sizeof(T)) || !aligned_to(out, sizeof(T)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "scan pointers %p / %p are not aligned to their %zu-byte elements", in, out,
                      sizeof(T));
  const bool exclusive = kind == XPAR_EXCLUSIVE;

  /* Variant: the occupancy kernel with its tuned shape (another block size runs its
   * generic instantiation), or v3.  One block (cuda-serial, 1 x N overrides, small n)
   * always runs v3's single-block path, which is the CPU serial loop at block = 1. */
  const int variant = st->scan_tuning.variant;
  xpar__cuda_shape shape;
  if (!ex->serial && variant == XPAR_CUDA_SCAN_V5) {
    using namespace tuning;
    constexpr unsigned kBlock = scan_v5_block, kMin = scan_v5_min_blocks;
    constexpr int kVecs = (int)scan_v5_vectors_per_thread;
    constexpr int kWindow = scan_v5_lookback_tiles_per_lane;
    XPAR__FORWARD(xpar__cuda_choose_shape(
        ex, st, XPAR_CUDA_FAMILY_SCAN_V5,
        (const void *)scan_occupancy_kernel<Op, kBlock, kVecs, kMin, kWindow>, n,
        (unsigned)occupancy_items_per_thread<T, kVecs>(), &shape));
    if (shape.grid > 1)
      return scan_occupancy_launch<Op, kBlock, kVecs, kMin, kWindow>(ex, shape, exclusive, init,
                                                                     in, out, n);
  } else if (!ex->serial && variant == XPAR_CUDA_SCAN_V4) {
    using namespace tuning;
    constexpr unsigned kBlock = scan_v4_block, kMin = scan_v4_min_blocks;
    constexpr int kVecs = (int)scan_v4_vectors_per_thread;
    XPAR__FORWARD(xpar__cuda_choose_shape(
        ex, st, XPAR_CUDA_FAMILY_SCAN_V4, (const void *)scan_occupancy_kernel<Op, kBlock, kVecs, kMin>,
        n, (unsigned)occupancy_items_per_thread<T, kVecs>(), &shape));
    if (shape.grid > 1)
      return scan_occupancy_launch<Op, kBlock, kVecs, kMin>(ex, shape, exclusive, init, in, out,
                                                            n);
  }
  const unsigned items = (unsigned)items_per_thread<T>();
  XPAR__FORWARD(xpar__cuda_choose_shape(ex, st, XPAR_CUDA_FAMILY_SCAN,
                                        (const void *)scan_kernel<Op>, n, items, &shape));
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
  if (shape.grid > 1) XPAR__FORWARD(scan_prepare_tile_status(st, num_tiles, &p));

  scan_kernel<Op><<<shape.grid, shape.block, 0, st->stream>>>(p);
  XPAR__FORWARD(xpar__cuda_check_launch(st, "scan"));
  if (shape.grid > 1) st->scan_tile_base += num_tiles + shape.grid;
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, "scan"));
  return XPAR_OK;
}

} // namespace

xpar_status scan_prepare_tile_status(xpar__cuda_state *st, size_t num_tiles, ScanParams *p) {
  XPAR__FORWARD(xpar__cuda_ensure_control(st));
  /* Per tile: flag (4 bytes, the array padded to 8), packed word (8, 4-byte types on the
   * occupancy kernels), aggregate and inclusive (8 each): 28 bytes.  Flags and packed
   * words are zeroed together (growth, epoch wrap); an old word never matches a newer
   * epoch. */
  constexpr size_t kPerTile = 28;
  const size_t needed = ((num_tiles * 4 + 7) & ~(size_t)7) + num_tiles * 24 + 8;
  int grown = 0;
  XPAR__FORWARD(xpar__cuda_grow_device(st, &st->scan_status, needed, "scan tile status", &grown));
  if (grown) st->scan_status_tiles = (st->scan_status.bytes - 8) / kPerTile;
  const size_t capacity = st->scan_status_tiles;
  char *base = static_cast<char *>(st->scan_status.ptr);
  const size_t flag_bytes = (capacity * 4 + 7) & ~(size_t)7;
  const size_t cleared = flag_bytes + capacity * 8; /* flags + packed words */
  if (grown || st->scan_epoch + 1 >= kEpochLimit) {
    XPAR_CUDA_TRY(cudaMemsetAsync(base, 0, cleared, st->stream),
                  "clearing the scan tile status (%zu bytes)", cleared);
    st->scan_epoch = 0;
  }
  st->scan_epoch++;
  p->flags = reinterpret_cast<uint32_t *>(base);
  p->packed = reinterpret_cast<unsigned long long *>(base + flag_bytes);
  p->aggregates = base + flag_bytes + capacity * 8;
  p->inclusives = base + flag_bytes + capacity * 16;
  p->epoch = st->scan_epoch;
  p->tile_counter = st->scan_tile_counter;
  p->tile_base = st->scan_tile_base;
  p->first_poll_delay_ns = st->scan_tuning.first_poll_delay_ns;
  p->poll_delay_ns = st->scan_tuning.poll_delay_ns;
  p->ticket_draw = st->scan_tuning.ticket_draw;
  return XPAR_OK;
}

} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                                       xpar_scan_kind kind, const xpar__scalar *init,
                                       const void *in, void *out, size_t n) {
  if (kind != XPAR_INCLUSIVE && kind != XPAR_EXCLUSIVE)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)kind);
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      return run_scan<decltype(op_tag)>(ex, kind, init, in, out, n);
    });
  });
}

int xpar__cuda_scan_variant_resources(int variant, int *regs, int *local_bytes, int *block,
                                      int *blocks_per_sm) {
  using Op = SumOp<int32_t>;
  const void *kernel;
  int b;
  switch (variant) {
    case XPAR_CUDA_SCAN_V3:
      kernel = (const void *)scan_kernel<Op>, b = (int)tuning::scan_block;
      break;
    case XPAR_CUDA_SCAN_V4:
      kernel = (const void *)scan_occupancy_kernel<Op, tuning::scan_v4_block,
                                                   tuning::scan_v4_vectors_per_thread,
                                                   tuning::scan_v4_min_blocks>,
      b = (int)tuning::scan_v4_block;
      break;
    case XPAR_CUDA_SCAN_V5:
      kernel = (const void *)scan_occupancy_kernel<Op, tuning::scan_v5_block,
                                                   tuning::scan_v5_vectors_per_thread,
                                                   tuning::scan_v5_min_blocks,
                                                   tuning::scan_v5_lookback_tiles_per_lane>,
      b = (int)tuning::scan_v5_block;
      break;
    default:
      return -1;
  }
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  int resident = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, b, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  *regs = attr.numRegs;
  *local_bytes = (int)attr.localSizeBytes;
  *block = b;
  *blocks_per_sm = resident;
  return 0;
}
