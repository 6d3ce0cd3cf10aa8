/*
 * The compaction kernels (device_select.cu): select by predicate, select by flags, stable
 * partition, unique.  One pass with decoupled look-back on the count of kept elements
 * (Merrill & Garland, as CUB's DeviceSelect), on the scan's status words and epochs
 * (scan_tile_status.cuh, xpar/detail/cuda_tile_status.cuh).
 *
 * Tile (select_tile): blockDim.x x K 16-byte vectors, laid out as the scan's (warp w owns
 * the contiguous chunk [w * 32 * ITEMS, ...), vector k of lane l is vector k * 32 + l of
 * it), so every load is coalesced and 16 bytes per lane where the input is aligned.
 *  1. load every item (and its flag byte, or for unique the element before the warp's
 *     chunk), compute the keep flags;
 *  2. ranks: per lane the K vector counts (<= 4 each) packed in 8-bit fields of one word,
 *     ONE warp scan of that word gives every vector's lane prefix and warp total; the warp
 *     totals go through shared memory (barrier 1) to warp offsets and the tile's count;
 *  3. thread 0 publishes the tile's count (tile 0: inclusive);
 *  4. every thread puts its kept items at their rank in a shared-memory stage (a
 *     partition also its rejected items after the kept ones: the tile partitioned);
 *  5. warp 0 looks back for the count before the tile and publishes the inclusive count;
 *     barrier 2;
 *  6. the block copies the stage out, consecutive threads to consecutive outputs (the
 *     output offset has no alignment, so scalar stores, coalesced); the last tile writes
 *     the count.
 * Bytes per element: read sizeof(T) (+ 1 flag byte), write sizeof(T) per kept element.
 *
 * Partition.  The rejected elements' place, total_selected + rejected-before, needs the
 * total, which a single pass only knows at its end.  The look-back pass writes them
 * reversed from the end of out (out[n - 1 - rejected-before - j], as CUB does), and a
 * second kernel (partition_reverse_kernel) reverses that tail once the count is known:
 * read n + write n, then read + write (n - k) more.  The alternative, a counting pass
 * first, costs an extra read of n whatever k is; the reversal costs less when more than
 * half is selected and never more than 2n extra.  The one-block path (small n) counts
 * first instead (the input is in cache) and writes everything in place.
 *
 * In place (out == in; select, flagged, unique).  Tile t writes out[j] only for j below
 * its own first element, and only after its look-back, which needs the status of every
 * earlier tile... and no later tile u > t writes before tile t has published (its
 * look-back passes tile t), which tile t does after loading its items: no tile's input
 * is overwritten before it is read.  Unique also reads in[start - 1], the element before
 * the tile: earlier tiles write out[j] only for j < kept-before-them <= start, and
 * out[start - 1] only when every element before the tile was kept, i.e. with the value
 * that is there already.  In place, the count publications carry the order (a fence
 * before tile t's aggregate and after the look-back: release / acquire patterns of the
 * PTX memory model), so the reads of tile t precede the writes of tile u formally too.
 *
 * One block (small n; launch_one_block): the block walks the tiles in order, carrying the
 * count; no status words.  cuda-serial: select_serial_kernel, one thread, element order.
 */
#ifndef XPAR_BACKEND_CUDA_SELECT_KERNEL_CUH
#define XPAR_BACKEND_CUDA_SELECT_KERNEL_CUH

#include <type_traits>

#include "base/sort_key.h"
#include "scan_tile_status.cuh"

