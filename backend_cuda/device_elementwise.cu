/*
 * Device layer: axpy (y = alpha * x + y), add (z = x + y), fill (out = v).
 *
 * Grid-stride loops; 16-byte vectors (several per thread in flight) when
 * every array meets the 16-byte boundary at the same element, a scalar head
 * and tail around them, and an all-scalar loop otherwise.  Each element is
 * read and written by one thread only, so x == y (axpy) and z == x or y
 * (add) are safe.  Arithmetic is the CPU's: wrapping integers, no FMA.
 */
#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "dtype_ops.cuh"
#include "launch_shape.cuh"
#include "thread_load.cuh"

namespace xpar_cuda {
namespace {

struct ElementwiseParams {
  size_t n;
  size_t head;
  size_t vectors;
  DoneSignal done; /* a synchronous call's (done_signal.cuh) */
};

template <class T> struct Axpy {
  T alpha;
  static constexpr int inputs = 2; /* x, y */
  __device__ __forceinline__ T operator()(T x, T y) const {
    return Arith<T>::add(Arith<T>::mul(alpha, x), y);
  }
};
template <class T> struct Add {
  static constexpr int inputs = 2;
  __device__ __forceinline__ T operator()(T x, T y) const { return Arith<T>::add(x, y); }
};
template <class T> struct Fill {
  T value;
  static constexpr int inputs = 0;
  __device__ __forceinline__ T operator()(T, T) const { return value; }
};

/* out[i] = f(a[i], b[i]) for i < n; a and b unread when F takes no inputs. */
template <class T, class F>
__global__ void __launch_bounds__(tuning::max_block)
    elementwise_kernel(F f, const T *a, const T *b, T *out, ElementwiseParams p) {
  constexpr int per_vector = Pack16<T>::count;
  constexpr unsigned loads = tuning::elementwise_vectors_per_thread;
  const size_t thread = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;

  for (size_t i = thread; i < p.head; i += stride)
    out[i] = F::inputs ? f(a[i], b[i]) : f(T(), T());

  const T *va = a + p.head;
  const T *vb = b + p.head;
  T *vout = out + p.head;
  size_t v = thread;
  for (; v + (loads - 1) * stride < p.vectors; v += loads * stride) {
    Pack16<T> x[loads], y[loads];
    if constexpr (F::inputs > 0) {
#pragma unroll
      for (unsigned u = 0; u < loads; ++u) {
        x[u].raw = load16(va + (v + u * stride) * per_vector);
        y[u].raw = load16(vb + (v + u * stride) * per_vector);
      }
    }
#pragma unroll
    for (unsigned u = 0; u < loads; ++u) {
      T r[per_vector];
#pragma unroll
      for (int e = 0; e < per_vector; ++e)
        r[e] = F::inputs ? f(x[u].e[e], y[u].e[e]) : f(T(), T());
      store16<T>(vout + (v + u * stride) * per_vector, r);
    }
  }
  for (; v < p.vectors; v += stride) {
    Pack16<T> x, y;
    T r[per_vector];
    if constexpr (F::inputs > 0) {
      x.raw = load16(va + v * per_vector);
      y.raw = load16(vb + v * per_vector);
    }
#pragma unroll
    for (int e = 0; e < per_vector; ++e) r[e] = F::inputs ? f(x.e[e], y.e[e]) : f(T(), T());
    store16<T>(vout + v * per_vector, r);
  }

  for (size_t i = p.head + p.vectors * per_vector + thread; i < p.n; i += stride)
    out[i] = F::inputs ? f(a[i], b[i]) : f(T(), T());
  signal_block_done(p.done);
}

template <class T, class F>
xpar_status run_elementwise(const xpar__exec *ex, const F &f, const T *a, const T *b, T *out,
                            size_t n, const char *name) {
  xpar__cuda_state *st = ex->cuda;
  /* No capture check: a nowait call may be captured into a CUDA graph, the kernel keeps
   * nothing between calls (GraphScratch, cuda_state.cuh). */
  XPAR__FORWARD(xpar__cuda_begin(st, name));
  if (n == 0) return XPAR_OK;
  XPAR__FORWARD(check_element_alignment<T>(out, name));
  if (F::inputs) {
    XPAR__FORWARD(check_element_alignment<T>(a, name));
    XPAR__FORWARD(check_element_alignment<T>(b, name));
  }
  VectorSplit split = split_for_vectors<T>(out, n);
  if (F::inputs) {
    const VectorSplit sa = split_for_vectors<T>(out, a, n);
    const VectorSplit sb = split_for_vectors<T>(out, b, n);
    if (sa.vectors == 0 || sb.vectors == 0) split = {0, 0};
  }
  ElementwiseParams p{n, split.head, split.vectors, DoneSignal{}};
  XPAR__FORWARD(xpar__cuda_done_signal(st, !ex->nowait && n <= tuning::flag_wait_max_n, &p.done));

  auto kernel = elementwise_kernel<T, F>;
  /* Arrays that fit L2 from their last use: one wave of resident blocks (launch_shape.cuh).
   * Each distinct array counts once (axpy writes y in place: two arrays, as add with
   * z == x). */
  int arrays = 1;
  if (F::inputs) arrays += (a != out) + (b != out && b != a);
  const double footprint = (double)n * sizeof(T) * arrays;
  const bool cached =
      st->l2_bytes && footprint <= tuning::elementwise_one_wave_max_l2 * (double)st->l2_bytes;
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(
      ex, st, cached ? XPAR_CUDA_FAMILY_ELEMENTWISE_CACHED : XPAR_CUDA_FAMILY_ELEMENTWISE,
      (const void *)kernel, n,
      tuning::elementwise_vectors_per_thread * (unsigned)Pack16<T>::count, &shape));
  /* The driver's launch (xpar__cuda_launch with a handle): a queued call returns 0.1-0.3 us
   * sooner (H100 host, 2026-11-25); a synchronous call's end-to-end time did
   * not resolve a difference. */
  static const void *const handle = kernel_handle((const void *)kernel);
  F f_arg = f;
  const T *a_arg = a, *b_arg = b;
  T *out_arg = out;
  void *args[] = {&f_arg, &a_arg, &b_arg, &out_arg, &p};
  XPAR__FORWARD(xpar__cuda_launch(st, (const void *)kernel, handle, shape.grid, shape.block, 0, args,
                                  name));
  if (ex->nowait) return XPAR_OK;
  return xpar__cuda_finish(st, p.done, name);
}

} // namespace
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha,
                                       const void *x, void *y, size_t n) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    T a{};
    if (n) memcpy(&a, alpha, sizeof a); /* n = 0 may pass NULL (xpar.h) */
    return run_elementwise<T>(ex, Axpy<T>{a}, static_cast<const T *>(x),
                              static_cast<const T *>(y), static_cast<T *>(y), n, "axpy");
  });
}

extern "C" xpar_status xpar__cuda_add(const xpar__exec *ex, xpar_dtype t, const void *x,
                                      const void *y, void *z, size_t n) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    return run_elementwise<T>(ex, Add<T>{}, static_cast<const T *>(x), static_cast<const T *>(y),
                              static_cast<T *>(z), n, "add");
  });
}

extern "C" xpar_status xpar__cuda_fill(const xpar__exec *ex, xpar_dtype t, const void *value,
                                       void *out, size_t n) {
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    T v{};
    if (n) memcpy(&v, value, sizeof v); /* n = 0 may pass NULL (xpar.h) */
    return run_elementwise<T>(ex, Fill<T>{v}, (const T *)nullptr, (const T *)nullptr,
                              static_cast<T *>(out), n, "fill");
  });
}
