// Raw CUDA: does a small H2D cudaMemcpyAsync from pinned memory see an earlier stream-0 D2H into it?
#include <cstdio>
#include <cuda_runtime.h>
__global__ void slow_copy(double *dst, const double *src, size_t n, long long spin) {
  if (threadIdx.x == 0) { long long t0 = clock64(); while (clock64() - t0 < spin) {} }
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}
__global__ void read_first(const double *p, double *out) { *out = p[0]; }
int main() {
  const size_t N = 1 << 14;
  double *h, *src, *stage, *d2, *hs = new double[N], *back = new double[N];
  cudaMallocHost(&h, N * 8); cudaMalloc(&src, N * 8); cudaMalloc(&stage, N * 8); cudaMalloc(&d2, N * 8);
  for (size_t i = 0; i < N; i++) hs[i] = 2.0;
  cudaMemcpy(src, hs, N * 8, cudaMemcpyHostToDevice);
  cudaStream_t sb, snb; cudaStreamCreateWithFlags(&sb, cudaStreamDefault); cudaStreamCreateWithFlags(&snb, cudaStreamNonBlocking);
  cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  const char *names[4] = {"H2D on a blocking stream", "H2D on stream 0 itself", "H2D on a non-blocking stream after an event", "kernel reading the pinned buffer on a blocking stream"};
  for (size_t bytes : {4096ul, 8192ul, 16384ul, 32768ul, 65536ul, 65544ul, 131072ul}) {
    size_t n = bytes / 8;
    printf("%6zu bytes:", bytes);
    for (int c = 0; c < 4; c++) {
      int bad = 0;
      for (int t = 0; t < 10; t++) {
        cudaDeviceSynchronize();
        for (size_t i = 0; i < n; i++) h[i] = 1.0;
        cudaMemset(d2, 0, N * 8);
        slow_copy<<<132, 256>>>(stage, src, n, 300000);
        cudaMemcpyAsync(h, stage, bytes, cudaMemcpyDeviceToHost, 0);
        if (c == 0) cudaMemcpyAsync(d2, h, bytes, cudaMemcpyHostToDevice, sb);
        if (c == 1) cudaMemcpyAsync(d2, h, bytes, cudaMemcpyHostToDevice, 0);
        if (c == 2) { cudaEventRecord(ev, 0); cudaStreamWaitEvent(snb, ev, 0); cudaMemcpyAsync(d2, h, bytes, cudaMemcpyHostToDevice, snb); }
        if (c == 3) read_first<<<1, 1, 0, sb>>>(h, d2);
        cudaDeviceSynchronize();
        cudaMemcpy(back, d2, 8, cudaMemcpyDeviceToHost);
        bad += back[0] != 2.0;
      }
      printf("  %s: %d/10 stale", names[c], bad);
    }
    printf("\n");
  }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
