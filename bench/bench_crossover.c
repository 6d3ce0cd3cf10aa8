/*
 * xpar-bench crossover: for each op x dtype x data location, time every tier
 * (serial, OpenMP, CUDA) and AUTO over N = 2^min .. 2^max as the application
 * sees a synchronous call, then report where the faster side changes and how
 * close AUTO stays to the fastest tier.
 *
 *  - Data: allocated and filled once per op x dtype at the largest N; each N
 *    uses a prefix (so any N can be measured again later, cheaply).  Host
 *    data is plain malloc'd memory: the CUDA tier's call includes its H2D and
 *    D2H copies.  Device data is mapped (xpar_map, MAP_TO) on the cuda and
 *    auto contexts; the CPU tiers compute on the host copy, which is valid.
 *  - Correctness: per N, the first tier that runs computes the reference,
 *    every other tier is checked against it before it is timed.
 *  - Noise (OpenMP wake-ups on a VM give millisecond outliers at random
 *    sizes): medians of >= 5 samples (3 for calls over 0.1 s), short calls
 *    timed in batches; after a sweep, a tier whose curve goes DOWN as N
 *    doubles is measured again at the higher point, and at every N where
 *    AUTO looks more than 8 % slower than the best tier, AUTO and that tier
 *    are measured again in turns (up to 3 rounds, until within 5 %).  The
 *    lowest median is kept: a spike only ever adds time.
 *  - Pruning: a tier more than --prune (20) x slower than the best at two
 *    consecutive N, and not catching up (its ratio to the best did not
 *    shrink by 10% as N doubled, and its own time grew by 1.5x or more: a
 *    flat, fixed-cost curve is still to catch up; so the smallest N never
 *    counts), is not run at larger N ("pruned"; never counted as best;
 *    INFINITY for the crossover analysis).  AUTO is never pruned.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { XT_SERIAL, XT_OPENMP, XT_CUDA, XT_AUTO, XT_COUNT };
static const char *const xt_names[XT_COUNT] = {"serial", "openmp", "cuda", "auto"};

typedef enum pt_status {
  PT_NONE = 0,    /* not reached (sweep stopped, or out of range) */
  PT_OK,
  PT_PRUNED,      /* > prune x slower than the best at two smaller N */
  PT_UNAVAILABLE, /* no usable GPU */
  PT_WRONG,       /* differs from the reference: never timed */
  PT_FAILED,      /* the call (or its mapping) failed */
} pt_status;
static const char *const pt_names[] = {"-", "ok", "pruned", "n/a", "WRONG", "failed"};

typedef struct xo_point {
  pt_status st;
  bench_timing t;
  char ran[24]; /* auto: the tier xpar chose */
  int remeasured;
} xo_point;

typedef struct xo_sweep {
  const bench_op *op;
  xpar_dtype dtype;
  bench_location loc;
  int min_exp, max_exp;
  xo_point pt[XT_COUNT][BENCH_MAX_EXP + 1];
  int slow_streak[XT_COUNT];
  double last_ratio[XT_COUNT]; /* tier time / best time at the previous N */
  double last_time[XT_COUNT];  /* tier time at the previous N (seconds; 0: none) */
  int x_omp, x_gpu;       /* crossover exponents (BENCH_NEVER, BENCH_NO_DATA) */
  double auto_worst;      /* max over N of t_auto / t_best */
  int auto_worst_exp;
  int auto_misses;        /* N where t_auto / t_best > 1.10 */
  int auto_sizes;         /* N where the ratio is known */
  double seconds;
  char plot_path[1024];
} xo_sweep;

typedef struct xo_opts {
  const char *ops, *dtypes, *locations;
  int min_exp, max_exp;
  const char *out_dir;
  int threads;
  uint64_t seed;
  double prune;
  int plot, quick;
  double time_limit_s; /* 0: none; else stop measuring after this long */
  bench_timing_cfg timing;
} xo_opts;

typedef struct xo_state {
  xo_opts o;
  bench_tier_run runs[XT_COUNT];
  int avail[XT_COUNT];
  xpar_device_info dev;
  FILE *csv;
  int tty; /* stderr is a terminal: progress may redraw one line */
  double t_start;
  int out_of_time; /* --time-limit passed: the rest is left unmeasured */
} xo_state;

static int out_of_time(xo_state *x) {
  if (!x->out_of_time && x->o.time_limit_s > 0 && bench_now_s() - x->t_start > x->o.time_limit_s) {
    fprintf(stderr, "xpar-bench crossover: --time-limit %.0f s reached: stopping here; what is "
                    "measured so far is reported\n", x->o.time_limit_s);
    x->out_of_time = 1;
  }
  return x->out_of_time;
}

/* ---- analysis -------------------------------------------------------------- */

/* The rule is libxpar's (base/crossing.c, compiled into the bench too). */
int bench_crossing(const double *a, const double *b, int lo, int hi) {
  return xpar__crossing(a, b, lo, hi);
}

const char *bench_exp_str(int e, char *buf, size_t size) {
  if (e == BENCH_NEVER)
    snprintf(buf, size, "never");
  else if (e == BENCH_NO_DATA)
    snprintf(buf, size, "n/a");
  else
    snprintf(buf, size, "2^%d", e);
  return buf;
}

