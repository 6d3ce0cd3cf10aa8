/* The decision (policy.h): pure, over the facts dispatch gathered. */
#include "policy.h"

static xpar_tier cpu_tier(const xpar__policy_facts *f, xpar__decision_raw *d) {
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

static xpar_tier gpu_tier(const xpar__policy_facts *f) {
  return f->backend == XPAR_BACKEND_CUDA_SERIAL ? XPAR_TIER_CUDA_SERIAL : XPAR_TIER_CUDA;
}

xpar_status xpar__decide(const xpar__policy_facts *f, xpar__decision_raw *d, xpar_tier *tier) {
  const char *why = NULL;
  d->host_kind_hint = 0;
  if (f->offload == XPAR_OFFLOAD_DISABLED) {
    d->gpu_rule = f->backend == XPAR_BACKEND_CPU || f->backend == XPAR_BACKEND_CPU_SERIAL
                      ? XPAR__GPU_NOT_CONSIDERED
                      : XPAR__GPU_DISABLED;
    *tier = cpu_tier(f, d);
    return XPAR_OK;
  }
  if (f->offload == XPAR_OFFLOAD_MANDATORY) {
    if (!f->gpu_usable(f->gpu_usable_arg, &why))
      return xpar__fail(XPAR_ERR_NO_DEVICE, "offload is mandatory but the GPU is not usable: %s",
                        why ? why : "unknown");
    d->gpu_rule = XPAR__GPU_MANDATORY;
    *tier = gpu_tier(f);
    return XPAR_OK;
  }
  switch (f->backend) {
    case XPAR_BACKEND_CPU:
    case XPAR_BACKEND_CPU_SERIAL:
      d->gpu_rule = XPAR__GPU_NOT_CONSIDERED;
      *tier = cpu_tier(f, d);
      return XPAR_OK;
    case XPAR_BACKEND_CUDA:
    case XPAR_BACKEND_CUDA_SERIAL:
      if (f->gpu_usable(f->gpu_usable_arg, &why)) {
        d->gpu_rule = XPAR__GPU_FORCED;
        *tier = gpu_tier(f);
      } else {
        d->gpu_rule = XPAR__GPU_FORCED_UNUSABLE;
        d->why = why;
        *tier = cpu_tier(f, d);
      }
      return XPAR_OK;
    default: break;
  }
  /* AUTO. */
  if (f->gpu_failed) {
    d->gpu_rule = XPAR__GPU_FAILED_FALLBACK;
    d->why = f->gpu_failed;
    *tier = cpu_tier(f, d);
    return XPAR_OK;
  }
  /* Data that lives only on the device stays there (device pointers imply a
   * working GPU). */
  if (f->device_only) {
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
  if (f->n < d->gpu_threshold) {
    d->gpu_rule = XPAR__GPU_BELOW;
    *tier = cpu_tier(f, d);
  } else if (f->gpu_usable(f->gpu_usable_arg, &why)) {
    d->gpu_rule = XPAR__GPU_AT_OR_ABOVE;
    *tier = XPAR_TIER_CUDA;
  } else {
    d->gpu_rule = XPAR__GPU_WANTED_UNUSABLE;
    d->why = why;
    *tier = cpu_tier(f, d);
  }
  return XPAR_OK;
}
