/*
 * Where data lives: classifying pointers, and the mapped arrays of a context
 * (OpenMP "target data" for xpar), with which copy of each is valid; and the
 * host staging buffers that data valid only on the device is copied through.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static xpar__mapping *find_mapping(xpar_context *ctx, const void *p) {
  const unsigned char *c = (const unsigned char *)p;
  for (size_t i = 0; i < ctx->n_maps; i++) {
    xpar__mapping *m = &ctx->maps[i];
    if (c >= m->host && c < m->host + m->bytes) return m;
  }
  return NULL;
}

/* An array is either inside one mapping or clear of all of them: one that
 * straddles a mapping's edge would have part of it valid on one side only. */
int xpar__mapping_holding(const xpar_context *ctx, const void *ptr, size_t bytes,
                          xpar__mapping **out) {
  const unsigned char *lo = (const unsigned char *)ptr, *hi = lo + bytes;
  for (size_t i = 0; i < ctx->n_maps; i++) {
    xpar__mapping *m = &ctx->maps[i];
    if (!(lo < m->host + m->bytes && m->host < hi)) continue;
    *out = m;
    return lo < m->host || hi > m->host + m->bytes ? -1 : 1;
  }
  *out = NULL;
  return 0;
}

void xpar__note_driver_memory(xpar_context *ctx, const void *p) {
  if (xpar__page_cache_in_driver_range(&ctx->page_cache, p)) return;
  uintptr_t start = (uintptr_t)p;
  size_t size = 1;
  const xpar__backend *g = xpar__gpu_backend();
  if (!g->pointer_range || !g->pointer_range(p, &start, &size)) start = (uintptr_t)p, size = 1;
  xpar__page_cache_note_driver(&ctx->page_cache, start, size);
}

static xpar_status pointer_kind_cached(xpar_context *ctx, const void *p, int mode,
                                       xpar__ptr_kind *out, int *hinted) {
  if (mode == XPAR__CLASSIFY_CACHED && xpar__page_cache_lookup(&ctx->page_cache, p)) {
    *out = XPAR__PTR_HOST_PAGEABLE;
    *hinted = 1;
    return XPAR_OK;
  }
  XPAR__FORWARD(xpar__gpu_backend()->pointer_kind(p, out));
  /* Only pageable answers are cached (page_cache.h): freed pinned memory can
   * come back as device memory, and managed ranges as device ranges.  A new
   * page ends the repeats (dispatch.h), which a query must not do. */
  if (*out != XPAR__PTR_HOST_PAGEABLE)
    xpar__note_driver_memory(ctx, p);
  else if (mode != XPAR__CLASSIFY_QUERY)
    xpar__page_cache_store(&ctx->page_cache, p);
  return XPAR_OK;
}

/* Device memory of another device than ctx's, with several visible: refused unless
 * the driver says ctx's device reaches it (peer access the application enabled), since
 * a kernel's first load from it would fault and end the CUDA context of the whole
 * process, and the copies of the CPU tier would go through the wrong device.  One
 * driver look-up per device operand, only where several devices are visible. */
static xpar_status check_device_owner(xpar_context *ctx, const void *ptr, size_t bytes) {
  const xpar__backend *g = xpar__gpu_backend();
  if (ctx->gpu_count < 2 || !g->device_of) return XPAR_OK;
  const int owner = g->device_of(ptr), mine = ctx->device < 0 ? 0 : ctx->device;
  if (owner < 0 || owner == mine) return XPAR_OK;
  struct xpar__cuda_state *st;
  if (g->device_can_access && xpar__gpu_state(ctx, &st) == XPAR_OK &&
      g->device_can_access(st, ptr))
    return XPAR_OK;
  return xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                    "array [%p, +%zu bytes) is device memory of device %d, and this context "
                    "runs on device %d, which cannot access it: allocate it on device %d, move "
                    "the context (xpar_context_set_device), or enable peer access "
                    "(cudaDeviceEnablePeerAccess)",
                    ptr, bytes, owner, mine, mine);
}

