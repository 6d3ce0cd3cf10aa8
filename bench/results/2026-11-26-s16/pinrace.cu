// Does a GPU-tier call see an async stream-0 copy into a pinned input queued before it?
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
__global__ void slow_copy(double *dst, const double *src, size_t n, long long spin) {
  if (threadIdx.x == 0) { long long t0 = clock64(); while (clock64() - t0 < spin) {} }
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}
int main() {
  const size_t N = 1 << 17;
  double *x, *y, *stage, *src, *hy = (double *)malloc(N * 8), *hs = (double *)malloc(N * 8);
  cudaMallocHost((void **)&x, N * 8); cudaMalloc((void **)&y, N * 8); cudaMalloc((void **)&stage, N * 8); cudaMalloc((void **)&src, N * 8);
  for (size_t i = 0; i < N; i++) { hy[i] = 1.0; hs[i] = 2.0; }
  cudaMemcpy(y, hy, N * 8, cudaMemcpyHostToDevice); cudaMemcpy(src, hs, N * 8, cudaMemcpyHostToDevice);
  const char *names[3] = {"auto", "cuda", "auto-gpu0"};
  for (int v = 0; v < 3; v++) for (size_t n : {(size_t)512, (size_t)1021, (size_t)4096, (size_t)8192, (size_t)8193, (size_t)16384, (size_t)N}) {
    if (v != 1 && n != 1021 && n != N) continue;
    xpar_context *ctx; xpar_context_create(&ctx);
    if (v == 1) xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA);
    if (v == 2) for (int op = 0; op < 6; op++) for (int k = 1; k < 5; k++) xpar_context_set_threshold(ctx, (xpar_op)op, XPAR_DOUBLE, (xpar_threshold)k, 0);
    int bad = 0, trials = 20; xpar_decision d;
    for (int t = 0; t < trials; t++) {
      cudaDeviceSynchronize();
      for (size_t i = 0; i < n; i++) x[i] = 1.0; /* old */
      slow_copy<<<264, 256>>>(stage, src, n, 400000);
      cudaMemcpyAsync(x, stage, n * 8, cudaMemcpyDeviceToHost, 0);
      double r = -1;
      xpar_status st = xpar_dot(ctx, XPAR_DOUBLE, x, y, n, &r);
      xpar_last_decision(ctx, &d);
      if (st != XPAR_OK || r != 2.0 * n) { bad++; if (bad == 1) printf("  %s n=%zu trial %d: status %s result %.1f (new %.1f, old %.1f)\n", names[v], n, t, xpar_status_name(st), r, 2.0 * n, 1.0 * n); }
    }
    printf("%-9s n=%-7zu %d/%d wrong; tier %s, to_dev %zu to_host %zu: %s\n", names[v], n, bad, trials, xpar_tier_name(d.tier), d.bytes_to_device, d.bytes_to_host, d.reason);
    xpar_context_destroy(ctx);
  }
  return 0;
}
