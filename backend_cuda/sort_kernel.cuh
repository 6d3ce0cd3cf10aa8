/*
 * The stable sort's kernels (device_sort.cu): an LSD radix sort by the radix keys of
 * base/sort_key.h, 8-bit digits, onesweep (Adinets & Merrill 2022, as CUB's
 * DeviceRadixSort on sm_80+):
 *
 *  1. histogram_kernel: one read of the keys counts the digits of EVERY pass (shared
 *     counters per block, then global 64-bit counters); the last block to finish turns
 *     them into each pass's exclusive digit offsets (a block scan of 256 bins per pass).
 *  2. onesweep_kernel, once per pass: a block draws the next tile index from the pass's
 *     counter (so a tile only waits for tiles that have started), loads its keys
 *     warp-striped, ranks them in the block (cub::BlockRadixRankMatchEarlyCounts: warp
 *     match.any + per-warp digit counters), publishes its per-digit counts at once,
 *     looks back over the tiles before it, one thread per digit, for the digit's count
 *     before the tile (decoupled look-back over per-(tile, digit) status words), sorts
 *     the tile in shared memory and scatters keys (and values) to their places.  Stable:
 *     the rank keeps input order inside a tile and tiles are placed in order.
 *  3. small_sort_kernel: n up to a few thousand, one block sorts everything in shared
 *     memory (cub::BlockRadixSort) in ONE launch -- the latency floor of a synchronous
 *     small sort is one launch and the done flag.
 *  4. serial_sort_kernel: cuda-serial (grid = block = 1).  Onesweep and the small
 *     kernel rank with whole warps at a fixed block size, so they cannot run on one
 *     thread; the serial tier runs this one-thread stable counting sort per digit
 *     instead (the same passes, buffers and keys: the same bits as every other path).
 *
 * Keys travel as their ORIGINAL bits (Word U: uint32_t or uint64_t) and the digits are
 * read off the radix key computed on each load (Radix below, base/sort_key.h's
 * xpar__sort_radix32/64), so the output is the input's bits permuted even where the
 * radix key is not invertible (-0.0, NaN payloads).  Values move as 4- or 8-byte words;
 * argsort's values (0..n-1) are made by the first pass.
 *
 * Status word of (tile, digit), 64 bits, one relaxed .gpu store / load (single-copy
 * atomic as the scan's words, xpar/detail/cuda_tile_status.cuh):
 *   [count:40 | epoch:22 | state:2]   state 1: the tile's own count of the digit,
 *                                     state 2: the count over tiles 0..tile.
 * Every pass of a call has its own epoch (the context's counter, advanced by the passes
 * of each call), so words of earlier passes and calls never match and nothing is cleared
 * per call; 40 bits bound n below 2^40.
 */
#ifndef XPAR_BACKEND_CUDA_SORT_KERNEL_CUH
#define XPAR_BACKEND_CUDA_SORT_KERNEL_CUH

#include <stdint.h>

#include <type_traits>

#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "base/sort_key.h"
#include "cuda_state.cuh"
#include "launch_shape.cuh"

