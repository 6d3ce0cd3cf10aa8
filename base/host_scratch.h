/*
 * Host scratch a context keeps between calls: grown when a call needs more,
 * never shrunk per call, freed by xpar_context_release_memory and with the
 * context.  A CPU backend operation that needs working memory (sort's second
 * buffer) takes it from here, so that a steady stream of calls allocates
 * nothing.
 */
#ifndef XPAR_BASE_HOST_SCRATCH_H
#define XPAR_BASE_HOST_SCRATCH_H

#include <stddef.h>

#include "base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xpar__host_scratch {
  void *ptr;    /* 64-byte aligned; NULL until the first call that needs it */
  size_t bytes; /* its size */
} xpar__host_scratch;

/** At least `bytes` of scratch in *out (64-byte aligned): the kept block, or a
 *  larger one replacing it (its contents are not kept).  XPAR_ERR_OUT_OF_MEMORY
 *  with a detail naming `what` when the allocation fails (the kept block is
 *  then freed). */
xpar_status xpar__host_scratch_get(xpar__host_scratch *s, size_t bytes, const char *what,
                                   void **out);

/** Free the kept block (NULL-safe; s is then empty). */
void xpar__host_scratch_free(xpar__host_scratch *s);

#ifdef __cplusplus
}
#endif

#endif /* XPAR_BASE_HOST_SCRATCH_H */
