/*
 * The timing core: host wall clock (CLOCK_MONOTONIC) around the synchronous
 * call, as the application sees it; one warm-up call; adaptive repetitions;
 * the MEDIAN (OpenMP wake-ups on a VM produce millisecond outliers that
 * would dominate a mean).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void bench_sort(double *t, int n) { qsort(t, (size_t)n, sizeof *t, cmp_double); }

double bench_quantile(const double *sorted, int n, double q) {
  int i = (int)ceil(q * n) - 1;
  return sorted[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* Time k back-to-back calls; the sample is the time per call. */
static int run_batch(int (*call)(void *), void *arg, int k, double *per_call) {
  double t0 = bench_now_s();
  for (int i = 0; i < k; ++i)
    if (!call(arg)) return 0;
  *per_call = (bench_now_s() - t0) / k;
  return 1;
}

int bench_time_after(const bench_timing_cfg *cfg, double prior_call_s, int (*call)(void *arg),
                     void *arg, bench_timing *out) {
  int cap = cfg->fixed_reps > 0 ? cfg->fixed_reps : cfg->max_reps;
  if (cap < 1) cap = 1;
  double *t = (double *)malloc((size_t)cap * sizeof *t);
  if (!t) return 0;
  double first = prior_call_s;
  if (first < 0) { /* warm-up: page faults, thread pool, GPU module load */
    double t0 = bench_now_s();
    if (!call(arg)) {
      free(t);
      return 0;
    }
    first = bench_now_s() - t0;
  }
  /* Batch size: double k until one batch lasts batch_s.  The first call is
   * often cold (slow), so it is only an upper bound on the call time. */
  int k = 1;
  if (cfg->batch_s > 0 && first < cfg->batch_s) {
    double per;
    for (;;) {
      if (!run_batch(call, arg, k, &per)) {
        free(t);
        return 0;
      }
      if (per * k >= cfg->batch_s || k >= (1 << 20)) break;
      k *= 2;
    }
  }
  int min_reps = cfg->min_reps;
  int reps = 0;
  double total = 0.0;
  for (;;) {
    if (cfg->fixed_reps > 0) {
      if (reps >= cfg->fixed_reps) break;
    } else if (reps >= cap || (reps >= min_reps && total >= cfg->min_time_s) ||
               (min_reps < cfg->min_reps && reps >= min_reps)) {
      /* a long call stops at long_reps, whatever min_time says */
      break;
    }
    double per;
    if (!run_batch(call, arg, k, &per)) {
      free(t);
      return 0;
    }
    t[reps++] = per;
    total += per * k;
    /* Judged on the first timed sample, not on the warm-up: a first call
     * can be slow for reasons of its own (CUDA start-up, page faults). */
    if (reps == 1 && cfg->long_call_s > 0 && per >= cfg->long_call_s && cfg->long_reps > 0)
      min_reps = cfg->long_reps;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  out->reps = reps;
  out->batch = k;
  out->min_s = t[0];
  out->max_s = t[reps - 1];
  out->median_s = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  free(t);
  return 1;
}

int bench_time(const bench_timing_cfg *cfg, int (*call)(void *arg), void *arg, bench_timing *out) {
  return bench_time_after(cfg, -1.0, call, arg, out);
}