namespace xpar_cuda {
namespace sort {

constexpr int kDigitBits = 8;
constexpr int kDigits = 1 << kDigitBits;
constexpr int kEpochBits = 22;
constexpr uint32_t kSortEpochLimit = 1u << kEpochBits;
constexpr unsigned long long kMaxN = 1ull << 40; /* the status word's count */
constexpr unsigned long long kStateAggregate = 1, kStateInclusive = 2;

/* Keys-only sorts: no value words. */
struct NoValue {};

/* Tunings (block threads x items per thread), by the wider of key and value:
 * onesweep at 384 threads as CUB's sm_90 policies, items chosen so that a tile of the
 * widest word fits 48 KB of static shared memory. */
template <size_t KEY, size_t VALUE> struct OnesweepTuning {
  static constexpr int threads = 384;
  static constexpr int items = (KEY == 4 && VALUE <= 4) ? (VALUE == 0 ? 20 : 22) : 15;
};
constexpr unsigned histogram_block = 256;
constexpr unsigned histogram_blocks_per_sm = 4;
/* One block sorts n <= small_max_n (small_sort_kernel); two shapes. */
constexpr int small1_threads = 256, small1_items = 4; /* n <= 1024 */
constexpr int small2_threads = 512, small2_items = 8; /* n <= 4096 */
constexpr int small_bits = 4;
constexpr size_t small_max_n = (size_t)small2_threads * small2_items;

/* The radix key of a key's bits (base/sort_key.h).  Integers: bits ^ mask, mask the sign
 * flip of signed keys and ~0 for descending, so the bits come back as key ^ mask.  Floats
 * (F): sort_key.h's float key, then ^ mask (0, or ~0 for descending). */
template <class U, bool F> struct Radix {
  U mask;
  __host__ __device__ __forceinline__ U key(U bits) const {
    if constexpr (F) {
      if constexpr (sizeof(U) == 4)
        return xpar__sort_radix32(bits, XPAR__SORT_KEY_FLOAT, 0) ^ mask;
      else
        return xpar__sort_radix64(bits, XPAR__SORT_KEY_FLOAT, 0) ^ mask;
    } else {
      return bits ^ mask;
    }
  }
  __host__ __device__ __forceinline__ U bits(U key) const { return key ^ mask; } /* !F */
};

/* The mask of Radix for a key class and order. */
template <class U> inline U radix_mask(int key_class, int descending) {
  const U sign = (U)1 << (sizeof(U) * 8 - 1);
  const U desc = descending ? (U)~(U)0 : (U)0;
  if (key_class == XPAR__SORT_KEY_SIGNED) return sign ^ desc;
  return desc;
}

template <class U> struct ShiftDigit {
  uint32_t shift;
  __device__ __forceinline__ uint32_t Digit(U key) const {
    return (uint32_t)(key >> shift) & (kDigits - 1);
  }
};

/* One launch's arguments (every kernel of this file). */
struct SortParams {
  const void *keys_in;
  void *keys_out; /* NULL: this pass writes no keys (argsort's last pass) */
  const void *values_in;
  void *values_out;
  size_t n;
  unsigned long long mask; /* Radix<U>::mask */
  int is_float;            /* small_sort_kernel: F at run time */
  int gen_indices;         /* this pass makes the values 0..n-1 (values_in unused) */
  uint32_t shift;          /* onesweep: the pass's digit */
  uint32_t epoch;          /* onesweep: the pass's epoch */
  unsigned long long *bins;   /* histogram: [passes][256]; onesweep: this pass's 256 offsets */
  unsigned long long *status; /* onesweep: num_tiles x 256 words */
  unsigned int *counter;      /* onesweep: the pass's tile counter; histogram: the ticket */
  int passes;                 /* histogram */
  DoneSignal done;
};

/* The serial kernel's whole plan: each pass's sources and destinations. */
struct SerialPlan {
  const void *ksrc[8];
  void *kdst[8]; /* NULL: not written */
  const void *vsrc[8];
  void *vdst[8];
  size_t n;
  unsigned long long mask;
  int passes;
  int gen_indices;
};

__device__ __forceinline__ unsigned long long status_load(const unsigned long long *p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}
__device__ __forceinline__ void status_store(unsigned long long *p, unsigned long long w) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long status_word(unsigned long long count, uint32_t epoch,
                                                          unsigned long long state) {
  return count << (kEpochBits + 2) | (unsigned long long)epoch << 2 | state;
}

template <class T> __device__ __forceinline__ T load_cg(const T *p) {
  if constexpr (sizeof(T) == 4) {
    return (T)__ldcg(reinterpret_cast<const unsigned int *>(p));
  } else {
    return (T)__ldcg(reinterpret_cast<const unsigned long long *>(p));
  }
}

/* ---- 1. the histograms of every pass, and their exclusive offsets ---------------- */

template <class U, bool F>
__global__ void __launch_bounds__(histogram_block) histogram_kernel(SortParams p) {
  constexpr int PASSES = (int)sizeof(U);
  constexpr int ITEMS = sizeof(U) == 4 ? 16 : 8;
  constexpr size_t TILE = (size_t)histogram_block * ITEMS;
  __shared__ unsigned int h[PASSES][kDigits];
  __shared__ bool last;
  for (int i = threadIdx.x; i < PASSES * kDigits; i += histogram_block) (&h[0][0])[i] = 0;
  __syncthreads();
  const Radix<U, F> rx{(U)p.mask};
  const U *in = static_cast<const U *>(p.keys_in);
  for (size_t t0 = (size_t)blockIdx.x * TILE; t0 < p.n; t0 += (size_t)gridDim.x * TILE) {
    U k[ITEMS];
    const bool full = t0 + TILE <= p.n;
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const size_t i = t0 + (size_t)u * histogram_block + threadIdx.x;
      k[u] = full || i < p.n ? rx.key(in[i]) : 0;
    }
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const size_t i = t0 + (size_t)u * histogram_block + threadIdx.x;
      if (full || i < p.n) {
#pragma unroll
        for (int pass = 0; pass < PASSES; ++pass)
          atomicAdd(&h[pass][(uint32_t)(k[u] >> (pass * kDigitBits)) & (kDigits - 1)], 1u);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < PASSES * kDigits; i += histogram_block) {
    const unsigned int c = (&h[0][0])[i];
    if (c) atomicAdd(&p.bins[i], (unsigned long long)c);
  }
  /* The last block to finish scans: every block's counts are in (fence, then ticket). */
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(p.counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  using Scan = cub::BlockScan<unsigned long long, histogram_block>;
  __shared__ typename Scan::TempStorage scan;
  static_assert(histogram_block == kDigits, "one thread per digit");
  for (int pass = 0; pass < PASSES; ++pass) {
    unsigned long long v = load_cg(&p.bins[pass * kDigits + threadIdx.x]);
    Scan(scan).ExclusiveSum(v, v);
    p.bins[pass * kDigits + threadIdx.x] = v;
    __syncthreads();
  }
}

/* ---- 2. one pass: rank a tile, look back per digit, scatter ----------------------- */

template <class U, class VW, int THREADS, int ITEMS> struct OnesweepShared {
  using Rank = cub::BlockRadixRankMatchEarlyCounts<THREADS, kDigitBits, false,
                                                   cub::BLOCK_SCAN_RAKING_MEMOIZE,
                                                   cub::WARP_MATCH_ANY, 1>;
  static constexpr int TILE = THREADS * ITEMS;
  union {
    U keys[TILE];
    VW values[TILE];
    typename Rank::TempStorage rank;
  };
  long long offsets[kDigits]; /* digit d: global position of tile index 0 */
  unsigned int tile;
};

/* The rank's callback, called by every thread once the tile's digit counts are known:
 * thread d < 256 publishes its digit's count at once (tile 0: the inclusive count). */
struct PublishCounts {
  const SortParams *p;
  size_t tile;
  int *count;
  __device__ __forceinline__ void operator()(int (&bins)[1]) {
    *count = bins[0];
    if (threadIdx.x < kDigits)
      status_store(p->status + tile * kDigits + threadIdx.x,
                   status_word((unsigned long long)bins[0], p->epoch,
                               tile == 0 ? kStateInclusive : kStateAggregate));
  }
};

template <class U, bool F, class VW, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, 2) onesweep_kernel(SortParams p) {
  using S = OnesweepShared<U, VW, THREADS, ITEMS>;
  constexpr int TILE = S::TILE;
  constexpr bool HAS_VALUES = !std::is_same<VW, NoValue>::value;
  static_assert(THREADS >= kDigits, "one thread per digit");
  __shared__ S s;
  const Radix<U, F> rx{(U)p.mask};
  const ShiftDigit<U> digit_of{p.shift};
  if (threadIdx.x == 0) s.tile = atomicAdd(p.counter, 1u);
  __syncthreads();
  const size_t tile = s.tile;
  const size_t base = tile * TILE;
  const int tile_items = p.n - base < (size_t)TILE ? (int)(p.n - base) : TILE;
  const bool full = tile_items == TILE;
  const int lane = threadIdx.x & 31;
  const int warp_base = (threadIdx.x >> 5) * 32 * ITEMS;

  /* load warp-striped (the match rank's order); the padding of the last tile ranks last */
  const U *kin = static_cast<const U *>(p.keys_in) + base;
  U keys[ITEMS];
  U orig[ITEMS]; /* floats: the bits (the radix key does not give them back) */
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    const int idx = warp_base + u * 32 + lane;
    const bool ok = full || idx < tile_items;
    const U b = ok ? kin[idx] : (U)0;
    keys[u] = ok ? rx.key(b) : (U)~(U)0;
    if constexpr (F) orig[u] = b;
  }
  int ranks[ITEMS];
  int excl[1];
  int count = 0;
  typename S::Rank(s.rank).RankKeys(keys, ranks, digit_of, excl, PublishCounts{&p, tile, &count});
  __syncthreads(); /* the rank's storage is the tile's */
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    if constexpr (F)
      s.keys[ranks[u]] = orig[u];
    else
      s.keys[ranks[u]] = rx.bits(keys[u]);
  }

