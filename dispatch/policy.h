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

#include "state.h"

typedef struct xpar__policy_facts {
  xpar_backend backend;
  xpar_offload offload;
  xpar_op op;
  xpar_dtype dtype;
  size_t n;
  int nowait; /* a queued call (xpar_*_nowait): it must not block on copies */
  /* Where the operands' valid copies are (0/1 each). */
  int device_only; /* some operand is valid only on the device             */
  int pageable;    /* some operand is pageable host data (or priced so)     */
  int pinned;      /* some operand is pinned host data                      */
  int host;        /* some operand is host memory (pinned or pageable)      */
  int host_kind_exact; /* pinned/pageable was asked of the runtime, not a
                          cached hint (page_cache.h)                         */
  int all_host;    /* every array and the result are pinned or pageable host
                      memory, none empty (the general path sets it)          */
  /* This op and dtype's thresholds and where each came from (xpar__source). */
  const size_t *thresholds;
  const unsigned char *sources;
  /* The split tier's settings of this op and dtype, by xpar_split_memory
   * (state.h); NULL: the call has no split (its op, or a kernel). */
  const size_t *split_from;
  const unsigned char *split_from_source;
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

/** The smaller of the GPU thresholds for pinned and pageable host data:
 *  below it, AUTO runs a call on host data on the CPU whichever kind it is. */
static inline size_t xpar__host_gpu_threshold(const size_t *t) {
  return t[XPAR_THRESHOLD_GPU_PINNED_DATA] < t[XPAR_THRESHOLD_GPU_PAGEABLE_DATA]
             ? t[XPAR_THRESHOLD_GPU_PINNED_DATA]
             : t[XPAR_THRESHOLD_GPU_PAGEABLE_DATA];
}

/* ---- the decision ---------------------------------------------------------- */
/* Inline: the host fast path feeds it constants (no device data, host kinds
 * hinted), and the compiler folds the branches they rule out -- the N = 128
 * call pays for the comparisons it needs, not for a general function. */

static inline xpar_tier xpar__policy_cpu_tier(const xpar__policy_facts *f, xpar__decision_raw *d) {
  d->openmp_threshold = f->thresholds[XPAR_THRESHOLD_OPENMP];
  d->openmp_source = (xpar__source)f->sources[XPAR_THRESHOLD_OPENMP];
  /* The serial backends (cuda-serial too, when it falls back to the CPU)
   * run the strict element-order loop: one thread whatever n. */
  if (f->backend == XPAR_BACKEND_CPU_SERIAL || f->backend == XPAR_BACKEND_CUDA_SERIAL) {
    d->cpu_rule = XPAR__CPU_FORCED_SERIAL;
    return XPAR_TIER_CPU_SERIAL;
  }
  if (f->n < d->openmp_threshold) {
    d->cpu_rule = XPAR__CPU_BELOW_OPENMP;
    return XPAR_TIER_CPU_SERIAL;
  }
  d->cpu_rule = XPAR__CPU_AT_OR_ABOVE_OPENMP;
  return XPAR_TIER_CPU_OPENMP;
}

static inline xpar_tier xpar__policy_gpu_tier(const xpar__policy_facts *f) {
  return f->backend == XPAR_BACKEND_CUDA_SERIAL ? XPAR_TIER_CUDA_SERIAL : XPAR_TIER_CUDA;
}

/* Whether the split tier can take the call: an op it covers, every array in
 * host memory, n > 0. */
static inline int xpar__policy_can_split(const xpar__policy_facts *f) {
  return f->split_from && f->all_host && f->n > 0;
}

/* The host memory of a call the split may take: pageable if any array is. */
static inline xpar_split_memory xpar__policy_split_memory(const xpar__policy_facts *f) {
  return f->pageable ? XPAR_SPLIT_PAGEABLE : XPAR_SPLIT_PINNED;
}

/* xpar__decide: decide where a call runs.  Fills the raw record's rules,
 * thresholds and sources (not op/dtype/n/bytes) and *tier; XPAR_ERR_NO_DEVICE
 * (with its detail) when offload is mandatory and the GPU is not usable. */
static inline xpar_status xpar__decide(const xpar__policy_facts *f, xpar__decision_raw *d,
                                       xpar_tier *tier) {
  const char *why = NULL;
  d->host_kind_hint = 0;
  if (f->offload == XPAR_OFFLOAD_DISABLED) {
    d->gpu_rule = f->backend == XPAR_BACKEND_CPU || f->backend == XPAR_BACKEND_CPU_SERIAL
                      ? XPAR__GPU_NOT_CONSIDERED
                      : XPAR__GPU_DISABLED;
    *tier = xpar__policy_cpu_tier(f, d);
    return XPAR_OK;
  }
  if (f->offload == XPAR_OFFLOAD_MANDATORY) {
    if (!f->gpu_usable(f->gpu_usable_arg, &why))
      return xpar__fail(XPAR_ERR_NO_DEVICE, "offload is mandatory but the GPU is not usable: %s",
                        why ? why : "unknown");
    d->gpu_rule = XPAR__GPU_MANDATORY;
    *tier = f->backend == XPAR_BACKEND_CPU_CUDA && xpar__policy_can_split(f)
                ? XPAR_TIER_CPU_CUDA
                : xpar__policy_gpu_tier(f);
    return XPAR_OK;
  }
  switch (f->backend) {
    case XPAR_BACKEND_CPU:
    case XPAR_BACKEND_CPU_SERIAL:
      d->gpu_rule = XPAR__GPU_NOT_CONSIDERED;
      *tier = xpar__policy_cpu_tier(f, d);
      return XPAR_OK;
    case XPAR_BACKEND_CUDA:
    case XPAR_BACKEND_CUDA_SERIAL:
    case XPAR_BACKEND_CPU_CUDA:
      if (f->gpu_usable(f->gpu_usable_arg, &why)) {
        d->gpu_rule = XPAR__GPU_FORCED;
        *tier = xpar__policy_gpu_tier(f);
        if (f->backend == XPAR_BACKEND_CPU_CUDA) {
          const int splits = xpar__policy_can_split(f);
          d->gpu_rule = splits ? XPAR__GPU_SPLIT_FORCED : XPAR__GPU_SPLIT_NOT_COVERED;
          if (splits) *tier = XPAR_TIER_CPU_CUDA;
        }
      } else {
        d->gpu_rule = XPAR__GPU_FORCED_UNUSABLE;
        d->why = why;
        *tier = xpar__policy_cpu_tier(f, d);
      }
      return XPAR_OK;
    default: break;
  }
  /* AUTO. */
  if (f->gpu_failed) {
    d->gpu_rule = XPAR__GPU_FAILED_FALLBACK;
    d->why = f->gpu_failed;
    *tier = xpar__policy_cpu_tier(f, d);
    return XPAR_OK;
  }
  /* Data that lives only on the device stays there (device pointers imply a
   * working GPU), unless the call is so small that copying it to the host
   * and back costs less than a kernel launch and its synchronisation: the
   * calibrated GPU_DEVICE_ONLY_DATA threshold says where (0: always stays).
   * A queued (nowait) call stays: the copies would make it synchronous. */
  if (f->device_only) {
    d->gpu_kind = XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA;
    d->gpu_threshold = f->thresholds[XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA];
    d->gpu_source = (xpar__source)f->sources[XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA];
    if (f->n < d->gpu_threshold && !f->nowait) {
      d->gpu_rule = XPAR__GPU_BELOW;
      *tier = xpar__policy_cpu_tier(f, d);
      return XPAR_OK;
    }
    d->gpu_rule = XPAR__GPU_DEVICE_ONLY;
    *tier = XPAR_TIER_CUDA;
    return XPAR_OK;
  }
  d->gpu_kind = f->pageable ? XPAR_THRESHOLD_GPU_PAGEABLE_DATA
                : f->pinned ? XPAR_THRESHOLD_GPU_PINNED_DATA
                            : XPAR_THRESHOLD_GPU_DEVICE_DATA;
  if (f->host && !f->host_kind_exact) {
    /* The host operands' kinds are cached hints, and n is below the GPU
     * threshold of either kind (dispatch asks the runtime otherwise): quote
     * the smaller, for host data. */
    d->host_kind_hint = 1;
    d->gpu_kind = xpar__host_gpu_threshold(f->thresholds) ==
                          f->thresholds[XPAR_THRESHOLD_GPU_PINNED_DATA]
                      ? XPAR_THRESHOLD_GPU_PINNED_DATA
                      : XPAR_THRESHOLD_GPU_PAGEABLE_DATA;
  }
  d->gpu_threshold = f->thresholds[d->gpu_kind];
  d->gpu_source = (xpar__source)f->sources[d->gpu_kind];
  if (xpar__policy_can_split(f)) {
    /* Host data the split covers: both sides from its `from` on, where the
     * GPU is usable (else the GPU threshold's rule below says why not). */
    const xpar_split_memory m = xpar__policy_split_memory(f);
    if (f->n >= f->split_from[m] && f->gpu_usable(f->gpu_usable_arg, NULL)) {
      d->gpu_rule = XPAR__GPU_SPLIT;
      d->split_memory = m;
      d->split_from = f->split_from[m];
      d->split_from_source = (xpar__source)f->split_from_source[m];
      *tier = XPAR_TIER_CPU_CUDA;
      return XPAR_OK;
    }
  }
  if (f->n < d->gpu_threshold) {
    d->gpu_rule = XPAR__GPU_BELOW;
    *tier = xpar__policy_cpu_tier(f, d);
  } else if (f->gpu_usable(f->gpu_usable_arg, &why)) {
    d->gpu_rule = XPAR__GPU_AT_OR_ABOVE;
    *tier = XPAR_TIER_CUDA;
  } else {
    d->gpu_rule = XPAR__GPU_WANTED_UNUSABLE;
    d->why = why;
    *tier = xpar__policy_cpu_tier(f, d);
  }
  return XPAR_OK;
}

/* ---- where AUTO may move a call (adapt.h) ------------------------------------ */

/* The tier AUTO moves a call to when the tier xpar__decide chose measures far
 * slower (adapt.h), with the record fields a CPU tier fills when it replaces
 * the GPU. */
typedef struct xpar__adapt_alt {
  xpar_tier tier; /* XPAR_TIER_NONE: the call never moves */
  xpar__adapt_where where;
  xpar__cpu_rule cpu_rule;
  size_t openmp_threshold;
  xpar__source openmp_source;
  /* n over the threshold from which the thresholds leave the alternative
   * for the chosen tier (at least 1): adapt.h's prior for what the
   * alternative costs before it is measured. */
  float prior_factor;
} xpar__adapt_alt;

/* The next best tier to `chosen`, xpar__decide's choice from f (d its record):
 * OpenMP -> one thread; the GPU or the split by the thresholds -> the CPU tier they give
 * (data valid only on the device is copied, as for a tiny call).  None for a
 * forced backend, mandatory offload (the GPU or nothing), a queued call (the
 * copies would make it synchronous), the serial tier, or a GPU choice that
 * was not the thresholds' (a kernel without a CPU variant).  Pure. */
static inline xpar__adapt_alt xpar__adapt_alternative(const xpar__policy_facts *f,
                                                      const xpar__decision_raw *d,
                                                      xpar_tier chosen) {
  xpar__adapt_alt a = {.tier = XPAR_TIER_NONE,
                       .where = f->device_only ? XPAR__ADAPT_DEVICE_ONLY_DATA
                                : f->host      ? XPAR__ADAPT_HOST_DATA
                                               : XPAR__ADAPT_DEVICE_DATA};
  if (f->backend != XPAR_BACKEND_AUTO || f->offload == XPAR_OFFLOAD_MANDATORY || f->nowait)
    return a;
  size_t from = 0; /* the threshold the chosen tier starts at */
  if (chosen == XPAR_TIER_CPU_OPENMP) {
    a.tier = XPAR_TIER_CPU_SERIAL;
    from = d->openmp_threshold;
  } else if ((chosen == XPAR_TIER_CUDA &&
              (d->gpu_rule == XPAR__GPU_AT_OR_ABOVE || d->gpu_rule == XPAR__GPU_DEVICE_ONLY)) ||
             (chosen == XPAR_TIER_CPU_CUDA && d->gpu_rule == XPAR__GPU_SPLIT)) {
    xpar__decision_raw cpu = *d;
    a.tier = xpar__policy_cpu_tier(f, &cpu);
    a.cpu_rule = cpu.cpu_rule;
    a.openmp_threshold = cpu.openmp_threshold;
    a.openmp_source = cpu.openmp_source;
    from = d->gpu_rule == XPAR__GPU_SPLIT ? d->split_from : d->gpu_threshold;
  }
  /* from 0: the tier is always chosen, as from n = 1 */
  const double ratio = (double)f->n / (double)(from ? from : 1);
  a.prior_factor = ratio > 1.0 ? (float)ratio : 1.0f;
  return a;
}

#endif /* XPAR_DISPATCH_POLICY_H */
