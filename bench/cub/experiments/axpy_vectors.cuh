/* The experiments' axpy over 16-byte vectors (elementwise_shape.cu, elementwise_sync_shape.cu):
 * the loop body of the library's elementwise kernel (backend_cuda/device_elementwise.cu),
 * U vectors per operand per thread in flight, plain or streaming (st.global.cs) stores. */
#ifndef XPAR_EXPERIMENTS_AXPY_VECTORS_CUH
#define XPAR_EXPERIMENTS_AXPY_VECTORS_CUH

#include <cuda_runtime.h>

#include <cstring>

template <class T> struct Axpy {
  T a;
  __host__ __device__ T operator()(T x, T y) const { return a * x + y; }
};

template <bool CS> __device__ __forceinline__ void st16(void *p, int4 v) {
  if constexpr (CS)
    asm volatile("st.global.cs.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
  else
    asm volatile("st.global.v4.s32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

template <class T> __device__ __forceinline__ int4 apply(const Axpy<T> &f, int4 x, int4 y) {
  constexpr int per = 16 / sizeof(T);
  T xe[per], ye[per], r[per];
  memcpy(xe, &x, 16);
  memcpy(ye, &y, 16);
#pragma unroll
  for (int e = 0; e < per; ++e) r[e] = f(xe[e], ye[e]);
  int4 o;
  memcpy(&o, r, 16);
  return o;
}

/* y = f(x, y) over `vectors` 16-byte vectors, a grid-stride loop. */
template <class T, int U, bool CS>
__device__ __forceinline__ void axpy_vectors(Axpy<T> f, const int4 *x, int4 *y, size_t vectors) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; v + (U - 1) * stride < vectors; v += U * stride) {
    int4 a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      a[u] = x[v + u * stride];
      b[u] = y[v + u * stride];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) st16<CS>(&y[v + u * stride], apply(f, a[u], b[u]));
  }
  for (; v < vectors; v += stride) st16<CS>(&y[v], apply(f, x[v], y[v]));
}

#endif
