/*
 * What a synchronous xpar call costs by the calling thread's current driver
 * context: xpar runs on its device's primary context and puts the thread's
 * own back when the call returns (README, "Device and driver
 * context").  A context on device 0, 1,024 device int32 reduced (forced CUDA:
 * the launch and done-signal path) and 2^20 (the bandwidth path), from
 *   same     the thread has device 0's primary context current (nothing to switch)
 *   other    the thread is on device 1 (a switch to device 0 and back per call)
 *   none     the thread has no context current (a fresh thread's state)
 *   own      the thread has its own driver context on device 0 current
 * Median and p90 of 31 batches of 200 calls each, the four interleaved batch by
 * batch; host wall clock.  "other" needs 2 GPUs (skipped otherwise).
 *
 * Not part of the build (a bench, like pointer_query_cost.cu):
 *   nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude bench/cub/caller_context_cost.cu \
 *        -o ccc -Lbuild -lxpar -Xlinker -rpath=$PWD/build && ./ccc
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <xpar/xpar.h>

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
                   cudaGetErrorName(e_));                                               \
      std::exit(2);                                                                     \
    }                                                                                   \
  } while (0)

static void *driver(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn) {
    std::fprintf(stderr, "driver entry point %s not found\n", name);
    std::exit(2);
  }
  return fn;
}

int main() {
  int devices = 0;
  CK(cudaGetDeviceCount(&devices));
  auto set_current = (PFN_cuCtxSetCurrent_v4000)driver("cuCtxSetCurrent");
  auto get_current = (PFN_cuCtxGetCurrent_v4000)driver("cuCtxGetCurrent");
  auto create = (PFN_cuCtxCreate_v12050)nullptr;
  {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    CK(cudaGetDriverEntryPointByVersion("cuCtxCreate", &fn, 12050, cudaEnableDefault, &found));
    create = (PFN_cuCtxCreate_v12050)fn;
  }
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  CUcontext primary0 = nullptr, primary1 = nullptr, own = nullptr;
  get_current(&primary0);
  if (devices > 1) {
    CK(cudaSetDevice(1));
    CK(cudaFree(0));
    get_current(&primary1);
    CK(cudaSetDevice(0));
  }
  CUdevice dev0 = 0;
  if (create && create(&own, nullptr, 0, dev0) == CUDA_SUCCESS) {
    /* cuCtxCreate pushes: pop it, so that the thread's stack holds one context and
     * cuCtxSetCurrent(NULL) below leaves none current */
    auto pop = (PFN_cuCtxPopCurrent_v4000)driver("cuCtxPopCurrent");
    CUcontext popped = nullptr;
    pop(&popped);
    set_current(primary0);
  } else {
    own = nullptr;
  }
  const size_t sizes[] = {1024, (size_t)1 << 20};
  int32_t *x;
  CK(cudaMalloc(&x, sizes[1] * sizeof *x));
  CK(cudaMemset(x, 0, sizes[1] * sizeof *x));
  xpar_context *ctx;
  if (xpar_context_create(&ctx) != XPAR_OK || xpar_context_set_device(ctx, 0) != XPAR_OK ||
      xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA) != XPAR_OK) {
    std::fprintf(stderr, "xpar: %s\n", xpar_last_error_detail());
    return 2;
  }
  const char *names[4] = {"same", "other", "none", "own"};
  const CUcontext contexts[4] = {primary0, primary1, nullptr, own};
  std::printf("caller_context_cost: %d devices; synchronous xpar_reduce int32 on device 0, "
              "forced CUDA; us per call, median / p90 of 31 batches of 200\n", devices);
  std::printf("%-8s %17s  %17s\n", "thread", "n = 1024", "n = 2^20");
  const int batches = 31, calls = 200;
  std::vector<double> t[4][2];
  for (int b = 0; b < batches; b++)
    for (int v = 0; v < 4; v++) {
      if ((v == 1 && devices < 2) || (v == 3 && !own)) continue;
      for (int k = 0; k < 2; k++) {
        set_current(contexts[v]);
        CUcontext before = nullptr;
        get_current(&before);
        if (before != contexts[v]) {
          std::fprintf(stderr, "%s: could not make the thread's context that one\n", names[v]);
          return 1;
        }
        int32_t sum = 0;
        auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; c++)
          if (xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, sizes[k], &sum) != XPAR_OK) {
            std::fprintf(stderr, "xpar_reduce: %s\n", xpar_last_error_detail());
            return 2;
          }
        auto t1 = std::chrono::steady_clock::now();
        CUcontext after = nullptr;
        get_current(&after);
        if (after != contexts[v]) {
          std::fprintf(stderr, "%s: the thread's context changed across the calls\n", names[v]);
          return 1;
        }
        t[v][k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
      }
    }
  set_current(primary0);
  for (int v = 0; v < 4; v++) {
    if (t[v][0].empty()) {
      std::printf("%-8s  (not run: %s)\n", names[v], v == 1 ? "one GPU" : "no cuCtxCreate");
      continue;
    }
    std::printf("%-8s", names[v]);
    for (int k = 0; k < 2; k++) {
      std::vector<double> s = t[v][k];
      std::sort(s.begin(), s.end());
      std::printf("  %6.2f / %6.2f", s[s.size() / 2], s[(s.size() * 9) / 10]);
    }
    std::printf("\n");
  }
  xpar_context_destroy(ctx);
  CK(cudaFree(x));
  return 0;
}
