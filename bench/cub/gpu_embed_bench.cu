/*
 * xpar-gpu-bench --embed: the costs an application sees through the public
 * API (not the backend table) when xpar runs inside a CUDA application:
 *  - a synchronous AUTO reduce of 1,024 device-resident int32 (wall clock);
 *  - an AUTO inclusive scan of 256 int32, pageable to pageable against pinned
 *    to pinned (two separate 2 MiB-aligned cudaMallocHost arrays, which a
 *    direct-mapped page cache put in one slot), ns per call;
 *  - an AUTO reduce of 128 pageable int32, ns per call (the per-call overhead).
 * Medians of batches, host wall clock.
 */
#include <chrono>
#include <algorithm>
#include <vector>

#include "gpu_bench.h"

namespace {

template <class F> double median_ns_per_call(F &&call, int batch, int batches) {
  for (int i = 0; i < batch; i++) call();
  std::vector<double> t;
  for (int b = 0; b < batches; b++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; i++) call();
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int gpu_embed_bench_run(void) {
  xpar_context *ctx;
  GB_XPAR(xpar_context_create(&ctx));

  int *dev;
  GB_CUDA(cudaMalloc(&dev, 1024 * sizeof(int)));
  std::vector<int> host(1024);
  for (int i = 0; i < 1024; i++) host[i] = i % 17 - 8;
  GB_CUDA(cudaMemcpy(dev, host.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice));
  int r = 0;
  const double reduce_us =
      median_ns_per_call([&] { GB_XPAR(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dev, 1024, &r)); },
                         1, 2001) / 1000.0;

  const size_t big = 2u << 20; /* 2 MiB each */
  int *pin_in, *pin_out;
  GB_CUDA(cudaMallocHost(&pin_in, big));
  GB_CUDA(cudaMallocHost(&pin_out, big));
  int *pg_in = (int *)aligned_alloc(4096, big), *pg_out = (int *)aligned_alloc(4096, big);
  for (int i = 0; i < 256; i++) pin_in[i] = pg_in[i] = i % 5;
  const double pageable_ns = median_ns_per_call(
      [&] { GB_XPAR(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, pg_in, pg_out, 256)); },
      1000, 101);
  const double pinned_ns = median_ns_per_call(
      [&] { GB_XPAR(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, pin_in, pin_out, 256)); },
      1000, 101);
  const double overhead_ns = median_ns_per_call(
      [&] { GB_XPAR(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pg_in, 128, &r)); }, 2000, 301);
  xpar_decision d;
  GB_XPAR(xpar_last_decision(ctx, &d));

  printf("embed: synchronous AUTO reduce of 1024 device int32: %.1f us (median of 2001)\n", reduce_us);
  printf("embed: AUTO scan of 256 int32, pageable->pageable %.0f ns, pinned->pinned %.0f ns "
         "(pinned %+.0f ns)\n",
         pageable_ns, pinned_ns, pinned_ns - pageable_ns);
  printf("embed: AUTO reduce of 128 pageable int32: %.1f ns per call (%s: %s)\n", overhead_ns,
         xpar_tier_name(d.tier), d.reason);
  GB_XPAR(xpar_context_destroy(ctx));
  cudaFree(dev);
  cudaFreeHost(pin_in), cudaFreeHost(pin_out);
  free(pg_in), free(pg_out);
  return 0;
}
