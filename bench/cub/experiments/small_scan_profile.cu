/*
 * Experiment (session 23): where a one-block scan's extra device time goes.  The small-N
 * rows of xpar-gpu-bench show a queued scan of 64 to 4,096 device int32 taking 1.2-1.9 us
 * more device time (CUDA events around the call) than the one-block reduce of 1,024,
 * whatever n, with the same host time; moving the one-block path into a kernel of its own
 * (a fifth of the SASS) changed nothing (bench/cub/NOTES.md, session 23).  This program
 * runs those calls through the public API, queued (nowait) on the context's stream, so that
 * a profiler sees every kernel each call launches:
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -o ssp \
 *        bench/cub/experiments/small_scan_profile.cu -L BUILD -lxpar -Xlinker -rpath=BUILD
 *   ./ssp                      events around each call, median of 501
 *   ncu --clock-control none --metrics gpu__time_duration.sum,... ./ssp 20
 *
 * With an argument it makes that many calls of each kind and times nothing (for ncu).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_cuda.cuh"
#include "xpar/xpar.h"

namespace {

void ok(xpar_status s, const char *what) {
  if (s != XPAR_OK) {
    std::fprintf(stderr, "%s: %s (%s)\n", what, xpar_status_name(s), xpar_last_error_detail());
    std::exit(1);
  }
}

__global__ void empty_kernel() {}

template <class F> double median_event_us(cudaStream_t s, F call, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(a, s));
    call();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0f);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  const int profile_calls = argc > 1 ? std::atoi(argv[1]) : 0;
  xpar_context *ctx;
  ok(xpar_context_create(&ctx), "context");
  ok(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), "backend cuda");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ok(xpar_context_set_stream(ctx, s), "set_stream");
  const size_t n_max = 4096;
  int *in, *out, *result;
  CK(cudaMalloc(&in, n_max * sizeof(int)));
  CK(cudaMalloc(&out, n_max * sizeof(int)));
  CK(cudaMalloc(&result, sizeof(int)));
  std::vector<int> h(n_max);
  for (size_t i = 0; i < n_max; i++) h[i] = (int)(i * 2654435761u >> 20);
  CK(cudaMemcpy(in, h.data(), n_max * sizeof(int), cudaMemcpyHostToDevice));

  auto scan = [&](size_t n) {
    ok(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, in, out, n), "scan");
  };
  auto reduce = [&] { ok(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, in, 1024, result), "reduce"); };
  for (int w = 0; w < 20; w++) {
    scan(1024);
    reduce();
  }
  ok(xpar_wait(ctx), "wait");
  /* correctness of what is profiled: the scan of 1,024 against the host */
  std::vector<int> got(1024);
  scan(1024);
  ok(xpar_wait(ctx), "wait");
  CK(cudaMemcpy(got.data(), out, 1024 * sizeof(int), cudaMemcpyDeviceToHost));
  int run = 0;
  for (int i = 0; i < 1024; i++) {
    run = (int)((unsigned)run + (unsigned)h[i]);
    if (got[i] != run) {
      std::fprintf(stderr, "scan wrong at %d\n", i);
      return 1;
    }
  }

  if (profile_calls > 0) {
    for (int r = 0; r < profile_calls; r++) {
      scan(64);
      scan(1024);
      reduce();
      empty_kernel<<<1, 32, 0, s>>>();
    }
    ok(xpar_wait(ctx), "wait");
    CK(cudaStreamSynchronize(s));
    std::printf("small_scan_profile: %d calls of each, scan checked\n", profile_calls);
  } else {
    const double e = median_event_us(s, [&] { empty_kernel<<<1, 32, 0, s>>>(); }, 501);
    const double r = median_event_us(s, reduce, 501);
    const double s64 = median_event_us(s, [&] { scan(64); }, 501);
    const double s1k = median_event_us(s, [&] { scan(1024); }, 501);
    const double s4k = median_event_us(s, [&] { scan(4096); }, 501);
    std::printf("small_scan_profile: events around one queued call, median of 501: empty %.2f us, "
                "reduce 1024 %.2f, scan 64 / 1024 / 4096 %.2f / %.2f / %.2f\n",
                e, r, s64, s1k, s4k);
  }
  xpar_context_destroy(ctx);
  return 0;
}