namespace xpar_cuda {
namespace select {

/* A stable partition (by predicate, or by flags: an application predicate's,
 * XPAR__PARTITION_FLAGGED), and the kinds whose keep flags are bytes in memory. */
constexpr bool is_partition(int kind) {
  return kind == XPAR__PARTITION || kind == XPAR__PARTITION_FLAGGED;
}
constexpr bool uses_flags(int kind) {
  return kind == XPAR__SELECT_FLAGGED || kind == XPAR__PARTITION_FLAGGED;
}

/* Shapes.  The tuned (look-back) kernel: 256 threads, 4 vectors per thread (16 4-byte or
 * 8 8-byte items), a 16 KiB stage either way.  The one-block kernel: one vector per
 * thread, up to 512 threads (the scan's small tile, launch_shape.cuh says why). */
template <size_t ELEMENT_BYTES> struct SelectTuning {
  static constexpr unsigned block = 256;
  static constexpr int vectors = 4;
  static constexpr unsigned min_blocks = ELEMENT_BYTES == 4 ? 4 : 4;
  static constexpr unsigned first_poll_delay_ns = 800;
  static constexpr unsigned poll_delay_ns = 400;
  static constexpr unsigned delay_min_grid = 500;
};
struct SmallSelectTuning {
  static constexpr unsigned block = 512;
  static constexpr int vectors = 1;
};
/* The reversal of a partition's tail: a grid-stride loop of 256-thread blocks, 4 pairs per
 * thread per pass, at most 8 blocks per SM. */
constexpr unsigned reverse_block = 256;
constexpr unsigned reverse_unroll = 4;
constexpr unsigned reverse_blocks_per_sm = 8;

template <class T> constexpr int vec_items() { return (int)(tuning::vector_bytes / sizeof(T)); }

struct SelectParams {
  const void *in;
  const unsigned char *flags; /* FLAGGED */
  void *out;
  size_t n;
  size_t num_tiles;
  int pred;                   /* IF, PARTITION: xpar_predicate */
  xpar__scalar value, hi;
  int vectorized;             /* in (and flags, to V bytes) aligned for 16-byte loads */
  int in_place;               /* out == in: fences around the count publications */
  void *status;               /* look-back path: the tile status words */
  uint32_t epoch;
  unsigned first_poll_delay_ns;
  unsigned poll_delay_ns;
  unsigned long long *count;  /* device-visible: the pinned result slot or the caller's */
  DoneSignal done;
};

template <class T> __device__ __forceinline__ T scalar_as(const xpar__scalar &s) {
  T v;
  memcpy(&v, s.bytes, sizeof v);
  return v;
}

/* Unique's equality: the sort's radix keys (base/sort_key.h): for floats -0.0 == +0.0
 * and NaN == NaN; for integers the bits. */
template <class T> __device__ __forceinline__ bool same_key(T a, T b) {
  if constexpr (std::is_same<T, float>::value) {
    return xpar__sort_radix32(__float_as_uint(a), XPAR__SORT_KEY_FLOAT, 0) ==
           xpar__sort_radix32(__float_as_uint(b), XPAR__SORT_KEY_FLOAT, 0);
  } else if constexpr (std::is_same<T, double>::value) {
    return xpar__sort_radix64((uint64_t)__double_as_longlong(a), XPAR__SORT_KEY_FLOAT, 0) ==
           xpar__sort_radix64((uint64_t)__double_as_longlong(b), XPAR__SORT_KEY_FLOAT, 0);
  } else {
    return a == b;
  }
}

/* The predicate on one element (C's comparisons: a NaN satisfies only NE). */
template <class T> __device__ __forceinline__ bool holds(T x, int pred, T v, T hi) {
  switch (pred) {
    case XPAR_LT: return x < v;
    case XPAR_LE: return x <= v;
    case XPAR_EQ: return x == v;
    case XPAR_NE: return x != v;
    case XPAR_GE: return x >= v;
    case XPAR_GT: return x > v;
    default: return v <= x && x < hi; /* XPAR_IN_RANGE */
  }
}

/* The predicate over a thread's items: the switch outside the item loops. */
template <class T, int K, int V, class P>
__device__ __forceinline__ void flags_by(const T (&x)[K][V], bool (&f)[K][V], P keep) {
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) f[k][e] = keep(x[k][e]);
}
template <class T, int K, int V>
__device__ __forceinline__ void predicate_flags(const T (&x)[K][V], bool (&f)[K][V], int pred,
                                                T v, T hi) {
  switch (pred) {
    case XPAR_LT: flags_by(x, f, [v](T a) { return a < v; }); break;
    case XPAR_LE: flags_by(x, f, [v](T a) { return a <= v; }); break;
    case XPAR_EQ: flags_by(x, f, [v](T a) { return a == v; }); break;
    case XPAR_NE: flags_by(x, f, [v](T a) { return a != v; }); break;
    case XPAR_GE: flags_by(x, f, [v](T a) { return a >= v; }); break;
    case XPAR_GT: flags_by(x, f, [v](T a) { return a > v; }); break;
    default: flags_by(x, f, [v, hi](T a) { return v <= a && a < hi; }); break;
  }
}

/* The flag bytes of V elements at `at` as one word (aligned to V bytes). */
template <int V> __device__ __forceinline__ uint32_t load_flag_word(const unsigned char *p) {
  if constexpr (V == 4) return *reinterpret_cast<const uint32_t *>(p);
  else if constexpr (V == 2) return *reinterpret_cast<const uint16_t *>(p);
  else return *p;
}

template <class T, class C, int ITEMS, unsigned MAX_BLOCK> struct SelectShared {
  T stage[MAX_BLOCK * ITEMS];
  unsigned warp_totals[MAX_BLOCK / 32];
  C prefix; /* look-back: the kept elements before the tile; one block: the carry */
  C total;  /* one-block partition: the kept elements of the whole input */
};

__device__ __forceinline__ void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/*
 * One tile.  ONE_BLOCK: the carry in sh.prefix (and, for a partition, the total in
 * sh.total); otherwise the look-back.  COUNT_ONLY (one-block partition, first sweep): add
 * the tile's count to sh.total and return.  blockDim.x is a multiple of 32, <= MAX_BLOCK.
 */
template <class T, int KIND, class C, int K, unsigned MAX_BLOCK, bool ONE_BLOCK, bool VECTOR>
__device__ __forceinline__ void select_tile(const SelectParams &p,
                                            SelectShared<T, C, K * vec_items<T>(), MAX_BLOCK> &sh,
                                            size_t tile, bool count_only) {
  constexpr int V = vec_items<T>();
  constexpr int ITEMS = K * V;
  static_assert(K <= 4 && V <= 4, "8-bit rank fields: at most 4 vectors of 4 items");
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned warps = blockDim.x >> 5;
  const T *in = static_cast<const T *>(p.in);
  T *out = static_cast<T *>(p.out);
  const size_t tile_items = (size_t)blockDim.x * ITEMS;
  const size_t tile_start = tile * tile_items;
  const size_t valid = p.n - tile_start < tile_items ? p.n - tile_start : tile_items;
  const unsigned chunk_local = warp * 32u * ITEMS;
  const size_t chunk = tile_start + chunk_local;

  /* 1. load, flags */
  T x[K][V];
  bool f[K][V];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const size_t at = chunk + ((size_t)k * 32u + lane) * V;
    if constexpr (VECTOR) {
      Pack16<T> pack;
      pack.raw = load16(in + at);
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = pack.e[e];
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) x[k][e] = at + e < p.n ? in[at + e] : T(0);
    }
  }
  if constexpr (KIND == XPAR__SELECT_IF || KIND == XPAR__PARTITION) {
    predicate_flags<T, K, V>(x, f, p.pred, scalar_as<T>(p.value), scalar_as<T>(p.hi));
  } else if constexpr (uses_flags(KIND)) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const size_t at = chunk + ((size_t)k * 32u + lane) * V;
      if constexpr (VECTOR) {
        const uint32_t w = load_flag_word<V>(p.flags + at);
#pragma unroll
        for (int e = 0; e < V; ++e) f[k][e] = ((w >> (8 * e)) & 0xffu) != 0;
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) f[k][e] = at + e < p.n && p.flags[at + e] != 0;
      }
    }
  } else { /* UNIQUE */
    T before_chunk = T(0);
    if (lane == 0 && chunk > 0 && chunk < p.n) before_chunk = in[chunk - 1];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const T from_left = shfl(0xffffffffu, x[k][V - 1], (int)((lane + 31u) & 31u));
      const T from_last = k > 0 ? shfl(0xffffffffu, x[k > 0 ? k - 1 : 0][V - 1], 31) : before_chunk;
      const T prev = lane == 0 ? from_last : from_left;
      const size_t at = chunk + ((size_t)k * 32u + lane) * V;
      f[k][0] = at == 0 || !same_key<T>(x[k][0], prev);
#pragma unroll
      for (int e = 1; e < V; ++e) f[k][e] = !same_key<T>(x[k][e], x[k][e - 1]);
    }
  }
  if constexpr (!VECTOR) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const size_t at = chunk + ((size_t)k * 32u + lane) * V;
