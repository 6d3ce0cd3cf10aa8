/*
 * Warp and block layers: shuffles and shared-memory combines that are
 * correct for any block size, including blocks that are not a multiple of
 * 32 (the last warp is partial: only its existing lanes are in the shuffle
 * mask, and no shuffle reads a lane that does not exist).
 *
 * Orders are fixed for a given shape, so results are deterministic.  The
 * scans (shuffle-up) keep lane order; warp_reduce / block_reduce do not (their
 * halving tree joins lane l with l + 16, then l + 8, ...: fine for the built-in
 * sum, min and max, which commute); warp_reduce_ordered does, for operators
 * that need not commute (xpar/xpar_operator.cuh).
 *
 * Installed (xpar/detail/): the built-in kernels of backend_cuda/ and the
 * application's operators (xpar/xpar_operator.cuh, compiled in the
 * application's translation unit) run this same code.  Not a public API.
 */
#ifndef XPAR_DETAIL_CUDA_WARP_BLOCK_CUH
#define XPAR_DETAIL_CUDA_WARP_BLOCK_CUH

#include <string.h>
#include <type_traits>

namespace xpar_cuda {

/*
 * Shuffles of any trivially copyable T: the hardware's own for arithmetic types
 * (the built-in ops), 4-byte word by word for others (the application's
 * operators' structs: __shfl_sync has no overload for them).
 */
template <class T> struct ShuffleWords {
  static constexpr unsigned count = (unsigned)((sizeof(T) + 3) / 4);
  unsigned w[count];
};
template <class T, class F> __device__ __forceinline__ T shuffle_words(T v, F shuffle) {
  if constexpr (std::is_arithmetic<T>::value) {
    return shuffle(v);
  } else {
    ShuffleWords<T> s;
    memset(&s, 0, sizeof s);
    memcpy(&s, &v, sizeof v);
#pragma unroll
    for (unsigned k = 0; k < ShuffleWords<T>::count; ++k) s.w[k] = shuffle(s.w[k]);
    memcpy(&v, &s, sizeof v);
    return v;
  }
}
template <class T> __device__ __forceinline__ T shfl(unsigned mask, T v, int src) {
  return shuffle_words(v, [&](auto w) { return __shfl_sync(mask, w, src); });
}
template <class T> __device__ __forceinline__ T shfl_up(unsigned mask, T v, unsigned delta) {
  return shuffle_words(v, [&](auto w) { return __shfl_up_sync(mask, w, delta); });
}

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
      const T other = shfl(mask, v, (int)src);
      if (lane + offset < valid) v = Op::apply(v, other);
    }
  }
  return v;
}

/*
 * Warp reduce of lanes [0, valid) in lane order (REVERSE: from lane valid - 1
 * down to lane 0), result in lane 0, for operators that need not commute: a
 * tree of doubling offsets in which lane l, a multiple of 2 * offset, joins its
 * segment [l, l + offset) with the adjacent [l + offset, l + 2 offset).  Every
 * existing lane must call it; same shuffle count as warp_reduce.
 */
template <class Op, bool REVERSE = false, class T>
__device__ __forceinline__ T warp_reduce_ordered(T v, unsigned lane, unsigned lanes,
                                                 unsigned valid) {
  const unsigned mask = lane_mask(lanes);
#pragma unroll
  for (unsigned offset = 1; offset < 32; offset <<= 1) {
    if (offset < valid) { /* uniform across the warp */
      const unsigned src = lane + offset < lanes ? lane + offset : lanes - 1;
      const T other = shfl(mask, v, (int)src);
      if ((lane & (2 * offset - 1)) == 0 && lane + offset < valid)
        v = REVERSE ? Op::apply(other, v) : Op::apply(v, other);
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
      const T earlier = shfl_up(mask, v, offset);
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

#endif /* XPAR_DETAIL_CUDA_WARP_BLOCK_CUH */