/* Time for the analysis: NAN unknown, INFINITY pruned. */
static double pt_time(const xo_point *p) {
  if (p->st == PT_OK) return p->t.median_s;
  if (p->st == PT_PRUNED) return INFINITY;
  return NAN;
}

static int best_tier(const xo_sweep *s, int e) {
  int best = -1;
  for (int i = 0; i < XT_AUTO; ++i)
    if (s->pt[i][e].st == PT_OK &&
        (best < 0 || s->pt[i][e].t.median_s < s->pt[best][e].t.median_s))
      best = i;
  return best;
}

static double auto_ratio(const xo_sweep *s, int e) {
  int b = best_tier(s, e);
  if (b < 0 || s->pt[XT_AUTO][e].st != PT_OK) return NAN;
  return s->pt[XT_AUTO][e].t.median_s / s->pt[b][e].t.median_s;
}

static void analyse(xo_sweep *s) {
  double ser[BENCH_MAX_EXP + 1], omp[BENCH_MAX_EXP + 1], cpu[BENCH_MAX_EXP + 1],
      gpu[BENCH_MAX_EXP + 1];
  for (int e = s->min_exp; e <= s->max_exp; ++e) {
    ser[e] = pt_time(&s->pt[XT_SERIAL][e]);
    omp[e] = pt_time(&s->pt[XT_OPENMP][e]);
    gpu[e] = pt_time(&s->pt[XT_CUDA][e]);
    cpu[e] = isnan(ser[e]) ? omp[e] : isnan(omp[e]) ? ser[e] : fmin(ser[e], omp[e]);
  }
  s->x_omp = bench_crossing(ser, omp, s->min_exp, s->max_exp);
  s->x_gpu = bench_crossing(cpu, gpu, s->min_exp, s->max_exp);
  s->auto_worst = NAN;
  s->auto_worst_exp = -1;
  s->auto_misses = s->auto_sizes = 0;
  for (int e = s->min_exp; e <= s->max_exp; ++e) {
    double r = auto_ratio(s, e);
    if (isnan(r)) continue;
    s->auto_sizes++;
    if (r > 1.10) s->auto_misses++;
    if (isnan(s->auto_worst) || r > s->auto_worst) s->auto_worst = r, s->auto_worst_exp = e;
  }
}

/* ---- measuring one point --------------------------------------------------- */

static void report_failure(const xo_sweep *s, int tier, int e, const char *what, xpar_status st) {
  fprintf(stderr, "\nxpar-bench: %s %s %s, %s at n = 2^%d: %s: %s (%s)\n", s->op->name,
          xpar_dtype_name(s->dtype), bench_location_name(s->loc), xt_names[tier], e, what,
          xpar_status_name(st), xpar_last_error_detail());
}

/* Measure tier at 2^e into *out.  check: run once checked against the
 * reference first (*have_ref: whether one exists; the first tier makes it). */
static void measure(xo_state *x, xo_sweep *s, int tier, bench_case *big, int e, int check,
                    int *have_ref, xo_point *out) {
  memset(out, 0, sizeof *out);
  bench_tier_run *tr = &x->runs[tier];
  bench_case v = bench_case_prefix(big, (size_t)1 << e);
  if (!s->op->has_array_output) v.out = NULL; /* not an operand: never mapped */
  /* Device data is mapped on every tier's context, the CPU tiers' too: they
   * then compute on the valid host copy through the same (mapped) dispatch
   * path as AUTO, so the comparison is about the tier, not the path. */
  int map = s->loc == BENCH_DEVICE;
  if (map) {
    xpar_status st = bench_tier_map(tr, &v, s->op);
    if (st != XPAR_OK) {
      report_failure(s, tier, e, "xpar_map", st);
      out->st = PT_FAILED;
      return;
    }
  }
  double prior = -1.0;
  if (check) {
    bench_case_reset(&v, s->op);
    double t0 = bench_now_s();
    xpar_status st = bench_tier_call(tr, &v, s->op, x->o.threads, 1);
    prior = bench_now_s() - t0;
    if (st != XPAR_OK) {
      report_failure(s, tier, e, "call", st);
      out->st = PT_FAILED;
      goto done;
    }
    if (!*have_ref) {
      bench_case_save_reference(&v);
      /* a scalar reference lives in the case itself: keep it in big, which
       * every later view of this N is copied from */
      memcpy(big->ref_result, v.ref_result, sizeof big->ref_result);
      *have_ref = 1;
    } else {
      char why[128];
      if (!bench_case_check(&v, why, sizeof why)) {
        fprintf(stderr, "\nxpar-bench: %s %s %s, %s at n = 2^%d is WRONG: %s\n", s->op->name,
                xpar_dtype_name(s->dtype), bench_location_name(s->loc), xt_names[tier], e, why);
        out->st = PT_WRONG;
        goto done;
      }
    }
  }
  bench_call_arg arg = {tr, &v, s->op, x->o.threads};
  if (!bench_time_after(&x->o.timing, prior, bench_timed_call, &arg, &out->t)) {
    fprintf(stderr, "\nxpar-bench: %s at n = 2^%d: a timed call failed (%s)\n", xt_names[tier], e,
            xpar_last_error_detail());
    out->st = PT_FAILED;
    goto done;
  }
  out->st = PT_OK;
  if (tier == XT_AUTO) { /* the decision of the last timed call: the steady state */
    xpar_decision d;
    if (xpar_last_decision(tr->ctx, &d) == XPAR_OK)
      snprintf(out->ran, sizeof out->ran, "%s", xpar_tier_name(d.tier));
  }
done:
  if (map) bench_tier_unmap(tr, &v, s->op);
}

