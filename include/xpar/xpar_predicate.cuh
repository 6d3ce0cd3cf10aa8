/**
 * @file
 * The GPU side of xpar predicates (XPAR_PREDICATE in xpar/xpar_kernel.h): the
 * flag kernel, instantiated in the application's translation unit for its own
 * element type and test.  Included by xpar_kernel.h under nvcc; not meant to
 * be included directly.
 *
 * One grid-stride loop writes flags[i] = test(in, i) != 0; xpar's built-in
 * select by flags (backend_cuda/select_kernel.cuh) then compacts on the same
 * stream.  Correct for any grid and block, 1 x 1 included (cuda-serial).
 */
#ifndef XPAR_XPAR_PREDICATE_CUH
#define XPAR_XPAR_PREDICATE_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/** The GPU side of xpar predicates: flags(), instantiated by XPAR_PREDICATE. */
namespace xpar_predicate_cuda {
/** @cond XPAR_INTERNAL */

template <class P>
__global__ void __launch_bounds__(1024)
    flags_kernel(const typename P::in_type *in, unsigned char *flags, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    flags[i] = P::keep(in, i) ? 1 : 0;
}

/* 256 threads, as many blocks as keep every multiprocessor busy with a few
 * elements per thread (8 blocks per SM at most: a grid-stride loop). */
template <class P> int flags(const xpar_predicate_gpu_call *c) {
  if (c->n == 0) return 0;
  unsigned block = c->serial ? 1u : c->block ? c->block : 256u;
  size_t want = (c->n + block - 1) / block;
  const size_t cap = (size_t)(c->multiprocessors > 0 ? c->multiprocessors : 1) * 8u;
  if (want > cap) want = cap;
  const unsigned grid = c->serial ? 1u : c->grid ? c->grid : (unsigned)want;
  flags_kernel<P><<<grid, block, 0, (cudaStream_t)c->stream>>>(
      static_cast<const typename P::in_type *>(c->in), c->flags, c->n);
  return (int)cudaGetLastError();
}

/** @endcond */
} // namespace xpar_predicate_cuda

#endif /* XPAR_XPAR_PREDICATE_CUH */
