/*
 * Tile status of the single-pass scan (device_scan.cu): the launch parameters, one
 * status word per tile, and the decoupled look-back over them (Merrill & Garland; CUB's
 * ScanTileState and TilePrefixCallbackOp).
 *
 * Status word.  A tile's value and its state travel in ONE word, written with one store
 * and read with one load, so a reader that sees the state also sees the value that came
 * with it, without a fence and in one L2 round trip per poll:
 *   4-byte T: 64 bits,  [value:32 | epoch:30 | state:2]   (ld/st.relaxed.gpu.u64)
 *   8-byte T: 128 bits, [value:64 | epoch:30 | state:2 | 0:32]  (ld/st.relaxed.gpu.b128)
 * state: 0 none, 1 aggregate (the tile's own total), 2 inclusive (everything up to and
 * including the tile).  The epoch is the state's per-call tag: words of earlier calls do
 * not match it, so no per-call memset is needed (only when the buffer grows or the
 * 30-bit epoch wraps).  4- and 8-byte words live in separate arrays, so a word of one
 * size is never read as the other.
 *
 * Why this is correct by the PTX memory model (PTX ISA 8.x, "Memory Consistency Model"):
 * a status word is written by exactly one st.relaxed.gpu and read by ld.relaxed.gpu of
 * the same address and the same size.  .u64 and .b128 are scalar types (b128 ld/st:
 * PTX ISA 8.3, sm_70+; nvcc 13 here, sm_90), not vectors, so each access is ONE memory
 * operation; both are strong (relaxed) with gpu scope and every thread of the grid is on
 * one GPU, and they overlap completely: they are morally strong, and conflicting morally
 * strong operations are single-copy atomic (the model's atomicity axiom).  A reader
 * therefore sees either the whole old word (an older epoch or zeros: "none") or the whole
 * new one; it can never combine a new state with an old value.  Nothing else is
 * exchanged through memory between tiles (inputs are only read, each output element is
 * written by the tile that owns it), so no fence orders anything else.  (A v2.u64 access,
 * which CUB uses for 16-byte words, is modelled as two 8-byte accesses in unspecified
 * order and promises no such thing; earlier xpar kept separate flag and value arrays for
 * 8-byte types, with a release/acquire pair and a second round trip: 0.72 x CUB.)
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
  int vectorized;        /* in and out are both 16-byte aligned */
  void *status;          /* num_tiles words of TileWord<T> (grid > 1) */
  uint32_t epoch;
  /* Tile order.  block_index_tiles: tile = blockIdx.x, one tile per block (the grid
   * covers the tiles; CUB's order: it relies on blocks starting in blockIdx order).
   * Otherwise (a grid override smaller than the tile count) blocks draw tile indices
   * from the state's 64-bit counter and loop, so a tile only waits for tiles that have
   * started; a call draws num_tiles + grid indices and the host advances its base. */
  int block_index_tiles;
  unsigned long long *tile_counter;
  unsigned long long tile_base;
  unsigned first_poll_delay_ns; /* 0: no sleeps (small grids, see ScanTuning) */
  unsigned poll_delay_ns;
  /* The carry-in, the bytes of one T (the identity for xpar_scan): tile 0's prefix and
   * the one-block path's first carry.  has_init = 0 (xpar_scan): tile 0 has no prefix. */
  int has_init;
  xpar__scalar init;
  /* One-block launches of a synchronous call: once every element is stored, the block
   * raises this flag (pinned, host-mapped) to `seq` and the host stops waiting. */
  volatile unsigned int *done_flag;
  unsigned int seq;
};

/* Sets p's tile-status fields for a launch of more than one block over `num_tiles` tiles
 * of `word_bytes`-byte status words (grows the cached buffer when needed, bumps the
 * epoch); device_scan.cu. */
xpar_status scan_prepare_tile_status(xpar__cuda_state *st, size_t num_tiles, size_t word_bytes,
                                     ScanParams *p);

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

/* ---- status words --------------------------------------------------------------- */

template <class T, size_t BYTES = sizeof(T)> struct TileWord;

template <class T> struct TileWord<T, 4> {
  struct Raw {
    unsigned long long w;
  };
  static constexpr size_t bytes = 8;
  static __device__ __forceinline__ Raw make(T value, uint32_t epoch, uint32_t state) {
    uint32_t bits;
    memcpy(&bits, &value, 4);
    return {(unsigned long long)bits << 32 | (unsigned long long)(epoch << 2 | state)};
  }
  static __device__ __forceinline__ T value(Raw r) {
    const uint32_t bits = (uint32_t)(r.w >> 32);
    T v;
    memcpy(&v, &bits, 4);
    return v;
  }
  static __device__ __forceinline__ uint32_t state(Raw r, uint32_t epoch) {
    const uint32_t low = (uint32_t)r.w;
    return (low >> 2) == epoch ? (low & 3u) : kStatusNone;
  }
  static __device__ __forceinline__ Raw load(const void *base, size_t tile) {
    Raw r;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(r.w)
                 : "l"(static_cast<const unsigned long long *>(base) + tile)
                 : "memory");
    return r;
  }
  static __device__ __forceinline__ void store(void *base, size_t tile, Raw r) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(
                     static_cast<unsigned long long *>(base) + tile),
                 "l"(r.w)
                 : "memory");
  }
};

