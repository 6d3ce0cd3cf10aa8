/* Host scratch a context keeps between calls (host_scratch.h). */
#include "base/host_scratch.h"

#include <stdlib.h>

xpar_status xpar__host_scratch_get(xpar__host_scratch *s, size_t bytes, const char *what,
                                   void **out) {
  if (s->bytes < bytes || !s->ptr) {
    xpar__host_scratch_free(s);
    /* Whole cache lines, and at least one: aligned_alloc wants a multiple
     * of the alignment. */
    const size_t rounded = bytes > SIZE_MAX - 63 ? 0 : ((bytes ? bytes : 1) + 63) & ~(size_t)63;
    void *p = rounded ? aligned_alloc(64, rounded) : NULL;
    XPAR__RETURN_IF(!p, XPAR_ERR_OUT_OF_MEMORY, "host scratch for %s (%zu bytes)", what, bytes);
    s->ptr = p;
    s->bytes = rounded;
  }
  *out = s->ptr;
  return XPAR_OK;
}

void xpar__host_scratch_free(xpar__host_scratch *s) {
  free(s->ptr);
  s->ptr = NULL;
  s->bytes = 0;
}
