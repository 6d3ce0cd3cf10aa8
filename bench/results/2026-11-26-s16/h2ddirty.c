/* H2D copy of a pinned buffer the CPU has just written: normal stores, streaming stores, stores + clflushopt; against a clean buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
static void write_normal(unsigned *h, size_t n, unsigned v) { for (size_t i = 0; i < n; i++) ((volatile unsigned*)h)[i] = v; }
static void write_plain(unsigned *h, size_t n, unsigned v) { for (size_t i = 0; i < n; i++) h[i] = v; __asm__ volatile("" ::: "memory"); }
static void write_stream(unsigned *h, size_t n, unsigned v) { __m128i x = _mm_set1_epi32((int)v); for (size_t i = 0; i < n; i += 4) _mm_stream_si128((__m128i*)(h + i), x); _mm_sfence(); }
__attribute__((target("clflushopt"))) static void write_flush(unsigned *h, size_t n, unsigned v) { write_plain(h, n, v); for (size_t i = 0; i < n; i += 16) _mm_clflushopt(h + i); _mm_sfence(); }
int main(void) {
  void *out; cudaMalloc(&out, 1 << 22);
  unsigned *h; cudaMallocHost((void**)&h, 1 << 22);
  memset(h, 1, 1 << 22);
  cudaStream_t s; cudaStreamCreate(&s);
  xpar_context *c; xpar_context_create(&c); xpar_context_set_backend(c, XPAR_BACKEND_CPU_SERIAL);
  enum { R = 31, K = 50 };
  const char *names[5] = {"clean", "plain stores", "streaming", "stores+clflushopt", "xpar fill serial"};
  for (int e = 10; e <= 18; e += 2) {
    size_t n = (size_t)1 << e;
    printf("2^%d (%zu KiB):", e, n * 4 / 1024);
    for (int m = 0; m < 5; m++) {
      double t[R];
      for (int r = 0; r < R; r++) {
        double t0 = now();
        for (int k = 0; k < K; k++) {
          unsigned v = (unsigned)(r * K + k);
          if (m == 4) { xpar_fill(c, XPAR_INT32, &v, out, n); continue; }
          if (m == 1) write_plain(h, n, v);
          if (m == 2) write_stream(h, n, v);
          if (m == 3) write_flush(h, n, v);
          cudaMemcpyAsync(out, h, n * 4, cudaMemcpyHostToDevice, s); cudaStreamSynchronize(s);
        }
        t[r] = (now() - t0) / K;
      }
      qsort(t, R, sizeof(double), cmp);
      printf("  %s %.2f", names[m], t[R/2]*1e6);
    }
    /* the CPU write alone */
    double t0 = now(); for (int k = 0; k < 200; k++) write_plain(h, n, k); double tw = (now() - t0) / 200;
    t0 = now(); for (int k = 0; k < 200; k++) write_stream(h, n, k); double ts = (now() - t0) / 200;
    printf("   | write alone: plain %.2f streaming %.2f us\n", tw * 1e6, ts * 1e6);
  }
  return 0;
}
