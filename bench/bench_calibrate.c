/*
 * xpar-bench calibrate: measure this machine's crossovers and write them as a
 * calibration profile (xpar_profile_save), then load it back into a fresh
 * context and check that a decision record quotes it.
 *
 * Per op x dtype:
 *  1. serial -> OpenMP: AUTO's two CPU choices, one thread (the CPU backend
 *     below its threshold: vectorised one-thread kernels) against the OpenMP
 *     tier, over 2^4..2^20, two passes.
 *  2. CPU -> GPU over 2^10..2^28: the CPU side is what AUTO would run there
 *     (backend CPU with the OpenMP threshold just measured), timed once per N
 *     on host arrays; the GPU side three ways: mapped arrays (threshold
 *     `gpu`, no transfer), pinned host arrays (`gpu_pinned`) and pageable
 *     ones (`gpu_pageable`), transfers included.  The CPU computes just as
 *     fast on the host copy of mapped or pinned arrays as on pageable ones.
 *
 *  3. device-only data (cudaMalloc'd arrays) over 2^4..2^18: AUTO's CPU
 *     choice with the copies to the host and back (threshold
 *     `gpu_device_only`) against a GPU launch + synchronise.
 *
 * A crossing is the first N from which the second side stays faster.  The
 * serial -> OpenMP sweep is cheap and runs the whole range; a CPU -> GPU
 * sweep stops once the crossing is confirmed at the next two sizes.  "never" is declared early when,
 * from 2^22 on, the GPU is >= 1.5x slower at two consecutive sizes and not
 * catching up (the transfer-bound ratio is flat), so pageable reduces do not
 * sweep to 2^28.  Calls are not checked for correctness here (crossover does).
 * The profile goes to --out, else to $XPAR_PROFILE, else to the default
 * path, in one xpar_profile_save of a context holding the measured values.
 * That writes what was set through the API and what the context loaded from
 * a profile, so thresholds not measured in this run (--ops, --time-limit, no
 * GPU) keep the values of the profile in effect when it started (if it is
 * from this machine), else are left out and keep their built-in defaults;
 * XPAR_<OP>_<KIND>_THRESHOLD values are never written.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"

enum { K_DEV, K_PIN, K_PAGE, K_COUNT };
static const xpar_threshold k_threshold[K_COUNT] = {XPAR_THRESHOLD_GPU_DEVICE_DATA,
                                                    XPAR_THRESHOLD_GPU_PINNED_DATA,
                                                    XPAR_THRESHOLD_GPU_PAGEABLE_DATA};
/* Profile keys of the thresholds, from the public map (xpar.h). */
#define CAL_KEY_(e, key, env, data) key,
static const char *const thr_names[XPAR_THRESHOLD_COUNT_] = {XPAR_THRESHOLD_MAP(CAL_KEY_)};
#undef CAL_KEY_

typedef struct cal_opts {
  const char *ops, *dtypes, *out;
  int threads;
  int omp_lo, omp_hi, gpu_lo, gpu_hi;
  int no_gpu;
  int split; /* --split: then the split tier's settings (bench_split.c) */
  double time_limit_s;
  uint64_t seed;
  bench_timing_cfg timing;
} cal_opts;

/* One crossing being searched for along a sweep. */
typedef struct crossing {
  int streak, first, result, done;
  double prev_ratio;
  int at_exp;           /* where the evidence is */
  double t_first, t_second;
} crossing;