  /* look back: thread d sums digit d's counts over the tiles before this one */
  if (threadIdx.x < kDigits) {
    const unsigned d = threadIdx.x;
    unsigned long long before = 0;
    if (tile > 0) {
      const unsigned long long epoch_bits = (unsigned long long)p.epoch << 2;
      const unsigned long long tag_mask = ((1ull << kEpochBits) - 1) << 2;
      for (size_t j = tile - 1;; --j) {
        unsigned long long w;
        const unsigned long long *at = p.status + j * kDigits + d;
        do {
          w = status_load(at);
        } while ((w & tag_mask) != epoch_bits || (w & 3u) == 0);
        before += w >> (kEpochBits + 2);
        if ((w & 3u) == kStateInclusive) break; /* tile 0 is always inclusive */
      }
      status_store(p.status + tile * kDigits + d,
                   status_word(before + (unsigned long long)count, p.epoch, kStateInclusive));
    }
    s.offsets[d] = (long long)(p.bins[d] + before) - excl[0];
  }
  __syncthreads();

  /* scatter keys from the sorted tile: consecutive threads, consecutive places */
  int digits[HAS_VALUES ? ITEMS : 1];
  U *kout = static_cast<U *>(p.keys_out);
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    const int idx = threadIdx.x + u * THREADS;
    const U b = s.keys[idx];
    const int d = (int)digit_of.Digit(rx.key(b));
    if constexpr (HAS_VALUES) digits[u] = d;
    if (kout && (full || idx < tile_items)) kout[s.offsets[d] + idx] = b;
  }

  if constexpr (HAS_VALUES) {
    VW vals[ITEMS];
    const VW *vin = static_cast<const VW *>(p.values_in) + base;
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const int idx = warp_base + u * 32 + lane;
      if (full || idx < tile_items) vals[u] = p.gen_indices ? (VW)(base + idx) : vin[idx];
    }
    __syncthreads(); /* every key is out of the tile */
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) s.values[ranks[u]] = vals[u];
    __syncthreads();
    VW *vout = static_cast<VW *>(p.values_out);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const int idx = threadIdx.x + u * THREADS;
      if (full || idx < tile_items) vout[s.offsets[digits[u]] + idx] = s.values[idx];
    }
  }
  signal_block_done(p.done);
}