#pragma unroll
      for (int e = 0; e < V; ++e) f[k][e] = f[k][e] && at + e < p.n;
    }
  }

  /* 2. ranks */
  uint32_t packed = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    uint32_t c = 0;
#pragma unroll
    for (int e = 0; e < V; ++e) c += f[k][e] ? 1u : 0u;
    packed |= c << (8 * k);
  }
  uint32_t incl = packed;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const uint32_t up = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += up;
  }
  const uint32_t excl = incl - packed;
  const uint32_t warp_packed = __shfl_sync(0xffffffffu, incl, 31);
  unsigned warp_total = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) warp_total += (warp_packed >> (8 * k)) & 0xffu;
  if (lane == 31) sh.warp_totals[warp] = warp_total;
  __syncthreads(); /* barrier 1 */
  unsigned warp_offset = 0, tile_count = 0;
  for (unsigned w = 0; w < warps; ++w) {
    const unsigned t = sh.warp_totals[w];
    if (w < warp) warp_offset += t;
    tile_count += t;
  }
  if constexpr (ONE_BLOCK) {
    if (count_only) {
      __syncthreads(); /* every thread has read the warp totals */
      if (threadIdx.x == 0) sh.total += (C)tile_count;
      return;
    }
  } else {
    /* 3. publish the tile's count at once */
    if (threadIdx.x == 0) {
      if (p.in_place) fence_gpu(); /* the tile's loads (barrier 1) before its publication */
      TileWord<C>::store(p.status, tile,
                         TileWord<C>::make((C)tile_count, p.epoch,
                                           tile == 0 ? kStatusInclusive : kStatusAggregate));
    }
  }

  /* 4. the stage: kept items at their rank (partition: the rejected after them) */
  {
    unsigned vec_base = warp_offset;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      unsigned r = vec_base + ((excl >> (8 * k)) & 0xffu);
      const unsigned local = chunk_local + ((unsigned)k * 32u + lane) * V;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (f[k][e]) {
          sh.stage[r] = x[k][e];
        } else if constexpr (is_partition(KIND)) {
          if (local + e < valid) sh.stage[tile_count + (local + e - r)] = x[k][e];
        }
        r += f[k][e] ? 1u : 0u;
      }
      vec_base += (warp_packed >> (8 * k)) & 0xffu;
    }
  }

  /* 5. the count before the tile */
  if constexpr (!ONE_BLOCK) {
    if (warp == 0) {
      C prefix = 0;
      if (tile > 0) {
        const LookBack where = {p.status, p.epoch, p.first_poll_delay_ns, p.poll_delay_ns};
        prefix = look_back_words<SumOp<C>, 1, TileWord<C>>(where, tile, lane, 32u);
        if (p.in_place) fence_gpu(); /* the predecessors' publications before our writes */
        if (lane == 0)
          TileWord<C>::store(p.status, tile,
                             TileWord<C>::make(prefix + (C)tile_count, p.epoch, kStatusInclusive));
      }
      if (lane == 0) sh.prefix = prefix;
    }
  }
  __syncthreads(); /* barrier 2 */
  const C prefix = sh.prefix;

  /* 6. out */
  if constexpr (is_partition(KIND)) {
    const size_t rejected_before = tile_start - (size_t)prefix;
    for (unsigned i = threadIdx.x; i < (unsigned)valid; i += blockDim.x) {
      const T v = sh.stage[i];
      size_t to;
      if (i < tile_count) {
        to = (size_t)prefix + i;
      } else {
        const size_t j = rejected_before + (i - tile_count);
        if constexpr (ONE_BLOCK) to = (size_t)sh.total + j;
        else to = p.n - 1 - j; /* reversed; partition_reverse_kernel turns it */
      }
      out[to] = v;
    }
  } else {
    for (unsigned i = threadIdx.x; i < tile_count; i += blockDim.x) out[(size_t)prefix + i] = sh.stage[i];
  }
  if constexpr (ONE_BLOCK) {
    __syncthreads(); /* the stage and the carry are read: the next tile may write them */
    if (threadIdx.x == 0) sh.prefix = prefix + (C)tile_count;
  } else {
    if (tile == p.num_tiles - 1 && threadIdx.x == 0)
      *p.count = (unsigned long long)(prefix + (C)tile_count);
  }
}

