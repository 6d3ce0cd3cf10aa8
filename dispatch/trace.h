/*
 * NVTX ranges around each call that touches the GPU, so that an application
 * profiling with Nsight Systems sees xpar's work beside its own: one range per
 * call in the domain "xpar", named "<op> <dtype> <tier>" (e.g. "reduce int32
 * cuda", "scan double cpu-serial" for a CPU call that stages device data),
 * with n as the range's 64-bit payload.  Names are registered strings,
 * created once per (op, dtype, tier): the hot path formats nothing, and with
 * no profiler attached each push and pop is a call to an empty function.
 * Built without CUDA, these are empty inline functions.
 */
#ifndef XPAR_DISPATCH_TRACE_H
#define XPAR_DISPATCH_TRACE_H

#include "dispatch.h"

#if defined(XPAR_HAVE_CUDA)
void xpar__trace_push(const xpar__call *c, xpar_tier tier);
void xpar__trace_pop(void);
#else
static inline void xpar__trace_push(const xpar__call *c, xpar_tier tier) {
  (void)c;
  (void)tier;
}
static inline void xpar__trace_pop(void) {}
#endif

#endif /* XPAR_DISPATCH_TRACE_H */
