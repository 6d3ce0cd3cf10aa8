/* An application of the installed xpar with a kernel of its own
 * (consumer_kernel.xk.c, built by xpar_add_kernels): launched on the serial
 * and OpenMP tiers and under AUTO, checked exactly; prints the decision. */
#include <stdio.h>
#include <string.h>

#include <xpar/xpar_kernel.h>

XPAR_KERNEL_DECLARE(consumer_fma);

int main(void) {
  xpar_context *ctx = NULL;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    fprintf(stderr, "xpar_context_create: %s\n", xpar_last_error_detail());
    return 1;
  }
  enum { N = 5000 };
  static int64_t x[N], y[N], z[N];
  const int64_t s = 3;
  for (int i = 0; i < N; i++) {
    x[i] = i - 17;
    y[i] = 2 * i + 1;
  }
  const xpar_arg args[] = {XPAR_ARG_SCALAR_OF(XPAR_INT64, &s), XPAR_ARG_IN(XPAR_INT64, x, N),
                           XPAR_ARG_IN(XPAR_INT64, y, N), XPAR_ARG_OUT(XPAR_INT64, z, N)};
  static const xpar_backend backends[] = {XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_CPU,
                                          XPAR_BACKEND_AUTO};
  int bad = 0;
  for (int b = 0; b < 3; b++) {
    memset(z, 0x5A, sizeof z);
    xpar_context_set_backend(ctx, backends[b]);
    /* On the OpenMP tier every n runs in parallel. */
    xpar_context_set_kernel_threshold(ctx, &consumer_fma, XPAR_THRESHOLD_OPENMP,
                                      backends[b] == XPAR_BACKEND_CPU ? 0 : 1 << 15);
    xpar_status st = xpar_launch(ctx, &consumer_fma, N, args, 4);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar_launch: %s: %s\n", xpar_status_name(st), xpar_last_error_detail());
      return 1;
    }
    for (int i = 0; i < N; i++)
      if (z[i] != x[i] * x[i] + s * y[i]) bad = 1;
    xpar_decision d;
    xpar_last_decision(ctx, &d);
    printf("consumer_kernel: kernel %s n=%zu backend %s -> %s (%s): %s\n", d.kernel, d.n,
           xpar_backend_name(backends[b]), xpar_tier_name(d.tier), d.reason, bad ? "WRONG" : "ok");
  }
  xpar_context_destroy(ctx);
  return bad;
}
