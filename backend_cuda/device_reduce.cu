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

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                                         const void *in, size_t n, void *result) {
  return reduce_entry<ReducePath::automatic>(ex, t, op, in, n, result);
}

extern "C" xpar_status xpar__cuda_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t,
                                                  const void *in, size_t n, void *result) {
  return reduce_sum_wide_entry<ReducePath::automatic>(ex, t, in, n, result);
}

extern "C" xpar_status xpar__cuda_dot(const xpar__exec *ex, xpar_dtype t, const void *x,
                                      const void *y, size_t n, void *result) {
  return dot_entry<ReducePath::automatic>(ex, t, x, y, n, result);
}