template <class T> struct TileWord<T, 8> {
  struct Raw {
    unsigned long long lo, hi; /* lo: the value's bits; hi: epoch << 2 | state */
  };
  static constexpr size_t bytes = 16;
  static __device__ __forceinline__ Raw make(T value, uint32_t epoch, uint32_t state) {
    Raw r;
    memcpy(&r.lo, &value, 8);
    r.hi = (unsigned long long)(epoch << 2 | state);
    return r;
  }
  static __device__ __forceinline__ T value(Raw r) {
    T v;
    memcpy(&v, &r.lo, 8);
    return v;
  }
  static __device__ __forceinline__ uint32_t state(Raw r, uint32_t epoch) {
    return (r.hi >> 2) == epoch ? (uint32_t)(r.hi & 3u) : kStatusNone;
  }
  /* One 128-bit scalar access each (see the header comment for why it is whole). */
  static __device__ __forceinline__ Raw load(const void *base, size_t tile) {
    Raw r;
    asm volatile(
        "{\n\t.reg .b128 t;\n\tld.relaxed.gpu.global.b128 t, [%2];\n\tmov.b128 {%0, %1}, t;\n\t}"
        : "=l"(r.lo), "=l"(r.hi)
        : "l"(static_cast<const char *>(base) + tile * 16)
        : "memory");
    return r;
  }
  static __device__ __forceinline__ void store(void *base, size_t tile, Raw r) {
    asm volatile(
        "{\n\t.reg .b128 t;\n\tmov.b128 t, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], t;\n\t}" ::"l"(
            static_cast<char *>(base) + tile * 16),
        "l"(r.lo), "l"(r.hi)
        : "memory");
  }
};

template <class T>
__device__ __forceinline__ void publish(const ScanParams &p, size_t tile, T value,
                                        uint32_t state) {
  using W = TileWord<T>;
  W::store(p.status, tile, W::make(value, p.epoch, state));
}

/*
 * The look-back: warp 0 computes the exclusive prefix of `tile` (> 0) from its
 * predecessors' words.  All existing lanes of warp 0 take part.  A window is lanes x M
 * tiles: lane j looks at the M tiles end - j*M - m (m = 0 nearest), all M words in flight
 * at once.  The window ends at the nearest tile that has published its inclusive prefix;
 * only the tiles up to it must have a state at all (farther ones are not waited for).
 * Without one, every aggregate of the window is folded in and the window moves back.
 * The tunings use M = 1 (launch_shape.cuh): every extra word per lane stays live beside
 * the items, and windows of 2 and 4 tiles per lane pushed the kernels into spills
 * (bench/cub/NOTES.md).
 */
template <class Op, int M>
__device__ typename Op::Type look_back(const ScanParams &p, size_t tile, unsigned lane,
                                       unsigned lanes) {
  using T = typename Op::Type;
  using W = TileWord<T>;
  const unsigned mask = lane_mask(lanes);
  T prefix = Op::identity();
  bool have = false;
  long long window_end = (long long)tile - 1; /* the tile lane 0, m = 0 looks at */
  /* Give the predecessors time to publish before the first poll, and back off between
   * polls, so that spinning warps do not crowd the L2 slices the publishers write to. */
  if (p.first_poll_delay_ns) __nanosleep(p.first_poll_delay_ns);
  while (true) {
    const long long base = window_end - (long long)lane * M;
    unsigned stop_lane, first_inclusive;
    bool found_inclusive; /* uniform across the warp */
    typename W::Raw word[M];
    while (true) {
#pragma unroll
      for (int m = 0; m < M; ++m) {
        /* Tiles before 0 read as "inclusive identity": tile 0 always publishes its
         * inclusive prefix, so they are never folded in. */
        const long long pred = base - m;
        word[m] = pred >= 0 ? W::load(p.status, (size_t)pred)
                            : W::make(Op::identity(), p.epoch, kStatusInclusive);
      }
      first_inclusive = M; /* first m with an inclusive prefix */
      bool none_before = false, none_any = false;
#pragma unroll
      for (int m = M - 1; m >= 0; --m)
        if (W::state(word[m], p.epoch) == kStatusInclusive) first_inclusive = (unsigned)m;
#pragma unroll
      for (int m = 0; m < M; ++m) {
        const bool none = W::state(word[m], p.epoch) == kStatusNone;
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
    /* This lane's tiles in element order (farthest first), up to the stop. */
    const int last_m = lane < stop_lane ? M - 1 : (lane == stop_lane ? (int)first_inclusive : -1);
    T lane_total = Op::identity();
#pragma unroll
    for (int m = M - 1; m >= 0; --m)
      if (m <= last_m)
        lane_total = m == last_m ? W::value(word[m]) : Op::apply(lane_total, W::value(word[m]));
    T window = warp_reduce<Op>(lane_total, lane, lanes, stop_lane + 1u);
    window = __shfl_sync(mask, window, 0);
    prefix = have ? Op::apply(window, prefix) : window; /* the window is earlier */
    have = true;
    if (found_inclusive) return prefix;
    window_end -= (long long)lanes * M;
  }
}

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SCAN_TILE_STATUS_CUH */
