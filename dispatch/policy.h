/*
 * AUTO's decision, and the forced policies', as one pure function: the facts
 * of a call in, the tier and the raw decision record out.  Every path of
 * dispatch (the general one, which classifies every operand, and the host
 * fast path, which knows its operands from the page cache) gathers the facts
 * it has and asks this function; nothing else decides.  Pure: it reads only
 * its arguments, so tests can drive every branch without a GPU.
 */
#ifndef XPAR_DISPATCH_POLICY_H
#define XPAR_DISPATCH_POLICY_H

#include "context.h"

typedef struct xpar__policy_facts {
  xpar_backend backend;
  xpar_offload offload;
  xpar_op op;
  xpar_dtype dtype;
  size_t n;
  /* Where the operands' valid copies are (0/1 each). */
  int device_only; /* some operand is valid only on the device             */
  int pageable;    /* some operand is pageable host data (or priced so)     */
  int pinned;      /* some operand is pinned host data                      */
  int host;        /* some operand is host memory (pinned or pageable)      */
  int host_kind_exact; /* pinned/pageable was asked of the runtime, not a
                          cached hint (page_cache.h)                         */
  /* This op and dtype's thresholds and where each came from (xpar__source). */
  const size_t *thresholds;
  const unsigned char *sources;
  /* Set when the call already failed on the GPU for a reason AUTO may work
   * around (out of GPU memory), with every operand reachable from the host:
   * the text of that failure.  NULL otherwise. */
  const char *gpu_failed;
  /* Whether the GPU is usable (and why not), asked only when the decision
   * depends on it: probing initialises CUDA, which a call that stays on the
   * CPU must not pay for. */
  int (*gpu_usable)(void *arg, const char **why_not);
  void *gpu_usable_arg;
} xpar__policy_facts;

/**
 * Decide where a call runs.  Fills the raw record's rules, thresholds and
 * sources (not op/dtype/n/bytes) and *tier; XPAR_ERR_NO_DEVICE (with its
 * detail) when offload is mandatory and the GPU is not usable.
 */
xpar_status xpar__decide(const xpar__policy_facts *f, xpar__decision_raw *d, xpar_tier *tier);

/** The smaller of the GPU thresholds for pinned and pageable host data:
 *  below it, AUTO runs a call on host data on the CPU whichever kind it is. */
static inline size_t xpar__host_gpu_threshold(const size_t *t) {
  return t[XPAR_THRESHOLD_GPU_PINNED_DATA] < t[XPAR_THRESHOLD_GPU_PAGEABLE_DATA]
             ? t[XPAR_THRESHOLD_GPU_PINNED_DATA]
             : t[XPAR_THRESHOLD_GPU_PAGEABLE_DATA];
}

#endif /* XPAR_DISPATCH_POLICY_H */
