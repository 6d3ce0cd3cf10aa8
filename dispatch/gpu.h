/* The context's view of the GPU (gpu.c): the CUDA backend's table, probed
 * once per context, its state created on first use. */
#ifndef XPAR_DISPATCH_GPU_H
#define XPAR_DISPATCH_GPU_H

#include "state.h"

/** The CUDA backend table, or NULL when built without CUDA. */
const xpar__backend *xpar__gpu_backend(void);
#ifdef XPAR_TEST_HOOKS
/** Tests only (compiled into the test build's objects, never into libxpar):
 *  use `b` as the GPU backend from now on (NULL: the real one).  Set it
 *  before creating contexts; a context probes its GPU once. */
void xpar__gpu_backend_set_double(const xpar__backend *b);
#endif
/** Whether the GPU is usable for ctx (probes once per context); why not. */
int xpar__gpu_probe(xpar_context *ctx, const char **why_not);
static inline int xpar__gpu_usable(xpar_context *ctx, const char **why_not) {
  if (ctx->gpu_known && !why_not) return ctx->gpu_usable;
  return xpar__gpu_probe(ctx, why_not);
}
/** The context's GPU state, created on first use. */
xpar_status xpar__gpu_state(xpar_context *ctx, struct xpar__cuda_state **out);
/** Wait for queued nowait work if there is any. */
xpar_status xpar__gpu_drain(xpar_context *ctx);
/** xpar_device_query: the device XPAR_DEVICE names (or the default one). */
xpar_status xpar__device_query(xpar_device_info *out);
/** Put back the driver context the calling thread had before the CUDA
 *  backend switched it in this public call (backend.h: restore_caller); the
 *  door calls it while base's xpar__callers_switched is not 0. */
void xpar__gpu_restore_caller(void);

#endif
