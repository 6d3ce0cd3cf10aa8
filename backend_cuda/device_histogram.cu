/*
 * Device layer: the histogram -- xpar_histogram_even, xpar_histogram_range -- the entry
 * point of the backend table and its kernel.
 *
 * One kernel, hist_kernel<T, SHARED, RANGE, BOUNDS_SHARED>: the counts are zeroed
 * (cudaMemsetAsync), then every block walks its grid-stride share of the samples, ITEMS
 * per thread per step, finds each sample's bin and counts it:
 *  - SHARED (num_bins <= kSharedBins): into the block's private histogram of 32-bit
 *    counters in shared memory (shared-memory atomics), flushed at the block's end into
 *    the 64-bit counts with one global atomic add per non-zero bin.  A block counts
 *    fewer than 2^32 samples (the grid is sized so: kMaxPerBlock), so no counter wraps;
 *  - otherwise straight into the 64-bit counts with global atomics (any bin count).
 * Even bins: base/hist_bin.h's arithmetic, the CPU's operation for operation (the
 * double formula with the _rn intrinsics, the exact integer quotient), so every tier
 * puts every sample in the same bin.  Range bins: binary search over the boundaries,
 * copied to the device in stream order through the context's last staging slot (dispatch
 * uses the first ones for the call's operands) and, when they fit beside the counters,
 * loaded into shared memory by each block.  Samples outside the bins and NaN are skipped.
 * cuda-serial (ex->serial) runs the same kernel with grid = block = 1.
 *
 * The grid: enough blocks to cover the samples, at most kBlocksPerSm per multiprocessor,
 * and with private histograms no more blocks than give each at least 2 x num_bins samples
 * (each block's zeroing and flush cost num_bins; CUB's DeviceHistogram sizes its grid by
 * occupancy alone).  Launch-shape overrides (ex->grid, ex->block) are not used.
 *
 * Bytes: read n samples, write num_bins counts (zeroed, then atomically added to, once
 * per block and bin that counted something).
 *
 * Synchronous calls wait for the stream (xpar__cuda_sync); nowait calls return once
 * queued, the counts staying where they are.  A range histogram inside a CUDA graph
 * capture is refused before anything is queued (its boundaries go through the context's
 * staging memory, which the replays would share); an even one is captured (memset and
 * kernel).  Nothing is allocated per call: out of memory can only come from growing the
 * staging slot, before anything is queued.
 */
#include <stdio.h>
#include <string.h>

#include "base/hist_bin.h"
#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "thread_load.cuh"

namespace xpar_cuda {
namespace histogram {
namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kItems = 8;           /* samples per thread per grid-stride step */
constexpr unsigned kBlocksPerSm = 8;
constexpr size_t kSharedBytes = 48 << 10; /* dynamic shared memory without an opt-in */
constexpr size_t kSharedBins = kSharedBytes / sizeof(uint32_t);
constexpr size_t kMaxPerBlock = (size_t)1 << 31; /* below 2^32: 32-bit counters never wrap */

struct HistParams {
  const void *samples;
  size_t n;
  uint32_t num_bins;
  xpar__hist_even even; /* even bins */
  const void *bounds;   /* range bins: num_bins + 1 boundaries, device memory */
  unsigned long long *counts;
};

/* The bin of one sample, even bins. */
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, int32_t v) {
  return xpar__hist_int_bin(&p, xpar__hist_key_i32(v));
}
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, int64_t v) {
  return xpar__hist_int_bin(&p, xpar__hist_key_i64(v));
}
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, uint32_t v) {
  return xpar__hist_int_bin(&p, xpar__hist_key_u32(v));
}
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, uint64_t v) {
  return xpar__hist_int_bin(&p, xpar__hist_key_u64(v));
}
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, float v) {
  return xpar__hist_float_bin(&p, (double)v);
}
__device__ __forceinline__ uint32_t even_bin(const xpar__hist_even &p, double v) {
  return xpar__hist_float_bin(&p, v);
}

/* The bin of one sample, range bins: the last boundary <= v, for v in [b[0], b[nb]) (NaN
 * fails both compares).  The boundaries do not decrease (api/ checked), so the bin is the
 * one i with b[i] <= v < b[i + 1]. */
