/*
 * probe_nodev: run with CUDA_VISIBLE_DEVICES="" (run.sh does) on the GPU
 * machine, or anywhere without a GPU: xpar_device_query reports the GPU not
 * usable with a reason and XPAR_OK (xpar.h:570-574); MANDATORY offload fails
 * with XPAR_ERR_NO_DEVICE and writes nothing (xpar.h:207-208); xpar_map needs
 * a usable GPU (XPAR_ERR_NO_DEVICE, xpar.h:704-705); AUTO and forced CPU work.
 * Unlike the other probes this one does not skip without a GPU.
 */
#define PROBE_NAME "nodev"
#include "probe_common.h"

int main(void) {
  xpar_device_info info;
  memset(&info, 0x55, sizeof info);
  XOK(xpar_device_query(&info));
  printf("# nodev: usable %d, built_with_cuda %d, device_count %d, device %d, reason \"%.192s\"\n", info.usable,
         info.built_with_cuda, info.device_count, info.device, info.reason);
  if (info.usable) {
    printf("PROBE %s: SKIP (a GPU is usable here; run with CUDA_VISIBLE_DEVICES=\"\")\n", PROBE_NAME);
    return 0;
  }
  CHECK(info.built_with_cuda == 1, "built_with_cuda %d in a CUDA build", info.built_with_cuda);
  CHECK(memchr(info.reason, 0, sizeof info.reason) && info.reason[0], "no usable GPU but an empty reason");
  CHECK(info.device_count == 0,
        "device_count %d without a visible device", info.device_count);
  xpar_context *ctx = ctx_new(XPAR_BACKEND_AUTO);
  double h[100], out[100], r = -1;
  for (int i = 0; i < 100; i++) h[i] = i;
  XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, h, 100, &r));
  CHECK(r == 4950, "AUTO without a GPU: sum %g", r);
  XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  r = -1;
  XSTATUS(XPAR_ERR_NO_DEVICE, xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, h, 100, &r), "MANDATORY without a GPU");
  CHECK(r == -1, "refused MANDATORY reduce wrote its result");
  for (int i = 0; i < 100; i++) out[i] = -1;
  XSTATUS(XPAR_ERR_NO_DEVICE, xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, h, out, 100), "MANDATORY scan without a GPU");
  CHECK(out[0] == -1 && out[99] == -1, "refused MANDATORY scan wrote its output");
  XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DEFAULT));
  XSTATUS(XPAR_ERR_NO_DEVICE, xpar_map(ctx, h, sizeof h, XPAR_MAP_TO), "xpar_map without a GPU");
  XOK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU));
  XOK(xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, h, out, 100));
  CHECK(out[99] == 4950, "forced CPU scan: %g", out[99]);
  XOK(xpar_context_destroy(ctx));
  return probe_summary();
}
