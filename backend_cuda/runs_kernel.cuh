/*
 * The runs kernels (device_runs.cu): run-length encode and reduce by key, as CUB's
 * ReduceByKey: one pass with decoupled look-back, the tile prefix a pair
 * (heads, open) -- the run heads before the tile and the op of the values of the run
 * still open at its end -- combined by
 *     (c1, a1) . (c2, a2) = (c1 + c2, c2 ? a2 : a1 op a2),
 * which is associative but not commutative: the look-back folds its window in order
 * (look_back_words<..., ORDERED = true>), and the pair travels in the generic tile word
 * (a flag and value slots, release / acquire: xpar/detail/cuda_tile_status.cuh).
 *
 * Tile: runs_block threads x runs_items consecutive elements per thread (thread t owns
 * [t * ITEMS, (t + 1) * ITEMS) of the tile).
 *  1. every thread loads its keys, the key before its first one, and its values (the
 *     lengths: 1 each; the run starts of reproducible mode: the element's index, op MIN);
 *     a head is i == 0 or key i differs from key i - 1 (base/sort_key.h's equality);
 *  2. each thread folds its items into one pair; a warp scan of the pairs (ordered), the
 *     warp totals through shared memory, give each thread the pair before it in the tile
 *     and the tile's pair;
 *  3. thread 0 publishes the tile's pair (tile 0: inclusive); warp 0 looks back for the
 *     pair before the tile and publishes the inclusive one;
 *  4. every thread walks its items from the pair before it: at a head, the run index r =
 *     the heads before it; keys_out[r] = its key and, for r > 0, values_out[r - 1] = the
 *     open aggregate (the previous run is complete); the thread holding element n - 1
 *     writes the last run's value and the count.
 * Bytes per element: read the key (and the value); write a key and a value per run.  The
 * loads are per thread, not coalesced vectors, and the outputs are scattered stores: a
 * first version, not yet tuned against CUB (bench/cub: --runs-bench).
 *
 * cuda-serial: runs_serial_kernel, one thread in element order (its float sums are the
 * serial loop's, as cpu-serial's).
 *
 * Reproducible mode (float and double SUM): a first pass with values = the index and op
 * MIN writes each run's first index (its start) to scratch, then runs_repro_kernel gives
 * each run to one thread, which sums the run's values in the order of the reproducible
 * specification applied to the run as an array of its own (repro_spec.h): lanes of 8
 * rows, the lanes folded in halves -- computed as the aligned pairwise tree over the
 * lanes in bit-reversed order, which is the same tree -- and the aligned tree over the
 * block totals.  One thread per run: a run of m elements takes m dependent adds in one
 * thread, so very long runs are slow in this mode (the GPU does not split a run).
 */
#ifndef XPAR_BACKEND_CUDA_RUNS_KERNEL_CUH
#define XPAR_BACKEND_CUDA_RUNS_KERNEL_CUH

#include <type_traits>

#include "base/repro_spec.h"
#include "base/sort_key.h"
#include "scan_tile_status.cuh"

