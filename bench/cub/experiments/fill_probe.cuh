/* What the two call-cost probes share (stream_kind_cost.cu, call_path_cost.cu): the bare
 * fill kernel they time the library against, the host clock, the check of a row's output,
 * and the median / p90 of a row's samples. */
#ifndef XPAR_EXPERIMENTS_FILL_PROBE_CUH
#define XPAR_EXPERIMENTS_FILL_PROBE_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "check_cuda.cuh"

/* out[i] = v: 256 threads, 1,024 elements per block (grid = ceil(n / 1024)). */
__global__ void fill_kernel(int *out, int v, size_t n) {
  size_t base = (size_t)blockIdx.x * 1024 + threadIdx.x;
  for (int k = 0; k < 4; k++) {
    size_t i = base + (size_t)k * 256;
    if (i < n) out[i] = v;
  }
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/* Copies d[0, n) back through `host` and checks every element is v; false (and says
 * where) otherwise. */
static bool fill_is(const int *d, size_t n, int v, std::vector<int> &host, const char *row) {
  CK(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (host[i] != v) {
      std::fprintf(stderr, "row %s: out[%zu] = %d, expected %d\n", row, i, host[i], v);
      return false;
    }
  return true;
}

/* Prints "median M us  p90 P us" of the samples (sorted in place). */
static void print_median_p90(std::vector<double> &t) {
  std::sort(t.begin(), t.end());
  std::printf("median %7.2f us  p90 %7.2f us", t[t.size() / 2], t[t.size() * 9 / 10]);
}

#endif
