/* Public context functions: creation, policy setters and getters, introspection. */
#include "api.h"

XPAR_API xpar_status xpar_context_create(xpar_context **out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  const xpar_status st = xpar__context_new(out);
  /* Loading a profile may probe the device (its machine check), which selects it. */
  xpar__gpu_restore_caller();
  return st;
}

XPAR_API xpar_status xpar_context_destroy(xpar_context *ctx) {
  xpar__clear_error();
  if (!ctx) return XPAR_OK;
  XPAR__FORWARD(xpar__ctx_enter(ctx)); /* and never leaves: the context is gone */
  const xpar_status st = xpar__context_free(ctx);
  xpar__gpu_restore_caller(); /* freeing its GPU state selected its device */
  return st;
}

static xpar_status set_backend_entered(xpar_context *ctx, xpar_backend backend) {
  XPAR__RETURN_IF((unsigned)backend >= XPAR_BACKEND_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown backend %d", (int)backend);
  ctx->backend = backend;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_backend(xpar_context *ctx, xpar_backend backend) {
  XPAR__THROUGH_CONTEXT(ctx, set_backend_entered(ctx, backend));
}

XPAR_API xpar_status xpar_context_get_backend(const xpar_context *ctx, xpar_backend *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
  *out = ctx->backend;
  return XPAR_OK;
}

static xpar_status set_offload_entered(xpar_context *ctx, xpar_offload offload) {
  XPAR__RETURN_IF((unsigned)offload >= XPAR_OFFLOAD_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown offload policy %d", (int)offload);
  ctx->offload = offload;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_offload(xpar_context *ctx, xpar_offload offload) {
  XPAR__THROUGH_CONTEXT(ctx, set_offload_entered(ctx, offload));
}

XPAR_API xpar_status xpar_context_get_offload(const xpar_context *ctx, xpar_offload *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
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

static xpar_status set_threshold_entered(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                         xpar_threshold which, size_t n) {
  XPAR__FORWARD(check_threshold_key(op, dtype, which));
  ctx->thresholds[op][dtype][which] = n;
  ctx->threshold_source[op][dtype][which] = XPAR__SRC_API;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_threshold(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                                xpar_threshold which, size_t n) {
  XPAR__THROUGH_CONTEXT(ctx, set_threshold_entered(ctx, op, dtype, which, n));
}

XPAR_API xpar_status xpar_context_get_threshold(const xpar_context *ctx, xpar_op op,
                                                xpar_dtype dtype, xpar_threshold which,
                                                size_t *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
  XPAR__FORWARD(check_threshold_key(op, dtype, which));
  *out = ctx->thresholds[op][dtype][which];
  return XPAR_OK;
}

static xpar_status check_split_key(xpar_op op, xpar_dtype dtype, xpar_split_memory memory) {
  XPAR__RETURN_IF((unsigned)op >= XPAR_OP_COUNT_, XPAR_ERR_INVALID_ENUM, "unknown op %d", (int)op);
  XPAR__RETURN_IF(!xpar__dtype_valid(dtype), XPAR_ERR_INVALID_ENUM, "unknown dtype %d",
                  (int)dtype);
  XPAR__RETURN_IF((unsigned)memory >= XPAR_SPLIT_MEMORY_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown split memory %d", (int)memory);
  XPAR__RETURN_IF(!xpar__op_splits(op), XPAR_ERR_INVALID_ARGUMENT,
                  "%s has no split (the split covers reduce, scan, axpy, add, fill, dot, "
                  "histogram and segmented)",
                  xpar__op_name(op));
  return XPAR_OK;
}

static xpar_status set_split_entered(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                     xpar_split_memory memory, size_t from, double gpu_share) {
  XPAR__FORWARD(check_split_key(op, dtype, memory));
  XPAR__RETURN_IF(!(gpu_share > 0.0 && gpu_share < 1.0), XPAR_ERR_INVALID_ARGUMENT,
                  "gpu_share is %g; expected 0 < gpu_share < 1", gpu_share);
  ctx->split_from[op][dtype][memory] = from;
  ctx->split_share[op][dtype][memory] = (float)gpu_share;
  ctx->split_from_source[op][dtype][memory] = XPAR__SRC_API;
  ctx->split_share_source[op][dtype][memory] = XPAR__SRC_API;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_split(xpar_context *ctx, xpar_op op, xpar_dtype dtype,
                                            xpar_split_memory memory, size_t from,
                                            double gpu_share) {
  XPAR__THROUGH_CONTEXT(ctx, set_split_entered(ctx, op, dtype, memory, from, gpu_share));
}

XPAR_API xpar_status xpar_context_get_split(const xpar_context *ctx, xpar_op op,
                                            xpar_dtype dtype, xpar_split_memory memory,
                                            size_t *from, double *gpu_share) {
  /* Either output may be NULL, not both. */
  XPAR__FORWARD(xpar__read_door(ctx, from ? (void *)from : (void *)gpu_share, "from and gpu_share"));
  XPAR__FORWARD(check_split_key(op, dtype, memory));
  if (from) *from = ctx->split_from[op][dtype][memory];
  if (gpu_share) *gpu_share = ctx->split_share[op][dtype][memory];
  return XPAR_OK;
}

static xpar_status set_num_threads_entered(xpar_context *ctx, int num_threads) {
  XPAR__RETURN_IF(num_threads < 0, XPAR_ERR_INVALID_ARGUMENT,
                  "num_threads is %d; expected >= 0", num_threads);
  ctx->num_threads = num_threads;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_num_threads(xpar_context *ctx, int num_threads) {
  XPAR__THROUGH_CONTEXT(ctx, set_num_threads_entered(ctx, num_threads));
}

static xpar_status set_verbose_entered(xpar_context *ctx, int verbose) {
  ctx->verbose = verbose != 0;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_verbose(xpar_context *ctx, int verbose) {
  XPAR__THROUGH_CONTEXT(ctx, set_verbose_entered(ctx, verbose));
}

static xpar_status set_device_entered(xpar_context *ctx, int device) {
  XPAR__RETURN_IF(device < 0, XPAR_ERR_INVALID_ARGUMENT, "device is %d; expected >= 0", device);
  return xpar__context_set_device(ctx, device);
}

static xpar_status set_reproducible_entered(xpar_context *ctx, int on) {
  ctx->reproducible = on != 0;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_reproducible(xpar_context *ctx, int on) {
  XPAR__THROUGH_CONTEXT(ctx, set_reproducible_entered(ctx, on));
}

XPAR_API xpar_status xpar_context_get_reproducible(const xpar_context *ctx, int *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
  *out = ctx->reproducible;
  return XPAR_OK;
}

static xpar_status set_adapt_entered(xpar_context *ctx, int on) {
  ctx->adapt = on != 0;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_adapt(xpar_context *ctx, int on) {
  XPAR__THROUGH_CONTEXT(ctx, set_adapt_entered(ctx, on));
}

XPAR_API xpar_status xpar_context_get_adapt(const xpar_context *ctx, int *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
  *out = ctx->adapt;
  return XPAR_OK;
}

static xpar_status set_shadow_entered(xpar_context *ctx, xpar_tier tier, int fail_on_mismatch) {
  XPAR__RETURN_IF((unsigned)tier >= XPAR_TIER_COUNT_, XPAR_ERR_INVALID_ENUM, "unknown tier %d",
                  (int)tier);
  ctx->shadow_tier = tier;
  ctx->shadow_fail = fail_on_mismatch != 0;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_shadow(xpar_context *ctx, xpar_tier tier,
                                             int fail_on_mismatch) {
  XPAR__THROUGH_CONTEXT(ctx, set_shadow_entered(ctx, tier, fail_on_mismatch));
}

XPAR_API xpar_status xpar_context_get_shadow(const xpar_context *ctx, xpar_tier *tier,
                                             int *fail_on_mismatch) {
  XPAR__FORWARD(xpar__read_door(ctx, tier, "tier"));
  *tier = ctx->shadow_tier;
  if (fail_on_mismatch) *fail_on_mismatch = ctx->shadow_fail;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_device(xpar_context *ctx, int device) {
  XPAR__THROUGH_CONTEXT(ctx, set_device_entered(ctx, device));
}

XPAR_API xpar_status xpar_context_set_stream(xpar_context *ctx, void *cuda_stream) {
  XPAR__THROUGH_CONTEXT(ctx, xpar__context_set_stream(ctx, cuda_stream));
}

static xpar_status set_launch_shape_entered(xpar_context *ctx, unsigned grid, unsigned block) {
  XPAR__RETURN_IF(block > 1024, XPAR_ERR_INVALID_ARGUMENT, "block is %u; at most 1024 threads",
                  block);
  XPAR__RETURN_IF(grid > 0x7fffffffu, XPAR_ERR_INVALID_ARGUMENT,
                  "grid is %u; at most 2^31 - 1 blocks", grid);
  ctx->launch_grid = grid;
  ctx->launch_block = block;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_context_set_launch_shape(xpar_context *ctx, unsigned grid,
                                                   unsigned block) {
  XPAR__THROUGH_CONTEXT(ctx, set_launch_shape_entered(ctx, grid, block));
}

XPAR_API xpar_status xpar_context_release_memory(xpar_context *ctx) {
  XPAR__THROUGH_CONTEXT(ctx, xpar__context_release_memory(ctx));
}

XPAR_API xpar_status xpar_last_decision(const xpar_context *ctx, xpar_decision *out) {
  XPAR__FORWARD(xpar__read_door(ctx, out, "out"));
  xpar__context_last_decision(ctx, out);
  return XPAR_OK;
}

XPAR_API xpar_status xpar_device_query(xpar_device_info *out) {
  xpar__clear_error();
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "out is NULL");
  return xpar__device_query(out);
}

XPAR_API xpar_status xpar_wait(xpar_context *ctx) {
  XPAR__THROUGH_CONTEXT(ctx, xpar__gpu_drain(ctx));
}
