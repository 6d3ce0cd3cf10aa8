/*
 * Device layer: reduce (sum/min/max), reduce_sum_wide and dot, as one
 * single-pass transform-reduce.
 *
 *  thread  each thread accumulates its elements in element order into ONE
 *          accumulator: the unaligned head (global thread 0), then 16-byte
 *          vectors in a grid-stride loop with several independent loads in
 *          flight, then the scalar tail.  With grid = block = 1 this is the
 *          CPU serial loop, operation for operation.
 *  warp    shuffle tree (partial warps handled)
 *  block   shared-memory combine of the warp results
 *  device  every block stores its partial, fences and takes a ticket; the
 *          block that draws the last ticket combines the partials in block
 *          order (deterministic for a fixed shape), writes the result
 *          (straight into pinned host-mapped memory, or to the caller's
 *          device pointer) and resets the ticket.  No atomics on values.
 */
#include <string.h>

#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"
#include "warp_block.cuh"

namespace xpar_cuda {
namespace {

struct ReduceParams {
  size_t n;
  size_t head;    /* scalar elements before the first 16-byte boundary */
  size_t vectors; /* whole 16-byte vectors after the head */
  void *partials; /* gridDim.x accumulators (unused with one block) */
  unsigned int *ticket;
  void *result; /* device-visible: pinned mapped slot or the caller's */
  /* Small synchronous calls: after the result, the kernel raises this flag
   * (in the pinned mapped slot) to `seq`, and the host spins on it instead of
   * synchronising the stream (run_reduce).  NULL otherwise. */
  volatile unsigned int *done_flag;
  unsigned int seq;
};

/* The result is in host memory, visible before the flag: the system-scope
 * fence orders the two stores for the host, which polls the flag. */
__device__ __forceinline__ void raise_done_flag(const ReduceParams &p) {
  if (p.done_flag) {
    __threadfence_system();
    *p.done_flag = p.seq;
  }
}

/* What a plain reduce reads: x[i], converted to the accumulator type
 * (int32 -> int64 etc. for reduce_sum_wide; the identity otherwise). */
template <class T, class Acc> struct ArraySource {
  using Loaded = Pack16<T>;
  static constexpr int per_vector = Pack16<T>::count;
  const T *x;
  __device__ __forceinline__ Acc scalar(size_t i) const { return (Acc)__ldg(x + i); }
  __device__ __forceinline__ Loaded vector(size_t head, size_t v) const {
    Loaded l;
    l.raw = load16_readonly(x + head + v * per_vector);
    return l;
  }
  __device__ __forceinline__ Acc element(const Loaded &l, int e) const { return (Acc)l.e[e]; }
};

/* What dot reads: x[i] * y[i], multiplied exactly as the CPU does (no FMA). */
template <class T> struct DotSource {
  struct Loaded {
    Pack16<T> a, b;
  };
  static constexpr int per_vector = Pack16<T>::count;
  const T *x;
  const T *y;
  __device__ __forceinline__ T scalar(size_t i) const {
    return Arith<T>::mul(__ldg(x + i), __ldg(y + i));
  }
  __device__ __forceinline__ Loaded vector(size_t head, size_t v) const {
    Loaded l;
    l.a.raw = load16_readonly(x + head + v * per_vector);
    l.b.raw = load16_readonly(y + head + v * per_vector);
    return l;
  }
  __device__ __forceinline__ T element(const Loaded &l, int e) const {
    return Arith<T>::mul(l.a.e[e], l.b.e[e]);
  }
};

/* Thread layer: this thread's elements, in element order, one accumulator. */
template <class Op, class Src>
__device__ __forceinline__ typename Op::Type thread_accumulate(const Src &src,
                                                               const ReduceParams &p) {
  using Acc = typename Op::Type;
  constexpr unsigned loads = tuning::reduce_vectors_per_thread;
  constexpr int per_vector = Src::per_vector;
  const size_t thread = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  Acc acc = Op::identity();

  if (thread == 0)
    for (size_t i = 0; i < p.head; ++i) acc = Op::apply(acc, src.scalar(i));

  size_t v = thread;
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

template <class Op, class Src>
__global__ void __launch_bounds__(tuning::max_block) reduce_kernel(Src src, ReduceParams p) {
  using Acc = typename Op::Type;
  __shared__ Acc warp_scratch[32];
  __shared__ int is_last_block;

  const Acc mine = thread_accumulate<Op>(src, p);
  const Acc block_total = block_reduce<Op>(mine, blockDim.x, warp_scratch);

  if (gridDim.x == 1) { /* the block's partial is the result: no extra step */
    if (threadIdx.x == 0) {
      *static_cast<Acc *>(p.result) = block_total;
      raise_done_flag(p);
    }
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
    *static_cast<Acc *>(p.result) = total;
    *p.ticket = 0; /* ready for the next reduce on this state */
    raise_done_flag(p);
  }
}

/* Host side of every reduce-shaped call. */
template <class Op, class Src>
xpar_status run_reduce(const xpar__exec *ex, const Src &src, size_t n, VectorSplit split,
                       void *result, const char *name) {
  using Acc = typename Op::Type;
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  const int on_device = ex->result_on_device;
  if (n == 0 && !on_device) {
    const Acc identity = Op::identity();
    memcpy(result, &identity, sizeof identity);
    return XPAR_OK;
  }
  XPAR__FORWARD(xpar__cuda_ensure_control(st));

  auto kernel = reduce_kernel<Op, Src>;
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(
      ex, st, XPAR_CUDA_FAMILY_REDUCE, (const void *)kernel, n,
      tuning::reduce_vectors_per_thread * (unsigned)Src::per_vector, &shape));
  if (shape.grid > 1)
    XPAR__FORWARD(xpar__cuda_grow_device(st, &st->reduce_partials, (size_t)shape.grid * sizeof(Acc),
                                         "reduce partials", NULL));

  ReduceParams p;
  p.n = n;
  p.head = split.head;
  p.vectors = split.vectors;
  p.partials = st->reduce_partials.ptr;
  p.ticket = st->reduce_ticket;
  p.result = on_device ? result : st->result_device;
  /* A small call with its result on the host waits for the kernel's flag
   * rather than for the stream: cudaStreamSynchronize alone costs about as
   * much as the whole kernel at this size (bench/cub/NOTES.md, small N). */
  const bool spin = !on_device && n <= tuning::reduce_spin_max_n;
  p.done_flag = NULL;
  p.seq = 0;
  if (spin) {
    if (++st->result_seq == 0) st->result_seq = 1; /* 0 is never raised */
    p.done_flag = reinterpret_cast<volatile unsigned int *>(
        static_cast<char *>(st->result_device) + kResultFlagOffset);
    p.seq = st->result_seq;
  }
  kernel<<<shape.grid, shape.block, 0, st->stream>>>(src, p);
  XPAR__FORWARD(xpar__cuda_check_launch(st, name));

  if (on_device) {
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, name));
    return XPAR_OK;
  }
  if (!spin || !xpar__cuda_spin_for_flag(st, p.seq))
    XPAR__FORWARD(xpar__cuda_sync(st, name));
  /* The last block wrote the pinned slot directly; the sync made it visible. */
  memcpy(result, (const void *)st->result_host, sizeof(Acc));
  return XPAR_OK;
}