/* Measure again and keep the lower median: a spike only ever adds time. */
static void remeasure(xo_state *x, xo_sweep *s, int tier, bench_case *big, int e, int max_times) {
  xo_point *p = &s->pt[tier][e];
  if (p->st != PT_OK || p->remeasured >= max_times) return;
  xo_point again;
  int have_ref = 1;
  measure(x, s, tier, big, e, 0, &have_ref, &again);
  p->remeasured++;
  if (again.st == PT_OK && again.t.median_s < p->t.median_s) {
    p->t = again.t;
    if (again.ran[0]) memcpy(p->ran, again.ran, sizeof p->ran);
  }
}

/* ---- the sweep ------------------------------------------------------------- */

static void fmt_point(char *buf, size_t size, const xo_point *p) {
  if (p->st != PT_OK)
    snprintf(buf, size, "%s", pt_names[p->st]);
  else if (p->t.median_s < 1e-6)
    snprintf(buf, size, "%.0fns", p->t.median_s * 1e9);
  else if (p->t.median_s < 1e-3)
    snprintf(buf, size, "%.2fus", p->t.median_s * 1e6);
  else if (p->t.median_s < 1.0)
    snprintf(buf, size, "%.3fms", p->t.median_s * 1e3);
  else
    snprintf(buf, size, "%.3fs", p->t.median_s);
}

static const char *sweep_label(const xo_sweep *s, char *buf, size_t size) {
  snprintf(buf, size, "%s %s %s", s->op->name, xpar_dtype_name(s->dtype),
           bench_location_name(s->loc));
  return buf;
}

static void run_sweep(xo_state *x, xo_sweep *s, bench_case *big) {
  char label[64];
  sweep_label(s, label, sizeof label);
  double t_start = bench_now_s();
  for (int e = s->min_exp; e <= s->max_exp; ++e) {
    if (out_of_time(x)) { /* keep what is measured: the analysis covers it */
      s->max_exp = e - 1;
      break;
    }
    int have_ref = 0;
    for (int i = 0; i < XT_COUNT; ++i) {
      xo_point *p = &s->pt[i][e];
      if (!x->avail[i]) {
        p->st = PT_UNAVAILABLE;
        continue;
      }
      if (i != XT_AUTO && s->slow_streak[i] >= 2) {
        p->st = PT_PRUNED;
        continue;
      }
      if (x->tty) fprintf(stderr, "\r[%s] n = 2^%d: %-8s", label, e, xt_names[i]);
      measure(x, s, i, big, e, 1, &have_ref, p);
    }
    /* Pruning: a tier far slower than the best is measured once more before
     * it counts (an 8 ms scheduler spike at two sizes in a row must not
     * remove a tier), and is dropped after two such sizes. */
    for (int i = 0; i < XT_AUTO; ++i) {
      int b = best_tier(s, e);
      const xo_point *p = &s->pt[i][e];
      if (p->st != PT_OK || b < 0) continue;
      if (p->t.median_s > x->o.prune * s->pt[b][e].t.median_s) remeasure(x, s, i, big, e, 1);
      b = best_tier(s, e);
      /* A slow tier counts only while it is not catching up: the GPU is far
       * slower at small N (a fixed ~10-17 us per call) but its ratio to the best
       * shrinks as N doubles, and it must be measured where it wins.  Nor does a
       * tier whose own time stays flat as N doubles (a fixed cost, not yet
       * growing with N): next to CPU tiers that are flat too (call overhead at
       * 2^7..2^8) its ratio does not shrink, yet it will catch up (an H100 run
       * of 2026-11-22 pruned the GPU scan of float device data at 2^9 so). */
      double ratio = p->t.median_s / s->pt[b][e].t.median_s;
      int growing = s->last_time[i] > 0.0 && p->t.median_s >= 1.5 * s->last_time[i];
      int losing = ratio > x->o.prune && !(ratio < 0.9 * s->last_ratio[i]) && growing;
      s->slow_streak[i] = losing ? s->slow_streak[i] + 1 : 0;
      s->last_ratio[i] = ratio;
      s->last_time[i] = p->t.median_s;
    }
    /* one line per N on stderr: the log keeps what was measured even if the
     * run dies before the table is printed */
    char buf[XT_COUNT][32];
    for (int i = 0; i < XT_COUNT; ++i) fmt_point(buf[i], sizeof buf[i], &s->pt[i][e]);
    fprintf(stderr, "%s[%s] n = 2^%-2d serial %-9s openmp %-9s cuda %-9s auto %-9s %s  (%.0f s)\n",
            x->tty ? "\r" : "", label, e, buf[0], buf[1], buf[2], buf[3], s->pt[XT_AUTO][e].ran,
            bench_now_s() - t_start);
  }

  /* Spikes: a curve that goes down as N doubles, measured again at the top. */
  for (int i = 0; i < XT_COUNT && !out_of_time(x); ++i)
    for (int e = s->min_exp; e < s->max_exp; ++e) {
      const xo_point *p = &s->pt[i][e], *q = &s->pt[i][e + 1];
      if (p->st == PT_OK && q->st == PT_OK && p->t.median_s > 1.15 * q->t.median_s) {
        fprintf(stderr, "[%s] n = 2^%d: %s non-monotonic, measuring again\n", label, e,
                xt_names[i]);
        remeasure(x, s, i, big, e, 1);
      }
    }
  /* AUTO apparently slow: measure AUTO and the best tier again. */
  for (int e = s->min_exp; e <= s->max_exp && !out_of_time(x); ++e) {
    double r = auto_ratio(s, e);
    if (!(r > 1.08)) continue;
    /* up to three rounds, AUTO and the best tier taking turns, so a slow
     * stretch of the machine does not land on one of them only */
    for (int round = 0; round < 3 && r > 1.05; ++round) {
      fprintf(stderr, "[%s] n = 2^%d: auto/best %.3f, measuring both again\n", label, e, r);
      remeasure(x, s, XT_AUTO, big, e, 3);
      remeasure(x, s, best_tier(s, e), big, e, 3);
      r = auto_ratio(s, e);
    }
  }
  s->seconds = bench_now_s() - t_start;
  analyse(s);
}

