/*
 * The reduce kernel (device_reduce.cu has the layers and the entry points): sources,
 * thread / block / device layers and the host side, templated so that the bench's reduce
 * sweep (bench/cub/gpu_timing.cu) instantiates the same code with other load counts.
 */
#ifndef XPAR_BACKEND_CUDA_REDUCE_KERNEL_CUH
#define XPAR_BACKEND_CUDA_REDUCE_KERNEL_CUH

#include <string.h>

#include <atomic>

#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "xpar/detail/cuda_warp_block.cuh" /* shared with the application's operators */

namespace xpar_cuda {
namespace {

struct ReduceParams {
  size_t n;
  size_t head;    /* scalar elements before the first 16-byte boundary */
  size_t vectors; /* whole 16-byte vectors after the head */
  void *partials; /* gridDim.x accumulators (unused with one block) */
  unsigned int *ticket;
  void *result; /* device-visible: pinned mapped slot or the caller's */
  /* Small synchronous calls with the result on the host: the kernel writes the result
   * as stamped words into the pinned mapped slot (below), and the host spins on them
   * instead of synchronising the stream (run_reduce).  NULL otherwise. */
  unsigned long long *stamped;
  unsigned int seq;
};

/*
 * The result of a small synchronous call, for a host that spins on it: two 8-byte words,
 * each [seq:32 | 32 bits of the value] (low half, then high half; the high word is 0 for
 * 4-byte results).  Each word is written with one st.relaxed.sys.u64 and read by the host
 * with one aligned 8-byte atomic load: single-copy atomic on both sides, so a word whose
 * stamp is this call's carries this call's half of the value.  The host accepts the
 * result only when both stamps match, so no fence orders the two words (the
 * __threadfence_system() + flag that stood here cost a system-scope round trip before
 * the flag could leave the GPU).
 */
template <class Acc> __device__ __forceinline__ void write_stamped(const ReduceParams &p, Acc v) {
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof v);
  const unsigned long long stamp = (unsigned long long)p.seq << 32;
  const unsigned long long w0 = stamp | (bits & 0xffffffffull), w1 = stamp | (bits >> 32);
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p.stamped), "l"(w0) : "memory");
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p.stamped + 1), "l"(w1) : "memory");
}

/* The result: stamped for a spinning host, else a plain store (device pointer, or the
 * pinned slot that the host reads after the stream synchronisation). */
template <class Acc> __device__ __forceinline__ void write_result(const ReduceParams &p, Acc v) {
  if (p.stamped)
    write_stamped(p, v);
  else
    *static_cast<Acc *>(p.result) = v;
}

/* Whether a reduce reading `bytes` streams them (L1::no_allocate, L2::256B prefetch:
 * thread_load.cuh): only when they cannot all sit in L2 from their last use. */
inline bool reads_stream(const xpar__exec *ex, size_t bytes) {
  return bytes > ex->cuda->l2_bytes;
}

/* What a plain reduce reads: x[i], converted to the accumulator type
 * (int32 -> int64 etc. for reduce_sum_wide; the identity otherwise). */
template <class T, class Acc> struct ArraySource {
  using Loaded = Pack16<T>;
  static constexpr int per_vector = Pack16<T>::count;
  const T *x;
  bool streaming; /* larger than L2: reads_stream */
  __device__ __forceinline__ Acc scalar(size_t i) const { return (Acc)__ldg(x + i); }
  __device__ __forceinline__ Loaded vector(size_t head, size_t v) const {
    Loaded l;
    l.raw = load16_readonly(x + head + v * per_vector, streaming);
    return l;
  }
  __device__ __forceinline__ Acc element(const Loaded &l, int e) const { return (Acc)l.e[e]; }
  /* The bulk-copy path (reduce_bulk_kernel): the arrays it copies, and vector k of a
   * shared-memory tile holding tile_v vectors of each. */
  static constexpr int arrays = 1;
  __device__ __forceinline__ const void *array(int) const { return x; }
  __device__ __forceinline__ Loaded from_shared(const int4 *tile, size_t k, size_t) const {
    Loaded l;
    l.raw = tile[k];
    return l;
  }
};

