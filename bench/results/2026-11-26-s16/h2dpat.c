/* Does the H2D copy's speed depend on the bytes?  xpar fill on device data (CPU tier) with several values, and raw cudaMemcpy of pinned buffers holding each pattern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(void) {
  xpar_context *c; xpar_context_create(&c); xpar_context_set_backend(c, XPAR_BACKEND_CPU_SERIAL);
  void *out; cudaMalloc(&out, 1 << 20);
  unsigned *h; cudaMallocHost((void**)&h, 1 << 20);
  cudaStream_t s; cudaStreamCreate(&s);
  unsigned pats[5] = {7u, 0x40E00000u, 0u, 0xFFFFFFFFu, 0x12345678u};
  enum { R = 31, K = 100 };
  for (int pass = 0; pass < 2; pass++)
  for (int e = 10; e <= 14; e += 2) {
    size_t n = (size_t)1 << e;
    printf("2^%d:", e);
    for (int p = 0; p < 5; p++) {
      double sx[R], sm[R];
      for (size_t i = 0; i < n; i++) h[i] = pats[p];
      for (int r = 0; r < R; r++) {
        double t0 = now();
        for (int k = 0; k < K; k++) xpar_fill(c, XPAR_INT32, &pats[p], out, n);
        sx[r] = (now() - t0) / K;
        t0 = now();
        for (int k = 0; k < K; k++) { cudaMemcpyAsync(out, h, n * 4, cudaMemcpyHostToDevice, s); cudaStreamSynchronize(s); }
        sm[r] = (now() - t0) / K;
      }
      qsort(sx, R, sizeof(double), cmp); qsort(sm, R, sizeof(double), cmp);
      printf("  %08x: xpar fill %.2f us, memcpy %.2f us", pats[p], sx[R/2]*1e6, sm[R/2]*1e6);
    }
    printf("\n");
  }
  return 0;
}