/* ---- writers --------------------------------------------------------------- */

static void print_sweep(FILE *f, const xo_state *x, const xo_sweep *s) {
  char label[64], a[16], b[16];
  fprintf(f, "\n# crossover: %s (%s), threads %d%s, %.0f s\n", sweep_label(s, label, sizeof label),
          s->loc == BENCH_HOST ? "host data, pageable: the cuda call includes H2D/D2H"
                               : "device data: mapped, valid on both sides",
          x->o.threads, x->o.threads ? "" : " (runtime default)", s->seconds);
  fprintf(f, "%-6s %10s %10s %10s %10s  %-11s %-7s %9s\n", "n", "serial", "openmp", "cuda", "auto",
          "auto ran", "best", "auto/best");
  for (int e = s->min_exp; e <= s->max_exp; ++e) {
    char buf[XT_COUNT][32], nb[16];
    for (int i = 0; i < XT_COUNT; ++i) fmt_point(buf[i], sizeof buf[i], &s->pt[i][e]);
    int bt = best_tier(s, e);
    double r = auto_ratio(s, e);
    snprintf(nb, sizeof nb, "2^%d", e);
    fprintf(f, "%-6s %10s %10s %10s %10s  %-11s %-7s", nb, buf[0], buf[1], buf[2], buf[3],
            s->pt[XT_AUTO][e].ran, bt >= 0 ? xt_names[bt] : "-");
    if (isnan(r))
      fprintf(f, " %9s\n", "-");
    else
      fprintf(f, " %9.3f%s\n", r, r > 1.10 ? "  <-- over 1.10" : "");
  }
  fprintf(f, "# crossovers: serial->openmp %s; CPU->GPU %s%s; ", bench_exp_str(s->x_omp, a, sizeof a),
          bench_exp_str(s->x_gpu, b, sizeof b), x->avail[XT_CUDA] ? "" : " (no usable GPU)");
  if (isnan(s->auto_worst))
    fprintf(f, "AUTO: no data\n");
  else if (s->auto_misses == 0)
    fprintf(f, "AUTO within %.0f%% of the best tier at every N (worst %.3f at 2^%d)\n",
            fmax(0.0, (s->auto_worst - 1.0) * 100.0), s->auto_worst, s->auto_worst_exp);
  else
    fprintf(f, "AUTO more than 10%% slower than the best tier at %d of %d N (worst %.3f at 2^%d)\n",
            s->auto_misses, s->auto_sizes, s->auto_worst, s->auto_worst_exp);
  fflush(f);
}

static void csv_sweep(FILE *f, const xo_sweep *s) {
  for (int e = s->min_exp; e <= s->max_exp; ++e) {
    int bt = best_tier(s, e);
    double r = auto_ratio(s, e);
    for (int i = 0; i < XT_COUNT; ++i) {
      const xo_point *p = &s->pt[i][e];
      int ok = p->st == PT_OK;
      fprintf(f, "%s,%s,%s,%zu,%d,%s,%s,%.4f,%.4f,%.4f,%d,%d,%d,%s,%s,", s->op->name,
              xpar_dtype_name(s->dtype), bench_location_name(s->loc), (size_t)1 << e, e,
              xt_names[i], pt_names[p->st], ok ? p->t.median_s * 1e6 : 0.0,
              ok ? p->t.min_s * 1e6 : 0.0, ok ? p->t.max_s * 1e6 : 0.0, ok ? p->t.reps : 0,
              ok ? p->t.batch : 0, p->remeasured, p->ran, bt >= 0 ? xt_names[bt] : "");
      if (i == XT_AUTO && !isnan(r))
        fprintf(f, "%.4f\n", r);
      else
        fprintf(f, "\n");
    }
  }
  fflush(f);
}