/* measured[op][dtype][kind]: 1 if calibrated; value in thr */
typedef struct cal_result {
  int measured[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
  size_t thr[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_];
} cal_result;

typedef struct cal_state {
  cal_opts o;
  xpar_context *serial, *openmp, *cpu, *gpu, *gpu_map;
  int gpu_ok, pinned_ok;
  void *x, *y, *out;    /* pageable, cap elements of 8 bytes */
  void *px, *py, *pout; /* pinned */
  void *dx, *dy, *dout; /* device (cudaMalloc), CAL_DEVONLY_HI elements of 8 bytes */
  size_t cap;           /* elements */
  cal_result r;
} cal_state;

/* ---- timing one context ---------------------------------------------------- */

typedef struct cal_call {
  xpar_context *ctx;
  bench_case *c;
  const bench_op *op;
} cal_call;

static int cal_timed(void *p) {
  cal_call *a = (cal_call *)p;
  return a->op->run(a->ctx, a->c) == XPAR_OK;
}

/* Median time of op on ctx over the view c (mapped first if map); NAN on
 * failure (reported). */
static double time_on(cal_state *s, xpar_context *ctx, const bench_op *op, bench_case *c,
                      int map) {
  void *arr[3] = {c->x, c->y, c->out};
  int mapped = 0;
  double result = NAN;
  if (map)
    for (; mapped < 3; ++mapped) {
      if (!arr[mapped]) continue;
      xpar_status st = xpar_map(ctx, arr[mapped], c->n * c->esize,
                                arr[mapped] == c->out ? XPAR_MAP_ALLOC : XPAR_MAP_TO);
      if (st != XPAR_OK) {
        fprintf(stderr, "xpar-bench calibrate: xpar_map: %s (%s)\n", xpar_status_name(st),
                xpar_last_error_detail());
        goto unmap;
      }
    }
  cal_call a = {ctx, c, op};
  bench_timing t;
  if (bench_time(&s->o.timing, cal_timed, &a, &t))
    result = t.median_s;
  else
    fprintf(stderr, "xpar-bench calibrate: %s %s n = %zu failed: %s\n", op->name,
            xpar_dtype_name(c->dtype), c->n, xpar_last_error_detail());
unmap:
  for (int i = 0; i < mapped; ++i)
    if (arr[i]) xpar_unmap(ctx, arr[i], XPAR_UNMAP_RELEASE);
  return result;
}

/* Feed one comparison (second side faster?) into a crossing search (GPU
 * sweeps, where large N are expensive and the sweep stops once it knows). */
static void crossing_step(crossing *x, int e, double t_first, double t_second, int never_rule) {
  if (x->done || isnan(t_first) || isnan(t_second)) return;
  double ratio = t_second / t_first;
  if (ratio < 1.0) {
    if (x->streak++ == 0) {
      x->first = e;
      x->t_first = t_first, x->t_second = t_second, x->at_exp = e;
    }
    if (x->streak >= 3) x->result = x->first, x->done = 1; /* confirmed at 2 larger N */
  } else {
    x->streak = 0;
    if (never_rule && e >= 22 && ratio >= 1.5 && x->prev_ratio >= 1.5 &&
        ratio >= 0.9 * x->prev_ratio) {
      x->result = BENCH_NEVER, x->done = 1;
      x->t_first = t_first, x->t_second = t_second, x->at_exp = e;
    }
  }
  x->prev_ratio = ratio;
}

/* At the end of the range: an unconfirmed crossing at the top still counts. */
static void crossing_finish(crossing *x) {
  if (x->done) return;
  x->result = x->streak > 0 ? x->first : BENCH_NEVER;
  x->done = 1;
}

static size_t exp_value(int e) { return e == BENCH_NEVER ? XPAR_NEVER : (size_t)1 << e; }

/* ---- the two sweeps ---------------------------------------------------------- */

/* The CPU side of a CPU -> GPU comparison at one N, kept from stall episodes.
 * Twice the elements cannot take more than 4x the time of the size before
 * (the work is linear in n; the serial -> OpenMP switch costs under 3x); a
 * larger jump is an OpenMP stall episode (xpar-bench stalls: calls of ~6 ms
 * instead of 10-20 us), and one such median made a calibration on the H100
 * host (2026-11-25) send pageable double reduces of 2^19 and more to the
 * GPU, 13-31x slower.  So that size is timed again, up to 3 times after a
 * pause of 20 ms, keeping the lowest median (an episode only ever adds time);
 * prev <= 0 (the first size) is not checked. */
static double cpu_side(cal_state *s, xpar_context *ctx, const bench_op *op, bench_case *c,
                       double prev) {
  double tc = time_on(s, ctx, op, c, 0);
  for (int again = 0; again < 3 && prev > 0 && !(tc <= 4.0 * prev); ++again) {
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double t = time_on(s, ctx, op, c, 0);
    printf("# %s %s n = %zu: CPU side %.3g us after %.3g us at n / 2: timed again, %.3g us\n",
           op->name, xpar_dtype_name(c->dtype), c->n, tc * 1e6, prev * 1e6, t * 1e6);
    tc = fmin(tc, t);
  }
  return tc;
}

static void sweep_openmp(cal_state *s, const bench_op *op, xpar_dtype t) {
  /* Calls here take nanoseconds to a millisecond: sweep the whole range and
   * read the crossing from the top (bench_crossing), so a near-tie at small
   * N (the OpenMP tier runs one thread there) cannot hide a later reversal. */
  double ts[BENCH_MAX_EXP + 1], to[BENCH_MAX_EXP + 1];
  bench_case c[BENCH_MAX_EXP + 1];
  /* Two passes over the range, keeping the lower median per point: on a VM
   * a stretch of contention can last longer than one point's measurement
   * (every parallel region then costs a scheduler slice), rarely two passes. */
  for (int pass = 0; pass < 2; ++pass)
    for (int e = s->o.omp_lo; e <= s->o.omp_hi; ++e) {
      if (pass == 0) bench_case_view(&c[e], op, t, (size_t)1 << e, s->x, s->y, s->out);
      double a = time_on(s, s->serial, op, &c[e], 0), b = time_on(s, s->openmp, op, &c[e], 0);
      ts[e] = pass ? fmin(ts[e], a) : a;
      to[e] = pass ? fmin(to[e], b) : b;
    }
  /* Where the winner changes between neighbours, either side may be a
   * scheduler spike: measure both sizes again (the lower median is kept, as
   * a spike only ever adds time). */
  int again[BENCH_MAX_EXP + 2] = {0};
  for (int e = s->o.omp_lo; e < s->o.omp_hi; ++e)
    if ((to[e] < ts[e]) != (to[e + 1] < ts[e + 1])) again[e] = again[e + 1] = 1;
  for (int e = s->o.omp_lo; e <= s->o.omp_hi; ++e)
    if (again[e]) {
      ts[e] = fmin(ts[e], time_on(s, s->serial, op, &c[e], 0));
      to[e] = fmin(to[e], time_on(s, s->openmp, op, &c[e], 0));
    }
  /* The curves need not cross once: the threshold written minimises AUTO's
   * worst ratio over the sweep (xpar__threshold_pick, the rule
   * xpar_kernel_calibrate applies to application kernels too). */
  xpar__threshold_choice ch = xpar__threshold_pick(ts, to, s->o.omp_lo, s->o.omp_hi);
  int x = ch.crossing, pick = ch.pick, pick_at = ch.worst_at;
  double pick_worst = ch.worst;
  s->r.measured[op->op][t][XPAR_THRESHOLD_OPENMP] = 1;
  s->r.thr[op->op][t][XPAR_THRESHOLD_OPENMP] = exp_value(pick);
  char b[16], bx[16];
  printf("%-7s %-7s openmp        %-7s", op->name, xpar_dtype_name(t),
         bench_exp_str(pick, b, sizeof b));
  if (pick >= 0)
    printf("  (at 2^%d: serial %.3g us, openmp %.3g us)", pick, ts[pick] * 1e6, to[pick] * 1e6);
  else
    printf("  (OpenMP slower at 2^%d: serial %.3g us, openmp %.3g us)", s->o.omp_hi,
           ts[s->o.omp_hi] * 1e6, to[s->o.omp_hi] * 1e6);
  if (pick != x)
    printf(" crossing %s; chosen for AUTO's worst ratio %.2f (at 2^%d)",
           bench_exp_str(x, bx, sizeof bx), pick_worst, pick_at);
  else if (pick_worst > 1.10)
    printf(" AUTO's worst ratio with it %.2f (at 2^%d)", pick_worst, pick_at);
  printf("\n");
}

static void sweep_gpu(cal_state *s, const bench_op *op, xpar_dtype t) {
  crossing x[K_COUNT];
  memset(x, 0, sizeof x);
  if (!s->pinned_ok) x[K_PIN].done = 1;
  size_t es = xpar_dtype_size(t);
  int hi = s->o.gpu_hi;
  while (hi > s->o.gpu_lo && ((size_t)1 << hi) * es > s->cap * 8) --hi;
  /* the CPU side: AUTO's CPU choice for this op and dtype */
  xpar_context_set_threshold(s->cpu, op->op, t, XPAR_THRESHOLD_OPENMP,
                             s->r.thr[op->op][t][XPAR_THRESHOLD_OPENMP]);
  int e;
  double prev_tc = 0;
  for (e = s->o.gpu_lo; e <= hi; ++e) {
    int all = 1;
    for (int k = 0; k < K_COUNT; ++k) all &= x[k].done;
    if (all) break;
    size_t n = (size_t)1 << e;
    bench_case c, pc;
    bench_case_view(&c, op, t, n, s->x, s->y, s->out);
    double tc = cpu_side(s, s->cpu, op, &c, prev_tc);
    prev_tc = tc;
    if (!x[K_DEV].done) crossing_step(&x[K_DEV], e, tc, time_on(s, s->gpu_map, op, &c, 1), 1);
    if (!x[K_PAGE].done) crossing_step(&x[K_PAGE], e, tc, time_on(s, s->gpu, op, &c, 0), 1);
    if (!x[K_PIN].done) {
      bench_case_view(&pc, op, t, n, s->px, s->py, s->pout);
      crossing_step(&x[K_PIN], e, tc, time_on(s, s->gpu, op, &pc, 0), 1);
    }
  }
  for (int k = 0; k < K_COUNT; ++k) {
    if (k == K_PIN && !s->pinned_ok) continue;
    crossing_finish(&x[k]);
    s->r.measured[op->op][t][k_threshold[k]] = 1;
    s->r.thr[op->op][t][k_threshold[k]] = exp_value(x[k].result);
    char b[16];
    printf("%-7s %-7s %-13s %-7s", op->name, xpar_dtype_name(t), thr_names[k_threshold[k]],
           bench_exp_str(x[k].result, b, sizeof b));
    if (x[k].at_exp > 0)
      printf("  (at 2^%d: cpu %.3g us, gpu %.3g us)\n", x[k].at_exp, x[k].t_first * 1e6,
             x[k].t_second * 1e6);
    else
      printf("  (GPU not faster up to 2^%d)\n", e - 1);
  }
}

/* Device-only data: a tiny call on cudaMalloc'd arrays either
 * launches (AUTO's GPU side: launch + synchronise, the result copied back)
 * or copies the arrays to the host, runs AUTO's CPU choice and copies the
 * output back (what the CPU backend does with device pointers).  Measured
 * as such, both through xpar, over 2^4..2^CAL_DEVONLY_HI; the threshold is
 * the first N from which the GPU stays faster ("never" cannot happen: the
 * copies grow with N, the launch does not). */
#define CAL_DEVONLY_LO 4
#define CAL_DEVONLY_HI 18
static void sweep_device_only(cal_state *s, const bench_op *op, xpar_dtype t) {
  crossing x;
  memset(&x, 0, sizeof x);
  size_t es = xpar_dtype_size(t);
  /* the device arrays hold the pageable data's first elements */
  size_t bytes = ((size_t)1 << CAL_DEVONLY_HI) * es;
  if (!bench_copy(s->dx, s->x, bytes) || !bench_copy(s->dy, s->y, bytes)) {
    printf("%-7s %-7s gpu_device_only  (copy to the device failed: kept)\n", op->name,
           xpar_dtype_name(t));
    return;
  }
  int e;
  double prev_tc = 0;
  for (e = CAL_DEVONLY_LO; e <= CAL_DEVONLY_HI && !x.done; ++e) {
    bench_case c;
    bench_case_view(&c, op, t, (size_t)1 << e, s->dx, s->dy, s->dout);
    double tc = cpu_side(s, s->cpu, op, &c, prev_tc), tg = time_on(s, s->gpu, op, &c, 0);
    prev_tc = tc;
    crossing_step(&x, e, tc, tg, 0);
  }
  crossing_finish(&x);
  s->r.measured[op->op][t][XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA] = 1;
  s->r.thr[op->op][t][XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA] = exp_value(x.result);
  char b[16];
  printf("%-7s %-7s %-13s %-7s", op->name, xpar_dtype_name(t), "gpu_device_only",
         bench_exp_str(x.result, b, sizeof b));
  if (x.at_exp > 0)
    printf("  (at 2^%d: copies + cpu %.3g us, gpu %.3g us)\n", x.at_exp, x.t_first * 1e6,
           x.t_second * 1e6);
  else
    printf("  (GPU not faster up to 2^%d)\n", e - 1);
}

/* ---- profile ------------------------------------------------------------------ */

/* mkdir -p of the profile's directory: before any context is created, as a
 * context refuses an XPAR_PROFILE whose directory does not exist. */
static int mkdir_p(const char *file) {
  char d[1024];
  snprintf(d, sizeof d, "%s", file);
  char *slash = strrchr(d, '/');
  if (!slash || slash == d) return 1;
  *slash = '\0';
  return bench_mkdir_p(d);
}


/* Load the profile into a fresh context; check every threshold and that a
 * decision record quotes "(profile)". */
static int round_trip(cal_state *s, const char *path) {
  xpar_context *ctx;
  if (xpar_context_create(&ctx) != XPAR_OK) {
    fprintf(stderr, "xpar-bench calibrate: check: %s\n", xpar_last_error_detail());
    return 0;
  }
  int applied = 0, ok = 1;
  xpar_status st = xpar_profile_load(ctx, path, &applied);
  if (st != XPAR_OK || !applied) {
    fprintf(stderr, "xpar-bench calibrate: check: loading %s: %s%s\n", path, xpar_status_name(st),
            applied ? "" : " (not applied: another machine?)");
    xpar_context_destroy(ctx);
    return 0;
  }
  int checked = 0, first_op = -1, first_t = -1;
  for (int o = 0; o < XPAR_OP_COUNT_; ++o)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; ++k) {
        if (!s->r.measured[o][t][k]) continue;
        if (first_op < 0) first_op = o, first_t = t;
        size_t v = 0;
        xpar_context_get_threshold(ctx, (xpar_op)o, (xpar_dtype)t, (xpar_threshold)k, &v);
        if (v != s->r.thr[o][t][k]) {
          fprintf(stderr, "xpar-bench calibrate: check: %s %s %s is %zu after loading, not %zu\n",
                  xpar_op_name((xpar_op)o), xpar_dtype_name((xpar_dtype)t), thr_names[k], v,
                  s->r.thr[o][t][k]);
          ok = 0;
        }
        checked++;
      }
  /* one small call of the first calibrated op on host data: 256 elements,
   * or as many as the buffers hold when the sweeps stopped below 2^8; the
   * decision record quotes the OpenMP threshold on either side of it */
  const bench_op *op = NULL;
  for (int i = 0; bench_op_at(i); ++i)
    if (bench_op_at(i)->op == (xpar_op)first_op) op = bench_op_at(i);
  xpar_decision d;
  memset(&d, 0, sizeof d);
  size_t n = 256;
  if (first_op >= 0 && n > s->cap * 8 / xpar_dtype_size((xpar_dtype)first_t))
    n = s->cap * 8 / xpar_dtype_size((xpar_dtype)first_t);
  if (op) {
    bench_case c;
    bench_case_view(&c, op, (xpar_dtype)first_t, n, s->x, s->y, s->out);
    st = op->run(ctx, &c);
    if (st == XPAR_OK) st = xpar_last_decision(ctx, &d);
  }
  int quoted = op && st == XPAR_OK && strstr(d.reason, "(profile)") != NULL;
  printf("check: %s loaded into a fresh context: %d thresholds %s; %s %s n=%zu ran on %s: \"%s\" "
         "-> %s\n",
         path, checked, ok ? "match" : "DIFFER", op ? op->name : "?",
         xpar_dtype_name((xpar_dtype)first_t), n, xpar_tier_name(d.tier), d.reason,
         quoted ? "quotes (profile): OK" : "does NOT quote (profile): FAILED");
  xpar_context_destroy(ctx);
  return ok && quoted;
}