template <class T>
__device__ __forceinline__ uint32_t range_bin(const T *b, uint32_t nb, T v) {
  if (!(v >= b[0] && v < b[nb])) return XPAR__HIST_SKIP;
  uint32_t l = 0, h = nb; /* b[l] <= v < b[h] */
  while (h - l > 1) {
    const uint32_t m = l + (h - l) / 2;
    if (v >= b[m]) l = m;
    else h = m;
  }
  return l;
}

template <class T, bool SHARED, bool RANGE, bool BOUNDS_SHARED>
__global__ void __launch_bounds__(kBlock) hist_kernel(HistParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t *priv = reinterpret_cast<uint32_t *>(smem);
  const uint32_t nb = p.num_bins;
  const T *bounds = static_cast<const T *>(p.bounds);
  if (SHARED) {
    for (uint32_t j = threadIdx.x; j < nb; j += blockDim.x) priv[j] = 0;
  }
  if (RANGE && BOUNDS_SHARED) {
    /* after the counters, 16-byte aligned: (nb * 4 rounded up) */
    T *sb = reinterpret_cast<T *>(smem + (SHARED ? (((size_t)nb * 4 + 15) & ~(size_t)15) : 0));
    for (uint32_t j = threadIdx.x; j <= nb; j += blockDim.x) sb[j] = bounds[j];
    bounds = sb;
  }
  if (SHARED || (RANGE && BOUNDS_SHARED)) __syncthreads();

  const T *x = static_cast<const T *>(p.samples);
  const size_t n = p.n;
  const size_t step = (size_t)gridDim.x * blockDim.x * kItems;
  for (size_t base = (size_t)blockIdx.x * blockDim.x * kItems + threadIdx.x; base < n;
       base += step) {
    T v[kItems];
#pragma unroll
    for (unsigned k = 0; k < kItems; k++) {
      const size_t i = base + (size_t)k * blockDim.x;
      if (i < n) v[k] = x[i];
    }
#pragma unroll
    for (unsigned k = 0; k < kItems; k++) {
      const size_t i = base + (size_t)k * blockDim.x;
      if (i >= n) break;
      const uint32_t b = RANGE ? range_bin<T>(bounds, nb, v[k]) : even_bin(p.even, v[k]);
      if (b == XPAR__HIST_SKIP) continue;
      if (SHARED) atomicAdd(&priv[b], 1u);
      else atomicAdd(&p.counts[b], 1ull);
    }
  }
  if (SHARED) {
    __syncthreads();
    for (uint32_t j = threadIdx.x; j < nb; j += blockDim.x) {
      const uint32_t c = priv[j];
      if (c) atomicAdd(&p.counts[j], (unsigned long long)c);
    }
  }
}

template <class T, bool SHARED, bool RANGE, bool BOUNDS_SHARED>
xpar_status launch_one(xpar__cuda_state *st, HistParams &p, unsigned grid, unsigned block,
                       size_t smem, const char *name) {
  const void *k = (const void *)hist_kernel<T, SHARED, RANGE, BOUNDS_SHARED>;
  void *args[] = {&p};
  return xpar__cuda_launch(st, k, NULL, grid, block, smem, args, name);
}