static void plot_of(const xo_sweep *s, bench_plot *p) {
  char label[64];
  memset(p, 0, sizeof *p);
  snprintf(p->title, sizeof p->title, "%s %s, %s data", s->op->name, xpar_dtype_name(s->dtype),
           bench_location_name(s->loc));
  (void)label;
  p->min_exp = s->min_exp;
  p->max_exp = s->max_exp;
  for (int i = 0; i < XT_COUNT; ++i) {
    int any = 0;
    for (int e = s->min_exp; e <= s->max_exp; ++e) any |= s->pt[i][e].st == PT_OK;
    if (!any) continue;
    int k = p->nseries++;
    p->series[k] = xt_names[i];
    for (int e = 0; e <= BENCH_MAX_EXP; ++e)
      p->t_s[k][e] = (e >= s->min_exp && e <= s->max_exp && s->pt[i][e].st == PT_OK)
                         ? s->pt[i][e].t.median_s
                         : NAN;
  }
  if (s->x_omp >= 0) {
    p->mark_exp[p->nmarks] = s->x_omp;
    snprintf(p->mark_label[p->nmarks++], 48, "serial->openmp 2^%d", s->x_omp);
  }
  if (s->x_gpu >= 0) {
    p->mark_exp[p->nmarks] = s->x_gpu;
    snprintf(p->mark_label[p->nmarks++], 48, "CPU->GPU 2^%d", s->x_gpu);
  }
}

static const char summary_head[] =
    "%-7s %-7s %-7s %-15s %-9s %-22s %s\n";

static void summary_line(FILE *f, const xo_state *x, const xo_sweep *s) {
  char a[16], b[16], w[48];
  bench_exp_str(s->x_omp, a, sizeof a);
  bench_exp_str(s->x_gpu, b, sizeof b);
  if (!x->avail[XT_CUDA]) snprintf(b, sizeof b, "n/a (no GPU)");
  if (isnan(s->auto_worst))
    snprintf(w, sizeof w, "-");
  else
    snprintf(w, sizeof w, "%.3f at 2^%d", s->auto_worst, s->auto_worst_exp);
  char verdict[48];
  if (isnan(s->auto_worst))
    snprintf(verdict, sizeof verdict, "no data");
  else if (s->auto_misses == 0)
    snprintf(verdict, sizeof verdict, "yes (2^%d..2^%d)", s->min_exp, s->max_exp);
  else
    snprintf(verdict, sizeof verdict, "NO: %d of %d N over 1.10", s->auto_misses, s->auto_sizes);
  fprintf(f, summary_head, s->op->name, xpar_dtype_name(s->dtype), bench_location_name(s->loc), a,
          b, w, verdict);
}

static void print_summary(FILE *f, const xo_state *x, const xo_sweep *sw, int n) {
  fprintf(f, "# xpar-bench crossover summary (medians; AUTO ratio = t_auto / t_fastest tier)\n");
  fprintf(f, summary_head, "# op", "dtype", "data", "serial->openmp", "CPU->GPU", "AUTO worst ratio",
          "AUTO within 10% at every N");
  for (int i = 0; i < n; ++i) summary_line(f, x, &sw[i]);
  fflush(f);
}