/* ---- 3. one block: the whole sort in shared memory -------------------------------- */

/* n <= THREADS * ITEMS.  Integer keys alone: the radix keys are sorted and turned back
 * into bits.  Otherwise the radix keys are sorted with their input positions, and keys
 * and values are gathered from those positions; every thread gathers before any writes
 * (a barrier between), so in-place calls are safe. */
template <class U, class VW, int THREADS, int ITEMS, int BITS = small_bits>
__global__ void __launch_bounds__(THREADS) small_sort_kernel(SortParams p) {
  constexpr bool HAS_VALUES = !std::is_same<VW, NoValue>::value;
  using SortK = cub::BlockRadixSort<U, THREADS, ITEMS, cub::NullType, BITS>;
  using SortI = cub::BlockRadixSort<U, THREADS, ITEMS, uint32_t, BITS>;
  __shared__ union {
    typename SortK::TempStorage k;
    typename SortI::TempStorage i;
  } s;
  const U *kin = static_cast<const U *>(p.keys_in);
  U *kout = static_cast<U *>(p.keys_out);
  const U mask = (U)p.mask;
  const size_t n = p.n;
  U k[ITEMS];
#pragma unroll
  for (int u = 0; u < ITEMS; ++u) {
    const size_t i = (size_t)threadIdx.x * ITEMS + u;
    if (i < n) {
      const U b = kin[i];
      k[u] = p.is_float ? Radix<U, true>{mask}.key(b) : Radix<U, false>{mask}.key(b);
    } else {
      k[u] = (U)~(U)0;
    }
  }
  if (!HAS_VALUES && !p.is_float) {
    SortK(s.k).SortBlockedToStriped(k);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const size_t i = (size_t)u * THREADS + threadIdx.x;
      if (i < n) kout[i] = k[u] ^ mask;
    }
  } else {
    uint32_t at[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) at[u] = threadIdx.x * ITEMS + u;
    SortI(s.i).SortBlockedToStriped(k, at);
    U ko[ITEMS];
    using V = typename std::conditional<HAS_VALUES, VW, uint32_t>::type;
    V vo[ITEMS];
    const V *vin = static_cast<const V *>(p.values_in);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const size_t i = (size_t)u * THREADS + threadIdx.x;
      if (i < n) {
        if (kout) ko[u] = kin[at[u]];
        if constexpr (HAS_VALUES) vo[u] = p.gen_indices ? (V)at[u] : vin[at[u]];
      }
    }
    __syncthreads();
    V *vout = static_cast<V *>(p.values_out);
