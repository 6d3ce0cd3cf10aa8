/* Public context functions: creation, policy setters and getters, introspection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"

xpar_status xpar__ctx_busy(void) {
  return xpar__fail(XPAR_ERR_CONTEXT_BUSY,
                    "the context is in use by another thread; use one context per thread");
}

/* Run `body` (a statement using ctx) with the context held. */
#define WITH_CONTEXT(ctx, body)             \
  do {                                      \
    XPAR__FORWARD(xpar__ctx_enter(ctx));    \
    xpar_status s_ = XPAR_OK;               \
    body;                                   \
    xpar__ctx_leave(ctx);                   \
    return s_;                              \
  } while (0)

XPAR_API xpar_status xpar_context_create(xpar_context **out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  *out = NULL;
  xpar_context *ctx = calloc(1, sizeof *ctx);
  XPAR__RETURN_IF(!ctx, XPAR_ERR_OUT_OF_MEMORY, "allocating a context (%zu bytes)", sizeof *ctx);
  ctx->backend = XPAR_BACKEND_AUTO;
  ctx->offload = XPAR_OFFLOAD_DEFAULT;
  ctx->device = -1;
  xpar__thresholds_default(ctx->thresholds);
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

XPAR_API xpar_status xpar_context_destroy(xpar_context *ctx) {
  xpar__clear_error();
  if (!ctx) return XPAR_OK;
  XPAR__FORWARD(xpar__ctx_enter(ctx));
  xpar_status st = xpar__gpu_drain(ctx);
  xpar__mappings_release_all(ctx);
  if (ctx->cuda) xpar__gpu_backend()->state_destroy(ctx->cuda);
  for (int i = 0; i < 3; i++) free(ctx->host_staging[i]);
  free(ctx);
  return st;
}

XPAR_API xpar_status xpar_context_set_backend(xpar_context *ctx, xpar_backend backend) {
  WITH_CONTEXT(ctx, {
    if ((unsigned)backend >= XPAR_BACKEND_COUNT_)
      s_ = xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown backend %d", (int)backend);
    else
      ctx->backend = backend;
  });
}

XPAR_API xpar_status xpar_context_get_backend(const xpar_context *ctx, xpar_backend *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  *out = ctx->backend;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_offload(xpar_context *ctx, xpar_offload offload) {
  WITH_CONTEXT(ctx, {
    if ((unsigned)offload >= XPAR_OFFLOAD_COUNT_)
      s_ = xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown offload policy %d", (int)offload);
    else
      ctx->offload = offload;
  });
}

XPAR_API xpar_status xpar_context_get_offload(const xpar_context *ctx, xpar_offload *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  *out = ctx->offload;
  return XPAR_OK;
}

static xpar_status check_threshold_key(xpar_op op, xpar_dtype dtype, xpar_threshold which) {
  XPAR__RETURN_IF((unsigned)op >= XPAR_OP_COUNT_, XPAR_ERR_INVALID_ENUM, "unknown op %d", (int)op);
  XPAR__RETURN_IF(!xpar__dtype_valid(dtype), XPAR_ERR_INVALID_ENUM, "unknown dtype %d",
                  (int)dtype);
  XPAR__RETURN_IF((unsigned)which >= XPAR_THRESHOLD_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown threshold %d", (int)which);
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_threshold(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                                xpar_threshold which, size_t n) {
  WITH_CONTEXT(ctx, {
    s_ = check_threshold_key(op, dtype, which);
    if (s_ == XPAR_OK) {
      ctx->thresholds[op][dtype][which] = n;
      ctx->threshold_source[op][dtype][which] = XPAR__SRC_API;
    }
  });
}

XPAR_API xpar_status xpar_context_get_threshold(const xpar_context *ctx, xpar_op op,
                                                xpar_dtype dtype, xpar_threshold which,
                                                size_t *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  XPAR__FORWARD(check_threshold_key(op, dtype, which));
  *out = ctx->thresholds[op][dtype][which];
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_num_threads(xpar_context *ctx, int num_threads) {
  WITH_CONTEXT(ctx, {
    if (num_threads < 0)
      s_ = xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "num_threads is %d; expected >= 0", num_threads);
    else
      ctx->num_threads = num_threads;
  });
}

XPAR_API xpar_status xpar_context_set_verbose(xpar_context *ctx, int verbose) {
  WITH_CONTEXT(ctx, { ctx->verbose = verbose != 0; });
}

XPAR_API xpar_status xpar_context_set_reproducible(xpar_context *ctx, int on) {
  WITH_CONTEXT(ctx, { ctx->reproducible = on != 0; });
}

XPAR_API xpar_status xpar_context_get_reproducible(const xpar_context *ctx, int *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  *out = ctx->reproducible;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_shadow(xpar_context *ctx, xpar_tier tier,
                                             int fail_on_mismatch) {
  WITH_CONTEXT(ctx, {
    if ((unsigned)tier >= XPAR_TIER_COUNT_) {
      s_ = xpar__fail(XPAR_ERR_INVALID_ENUM, "unknown tier %d", (int)tier);
    } else {
      ctx->shadow_tier = tier;
      ctx->shadow_fail = fail_on_mismatch != 0;
    }
  });
}

XPAR_API xpar_status xpar_context_get_shadow(const xpar_context *ctx, xpar_tier *tier,
                                             int *fail_on_mismatch) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!tier, XPAR_ERR_NULL_POINTER, "tier is NULL");
  *tier = ctx->shadow_tier;
  if (fail_on_mismatch) *fail_on_mismatch = ctx->shadow_fail;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_device(xpar_context *ctx, int device) {
  WITH_CONTEXT(ctx, {
    if (device < 0) {
      s_ = xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "device is %d; expected >= 0", device);
    } else if (ctx->n_maps) {
      s_ = xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                      "the context has %zu mappings on its current device; unmap them first",
                      ctx->n_maps);
    } else {
      s_ = xpar__gpu_drain(ctx);
      if (s_ == XPAR_OK) {
        if (ctx->cuda) xpar__gpu_backend()->state_destroy(ctx->cuda);
        ctx->cuda = NULL;
        ctx->device = device;
        ctx->gpu_known = 0; /* probe the new device on its first use */
        xpar__page_cache_clear(&ctx->page_cache);
      }
    }
  });
}

XPAR_API xpar_status xpar_context_set_stream(xpar_context *ctx, void *cuda_stream) {
  WITH_CONTEXT(ctx, {
    if (cuda_stream && !xpar__gpu_backend()) {
      s_ = xpar__fail(XPAR_ERR_NO_DEVICE, "a CUDA stream was given, but xpar was built without CUDA");
    } else {
      s_ = xpar__gpu_drain(ctx);
      if (s_ == XPAR_OK && ctx->cuda) s_ = xpar__gpu_backend()->set_stream(ctx->cuda, cuda_stream);
      if (s_ == XPAR_OK) ctx->user_stream = cuda_stream;
    }
  });
}

XPAR_API xpar_status xpar_context_set_launch_shape(xpar_context *ctx, unsigned grid,
                                                   unsigned block) {
  WITH_CONTEXT(ctx, {
    if (block > 1024)
      s_ = xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "block is %u; at most 1024 threads", block);
    else if (grid > 0x7fffffffu)
      s_ = xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "grid is %u; at most 2^31 - 1 blocks", grid);
    else {
      ctx->launch_grid = grid;
      ctx->launch_block = block;
    }
  });
}