xpar_status xpar__classify(xpar_context *ctx, const void *ptr, size_t bytes, int mode,
                           xpar__operand *out) {
  out->ptr = ptr;
  out->bytes = bytes;
  out->map = NULL;
  out->loc = XPAR__LOC_HOST_PAGEABLE;
  out->kind_hinted = 0;
  if (ctx->n_maps) {
    xpar__mapping *m;
    const int held = xpar__mapping_holding(ctx, ptr, bytes, &m);
    XPAR__RETURN_IF(held < 0, XPAR_ERR_INVALID_ARGUMENT,
                    "array [%p, +%zu bytes) straddles the edge of the mapping [%p, +%zu); "
                    "pass arrays that lie inside a mapping or outside all of them",
                    ptr, bytes, (void *)m->host, m->bytes);
    if (held) {
      out->loc = XPAR__LOC_MAPPED;
      out->map = m;
      return XPAR_OK;
    }
  }
  /* Without a usable GPU, or with offload disabled, every pointer is host
   * memory: no CUDA call is made at all. */
  if (ctx->offload == XPAR_OFFLOAD_DISABLED || !xpar__gpu_usable(ctx, NULL)) return XPAR_OK;
  xpar__ptr_kind kind = XPAR__PTR_HOST_PAGEABLE;
  const xpar_status known = pointer_kind_cached(ctx, ptr, mode, &kind, &out->kind_hinted);
  if (known != XPAR_OK) {
    /* Device memory the backend refused (an application's own driver context, backend.h:
     * pointer_kind) is still device memory to xpar__classified_device: never read on the
     * host as a scalar. */
    if (kind == XPAR__PTR_DEVICE) out->loc = XPAR__LOC_DEVICE;
    return known;
  }
  switch (kind) {
    case XPAR__PTR_HOST_PINNED: out->loc = XPAR__LOC_HOST_PINNED; break;
    case XPAR__PTR_DEVICE: out->loc = XPAR__LOC_DEVICE; break;
    case XPAR__PTR_MANAGED: out->loc = XPAR__LOC_MANAGED; break;
    default: out->loc = XPAR__LOC_HOST_PAGEABLE; break;
  }
  /* The query refuses what the calls refuse (xpar_memory_query: code beside xpar, such
   * as xpar_mpi, asks it before anything is exchanged or written). */
  if (out->loc == XPAR__LOC_DEVICE) return check_device_owner(ctx, ptr, bytes);
  return XPAR_OK;
}

int xpar__classified_device(xpar_context *ctx, const void *p, size_t bytes,
                            xpar__operand *w) {
  if (xpar__classify(ctx, p, bytes, XPAR__CLASSIFY_CACHED, w) == XPAR_OK)
    return w->loc == XPAR__LOC_DEVICE;
  /* Device memory refused (another device's): the detail says why. */
  if (w->loc == XPAR__LOC_DEVICE) return -1;
  xpar__clear_error();
  return 0;
}

xpar_status xpar__check_host_scalar(xpar_context *ctx, const char *name, const void *p,
                                    size_t size) {
  xpar__operand w;
  XPAR__RETURN_IF(xpar__classified_device(ctx, p, size, &w), XPAR_ERR_INVALID_ARGUMENT,
                  "%s (%p) is device memory; pass a host scalar", name, p);
  return XPAR_OK;
}

xpar_status xpar__mapping_sync_host(xpar_context *ctx, xpar__mapping *m, size_t *moved) {
  if (m->valid & XPAR__VALID_HOST) return XPAR_OK;
  XPAR__FORWARD(xpar__gpu_backend()->copy(ctx->cuda, m->host, m->device, m->bytes,
                                          XPAR__DEVICE_TO_HOST));
  m->valid = XPAR__VALID_BOTH;
  *moved += m->bytes;
  return XPAR_OK;
}