/* ---- options --------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-bench crossover [options]\n"
          "  --quick            reduce+scan int32, host data, 2^7..2^22, fewer reps (~1 min);\n"
          "                     --ops, --dtypes, --locations, --max-exp given too win\n"
          "  --ops LIST         comma-separated ops (default reduce,scan)\n"
          "  --dtypes LIST      comma-separated dtypes (default int32,float)\n"
          "  --locations LIST   host,device (default both; device needs a GPU)\n"
          "  --min-exp E        smallest N = 2^E (default 7)\n"
          "  --max-exp E        largest N = 2^E (default 30; capped by free memory)\n"
          "  --out-dir DIR      CSV, plots and summary go here (default crossover)\n"
          "  --threads T        OpenMP threads (default: the runtime's)\n"
          "  --min-time-ms M    adaptive reps run at least M ms per point (default 20)\n"
          "  --prune F          stop timing a tier F x slower than the best at 2 N (20)\n"
          "  --time-limit S     stop measuring after S seconds and report what was measured\n"
          "  --seed S           random seed\n"
          "  --no-plot          no PNG/SVG\n"
          "  --svg              SVG charts even where gnuplot is installed\n"
          "Writes DIR/crossover.csv (one row per N x tier), DIR/summary.txt, DIR/summary.csv,\n"
          "and a chart per sweep (DIR/<op>-<dtype>-<location>.png via gnuplot, else .svg).\n");
}

static int parse_opts(int argc, char **argv, xo_opts *o) {
  *o = (xo_opts){.ops = "reduce,scan", .dtypes = "int32,float", .locations = "host,device",
                 .min_exp = 7, .max_exp = 30, .out_dir = "crossover",
                 .seed = (uint64_t)(bench_now_s() * 1e6), .prune = 20.0, .plot = 1,
                 .timing = {.min_reps = 5, .min_time_s = 0.020, .max_reps = 1000,
                            .long_call_s = 0.1, .long_reps = 3, .batch_s = 50e-6}};
  int max_set = 0, time_set = 0, ops_set = 0, dtypes_set = 0, locations_set = 0;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    long v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--quick") == 0) {
      o->quick = 1;
      continue;
    }
    if (strcmp(a, "--no-plot") == 0 || strcmp(a, "--svg") == 0) {
      o->plot = a[2] == 's' ? 2 : 0; /* 2: SVG even where gnuplot exists */
      continue;
    }
    const char *val = i + 1 < argc ? argv[++i] : NULL;
    if (!val) {
      fprintf(stderr, "xpar-bench crossover: %s needs a value\n", a);
      return -1;
    }
    if (strcmp(a, "--ops") == 0) o->ops = val, ops_set = 1;
    else if (strcmp(a, "--dtypes") == 0) o->dtypes = val, dtypes_set = 1;
    else if (strcmp(a, "--locations") == 0) o->locations = val, locations_set = 1;
    else if (strcmp(a, "--out-dir") == 0) o->out_dir = val;
    else if (strcmp(a, "--min-exp") == 0 && bench_parse_long(val, 0, BENCH_MAX_EXP, &v))
      o->min_exp = (int)v;
    else if (strcmp(a, "--max-exp") == 0 && bench_parse_long(val, 0, BENCH_MAX_EXP, &v))
      o->max_exp = (int)v, max_set = 1;
    else if (strcmp(a, "--threads") == 0 && bench_parse_long(val, 0, 4096, &v))
      o->threads = (int)v;
    else if (strcmp(a, "--min-time-ms") == 0 && bench_parse_long(val, 0, 100000, &v))
      o->timing.min_time_s = (double)v * 1e-3, time_set = 1;
    else if (strcmp(a, "--time-limit") == 0 && bench_parse_long(val, 1, 1000000, &v))
      o->time_limit_s = (double)v;
    else if (strcmp(a, "--prune") == 0 && bench_parse_long(val, 2, 1000000, &v))
      o->prune = (double)v;
    else if (strcmp(a, "--seed") == 0 && bench_parse_long(val, 0, __LONG_MAX__, &v))
      o->seed = (uint64_t)v;
    else {
      fprintf(stderr, "xpar-bench crossover: bad option or value: %s %s\n", a, val);
      usage(stderr);
      return -1;
    }
  }
  if (o->quick) {
    /* what scripts/demo runs after the demo: ~1 minute on 2 cores (options given
     * explicitly win) */
    if (!ops_set) o->ops = "reduce,scan";
    if (!dtypes_set) o->dtypes = "int32";
    if (!locations_set) o->locations = "host";
    if (!max_set) o->max_exp = 22;
    if (!time_set) o->timing.min_time_s = 0.040;
    o->timing.min_reps = 9;
    o->timing.max_reps = 400;
  }
  if (o->min_exp > o->max_exp) {
    fprintf(stderr, "xpar-bench crossover: --min-exp > --max-exp\n");
    return -1;
  }
  if (!bench_ops_dtypes_valid("crossover", o->ops, o->dtypes)) return -1;
  const char *locations[BENCH_LOCATION_COUNT];
  for (int l = 0; l < BENCH_LOCATION_COUNT; ++l) locations[l] = bench_location_name((bench_location)l);
  if (!bench_list_valid("crossover", "--locations", o->locations, locations, BENCH_LOCATION_COUNT))
    return -1;
  return 1;
}

/* Arrays bench_case_init allocates for op (x, y, y0, out, reference). */
static int arrays_of(const bench_op *op) {
  int need_y = op->op == XPAR_OP_AXPY || op->op == XPAR_OP_ADD || op->op == XPAR_OP_DOT;
  int need_out = op->op == XPAR_OP_SCAN || op->op == XPAR_OP_ADD || op->op == XPAR_OP_FILL;
  return 1 + need_y + (op->op == XPAR_OP_AXPY) + need_out + op->has_array_output;
}

/* The largest exponent whose arrays fit: host memory (80 % of MemAvailable)
 * and, for GPU tiers, device memory (a mapping plus the cuda tier's staging). */
static int cap_exp(const xo_state *x, const bench_op *op, xpar_dtype t, int want) {
  size_t avail = bench_mem_available();
  size_t es = xpar_dtype_size(t);
  int e = want;
  while (e > x->o.min_exp && avail &&
         (double)arrays_of(op) * ldexp((double)es, e) > 0.8 * (double)avail)
    --e;
  if (x->avail[XT_CUDA] && x->dev.total_memory)
    while (e > x->o.min_exp &&
           4.0 * ldexp((double)es, e) > 0.7 * (double)x->dev.total_memory)
      --e;
  if (e < want)
    fprintf(stderr,
            "xpar-bench: %s %s: N capped at 2^%d (2^%d needs %.1f GiB of host memory for %d "
            "arrays; %.1f GiB available)\n",
            op->name, xpar_dtype_name(t), e, want,
            (double)arrays_of(op) * ldexp((double)es, want) / (1 << 30), arrays_of(op),
            (double)avail / (1 << 30));
  return e;
}

