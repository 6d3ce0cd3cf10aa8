/* Where the CPU tier's extra ~0.3 us on small device data goes (session 17):
 * reduce int32 of 2^7 and 2^10 device elements, on the host, six ways, interleaved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
static int64_t __attribute__((noinline)) sum(const int32_t *x, size_t n){int64_t s=0;for(size_t i=0;i<n;i++)s+=x[i];return s;}
enum { W_PLAIN, W_ASYNC_BLOCKING, W_ASYNC_NONBLOCKING, W_PAGEABLE_DST, W_XPAR_SERIAL, W_XPAR_AUTO,
       W_XPAR_SERIAL_PINNED, W_PLAIN_PINNED, W_COPY_ONLY, W_COUNT };
static const char *names[W_COUNT] = {"cudaMemcpy+loop", "async(blocking)+sync+loop", "async(nonblocking)+sync+loop",
  "cudaMemcpy(pageable)+loop", "xpar serial (device)", "xpar auto (device)", "xpar serial (pinned src)",
  "plain loop (pinned src)", "cudaMemcpy only"};
int main(void) {
  xpar_context *ser, *aut; xpar_context_create(&ser); xpar_context_create(&aut);
  xpar_context_set_backend(ser, XPAR_BACKEND_CPU_SERIAL);
  cudaStream_t sb, snb; cudaStreamCreateWithFlags(&sb, cudaStreamDefault); cudaStreamCreateWithFlags(&snb, cudaStreamNonBlocking);
  int32_t *dx, *hp, *hs, *hpg; size_t maxb = 4096 * 4;
  cudaMalloc((void**)&dx, maxb); cudaMallocHost((void**)&hp, maxb); cudaMallocHost((void**)&hs, maxb); hpg = malloc(maxb);
  for (size_t i = 0; i < 4096; i++) hp[i] = (int32_t)(i % 7);
  cudaMemcpy(dx, hp, maxb, cudaMemcpyHostToDevice);
  volatile int64_t sink = 0;
  for (int e = 7; e <= 12; e += 3) {
    size_t n = (size_t)1 << e, b = n * 4;
    enum { R = 61, K = 200 };
    static double s[W_COUNT][R];
    for (int r = -3; r < R; r++) for (int w0 = 0; w0 < W_COUNT; w0++) {
      int w = (w0 + r * 3 + 1000) % W_COUNT;
      double t0 = now();
      for (int k = 0; k < K; k++) {
        int64_t v = 0; double d;
        switch (w) {
        case W_PLAIN: cudaMemcpy(hs, dx, b, cudaMemcpyDeviceToHost); v = sum(hs, n); break;
        case W_ASYNC_BLOCKING: cudaMemcpyAsync(hs, dx, b, cudaMemcpyDeviceToHost, sb); cudaStreamSynchronize(sb); v = sum(hs, n); break;
        case W_ASYNC_NONBLOCKING: cudaMemcpyAsync(hs, dx, b, cudaMemcpyDeviceToHost, snb); cudaStreamSynchronize(snb); v = sum(hs, n); break;
        case W_PAGEABLE_DST: cudaMemcpy(hpg, dx, b, cudaMemcpyDeviceToHost); v = sum(hpg, n); break;
        case W_XPAR_SERIAL: if (xpar_reduce(ser, XPAR_INT32, XPAR_SUM, dx, n, &d) != XPAR_OK) { puts(xpar_last_error_detail()); return 1; } v = (int64_t)d; break;
        case W_XPAR_AUTO: if (xpar_reduce(aut, XPAR_INT32, XPAR_SUM, dx, n, &d) != XPAR_OK) return 1; v = (int64_t)d; break;
        case W_XPAR_SERIAL_PINNED: xpar_reduce(ser, XPAR_INT32, XPAR_SUM, hp, n, &d); v = (int64_t)d; break;
        case W_PLAIN_PINNED: v = sum(hp, n); break;
        case W_COPY_ONLY: cudaMemcpy(hs, dx, b, cudaMemcpyDeviceToHost); break;
        }
        sink += v;
      }
      if (r >= 0) s[w][r] = (now() - t0) / K;
    }
    printf("reduce int32 device 2^%d (median / p10 / p90 of %d rounds x %d calls):\n", e, R, K);
    for (int w = 0; w < W_COUNT; w++) { qsort(s[w], R, sizeof(double), cmp);
      printf("  %-30s %7.3f us  %7.3f  %7.3f\n", names[w], s[w][R/2]*1e6, s[w][R/10]*1e6, s[w][R*9/10]*1e6); }
    xpar_decision d; xpar_last_decision(aut, &d); printf("  auto ran %s\n", xpar_tier_name(d.tier));
  }
  return (int)(sink & 0);
}