xpar_status xpar__mapping_sync_device(xpar_context *ctx, xpar__mapping *m, size_t *moved) {
  if (m->valid & XPAR__VALID_DEVICE) return XPAR_OK;
  XPAR__FORWARD(xpar__gpu_backend()->copy(ctx->cuda, m->device, m->host, m->bytes,
                                          XPAR__HOST_TO_DEVICE));
  m->valid = XPAR__VALID_BOTH;
  *moved += m->bytes;
  return XPAR_OK;
}

void xpar__mappings_release_all(xpar_context *ctx) {
  const xpar__backend *g = xpar__gpu_backend();
  for (size_t i = 0; i < ctx->n_maps; i++)
    if (g && ctx->cuda) g->free(ctx->cuda, ctx->maps[i].device);
  free(ctx->maps);
  ctx->maps = NULL;
  ctx->n_maps = ctx->cap_maps = 0;
}

/* ---- the mapping operations behind api/mapping.c ------------------------------ */

static xpar__mapping *find_exact(xpar_context *ctx, const void *host) {
  for (size_t i = 0; i < ctx->n_maps; i++)
    if (ctx->maps[i].host == (const unsigned char *)host) return &ctx->maps[i];
  return NULL;
}

xpar_status xpar__mapping_add(xpar_context *ctx, void *host, size_t bytes, xpar_map_kind kind) {
  XPAR__RETURN_IF(ctx->offload == XPAR_OFFLOAD_DISABLED, XPAR_ERR_NO_DEVICE,
                  "offload is disabled: nothing can be mapped");
  const unsigned char *lo = host, *hi = lo + bytes;
  for (size_t i = 0; i < ctx->n_maps; i++) {
    const xpar__mapping *m = &ctx->maps[i];
    XPAR__RETURN_IF(lo < m->host + m->bytes && m->host < hi, XPAR_ERR_ALREADY_MAPPED,
                    "[%p, +%zu) overlaps the mapping [%p, +%zu)", host, bytes, (void *)m->host,
                    m->bytes);
  }
  struct xpar__cuda_state *st;
  XPAR__FORWARD(xpar__gpu_state(ctx, &st));
  const xpar__backend *g = xpar__gpu_backend();
  xpar_status s = xpar__gpu_drain(ctx);
  if (s != XPAR_OK) return s;
  if (ctx->n_maps == ctx->cap_maps) {
    size_t cap = ctx->cap_maps ? ctx->cap_maps * 2 : 8;
    xpar__mapping *grown = realloc(ctx->maps, cap * sizeof *grown);
    XPAR__RETURN_IF(!grown, XPAR_ERR_OUT_OF_MEMORY, "growing the mapping table to %zu", cap);
    ctx->maps = grown;
    ctx->cap_maps = cap;
  }
  void *dev;
  XPAR__FORWARD(g->alloc(st, bytes, &dev));
  if (kind == XPAR_MAP_TO) {
    s = g->copy(st, dev, host, bytes, XPAR__HOST_TO_DEVICE);
    if (s == XPAR_OK) s = g->wait(st);
    if (s != XPAR_OK) {
      g->free(st, dev);
      return s;
    }
  }
  xpar__mapping *m = &ctx->maps[ctx->n_maps++];
  m->host = host;
  m->device = dev;
  m->bytes = bytes;
  m->valid = kind == XPAR_MAP_TO ? XPAR__VALID_BOTH : XPAR__VALID_HOST;
  return XPAR_OK;
}