/* ---- options and the command ------------------------------------------------ */

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-bench calibrate [options]\n"
          "  --out FILE       profile to write (default: $XPAR_PROFILE if set, else\n"
          "                   xpar_profile_default_path, i.e. $XDG_CACHE_HOME/xpar/profile.txt\n"
          "                   or ~/.cache/xpar/profile.txt); its directory is created\n"
          "  --ops LIST       comma-separated ops (default: all of them)\n"
          "  --dtypes LIST    comma-separated dtypes (default: all six)\n"
          "  --omp-range A:B  serial->OpenMP sweep 2^A..2^B (default 4:20)\n"
          "  --gpu-range A:B  CPU->GPU sweep 2^A..2^B (default 10:28; capped by memory)\n"
          "  --no-gpu         calibrate the OpenMP thresholds only\n"
          "  --split          then measure the split tier (cpu+cuda) on host data and\n"
          "                   write its settings too (xpar-bench split --save FILE)\n"
          "  --min-time-ms M  adaptive reps per point run at least M ms (default 10)\n"
          "  --threads T      OpenMP threads (default: the runtime's)\n"
          "  --time-limit S   stop starting new op x dtype pairs after S seconds; the\n"
          "                   profile then holds what was measured (reduce and scan on\n"
          "                   int32 and float are measured first)\n"
          "Without a usable GPU only the OpenMP thresholds are calibrated.  Thresholds\n"
          "not measured keep the values of the profile in effect (XPAR_PROFILE or the\n"
          "default one, if from this machine), else their built-in defaults.\n");
}

