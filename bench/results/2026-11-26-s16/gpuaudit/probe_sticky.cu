/*
 * probe_sticky: a faulting application kernel (ga_trap: __trap() at index 0)
 * "reports XPAR_ERR_DEVICE_STICKY, as any CUDA kernel would"
 * (xpar_kernel.h:156-157); a nowait call's error comes back from xpar_wait
 * ("reports an error it raised", xpar.h:759).  Afterwards GPU calls return a
 * status (no crash, no hang) and write nothing.  The CUDA context of the
 * process is lost after this, so the probe runs alone: argument "nowait"
 * (xpar_launch_nowait + xpar_wait) or "sync" (xpar_launch).
 */
#define PROBE_NAME "sticky"
#include <xpar/xpar_kernel.h>
#include "probe_common.h"

XPAR_KERNEL_DECLARE(ga_trap);

int main(int argc, char **argv) {
  const int nowait = argc > 1 && !strcmp(argv[1], "nowait");
  probe_require_gpu();
  printf("# sticky: mode %s\n", nowait ? "nowait" : "sync");
  xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
  XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  double *d;
  CK(cudaMalloc((void **)&d, 1024 * 8));
  CK(cudaMemset(d, 0, 1024 * 8));
  CK(cudaDeviceSynchronize());
  xpar_status st;
  if (nowait) {
    st = xpar_launch_nowait(ctx, &ga_trap, 1, NULL, 0);
    printf("# sticky: launch_nowait returned %s\n", xpar_status_name(st));
    if (st == XPAR_OK) {
      xpar_status w = xpar_wait(ctx);
      CHECK(w == XPAR_ERR_DEVICE_STICKY, "xpar_wait after a trapping nowait kernel returned %s, expected ERR_DEVICE_STICKY (%s)",
            xpar_status_name(w), xpar_last_error_detail());
      CHECK(w == XPAR_OK || xpar_last_error_detail()[0], "xpar_wait failed with an empty detail");
    } else {
      CHECK(st == XPAR_ERR_DEVICE_STICKY, "launch_nowait of a trapping kernel returned %s, expected OK (queued) or ERR_DEVICE_STICKY",
            xpar_status_name(st));
    }
  } else {
    st = xpar_launch(ctx, &ga_trap, 1, NULL, 0);
    CHECK(st == XPAR_ERR_DEVICE_STICKY, "xpar_launch of a trapping kernel returned %s, expected ERR_DEVICE_STICKY (%s)",
          xpar_status_name(st), xpar_last_error_detail());
  }
  /* afterwards: statuses, nothing written */
  double res = -3.5;
  st = xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, d, 1024, &res);
  CHECK(st != XPAR_OK, "a GPU reduce after the fault returned OK (%g)", res);
  CHECK(res == -3.5, "a GPU reduce after the fault failed (%s) but wrote its result", xpar_status_name(st));
  printf("# sticky: reduce after the fault: %s (%s)\n", xpar_status_name(st), xpar_last_error_detail());
  double h[16] = {0};
  const double one = 1;
  st = xpar_fill(ctx, XPAR_DOUBLE, &one, h, 16);
  CHECK(st != XPAR_OK || h[0] == 1, "a forced-GPU fill of host memory after the fault: %s, h[0] = %g", xpar_status_name(st), h[0]);
  CHECK(st == XPAR_OK || h[0] == 0, "a failed forced-GPU fill of host memory after the fault wrote it");
  xpar_status w = xpar_wait(ctx);
  printf("# sticky: xpar_wait afterwards: %s\n", xpar_status_name(w));
  /* a new context: GPU calls report a status too */
  xpar_context *c2 = ctx_new(XPAR_BACKEND_CUDA);
  res = -3.5;
  double hv[4] = {1, 2, 3, 4};
  st = xpar_reduce(c2, XPAR_DOUBLE, XPAR_SUM, hv, 4, &res);
  CHECK(st != XPAR_OK ? res == -3.5 : res == 10, "a new context's GPU reduce after the fault: %s, result %g", xpar_status_name(st), res);
  printf("# sticky: new context, forced cuda, after the fault: %s\n", xpar_status_name(st));
  /* a CPU-only call on host memory: not promised either way, a note */
  XOK(xpar_context_set_backend(c2, XPAR_BACKEND_CPU_SERIAL));
  res = -3.5;
  st = xpar_reduce(c2, XPAR_DOUBLE, XPAR_SUM, hv, 4, &res);
  g_soft = 1;
  CHECK(st == XPAR_OK && res == 10, "cpu-serial reduce of host data after a GPU fault: %s, %g", xpar_status_name(st), res);
  g_soft = 0;
  xpar_context_destroy(c2);
  st = xpar_context_destroy(ctx);
  printf("# sticky: context_destroy after the fault: %s\n", xpar_status_name(st));
  return probe_summary();
}
