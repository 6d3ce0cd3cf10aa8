/* AUTO against forced serial: fill / reduce on cudaMalloc'd arrays, small n. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include <xpar/xpar.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
typedef struct { const char *name; xpar_context *ctx; } alt;
static xpar_status call(xpar_context *c, int op, xpar_dtype t, size_t n, void *x, void *out) {
  int v = 7; double r;
  if (op == 0) return xpar_fill(c, t, &v, out, n);
  return xpar_reduce(c, t, XPAR_SUM, x, n, &r);
}
int main(void) {
  alt a[3]; const char *names[3] = {"auto", "serial", "auto-after-gpu"};
  xpar_backend be[3] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_AUTO};
  for (int i = 0; i < 3; i++) { a[i].name = names[i]; xpar_context_create(&a[i].ctx); xpar_context_set_backend(a[i].ctx, be[i]); }
  void *x, *out; cudaMalloc(&x, 1 << 20); cudaMalloc(&out, 1 << 20); cudaMemset(x, 0, 1 << 20);
  { int v = 1; xpar_fill(a[2].ctx, XPAR_INT32, &v, out, 1 << 18); } /* a GPU call first */
  for (int op = 0; op < 2; op++)
  for (int t = 0; t < 2; t++)
  for (int e = 10; e <= 12; e++) {
    xpar_dtype dt = t ? XPAR_FLOAT : XPAR_INT32; size_t n = (size_t)1 << e;
    enum { R = 41, K = 50 };
    double s[3][R];
    for (int i = 0; i < 3; i++) for (int k = 0; k < 20; k++) call(a[i].ctx, op, dt, n, x, out);
    for (int r = 0; r < R; r++) for (int i = 0; i < 3; i++) {
      double t0 = now();
      for (int k = 0; k < K; k++) if (call(a[i].ctx, op, dt, n, x, out) != XPAR_OK) { printf("fail %s\n", xpar_last_error_detail()); return 1; }
      s[i][r] = (now() - t0) / K;
    }
    printf("%s %s 2^%d:", op ? "reduce" : "fill", xpar_dtype_name(dt), e);
    for (int i = 0; i < 3; i++) { qsort(s[i], R, sizeof(double), cmp); printf("  %s %.2f us", a[i].name, s[i][R/2]*1e6); }
    printf("\n");
    for (int i = 0; i < 3; i++) { xpar_decision d; xpar_last_decision(a[i].ctx, &d);
      printf("    %-14s tier %s to_dev %zu to_host %zu: %.150s\n", a[i].name, xpar_tier_name(d.tier), d.bytes_to_device, d.bytes_to_host, d.reason); }
  }
  return 0;
}
