/*
 * CUB as the application's GPU alternative in `xpar-bench regret`
 * (bench/bench_regret.c): one synchronous reduce-sum or inclusive scan-sum,
 * written the way an application that skips xpar would write it.
 *
 *  - device data: CUB on the arrays; a reduce writes its result into a
 *    mapped pinned scalar (no cudaMemcpy: the cheapest way to get one value
 *    to the host), then one stream synchronize;
 *  - host data (pageable, pinned, or the host copy of an xpar-mapped array):
 *    cudaMemcpyAsync in, CUB, cudaMemcpyAsync out (the scan's array), one
 *    synchronize.  The copies are part of the call, as they are for xpar's
 *    CUDA tier on host data.
 *
 * Device buffers, CUB's temporary storage and the stream are cached between
 * calls (grown as needed), as an application reusing its buffers does.
 * Integers are summed in the unsigned type of their width: the same bits as
 * xpar's wrapping sums, without signed overflow in device code.
 *
 * Compiled into xpar-bench (a C program) only when the CUDA backend is built;
 * the interface is the two extern "C" functions declared in bench/bench.h.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

extern "C" {
#include "bench.h"
}

namespace {

struct cub_cache {
  cudaStream_t stream = nullptr;
  void *d_in = nullptr, *d_out = nullptr, *d_temp = nullptr;
  size_t in_bytes = 0, out_bytes = 0, temp_bytes = 0;
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
bool run(xpar_op op, const void *x, void *out, void *result, size_t n, bool on_device, char *why,
         size_t why_size) {
  if (!setup(why, why_size)) return false;
  const size_t bytes = n * sizeof(T);
  const T *in = static_cast<const T *>(x);
  if (!on_device) {
    if (!grow(&cache.d_in, &cache.in_bytes, bytes, why, why_size)) return false;
    cudaError_t e = cudaMemcpyAsync(cache.d_in, x, bytes, cudaMemcpyHostToDevice, cache.stream);
    if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync H2D", why, why_size);
    in = static_cast<const T *>(cache.d_in);
  }
  size_t temp = 0;
  cudaError_t e;
  if (op == XPAR_OP_REDUCE) {
    T *res = static_cast<T *>(cache.d_result);
    e = cub::DeviceReduce::Sum(nullptr, temp, in, res, (int64_t)n, cache.stream);
    if (e != cudaSuccess) return fail(e, "cub::DeviceReduce::Sum (size)", why, why_size);
    if (!grow(&cache.d_temp, &cache.temp_bytes, temp, why, why_size)) return false;
    e = cub::DeviceReduce::Sum(cache.d_temp, temp, in, res, (int64_t)n, cache.stream);
    if (e != cudaSuccess) return fail(e, "cub::DeviceReduce::Sum", why, why_size);
    e = cudaStreamSynchronize(cache.stream);
    if (e != cudaSuccess) return fail(e, "cudaStreamSynchronize", why, why_size);
    T v = *static_cast<volatile T *>(cache.h_result);
    std::memcpy(result, &v, sizeof v); /* result: a byte buffer, maybe unaligned */
    return true;
  }
  T *dst = static_cast<T *>(out);
  if (!on_device) {
    if (!grow(&cache.d_out, &cache.out_bytes, bytes, why, why_size)) return false;
    dst = static_cast<T *>(cache.d_out);
  }
  e = cub::DeviceScan::InclusiveSum(nullptr, temp, in, dst, (int64_t)n, cache.stream);
  if (e != cudaSuccess) return fail(e, "cub::DeviceScan::InclusiveSum (size)", why, why_size);
  if (!grow(&cache.d_temp, &cache.temp_bytes, temp, why, why_size)) return false;
  e = cub::DeviceScan::InclusiveSum(cache.d_temp, temp, in, dst, (int64_t)n, cache.stream);
  if (e != cudaSuccess) return fail(e, "cub::DeviceScan::InclusiveSum", why, why_size);
  if (!on_device) {
    e = cudaMemcpyAsync(out, dst, bytes, cudaMemcpyDeviceToHost, cache.stream);
    if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync D2H", why, why_size);
  }
  e = cudaStreamSynchronize(cache.stream);
  if (e != cudaSuccess) return fail(e, "cudaStreamSynchronize", why, why_size);
  return true;
}

}  // namespace

extern "C" int bench_cub_call(xpar_op op, xpar_dtype t, const void *x, void *out, void *result,
                              size_t n, int on_device, char *why, size_t why_size) {
  if (op != XPAR_OP_REDUCE && op != XPAR_OP_SCAN) {
    std::snprintf(why, why_size, "CUB alternative: only reduce and scan");
    return 0;
  }
  bool dev = on_device != 0;
  switch (t) {
    case XPAR_INT32:
    case XPAR_UINT32: return run<uint32_t>(op, x, out, result, n, dev, why, why_size);
    case XPAR_INT64:
    case XPAR_UINT64: return run<unsigned long long>(op, x, out, result, n, dev, why, why_size);
    case XPAR_FLOAT: return run<float>(op, x, out, result, n, dev, why, why_size);
    case XPAR_DOUBLE: return run<double>(op, x, out, result, n, dev, why, why_size);
    default: break;
  }
  std::snprintf(why, why_size, "CUB alternative: dtype %d not supported", (int)t);
  return 0;
}

extern "C" void bench_cub_release(void) {
  if (cache.stream) cudaStreamSynchronize(cache.stream);
  cudaFree(cache.d_in);
  cudaFree(cache.d_out);
  cudaFree(cache.d_temp);
  if (cache.h_result) cudaFreeHost(cache.h_result);
  if (cache.stream) cudaStreamDestroy(cache.stream);
  cache = cub_cache();
}