template <class T, int KIND, class C, int K, unsigned MAX_BLOCK, bool ONE_BLOCK>
__device__ __forceinline__ void select_tile_at(const SelectParams &p,
                                               SelectShared<T, C, K * vec_items<T>(), MAX_BLOCK> &sh,
                                               size_t tile, bool count_only) {
  const size_t tile_items = (size_t)blockDim.x * K * vec_items<T>();
  if (p.vectorized && (tile + 1) * tile_items <= p.n)
    select_tile<T, KIND, C, K, MAX_BLOCK, ONE_BLOCK, true>(p, sh, tile, count_only);
  else
    select_tile<T, KIND, C, K, MAX_BLOCK, ONE_BLOCK, false>(p, sh, tile, count_only);
}

/* The look-back kernel: one tile per block, tile = blockIdx.x (CUB's order: blocks start
 * in index order), Tn::block threads. */
template <class T, int KIND, class C>
__global__ void __launch_bounds__(SelectTuning<sizeof(T)>::block,
                                  SelectTuning<sizeof(T)>::min_blocks)
    select_kernel(SelectParams p) {
  using Tn = SelectTuning<sizeof(T)>;
  __shared__ SelectShared<T, C, Tn::vectors * vec_items<T>(), Tn::block> sh;
  select_tile_at<T, KIND, C, Tn::vectors, Tn::block, false>(p, sh, blockIdx.x, false);
  signal_block_done(p.done);
}