namespace xpar_cuda {
namespace runs {

constexpr unsigned runs_block = 256;
constexpr int runs_items = 8;
constexpr unsigned repro_block = 128;

/* What a value is: the input's element, 1 (lengths), or the element's index (starts). */
enum ValueKind { VALUES = 0, LENGTHS = 1, STARTS = 2 };

struct RunsParams {
  const void *keys;
  const void *values;
  void *keys_out;
  void *values_out;
  size_t n;
  size_t num_tiles;
  void *status;
  uint32_t epoch;
  unsigned first_poll_delay_ns;
  unsigned poll_delay_ns;
  unsigned long long *count; /* device-visible: the pinned result slot or the caller's */
  DoneSignal done;
};

/* The runs' equality: the sort's radix keys (-0.0 == +0.0, NaN == NaN); integers: bits. */
template <class K> __device__ __forceinline__ bool same_key(K a, K b) {
  if constexpr (std::is_same<K, float>::value) {
    return xpar__sort_radix32(__float_as_uint(a), XPAR__SORT_KEY_FLOAT, 0) ==
           xpar__sort_radix32(__float_as_uint(b), XPAR__SORT_KEY_FLOAT, 0);
  } else if constexpr (std::is_same<K, double>::value) {
    return xpar__sort_radix64((uint64_t)__double_as_longlong(a), XPAR__SORT_KEY_FLOAT, 0) ==
           xpar__sort_radix64((uint64_t)__double_as_longlong(b), XPAR__SORT_KEY_FLOAT, 0);
  } else {
    return a == b;
  }
}

template <class V> struct Pair {
  unsigned long long heads;
  V open;
};

/* The open aggregate of an empty pair: for a float sum -0.0, IEEE addition's exact
 * identity (-0.0 + x == x for every x, +0.0 included), where +0.0 + -0.0 is +0.0 and
 * would turn a run of -0.0 into +0.0 wherever a pair meets an empty one (a warp's
 * first lane, a tile's first thread, the look-back's start).  Every run has an
 * element, so the empty value is never a run's result. */
template <class Op> __host__ __device__ __forceinline__ typename Op::Type empty_open() {
  if constexpr (std::is_same<Op, SumOp<float>>::value) return -0.0f;
  else if constexpr (std::is_same<Op, SumOp<double>>::value) return -0.0;
  else return Op::identity();
}

/* The pair operator: x before y. */
template <class Op> struct PairOp {
  using V = typename Op::Type;
  using Type = Pair<V>;
  static __host__ __device__ __forceinline__ Type identity() {
    Type t;
    t.heads = 0;
    t.open = empty_open<Op>();
    return t;
  }
  static __device__ __forceinline__ Type apply(Type x, Type y) {
    Type t;
    t.heads = x.heads + y.heads;
    t.open = y.heads ? y.open : Op::apply(x.open, y.open);
    return t;
  }
};

template <class Op, int KIND>
__device__ __forceinline__ typename Op::Type value_at(const RunsParams &p, size_t i) {
  using V = typename Op::Type;
  if constexpr (KIND == LENGTHS) return (V)1;
  else if constexpr (KIND == STARTS) return (V)i;
  else return static_cast<const V *>(p.values)[i];
}

template <class K, class Op> struct RunsShared {
  Pair<typename Op::Type> warp_totals[runs_block / 32];
  Pair<typename Op::Type> prefix;
};

/* One tile per block (tile = blockIdx.x), runs_block threads. */
template <class K, class Op, int KIND>
__global__ void __launch_bounds__(runs_block) runs_kernel(RunsParams p) {
  using V = typename Op::Type;
  using P = PairOp<Op>;
  using W = TileWord<Pair<V>>;
  __shared__ RunsShared<K, Op> sh;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const size_t tile = blockIdx.x;
  const size_t tile_items = (size_t)runs_block * runs_items;
  const size_t first = tile * tile_items + (size_t)threadIdx.x * runs_items;
  const K *keys = static_cast<const K *>(p.keys);

  /* 1. load */
  K k[runs_items];
  V v[runs_items];
  bool head[runs_items];
  K prev = first > 0 && first < p.n ? keys[first - 1] : K(0);
#pragma unroll
  for (int j = 0; j < runs_items; ++j) {
    const size_t i = first + (size_t)j;
    const bool valid = i < p.n;
    k[j] = valid ? keys[i] : K(0);
    v[j] = valid ? value_at<Op, KIND>(p, i) : Op::identity();
    head[j] = valid && (i == 0 || !same_key<K>(k[j], prev));
    prev = k[j];
  }

  /* 2. the thread's pair, the warp scan, the tile's pair */
  Pair<V> mine = P::identity();
#pragma unroll
  for (int j = 0; j < runs_items; ++j) {
    if (first + (size_t)j >= p.n) break;
    Pair<V> item;
    item.heads = head[j] ? 1u : 0u;
    item.open = v[j];
    mine = P::apply(mine, item);
  }
  Pair<V> incl = mine;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const Pair<V> up = shfl_up(0xffffffffu, incl, d);
    if (lane >= d) incl = P::apply(up, incl);
  }
  Pair<V> excl = shfl_up(0xffffffffu, incl, 1);
  if (lane == 0) excl = P::identity();
  if (lane == 31) sh.warp_totals[warp] = incl;
  __syncthreads();
  Pair<V> before = P::identity(), tile_pair = P::identity();
  for (unsigned w = 0; w < runs_block / 32; ++w) {
    if (w == warp) before = tile_pair;
    tile_pair = P::apply(tile_pair, sh.warp_totals[w]);
  }
  before = P::apply(before, excl);

  /* 3. publish, look back */
  if (threadIdx.x == 0)
    W::store(p.status, tile, W::make(tile_pair, p.epoch, tile == 0 ? kStatusInclusive : kStatusAggregate));
  if (warp == 0) {
    Pair<V> prefix = P::identity();
    if (tile > 0) {
      const LookBack where = {p.status, p.epoch, p.first_poll_delay_ns, p.poll_delay_ns};
      prefix = look_back_words<P, 1, W, true>(where, tile, lane, 32u);
      if (lane == 0)
        W::store(p.status, tile, W::make(P::apply(prefix, tile_pair), p.epoch, kStatusInclusive));
    }
    if (lane == 0) sh.prefix = prefix;
  }
  __syncthreads();
  Pair<V> run = P::apply(sh.prefix, before);