static int make_dir(const char *d) {
  if (bench_mkdir_p(d)) return 1;
  fprintf(stderr, "xpar-bench: cannot create %s: %s\n", d, strerror(errno));
  return 0;
}

/* ---- the command ----------------------------------------------------------- */

int bench_cmd_crossover(int argc, char **argv) {
  xo_state x;
  memset(&x, 0, sizeof x);
  int r = parse_opts(argc, argv, &x.o);
  if (r <= 0) return r == 0 ? 0 : 2;
  if (!make_dir(x.o.out_dir)) return 1;
  x.tty = isatty(2);

  if (xpar_device_query(&x.dev) != XPAR_OK) x.dev.usable = 0;
  static const char *const tier_for[XT_COUNT] = {"serial", "openmp", "cuda", "auto"};
  for (int i = 0; i < XT_COUNT; ++i) {
    const bench_tier *t = NULL;
    for (int k = 0; k < bench_tier_count(); ++k)
      if (strcmp(bench_tier_at(k)->name, tier_for[i]) == 0) t = bench_tier_at(k);
    if (!t) return 1;
    if (t->needs_gpu && !x.dev.usable) {
      fprintf(stderr, "xpar-bench: tier %s unavailable: %s\n", t->name, x.dev.reason);
      continue;
    }
    xpar_status st = bench_tier_open(&x.runs[i], t, x.o.threads);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar-bench: tier %s: %s (%s)\n", t->name, xpar_status_name(st),
              xpar_last_error_detail());
      return 1;
    }
    x.avail[i] = 1;
  }

  char path[1024];
  snprintf(path, sizeof path, "%s/crossover.csv", x.o.out_dir);
  x.csv = bench_open_output("crossover", path, "w");
  if (!x.csv) return 1;
  fprintf(x.csv, "op,dtype,location,n,exp,tier,status,median_us,min_us,max_us,samples,batch,"
                 "remeasured,auto_ran,best_tier,auto_over_best\n");

  enum { MAX_SWEEPS = BENCH_OP_COUNT * XPAR_DTYPE_COUNT_ * BENCH_LOCATION_COUNT };
  xo_sweep *sw = calloc(MAX_SWEEPS, sizeof *sw);
  bench_plot *plots = calloc(MAX_SWEEPS, sizeof *plots);
  char(*bases)[1024] = calloc(MAX_SWEEPS, sizeof *bases);
  if (!sw || !plots || !bases) return 1;
  int nsw = 0, failures = 0;
  int gnuplot = x.o.plot == 1 && bench_have_gnuplot();
  if (x.o.plot == 1 && !gnuplot)
    fprintf(stderr, "xpar-bench: gnuplot (pngcairo) not found: writing SVG charts\n");
  printf("# xpar-bench crossover, seed %llu, GPU: %s\n", (unsigned long long)x.o.seed,
         x.dev.usable ? x.dev.name : x.dev.reason);
  double t_all = x.t_start = bench_now_s();

  for (int oi = 0; bench_op_at(oi); ++oi) {
    const bench_op *op = bench_op_at(oi);
    if (!bench_list_has(x.o.ops, op->name)) continue;
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t) {
      if (!bench_list_has(x.o.dtypes, xpar_dtype_name((xpar_dtype)t))) continue;
      if (out_of_time(&x)) break;
      int max_exp = cap_exp(&x, op, (xpar_dtype)t, x.o.max_exp);
      bench_case big = {.reduction = XPAR_SUM, .kind = XPAR_INCLUSIVE};
      double t0 = bench_now_s();
      if (!bench_case_init(&big, op, (xpar_dtype)t, (size_t)1 << max_exp,
                           x.o.seed + (uint64_t)oi * 131 + (uint64_t)t)) {
        fprintf(stderr, "xpar-bench: out of memory allocating 2^%d %s\n", max_exp,
                xpar_dtype_name((xpar_dtype)t));
        failures++;
        continue;
      }
      if (bench_now_s() - t0 > 1.0)
        fprintf(stderr, "xpar-bench: %s %s: data for 2^%d ready in %.1f s\n", op->name,
                xpar_dtype_name((xpar_dtype)t), max_exp, bench_now_s() - t0);
      for (int l = 0; l < BENCH_LOCATION_COUNT; ++l) {
        if (!bench_list_has(x.o.locations, bench_location_name((bench_location)l))) continue;
        if (l == BENCH_DEVICE && !x.dev.usable) {
          fprintf(stderr, "xpar-bench: %s %s device data skipped: no usable GPU (%s)\n", op->name,
                  xpar_dtype_name((xpar_dtype)t), x.dev.reason);
          continue;
        }
        if (nsw == MAX_SWEEPS || out_of_time(&x)) break;
        xo_sweep *s = &sw[nsw];
        s->op = op;
        s->dtype = (xpar_dtype)t;
        s->loc = (bench_location)l;
        s->min_exp = x.o.min_exp;
        s->max_exp = max_exp;
        run_sweep(&x, s, &big);
        print_sweep(stdout, &x, s);
        csv_sweep(x.csv, s);
        if (x.o.plot) {
          plot_of(s, &plots[nsw]);
          snprintf(bases[nsw], sizeof bases[nsw], "%s/%s-%s-%s", x.o.out_dir, op->name,
                   xpar_dtype_name(s->dtype), bench_location_name(s->loc));
          if (bench_plot_write(&plots[nsw], bases[nsw], gnuplot, s->plot_path,
                               sizeof s->plot_path))
            printf("# chart: %s\n", s->plot_path);
          else
            fprintf(stderr, "xpar-bench: could not write the chart %s\n", bases[nsw]);
        }
        for (int e = s->min_exp; e <= s->max_exp; ++e)
          for (int i = 0; i < XT_COUNT; ++i)
            failures += s->pt[i][e].st == PT_WRONG || s->pt[i][e].st == PT_FAILED;
        nsw++;
      }
      bench_case_free(&big);
    }
  }
  snprintf(path, sizeof path, "%s/crossover.csv", x.o.out_dir);
  if (!bench_close_output("crossover", path, x.csv)) failures++;

  /* overview chart and summary */
  char overview[1024] = "";
  if (x.o.plot && gnuplot && nsw > 1) {
    const char *b[MAX_SWEEPS];
    for (int i = 0; i < nsw; ++i) b[i] = bases[i];
    snprintf(overview, sizeof overview, "%s/crossover.png", x.o.out_dir);
    if (!bench_plot_overview(plots, b, nsw, overview)) overview[0] = '\0';
  }
  if (!overview[0] && nsw > 0) snprintf(overview, sizeof overview, "%s", sw[0].plot_path);
  snprintf(path, sizeof path, "%s/summary.txt", x.o.out_dir);
  FILE *f = bench_open_output("crossover", path, "w");
  if (!f) failures++;
  if (f) {
    print_summary(f, &x, sw, nsw);
    if (!bench_close_output("crossover", path, f)) failures++;
  }
  snprintf(path, sizeof path, "%s/summary.csv", x.o.out_dir);
  f = bench_open_output("crossover", path, "w");
  if (!f) failures++;
  if (f) {
    fprintf(f, "op,dtype,location,min_exp,max_exp,serial_openmp_exp,cpu_gpu_exp,"
               "auto_worst_ratio,auto_worst_exp,auto_sizes_over_1.10,auto_sizes,seconds\n");
    for (int i = 0; i < nsw; ++i)
      fprintf(f, "%s,%s,%s,%d,%d,%d,%d,%.4f,%d,%d,%d,%.1f\n", sw[i].op->name,
              xpar_dtype_name(sw[i].dtype), bench_location_name(sw[i].loc), sw[i].min_exp,
              sw[i].max_exp, sw[i].x_omp, sw[i].x_gpu, sw[i].auto_worst, sw[i].auto_worst_exp,
              sw[i].auto_misses, sw[i].auto_sizes, sw[i].seconds);
    if (!bench_close_output("crossover", path, f)) failures++;
  }
  printf("\n");
  print_summary(stdout, &x, sw, nsw);
  printf("# csv: %s/crossover.csv  summary: %s/summary.txt  (%.0f s in all)\n", x.o.out_dir,
         x.o.out_dir, bench_now_s() - t_all);

  if (x.o.quick) {
    /* one paragraph for scripts/demo */
    printf("\ncrossovers on this machine:");
    double worst = NAN;
    int wi = -1;
    for (int i = 0; i < nsw; ++i) {
      char a[16], b[16];
      printf("%s %s %s serial->openmp %s%s, CPU->GPU %s%s (%s data)", i ? ";" : "",
             sw[i].op->name, xpar_dtype_name(sw[i].dtype), sw[i].x_omp >= 0 ? "at " : "",
             bench_exp_str(sw[i].x_omp, a, sizeof a),
             x.avail[XT_CUDA] && sw[i].x_gpu >= 0 ? "at " : "",
             x.avail[XT_CUDA] ? bench_exp_str(sw[i].x_gpu, b, sizeof b) : "n/a (no usable GPU)",
             bench_location_name(sw[i].loc));
      if (!isnan(sw[i].auto_worst) && (isnan(worst) || sw[i].auto_worst > worst))
        worst = sw[i].auto_worst, wi = i;
    }
    if (wi >= 0)
      printf(". AUTO %s of the fastest tier at every N (worst: %s %s at 2^%d, %.2fx)",
             worst <= 1.10 ? "within 10%" : "NOT within 10%", sw[wi].op->name,
             xpar_dtype_name(sw[wi].dtype), sw[wi].auto_worst_exp, worst);
    printf("; plot written to %s\n", overview[0] ? overview : "(none)");
  }
  free(sw);
  free(plots);
  free(bases);
  for (int i = 0; i < XT_COUNT; ++i) bench_tier_close(&x.runs[i]);
  return failures ? 1 : 0;
}