/* One block walks every tile (small n); a partition counts first. */
template <class T, int KIND>
__global__ void __launch_bounds__(SmallSelectTuning::block, 1) select_one_block_kernel(SelectParams p) {
  using Tn = SmallSelectTuning;
  __shared__ SelectShared<T, uint64_t, Tn::vectors * vec_items<T>(), Tn::block> sh;
  if (threadIdx.x == 0) sh.prefix = 0, sh.total = 0;
  __syncthreads();
  if constexpr (is_partition(KIND)) {
    for (size_t tile = 0; tile < p.num_tiles; ++tile)
      select_tile_at<T, KIND, uint64_t, Tn::vectors, Tn::block, true>(p, sh, tile, true);
    __syncthreads();
  }
  for (size_t tile = 0; tile < p.num_tiles; ++tile)
    select_tile_at<T, KIND, uint64_t, Tn::vectors, Tn::block, true>(p, sh, tile, false);
  __syncthreads();
  if (threadIdx.x == 0) *p.count = sh.prefix;
  signal_block_done(p.done);
}

/* cuda-serial: one thread in element order (a partition counts first, then writes). */
template <class T, int KIND> __global__ void select_serial_kernel(SelectParams p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const T *in = static_cast<const T *>(p.in);
    T *out = static_cast<T *>(p.out);
    const T v = scalar_as<T>(p.value), hi = scalar_as<T>(p.hi);
    unsigned long long kept = 0;
    if constexpr (is_partition(KIND)) {
      auto keep_at = [&](size_t i) {
        if constexpr (KIND == XPAR__PARTITION) return holds<T>(in[i], p.pred, v, hi);
        else return p.flags[i] != 0;
      };
      for (size_t i = 0; i < p.n; ++i) kept += keep_at(i) ? 1u : 0u;
      size_t a = 0, b = kept;
      for (size_t i = 0; i < p.n; ++i) {
        const T x = in[i];
        if (keep_at(i)) out[a++] = x;
        else out[b++] = x;
      }
    } else {
      T prev = T(0);
      for (size_t i = 0; i < p.n; ++i) {
        const T x = in[i]; /* read before out[kept <= i] is written (in place) */
        bool keep;
        if constexpr (KIND == XPAR__SELECT_IF) keep = holds<T>(x, p.pred, v, hi);
        else if constexpr (KIND == XPAR__SELECT_FLAGGED) keep = p.flags[i] != 0;
        else keep = i == 0 || !same_key<T>(x, prev);
        prev = x;
        if (keep) out[kept++] = x;
      }
    }
    *p.count = kept;
  }
  signal_block_done(p.done);
}

/* A partition's tail: out[k, n) holds the rejected elements reversed (k: the last tile's
 * inclusive count); reverse it in place.  k comes from the status word, in device memory. */
template <class T, class C>
__global__ void __launch_bounds__(reverse_block)
    partition_reverse_kernel(T *out, size_t n, const void *status, size_t last_tile,
                             DoneSignal done) {
  const C k = TileWord<C>::value(TileWord<C>::load(status, last_tile));
  const size_t r = n - (size_t)k;
  const size_t half = r / 2;
  T *lo = out + k;
  T *hi = out + n - 1;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t base = (size_t)blockIdx.x * blockDim.x + threadIdx.x; base < half;
       base += stride * reverse_unroll) {
    T a[reverse_unroll], b[reverse_unroll];
#pragma unroll
    for (unsigned u = 0; u < reverse_unroll; ++u) {
      const size_t i = base + u * stride;
      if (i < half) a[u] = lo[i], b[u] = *(hi - i);
    }
#pragma unroll
    for (unsigned u = 0; u < reverse_unroll; ++u) {
      const size_t i = base + u * stride;
      if (i < half) lo[i] = b[u], *(hi - i) = a[u];
    }
  }
  signal_block_done(done);
}

} // namespace select
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_SELECT_KERNEL_CUH */
