/*
 * Thread layer: one thread's memory accesses.  16-byte vector loads and
 * stores (LDG.E.128 / STG.E.128) for aligned bodies, cache-global loads and
 * stores for values that other blocks exchange, and the host-side split of
 * an array into a scalar head, an aligned vector body and a scalar tail.
 */
#ifndef XPAR_BACKEND_CUDA_THREAD_LOAD_CUH
#define XPAR_BACKEND_CUDA_THREAD_LOAD_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/backend.h"

namespace xpar_cuda {

/* 16 bytes seen either as one vector register quad or as elements. */
template <class T> union Pack16 {
  static constexpr int count = 16 / (int)sizeof(T);
  int4 raw;
  T e[16 / sizeof(T)];
};

/* Read-only data (never written during the kernel), read once (reduce, dot): the
 * non-coherent path, no L1 line (L1::no_allocate: nothing re-reads it) and 256-byte L2
 * fetches (L2::256B: the sectors after the one asked for are on their way before the
 * warp's next load asks).  Against __ldg in the same kernel (H100 host,
 * 2026-11-25, events, x CUB): int32 2^26 1.086 vs 0.999, 2^28 1.010 vs 0.989, 2^30 0.996
 * vs 0.991; double 2^26 1.044 vs 1.001, 2^28 1.011 vs 1.001. */
__device__ __forceinline__ int4 load16_streaming(const void *p) {
  int4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}
/* The same data when it may still sit in L2 from its last use (it fits there): the
 * streaming hints cost 12-23 % on such reduces (H100, regret-style, device data reduced
 * again and again: int32 / float 2^23, double 2^22 at 1.12-1.23 x CUB with them, 0.99-1.02
 * through __ldg; 2026-11-25), so the kernel reads through __ldg there.
 * `streaming` is uniform across the grid. */
__device__ __forceinline__ int4 load16_readonly(const void *p, bool streaming) {
  return streaming ? load16_streaming(p) : __ldg(reinterpret_cast<const int4 *>(p));
}
/* A shared-memory address as the 32-bit value that mbarrier and bulk-copy
 * instructions take. */
__device__ __forceinline__ unsigned smem_address(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
/* Data the same kernel may overwrite (in-place scan, axpy with x == y). */
__device__ __forceinline__ int4 load16(const void *p) { return *reinterpret_cast<const int4 *>(p); }

/*
 * Store 16 bytes of elements as ONE vector store.  Written as PTX because
 * nvcc splits a union-punned int4 store into four 32-bit stores.
 */
template <class T> __device__ __forceinline__ void store16(T *p, const T (&e)[16 / sizeof(T)]) {
  if constexpr (sizeof(T) == 4) {
    unsigned int u[4];
    memcpy(u, e, 16);
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u[0]), "r"(u[1]),
                 "r"(u[2]), "r"(u[3])
                 : "memory");
  } else {
    static_assert(sizeof(T) == 8, "4- or 8-byte elements only");
    unsigned long long u[2];
    memcpy(u, e, 16);
    asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(u[0]), "l"(u[1]) : "memory");
  }
}

/* L2-only (cache-global) accesses of values exchanged between blocks: a
 * stale L1 line must never be read after the exchange's fence. */
template <class T> __device__ __forceinline__ T load_cg(const T *p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values only");
  T v;
  if constexpr (sizeof(T) == 4) {
    unsigned int u = __ldcg(reinterpret_cast<const unsigned int *>(p));
    memcpy(&v, &u, 4);
  } else {
    unsigned long long u = __ldcg(reinterpret_cast<const unsigned long long *>(p));
    memcpy(&v, &u, 8);
  }
  return v;
}
template <class T> __device__ __forceinline__ void store_cg(T *p, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values only");
  if constexpr (sizeof(T) == 4) {
    unsigned int u;
    memcpy(&u, &v, 4);
    __stcg(reinterpret_cast<unsigned int *>(p), u);
  } else {
    unsigned long long u;
    memcpy(&u, &v, 8);
    __stcg(reinterpret_cast<unsigned long long *>(p), u);
  }
}

/*
 * Tile-status flags: a release store publishes a flag after the value it
 * announces (the release is the fence between the two: every earlier write
 * of this thread is visible GPU-wide before the flag is); an acquire load
 * reads a flag such that later loads of the value cannot see older data.
 * GPU scope, not the sequentially consistent __threadfence(): on H100 the
 * scan spent most of its time in MEMBAR.SC.GPU (740 GB/s at 2^30, 2026-11-22).
 *
 * Polling many flags at once: relaxed loads (independent, all in flight
 * together), then one acquire fence once the flags are seen. */
__device__ __forceinline__ uint32_t load_relaxed_gpu(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void fence_acquire_gpu() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
__device__ __forceinline__ void store_release_gpu(uint32_t *p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/*
 * How an array of n elements of T at p splits for vector access: `head`
 * scalar elements up to the first 16-byte boundary (0..3 for 4-byte types),
 * then `vectors` whole 16-byte vectors; the rest is the scalar tail.
 */
struct VectorSplit {
  size_t head;
  size_t vectors;
};

template <class T> inline VectorSplit split_for_vectors(const void *p, size_t n) {
  const size_t misalign = (size_t)((uintptr_t)p % 16);
  size_t head = misalign ? (16 - misalign) / sizeof(T) : 0;
  if (head > n) head = n;
  return {head, (n - head) / (16 / sizeof(T))};
}

/* The same split when several arrays are accessed at one index: vectors only
 * when every array meets the 16-byte boundary at the same element; else the
 * whole range is the scalar tail. */
template <class T> inline VectorSplit split_for_vectors(const void *p, const void *q, size_t n) {
  if (((uintptr_t)p - (uintptr_t)q) % 16 != 0) return {0, 0};
  return split_for_vectors<T>(p, n);
}

inline int aligned_to(const void *p, size_t bytes) { return (uintptr_t)p % bytes == 0; }

/* The backend's own guard on an array it is handed (the API refuses misaligned arrays
 * first; dispatch's staging buffers are aligned): XPAR_ERR_INVALID_ARGUMENT, nothing
 * launched. */
template <class T> xpar_status check_element_alignment(const void *p, const char *what) {
  if (!aligned_to(p, sizeof(T)))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "%s pointer %p is not aligned to its %zu-byte elements", what, p, sizeof(T));
  return XPAR_OK;
}

} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_THREAD_LOAD_CUH */
