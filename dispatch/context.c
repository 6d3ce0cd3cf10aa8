/* The context's lifetime, and the settings that reach its GPU state: the top
 * of dispatch/, calling on env, profile, gpu, residency and kernel (state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

xpar_status xpar__context_new(xpar_context **out) {
  *out = NULL;
  xpar_context *ctx = calloc(1, sizeof *ctx);
  XPAR__RETURN_IF(!ctx, XPAR_ERR_OUT_OF_MEMORY, "allocating a context (%zu bytes)", sizeof *ctx);
  ctx->backend = XPAR_BACKEND_AUTO;
  ctx->offload = XPAR_OFFLOAD_DEFAULT;
  ctx->device = -1;
  ctx->adapt = 1;
  ctx->settings_generation = 1;
  xpar__thresholds_default(ctx->thresholds);
  xpar__split_default(ctx);
  /* Threshold precedence, lowest first: defaults, profile, environment, API. */
  xpar_status st = xpar__env_apply_policy(ctx);
  if (st == XPAR_OK) st = xpar__profile_load_default(ctx);
  if (st == XPAR_OK) st = xpar__env_apply_thresholds(ctx);
  if (st != XPAR_OK) {
    free(ctx);
    return st;
  }
  *out = ctx;
  return XPAR_OK;
}

static void free_host_staging(xpar_context *ctx) {
  for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) xpar__host_staging_free(ctx, i);
  xpar__host_scratch_free(&ctx->host_scratch);
}

xpar_status xpar__context_free(xpar_context *ctx) {
  xpar_status st = xpar__gpu_drain(ctx);
  xpar__mappings_release_all(ctx);
  /* The pinned staging is freed in the GPU state's context, so before the state goes. */
  free_host_staging(ctx);
  if (ctx->cuda) xpar__gpu_backend()->state_destroy(ctx->cuda);
  xpar__kernels_release(ctx);
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++) free(ctx->adapt_rows[op][dt]);
  free(ctx);
  return st;
}

/* The device of an application stream, -1 where it follows the current device or the
 * driver cannot say (backend.h: stream_device). */
static int stream_device(void *stream) {
  const xpar__backend *g = xpar__gpu_backend();
  return stream && g && g->stream_device ? g->stream_device(stream) : -1;
}

xpar_status xpar__context_set_device(xpar_context *ctx, int device) {
  XPAR__RETURN_IF(ctx->n_maps, XPAR_ERR_INVALID_ARGUMENT,
                  "the context has %zu mappings on its current device; unmap them first",
                  ctx->n_maps);
  /* Its kernels would be launched into a stream of another device: refused there. */
  const int on = stream_device(ctx->user_stream);
  XPAR__RETURN_IF(on >= 0 && on != device, XPAR_ERR_INVALID_ARGUMENT,
                  "the context's stream (xpar_context_set_stream) belongs to device %d; set a "
                  "stream of device %d, or NULL, before moving the context there",
                  on, device);
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  /* The pinned staging was allocated in the old device's context: freed there. */
  free_host_staging(ctx);
  if (ctx->cuda) xpar__gpu_backend()->state_destroy(ctx->cuda);
  ctx->cuda = NULL;
  ctx->device = device;
  ctx->gpu_known = 0; /* probe the new device on its first use */
  xpar__page_cache_clear(&ctx->page_cache);
  return XPAR_OK;
}

xpar_status xpar__context_set_stream(xpar_context *ctx, void *cuda_stream) {
  XPAR__RETURN_IF(cuda_stream && !xpar__gpu_backend(), XPAR_ERR_NO_DEVICE,
                  "a CUDA stream was given, but xpar was built without CUDA");
  const int on = stream_device(cuda_stream), mine = ctx->device < 0 ? 0 : ctx->device;
  XPAR__RETURN_IF(on >= 0 && on != mine, XPAR_ERR_INVALID_ARGUMENT,
                  "the stream belongs to device %d and this context runs on device %d: move "
                  "the context first (xpar_context_set_device) or pass a stream of device %d",
                  on, mine, mine);
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  if (ctx->cuda) XPAR__FORWARD(xpar__gpu_backend()->set_stream(ctx->cuda, cuda_stream));
  ctx->user_stream = cuda_stream;
  return XPAR_OK;
}

xpar_status xpar__context_release_memory(xpar_context *ctx) {
  xpar_status st = xpar__gpu_drain(ctx);
  if (st == XPAR_OK && ctx->cuda) st = xpar__gpu_backend()->release_cache(ctx->cuda);
  free_host_staging(ctx);
  return st;
}

void xpar__context_record_refused(xpar_context *ctx, xpar_op op, xpar_dtype dtype, size_t n,
                                  const char *kernel) {
  xpar__decision_raw *d = &ctx->last;
  memset(d, 0, sizeof *d);
  d->op = op;
  d->dtype = dtype;
  d->n = n;
  d->tier = XPAR_TIER_NONE;
  d->kernel = kernel;
  d->reproducible = ctx->reproducible;
  ctx->calls_run = 1;
}

void xpar__context_last_decision(const xpar_context *ctx, xpar_decision *out) {
  const xpar__decision_raw *d = &ctx->last;
  memset(out, 0, sizeof *out);
  out->op = d->op;
  out->dtype = d->dtype;
  out->n = d->n;
  out->tier = d->tier;
  out->bytes_to_device = d->bytes_to_device;
  out->bytes_to_host = d->bytes_to_host;
  out->kernel = d->kernel;
  out->reproducible = d->reproducible;
  out->shadow_tier = d->shadow_state == XPAR__SHADOW_OFF ? XPAR_TIER_NONE : d->shadow_tier;
  out->shadow_mismatch = d->shadow_state == XPAR__SHADOW_MISMATCH;
  out->split_gpu_share = d->tier == XPAR_TIER_CPU_CUDA ? d->split_gpu_share : 0.0;
  if (d->tier == XPAR_TIER_NONE)
    snprintf(out->reason, sizeof out->reason, "%s",
             ctx->calls_run ? "the last call failed before running"
                            : "no call has run on this context yet");
  else
    xpar__decision_format(d, out->reason, sizeof out->reason);
}
