/*
 * Device layer: inclusive / exclusive scan (sum, min, max) in one pass with
 * decoupled look-back (Merrill & Garland, as in CUB's DeviceScan).
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
 *          then publishes the tile's inclusive prefix
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
 * item of one tile into the next, so with block = 1 the result is the CPU
 * serial loop, operation for operation.
 */
#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "warp_block.cuh"

namespace xpar_cuda {
namespace {

constexpr uint32_t kStatusNone = 0;
constexpr uint32_t kStatusAggregate = 1;
constexpr uint32_t kStatusInclusive = 2;
constexpr uint32_t kEpochLimit = 1u << 30;

struct ScanParams {
  const void *in;
  void *out;
  size_t n;
  size_t num_tiles;
  int exclusive;
  int vectorized; /* in and out are both 16-byte aligned */
  uint32_t *flags;
  void *aggregates; /* 8-byte slots, one per tile */
  void *inclusives;
  unsigned long long *packed; /* v4, 4-byte types: [value:32 | epoch:30 | status:2] per tile */
  uint32_t epoch;
  unsigned long long *tile_counter;
  unsigned long long tile_base;
  unsigned first_poll_delay_ns;
  unsigned poll_delay_ns;
  int ticket_draw; /* when the next tile index is drawn: XPAR_CUDA_TICKET_* */
};

template <class T> struct ScanShared {
  T warp_aggregate[32];
  T warp_seed[32];
  T carry; /* one block: running value at the end of the previous tile */
  size_t next_tile;
};

/* ---- v4: packed tile status for 4-byte types -------------------------------------
 * One 64-bit word per tile, [value:32 | epoch:30 | status:2], written with one relaxed
 * 64-bit store and read with one relaxed 64-bit load: the value travels with its status
 * (single-copy atomic), so no fence sits between them and one L2 round trip per poll
 * brings both (CUB's ScanTileState for small types). */
__device__ __forceinline__ unsigned long long load_relaxed_gpu_u64(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed_gpu_u64(unsigned long long *p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
template <class T> __device__ __forceinline__ unsigned long long pack_status(T value, uint32_t epoch,
                                                                             uint32_t state) {
  static_assert(sizeof(T) == 4, "packed status: 4-byte types only");
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return (unsigned long long)bits << 32 | (unsigned long long)(epoch << 2 | state);
}
template <class T> __device__ __forceinline__ T packed_value(unsigned long long word) {
  const uint32_t bits = (uint32_t)(word >> 32);
  T v;
  memcpy(&v, &bits, 4);
  return v;
}
__device__ __forceinline__ uint32_t packed_state(unsigned long long word, uint32_t epoch) {
  const uint32_t low = (uint32_t)word;
  return (low >> 2) == epoch ? (low & 3u) : kStatusNone;
}

template <class T> constexpr int items_per_thread() {
  return (int)(tuning::scan_vectors_per_thread * (tuning::vector_bytes / sizeof(T)));
}

/* One flag, relaxed: the caller fences (acquire) once the flags it needs are in. */
__device__ __forceinline__ uint32_t read_status(const uint32_t *flag, uint32_t epoch) {
  const uint32_t word = load_relaxed_gpu(flag);
  return (word >> 2) == epoch ? (word & 3u) : kStatusNone;
}

template <class T>
__device__ __forceinline__ void publish(const ScanParams &p, T *values, size_t tile, T value,
                                        uint32_t state) {
  store_cg(values + tile, value);
  /* Release: the value is visible GPU-wide before the flag that announces it. */
  store_release_gpu(p.flags + tile, p.epoch << 2 | state);
}

/*
 * Warp 0: the exclusive prefix of `tile` (> 0) from its predecessors' status.
 * All existing lanes of warp 0 take part.  A window is lanes x M tiles: lane
 * j looks at the M tiles end - j*M - m (m = 0 nearest), all M flags in
 * flight at once.  The window ends at the nearest tile that has published
 * its inclusive prefix; only the tiles up to it must have a status at all
 * (farther ones are not waited for).  Without one, every aggregate of the
 * window is folded in and the window moves back.
 */
template <class Op>
__device__ typename Op::Type look_back(const ScanParams &p, size_t tile, unsigned lane,
                                       unsigned lanes) {
  using T = typename Op::Type;
  constexpr int M = tuning::scan_lookback_tiles_per_lane;
  const unsigned mask = lane_mask(lanes);
  const T *aggregates = static_cast<const T *>(p.aggregates);
  const T *inclusives = static_cast<const T *>(p.inclusives);
  T prefix = Op::identity();
  bool have = false;
  long long window_end = (long long)tile - 1; /* the tile lane 0, m = 0 looks at */
  /* Give the predecessors' flags time to land before the first poll, and
   * back off between polls, so that spinning warps do not crowd the L2
   * slices the publishing warps write to. */
  if (p.first_poll_delay_ns) __nanosleep(p.first_poll_delay_ns);
  while (true) {
    const long long base = window_end - (long long)lane * M;
    uint32_t state[M];
    unsigned stop_lane, first_inclusive;
    bool found_inclusive; /* uniform across the warp */
    while (true) {
#pragma unroll
      for (int m = 0; m < M; ++m) {
        /* Tiles before 0 read as "inclusive identity"; tile 0 always
         * publishes its inclusive prefix, so they are never folded in. */
        const long long pred = base - m;
        state[m] = pred >= 0 ? read_status(p.flags + pred, p.epoch) : kStatusInclusive;
      }
      first_inclusive = M; /* first m with an inclusive prefix */
      bool none_before = false, none_any = false;
#pragma unroll
      for (int m = M - 1; m >= 0; --m) {
        if (state[m] == kStatusInclusive) first_inclusive = (unsigned)m;
      }
#pragma unroll
      for (int m = 0; m < M; ++m) {
        none_any |= state[m] == kStatusNone;
        if ((unsigned)m < first_inclusive) none_before |= state[m] == kStatusNone;
      }
      const unsigned inclusive_lanes = __ballot_sync(mask, first_inclusive < (unsigned)M);
      found_inclusive = inclusive_lanes != 0;
      stop_lane = found_inclusive ? (unsigned)__ffs(inclusive_lanes) - 1u : lanes - 1u;
      const bool must_wait =
          lane < stop_lane ? none_any : (lane == stop_lane ? none_before : false);
      if (!__any_sync(mask, must_wait)) break;
      if (p.poll_delay_ns) __nanosleep(p.poll_delay_ns);
    }
    fence_acquire_gpu(); /* the values below are no older than their flags */

    /* This lane's tiles in element order (farthest first), up to the stop. */
    const int last_m = lane < stop_lane ? M - 1 : (lane == stop_lane ? (int)first_inclusive : -1);
    T lane_value[M];
#pragma unroll
    for (int m = 0; m < M; ++m) {
      lane_value[m] = Op::identity();
      if (m <= last_m) {
        const long long pred = base - m;
        if (pred >= 0)
          lane_value[m] =
              load_cg(state[m] == kStatusInclusive ? inclusives + pred : aggregates + pred);
      }
    }
    const int first_m = last_m < M - 1 ? last_m : M - 1; /* farthest included */
    T lane_total = Op::identity();
#pragma unroll
    for (int m = M - 1; m >= 0; --m)
      if (m <= first_m) lane_total = m == first_m ? lane_value[m] : Op::apply(lane_total, lane_value[m]);
    T window = warp_reduce<Op>(lane_total, lane, lanes, stop_lane + 1u);
    window = __shfl_sync(mask, window, 0);
    prefix = have ? Op::apply(window, prefix) : window; /* the window is earlier */
    have = true;
    if (found_inclusive) return prefix;
    window_end -= (long long)lanes * M;
  }
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
    T prefix = Op::identity();
    bool has_prefix;
    if (single_block) {
      prefix = sh.carry;
      has_prefix = tile > 0;
    } else if (tile == 0) {
      has_prefix = false;
      if (lane == 0) publish(p, static_cast<T *>(p.inclusives), tile, block_total, kStatusInclusive);
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
    if (threadIdx.x == 0) sh.carry = Op::identity();
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


/* ======================================================================================
 * Scan v4: occupancy instead of persistence.
 *
 * grid = number of tiles (choose_shape: no persistent cap), small blocks (256 or 128
 * threads x 4 vectors) with 64 registers so that 4-8 blocks are resident per SM: while
 * some blocks wait for their prefix, the others load.  The kernel still loops drawing
 * tickets (one block per tile normally; any smaller grid, 1 included, stays correct;
 * the host advances the ticket base by num_tiles + grid as for v3).
 *
 * Per tile:
 *  1. load; lane total; warp inclusive shuffle scan -> warp aggregate -> shared; barrier
 *  2. every warp scans the warp aggregates itself (no second barrier): its exclusive
 *     offset inside the block and the block aggregate
 *  3. warp 0, lane 0 publishes the aggregate (tile 0: the inclusive prefix) AT ONCE
 *  4. every warp (warp 0 too: it gives the predecessors time before the first poll)
 *     turns its items into block-local inclusive / exclusive values in registers
 *  5. warp 0 looks back (packed words for 4-byte types: one 64-bit load per tile, no
 *     fence; v3's flag + value arrays for 8-byte types), publishes the inclusive prefix,
 *     draws the next ticket; the other warps are done with everything but the stores
 *  6. barrier; every item = prefix op local value; store
 * Two barriers per tile (v3 had three), and the look-back overlaps the local scan.
 * ====================================================================================== */

template <class T> struct ScanSharedV4 {
  T warp_aggregate[32];
  T prefix;
  size_t next_tile;
};

template <class T> constexpr int v4_items_per_thread() {
  return (int)(tuning::scan_v4_vectors_per_thread * (tuning::vector_bytes / sizeof(T)));
}

/* v3's windowed look-back over packed status words (4-byte types). */
template <class Op>
__device__ typename Op::Type look_back_packed(const ScanParams &p, size_t tile, unsigned lane,
                                              unsigned lanes) {
  using T = typename Op::Type;
  constexpr int M = tuning::scan_lookback_tiles_per_lane;
  const unsigned mask = lane_mask(lanes);
  T prefix = Op::identity();
  bool have = false;
  long long window_end = (long long)tile - 1;
  if (p.first_poll_delay_ns) __nanosleep(p.first_poll_delay_ns);
  while (true) {
    const long long base = window_end - (long long)lane * M;
    unsigned stop_lane, first_inclusive;
    bool found_inclusive;
    unsigned long long word[M]; /* only the raw words stay live: state and value derive */
    while (true) {
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const long long pred = base - m;
        /* Tiles before 0 read as "inclusive identity" (never folded in: tile 0 is
         * always inclusive). */
        word[m] = pred >= 0 ? load_relaxed_gpu_u64(p.packed + pred)
                            : pack_status(Op::identity(), p.epoch, kStatusInclusive);
      }
      first_inclusive = M;
      bool none_before = false, none_any = false;
#pragma unroll
      for (int m = M - 1; m >= 0; --m)
        if (packed_state(word[m], p.epoch) == kStatusInclusive) first_inclusive = (unsigned)m;
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const bool none = packed_state(word[m], p.epoch) == kStatusNone;
        none_any |= none;
        if ((unsigned)m < first_inclusive) none_before |= none;
      }
      const unsigned inclusive_lanes = __ballot_sync(mask, first_inclusive < (unsigned)M);
      found_inclusive = inclusive_lanes != 0;
      stop_lane = found_inclusive ? (unsigned)__ffs(inclusive_lanes) - 1u : lanes - 1u;
      const bool must_wait =
          lane < stop_lane ? none_any : (lane == stop_lane ? none_before : false);
      if (!__any_sync(mask, must_wait)) break;
      if (p.poll_delay_ns) __nanosleep(p.poll_delay_ns);
    }
    const int last_m = lane < stop_lane ? M - 1 : (lane == stop_lane ? (int)first_inclusive : -1);
    const int first_m = last_m < M - 1 ? last_m : M - 1;
    T lane_total = Op::identity();
#pragma unroll
    for (int m = M - 1; m >= 0; --m)
      if (m <= first_m)
        lane_total = m == first_m ? packed_value<T>(word[m])
                                  : Op::apply(lane_total, packed_value<T>(word[m]));
    T window = warp_reduce<Op>(lane_total, lane, lanes, stop_lane + 1u);
    window = __shfl_sync(mask, window, 0);
    prefix = have ? Op::apply(window, prefix) : window;
    have = true;
    if (found_inclusive) return prefix;
    window_end -= (long long)lanes * M;
  }
}

template <class T, bool PACKED>
__device__ __forceinline__ void publish_v4(const ScanParams &p, size_t tile, T value,
                                           uint32_t state) {
  if constexpr (PACKED) {
    store_relaxed_gpu_u64(p.packed + tile, pack_status(value, p.epoch, state));
  } else {
    publish(p, static_cast<T *>(state == kStatusInclusive ? p.inclusives : p.aggregates), tile,
            value, state);
  }
}

/*
 * One tile.  VECTOR: 16-byte accesses, the tile is whole.  Otherwise (unaligned data or
 * the last, partial tile) the same K x V layout with element-wise, bounds-checked
 * accesses: the register shape stays that of the vector path (4 warp scans, not 16), so
 * the kernel keeps its register budget without spills.
 */
template <class Op, bool VECTOR>
__device__ __forceinline__ void scan_tile_v4(const ScanParams &p, ScanSharedV4<typename Op::Type> &sh,
                                             size_t tile) {
  using T = typename Op::Type;
  constexpr bool PACKED = sizeof(T) == 4;
  constexpr int ITEMS = v4_items_per_thread<T>();
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

  /* 3. publish the aggregate at once */
  if (warp == 0 && lane == 0)
    publish_v4<T, PACKED>(p, tile, block_total, tile == 0 ? kStatusInclusive : kStatusAggregate);

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

  /* 5. warp 0: the prefix, the inclusive publish, the next ticket */
  if (warp == 0) {
    if (tile > 0) {
      T prefix;
      if constexpr (PACKED)
        prefix = look_back_packed<Op>(p, tile, lane, lanes);
      else
        prefix = look_back<Op>(p, tile, lane, lanes);
      if (lane == 0) {
        publish_v4<T, PACKED>(p, tile, Op::apply(prefix, block_total), kStatusInclusive);
        sh.prefix = prefix;
      }
    }
    if (lane == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
  }
  __syncthreads();

  /* 6. prefix in, store */
  const bool has_prefix = tile > 0;
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

template <class Op>
__device__ __forceinline__ void scan_v4_body(const ScanParams &p) {
  using T = typename Op::Type;
  constexpr int ITEMS = v4_items_per_thread<T>();
  __shared__ ScanSharedV4<T> sh;
  const size_t tile_items = (size_t)blockDim.x * ITEMS;
  if (threadIdx.x == 0) sh.next_tile = (size_t)(atomicAdd(p.tile_counter, 1ull) - p.tile_base);
  __syncthreads();
  size_t tile = sh.next_tile;
  while (tile < p.num_tiles) {
    const bool full = (tile + 1) * tile_items <= p.n;
    if (full && p.vectorized)
      scan_tile_v4<Op, true>(p, sh, tile);
    else
      scan_tile_v4<Op, false>(p, sh, tile);
    tile = sh.next_tile; /* written before the tile's second barrier */
  }
}

/* The tuned instantiations (register budget for MIN_BLOCKS resident blocks) and the
 * generic one for block-size overrides up to 1024. */
template <class Op>
__global__ void __launch_bounds__(tuning::scan_v4_256_block, tuning::scan_v4_256_min_blocks)
    scan_v4_256_kernel(ScanParams p) {
  scan_v4_body<Op>(p);
}
template <class Op>
__global__ void __launch_bounds__(tuning::scan_v4_128_block, tuning::scan_v4_128_min_blocks)
    scan_v4_128_kernel(ScanParams p) {
  scan_v4_body<Op>(p);
}
template <class Op>
__global__ void __launch_bounds__(tuning::max_block) scan_v4_generic_kernel(ScanParams p) {
  scan_v4_body<Op>(p);
}

template <class Op> xpar_status run_scan(const xpar__exec *ex, xpar_scan_kind kind,
                                         const void *in, void *out, size_t n) {
  using T = typename Op::Type;
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, "scan"));
  if (n == 0) return XPAR_OK;
  if (!aligned_to(in, sizeof(T)) || !aligned_to(out, sizeof(T)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "scan pointers %p / %p are not aligned to their %zu-byte elements", in, out,
                      sizeof(T));

  /* Variant: v3, or v4 with its tuned block (another block size runs v4's generic
   * instantiation).  One block (cuda-serial, 1 x N overrides, small n) always runs v3's
   * single-block path, which is the CPU serial loop at block = 1. */
  const int variant = st->scan_tuning.variant;
  const bool want_v4 = variant == XPAR_CUDA_SCAN_V4_256 || variant == XPAR_CUDA_SCAN_V4_128;
  const void *kernel = (const void *)scan_kernel<Op>;
  void (*launch)(ScanParams) = scan_kernel<Op>;
  xpar__cuda_kernel_family family = XPAR_CUDA_FAMILY_SCAN;
  unsigned items = (unsigned)items_per_thread<T>();
  if (want_v4 && !ex->serial) {
    const unsigned tuned = variant == XPAR_CUDA_SCAN_V4_256 ? tuning::scan_v4_256_block
                                                            : tuning::scan_v4_128_block;
    family = variant == XPAR_CUDA_SCAN_V4_256 ? XPAR_CUDA_FAMILY_SCAN_V4_256
                                              : XPAR_CUDA_FAMILY_SCAN_V4_128;
    items = (unsigned)v4_items_per_thread<T>();
    if (ex->block && ex->block != tuned)
      launch = scan_v4_generic_kernel<Op>;
    else if (variant == XPAR_CUDA_SCAN_V4_256)
      launch = scan_v4_256_kernel<Op>;
    else
      launch = scan_v4_128_kernel<Op>;
    kernel = (const void *)launch;
  }
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(ex, st, family, kernel, n, items, &shape));
  if (shape.grid == 1 && launch != scan_kernel<Op>) {
    launch = scan_kernel<Op>;
    items = (unsigned)items_per_thread<T>();
  }
  const size_t tile_items = (size_t)shape.block * items;
  const size_t num_tiles = n / tile_items + (n % tile_items != 0);

  ScanParams p;
  memset(&p, 0, sizeof p);
  p.in = in;
  p.out = out;
  p.n = n;
  p.num_tiles = num_tiles;
  p.exclusive = kind == XPAR_EXCLUSIVE;
  p.vectorized = aligned_to(in, 16) && aligned_to(out, 16);

  if (shape.grid > 1) {
    XPAR__FORWARD(xpar__cuda_ensure_control(st));
    /* Per tile: flag (4 bytes, the array padded to 8), packed word (8, v4 4-byte
     * types), aggregate and inclusive (8 each): 28 bytes.  Flags and packed words are
     * zeroed together (growth, epoch wrap); an old word never matches a newer epoch. */
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
    p.flags = reinterpret_cast<uint32_t *>(base);
    p.packed = reinterpret_cast<unsigned long long *>(base + flag_bytes);
    p.aggregates = base + flag_bytes + capacity * 8;
    p.inclusives = base + flag_bytes + capacity * 16;
    p.epoch = st->scan_epoch;
    p.tile_counter = st->scan_tile_counter;
    p.tile_base = st->scan_tile_base;
    p.first_poll_delay_ns = st->scan_tuning.first_poll_delay_ns;
    p.poll_delay_ns = st->scan_tuning.poll_delay_ns;
    p.ticket_draw = st->scan_tuning.ticket_draw;
  }

  launch<<<shape.grid, shape.block, 0, st->stream>>>(p);
  XPAR__FORWARD(xpar__cuda_check_launch(st, "scan"));
  if (shape.grid > 1) st->scan_tile_base += num_tiles + shape.grid;
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, "scan"));
  return XPAR_OK;
}

} // namespace
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                                       xpar_scan_kind kind, const void *in, void *out, size_t n) {
  if (kind != XPAR_INCLUSIVE && kind != XPAR_EXCLUSIVE)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown scan kind %d", (int)kind);
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      return run_scan<decltype(op_tag)>(ex, kind, in, out, n);
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
    case XPAR_CUDA_SCAN_V4_256:
      kernel = (const void *)scan_v4_256_kernel<Op>, b = (int)tuning::scan_v4_256_block;
      break;
    case XPAR_CUDA_SCAN_V4_128:
      kernel = (const void *)scan_v4_128_kernel<Op>, b = (int)tuning::scan_v4_128_block;
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
