/* Session 17: the CPU tier's extra time on small device data, step by step:
 * reduce int32 of 2^7 / 2^10 device elements copied to pinned staging and summed. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
static int64_t __attribute__((noinline)) sum(const int32_t *x, size_t n){int64_t s=0;for(size_t i=0;i<n;i++)s+=x[i];return s;}
enum { W_D2H, W_DEFAULT, W_SETDEV, W_PTRQ, W_XPAR_SERIAL, W_XPAR_AUTO, W_XPAR_HOST, W_LOOP, W_COUNT };
static const char *names[W_COUNT] = {"async D2H kind + sync + loop", "async Default kind + sync + loop",
  "+ cudaSetDevice", "+ cuPointerGetAttributes", "xpar serial (device)", "xpar auto (device)",
  "xpar serial (pinned src)", "plain loop (pinned src)"};
int main(void) {
  xpar_context *ser, *aut; xpar_context_create(&ser); xpar_context_create(&aut);
  xpar_context_set_backend(ser, XPAR_BACKEND_CPU_SERIAL);
  cudaStream_t sb; cudaStreamCreateWithFlags(&sb, cudaStreamDefault);
  int32_t *dx, *hp, *hs; size_t maxb = 4096 * 4;
  cudaMalloc((void**)&dx, maxb); cudaMallocHost((void**)&hp, maxb); cudaMallocHost((void**)&hs, maxb);
  for (size_t i = 0; i < 4096; i++) hp[i] = (int32_t)(i % 7);
  cudaMemcpy(dx, hp, maxb, cudaMemcpyHostToDevice);
  volatile int64_t sink = 0;
  for (int rep = 0; rep < 2; rep++)
  for (int e = 7; e <= 10; e += 3) {
    size_t n = (size_t)1 << e, b = n * 4;
    enum { R = 61, K = 200 };
    static double s[W_COUNT][R];
    for (int r = -3; r < R; r++) for (int w0 = 0; w0 < W_COUNT; w0++) {
      int w = (w0 + r * 3 + 1000) % W_COUNT;
      double t0 = now();
      for (int k = 0; k < K; k++) {
        int64_t v = 0; double d;
        CUpointer_attribute at[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
        unsigned mt = 0; int man = 0; void *data[2] = {&mt, &man};
        switch (w) {
        case W_PTRQ: cuPointerGetAttributes(2, at, data, (CUdeviceptr)(uintptr_t)dx); /* fall through */
        case W_SETDEV: cudaSetDevice(0); /* fall through */
        case W_DEFAULT: cudaMemcpyAsync(hs, dx, b, cudaMemcpyDefault, sb); cudaStreamSynchronize(sb); v = sum(hs, n); break;
        case W_D2H: cudaMemcpyAsync(hs, dx, b, cudaMemcpyDeviceToHost, sb); cudaStreamSynchronize(sb); v = sum(hs, n); break;
        case W_XPAR_SERIAL: if (xpar_reduce(ser, XPAR_INT32, XPAR_SUM, dx, n, &d) != XPAR_OK) { puts(xpar_last_error_detail()); return 1; } v = (int64_t)d; break;
        case W_XPAR_AUTO: if (xpar_reduce(aut, XPAR_INT32, XPAR_SUM, dx, n, &d) != XPAR_OK) return 1; v = (int64_t)d; break;
        case W_XPAR_HOST: xpar_reduce(ser, XPAR_INT32, XPAR_SUM, hp, n, &d); v = (int64_t)d; break;
        case W_LOOP: v = sum(hp, n); break;
        }
        sink += v;
      }
      if (r >= 0) s[w][r] = (now() - t0) / K;
    }
    printf("reduce int32 device 2^%d (median / p10 / p90 of %d rounds x %d calls):\n", e, R, K);
    for (int w = 0; w < W_COUNT; w++) { qsort(s[w], R, sizeof(double), cmp);
      printf("  %-34s %7.3f us  %7.3f  %7.3f\n", names[w], s[w][R/2]*1e6, s[w][R/10]*1e6, s[w][R*9/10]*1e6); }
  }
  return (int)(sink & 0);
}