static int parse_range(const char *v, int *lo, int *hi) {
  const char *colon = strchr(v, ':');
  char first[24];
  long a, b;
  if (!colon || (size_t)(colon - v) >= sizeof first) return 0;
  memcpy(first, v, (size_t)(colon - v));
  first[colon - v] = '\0';
  if (!bench_parse_long(first, 0, 34, &a) || !bench_parse_long(colon + 1, 0, 34, &b) || a > b)
    return 0;
  *lo = (int)a, *hi = (int)b;
  return 1;
}

#define DEFAULTS ((size_t)1) /* open_ctx: keep the OpenMP thresholds as they are */

/* openmp_threshold: 0 forces the OpenMP tier, XPAR_NEVER the one-thread tier
 * (what AUTO runs below the threshold), anything else leaves the defaults. */
static xpar_context *open_ctx(xpar_backend b, int threads, size_t openmp_threshold) {
  xpar_context *ctx;
  xpar_status st = xpar_context_create(&ctx);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar-bench calibrate: %s\n", xpar_last_error_detail());
    if (st == XPAR_ERR_PROFILE)
      fprintf(stderr, "xpar-bench calibrate: its contexts load the profile in effect, as every "
                      "program's do: fix or remove that file first\n");
    return NULL;
  }
  xpar_context_set_backend(ctx, b);
  if (threads > 0) xpar_context_set_num_threads(ctx, threads);
  for (int o = 0; openmp_threshold != DEFAULTS && o < XPAR_OP_COUNT_; ++o)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t)
      xpar_context_set_threshold(ctx, (xpar_op)o, (xpar_dtype)t, XPAR_THRESHOLD_OPENMP,
                                 openmp_threshold);
  return ctx;
}

