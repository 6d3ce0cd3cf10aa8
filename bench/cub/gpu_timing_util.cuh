/*
 * xpar-gpu-bench: timing helpers shared by its benches (random inputs, medians,
 * CUDA-event medians).
 */
#ifndef XPAR_BENCH_CUB_GPU_TIMING_UTIL_CUH
#define XPAR_BENCH_CUB_GPU_TIMING_UTIL_CUH

#include <string.h>

#include <algorithm>
#include <vector>

#include "gpu_bench.h"

namespace {

__global__ void fill_random(uint32_t *p, size_t words, uint32_t salt) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t z = (uint32_t)i * 0x9e3779b9u ^ salt;
    z ^= z >> 16;
    z *= 0x85ebca6bu;
    z ^= z >> 13;
    p[i] = z;
  }
}

/* float inputs in [0, 1): finite, no overflow at 2^30 */
__global__ void fill_unit_floats(float *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = (float)(((uint32_t)i * 2654435761u) >> 8) * (1.0f / 16777216.0f);
}

/* double inputs in [0, 1) */
__global__ void fill_unit_doubles(double *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = (double)(((uint32_t)i * 2654435761u) >> 8) * (1.0 / 16777216.0);
}

/* The median of timings (the upper one of an even count). */
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F> double median_ms(F &&run, int warmup, int reps) {
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < warmup; i++) run();
  GB_CUDA(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; i++) {
    GB_CUDA(cudaEventRecord(a, 0));
    run();
    GB_CUDA(cudaEventRecord(b, 0));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/* Count the elements where got differs from want (mode 0, int32: bit-exact; 1, float, and
 * 2, double: relative 1e-3 of the magnitude, the two summation orders differ; n counts
 * elements of the mode's type); first bad index, and the largest relative difference in
 * units of 1e-9. */
struct CompareResult {
  unsigned long long bad;
  unsigned long long first;
  unsigned long long max_rel_e9;
};
__global__ void compare_scan(const uint32_t *got, const uint32_t *want, size_t n, int is_float,
                             CompareResult *r) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    bool ok;
    if (is_float == 2) {
      const double g = reinterpret_cast<const double *>(got)[i];
      const double w = reinterpret_cast<const double *>(want)[i];
      const double rel = fabs(g - w) / fmax(fabs(w), 1.0);
      ok = rel <= 1e-3; /* false for NaN */
      if (rel > 0.0 && ok) atomicMax(&r->max_rel_e9, (unsigned long long)(rel * 1e9));
    } else if (is_float) {
      const float g = __uint_as_float(got[i]), w = __uint_as_float(want[i]);
      const float mag = fmaxf(fabsf(w), 1.0f);
      const float rel = fabsf(g - w) / mag;
      ok = rel <= 1e-3f; /* false for NaN */
      if (rel > 0.0f && ok) {
        const unsigned long long e9 = (unsigned long long)(rel * 1e9f);
        atomicMax(&r->max_rel_e9, e9);
      }
    } else {
      ok = got[i] == want[i];
    }
    if (!ok) {
      atomicAdd(&r->bad, 1ull);
      atomicMin(&r->first, (unsigned long long)i);
    }
  }
}

/* Compare got with want (compare_scan's modes) on the default stream; synchronous. */
inline CompareResult compare_with(const void *got, const void *want, size_t n, int mode,
                                  CompareResult *scratch, int sms) {
  CompareResult h = {0, ~0ull, 0};
  GB_CUDA(cudaMemcpy(scratch, &h, sizeof h, cudaMemcpyHostToDevice));
  compare_scan<<<4 * sms, 256>>>((const uint32_t *)got, (const uint32_t *)want, n, mode, scratch);
  GB_CUDA(cudaMemcpy(&h, scratch, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

/* A new backend state on the legacy default stream (the stream CUB and the events use),
 * and an exec that queues calls with results on the device, as CUB's are. */
inline xpar__exec queued_exec_on_default_stream(xpar__cuda_state **st) {
  GB_XPAR(xpar__cuda_backend.state_create(0, (void *)cudaStreamLegacy, st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = *st;
  ex.nowait = 1;
  ex.result_on_device = 1;
  return ex;
}

} // namespace

#endif
