/* The door's refusals (api.h): out of line, so that the passing checks stay a
 * few inline instructions in every entry point. */
#include <stdint.h>

#include "api.h"

xpar_status xpar__ctx_busy(void) {
  return xpar__fail(XPAR_ERR_CONTEXT_BUSY,
                    "the context is in use by another thread; use one context per thread");
}

xpar_status xpar__check_array_refused(const char *name, const void *p, size_t n, size_t bytes,
                                      xpar_dtype dtype) {
  XPAR__RETURN_IF(n > 0 && !p, XPAR_ERR_NULL_POINTER, "%s is NULL (n = %zu)", name, n);
  /* Elements must be naturally aligned: the GPU faults on anything else, so
   * every backend refuses it alike. */
  size_t size = xpar__dtype_size(dtype);
  XPAR__RETURN_IF((uintptr_t)p & (size - 1), XPAR_ERR_INVALID_ARGUMENT,
                  "%s (%p) is not aligned to its %zu-byte elements", name, p, size);
  XPAR__RETURN_IF(p && (uintptr_t)p > UINTPTR_MAX - bytes, XPAR_ERR_SIZE_OVERFLOW,
                  "%s + %zu bytes overflows the address space", name, bytes);
  return xpar__fail(XPAR_ERR_INTERNAL, "%s: the array check refused an array it then found valid",
                    name);
}
