/*
 * The GPU side of xpar operators (XPAR_OPERATOR in xpar/xpar_kernel.h):
 * header-only templates instantiated in the application's translation unit
 * for its own accumulator type and functions.  Included by xpar_kernel.h
 * under nvcc; not meant to be included directly.
 *
 * Layers, as in the built-in kernels:
 *  - thread: a contiguous run of items, combined in index order;
 *  - block: an order-preserving combine of the threads' values in shared
 *    memory (a pairwise tree for reduce, Hillis-Steele for scan) -- the
 *    operator need not be commutative, so no shuffle reduction that
 *    reorders lanes is used;
 *  - device: reduce writes one partial per block, combined in block order by
 *    a one-thread pass; scan is single-pass with decoupled look-back: each
 *    tile publishes its aggregate, then its inclusive prefix, and a tile's
 *    thread 0 walks back over its predecessors' published values.
 * Every loop is correct for any grid and block, 1 x 1 included (cuda-serial).
 * Values cross blocks through L2 only (ld.cg / st.cg word by word), with a
 * fence between a value and the flag that publishes it.
 */
#ifndef XPAR_XPAR_OPERATOR_CUH
#define XPAR_XPAR_OPERATOR_CUH

#include <cuda_runtime.h>
#include <stddef.h>

namespace xpar_operator_cuda {

/* Launch shape: 256 threads x 4 items per thread per tile, at most 4
 * resident blocks per SM (capped by the occupancy of the instantiation).
 * Not tuned on a GPU yet. */
constexpr unsigned kBlock = 256;
constexpr unsigned kItems = 4;
constexpr unsigned kBlocksPerSm = 4;

/* An accumulator as 32-bit words, for loads and stores that bypass L1. */
template <class Acc> struct Words {
  static constexpr unsigned count = (unsigned)((sizeof(Acc) + 3) / 4);
  unsigned w[count];
};

template <class Acc> __device__ __forceinline__ void store_cg(Words<Acc> *dst, const Acc &v) {
  Words<Acc> tmp;
  memset(&tmp, 0, sizeof tmp);
  memcpy(&tmp, &v, sizeof(Acc));
#pragma unroll
  for (unsigned k = 0; k < Words<Acc>::count; k++) __stcg(&dst->w[k], tmp.w[k]);
}

template <class Acc> __device__ __forceinline__ Acc load_cg(const Words<Acc> *src) {
  Words<Acc> tmp;
#pragma unroll
  for (unsigned k = 0; k < Words<Acc>::count; k++) tmp.w[k] = __ldcg(&src->w[k]);
  Acc v;
  memcpy(&v, &tmp, sizeof(Acc));
  return v;
}

/* One tile's published state: flag 0 nothing yet, 1 aggregate, 2 inclusive. */
template <class Acc> struct TileStatus {
  unsigned flag;
  Words<Acc> aggregate;
  Words<Acc> inclusive;
};

/* s[0] = s[0] op s[1] op ... op s[blockDim.x - 1], in order; every thread
 * gets it. */
template <class Ops>
__device__ typename Ops::acc_type block_reduce(typename Ops::acc_type v,
                                               typename Ops::acc_type *s) {
  const unsigned t = threadIdx.x, b = blockDim.x;
  s[t] = v;
  __syncthreads();
  for (unsigned d = 1; d < b; d *= 2) {
    if (t % (2 * d) == 0 && t + d < b) s[t] = Ops::op(s[t], s[t + d]);
    __syncthreads();
  }
  typename Ops::acc_type r = s[0];
  __syncthreads();
  return r;
}

/* Inclusive scan of the threads' values in thread order: s[t] = v_0 op ...
 * op v_t on return (s stays valid until the caller's next barrier). */
template <class Ops>
__device__ void block_scan(typename Ops::acc_type v, typename Ops::acc_type *s) {
  const unsigned t = threadIdx.x, b = blockDim.x;
  s[t] = v;
  __syncthreads();
  for (unsigned d = 1; d < b; d *= 2) {
    typename Ops::acc_type left = Ops::id();
    const bool has = t >= d;
    if (has) left = s[t - d];
    __syncthreads();
    if (has) s[t] = Ops::op(left, s[t]);
    __syncthreads();
  }
}

/* [lo, hi) of this thread's contiguous share of [begin, end). */
__device__ __forceinline__ void share(size_t begin, size_t end, unsigned part, unsigned parts,
                                      size_t *lo, size_t *hi) {
  const size_t len = end - begin;
  *lo = begin + len * part / parts;
  *hi = begin + len * (part + 1) / parts;
}

template <class Ops>
__global__ void reduce_kernel(const typename Ops::in_type *in, size_t n,
                              typename Ops::acc_type *partials) {
  typedef typename Ops::acc_type Acc;
  extern __shared__ __align__(16) unsigned char xpar_op_smem[];
  Acc *s = reinterpret_cast<Acc *>(xpar_op_smem);
  size_t block_lo, block_hi, lo, hi;
  share(0, n, blockIdx.x, gridDim.x, &block_lo, &block_hi);
  share(block_lo, block_hi, threadIdx.x, blockDim.x, &lo, &hi);
  Acc acc = Ops::id();
  for (size_t i = lo; i < hi; i++) acc = Ops::op(acc, Ops::load(in, i));
  acc = block_reduce<Ops>(acc, s);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

/* The partials in block order, by one thread. */
template <class Ops>
__global__ void reduce_partials_kernel(const typename Ops::acc_type *partials, unsigned count,
                                       typename Ops::acc_type *out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  typename Ops::acc_type acc = Ops::id();
  for (unsigned p = 0; p < count; p++) acc = Ops::op(acc, partials[p]);
  *out = acc;
}

template <class Ops>
__global__ void scan_kernel(const typename Ops::in_type *in, size_t n,
                            typename Ops::acc_type *out, int exclusive,
                            TileStatus<typename Ops::acc_type> *status, size_t tiles) {
  typedef typename Ops::acc_type Acc;
  extern __shared__ __align__(16) unsigned char xpar_op_smem[];
  Acc *s = reinterpret_cast<Acc *>(xpar_op_smem);
  __shared__ Acc tile_prefix; /* thread 0's look-back result, for the block */
  const unsigned t = threadIdx.x, b = blockDim.x;
  const size_t tile_items = (size_t)b * kItems;
  for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    /* thread: kItems consecutive items */
    const size_t lo = tile * tile_items + (size_t)t * kItems;
    Acc items[kItems];
    Acc acc = Ops::id();
#pragma unroll
    for (unsigned k = 0; k < kItems; k++) {
      items[k] = Ops::id();
      if (lo + k < n) {
        items[k] = Ops::load(in, lo + k);
        acc = Ops::op(acc, items[k]);
      }
    }
    /* block */
    block_scan<Ops>(acc, s);
    const Acc thread_prefix = t ? s[t - 1] : Ops::id();
    const Acc tile_aggregate = s[b - 1];
    /* device: decoupled look-back, by thread 0 */
    if (t == 0) {
      Acc prefix = Ops::id();
      if (tile == 0) {
        store_cg(&status[tile].inclusive, tile_aggregate);
        __threadfence();
        atomicExch(&status[tile].flag, 2u);
      } else {
        store_cg(&status[tile].aggregate, tile_aggregate);
        __threadfence();
        atomicExch(&status[tile].flag, 1u);
        size_t p = tile - 1;
        Acc run = Ops::id(); /* the tiles (p, tile), combined in order */
        for (;;) {
          unsigned f;
          while ((f = __ldcg(&status[p].flag)) == 0) __nanosleep(100);
          __threadfence();
          if (f == 2) {
            run = Ops::op(load_cg(&status[p].inclusive), run);
            break;
          }
          run = Ops::op(load_cg(&status[p].aggregate), run);
          p--;
        }
        prefix = run;
        store_cg(&status[tile].inclusive, Ops::op(prefix, tile_aggregate));
        __threadfence();
        atomicExch(&status[tile].flag, 2u);
      }
      tile_prefix = prefix;
    }
    __syncthreads();
    Acc carry = Ops::op(tile_prefix, thread_prefix);
#pragma unroll
    for (unsigned k = 0; k < kItems; k++) {
      if (lo + k >= n) break;
      if (exclusive) {
        out[lo + k] = carry;
        carry = Ops::op(carry, items[k]);
      } else {
        carry = Ops::op(carry, items[k]);
        out[lo + k] = carry;
      }
    }
    __syncthreads(); /* s and tile_prefix are reused by the next tile */
  }
}

/* Grid and block of one call: 1 x 1 for cuda-serial; the overrides; else
 * the tiles of work, capped at the resident blocks of `kernel`. */
inline cudaError_t shape(const xpar_operator_gpu_call *c, const void *kernel, size_t smem_per_thread,
                         unsigned *grid, unsigned *block) {
  if (c->serial) {
    *grid = *block = 1;
    return cudaSuccess;
  }
  *block = c->block ? c->block : kBlock;
  const size_t per_block = (size_t)*block * kItems;
  size_t work = c->n / per_block + (c->n % per_block != 0);
  if (work == 0) work = 1;
  if (c->grid) {
    *grid = (unsigned)(c->grid < work ? c->grid : work);
    return cudaSuccess;
  }
  int resident = 0;
  cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, kernel, (int)*block, smem_per_thread * *block);
  if (err != cudaSuccess) return err;
  if (resident < 1) resident = 1;
  if ((unsigned)resident > kBlocksPerSm) resident = (int)kBlocksPerSm;
  const size_t cap = (size_t)(c->multiprocessors > 0 ? c->multiprocessors : 1) * (size_t)resident;
  *grid = (unsigned)(work < cap ? work : cap);
  return cudaSuccess;
}

static inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* out (device) = the reduction; scratch: one partial per block. */
template <class Ops> int reduce(const xpar_operator_gpu_call *c) {
  typedef typename Ops::acc_type Acc;
  unsigned grid, block;
  cudaError_t err = shape(c, (const void *)reduce_kernel<Ops>, sizeof(Acc), &grid, &block);
  if (err != cudaSuccess) return (int)err;
  const size_t need = align_up((size_t)grid * sizeof(Acc), 256);
  if (!c->scratch) {
    *c->scratch_bytes = need;
    return 0;
  }
  if (*c->scratch_bytes < need) return (int)cudaErrorInvalidValue;
  cudaStream_t stream = (cudaStream_t)c->stream;
  Acc *partials = (Acc *)c->scratch;
  reduce_kernel<Ops><<<grid, block, block * sizeof(Acc), stream>>>(
      (const typename Ops::in_type *)c->in, c->n, partials);
  reduce_partials_kernel<Ops><<<1, 1, 0, stream>>>(partials, grid, (Acc *)c->out);
  return (int)cudaGetLastError();
}

/* out[0, n) = the scan; scratch: one status per tile, cleared first. */
template <class Ops> int scan(const xpar_operator_gpu_call *c) {
  typedef typename Ops::acc_type Acc;
  unsigned grid, block;
  cudaError_t err = shape(c, (const void *)scan_kernel<Ops>, sizeof(Acc), &grid, &block);
  if (err != cudaSuccess) return (int)err;
  const size_t tile_items = (size_t)block * kItems;
  size_t tiles = c->n / tile_items + (c->n % tile_items != 0);
  if (tiles == 0) tiles = 1;
  const size_t need = align_up(tiles * sizeof(TileStatus<Acc>), 256);
  if (!c->scratch) {
    *c->scratch_bytes = need;
    return 0;
  }
  if (*c->scratch_bytes < need) return (int)cudaErrorInvalidValue;
  if (c->n == 0) return 0;
  cudaStream_t stream = (cudaStream_t)c->stream;
  err = cudaMemsetAsync(c->scratch, 0, tiles * sizeof(TileStatus<Acc>), stream);
  if (err != cudaSuccess) return (int)err;
  scan_kernel<Ops><<<grid, block, block * sizeof(Acc), stream>>>(
      (const typename Ops::in_type *)c->in, c->n, (Acc *)c->out, c->exclusive,
      (TileStatus<Acc> *)c->scratch, tiles);
  return (int)cudaGetLastError();
}

} // namespace xpar_operator_cuda

#endif /* XPAR_XPAR_OPERATOR_CUH */
