/* Public residency functions: the mappings (OpenMP "target data" for xpar),
 * whose copies dispatch's residency module keeps, and the memory query that
 * classifies a pointer as the context's calls do. */
#include "api.h"

static xpar_status map_entered(xpar_context *ctx, void *host, size_t bytes, xpar_map_kind kind) {
  XPAR__RETURN_IF(!host, XPAR_ERR_NULL_POINTER, "host is NULL");
  XPAR__RETURN_IF(bytes == 0, XPAR_ERR_INVALID_ARGUMENT, "bytes is 0");
  XPAR__RETURN_IF((unsigned)kind >= XPAR_MAP_KIND_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown map kind %d", (int)kind);
  XPAR__RETURN_IF((uintptr_t)host > UINTPTR_MAX - bytes, XPAR_ERR_SIZE_OVERFLOW,
                  "host + bytes overflows the address space");
  return xpar__mapping_add(ctx, host, bytes, kind);
}

static xpar_status update_entered(xpar_context *ctx, void *host, xpar_update_dir dir) {
  XPAR__RETURN_IF(!host, XPAR_ERR_NULL_POINTER, "host is NULL");
  XPAR__RETURN_IF((unsigned)dir >= XPAR_UPDATE_DIR_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown update direction %d", (int)dir);
  return xpar__mapping_update(ctx, host, dir);
}

static xpar_status unmap_entered(xpar_context *ctx, void *host, xpar_unmap_kind kind) {
  XPAR__RETURN_IF(!host, XPAR_ERR_NULL_POINTER, "host is NULL");
  XPAR__RETURN_IF((unsigned)kind >= XPAR_UNMAP_KIND_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown unmap kind %d", (int)kind);
  return xpar__mapping_remove(ctx, host, kind);
}

static xpar_status device_ptr_entered(xpar_context *ctx, const void *host, void **out) {
  XPAR__RETURN_IF(!host || !out, XPAR_ERR_NULL_POINTER, "%s is NULL", host ? "out" : "host");
  return xpar__mapping_device_ptr(ctx, host, out);
}

static xpar_status memory_query_entered(xpar_context *ctx, const void *ptr, size_t bytes,
                                       xpar_memory_kind *out) {
  XPAR__RETURN_IF(!ptr || !out, XPAR_ERR_NULL_POINTER, "%s is NULL", ptr ? "out" : "ptr");
  if (bytes == 0) bytes = 1;
  XPAR__RETURN_IF((uintptr_t)ptr > UINTPTR_MAX - bytes, XPAR_ERR_SIZE_OVERFLOW,
                  "ptr + bytes overflows the address space");
  xpar__operand w;
  /* The driver is asked even for a page the cache holds as pageable, and a
   * new page is not stored (that would end the context's repeats). */
  XPAR__FORWARD(xpar__classify(ctx, ptr, bytes, XPAR__CLASSIFY_QUERY, &w));
  switch (w.loc) {
    case XPAR__LOC_HOST_PINNED: *out = XPAR_MEMORY_PINNED; break;
    case XPAR__LOC_MAPPED: *out = XPAR_MEMORY_MAPPED; break;
    case XPAR__LOC_DEVICE: *out = XPAR_MEMORY_DEVICE; break;
    case XPAR__LOC_MANAGED: *out = XPAR_MEMORY_MANAGED; break;
    default: *out = XPAR_MEMORY_HOST; break;
  }
  return XPAR_OK;
}

XPAR_API xpar_status xpar_map(xpar_context *ctx, void *host, size_t bytes, xpar_map_kind kind) {
  XPAR__THROUGH_CONTEXT(ctx, map_entered(ctx, host, bytes, kind));
}
XPAR_API xpar_status xpar_update(xpar_context *ctx, void *host, xpar_update_dir dir) {
  XPAR__THROUGH_CONTEXT(ctx, update_entered(ctx, host, dir));
}
XPAR_API xpar_status xpar_unmap(xpar_context *ctx, void *host, xpar_unmap_kind kind) {
  XPAR__THROUGH_CONTEXT(ctx, unmap_entered(ctx, host, kind));
}
XPAR_API xpar_status xpar_mapped_device_ptr(xpar_context *ctx, const void *host, void **out) {
  XPAR__THROUGH_CONTEXT(ctx, device_ptr_entered(ctx, host, out));
}
/* A query changes no setting: the context's repeats stand (XPAR__OP_...). */
XPAR_API xpar_status xpar_memory_query(xpar_context *ctx, const void *ptr, size_t bytes,
                                       xpar_memory_kind *out) {
  XPAR__OP_THROUGH_CONTEXT(ctx, memory_query_entered(ctx, ptr, bytes, out));
}
