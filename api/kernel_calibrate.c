/*
 * xpar_kernel_calibrate (xpar_kernel.h): an application kernel's thresholds,
 * measured with the application's own arguments, the way xpar-bench
 * calibrate measures the built-in ops'.  Every launch goes through the same
 * path as xpar_launch (staging, the decision, the record); the tier is forced
 * by setting the context's backend and the kernel's OpenMP threshold for the
 * duration, and both are restored.  The threshold rule is base/crossing.c,
 * which the bench's calibrate shares.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "base/crossing.h"

#define KCAL_ROUNDS 5
#define KCAL_BATCH_S 200e-6 /* a timed sample: enough calls to last this long */
#define KCAL_MAX_REPS 4096
#define KCAL_LO_EXP 4

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct kcal {
  xpar_context *ctx;
  const xpar_kernel *k;
  xpar__kernel_entry *entry;
  size_t n_max;
  const xpar_arg *args;
  int nargs;
  xpar_arg cut[XPAR_KERNEL_MAX_ARGS];
} kcal;

/* The arguments of a launch of n: arrays of n_max elements cut to n. */
static const xpar_arg *args_for(kcal *c, size_t n) {
  for (int j = 0; j < c->nargs; j++) {
    c->cut[j] = c->args[j];
    if (c->args[j].role != XPAR_ARG_SCALAR && c->args[j].count == c->n_max) c->cut[j].count = n;
  }
  return c->cut;
}

/* Put the context on `tier` for the kernel: the backend, and for the CPU
 * the kernel's OpenMP threshold (never: the one-thread loop AUTO runs below
 * it; 0: the OpenMP loop). */
static void force(kcal *c, xpar_tier tier) {
  if (tier == XPAR_TIER_CUDA) {
    c->ctx->backend = XPAR_BACKEND_CUDA;
  } else {
    c->ctx->backend = XPAR_BACKEND_CPU;
    c->entry->thresholds[XPAR_THRESHOLD_OPENMP] = tier == XPAR_TIER_CPU_SERIAL ? XPAR_NEVER : 0;
  }
}

/* `reps` launches of n on `tier` after one untimed launch there; seconds per
 * launch in *t.  The untimed one moves what the previous tier wrote (mapped
 * or managed arrays) to this side once, as in an application whose calls
 * stay on one side: a timed call of 1 rep would otherwise pay that copy
 * every round.  A launch that ran on another tier (the GPU became unusable)
 * is an error: its time would be another tier's. */