int bench_cmd_calibrate(int argc, char **argv) {
  cal_state s;
  memset(&s, 0, sizeof s);
  s.o = (cal_opts){.ops = "reduce,scan,axpy,add,fill,dot,sort,select,runs,argreduce,segmented,histogram",
                   .dtypes = "int32,int64,uint32,uint64,float,double",
                   .omp_lo = 4, .omp_hi = 20, .gpu_lo = 10, .gpu_hi = 28, .seed = 12345,
                   .timing = {.min_reps = 5, .min_time_s = 0.010, .max_reps = 300,
                              .long_call_s = 0.05, .long_reps = 3, .batch_s = 50e-6}};
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    long v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--no-gpu") == 0) {
      s.o.no_gpu = 1;
      continue;
    }
    if (strcmp(a, "--split") == 0) {
      s.o.split = 1;
      continue;
    }
    const char *val = i + 1 < argc ? argv[++i] : NULL;
    if (val && strcmp(a, "--out") == 0) s.o.out = val;
    else if (val && strcmp(a, "--ops") == 0) s.o.ops = val;
    else if (val && strcmp(a, "--dtypes") == 0) s.o.dtypes = val;
    else if (val && strcmp(a, "--omp-range") == 0 && parse_range(val, &s.o.omp_lo, &s.o.omp_hi)) {
    } else if (val && strcmp(a, "--gpu-range") == 0 &&
               parse_range(val, &s.o.gpu_lo, &s.o.gpu_hi)) {
    } else if (val && strcmp(a, "--min-time-ms") == 0 && bench_parse_long(val, 0, 100000, &v)) {
      s.o.timing.min_time_s = (double)v * 1e-3;
    } else if (val && strcmp(a, "--time-limit") == 0 && bench_parse_long(val, 1, 1000000, &v)) {
      s.o.time_limit_s = (double)v;
    } else if (val && strcmp(a, "--threads") == 0 && bench_parse_long(val, 0, 4096, &v)) {
      s.o.threads = (int)v;
    } else {
      fprintf(stderr, "xpar-bench calibrate: bad option or value: %s %s\n", a, val ? val : "");
      usage(stderr);
      return 2;
    }
  }
  if (!bench_ops_dtypes_valid("calibrate", s.o.ops, s.o.dtypes)) return 2;
  char path[1024];
  const char *env_profile = getenv("XPAR_PROFILE");
  if (s.o.out) {
    snprintf(path, sizeof path, "%s", s.o.out);
  } else if (env_profile && env_profile[0]) {
    snprintf(path, sizeof path, "%s", env_profile); /* where every context will look */
  } else if (xpar_profile_default_path(path, sizeof path) != XPAR_OK) {
    fprintf(stderr, "xpar-bench calibrate: no default profile path (%s); use --out\n",
            xpar_last_error_detail());
    return 1;
  }
  if (!mkdir_p(path)) {
    fprintf(stderr, "xpar-bench calibrate: cannot create the directory of %s: %s\n", path,
            strerror(errno));
    return 1;
  }
  /* Writable? Found out now, not after minutes of measuring.  A file created for
   * the probe goes again: a context takes an empty profile for a broken one. */
  {
    struct stat st;
    const int existed = stat(path, &st) == 0;
    FILE *probe = existed && S_ISDIR(st.st_mode) ? (errno = EISDIR, NULL) : fopen(path, "a");
    if (!probe) {
      fprintf(stderr, "xpar-bench calibrate: cannot write the profile %s: %s\n", path,
              strerror(errno));
      return 1;
    }
    fclose(probe);
    if (!existed) remove(path);
  }
  double t_all = bench_now_s();

  xpar_device_info dev;
  memset(&dev, 0, sizeof dev);
  if (xpar_device_query(&dev) != XPAR_OK) dev.usable = 0;
  s.gpu_ok = dev.usable && !s.o.no_gpu;
  if (!s.gpu_ok)
    printf("# no GPU calibration: %s; the GPU thresholds keep their built-in defaults\n",
           s.o.no_gpu ? "--no-gpu" : dev.reason);

  /* buffers: 8-byte elements, enough for every dtype, capped by memory */
  int top = s.gpu_ok ? s.o.gpu_hi : s.o.omp_hi;
  size_t avail = bench_mem_available();
  int arrays = s.gpu_ok ? 6 : 3; /* pageable x, y, out (+ pinned copies) */
  while (top > s.o.omp_hi && avail && (double)arrays * ldexp(8.0, top) > 0.7 * (double)avail)
    --top;
  if (s.gpu_ok && dev.total_memory)
    while (top > s.o.omp_hi && 6.0 * ldexp(8.0, top) > 0.7 * (double)dev.total_memory) --top;
  if (s.gpu_ok && top < s.o.gpu_hi)
    printf("# CPU->GPU sweeps capped at 2^%d by memory\n", top);
  s.cap = (size_t)1 << top;
  s.x = malloc(s.cap * 8);
  s.y = malloc(s.cap * 8);
  s.out = malloc(s.cap * 8);
  if (!s.x || !s.y || !s.out) {
    fprintf(stderr, "xpar-bench calibrate: out of memory (3 x %zu bytes)\n", s.cap * 8);
    return 1;
  }
  memset(s.out, 0, s.cap * 8);
  char why[160] = "";
  if (s.gpu_ok) {
    s.px = bench_alloc_pinned(s.cap * 8, why, sizeof why);
    s.py = s.px ? bench_alloc_pinned(s.cap * 8, why, sizeof why) : NULL;
    s.pout = s.py ? bench_alloc_pinned(s.cap * 8, why, sizeof why) : NULL;
    s.pinned_ok = s.pout != NULL;
    size_t dbytes = ((size_t)1 << CAL_DEVONLY_HI) * 8;
    s.dx = bench_alloc_device(dbytes, why, sizeof why);
    s.dy = s.dx ? bench_alloc_device(dbytes, why, sizeof why) : NULL;
    s.dout = s.dy ? bench_alloc_device(dbytes, why, sizeof why) : NULL;
    if (!s.dout) printf("# no device memory (%s): gpu_device_only keeps its defaults\n", why);
    if (!s.pinned_ok)
      printf("# no pinned host memory (%s): gpu_pinned keeps its defaults\n", why);
    else
      memset(s.pout, 0, s.cap * 8);
  }

  /* The OpenMP threshold decides between AUTO's two CPU choices: one thread
   * (the CPU backend below its threshold) and a parallel region.  Each
   * context is opened only if the one before was: they would fail alike. */
  s.serial = open_ctx(XPAR_BACKEND_CPU, s.o.threads, XPAR_NEVER);
  if (s.serial) s.openmp = open_ctx(XPAR_BACKEND_CPU, s.o.threads, 0);
  if (s.openmp) s.cpu = open_ctx(XPAR_BACKEND_CPU, s.o.threads, DEFAULTS);
  if (s.cpu && s.gpu_ok) s.gpu = open_ctx(XPAR_BACKEND_CUDA, s.o.threads, DEFAULTS);
  if (s.gpu) s.gpu_map = open_ctx(XPAR_BACKEND_CUDA, s.o.threads, DEFAULTS);
  if (!s.cpu || (s.gpu_ok && !s.gpu_map)) return 1;

  printf("# xpar-bench calibrate -> %s\n%-7s %-7s %-13s %s\n", path, "# op", "dtype", "threshold",
         "crossover");
  /* Order: reduce and scan on int32 and float first (what the crossover run
   * checks AUTO on), then the rest; with --time-limit, what is not reached is
   * left out of the profile and keeps its defaults. */
  int order[XPAR_OP_COUNT_ * XPAR_DTYPE_COUNT_][2], norder = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t)
      for (int i = 0; bench_op_at(i); ++i) {
        const bench_op *op = bench_op_at(i);
        int prio = (op->op == XPAR_OP_REDUCE || op->op == XPAR_OP_SCAN) &&
                   (t == XPAR_INT32 || t == XPAR_FLOAT);
        if (prio != (pass == 0) || !bench_list_has(s.o.ops, op->name) ||
            !bench_list_has(s.o.dtypes, xpar_dtype_name((xpar_dtype)t)))
          continue;
        order[norder][0] = i, order[norder][1] = t, norder++;
      }
  int filled = -1, skipped = 0;
  for (int k = 0; k < norder; ++k) {
    const bench_op *op = bench_op_at(order[k][0]);
    xpar_dtype t = (xpar_dtype)order[k][1];
    if (s.o.time_limit_s > 0 && bench_now_s() - t_all > s.o.time_limit_s) {
      skipped = norder - k;
      printf("# --time-limit %.0f s reached: %d op x dtype pairs not calibrated (defaults kept)\n",
             s.o.time_limit_s, skipped);
      break;
    }
    double t0 = bench_now_s();
    if (filled != (int)t) { /* fresh data per dtype (parallel fill: fast) */
      size_t elems = s.cap * 8 / xpar_dtype_size(t);
      bench_fill_random(t, s.x, elems, s.o.seed);
      bench_fill_random(t, s.y, elems, s.o.seed + 1);
      if (s.pinned_ok) {
        memcpy(s.px, s.x, s.cap * 8);
        memcpy(s.py, s.y, s.cap * 8);
      }
      filled = (int)t;
    }
    sweep_openmp(&s, op, t);
    if (s.gpu_ok) sweep_gpu(&s, op, t);
    if (s.gpu_ok && s.dout && s.cap >= ((size_t)1 << CAL_DEVONLY_HI)) sweep_device_only(&s, op, t);
    fflush(stdout);
    fprintf(stderr, "[calibrate] %s %s done in %.1f s (%.0f s in all)\n", op->name,
            xpar_dtype_name(t), bench_now_s() - t0, bench_now_s() - t_all);
  }

  /* the profile: the measured values set through the API, saved once */
  xpar_context *ctx = open_ctx(XPAR_BACKEND_AUTO, 0, DEFAULTS);
  int ok = ctx != NULL;
  for (int o = 0; ok && o < XPAR_OP_COUNT_; ++o)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; ++k)
        if (s.r.measured[o][t][k])
          xpar_context_set_threshold(ctx, (xpar_op)o, (xpar_dtype)t, (xpar_threshold)k,
                                     s.r.thr[o][t][k]);
  if (ok) {
    xpar_status st = xpar_profile_save(ctx, path);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar-bench calibrate: saving %s: %s (%s)\n", path, xpar_status_name(st),
              xpar_last_error_detail());
      ok = 0;
    }
  }
  if (ctx) xpar_context_destroy(ctx);
  if (ok) {
    printf("# profile written: %s (%.0f s)\n", path, bench_now_s() - t_all);
    ok = round_trip(&s, path);
  }
  if (ok && s.o.split && s.gpu_ok) {
    /* The split's settings into the same profile (it keeps what is there). */
    char *split_argv[] = {"--save", path};
    ok = bench_cmd_split(2, split_argv) == 0;
  }

  xpar_context *all[] = {s.serial, s.openmp, s.cpu, s.gpu, s.gpu_map};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (all[i]) xpar_context_destroy(all[i]);
  free(s.x);
  free(s.y);
  free(s.out);
  bench_free_pinned(s.px);
  bench_free_pinned(s.py);
  bench_free_pinned(s.pout);
  bench_free_device(s.dx);
  bench_free_device(s.dy);
  bench_free_device(s.dout);
  return ok ? 0 : 1;
}