#pragma unroll
    for (int u = 0; u < ITEMS; ++u) {
      const size_t i = (size_t)u * THREADS + threadIdx.x;
      if (i < n) {
        if (kout) kout[i] = ko[u];
        if constexpr (HAS_VALUES) vout[i] = vo[u];
      }
    }
  }
  signal_block_done(p.done);
}

/* ---- 4. cuda-serial: one thread, a stable counting sort per digit ----------------- */

template <class U, bool F, class VW>
__global__ void __launch_bounds__(1) serial_sort_kernel(SerialPlan plan, DoneSignal done) {
  constexpr bool HAS_VALUES = !std::is_same<VW, NoValue>::value;
  __shared__ unsigned long long count[kDigits];
  const Radix<U, F> rx{(U)plan.mask};
  for (int pass = 0; pass < plan.passes; ++pass) {
    const U *src = static_cast<const U *>(plan.ksrc[pass]);
    U *dst = static_cast<U *>(plan.kdst[pass]);
    const int shift = pass * kDigitBits;
    for (int d = 0; d < kDigits; ++d) count[d] = 0;
    for (size_t i = 0; i < plan.n; ++i) count[(uint32_t)(rx.key(src[i]) >> shift) & 255u]++;
    unsigned long long sum = 0;
    for (int d = 0; d < kDigits; ++d) {
      const unsigned long long c = count[d];
      count[d] = sum;
      sum += c;
    }
    const VW *vsrc = static_cast<const VW *>(plan.vsrc[pass]);
    VW *vdst = static_cast<VW *>(plan.vdst[pass]);
    const bool gen = plan.gen_indices && pass == 0;
    for (size_t i = 0; i < plan.n; ++i) {
      const U b = src[i];
      const unsigned long long at = count[(uint32_t)(rx.key(b) >> shift) & 255u]++;
      if (dst) dst[at] = b;
      if constexpr (HAS_VALUES) vdst[at] = gen ? (VW)i : vsrc[i];
    }
  }
  signal_block_done(done);
}

/* One sort of n > 0 keys of word U (F: float keys), values of word VW (NoValue: none);
 * device_sort.cu instantiates it per key width. */
template <class U, bool F, class VW>
xpar_status sort_run(const xpar__exec *ex, const xpar__sort_spec *s, unsigned long long mask);

} // namespace sort
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SORT_KERNEL_CUH */
