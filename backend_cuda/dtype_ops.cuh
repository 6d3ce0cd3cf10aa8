/*
 * Element types and combining operators of the CUDA backend (device and host).
 *
 * The arithmetic here is the CPU backend's, operation for operation, so that
 * results agree across backends:
 *  - integers add and multiply in the unsigned type of the same width and are
 *    cast back: wrap-around modulo 2^bits, never signed-overflow UB;
 *  - floats use the explicitly rounded intrinsics (__fadd_rn, __fmul_rn, ...)
 *    so nvcc never contracts a multiply and an add into an FMA: x86-64 gcc
 *    does not fuse either (the CPU side is built without -ffp-contract=fast);
 *  - min and max are exactly `(x < acc) ? x : acc` and `(x > acc) ? x : acc`,
 *    with the accumulated value as `acc`, as in the CPU serial loops.
 */
#ifndef XPAR_BACKEND_CUDA_DTYPE_OPS_CUH
#define XPAR_BACKEND_CUDA_DTYPE_OPS_CUH

#include <stdint.h>

#include "base/base.h"

namespace xpar_cuda {

/* ---- wrapping integer arithmetic and non-contracted float arithmetic ---- */

template <class T> struct Arith;

#define XPAR_CUDA_INT_ARITH_(T, U)                                                   \
  template <> struct Arith<T> {                                                      \
    static __host__ __device__ __forceinline__ T add(T a, T b) {                     \
      return (T)((U)a + (U)b);                                                       \
    }                                                                                \
    static __host__ __device__ __forceinline__ T mul(T a, T b) {                     \
      return (T)((U)a * (U)b);                                                       \
    }                                                                                \
  };
XPAR_CUDA_INT_ARITH_(int32_t, uint32_t)
XPAR_CUDA_INT_ARITH_(int64_t, uint64_t)
XPAR_CUDA_INT_ARITH_(uint32_t, uint32_t)
XPAR_CUDA_INT_ARITH_(uint64_t, uint64_t)
#undef XPAR_CUDA_INT_ARITH_

template <> struct Arith<float> {
  static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
};
template <> struct Arith<double> {
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
};

/* ---- identities ---------------------------------------------------------- */

template <class T> struct Limits;
template <> struct Limits<int32_t> {
  static __host__ __device__ __forceinline__ int32_t max() { return INT32_MAX; }
  static __host__ __device__ __forceinline__ int32_t lowest() { return INT32_MIN; }
};
template <> struct Limits<int64_t> {
  static __host__ __device__ __forceinline__ int64_t max() { return INT64_MAX; }
  static __host__ __device__ __forceinline__ int64_t lowest() { return INT64_MIN; }
};
template <> struct Limits<uint32_t> {
  static __host__ __device__ __forceinline__ uint32_t max() { return UINT32_MAX; }
  static __host__ __device__ __forceinline__ uint32_t lowest() { return 0u; }
};
template <> struct Limits<uint64_t> {
  static __host__ __device__ __forceinline__ uint64_t max() { return UINT64_MAX; }
  static __host__ __device__ __forceinline__ uint64_t lowest() { return 0u; }
};
/* Min and max of floats start from the infinities, as the CPU backend does. */
template <> struct Limits<float> {
  static __host__ __device__ __forceinline__ float max() { return __builtin_huge_valf(); }
  static __host__ __device__ __forceinline__ float lowest() { return -__builtin_huge_valf(); }
};
template <> struct Limits<double> {
  static __host__ __device__ __forceinline__ double max() { return __builtin_huge_val(); }
  static __host__ __device__ __forceinline__ double lowest() { return -__builtin_huge_val(); }
};

/* ---- combining operators: apply(acc, x), acc being the earlier value ---- */

template <class T> struct SumOp {
  using Type = T;
  static __host__ __device__ __forceinline__ T identity() { return T(0); }
  static __device__ __forceinline__ T apply(T acc, T x) { return Arith<T>::add(acc, x); }
};
template <class T> struct MinOp {
  using Type = T;
  static __host__ __device__ __forceinline__ T identity() { return Limits<T>::max(); }
  static __device__ __forceinline__ T apply(T acc, T x) { return (x < acc) ? x : acc; }
};
template <class T> struct MaxOp {
  using Type = T;
  static __host__ __device__ __forceinline__ T identity() { return Limits<T>::lowest(); }
  static __device__ __forceinline__ T apply(T acc, T x) { return (x > acc) ? x : acc; }
};

/* The accumulator type of xpar_reduce_sum_wide (xpar__wide_dtype's C type). */
template <class T> struct Wide { using Type = T; };
template <> struct Wide<int32_t> { using Type = int64_t; };
template <> struct Wide<uint32_t> { using Type = uint64_t; };
template <> struct Wide<float> { using Type = double; };

/*
 * Call f(ctype{}) for the C type of a runtime dtype.  The cases come from
 * XPAR_DTYPE_MAP, so a new dtype is one line in xpar.h (plus its Arith and
 * Limits above); every template the lambda uses is instantiated from here.
 */
template <class F> xpar_status with_dtype(xpar_dtype t, F &&f) {
  switch (t) {
#define XPAR_CUDA_DTYPE_CASE_(e, ctype, name, size) \
  case XPAR_##e:                                    \
    return f(ctype{});
    XPAR_DTYPE_MAP(XPAR_CUDA_DTYPE_CASE_)
#undef XPAR_CUDA_DTYPE_CASE_
    default:
      return xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown dtype %d", (int)t);
  }
}

/* Call f(Op{}) for a runtime reduction operator over T. */
template <class T, class F> xpar_status with_op(xpar_reduction op, F &&f) {
  switch (op) {
    case XPAR_SUM: return f(SumOp<T>{});
    case XPAR_MIN: return f(MinOp<T>{});
    case XPAR_MAX: return f(MaxOp<T>{});
    default: return xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown reduction %d", (int)op);
  }
}

} // namespace xpar_cuda

#endif /* XPAR_BACKEND_CUDA_DTYPE_OPS_CUH */