/* What dot reads: x[i] * y[i], multiplied exactly as the CPU does (no FMA). */
template <class T> struct DotSource {
  struct Loaded {
    Pack16<T> a, b;
  };
  static constexpr int per_vector = Pack16<T>::count;
  const T *x;
  const T *y;
  bool streaming; /* larger than L2: reads_stream */
  __device__ __forceinline__ T scalar(size_t i) const {
    return Arith<T>::mul(__ldg(x + i), __ldg(y + i));
  }
  __device__ __forceinline__ Loaded vector(size_t head, size_t v) const {
    Loaded l;
    l.a.raw = load16_readonly(x + head + v * per_vector, streaming);
    l.b.raw = load16_readonly(y + head + v * per_vector, streaming);
    return l;
  }
  __device__ __forceinline__ T element(const Loaded &l, int e) const {
    return Arith<T>::mul(l.a.e[e], l.b.e[e]);
  }
  static constexpr int arrays = 2; /* bulk path: x's vectors, then y's, in each tile */
  __device__ __forceinline__ const void *array(int a) const {
    return a ? (const void *)y : (const void *)x;
  }
  __device__ __forceinline__ Loaded from_shared(const int4 *tile, size_t k, size_t tile_v) const {
    Loaded l;
    l.a.raw = tile[k];
    l.b.raw = tile[tile_v + k];
    return l;
  }
};

/* Thread layer: this thread's elements, in element order, one accumulator; the vectors
 * from first_vector on (the bulk kernel has read the ones before it). */
template <class Op, class Src, unsigned LOADS>
__device__ __forceinline__ typename Op::Type thread_accumulate(const Src &src,
                                                               const ReduceParams &p,
                                                               size_t first_vector = 0) {
  using Acc = typename Op::Type;
  constexpr unsigned loads = LOADS;
  constexpr int per_vector = Src::per_vector;
  const size_t thread = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  Acc acc = Op::identity();

  if (thread == 0)
    for (size_t i = 0; i < p.head; ++i) acc = Op::apply(acc, src.scalar(i));

  size_t v = first_vector + thread;
  for (; v + (loads - 1) * stride < p.vectors; v += loads * stride) {
    typename Src::Loaded batch[loads];
#pragma unroll
    for (unsigned u = 0; u < loads; ++u) batch[u] = src.vector(p.head, v + u * stride);
#pragma unroll
    for (unsigned u = 0; u < loads; ++u)
#pragma unroll
      for (int e = 0; e < per_vector; ++e) acc = Op::apply(acc, src.element(batch[u], e));
  }
  for (; v < p.vectors; v += stride) {
    const typename Src::Loaded one = src.vector(p.head, v);
#pragma unroll
    for (int e = 0; e < per_vector; ++e) acc = Op::apply(acc, src.element(one, e));
  }

  for (size_t i = p.head + p.vectors * per_vector + thread; i < p.n; i += stride)
    acc = Op::apply(acc, src.scalar(i));
  return acc;
}

/* Block and device layers: the block's threads combine, then (several blocks) every block
 * stores its partial, fences and draws a ticket, and the block with the last ticket
 * combines the partials in block order and writes the result.  Every thread of every
 * block calls it. */
template <class Op>
__device__ __forceinline__ void combine_and_write(typename Op::Type mine, const ReduceParams &p) {
  using Acc = typename Op::Type;
  __shared__ Acc warp_scratch[32];
  __shared__ int is_last_block;

  const Acc block_total = block_reduce<Op>(mine, blockDim.x, warp_scratch);

  if (gridDim.x == 1) { /* the block's partial is the result: no extra step */
    if (threadIdx.x == 0) write_result(p, block_total);
    return;
  }

  /* Last-block step: publish the partial, fence, draw a ticket. */
  Acc *partials = static_cast<Acc *>(p.partials);
  if (threadIdx.x == 0) {
    store_cg(partials + blockIdx.x, block_total);
    __threadfence();
    const unsigned ticket = atomicAdd(p.ticket, 1u);
    is_last_block = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  __threadfence(); /* every other block's partial is visible past this */

  /* Combine in block order: thread t takes partials t, t + blockDim, ...; the
   * block tree then combines the threads; no identity is folded in. */
  Acc acc = Op::identity();
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
    const Acc part = load_cg(partials + i);
    acc = i == threadIdx.x ? part : Op::apply(acc, part);
  }
  const unsigned valid = gridDim.x < blockDim.x ? gridDim.x : blockDim.x;
  const Acc total = block_reduce<Op>(acc, valid, warp_scratch);
  if (threadIdx.x == 0) {
    *p.ticket = 0; /* ready for the next reduce on this state */
    write_result(p, total);
  }
}

template <class Op, class Src, unsigned LOADS>
__global__ void __launch_bounds__(tuning::max_block) reduce_kernel(Src src, ReduceParams p) {
  combine_and_write<Op>(thread_accumulate<Op, Src, LOADS>(src, p), p);
}