xpar_status xpar__mapping_update(xpar_context *ctx, void *host, xpar_update_dir dir) {
  xpar__mapping *m = find_exact(ctx, host);
  XPAR__RETURN_IF(!m, XPAR_ERR_NOT_MAPPED, "%p is not the start of a mapping", host);
  const xpar__backend *g = xpar__gpu_backend();
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  if (dir == XPAR_UPDATE_TO_DEVICE) {
    XPAR__FORWARD(g->copy(ctx->cuda, m->device, m->host, m->bytes, XPAR__HOST_TO_DEVICE));
    XPAR__FORWARD(g->wait(ctx->cuda));
    m->valid = XPAR__VALID_BOTH;
  } else if (m->valid != XPAR__VALID_HOST) {
    /* When the last xpar call that wrote the array ran on the CPU, the host
     * copy is the newer one (and stays the only valid one): copying the
     * device copy over it would lose the result, and the caller cannot know
     * where AUTO ran it. */
    XPAR__FORWARD(g->copy(ctx->cuda, m->host, m->device, m->bytes, XPAR__DEVICE_TO_HOST));
    m->valid = XPAR__VALID_BOTH;
  }
  return XPAR_OK;
}

xpar_status xpar__mapping_remove(xpar_context *ctx, void *host, xpar_unmap_kind kind) {
  xpar__mapping *m = find_exact(ctx, host);
  XPAR__RETURN_IF(!m, XPAR_ERR_NOT_MAPPED, "%p is not the start of a mapping", host);
  const xpar__backend *g = xpar__gpu_backend();
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  if (kind == XPAR_UNMAP_FROM && m->valid != XPAR__VALID_HOST)
    XPAR__FORWARD(g->copy(ctx->cuda, m->host, m->device, m->bytes, XPAR__DEVICE_TO_HOST));
  g->free(ctx->cuda, m->device);
  *m = ctx->maps[--ctx->n_maps];
  return XPAR_OK;
}

xpar_status xpar__mapping_device_ptr(xpar_context *ctx, const void *host, void **out) {
  xpar__mapping *m = find_mapping(ctx, host);
  XPAR__RETURN_IF(!m, XPAR_ERR_NOT_MAPPED, "%p is not inside a mapping", host);
  /* The application's kernels will read it: bring the device copy up to date. */
  XPAR__FORWARD(xpar__gpu_drain(ctx));
  size_t moved = 0;
  XPAR__FORWARD(xpar__mapping_sync_device(ctx, m, &moved));
  *out = m->device + ((const unsigned char *)host - m->host);
  return XPAR_OK;
}

void xpar__host_staging_free(xpar_context *ctx, int slot) {
  /* In the context's device's context (backend.h: host_free), while its GPU state
   * lives (xpar__context_free frees the staging first). */
  if (ctx->host_staging_pinned[slot])
    xpar__gpu_backend()->host_free(ctx->cuda, ctx->host_staging[slot]);
  else
    free(ctx->host_staging[slot]);
  ctx->host_staging[slot] = NULL;
  ctx->host_staging_bytes[slot] = 0;
  ctx->host_staging_pinned[slot] = 0;
}

/* A host staging buffer of the context (split.h): pinned where the GPU backend
 * can allocate it, else malloc'd; kept and grown per slot. */
xpar_status xpar__host_staging(xpar_context *ctx, int slot, size_t bytes, void **out) {
  if (ctx->host_staging_bytes[slot] < bytes) {
    const xpar__backend *g = xpar__gpu_backend();
    xpar__host_staging_free(ctx, slot);
    void *p = NULL;
    struct xpar__cuda_state *st = NULL;
    if (g && g->host_alloc && xpar__gpu_state(ctx, &st) == XPAR_OK &&
        g->host_alloc(st, bytes, &p) == XPAR_OK) {
      ctx->host_staging_pinned[slot] = 1;
    } else {
      xpar__clear_error(); /* no pinned memory to be had: pageable serves */
      p = malloc(bytes);
      XPAR__RETURN_IF(!p, XPAR_ERR_OUT_OF_MEMORY,
                      "host staging for a device operand (%zu bytes)", bytes);
    }
    ctx->host_staging[slot] = p;
    ctx->host_staging_bytes[slot] = bytes;
  }
  *out = ctx->host_staging[slot];
  return XPAR_OK;
}
