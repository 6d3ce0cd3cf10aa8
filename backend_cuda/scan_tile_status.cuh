/*
 * Tile status of the single-pass scans (device_scan.cu, scan_occupancy.cuh): the launch
 * parameters, the per-tile status words and the decoupled look-back over them.
 *
 * Tile status.  flags[t] = epoch << 2 | state (0 none, 1 aggregate, 2 inclusive), with
 * separate value arrays for the aggregate and the inclusive prefix so a reader never mixes
 * them; a value is written, then its flag with a release store (GPU-scope fence + store),
 * and readers poll flags with acquire loads.  4-byte types on the occupancy kernels use
 * one packed 64-bit word per tile instead ([value:32 | epoch:30 | status:2], one relaxed
 * store / load: CUB's ScanTileState for small types).  The epoch is the state's per-call
 * tag: words of earlier calls simply do not match, so no per-call memset is needed (only
 * when the buffer grows or the 30-bit epoch wraps).
 */
#ifndef XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH
#define XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH

#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "warp_block.cuh"

namespace xpar_cuda {

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
  unsigned long long *packed; /* occupancy kernels (v4, v5), 4-byte types: [value:32 | epoch:30 | status:2] per tile */
  uint32_t epoch;
  unsigned long long *tile_counter;
  unsigned long long tile_base;
  unsigned first_poll_delay_ns;
  unsigned poll_delay_ns;
  int ticket_draw; /* when the next tile index is drawn: XPAR_CUDA_TICKET_* */
  int block_index_tiles; /* occupancy kernels: tile = blockIdx.x, no tickets */
  /* The carry-in, the bytes of one T (the identity for xpar_scan): tile 0's prefix and
   * the single-block path's first carry.  has_init = 0 (xpar_scan): tile 0 has no
   * prefix, and its values are the block-local ones. */
  int has_init;
  xpar__scalar init;
};

/* Sets p's tile-status fields for a launch of more than one block over `num_tiles` tiles
 * (grows the cached status buffer when needed, bumps the epoch); device_scan.cu. */
xpar_status scan_prepare_tile_status(xpar__cuda_state *st, size_t num_tiles, ScanParams *p);

namespace {

/* Sets p's carry-in from the backend's init (NULL: Op's identity, has_init = 0). */
template <class Op> void scan_params_set_init(ScanParams *p, const xpar__scalar *init) {
  using T = typename Op::Type;
  p->has_init = init != NULL;
  if (init) {
    p->init = *init;
  } else {
    const T identity = Op::identity();
    memcpy(p->init.bytes, &identity, sizeof identity);
  }
}

/* The carry-in as T. */
template <class T> __device__ __forceinline__ T scan_init(const ScanParams &p) {
  T v;
  memcpy(&v, p.init.bytes, sizeof v);
  return v;
}

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
template <class Op, int M = tuning::scan_lookback_tiles_per_lane>
__device__ typename Op::Type look_back(const ScanParams &p, size_t tile, unsigned lane,
                                       unsigned lanes) {
  using T = typename Op::Type;
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

/* v3's windowed look-back over packed status words (4-byte types). */
template <class Op, int M = tuning::scan_lookback_tiles_per_lane>
__device__ typename Op::Type look_back_packed(const ScanParams &p, size_t tile, unsigned lane,
                                              unsigned lanes) {
  using T = typename Op::Type;
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

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH */
