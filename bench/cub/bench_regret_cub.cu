/*
 * CUB as the application's GPU alternative in `xpar-devbench regret`
 * (bench/bench_regret.c): one synchronous call of each op, written the way an
 * application that skips xpar would write it with CUB:
 *
 *   reduce  cub::DeviceReduce::Sum
 *   scan    cub::DeviceScan::InclusiveSum
 *   axpy    cub::DeviceTransform::Transform((x, y) -> a x + y) in place on y
 *   add     cub::DeviceTransform::Transform((x, y) -> x + y)
 *   fill    cub::DeviceFor::Bulk (out[i] = value)
 *   dot     cub::DeviceReduce::TransformReduce over the indices (x[i] y[i], +)
 *
 *  - device data: CUB on the arrays; a reduce or dot writes its result into a
 *    mapped pinned scalar (no cudaMemcpy: the cheapest way to get one value
 *    to the host), then one stream synchronize;
 *  - host data (pageable, pinned, or the host copy of an xpar-mapped array):
 *    cudaMemcpyAsync of the inputs in, CUB, cudaMemcpyAsync of the output
 *    array out, one synchronize.  The copies are part of the call, as they
 *    are for xpar's CUDA tier on host data.
 *
 * Device buffers, CUB's temporary storage and the stream are cached between
 * calls (grown as needed), as an application reusing its buffers does.
 * Integers are computed in the unsigned type of their width: the same bits as
 * xpar's wrapping arithmetic, without signed overflow in device code.
 *
 * Compiled into xpar-devbench (a C program) only when the CUDA backend is built;
 * the interface is the two extern "C" functions declared in bench/bench.h.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cub/device/device_for.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/functional>
#include <cuda/std/tuple>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

extern "C" {
#include "bench.h"
}

namespace {

struct cub_cache {
  cudaStream_t stream = nullptr;
  void *d_in = nullptr, *d_y = nullptr, *d_out = nullptr, *d_temp = nullptr;
  size_t in_bytes = 0, y_bytes = 0, out_bytes = 0, temp_bytes = 0;
  void *h_result = nullptr; /* mapped pinned scalar (8 bytes) */
  void *d_result = nullptr; /* its device address */
};
cub_cache cache;

bool fail(cudaError_t e, const char *what, char *why, size_t why_size) {
  std::snprintf(why, why_size, "%s: %s", what, cudaGetErrorName(e));
  (void)cudaGetLastError();
  return false;
}

bool grow(void **p, size_t *have, size_t want, char *why, size_t why_size) {
  if (*have >= want) return true;
  if (*p) cudaFree(*p);
  *p = nullptr;
  *have = 0;
  cudaError_t e = cudaMalloc(p, want ? want : 1);
  if (e != cudaSuccess) return fail(e, "cudaMalloc", why, why_size);
  *have = want;
  return true;
}

bool setup(char *why, size_t why_size) {
  if (cache.stream) return true;
  cudaError_t e = cudaStreamCreateWithFlags(&cache.stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) return fail(e, "cudaStreamCreate", why, why_size);
  e = cudaHostAlloc(&cache.h_result, 8, cudaHostAllocMapped);
  if (e != cudaSuccess) return fail(e, "cudaHostAlloc", why, why_size);
  e = cudaHostGetDevicePointer(&cache.d_result, cache.h_result, 0);
  if (e != cudaSuccess) return fail(e, "cudaHostGetDevicePointer", why, why_size);
  return true;
}

template <class T>
struct axpy_op {
  T a;
  __device__ T operator()(T x, T y) const { return a * x + y; }
};
template <class T>
struct add_op {
  __device__ T operator()(T x, T y) const { return x + y; }
};
template <class T>
struct fill_op {
  T *out;
  T v;
  __device__ void operator()(int64_t i) const { out[i] = v; }
};
template <class T>
struct product_at {
  const T *x, *y;
  __device__ T operator()(int64_t i) const { return x[i] * y[i]; }
};

/* Host data: the array copied into the cached device buffer *buf on the
 * stream; device data: the array itself. */
template <class T>
bool device_array(const void *host_or_dev, bool on_device, bool copy_in, void **buf, size_t *have,
                  size_t bytes, T **out, char *why, size_t why_size) {
  if (on_device) {
    *out = static_cast<T *>(const_cast<void *>(host_or_dev));
    return true;
  }
  if (!grow(buf, have, bytes, why, why_size)) return false;
  if (copy_in) {
    cudaError_t e = cudaMemcpyAsync(*buf, host_or_dev, bytes, cudaMemcpyHostToDevice, cache.stream);
    if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync H2D", why, why_size);
  }
  *out = static_cast<T *>(*buf);
  return true;
}

/* CUB's two-phase call: ask the temporary storage's size, grow the cached
 * buffer, run.  *e: CUB's status; false only when the buffer could not grow. */
template <class Call> bool with_temp(cudaError_t *e, char *why, size_t why_size, Call &&call) {
  size_t bytes = 0;
  *e = call(nullptr, bytes);
  if (*e != cudaSuccess) return true;
  if (!grow(&cache.d_temp, &cache.temp_bytes, bytes, why, why_size)) return false;
  *e = call(cache.d_temp, bytes);
  return true;
}

template <class T>
bool run(bench_case *c, bool on_device, char *why, size_t why_size) {
  if (!setup(why, why_size)) return false;
  const xpar_op op = c->op;
  const size_t n = c->n, bytes = n * sizeof(T);
  const bool reads_x = bench_op_reads_x(op), reads_y = bench_op_reads_y(op);
  const bool writes_out = bench_op_writes_out(op);
  T *x = nullptr, *y = nullptr, *out = nullptr;
  if (reads_x && !device_array<T>(c->x, on_device, true, &cache.d_in, &cache.in_bytes, bytes, &x,
                                  why, why_size))
    return false;
  if (reads_y && !device_array<T>(c->y, on_device, true, &cache.d_y, &cache.y_bytes, bytes, &y,
                                  why, why_size))
    return false;
  if (writes_out && !device_array<T>(c->out, on_device, false, &cache.d_out, &cache.out_bytes,
                                     bytes, &out, why, why_size))
    return false;
  T *res = static_cast<T *>(cache.d_result);
  cudaError_t e = cudaSuccess;
  const char *what = "";
  switch (op) {
    case XPAR_OP_REDUCE:
      what = "cub::DeviceReduce::Sum";
      if (!with_temp(&e, why, why_size, [&](void *t, size_t &b) {
            return cub::DeviceReduce::Sum(t, b, x, res, (int64_t)n, cache.stream);
          }))
        return false;
      break;
    case XPAR_OP_SCAN:
      what = "cub::DeviceScan::InclusiveSum";
      if (!with_temp(&e, why, why_size, [&](void *t, size_t &b) {
            return cub::DeviceScan::InclusiveSum(t, b, x, out, (int64_t)n, cache.stream);
          }))
        return false;
      break;
    case XPAR_OP_AXPY: {
      what = "cub::DeviceTransform::Transform (axpy)";
      T a;
      std::memcpy(&a, c->scalar, sizeof a);
      e = cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), y, (int64_t)n,
                                          axpy_op<T>{a}, cache.stream);
      break;
    }
    case XPAR_OP_ADD:
      what = "cub::DeviceTransform::Transform (add)";
      e = cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), out, (int64_t)n,
                                          add_op<T>{}, cache.stream);
      break;
    case XPAR_OP_FILL: {
      what = "cub::DeviceFor::Bulk (fill)";
      T v;
      std::memcpy(&v, c->scalar, sizeof v);
      e = cub::DeviceFor::Bulk((int64_t)n, fill_op<T>{out, v}, cache.stream);
      break;
    }
    case XPAR_OP_DOT: {
      what = "cub::DeviceReduce::TransformReduce (dot)";
      thrust::counting_iterator<int64_t> idx(0);
      if (!with_temp(&e, why, why_size, [&](void *t, size_t &b) {
            return cub::DeviceReduce::TransformReduce(t, b, idx, res, (int64_t)n,
                                                      cuda::std::plus<T>{}, product_at<T>{x, y},
                                                      T(0), cache.stream);
          }))
        return false;
      break;
    }
    default:
      std::snprintf(why, why_size, "CUB alternative: op %d not supported", (int)op);
      return false;
  }
  if (e != cudaSuccess) return fail(e, what, why, why_size);
  if (!on_device) { /* the output array back to the host */
    void *dst = bench_case_output(c);
    const void *src = op == XPAR_OP_AXPY ? static_cast<void *>(y) : static_cast<void *>(out);
    if (dst) {
      e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cache.stream);
      if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync D2H", why, why_size);
    }
  }
  e = cudaStreamSynchronize(cache.stream);
  if (e != cudaSuccess) return fail(e, "cudaStreamSynchronize", why, why_size);
  if (op == XPAR_OP_REDUCE || op == XPAR_OP_DOT) {
    T v = *static_cast<volatile T *>(cache.h_result);
    std::memcpy(c->result, &v, sizeof v); /* result: a byte buffer, maybe unaligned */
  }
  return true;
}

}  // namespace

extern "C" int bench_cub_call(bench_case *c, int on_device, char *why, size_t why_size) {
  bool dev = on_device != 0;
  switch (c->dtype) {
    case XPAR_INT32:
    case XPAR_UINT32: return run<uint32_t>(c, dev, why, why_size);
    case XPAR_INT64:
    case XPAR_UINT64: return run<unsigned long long>(c, dev, why, why_size);
    case XPAR_FLOAT: return run<float>(c, dev, why, why_size);
    case XPAR_DOUBLE: return run<double>(c, dev, why, why_size);
    default: break;
  }
  std::snprintf(why, why_size, "CUB alternative: dtype %d not supported", (int)c->dtype);
  return 0;
}

extern "C" void bench_cub_release(void) {
  if (cache.stream) cudaStreamSynchronize(cache.stream);
  cudaFree(cache.d_in);
  cudaFree(cache.d_y);
  cudaFree(cache.d_out);
  cudaFree(cache.d_temp);
  if (cache.h_result) cudaFreeHost(cache.h_result);
  if (cache.stream) cudaStreamDestroy(cache.stream);
  cache = cub_cache();
}
