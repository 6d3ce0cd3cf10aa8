/* NVTX ranges around GPU-touching calls (see trace.h). */
#include "trace.h"

#if defined(XPAR_HAVE_CUDA)
#include <stdatomic.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

/* Reduce and its wide sum are told apart: they run different kernels. */
enum { TRACE_OPS = XPAR_OP_COUNT_ + 1, TRACE_WIDE = XPAR_OP_COUNT_ };

static _Atomic(nvtxDomainHandle_t) domain;
static atomic_int domain_tried;
/* 0: not registered yet; 1: registration returned nothing (no profiler); else
 * the handle.  Two threads may register the same name at once: the profiler
 * then sees two handles for one string, which is harmless. */
static _Atomic(uintptr_t) names[TRACE_OPS][XPAR_DTYPE_COUNT_][XPAR_TIER_COUNT_];

static nvtxDomainHandle_t trace_domain(void) {
  if (!atomic_load_explicit(&domain_tried, memory_order_acquire)) {
    nvtxDomainHandle_t h = nvtxDomainCreateA("xpar");
    nvtxDomainHandle_t expected = NULL;
    if (!atomic_compare_exchange_strong(&domain, &expected, h) && h) nvtxDomainDestroy(h);
    atomic_store_explicit(&domain_tried, 1, memory_order_release);
  }
  return atomic_load_explicit(&domain, memory_order_acquire);
}

static nvtxStringHandle_t trace_name(nvtxDomainHandle_t dom, int op, xpar_dtype dtype,
                                     xpar_tier tier) {
  _Atomic(uintptr_t) *slot = &names[op][dtype][tier];
  uintptr_t h = atomic_load_explicit(slot, memory_order_acquire);
  if (h == 0) {
    char text[64];
    snprintf(text, sizeof text, "%s %s %s",
             op == TRACE_WIDE ? "reduce_sum_wide" : xpar__op_name((xpar_op)op),
             xpar__dtype_name(dtype), xpar__tier_name(tier));
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, text);
    h = reg ? (uintptr_t)reg : 1;
    atomic_store_explicit(slot, h, memory_order_release);
  }
  return h == 1 ? NULL : (nvtxStringHandle_t)h;
}

void xpar__trace_push(const xpar__call *c, xpar_tier tier) {
  nvtxDomainHandle_t dom = trace_domain();
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = trace_name(dom, c->wide ? TRACE_WIDE : (int)c->op, c->dtype, tier);
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = c->n;
  nvtxDomainRangePushEx(dom, &a);
}

void xpar__trace_pop(void) { nvtxDomainRangePop(trace_domain()); }
#endif
