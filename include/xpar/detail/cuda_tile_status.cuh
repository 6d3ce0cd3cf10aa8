/*
 * Tile status words and the decoupled look-back over them (Merrill & Garland; CUB's
 * ScanTileState and TilePrefixCallbackOp), shared by the built-in scan
 * (backend_cuda/scan_tile_status.cuh, scan_kernel.cuh) and the application's operators
 * (xpar/xpar_operator.cuh).  Installed (xpar/detail/); not a public API.
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
 * Other sizes (operators' structs): a flag and separate value slots, published with
 * release / acquire; TileWord's primary template below says why that is correct.
 */
#ifndef XPAR_DETAIL_CUDA_TILE_STATUS_CUH
#define XPAR_DETAIL_CUDA_TILE_STATUS_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuda_warp_block.cuh"

namespace xpar_cuda {

constexpr uint32_t kStatusNone = 0;
constexpr uint32_t kStatusAggregate = 1;
constexpr uint32_t kStatusInclusive = 2;
constexpr uint32_t kEpochLimit = 1u << 30;

/* Accumulators of any other size (the application's operators: structs up to
 * XPAR_OPERATOR_MAX_ACC bytes): a flag word and two value slots per tile, the
 * tile's aggregate and its inclusive prefix, each written once per epoch.  Too
 * wide for one single-copy-atomic access, so the value travels beside the flag
 * and the flag publishes it:
 *   writer: plain stores of the value into the slot its state names, then
 *           st.release.gpu of the flag (epoch << 2 | state);
 *   reader: ld.acquire.gpu of the flag, then, if it names a state, plain loads
 *           of that state's slot.
 * By the PTX memory model the release store and an acquire load that reads the
 * value it wrote are morally strong (both .gpu scope, one GPU) and so
 * synchronize: the writer's value stores happen before the reader's value loads,
 * which therefore see them (causality order; no other write to that slot exists
 * in the epoch, so there is nothing newer to see either).  A slot is never
 * rewritten while its flag names it: aggregate and inclusive have separate slots.
 * The price is a second, dependent L2 round trip per look-back step, which the
 * 4- and 8-byte words above avoid. */
template <class T, size_t BYTES = sizeof(T)> struct TileWord {
  static constexpr size_t slot = (sizeof(T) + 15) / 16 * 16;
  struct Raw {
    uint32_t flag;
    T value;
  };
  static constexpr size_t bytes = 16 + 2 * slot; /* flag (padded), aggregate, inclusive */
  static __device__ __forceinline__ Raw make(T value, uint32_t epoch, uint32_t state) {
    Raw r;
    r.flag = epoch << 2 | state;
    r.value = value;
    return r;
  }
  static __device__ __forceinline__ T value(const Raw &r) { return r.value; }
  static __device__ __forceinline__ uint32_t state(const Raw &r, uint32_t epoch) {
    return (r.flag >> 2) == epoch ? (r.flag & 3u) : kStatusNone;
  }
  static __device__ __forceinline__ unsigned char *at(const void *base, size_t tile) {
    return static_cast<unsigned char *>(const_cast<void *>(base)) + tile * bytes;
  }
  static __device__ __forceinline__ Raw load(const void *base, size_t tile) {
    unsigned char *w = at(base, tile);
    Raw r;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(r.flag) : "l"(w) : "memory");
    const uint32_t s = r.flag & 3u;
    if (s == kStatusNone)
      memset(&r.value, 0, sizeof r.value); /* never read: "none" waits */
    else /* slots are 16-byte aligned: T's own accesses, not bytes */
      r.value = *reinterpret_cast<const T *>(w + 16 + (s == kStatusInclusive ? slot : 0));
    return r;
  }
  static __device__ __forceinline__ void store(void *base, size_t tile, const Raw &r) {
    unsigned char *w = at(base, tile);
    *reinterpret_cast<T *>(w + 16 + ((r.flag & 3u) == kStatusInclusive ? slot : 0)) = r.value;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(w), "r"(r.flag) : "memory");
  }
};

/* ---- status words --------------------------------------------------------------- */


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

/* Where the look-back reads: the status words of this call (epoch) and its sleeps. */
struct LookBack {
  const void *status;
  uint32_t epoch;
  unsigned first_poll_ns; /* 0: no sleeps (small grids, see ScanTuning) */
  unsigned poll_ns;
};

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
template <class Op, int M, class W, bool ORDERED = false>
__device__ typename Op::Type look_back_words(const LookBack &p, size_t tile, unsigned lane,
                                             unsigned lanes) {
  using T = typename Op::Type;
  const unsigned mask = lane_mask(lanes);
  T prefix = Op::identity();
  bool have = false;
  long long window_end = (long long)tile - 1; /* the tile lane 0, m = 0 looks at */
  /* Give the predecessors time to publish before the first poll, and back off between
   * polls, so that spinning warps do not crowd the L2 slices the publishers write to. */
  if (p.first_poll_ns) __nanosleep(p.first_poll_ns);
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
      if (p.poll_ns) __nanosleep(p.poll_ns);
    }
    /* This lane's tiles in element order (farthest first), up to the stop. */
    const int last_m = lane < stop_lane ? M - 1 : (lane == stop_lane ? (int)first_inclusive : -1);
    T lane_total = Op::identity();
#pragma unroll
    for (int m = M - 1; m >= 0; --m)
      if (m <= last_m)
        lane_total = m == last_m ? W::value(word[m]) : Op::apply(lane_total, W::value(word[m]));
    /* Lane 0 holds the nearest tile: the window in index order is lane stop_lane's
     * tiles first (ORDERED, for operators that need not commute). */
    T window;
    if constexpr (ORDERED)
      window = warp_reduce_ordered<Op, true>(lane_total, lane, lanes, stop_lane + 1u);
    else
      window = warp_reduce<Op>(lane_total, lane, lanes, stop_lane + 1u);
    window = shfl(mask, window, 0);
    prefix = have ? Op::apply(window, prefix) : window; /* the window is earlier */
    have = true;
    if (found_inclusive) return prefix;
    window_end -= (long long)lanes * M;
  }
}

} // namespace xpar_cuda

#endif /* XPAR_DETAIL_CUDA_TILE_STATUS_CUH */
