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
#include "reduce_kernel.cuh"

namespace xpar_cuda {
namespace {

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
      const ArraySource<T, T> src{static_cast<const T *>(in), reads_stream(ex, n * sizeof(T))};
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
    const ArraySource<T, Acc> src{static_cast<const T *>(in), reads_stream(ex, n * sizeof(T))};
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
    const DotSource<T> src{static_cast<const T *>(x), static_cast<const T *>(y),
                           reads_stream(ex, 2 * n * sizeof(T))};
    return run_reduce<SumOp<T>>(ex, src, n, split_for_vectors<T>(x, y, n), result, "dot");
  });
}
