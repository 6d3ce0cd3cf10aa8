/*
 * The timing core: host wall clock (CLOCK_MONOTONIC) around the synchronous
 * call, as the application sees it; one warm-up call; adaptive repetitions;
 * the MEDIAN (OpenMP wake-ups on a VM produce millisecond outliers that
 * would dominate a mean).
 */
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

int bench_time(const bench_timing_cfg *cfg, int (*call)(void *arg), void *arg, bench_timing *out) {
  int cap = cfg->fixed_reps > 0 ? cfg->fixed_reps : cfg->max_reps;
  if (cap < 1) cap = 1;
  double *t = (double *)malloc((size_t)cap * sizeof *t);
  if (!t) return 0;
  if (!call(arg)) { /* warm-up: page faults, thread pool, GPU module load */
    free(t);
    return 0;
  }
  int reps = 0;
  double total = 0.0;
  for (;;) {
    if (cfg->fixed_reps > 0) {
      if (reps >= cfg->fixed_reps) break;
    } else if (reps >= cap ||
               (reps >= cfg->min_reps && total >= cfg->min_time_s)) {
      break;
    }
    double t0 = bench_now_s();
    int ok = call(arg);
    double t1 = bench_now_s();
    if (!ok) {
      free(t);
      return 0;
    }
    t[reps++] = t1 - t0;
    total += t1 - t0;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  out->reps = reps;
  out->min_s = t[0];
  out->max_s = t[reps - 1];
  out->median_s = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  free(t);
  return 1;
}