  /* 4. out */
  K *ko = static_cast<K *>(p.keys_out);
  V *vo = static_cast<V *>(p.values_out);
#pragma unroll
  for (int j = 0; j < runs_items; ++j) {
    const size_t i = first + (size_t)j;
    if (i >= p.n) break;
    if (head[j]) {
      ko[run.heads] = k[j];
      if (run.heads > 0) vo[run.heads - 1] = run.open;
      run.heads += 1;
      run.open = v[j];
    } else {
      run.open = Op::apply(run.open, v[j]);
    }
    if (i == p.n - 1) {
      vo[run.heads - 1] = run.open;
      *p.count = run.heads;
    }
  }
  signal_block_done(p.done);
}

/* cuda-serial: one thread, element order. */
template <class K, class Op, int KIND> __global__ void runs_serial_kernel(RunsParams p) {
  using V = typename Op::Type;
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const K *keys = static_cast<const K *>(p.keys);
    K *ko = static_cast<K *>(p.keys_out);
    V *vo = static_cast<V *>(p.values_out);
    unsigned long long r = 0;
    V acc = Op::identity();
    for (size_t i = 0; i < p.n; ++i) {
      const V x = value_at<Op, KIND>(p, i);
      if (i == 0 || !same_key<K>(keys[i], keys[i - 1])) {
        if (r > 0) vo[r - 1] = acc;
        ko[r++] = keys[i];
        acc = x;
      } else {
        acc = Op::apply(acc, x);
      }
    }
    if (r > 0) vo[r - 1] = acc;
    *p.count = r;
  }
  signal_block_done(p.done);
}

/* Reproducible mode: the aligned pairwise tree as a binary counter (cpu_repro.c's stack). */
template <class A> struct ReproStack {
  A v[40];
  unsigned long long size[40];
  int top;
  __device__ __forceinline__ void push(A x) {
    unsigned long long s = 1;
    while (top && size[top - 1] == s) {
      x = v[top - 1] + x;
      s *= 2;
      --top;
    }
    v[top] = x;
    size[top] = s;
    ++top;
  }
  __device__ __forceinline__ A finish() const {
    if (!top) return A(0);
    A acc = v[top - 1];
    for (int i = top - 2; i >= 0; --i) acc = v[i] + acc;
    return acc;
  }
};

/* The reproducible sum of x[0, len), one thread (repro_spec.h; cpu_repro.c computes the
 * same additions).  A block of len elements: lane j = ((+0 + x[j]) + x[j + L]) ...; the
 * lanes folded in halves over P, the power of two that covers the live lanes (lanes past
 * them are +0 and change nothing).  Folding in halves pairs lane i with i + h for h = P/2
 * down to 1: the aligned pairwise tree over the lanes taken in bit-reversed order. */
template <class A> __device__ A repro_sum_one_thread(const A *x, size_t len) {
  ReproStack<A> blocks;
  blocks.top = 0;
  for (size_t b0 = 0; b0 < len; b0 += XPAR__REPRO_BLOCK) {
    const size_t bl = len - b0 < XPAR__REPRO_BLOCK ? len - b0 : XPAR__REPRO_BLOCK;
    const size_t live = bl < XPAR__REPRO_LANES ? bl : XPAR__REPRO_LANES;
    unsigned P = 1, bits = 0;
    while (P < live) P *= 2, ++bits;
    ReproStack<A> lanes;
    lanes.top = 0;
    for (unsigned q = 0; q < P; ++q) {
      const unsigned j = bits ? (__brev(q) >> (32 - bits)) : 0u;
      A acc = A(0);
      for (size_t i = j; i < bl; i += XPAR__REPRO_LANES) acc = acc + x[b0 + i];
      lanes.push(acc);
    }
    blocks.push(lanes.finish());
  }
  return blocks.finish();
}

/* One thread per run: starts[r] is run r's first index (the first pass), runs in *count. */
template <class A>
__global__ void __launch_bounds__(repro_block)
    runs_repro_kernel(const A *values, const uint64_t *starts,
                      const unsigned long long *count, size_t n, A *values_out, DoneSignal done) {
  const unsigned long long runs = *count;
  for (unsigned long long r = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; r < runs;
       r += (unsigned long long)gridDim.x * blockDim.x) {
    const size_t s = (size_t)starts[r];
    const size_t e = r + 1 < runs ? (size_t)starts[r + 1] : n;
    values_out[r] = repro_sum_one_thread<A>(values + s, e - s);
  }
  signal_block_done(done);
}

} // namespace runs
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_RUNS_KERNEL_CUH */
