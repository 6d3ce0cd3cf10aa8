/*
 * Block-scan layer of the scan (device_scan.cu), on the thread and warp layers of
 * warp_block.cuh.  A thread holds K x V items in registers (K vectors of V elements,
 * vector k of lane l being vector k * lanes + l of its warp's chunk); these functions turn
 * them into scanned values without touching global memory:
 *
 *   thread_total         the thread's items folded in element order
 *   block_warp_offsets   one barrier: each warp's exclusive offset inside the block and
 *                        the block's total (every warp scans the warp totals itself, so
 *                        no second barrier is needed to hand them out)
 *   thread_scan_items    per vector, a warp scan of the lanes' vector totals seeds each
 *                        lane, which then runs through its items in element order:
 *                        items become inclusive or exclusive values from `seed`
 *
 * (A warp-transposed, blocked layout -- CUB's BLOCK_LOAD_WARP_TRANSPOSE, one warp scan per
 * tile instead of one per vector -- measured 3-20 % slower in every shape tried, because
 * of the two shared-memory round trips per tile: bench/cub/NOTES.md, run 2026-11-25.)
 *
 * All are correct for any block size, including 1 (cuda-serial: the seed is the carry,
 * and the items are folded one after the other exactly as the CPU serial loop does) and
 * blocks whose last warp is partial.
 *
 * Installed (xpar/detail/) for the application's operators (xpar/xpar_operator.cuh);
 * backend_cuda/ includes it as it is.  Not a public API.
 */
#ifndef XPAR_DETAIL_CUDA_BLOCK_SCAN_CUH
#define XPAR_DETAIL_CUDA_BLOCK_SCAN_CUH

#include "cuda_warp_block.cuh"

namespace xpar_cuda {

template <class Op, int K, int V>
__device__ __forceinline__ typename Op::Type thread_total(const typename Op::Type (&x)[K][V]) {
  typename Op::Type total = x[0][0];
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (k || e) total = Op::apply(total, x[k][e]);
  return total;
}

/* `warp_totals` is 32 values of shared memory, free until the caller's next barrier.
 * Warp 0's offset is the identity (it has none). */
template <class Op>
__device__ __forceinline__ void block_warp_offsets(typename Op::Type lane_total,
                                                   typename Op::Type *warp_totals,
                                                   typename Op::Type *warp_offset,
                                                   typename Op::Type *block_total) {
  using T = typename Op::Type;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes = warp_lanes();
  const unsigned warps = (blockDim.x + 31u) / 32u;
  const unsigned mask = lane_mask(lanes);
  const T warp_inclusive = warp_inclusive_scan<Op>(lane_total, lane, lanes);
  if (lane == lanes - 1u) warp_totals[warp] = warp_inclusive;
  __syncthreads();
  const T mine = lane < warps ? warp_totals[lane] : Op::identity();
  const T incl = warp_inclusive_scan<Op>(mine, lane, lanes);
  const T excl = shfl_up(mask, incl, 1);
  if (warps <= lanes) {
    *block_total = shfl(mask, incl, (int)warps - 1);
    *warp_offset = shfl(mask, excl, (int)warp);
  } else {
    /* Only a 1-lane last warp of an odd block size (override shapes): read shared
     * memory directly. */
    T total = warp_totals[0];
    for (unsigned w = 1; w < warps; ++w) total = Op::apply(total, warp_totals[w]);
    *block_total = total;
    T offset = warp_totals[0];
    for (unsigned w = 1; w < warp; ++w) offset = Op::apply(offset, warp_totals[w]);
    *warp_offset = offset;
  }
  if (warp == 0) *warp_offset = Op::identity();
}

/* Scans the items in place from `seed` (the value before the warp's first item; the
 * identity when there is none) and returns the warp's running value after its last item
 * (every lane). */
template <class Op, int K, int V>
__device__ __forceinline__ typename Op::Type thread_scan_items(typename Op::Type (&x)[K][V],
                                                               typename Op::Type seed,
                                                               bool exclusive) {
  using T = typename Op::Type;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned lanes = warp_lanes();
  const unsigned mask = lane_mask(lanes);
  T running = seed;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    T vector_total = x[k][0];
#pragma unroll
    for (int e = 1; e < V; ++e) vector_total = Op::apply(vector_total, x[k][e]);
    const T incl = warp_inclusive_scan<Op>(vector_total, lane, lanes);
    const T before = shfl_up(mask, incl, 1);
    T run = lane == 0 ? running : Op::apply(running, before);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (exclusive) {
        const T xe = x[k][e];
        x[k][e] = run;
        run = Op::apply(run, xe);
      } else {
        run = Op::apply(run, x[k][e]);
        x[k][e] = run;
      }
    }
    running = shfl(mask, run, (int)lanes - 1);
  }
  return running;
}

} // namespace xpar_cuda

#endif /* XPAR_DETAIL_CUDA_BLOCK_SCAN_CUH */