/*
 * The bulk-copy reduce, for inputs far larger than L2 (tuning::reduce_bulk_min_bytes):
 * the vector body is cut into tiles of tile_v 16-byte vectors per array; block b takes
 * tiles b, b + grid, ... .  Thread 0 keeps reduce_bulk_stages tiles in flight, each one
 * bulk copy per array (cp.async.bulk, global -> shared) completing on the stage's
 * mbarrier with its byte count; all threads wait on the barrier's phase, accumulate the
 * tile from shared memory, and meet at a barrier before thread 0 refills the stage (the
 * reads of the stage happen before the copy that overwrites it: __syncthreads orders
 * them before thread 0's issue, as in CUTLASS's pipelines, where the consumer's
 * release is an mbarrier arrive).  Vectors after the last whole tile, the head and the
 * tail go through the ordinary loads.  The engine asks DRAM for 8-16 KB contiguous
 * pieces with few instructions; the load path tops out at CUB's rate there (launch_shape.cuh).
 * Compiled for an architecture without the bulk copy (< sm_90), the kernel is the
 * ordinary grid-stride loop, so a fat binary stays correct on every device.
 */
/* 16-byte vectors of each array in one bulk tile (a stage holds one tile of every array). */
template <class Src> constexpr size_t bulk_tile_vectors() {
  return tuning::reduce_bulk_stage_bytes / 16 / Src::arrays;
}

template <class Op, class Src>
__global__ void __launch_bounds__(tuning::reduce_bulk_block) reduce_bulk_kernel(Src src, ReduceParams p) {
  using Acc = typename Op::Type;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr unsigned stages = tuning::reduce_bulk_stages;
  constexpr unsigned stage_vectors = tuning::reduce_bulk_stage_bytes / 16;
  constexpr size_t tile_v = bulk_tile_vectors<Src>();
  constexpr unsigned copy_bytes = (unsigned)tile_v * 16;
  constexpr size_t element_bytes = 16 / Src::per_vector;
  extern __shared__ __align__(128) int4 stage_buffer[];
  __shared__ __align__(8) unsigned long long full[stages];

  const size_t tiles = p.vectors / tile_v;
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < stages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&full[s])) : "memory");
    /* the initialised barriers are visible to the copy engine (the async proxy) */
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  /* Every byte is read once: the copies ask L2 to evict their lines first (1-4 GiB
   * read 0-3 % faster for it, launch_shape.cuh). */
  unsigned long long evict_first = 0;
  if (threadIdx.x == 0)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(evict_first));
  const auto issue = [&](size_t tile, unsigned s) {
    const unsigned bar = smem_address(&full[s]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(copy_bytes * Src::arrays)
                 : "memory");
#pragma unroll
    for (int a = 0; a < Src::arrays; ++a) {
      const char *from = static_cast<const char *>(src.array(a)) + p.head * element_bytes +
                         tile * (size_t)copy_bytes;
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
          "[%0], [%1], %2, [%3], %4;" ::"r"(smem_address(stage_buffer + s * stage_vectors + a * tile_v)),
          "l"(from), "r"(copy_bytes), "r"(bar), "l"(evict_first)
          : "memory");
    }
  };
  if (threadIdx.x == 0)
    for (unsigned s = 0; s < stages; ++s) {
      const size_t t = blockIdx.x + (size_t)s * gridDim.x;
      if (t < tiles) issue(t, s);
    }

  Acc acc = Op::identity();
  unsigned it = 0;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, ++it) {
    const unsigned s = it % stages, parity = (it / stages) & 1u;
    const unsigned bar = smem_address(&full[s]);
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred ready; mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2; "
          "selp.u32 %0, 1, 0, ready; }"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    const int4 *tile = stage_buffer + s * stage_vectors;
#pragma unroll 2
    for (size_t k = threadIdx.x; k < tile_v; k += blockDim.x) {
      const typename Src::Loaded l = src.from_shared(tile, k, tile_v);
#pragma unroll
      for (int e = 0; e < Src::per_vector; ++e) acc = Op::apply(acc, src.element(l, e));
    }
    __syncthreads(); /* the stage is read before it is refilled */
    if (threadIdx.x == 0) {
      const size_t next = t + (size_t)stages * gridDim.x;
      if (next < tiles) issue(next, s);
    }
  }

  /* the head, the vectors after the last whole tile, the tail */
  acc = Op::apply(acc, thread_accumulate<Op, Src, 1>(src, p, tiles * tile_v));
