/*
 * Warp and block layers: shuffles and shared-memory combines that are
 * correct for any block size, including blocks that are not a multiple of
 * 32 (the last warp is partial: only its existing lanes are in the shuffle
 * mask, and no shuffle reads a lane that does not exist).
 *
 * Orders are fixed for a given shape, so results are deterministic.
 */
#ifndef XPAR_BACKEND_CUDA_WARP_BLOCK_CUH
#define XPAR_BACKEND_CUDA_WARP_BLOCK_CUH

namespace xpar_cuda {

/* Lanes of the calling thread's warp that exist in this block (1..32). */
__device__ __forceinline__ unsigned warp_lanes() {
  const unsigned first = threadIdx.x & ~31u;
  const unsigned left = blockDim.x - first;
  return left < 32u ? left : 32u;
}

__device__ __forceinline__ unsigned lane_mask(unsigned lanes) {
  return lanes >= 32u ? 0xffffffffu : ((1u << lanes) - 1u);
}

/*
 * Warp reduce of the values of lanes [0, valid) (valid <= lanes), result in
 * lane 0.  Every existing lane of the warp must call it.  The source lane is
 * clamped to the existing lanes; values from lanes >= valid are never used.
 */
template <class Op, class T>
__device__ __forceinline__ T warp_reduce(T v, unsigned lane, unsigned lanes, unsigned valid) {
  const unsigned mask = lane_mask(lanes);
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    if (offset < valid) { /* uniform across the warp */
      const unsigned src = lane + offset < lanes ? lane + offset : lanes - 1;
      const T other = __shfl_sync(mask, v, (int)src);
      if (lane + offset < valid) v = Op::apply(v, other);
    }
  }
  return v;
}

/* Inclusive warp scan over the existing lanes: lane i gets v_0 op ... op v_i. */
template <class Op, class T>
__device__ __forceinline__ T warp_inclusive_scan(T v, unsigned lane, unsigned lanes) {
  const unsigned mask = lane_mask(lanes);
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset <<= 1) {
    if (offset < lanes) { /* uniform across the warp */
      const T earlier = __shfl_up_sync(mask, v, offset);
      if (lane >= offset) v = Op::apply(earlier, v);
    }
  }
  return v;
}

/*
 * Block reduce of the values of threads [0, valid), result in thread 0.
 * Every thread of the block must call it; `scratch` is 32 values of shared
 * memory, reusable after the next __syncthreads().
 * With valid == 1 no operation is applied (thread 0's value comes back
 * unchanged), which keeps cuda-serial bit-identical to the CPU loop.
 */
template <class Op, class T>
__device__ __forceinline__ T block_reduce(T v, unsigned valid, T *scratch) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lanes = warp_lanes();
  const unsigned first = warp * 32u;
  const unsigned warp_valid = valid > first ? (valid - first < 32u ? valid - first : 32u) : 0u;
  if (warp_valid) { /* uniform across the warp */
    v = warp_reduce<Op>(v, lane, lanes, warp_valid);
    if (lane == 0) scratch[warp] = v;
  }
  __syncthreads();
  const unsigned warps_valid = (valid + 31u) / 32u;
  if (warp == 0 && warps_valid > 1) {
    T w = lane < warps_valid ? scratch[lane] : v;
    v = warp_reduce<Op>(w, lane, lanes, warps_valid);
  }
  return v;
}

} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_WARP_BLOCK_CUH */