template <class T>
xpar_status hist_run(const xpar__exec *ex, const xpar__histogram_spec *s, const void *bounds,
                     const char *name) {
  xpar__cuda_state *st = ex->cuda;
  HistParams p;
  memset(&p, 0, sizeof p);
  p.samples = s->samples;
  p.n = s->n;
  p.num_bins = (uint32_t)s->num_bins;
  if (s->even) p.even = *s->even;
  p.bounds = bounds;
  p.counts = reinterpret_cast<unsigned long long *>(s->counts);
  const bool range = bounds != NULL;
  const size_t nb = s->num_bins;
  /* one thread (cuda-serial) counting 2^31 samples or more would wrap a 32-bit
   * counter: the global counts then */
  const bool shared = nb <= kSharedBins && !(ex->serial && s->n >= kMaxPerBlock);
  const size_t counter_bytes = shared ? ((nb * 4 + 15) & ~(size_t)15) : 0;
  const size_t bound_bytes = range ? (nb + 1) * sizeof(T) : 0;
  const bool bounds_shared = range && counter_bytes + bound_bytes <= kSharedBytes;
  const size_t smem = counter_bytes + (bounds_shared ? bound_bytes : 0);

  unsigned grid = 1, block = 1;
  if (!ex->serial) {
    block = kBlock;
    const size_t per_step = (size_t)kBlock * kItems;
    size_t g = (s->n + per_step - 1) / per_step;
    const size_t sms = (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1);
    if (g > sms * kBlocksPerSm) g = sms * kBlocksPerSm;
    if (shared) { /* each block's zeroing and flush cost nb: give it 2 nb samples or more */
      const size_t by_bins = s->n / (2 * nb);
      if (g > by_bins) g = by_bins;
    }
    const size_t floor_blocks = (s->n + kMaxPerBlock - 1) / kMaxPerBlock;
    if (g < floor_blocks) g = floor_blocks;
    if (g < 1) g = 1;
    grid = (unsigned)g;
  }
  XPAR_CUDA_TRY(cudaMemsetAsync(s->counts, 0, nb * sizeof(uint64_t), st->stream),
                "%s: zeroing the counts", name);
  if (range) {
    if (shared && bounds_shared)
      XPAR__FORWARD((launch_one<T, true, true, true>(st, p, grid, block, smem, name)));
    else if (shared)
      XPAR__FORWARD((launch_one<T, true, true, false>(st, p, grid, block, smem, name)));
    else if (bounds_shared)
      XPAR__FORWARD((launch_one<T, false, true, true>(st, p, grid, block, smem, name)));
    else
      XPAR__FORWARD((launch_one<T, false, true, false>(st, p, grid, block, smem, name)));
  } else if (shared) {
    XPAR__FORWARD((launch_one<T, true, false, false>(st, p, grid, block, smem, name)));
  } else {
    XPAR__FORWARD((launch_one<T, false, false, false>(st, p, grid, block, 0, name)));
  }
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
  return XPAR_OK;
}

} // namespace
} // namespace histogram
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_histogram(const xpar__exec *ex, const xpar__histogram_spec *s) {
  const char *name = s->boundaries ? "histogram_range" : "histogram_even";
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  const size_t size = xpar__dtype_size(s->dtype);
  if (size != 4 && size != 8)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown dtype %d", name, (int)s->dtype);
  if (s->num_bins == 0 || s->num_bins > XPAR_HISTOGRAM_MAX_BINS)
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "%s: num_bins = %zu", name, s->num_bins);
  if (!aligned_to(s->counts, 8) || (s->n && !aligned_to(s->samples, size)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "%s: samples %p / counts %p are not aligned to their elements", name,
                      s->samples, (void *)s->counts);
  if (s->n == 0) {
    XPAR_CUDA_TRY(cudaMemsetAsync(s->counts, 0, s->num_bins * sizeof(uint64_t), st->stream),
                  "%s: zeroing the counts", name);
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
    return XPAR_OK;
  }
  const void *bounds = NULL;
  if (s->boundaries) {
    if (ex->captured)
      return xpar__cuda_refuse_capture(
          name, "its boundaries are copied through the context's staging memory, which a "
                "graph's replays would share with later calls");
    const size_t bytes = (s->num_bins + 1) * size;
    void *dev = NULL;
    XPAR__FORWARD(xpar__cuda_staging(st, XPAR__OPERAND_SLOTS - 1, bytes, &dev));
    XPAR__FORWARD(xpar__cuda_copy(st, dev, s->boundaries, bytes, XPAR__HOST_TO_DEVICE));
    bounds = dev;
  } else if (!s->even) {
    return xpar__fail(XPAR_ERR_INTERNAL, "%s: neither boundaries nor even bins", name);
  }
  return with_dtype(s->dtype, [&](auto zero) -> xpar_status {
    return histogram::hist_run<decltype(zero)>(ex, s, bounds, name);
  });
}