static xpar_status timed(kcal *c, xpar_tier tier, size_t n, int reps, double *t) {
  force(c, tier);
  const xpar_arg *a = args_for(c, n);
  XPAR__FORWARD(xpar__launch_entered(c->ctx, c->k, n, a, c->nargs, 0));
  double t0 = now_s();
  for (int r = 0; r < reps; r++) {
    XPAR__FORWARD(xpar__launch_entered(c->ctx, c->k, n, a, c->nargs, 0));
    XPAR__RETURN_IF(c->ctx->last.tier != tier, XPAR_ERR_INTERNAL,
                    "kernel %s: calibrating %s at n = %zu, the launch ran on %s", c->k->name,
                    xpar_tier_name(tier), n, xpar_tier_name(c->ctx->last.tier));
  }
  *t = (now_s() - t0) / reps;
  return XPAR_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The GPU threshold AUTO consults for these arguments: one AUTO launch with
 * every GPU threshold 0 (so dispatch asks where host data lives instead of
 * using its cached hints) names it in the raw decision. */
static xpar_status gpu_kind(kcal *c, size_t n, xpar_threshold *kind) {
  c->ctx->backend = XPAR_BACKEND_AUTO;
  for (int t = 0; t < XPAR_THRESHOLD_COUNT_; t++)
    if (t != XPAR_THRESHOLD_OPENMP) c->entry->thresholds[t] = 0;
  XPAR__FORWARD(xpar__launch_entered(c->ctx, c->k, n, args_for(c, n), c->nargs, 0));
  *kind = c->ctx->last.gpu_kind;
  return XPAR_OK;
}

static xpar_status sweep(kcal *c, xpar_kernel_calibration *r) {
  const xpar_tier tiers[3] = {XPAR_TIER_CPU_SERIAL, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CUDA};
  int reps[3][XPAR_KERNEL_CALIBRATION_MAX_EXP + 1];
  double samples[3][XPAR_KERNEL_CALIBRATION_MAX_EXP + 1][KCAL_ROUNDS];
  /* Round -1 warms each point up and sizes its batch; then the rounds go
   * over every size and tier in turn, so a slow stretch of the machine
   * lands in one round of many points, not in every round of one. */
  for (int round = -1; round < KCAL_ROUNDS; round++)
    for (int e = r->lo_exp; e <= r->hi_exp; e++)
      for (int i = 0; i < 3; i++) {
        if (!r->tier_measured[tiers[i]]) continue;
        double t = 0;
        if (round < 0) {
          XPAR__FORWARD(timed(c, tiers[i], (size_t)1 << e, 1, &t));
          double want = KCAL_BATCH_S / (t > 0 ? t : 1e-9);
          reps[i][e] = want < 1 ? 1 : want > KCAL_MAX_REPS ? KCAL_MAX_REPS : (int)ceil(want);
        } else {
          XPAR__FORWARD(timed(c, tiers[i], (size_t)1 << e, reps[i][e], &t));
          samples[i][e][round] = t;
        }
      }
  for (int i = 0; i < 3; i++)
    for (int e = r->lo_exp; e <= r->hi_exp && r->tier_measured[tiers[i]]; e++) {
      qsort(samples[i][e], KCAL_ROUNDS, sizeof(double), cmp_double);
      r->seconds[tiers[i]][e] = samples[i][e][KCAL_ROUNDS / 2];
    }
  return XPAR_OK;
}

/* One threshold from two curves, into the report. */
static void choose(xpar_kernel_calibration *r, xpar_threshold which, const double *below,
                   const double *above) {
  xpar__threshold_choice ch = xpar__threshold_pick(below, above, r->lo_exp, r->hi_exp);
  r->threshold_set[which] = 1;
  r->threshold[which] = ch.pick == XPAR__EXP_NEVER ? XPAR_NEVER : (size_t)1 << ch.pick;
  r->worst_ratio[which] = ch.worst;
  r->worst_at[which] = ch.worst_at;
}

static xpar_status calibrate_entered(xpar_context *ctx, const xpar_kernel *k, size_t n_max,
                                     const xpar_arg *args, int nargs,
                                     xpar_kernel_calibration *report) {
  /* Every check of xpar_launch at n_max, before anything runs; a refusal
   * leaves a record saying so, as a refused launch does. */
  xpar_status st =
      n_max == 0 ? xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                              "n_max is 0: calibrating needs arguments for at least one element")
                 : xpar__launch_check(ctx, k, args, nargs);
  kcal c = {.ctx = ctx, .k = k, .n_max = n_max, .args = args, .nargs = nargs};
  if (st == XPAR_OK) st = xpar__kernel_entry_of(ctx, k, k->name, &c.entry);
  if (st != XPAR_OK) return xpar__launch_refused(ctx, k, args, nargs, n_max, st);

  xpar_kernel_calibration r;
  memset(&r, 0, sizeof r);
  for (int t = 0; t < XPAR_TIER_COUNT_; t++)
    for (int e = 0; e <= XPAR_KERNEL_CALIBRATION_MAX_EXP; e++) r.seconds[t][e] = NAN;
  r.rounds = KCAL_ROUNDS;
  r.hi_exp = 0;
  while (r.hi_exp < XPAR_KERNEL_CALIBRATION_MAX_EXP && ((size_t)2 << r.hi_exp) <= n_max)
    r.hi_exp++;
  r.lo_exp = r.hi_exp < KCAL_LO_EXP ? 0 : KCAL_LO_EXP;
  r.tier_measured[XPAR_TIER_CPU_SERIAL] = r.tier_measured[XPAR_TIER_CPU_OPENMP] = k->cpu != NULL;
  r.tier_measured[XPAR_TIER_CUDA] = k->gpu != NULL && ctx->offload != XPAR_OFFLOAD_DISABLED &&
                                    xpar__gpu_usable(ctx, NULL);
  r.gpu_threshold = XPAR_THRESHOLD_GPU_DEVICE_DATA;

  /* The context as the application left it, restored whatever happens. */
  const xpar_backend backend = ctx->backend;
  const xpar_offload offload = ctx->offload;
  const xpar_tier shadow = ctx->shadow_tier;
  xpar__kernel_entry saved = *c.entry;
  ctx->offload = XPAR_OFFLOAD_DEFAULT; /* mandatory would override the forced CPU */
  ctx->shadow_tier = XPAR_TIER_NONE;   /* one run per launch (kernels are never shadowed) */
  /* The GPU kind first, from the arguments' memory as the application passed
   * it: the sweep's GPU runs leave mapped outputs valid only on the device,
   * which would select GPU_DEVICE_ONLY_DATA for arrays mapped both ways (the
   * first H100 run of test_kernel_calibrate_gpu caught that). */
  st = XPAR_OK;
  if (r.tier_measured[XPAR_TIER_CUDA]) st = gpu_kind(&c, (size_t)1 << r.lo_exp, &r.gpu_threshold);
  if (st == XPAR_OK) st = sweep(&c, &r);
  ctx->backend = backend;
  ctx->offload = offload;
  ctx->shadow_tier = shadow;
  *c.entry = saved;
  if (st != XPAR_OK) return st;

  /* The CPU side of the GPU comparison is AUTO's CPU choice: the one-thread
   * loop below the OpenMP threshold just chosen, OpenMP from it. */
  double cpu[XPAR_KERNEL_CALIBRATION_MAX_EXP + 1];
  const double *ts = r.seconds[XPAR_TIER_CPU_SERIAL], *to = r.seconds[XPAR_TIER_CPU_OPENMP];
  if (k->cpu) choose(&r, XPAR_THRESHOLD_OPENMP, ts, to);
  for (int e = 0; e <= XPAR_KERNEL_CALIBRATION_MAX_EXP; e++)
    cpu[e] = ((size_t)1 << e) >= r.threshold[XPAR_THRESHOLD_OPENMP] ? to[e] : ts[e];
  if (k->cpu && r.tier_measured[XPAR_TIER_CUDA])
    choose(&r, r.gpu_threshold, cpu, r.seconds[XPAR_TIER_CUDA]);
  for (int t = 0; t < XPAR_THRESHOLD_COUNT_; t++)
    if (r.threshold_set[t]) {
      c.entry->thresholds[t] = r.threshold[t];
      c.entry->sources[t] = XPAR__SRC_API;
    }
  if (report) *report = r;
  return XPAR_OK;
}

XPAR_API xpar_status xpar_kernel_calibrate(xpar_context *ctx, const xpar_kernel *kernel,
                                           size_t n_max, const xpar_arg *args, int nargs,
                                           xpar_kernel_calibration *report) {
  XPAR__THROUGH_CONTEXT(ctx, calibrate_entered(ctx, kernel, n_max, args, nargs, report));
}
