/* The context's view of the GPU: probed once, state created on first use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#ifdef XPAR_TEST_HOOKS
/* A test double registered in place of the CUDA backend (tests/test_policy.c,
 * which links the test build's objects); libxpar has none. */
static const xpar__backend *gpu_backend_double;

void xpar__gpu_backend_set_double(const xpar__backend *b) { gpu_backend_double = b; }
#endif

const xpar__backend *xpar__gpu_backend(void) {
#ifdef XPAR_TEST_HOOKS
  if (gpu_backend_double) return gpu_backend_double;
#endif
#if defined(XPAR_HAVE_CUDA)
  return &xpar__cuda_backend;
#else
  return NULL;
#endif
}

int xpar__gpu_probe(xpar_context *ctx, const char **why_not) {
  if (!ctx->gpu_known) {
    const xpar__backend *g = xpar__gpu_backend();
    if (!g) {
      ctx->gpu_usable = 0;
      ctx->gpu_why_not = "built without CUDA";
    } else {
      /* The backend caches the probe per device: cheap after the first. */
      xpar_device_info info;
      g->query(ctx->device, &info);
      ctx->gpu_usable = info.usable;
      ctx->gpu_count = info.device_count;
      ctx->gpu_why_not = NULL;
      if (!info.usable) {
        snprintf(ctx->gpu_reason, sizeof ctx->gpu_reason, "%s", info.reason);
        ctx->gpu_why_not = ctx->gpu_reason;
      }
    }
    ctx->gpu_known = 1;
  }
  if (why_not) *why_not = ctx->gpu_why_not;
  return ctx->gpu_usable;
}

xpar_status xpar__gpu_state(xpar_context *ctx, struct xpar__cuda_state **out) {
  if (!ctx->cuda) {
    const char *why;
    if (!xpar__gpu_usable(ctx, &why))
      return xpar__fail(XPAR_ERR_NO_DEVICE, "no usable GPU: %s", why ? why : "unknown");
    const xpar__backend *g = xpar__gpu_backend();
    XPAR__FORWARD(g->state_create(ctx->device, ctx->user_stream, &ctx->cuda));
  }
  *out = ctx->cuda;
  return XPAR_OK;
}

xpar_status xpar__gpu_drain(xpar_context *ctx) {
  if (!ctx->gpu_pending || !ctx->cuda) return XPAR_OK;
  const xpar_status st = xpar__gpu_backend()->wait(ctx->cuda);
  /* Refused while the stream captures a CUDA graph: the work is still queued.  An error
   * the work raised is reported once. */
  if (st != XPAR_ERR_NOT_SUPPORTED) ctx->gpu_pending = 0;
  return st;
}

xpar_status xpar__device_query(xpar_device_info *out) {
  memset(out, 0, sizeof *out);
  out->device = -1;
  const xpar__backend *g = xpar__gpu_backend();
  if (!g) {
    snprintf(out->reason, sizeof out->reason, "built without CUDA");
    return XPAR_OK;
  }
  int device = -1; /* the default device where XPAR_DEVICE is unset or invalid */
  const char *env = getenv("XPAR_DEVICE");
  if (env) (void)xpar__parse_ordinal(env, &device);
  const xpar_status st = g->query(device, out);
  xpar__gpu_restore_caller(); /* the probe selects the device it describes */
  XPAR__FORWARD(st);
  out->built_with_cuda = 1;
  return XPAR_OK;
}

void xpar__gpu_restore_caller(void) {
  const xpar__backend *g = xpar__gpu_backend();
  if (g && g->restore_caller) g->restore_caller();
}
