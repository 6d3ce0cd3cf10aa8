/*
 * Experiment (issue 11, small N): why did resident_worker.cu's "application kernel,
 * then ordered trigger" row hang?
 *
 * Hypothesis: a stream memory operation (cuStreamBatchMemOp) queued after a kernel on
 * the same stream is held until the whole compute engine is idle, not only until that
 * kernel ends; a resident kernel never lets it go idle.  Test: a worker kernel stays
 * resident on its own non-blocking stream, polling a pinned word; on the application's
 * stream, (a) a memop alone, (b) a short kernel then a memop, (c) the same with the
 * memop's write in device memory.  Each write is waited for 200 ms at most.  Then the
 * worker is told to quit (a host store to its pinned word): if the stuck writes land
 * right after, the memop waited for the engine, not for the stream.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o ot bench/cub/experiments/ordered_trigger.cu && ./ot
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check_cuda.cuh"

__global__ void worker(const volatile unsigned *quit) {
  while (*quit == 0) {
  }
}
__global__ void short_kernel(int *p) { p[threadIdx.x] = threadIdx.x; }

using Clock = std::chrono::steady_clock;

int main() {
  PFN_cuStreamBatchMemOp_v11070 batch = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  CK(cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", (void **)&batch, 12000, cudaEnableDefault, &q));
  unsigned *h = nullptr, *hd = nullptr; /* [0] quit, [16] written by the memops */
  CK(cudaHostAlloc(&h, 256, cudaHostAllocMapped));
  std::memset(h, 0, 256);
  CK(cudaHostGetDevicePointer(&hd, h, 0));
  int *scratch = nullptr;
  CK(cudaMalloc(&scratch, 4096));
  cudaStream_t app, side;
  CK(cudaStreamCreate(&app));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  worker<<<1, 32, 0, side>>>(hd);
  CK(cudaGetLastError());
  unsigned value = 0;
  auto memop = [&](unsigned v) {
    CUstreamBatchMemOpParams op;
    std::memset(&op, 0, sizeof op);
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = (CUdeviceptr)(hd + 16);
    op.writeValue.value = v;
    if (batch((CUstream)app, 1, &op, 0) != CUDA_SUCCESS) {
      std::printf("OT memop refused\n");
      std::exit(1);
    }
  };
  auto wait = [&](unsigned v) {
    const auto t0 = Clock::now();
    while (reinterpret_cast<std::atomic<unsigned> *>(h + 16)->load(std::memory_order_acquire) != v)
      if (Clock::now() - t0 > std::chrono::milliseconds(200)) return -1.0;
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  memop(++value);
  std::printf("OT (a) memop alone, worker resident: %s\n", wait(value) >= 0 ? "landed" : "STUCK 200 ms");
  short_kernel<<<1, 32, 0, app>>>(scratch);
  memop(++value);
  const double b = wait(value);
  if (b >= 0)
    std::printf("OT (b) short kernel then memop, worker resident: landed after %.1f us\n", b);
  else
    std::printf("OT (b) short kernel then memop, worker resident: STUCK 200 ms\n");
  const unsigned stuck = value;
  const auto tq = Clock::now();
  reinterpret_cast<std::atomic<unsigned> *>(h)->store(1, std::memory_order_release); /* quit */
  const auto t0 = Clock::now();
  while (reinterpret_cast<std::atomic<unsigned> *>(h + 16)->load(std::memory_order_acquire) != stuck)
    if (Clock::now() - t0 > std::chrono::seconds(2)) break;
  const bool landed = reinterpret_cast<std::atomic<unsigned> *>(h + 16)->load() == stuck;
  std::printf("OT after the worker was told to quit: the write %s (%.1f us after the quit)\n",
              landed ? "landed" : "never landed",
              std::chrono::duration<double, std::micro>(Clock::now() - tq).count());
  CK(cudaStreamSynchronize(side));
  CK(cudaStreamSynchronize(app));
  /* (c) the same without a resident kernel: the control */
  short_kernel<<<1, 32, 0, app>>>(scratch);
  memop(++value);
  const double c = wait(value);
  std::printf("OT (c) short kernel then memop, no resident kernel: %s %.1f us\n",
              c >= 0 ? "landed after" : "STUCK", c);
  CK(cudaDeviceSynchronize());
  return 0;
}