template <class T> xpar_status check_element_alignment(const void *p, const char *what) {
  if (!aligned_to(p, sizeof(T)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "%s pointer %p is not aligned to its %zu-byte elements", what, p, sizeof(T));
  return XPAR_OK;
}

} // namespace
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                                         const void *in, size_t n, void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    XPAR__FORWARD(check_element_alignment<T>(in, "reduce input"));
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      using Op = decltype(op_tag);
      const ArraySource<T, T> src{static_cast<const T *>(in)};
      return run_reduce<Op>(ex, src, n, split_for_vectors<T>(in, n), result, "reduce");
    });
  });
}

extern "C" xpar_status xpar__cuda_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t,
                                                  const void *in, size_t n, void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    using Acc = typename Wide<T>::Type;
    XPAR__FORWARD(check_element_alignment<T>(in, "reduce_sum_wide input"));
    const ArraySource<T, Acc> src{static_cast<const T *>(in)};
    return run_reduce<SumOp<Acc>>(ex, src, n, split_for_vectors<T>(in, n), result,
                                  "reduce_sum_wide");
  });
}

extern "C" xpar_status xpar__cuda_dot(const xpar__exec *ex, xpar_dtype t, const void *x,
                                      const void *y, size_t n, void *result) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    XPAR__FORWARD(check_element_alignment<T>(x, "dot x"));
    XPAR__FORWARD(check_element_alignment<T>(y, "dot y"));
    const DotSource<T> src{static_cast<const T *>(x), static_cast<const T *>(y)};
    return run_reduce<SumOp<T>>(ex, src, n, split_for_vectors<T>(x, y, n), result, "dot");
  });
}