#else
  const Acc acc = thread_accumulate<Op, Src, tuning::reduce_vectors_per_thread>(src, p);
#endif
  combine_and_write<Op>(acc, p);
}

/* Which kernel a reduce runs: `automatic` picks the bulk-copy kernel for bodies of at
 * least tuning::reduce_bulk_min_bytes on a device it was compiled for, and the load
 * kernel otherwise; the bench's sweeps and checks force one. */
enum class ReducePath { automatic, loads, bulk };

/* Whether the bulk kernel of <Op, Src> can run as tuned on the state's device (the
 * current one): machine code for sm_90+ and the dynamic shared memory it asks for.  Both
 * belong to the device's context, so the answer is kept per device ordinal (asked again,
 * on every such call, past the first 64). */
template <class Op, class Src> bool bulk_kernel_ready(int device) {
  static std::atomic<signed char> known[64]; /* 0: not asked yet, 1: ready, -1: not */
  const bool cached = device >= 0 && device < 64;
  if (cached) {
    const signed char k = known[device].load(std::memory_order_relaxed);
    if (k) return k > 0;
  }
  const void *kernel = (const void *)reduce_bulk_kernel<Op, Src>;
  cudaFuncAttributes attr;
  bool ready = true;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess || attr.binaryVersion < 90 ||
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)tuning::reduce_bulk_shared_bytes) !=
          cudaSuccess) {
    (void)cudaGetLastError(); /* not sticky: the load kernel serves instead */
    ready = false;
  }
  /* two threads asking at once set the same attribute and store the same answer */
  if (cached) known[device].store(ready ? 1 : -1, std::memory_order_relaxed);
  return ready;
}

/* Host side of every reduce-shaped call; LOADS: 16-byte loads in flight per thread and
 * PATH the kernel (the bench's reduce sweep and checks instantiate others). */
template <class Op, class Src, unsigned LOADS = tuning::reduce_vectors_per_thread,
          ReducePath PATH = ReducePath::automatic>
xpar_status run_reduce(const xpar__exec *ex, const Src &src, size_t n, VectorSplit split,
                       void *result, const char *name) {
  using Acc = typename Op::Type;
  xpar__cuda_state *st = ex->cuda;
  const int on_device = ex->result_on_device;
  /* Captured into a CUDA graph, the partials and ticket belong to the graph
   * (GraphScratch), none of them the context's, which its later calls use. */
  const bool captured = ex->captured;
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  if (n == 0 && !on_device) {
    const Acc identity = Op::identity();
    memcpy(result, &identity, sizeof identity);
    return XPAR_OK;
  }
  if (!captured) XPAR__FORWARD(xpar__cuda_ensure_control(st));

  auto kernel = reduce_kernel<Op, Src, LOADS>;
  xpar__cuda_shape shape;
  bool bulk = false;
  if constexpr (PATH == ReducePath::bulk) {
    bulk = !ex->serial; /* grid = block = 1 stays the serial loop */
  } else if constexpr (PATH == ReducePath::automatic) {
    /* launch-shape overrides are a debugging and tuning aid of the load kernel */
    bulk = !ex->serial && !ex->grid && !ex->block &&
           split.vectors * 16 * (size_t)Src::arrays >= tuning::reduce_bulk_min_bytes;
  }
  if constexpr (PATH != ReducePath::loads) {
    if (bulk && !bulk_kernel_ready<Op, Src>(st->device)) bulk = false;
    if (bulk) {
      /* reduce_bulk_blocks_per_sm resident blocks per SM, none without a whole tile */
      size_t grid = (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1) *
                    tuning::reduce_bulk_blocks_per_sm;
      const size_t tiles = split.vectors / bulk_tile_vectors<Src>();
      if (grid > tiles) grid = tiles ? tiles : 1;
      shape.grid = (unsigned)grid;
      shape.block = tuning::reduce_bulk_block;
    }
  }
  if (!bulk) {
    XPAR__FORWARD(xpar__cuda_choose_shape(
        ex, st, XPAR_CUDA_FAMILY_REDUCE, (const void *)kernel, n,
        LOADS * (unsigned)Src::per_vector, &shape));
  }
  GraphScratch graph_scratch(st); /* a captured call's ticket (zeroed), then its partials */
  constexpr size_t kTicketBytes = 16;
  if (captured) {
    XPAR__FORWARD(graph_scratch.take(kTicketBytes + (size_t)shape.grid * sizeof(Acc), kTicketBytes,
                                     name));
  } else if (shape.grid > 1) {
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->reduce_partials, (size_t)shape.grid * sizeof(Acc),
                                         "reduce partials", NULL));
  }

  ReduceParams p;
  p.n = n;
  p.head = split.head;
  p.vectors = split.vectors;
  p.partials = captured ? (void *)((char *)graph_scratch.get() + kTicketBytes)
                        : st->reduce_partials.ptr;
  p.ticket = captured ? (unsigned int *)graph_scratch.get() : st->reduce_ticket;
  p.result = on_device ? result : st->result_device;
  /* A small call with its result on the host waits for the kernel's flag
   * rather than for the stream: cudaStreamSynchronize alone costs about as
   * much as the whole kernel at this size (H100 host, 2026-11-25: an empty kernel and
   * the stream sync 9.9 us, a kernel raising a pinned flag and the host's spin 7.8). */
  const bool spin = !on_device && n <= tuning::flag_wait_max_n && st->flag_waits;
  p.stamped = NULL;
  p.seq = 0;
  if (spin) p.stamped = xpar__cuda_next_stamped_result(st, &p.seq);
  /* A spinning call is latency-bound: the driver's launch (xpar__cuda_launch with a handle). */
  static const void *const handle = kernel_handle((const void *)kernel);
  Src src_arg = src;
  void *args[] = {&src_arg, &p};
  if (bulk) {
    if constexpr (PATH != ReducePath::loads)
      XPAR__FORWARD(xpar__cuda_launch(st, (const void *)reduce_bulk_kernel<Op, Src>, NULL,
                                      shape.grid, shape.block, tuning::reduce_bulk_shared_bytes,
                                      args, name));
  } else {
    XPAR__FORWARD(xpar__cuda_launch(st, (const void *)kernel, spin ? handle : NULL, shape.grid,
                                    shape.block, 0, args, name));
  }

  XPAR__FORWARD(graph_scratch.free(name));
  if (on_device) {
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
    return XPAR_OK;
  }
  if (spin && xpar__cuda_spin_for_stamped(st, p.seq, result, sizeof(Acc))) return XPAR_OK;
  XPAR__FORWARD(xpar__cuda_sync(st, name));
  /* The kernel wrote the pinned slot directly; the sync made it visible. */
  if (spin)
    xpar__cuda_read_stamped(st, result, sizeof(Acc));
  else
    memcpy(result, (const void *)st->result_host, sizeof(Acc));
  return XPAR_OK;
}

