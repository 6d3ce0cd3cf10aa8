/*
 * Application kernels (xpar_kernel.h): their thresholds in each context.
 * A kernel is not an op of the op map (its cost is the application's, and
 * the op tables are per dtype), so each context keeps a small table of the
 * kernels it has met, each with its own four thresholds and their sources.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

#define POW2(x) ((size_t)1 << (x))

/* No kernel of an application has been measured by xpar: the defaults are
 * the elementwise add's of the 2026-11-22 calibration (OpenMP 2^15, device
 * data 2^19), the nearest built-in op to a body that reads and writes a few
 * arrays once per index (the add's own have moved since: thresholds.c), and
 * data valid only on the device stays there (0).  A kernel doing
 * more work per index crosses to the GPU earlier: set its thresholds
 * (XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD or xpar_context_set_kernel_threshold). */
static const xpar__provenance kernel_defaults_from = {
    .machine = XPAR__H100_HOST,
    .date = "2026-11-22",
    .run = "not measured for kernels: the elementwise add's of xpar-bench calibrate; "
           "measure a kernel's own with xpar_kernel_calibrate",
    .brief = "not measured for kernels: the add's of 2026-11-22"};
static const size_t kernel_defaults[XPAR_THRESHOLD_COUNT_] = {
    [XPAR_THRESHOLD_OPENMP] = POW2(15),
    [XPAR_THRESHOLD_GPU_DEVICE_DATA] = POW2(19),
    [XPAR_THRESHOLD_GPU_PINNED_DATA] = XPAR_NEVER,
    [XPAR_THRESHOLD_GPU_PAGEABLE_DATA] = XPAR_NEVER,
    /* 0, as for add: data valid only on the device stays there. */
    [XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA] = 0,
};

const xpar__provenance *xpar__kernel_default_from(void) { return &kernel_defaults_from; }

/* XPAR_ALL_<KIND>_THRESHOLD, then XPAR_KERNEL_<NAME>_<KIND>_THRESHOLD: <NAME> is the
 * kernel's whole name, upper case, other characters as '_'. */
static xpar_status apply_env(const char *kernel_name, xpar__kernel_entry *e) {
  const size_t len = strlen(kernel_name);
  /* "XPAR_KERNEL_" + name + "_GPU_DEVICE_ONLY_THRESHOLD" and its NUL fit in len + 64. */
  const size_t size = len + 64;
  char *own = malloc(size);
  XPAR__RETURN_IF(!own, XPAR_ERR_OUT_OF_MEMORY,
                  "kernel %.60s: its environment variables' names (%zu bytes)", kernel_name,
                  size);
  size_t prefix = (size_t)snprintf(own, size, "XPAR_KERNEL_");
  for (size_t c = 0; c < len; c++)
    own[prefix++] = isalnum((unsigned char)kernel_name[c])
                        ? (char)toupper((unsigned char)kernel_name[c])
                        : '_';
  xpar_status st = XPAR_OK;
  for (int k = 0; k < XPAR_THRESHOLD_COUNT_ && st == XPAR_OK; k++) {
    const char *kind = xpar__threshold_env((xpar_threshold)k);
    char all[64];
    snprintf(all, sizeof all, "XPAR_ALL_%s_THRESHOLD", kind);
    snprintf(own + prefix, size - prefix, "_%s_THRESHOLD", kind);
    const char *const names[2] = {all, own};
    for (int i = 0; i < 2 && st == XPAR_OK; i++) {
      const char *v = getenv(names[i]);
      if (!v) continue;
      size_t n;
      if (xpar__parse_count(v, &n) != 0) {
        st = xpar__fail(XPAR_ERR_INVALID_ENV,
                        "%s=\"%s\" is invalid: expected an element count, 2^k (k < 64) or "
                        "\"never\"",
                        names[i], v);
        continue;
      }
      e->thresholds[k] = n;
      e->sources[k] = XPAR__SRC_ENV;
    }
  }
  free(own);
  return st;
}

xpar_status xpar__kernel_entry_of(xpar_context *ctx, const void *key, const char *name,
                                  xpar__kernel_entry **out) {
  for (size_t i = 0; i < ctx->n_kernels; i++)
    if (ctx->kernels[i].key == key) {
      *out = &ctx->kernels[i];
      return XPAR_OK;
    }
  xpar__kernel_entry e;
  e.key = key;
  e.name = name;
  e.adapt = NULL;
  for (int t = 0; t < XPAR_THRESHOLD_COUNT_; t++) {
    e.thresholds[t] = kernel_defaults[t];
    e.sources[t] = XPAR__SRC_DEFAULT;
  }
  /* Precedence, lowest first: defaults, the creation's profile, the environment, a
   * profile xpar_profile_load() applied since (then the API). */
  xpar__profile_apply_kernel(ctx->profile_kernels, ctx->n_profile_kernels, name,
                             XPAR__PROFILE_BELOW_ENV, &e);
  XPAR__FORWARD(apply_env(name, &e));
  xpar__profile_apply_kernel(ctx->profile_kernels, ctx->n_profile_kernels, name,
                             XPAR__PROFILE_OVER_ENV, &e);
  if (ctx->n_kernels == ctx->cap_kernels) {
    size_t cap = ctx->cap_kernels ? 2 * ctx->cap_kernels : 8;
    xpar__kernel_entry *grown = realloc(ctx->kernels, cap * sizeof *grown);
    XPAR__RETURN_IF(!grown, XPAR_ERR_OUT_OF_MEMORY, "growing the kernel table to %zu", cap);
    ctx->kernels = grown;
    ctx->cap_kernels = cap;
  }
  ctx->kernels[ctx->n_kernels] = e;
  *out = &ctx->kernels[ctx->n_kernels++];
  return XPAR_OK;
}

void xpar__kernels_release(xpar_context *ctx) {
  for (size_t i = 0; i < ctx->n_kernels; i++) free(ctx->kernels[i].adapt);
  free(ctx->kernels);
  ctx->kernels = NULL;
  ctx->n_kernels = ctx->cap_kernels = 0;
  xpar__profile_kernels_free(ctx->profile_kernels, ctx->n_profile_kernels);
  ctx->profile_kernels = NULL;
  ctx->n_profile_kernels = 0;
}
