/*
 * Experiment (issue 11, small N): what does the scope of the done flag cost a
 * one-block kernel that has just written its output?
 *
 * xpar's synchronous scan of 1,024 device int32 takes 10.7-11.5 us on the H100 host
 * where its reduce (a stamped result, no array output) takes 8.3-9.3 us, and the device
 * time of the two kernels (events) differs by only ~0.6 us.  The scan raises its done
 * flag with st.release.sys after 4 KB of output stores; the reduce stamps its result
 * with st.relaxed.sys and writes no array.  Here: one block of 64 threads writes
 * 4 KB (or nothing) to device memory, then thread 0 raises a flag in pinned mapped
 * memory that the host spins on, with each ordering:
 *   release.sys   - the library's scan (every store visible system-wide first);
 *   release.gpu   - stores visible GPU-wide first (enough for a device output);
 *   fence.sc.gpu  - __threadfence() then a relaxed system-scope store;
 *   relaxed.sys   - no ordering (the floor; wrong for an output).
 * Median / p90 of CALLS synchronous calls, host wall clock; the launch is the runtime's;
 * calls back to back (as an application's loop, the library's case) and each after a
 * stream synchronisation.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o fs bench/cub/experiments/flag_scope.cu && ./fs
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_cuda.cuh"

template <int MODE>
__global__ void write_then_flag(int *out, int items, unsigned *flag, unsigned seq) {
  for (int i = threadIdx.x; i < items; i += blockDim.x) out[i] = i + (int)seq;
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (MODE == 0) asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
  if (MODE == 1) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
  if (MODE == 2) {
    __threadfence();
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
  }
  if (MODE == 3) asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
}

int main(int argc, char **argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  int *out = nullptr;
  CK(cudaMalloc(&out, 1 << 20));
  unsigned *flag_h = nullptr, *flag_d = nullptr;
  CK(cudaHostAlloc(&flag_h, 64, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  *flag_h = 0;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  unsigned seq = 0;
  const char *names[4] = {"release.sys", "release.gpu", "fence.sc.gpu + relaxed.sys", "relaxed.sys"};
  void (*kernels[4])(int *, int, unsigned *, unsigned) = {write_then_flag<0>, write_then_flag<1>,
                                                          write_then_flag<2>, write_then_flag<3>};
  for (int synced : {0, 1})
  for (int items : {0, 1024, 8192}) {
    std::vector<std::vector<double>> t(4);
    for (int i = 0; i < calls + 50; i++)
      for (int m = 0; m < 4; m++) { /* interleaved */
        const int k = (m + i) % 4;
        ++seq;
        const auto t0 = std::chrono::steady_clock::now();
        kernels[k]<<<1, 64, 0, s>>>(out, items, flag_d, seq);
        while (reinterpret_cast<std::atomic<unsigned> *>(flag_h)->load(std::memory_order_acquire) != seq) {
        }
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= 50) t[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        if (synced) CK(cudaStreamSynchronize(s)); /* the next launch finds the stream idle */
      }
    for (int k = 0; k < 4; k++) {
      std::sort(t[k].begin(), t[k].end());
      std::printf("FS %-13s %5d int32 written, flag %-28s median %6.2f us  p90 %6.2f\n",
                  synced ? "stream synced" : "back-to-back", items, names[k],
                  t[k][t[k].size() / 2], t[k][t[k].size() * 9 / 10]);
    }
  }
  CK(cudaGetLastError());
  return 0;
}