/* The entry points of reduce, reduce_sum_wide and dot (device_reduce.cu) for one kernel
 * choice: the library's is `automatic`; --check forces `bulk` at every size. */
template <ReducePath PATH>
xpar_status reduce_entry(const xpar__exec *ex, xpar_dtype t, xpar_reduction op, const void *in,
                         size_t n, void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    XPAR__FORWARD(check_element_alignment<T>(in, "reduce input"));
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      using Op = decltype(op_tag);
      const ArraySource<T, T> src{static_cast<const T *>(in), reads_stream(ex, n * sizeof(T))};
      return run_reduce<Op, ArraySource<T, T>, tuning::reduce_vectors_per_thread, PATH>(
          ex, src, n, split_for_vectors<T>(in, n), result, "reduce");
    });
  });
}

template <ReducePath PATH>
xpar_status reduce_sum_wide_entry(const xpar__exec *ex, xpar_dtype t, const void *in, size_t n,
                                  void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    using Acc = typename Wide<T>::Type;
    XPAR__FORWARD(check_element_alignment<T>(in, "reduce_sum_wide input"));
    const ArraySource<T, Acc> src{static_cast<const T *>(in), reads_stream(ex, n * sizeof(T))};
    return run_reduce<SumOp<Acc>, ArraySource<T, Acc>, tuning::reduce_vectors_per_thread, PATH>(
        ex, src, n, split_for_vectors<T>(in, n), result, "reduce_sum_wide");
  });
}

template <ReducePath PATH>
xpar_status dot_entry(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y, size_t n,
                      void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    XPAR__FORWARD(check_element_alignment<T>(x, "dot x"));
    XPAR__FORWARD(check_element_alignment<T>(y, "dot y"));
    const DotSource<T> src{static_cast<const T *>(x), static_cast<const T *>(y),
                           reads_stream(ex, 2 * n * sizeof(T))};
    return run_reduce<SumOp<T>, DotSource<T>, tuning::reduce_vectors_per_thread, PATH>(
        ex, src, n, split_for_vectors<T>(x, y, n), result, "dot");
  });
}

} // namespace
} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_REDUCE_KERNEL_CUH */
