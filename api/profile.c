/* Public calibration-profile functions; dispatch/profile.c reads and writes
 * the files (format: docs/profile.md). */
#include "api.h"

XPAR_API xpar_status xpar_profile_default_path(char *buf, size_t size) {
  xpar__clear_error();
  XPAR__RETURN_IF(!buf, XPAR_ERR_NULL_POINTER, "buf is NULL");
  return xpar__profile_default_path(buf, size);
}

static xpar_status load_entered(xpar_context *ctx, const char *path, int *applied) {
  XPAR__RETURN_IF(!path, XPAR_ERR_NULL_POINTER, "path is NULL");
  int ok = 0;
  XPAR__FORWARD(xpar__profile_load(ctx, path, 1, &ok));
  if (applied) *applied = ok;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_profile_load(xpar_context *ctx, const char *path, int *applied) {
  XPAR__THROUGH_CONTEXT(ctx, load_entered(ctx, path, applied));
}

static xpar_status save_entered(xpar_context *ctx, const char *path) {
  XPAR__RETURN_IF(!path, XPAR_ERR_NULL_POINTER, "path is NULL");
  return xpar__profile_save(ctx, path);
}

XPAR_API xpar_status xpar_profile_save(xpar_context *ctx, const char *path) {
  XPAR__THROUGH_CONTEXT(ctx, save_entered(ctx, path));
}