XPAR_API xpar_status xpar_context_release_memory(xpar_context *ctx) {
  WITH_CONTEXT(ctx, {
    s_ = xpar__gpu_drain(ctx);
    if (s_ == XPAR_OK && ctx->cuda) s_ = xpar__gpu_backend()->release_cache(ctx->cuda);
    for (int i = 0; i < 3; i++) {
      free(ctx->host_staging[i]);
      ctx->host_staging[i] = NULL;
      ctx->host_staging_bytes[i] = 0;
    }
  });
}

XPAR_API xpar_status xpar_last_decision(const xpar_context *ctx, xpar_decision *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  const xpar__decision_raw *d = &ctx->last;
  memset(out, 0, sizeof *out);
  out->op = d->op;
  out->dtype = d->dtype;
  out->n = d->n;
  out->tier = d->tier;
  out->bytes_to_device = d->bytes_to_device;
  out->bytes_to_host = d->bytes_to_host;
  out->reproducible = d->reproducible;
  out->shadow_tier = d->shadow_state == XPAR__SHADOW_OFF ? XPAR_TIER_NONE : d->shadow_tier;
  out->shadow_mismatch = d->shadow_state == XPAR__SHADOW_MISMATCH;
  if (d->tier == XPAR_TIER_NONE)
    snprintf(out->reason, sizeof out->reason, "%s",
             ctx->calls_run ? "the last call failed before running"
                            : "no call has run on this context yet");
  else
    xpar__decision_format(d, out->reason, sizeof out->reason);
  return XPAR_OK;
}

XPAR_API xpar_status xpar_device_query(xpar_device_info *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  memset(out, 0, sizeof *out);
  out->device = -1;
  const xpar__backend *g = xpar__gpu_backend();
  if (!g) {
    snprintf(out->reason, sizeof out->reason, "built without CUDA");
    return XPAR_OK;
  }
  int device = -1;
  const char *env = getenv("XPAR_DEVICE");
  size_t d;
  if (env && xpar__parse_count(env, &d) == 0 && d <= 1024) device = (int)d;
  XPAR__FORWARD(g->query(device, out));
  out->built_with_cuda = 1;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_wait(xpar_context *ctx) {
  WITH_CONTEXT(ctx, { s_ = xpar__gpu_drain(ctx); });
}
