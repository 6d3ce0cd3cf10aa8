/*
 * xpar-devbench regret: is AUTO as fast as the best thing the application could
 * have done instead?  For every residency x op x dtype x N it times, side by
 * side in one process:
 *
 *   auto          xpar, default context (thresholds: XPAR_PROFILE / defaults)
 *   serial        xpar, XPAR_BACKEND_CPU_SERIAL (strict element order)
 *   one-thread    xpar, XPAR_BACKEND_CPU with the OpenMP threshold at never:
 *                 the tier AUTO runs below that threshold ("cpu-serial")
 *   openmp        xpar, XPAR_BACKEND_CPU with the OpenMP threshold at 0
 *   cuda          xpar, XPAR_BACKEND_CUDA
 *   plain-serial  a plain serial loop (bench_ops.c)
 *   plain-omp     a plain `#pragma omp parallel for` (reduction), the two-pass scan
 *   cub           CUB, with the copies an application needs (cub/bench_regret_cub.cu)
 *   split         xpar, XPAR_BACKEND_CPU_CUDA (pinned and pageable data only; with
 *                 --alts, not by default)
 *
 * Ops: every built-in op in its sum form -- reduce, inclusive scan, axpy, add,
 * fill, dot -- each on the arrays it reads and writes (axpy updates y in
 * place; fill reads nothing).
 *
 * Residencies: `device` (cudaMalloc: xpar's CPU tiers copy in and out, and so
 * do the plain loops, into pinned staging), `pinned` (cudaMallocHost),
 * `pageable` (malloc), `mapped` (malloc + xpar_map on every xpar context: the
 * plain loops use the host copy, CUB copies it in).
 *
 * Method, per point (residency, op, dtype, N):
 *  - every alternative runs once checked against a reference (the plain
 *    serial loop on the host data; float inputs are small integers, so every
 *    order of summation is exact and the check is bit equality); a wrong one
 *    is reported, never timed;
 *  - one timed call sizes a batch (back-to-back calls lasting >= --batch-us,
 *    so the clock's ~20 ns does not swamp a 50 ns call);
 *  - ROUNDS: each round runs one batch of every alternative, the order
 *    shuffled every round (interleaved: a slow stretch of the machine hits
 *    all of them); then AUTO and the alternatives within 1.5x of the fastest
 *    go on for up to --contender-rounds in all; per alternative the median
 *    and p90 over its rounds (the table's last column: AUTO's count);
 *  - stalls: a round > 10x its alternative's median at that point, or a
 *    median > 10x the alternative's fastest round (an episode long enough to
 *    hold the median), is counted and listed, and the numbers keep it: no
 *    sample is ever dropped;
 *  - AUTO/best: AUTO against every other alternative over the rounds both
 *    ran (an alternative left after the first rounds against AUTO's rounds
 *    of that stretch); best = the one AUTO trails most -- with every
 *    alternative in every round, the fastest median.  A point meets the
 *    target if, against every alternative, AUTO <= 1.10 x its median or
 *    AUTO - it <= 0.3 us (judge_point);
 *  - confirmation: where AUTO misses, up to --confirm-rounds more rounds of
 *    AUTO, the contenders and the alternatives it trails, and the verdict
 *    again over all the rounds (more samples where one verdict was within
 *    the spread; a real gap stays, the rounds are pooled, not re-drawn); the
 *    first verdict is printed beside it (summary, CSV first_*; table: +c);
 *  - paired: the median over rounds of AUTO's round / the best's round (the
 *    same round, moments apart), printed beside AUTO/best: slow stretches
 *    longer than a round cancel in it (rg_point.paired);
 *  - page faults per call and preemptions per round of every alternative
 *    (getrusage around each timed batch), listed under each table where
 *    not zero, and in each stall note.
 * Output: a table per series (op dtype residency), the summary (geometric
 * mean and worst per series and overall), DIR/regret.csv (one row per point
 * and alternative), DIR/summary.csv, and a chart per series.
 */
#include <errno.h>
#include <math.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { R_DEVICE, R_PINNED, R_PAGEABLE, R_MAPPED, R_COUNT };
static const char *const res_names[R_COUNT] = {"device", "pinned", "pageable", "mapped"};

enum { A_AUTO, A_SERIAL, A_ONE, A_OPENMP, A_CUDA, A_PSERIAL, A_POMP, A_CUB, A_SPLIT, A_COUNT };
static const char *const alt_names[A_COUNT] = {"auto",         "serial",    "one-thread",
                                               "openmp",       "cuda",      "plain-serial",
                                               "plain-omp",    "cub",       "split"};
/* The xpar tiers of bench_tiers.c that the first five alternatives and the
 * split (cpu+cuda, host residencies only) are. */
static const char *const alt_tier[A_COUNT] = {"auto", "serial", "one-thread", "openmp", "cuda",
                                              NULL,   NULL,     NULL,         "cpu+cuda"};

#define RG_TARGET_RATIO 1.10
#define RG_TARGET_ABS_S 0.3e-6
#define RG_STALL_FACTOR 10.0
#define RG_CONTENDER_FACTOR 1.5 /* within this of the fastest: more rounds (measure_point) */
#define RG_FAULTS_SHOWN 0.05 /* page faults per call worth a line under the table */

typedef enum { P_NONE = 0, P_OK, P_NA, P_WRONG, P_FAILED } pstat;
static const char *const pstat_names[] = {"-", "ok", "n/a", "WRONG", "failed"};

typedef struct rg_alt_pt {
  pstat st;
  double med, p90, min, max; /* seconds per call */
  int rounds, batch;
  int stalls;      /* rounds > RG_STALL_FACTOR x median */
  int held;        /* the median itself is > RG_STALL_FACTOR x the fastest round */
  char ran[24];    /* auto: the tier of its last call */
  /* What the process suffered during the timed batches (getrusage, all
   * threads, read outside the timed region): page faults per call -- a
   * loop over arrays that stay mapped takes none, so a nonzero figure means
   * pages were unmapped or changed under the calls (the kernel's NUMA or
   * huge-page work, a library remapping memory) -- and involuntary context
   * switches per round (a thread preempted: the host's other load). */
  double faults_per_call, preempt_per_round;
} rg_alt_pt;

typedef struct rg_point {
  int measured;
  rg_alt_pt a[A_COUNT];
  int best;            /* the alternative AUTO trails most (judge_point), -1 none */
  double ratio;        /* auto / best over the rounds both ran, NAN unknown */
  double auto_in_window; /* AUTO's median over the rounds best ran */
  int pass;            /* AUTO meets the target against every alternative */
  int trails[A_COUNT]; /* AUTO misses the target against this alternative */
  /* before the confirmation rounds (the verdict after the contenders' rounds),
   * and how many confirmation rounds ran (0: none needed or none left) */
  double first_ratio;
  int first_pass, confirm_rounds;
  int same_tier; /* the best alternative is the forced tier AUTO ran: the same code */
  /* The median over rounds of AUTO's round / the best alternative's round
   * (the same round, taken moments apart).  A slow stretch of the machine
   * longer than a round slows both sides of each pair alike and cancels in
   * it, where it moves the two medians of `ratio` independently: the
   * decision's own cost, as far as one host can show it.  Printed beside
   * `ratio`, which stays the headline and the target's figure. */
  double paired;
  int paired_pass;
  /* The verdict without the one-thread alternative (AUTO's own one-thread
   * tier): the alternatives of the regret runs before 2026-11-26, kept so
   * their figures compare (NAN / 0 when no other alternative ran). */
  double ratio_no_one;
  int pass_no_one;
} rg_point;

typedef struct rg_series {
  const bench_op *op;
  xpar_dtype dtype;
  int res;
  int min_exp, max_exp;
  rg_point pt[BENCH_MAX_EXP + 1];
  /* summary */
  int points, misses, stalls;
  int same_tier_misses; /* misses against the forced tier AUTO itself ran */
  int paired_misses;
  int first_misses; /* before the confirmation rounds */
  int points_no_one, misses_no_one; /* without the one-thread alternative */
  double log_sum_no_one;
  double log_sum, paired_log_sum, worst;
  int worst_exp;
  char plot_path[1024];
} rg_series;

typedef struct rg_opts {
  const char *ops, *dtypes, *residencies, *alts, *out_dir;
  const char *load; /* NULL, or the load to run beside the bench (bench_load.c) */
  double load_on_s; /* cpu-toggle: how long the load stays on per point */
  int min_exp, max_exp, exp_step, rounds, threads, quick, plot;
  int contender_rounds; /* rounds in all for AUTO and the alternatives near the best */
  int confirm_rounds;   /* more rounds where AUTO then misses the target */
  int warm; /* one untimed call before every timed batch (default on) */
  double batch_s, point_budget_s, time_limit_s;
  uint64_t seed;
} rg_opts;

typedef struct rg_state {
  rg_opts o;
  xpar_device_info dev;
  int gpu;
  bench_tier_run runs[A_COUNT]; /* xpar alternatives */
  int avail[A_COUNT];
  double t_start;
  int out_of_time;
  FILE *csv;
  double host_ns_start, host_ns_end; /* host_speed_ns at the start and the end */
} rg_state;

/* ---- the host's speed ----------------------------------------------------- */

#if defined(__clang__)
#define RG_NOIPA __attribute__((noinline))
#else
#define RG_NOIPA __attribute__((noipa))
#endif
RG_NOIPA static void host_speed_fill(int32_t *out, int32_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = v;
}

/* Nanoseconds per plain fill of 128 int32 (median of 31 batches of 2,000).
 * The same binary on the same H100 host ran this loop at 14-72 ns from one
 * run to the next (2026-11-25), and every small host call
 * with it: a miss at small N is an absolute gap over 0.3 us, so two runs'
 * miss counts compare only beside this figure, printed at both ends. */
static double host_speed_ns(void) {
  int32_t buf[128];
  double t[31];
  for (int r = 0; r < 31; ++r) {
    double t0 = bench_now_s();
    for (int b = 0; b < 2000; ++b) {
      host_speed_fill(buf, b, 128);
      __asm__ volatile("" : : "r"(buf) : "memory");
    }
    t[r] = (bench_now_s() - t0) / 2000 * 1e9;
  }
  bench_sort(t, 31);
  return t[15];
}

/* ---- one call of one alternative ----------------------------------------- */

typedef struct rg_call {
  rg_state *s;
  int alt, res;
  const bench_op *op;
  bench_case c;          /* x, y, out: the residency's arrays (n elements) */
  void *sx, *sy, *sout;  /* host staging for the plain loops on device data */
  char why[160];
} rg_call;

static int call_once(void *arg) {
  rg_call *k = (rg_call *)arg;
  bench_case *c = &k->c;
  switch (k->alt) {
    case A_AUTO:
    case A_SERIAL:
    case A_ONE:
    case A_OPENMP:
    case A_CUDA:
    case A_SPLIT: {
      xpar_status st = k->op->run(k->s->runs[k->alt].ctx, c);
      if (st != XPAR_OK) {
        snprintf(k->why, sizeof k->why, "%s (%s)", xpar_status_name(st),
                 xpar_last_error_detail());
        return 0;
      }
      return 1;
    }
    case A_PSERIAL:
    case A_POMP: {
      void (*loop)(bench_case *, int) =
          k->alt == A_PSERIAL ? k->op->serial_baseline : k->op->baseline;
      size_t bytes = c->n * c->esize;
      if (k->res != R_DEVICE) {
        loop(c, k->s->o.threads);
        return 1;
      }
      /* device data: copy the inputs in, the loop on the host, copy the
       * output array out */
      bench_case h = *c;
      h.x = c->x ? k->sx : NULL;
      h.y = c->y ? k->sy : NULL;
      h.out = c->out ? k->sout : NULL;
      if (bench_op_reads_x(c->op) && !bench_copy(h.x, c->x, bytes)) goto copy_failed;
      if (bench_op_reads_y(c->op) && !bench_copy(h.y, c->y, bytes)) goto copy_failed;
      loop(&h, k->s->o.threads);
      memcpy(c->result, h.result, sizeof c->result);
      void *dst = bench_case_output(c);
      if (dst && !bench_copy(dst, bench_case_output(&h), bytes)) goto copy_failed;
      return 1;
    copy_failed:
      snprintf(k->why, sizeof k->why, "cudaMemcpy failed");
      return 0;
    }
    case A_CUB:
      return bench_cub_call(c, k->res == R_DEVICE, k->why, sizeof k->why);
    default: return 0;
  }
}

#if !defined(BENCH_HAVE_CUB)
/* Without the CUDA backend there is no CUB alternative (never called: the
 * alternative is unavailable without a GPU build). */
int bench_cub_call(bench_case *c, int on_device, char *why, size_t why_size) {
  (void)c, (void)on_device;
  snprintf(why, why_size, "xpar-devbench was built without CUDA");
  return 0;
}
void bench_cub_release(void) {}
#endif

/* ---- statistics ------------------------------------------------------------ */

#define quantile bench_quantile

/* Page faults and involuntary context switches of the whole process so far. */
static void rg_usage(long *faults, long *preempts) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) {
    *faults = *preempts = 0;
    return;
  }
  *faults = u.ru_minflt + u.ru_majflt;
  *preempts = u.ru_nivcsw;
}

/* The per-point target: AUTO's auto_s seconds within RG_TARGET_RATIO of the best's
 * best_s, or within RG_TARGET_ABS_S of it. */
static int meets_target(double auto_s, double best_s) {
  return auto_s / best_s <= RG_TARGET_RATIO || auto_s - best_s <= RG_TARGET_ABS_S;
}

static double median_of(const double *sorted, int n) {
  return (n % 2) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* ---- stall episodes (listed at the end, never dropped) -------------------- */

typedef struct rg_stall {
  const char *op, *dtype, *res, *alt;
  int exp, round;
  double t, med; /* the stalled round, and the point's median */
  int held;      /* the median itself held by an episode */
  long faults, preempts; /* during the stalled round's batch (-1: not one round) */
  int batch;
} rg_stall;
#define RG_MAX_STALLS 4096
static rg_stall stalls[RG_MAX_STALLS];
static int nstalls, nstalls_total;

static void note_stall(const rg_series *sr, int e, int alt, int round, double t, double med,
                       int held, long faults, long preempts, int batch) {
  nstalls_total++;
  if (nstalls == RG_MAX_STALLS) return;
  stalls[nstalls++] = (rg_stall){sr->op->name, xpar_dtype_name(sr->dtype), res_names[sr->res],
                                 alt_names[alt], e, round, t, med, held, faults, preempts, batch};
}

/* ---- formatting ------------------------------------------------------------ */

static void fmt_t(char *buf, size_t size, double t) {
  if (!(t > 0))
    snprintf(buf, size, "-");
  else if (t < 1e-6)
    snprintf(buf, size, "%.0fns", t * 1e9);
  else if (t < 1e-3)
    snprintf(buf, size, "%.2fus", t * 1e6);
  else if (t < 1.0)
    snprintf(buf, size, "%.3fms", t * 1e3);
  else
    snprintf(buf, size, "%.3fs", t);
}

static void fmt_alt(char *buf, size_t size, const rg_alt_pt *a) {
  if (a->st != P_OK)
    snprintf(buf, size, "%s", pstat_names[a->st]);
  else {
    fmt_t(buf, size, a->med);
    if (a->stalls || a->held) {
      size_t l = strlen(buf);
      snprintf(buf + l, size - l, "%s", a->held ? "!!" : "!");
    }
  }
}

/* ---- measuring one point ---------------------------------------------------- */

/* splitmix64: the rounds' orders, reproducible from the printed seed. */
static uint64_t rg_next(uint64_t *st) {
  uint64_t z = (*st += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

typedef struct rg_arrays {
  void *x, *y, *out;      /* the residency's arrays, max n elements */
  void *sx, *sy, *sout;   /* host staging (device residency) */
  void *check;            /* host buffer for fetching outputs to check */
  int pinned_staging;     /* sx/sout from cudaMallocHost */
} rg_arrays;

static int out_of_time(rg_state *s) {
  if (!s->out_of_time && s->o.time_limit_s > 0 && bench_now_s() - s->t_start > s->o.time_limit_s) {
    fprintf(stderr, "xpar-devbench regret: --time-limit %.0f s reached: reporting what is measured\n",
            s->o.time_limit_s);
    s->out_of_time = 1;
  }
  return s->out_of_time;
}

/* Map (on) or unmap the arrays op uses on every xpar context: its inputs
 * XPAR_MAP_TO, an output of its own XPAR_MAP_ALLOC. */
static xpar_status map_point(rg_state *s, rg_arrays *ar, size_t bytes, xpar_op op, int on) {
  void *arr[3] = {bench_op_reads_x(op) ? ar->x : NULL, bench_op_reads_y(op) ? ar->y : NULL,
                  bench_op_writes_out(op) ? ar->out : NULL};
  const xpar_map_kind kind[3] = {XPAR_MAP_TO, XPAR_MAP_TO, XPAR_MAP_ALLOC};
  for (int a = 0; a < A_COUNT; ++a) {
    if (!s->avail[a] || !s->runs[a].ctx) continue;
    for (int i = 0; i < 3; ++i) {
      if (!arr[i]) continue;
      if (on) {
        xpar_status st = xpar_map(s->runs[a].ctx, arr[i], bytes, kind[i]);
        if (st != XPAR_OK) return st;
      } else {
        xpar_unmap(s->runs[a].ctx, arr[i], XPAR_UNMAP_RELEASE);
      }
    }
  }
  return XPAR_OK;
}

/* Check alternative a's output at this point against the reference (y_init:
 * axpy's y before the call, restored first). */
static int check_alt(rg_call *k, rg_arrays *ar, const void *ref_out, const void *ref_result,
                     const void *y_init) {
  bench_case *c = &k->c;
  size_t bytes = c->n * c->esize;
  void *out = bench_case_output(c);
  const int xpar_mapped = k->res == R_MAPPED && k->alt <= A_CUDA;
  memset(c->result, 0xA5, sizeof c->result); /* poison: the call must write it */
  if (c->op == XPAR_OP_AXPY) { /* y is input and output: its input values back */
    if (!bench_copy_settled(c->y, y_init, bytes)) {
      snprintf(k->why, sizeof k->why, "cannot restore y");
      return -1;
    }
    if (xpar_mapped) xpar_update(k->s->runs[k->alt].ctx, c->y, XPAR_UPDATE_TO_DEVICE);
  } else if (out) { /* poison the output where it lives */
    memset(ar->check, 0xA5, bytes);
    if (!bench_copy_settled(out, ar->check, bytes)) {
      snprintf(k->why, sizeof k->why, "cannot poison the output");
      return -1;
    }
    if (xpar_mapped) /* the device copy too */
      xpar_update(k->s->runs[k->alt].ctx, out, XPAR_UPDATE_TO_DEVICE);
  }
  if (!call_once(k)) return -1;
  if (!out) {
    if (memcmp(c->result, ref_result, c->esize) == 0) return 1;
    snprintf(k->why, sizeof k->why, "result differs from the plain serial loop's");
    return 0;
  }
  if (xpar_mapped) /* no-op when the host copy is newer */
    xpar_update(k->s->runs[k->alt].ctx, out, XPAR_UPDATE_FROM_DEVICE);
  if (!bench_copy(ar->check, out, bytes)) {
    snprintf(k->why, sizeof k->why, "cannot fetch the output");
    return -1;
  }
  if (memcmp(ar->check, ref_out, bytes) == 0) return 1;
  for (size_t i = 0; i < c->n; ++i)
    if (memcmp((char *)ar->check + i * c->esize, (const char *)ref_out + i * c->esize, c->esize)) {
      snprintf(k->why, sizeof k->why, "element %zu differs from the plain serial loop's", i);
      break;
    }
  return 0;
}

/* The timed rounds of one point: samples per alternative and round (seconds
 * per call, 0 where the alternative did not run that round). */
typedef struct rg_rounds {
  rg_state *s;
  rg_point *p;
  rg_call *calls;
  int e, cap;
  int *failures;
  double *samp;   /* [A_COUNT][cap] */
  double *sorted; /* [cap] scratch */
  long *faults, *preempts; /* [A_COUNT][cap], per round's batch */
  uint64_t order_rng;
} rg_rounds;

/* Round r: one warm call and one timed batch of each alternative in list, in a
 * fresh shuffled order. */
static void run_round(rg_rounds *rr, const int *list, int nl, int r) {
  rg_point *p = rr->p;
  int order[A_COUNT];
  for (int j = 0; j < nl; ++j) order[j] = list[j];
  for (int j = nl - 1; j > 0; --j) {
    int k = (int)(rg_next(&rr->order_rng) % (uint64_t)(j + 1));
    int tmp = order[j];
    order[j] = order[k], order[k] = tmp;
  }
  for (int j = 0; j < nl; ++j) {
    int a = order[j];
    if (p->a[a].st == P_FAILED) continue;
    rg_call *k = &rr->calls[a];
    if (rr->s->o.warm && !call_once(k)) {
      p->a[a].st = P_FAILED;
      fprintf(stderr, "\nxpar-devbench regret: %s at 2^%d: a warm-up call failed: %s\n",
              alt_names[a], rr->e, k->why);
      (*rr->failures)++;
      continue;
    }
    const int batch = p->a[a].batch;
    long f0, c0, f1, c1;
    rg_usage(&f0, &c0);
    double t0 = bench_now_s();
    for (int b = 0; b < batch; ++b)
      if (!call_once(k)) {
        p->a[a].st = P_FAILED;
        fprintf(stderr, "\nxpar-devbench regret: %s at 2^%d: a timed call failed: %s\n",
                alt_names[a], rr->e, k->why);
        (*rr->failures)++;
        break;
      }
    rr->samp[(size_t)a * rr->cap + r] = (bench_now_s() - t0) / batch;
    rg_usage(&f1, &c1);
    rr->faults[(size_t)a * rr->cap + r] = f1 - f0;
    rr->preempts[(size_t)a * rr->cap + r] = c1 - c0;
  }
}

/* The median of a's rounds; with `with` >= 0, of the rounds `with` ran too. */
static double window_median(rg_rounds *rr, int a, int with) {
  const double *t = &rr->samp[(size_t)a * rr->cap];
  const double *w = with >= 0 ? &rr->samp[(size_t)with * rr->cap] : NULL;
  int k = 0;
  for (int r = 0; r < rr->cap; ++r)
    if (t[r] > 0 && (!w || w[r] > 0)) rr->sorted[k++] = t[r];
  if (k == 0) return NAN;
  bench_sort(rr->sorted, k);
  return median_of(rr->sorted, k);
}

static double alt_median(rg_rounds *rr, int a) { return window_median(rr, a, -1); }

/* The point's verdict from the rounds so far.  AUTO is compared with each
 * other alternative over the rounds both ran: an alternative left behind after
 * the first rounds (more than 1.5x off the fastest) is compared with AUTO's
 * rounds of that stretch, not with AUTO's later ones -- a machine that slows
 * down after the first rounds must not make AUTO trail an alternative timed
 * only before it did.  `best` is the alternative AUTO trails most (with every
 * alternative in every round: the one with the lowest median), `ratio` AUTO's
 * median over its rounds / its median, and the point passes when AUTO meets
 * the target against every alternative.  `paired`: the median over the
 * shared rounds of AUTO's round / best's round. */
static void judge_point(rg_rounds *rr) {
  rg_point *p = rr->p;
  p->best = -1;
  p->ratio = p->auto_in_window = p->paired = p->ratio_no_one = NAN;
  p->pass = p->pass_no_one = 0;
  p->paired_pass = 0;
  if (p->a[A_AUTO].st == P_FAILED) return;
  p->pass = p->pass_no_one = 1;
  for (int a = 1; a < A_COUNT; ++a) {
    p->trails[a] = 0;
    if (p->a[a].st == P_FAILED || p->a[a].st == P_NA || p->a[a].st == P_WRONG) continue;
    const double tb = alt_median(rr, a), ta = window_median(rr, A_AUTO, a);
    if (isnan(tb) || isnan(ta)) continue;
    if (!meets_target(ta, tb)) p->trails[a] = 1, p->pass = 0;
    if (p->best < 0 || ta / tb > p->ratio) p->best = a, p->ratio = ta / tb, p->auto_in_window = ta;
    if (a == A_ONE) continue;
    if (p->trails[a]) p->pass_no_one = 0;
    if (isnan(p->ratio_no_one) || ta / tb > p->ratio_no_one) p->ratio_no_one = ta / tb;
  }
  if (isnan(p->ratio_no_one)) p->pass_no_one = 0;
  if (p->best < 0) {
    p->pass = 0;
    return;
  }
  const double *ta = &rr->samp[A_AUTO * (size_t)rr->cap];
  const double *tb = &rr->samp[(size_t)p->best * rr->cap];
  int m = 0;
  for (int r = 0; r < rr->cap; ++r)
    if (ta[r] > 0 && tb[r] > 0) rr->sorted[m++] = ta[r] / tb[r];
  if (m > 0) {
    bench_sort(rr->sorted, m);
    p->paired = median_of(rr->sorted, m);
    const double best = p->auto_in_window / p->ratio;
    p->paired_pass = meets_target(p->paired * best, best);
  }
}

static void measure_point(rg_state *s, rg_series *sr, rg_arrays *ar, int e, const void *ref_out,
                          const void *ref_result, const void *y_init, int *failures) {
  rg_point *p = &sr->pt[e];
  memset(p, 0, sizeof *p);
  p->measured = 1;
  p->best = -1;
  p->ratio = p->first_ratio = p->auto_in_window = NAN;
  p->paired = NAN;
  size_t n = (size_t)1 << e;
  size_t bytes = n * xpar_dtype_size(sr->dtype);
  const xpar_op op = sr->op->op;
  rg_call calls[A_COUNT];
  int list[A_COUNT], nl = 0;
  if (sr->res == R_MAPPED) {
    xpar_status st = map_point(s, ar, bytes, op, 1);
    if (st != XPAR_OK) {
      fprintf(stderr, "\nxpar-devbench regret: xpar_map at 2^%d: %s (%s)\n", e, xpar_status_name(st),
              xpar_last_error_detail());
      map_point(s, ar, bytes, op, 0);
      for (int a = 0; a < A_COUNT; ++a) p->a[a].st = P_FAILED;
      (*failures)++;
      return;
    }
  }
  for (int a = 0; a < A_COUNT; ++a) {
    rg_call *k = &calls[a];
    memset(k, 0, sizeof *k);
    k->s = s, k->alt = a, k->res = sr->res, k->op = sr->op;
    bench_case_view(&k->c, sr->op, sr->dtype, n, ar->x, ar->y, ar->out);
    k->sx = ar->sx, k->sy = ar->sy, k->sout = ar->sout;
    int usable = s->avail[a];
    if (a == A_POMP && !sr->op->baseline) usable = 0;
    /* The split takes host memory only (elsewhere it runs as cuda). */
    if (a == A_SPLIT && sr->res != R_PINNED && sr->res != R_PAGEABLE) usable = 0;
    if (!usable) {
      p->a[a].st = P_NA;
      continue;
    }
    int ok = check_alt(k, ar, ref_out, ref_result, y_init);
    if (ok != 1) {
      p->a[a].st = ok == 0 ? P_WRONG : P_FAILED;
      fprintf(stderr, "\nxpar-devbench regret: %s %s %s 2^%d, %s: %s: %s\n", sr->op->name,
              xpar_dtype_name(sr->dtype), res_names[sr->res], e, alt_names[a],
              ok == 0 ? "WRONG" : "failed", k->why);
      (*failures)++;
      continue;
    }
    /* one warm timed call sizes the batch */
    double t0 = bench_now_s();
    if (!call_once(k)) {
      p->a[a].st = P_FAILED;
      (*failures)++;
      continue;
    }
    double t1 = bench_now_s() - t0;
    int batch = 1;
    if (t1 < s->o.batch_s) {
      batch = (int)ceil(s->o.batch_s / (t1 > 1e-9 ? t1 : 1e-9));
      if (batch > 4096) batch = 4096;
    }
    p->a[a].batch = batch;
    p->a[a].med = t1; /* an estimate, for the round budget */
    list[nl++] = a;
  }
  /* rounds: as many as asked, fewer where a round would blow the budget */
  double per_round = 0;
  for (int j = 0; j < nl; ++j)
    per_round += p->a[list[j]].med * (p->a[list[j]].batch + (s->o.warm ? 1 : 0));
  int rounds = s->o.rounds;
  if (per_round * rounds > s->o.point_budget_s) {
    rounds = (int)(s->o.point_budget_s / per_round);
    if (rounds < 3) rounds = 3;
  }
  /* Contenders' rounds: after `rounds` rounds of everyone, AUTO and the
   * alternatives within RG_CONTENDER_FACTOR of the fastest go on alone, up
   * to --contender-rounds in all while the point's budget lasts (another
   * budget's worth).  An alternative 10x off cannot become the best, and at
   * large N its rounds (a one-thread pass over 64 MB: 15-20 ms) were what
   * limited the contenders to 7-15 rounds, too few to settle a 10 % target
   * against a spread of 10-50 % between single calls (H100 host, 2026-11-25).
   * Confirmation rounds: where AUTO then misses the target, up to
   * --confirm-rounds more of AUTO, the contenders and every alternative it
   * misses against (a third budget's worth), and the point is judged again
   * over all its rounds (judge_point). */
  const int cap = s->o.contender_rounds > rounds ? s->o.contender_rounds : rounds;
  const int cap_all = cap + s->o.confirm_rounds;
  rg_rounds rr = {.s = s, .p = p, .calls = calls, .e = e, .failures = failures,
                  .cap = cap_all};
  rr.samp = calloc((size_t)A_COUNT * (size_t)cap_all, sizeof *rr.samp);
  rr.sorted = calloc((size_t)cap_all, sizeof *rr.sorted);
  rr.faults = calloc((size_t)A_COUNT * (size_t)cap_all, sizeof *rr.faults);
  rr.preempts = calloc((size_t)A_COUNT * (size_t)cap_all, sizeof *rr.preempts);
  if (!rr.samp || !rr.sorted || !rr.faults || !rr.preempts) {
    free(rr.samp), free(rr.sorted), free(rr.faults), free(rr.preempts);
    (*failures)++;
    return;
  }
  /* The order of the alternatives is a fresh seeded shuffle every round, and
   * every timed batch follows one untimed call of the same alternative.  The
   * earlier rotation gave each alternative the same predecessor in every
   * round (AUTO always ran right after CUB, the serial tier after AUTO), and
   * with one call per sample at large N the first call paid for what its
   * predecessor left behind: a sleeping OpenMP team, caches holding other
   * data, a GPU whose L2 held the input or did not.  AUTO and the forced
   * tier it ran, the same code, differed by up to 1.37x so (H100 host,
   * 2026-11-25).  The warm call puts every alternative in the state of an
   * application calling it in a loop, which is what AUTO's thresholds
   * decide for; the shuffle keeps a slow stretch of the machine spread
   * over all of them. */
  rr.order_rng = s->o.seed ^ ((uint64_t)(sr->res + 1) << 40) ^ ((uint64_t)e << 32) ^
                 (uint64_t)sr->dtype * 977 ^ (uint64_t)sr->op->op * 131;
  const double t_rounds = bench_now_s();
  int r = 0;
  for (; r < rounds && nl > 0; ++r) run_round(&rr, list, nl, r);
  /* the contenders: AUTO and whoever is within reach of the fastest */
  int kept = 0;
  double fastest = INFINITY, med[A_COUNT];
  for (int j = 0; j < nl; ++j) {
    int a = list[j];
    med[a] = alt_median(&rr, a);
    if (a != A_AUTO && p->a[a].st != P_FAILED && med[a] < fastest) fastest = med[a];
  }
  for (int j = 0; j < nl; ++j) {
    int a = list[j];
    if (p->a[a].st != P_FAILED && (a == A_AUTO || med[a] <= RG_CONTENDER_FACTOR * fastest))
      list[kept++] = a;
  }
  nl = kept;
  for (; r < cap && nl > 0 && bench_now_s() - t_rounds <= 2 * s->o.point_budget_s; ++r)
    run_round(&rr, list, nl, r);
  judge_point(&rr);
  p->first_ratio = p->ratio;
  p->first_pass = p->pass;
  if (!p->pass && s->o.confirm_rounds > 0 && p->a[A_AUTO].st != P_FAILED) {
    /* the contenders, and every alternative AUTO trails by more than the target */
    for (int a = 1; a < A_COUNT; ++a) {
      int in = 0;
      for (int j = 0; j < nl; ++j) in |= list[j] == a;
      if (!in && p->trails[a] && p->a[a].st != P_FAILED) list[nl++] = a;
    }
    const int r0 = r;
    for (; r < r0 + s->o.confirm_rounds && bench_now_s() - t_rounds <= 3 * s->o.point_budget_s;
         ++r)
      run_round(&rr, list, nl, r);
    p->confirm_rounds = r - r0;
    judge_point(&rr);
  }
  for (int a = 0; a < A_COUNT; ++a) {
    rg_alt_pt *q = &p->a[a];
    int k = 0;
    if (q->st == P_FAILED) continue;
    const double *t = &rr.samp[(size_t)a * cap_all];
    long faults = 0, preempts = 0;
    for (int i = 0; i < r; ++i)
      if (t[i] > 0) {
        rr.sorted[k++] = t[i];
        faults += rr.faults[(size_t)a * cap_all + i];
        preempts += rr.preempts[(size_t)a * cap_all + i];
      }
    if (k == 0) continue;
    bench_sort(rr.sorted, k);
    q->st = P_OK;
    q->rounds = k;
    q->med = median_of(rr.sorted, k);
    q->p90 = quantile(rr.sorted, k, 0.90);
    q->min = rr.sorted[0];
    q->max = rr.sorted[k - 1];
    q->faults_per_call = (double)faults / ((double)k * q->batch);
    q->preempt_per_round = (double)preempts / k;
    for (int i = 0; i < r; ++i)
      if (t[i] > RG_STALL_FACTOR * q->med) {
        q->stalls++;
        note_stall(sr, e, a, i, t[i], q->med, 0, rr.faults[(size_t)a * cap_all + i],
                   rr.preempts[(size_t)a * cap_all + i], q->batch);
      }
    if (q->med > RG_STALL_FACTOR * q->min) {
      q->held = 1;
      note_stall(sr, e, a, -1, q->med, q->min, 1, -1, -1, q->batch);
    }
    sr->stalls += q->stalls + q->held;
  }
  free(rr.samp);
  free(rr.sorted);
  free(rr.faults);
  free(rr.preempts);
  if (p->a[A_AUTO].st == P_OK) {
    xpar_decision d;
    if (xpar_last_decision(s->runs[A_AUTO].ctx, &d) == XPAR_OK)
      snprintf(p->a[A_AUTO].ran, sizeof p->a[A_AUTO].ran, "%s", xpar_tier_name(d.tier));
  }
  if (p->best >= 0 && p->a[A_AUTO].st == P_OK) {
    /* AUTO against the forced tier it chose itself (the OpenMP tier, CUDA):
     * the same code through another context, so a gap is the machine's
     * spread between rounds, not the decision; counted apart in the
     * summary, never excused. */
    p->same_tier = (p->best == A_ONE && strcmp(p->a[A_AUTO].ran, "cpu-serial") == 0) ||
                   (p->best == A_OPENMP && strcmp(p->a[A_AUTO].ran, "cpu-openmp") == 0) ||
                   (p->best == A_CUDA && strcmp(p->a[A_AUTO].ran, "cuda") == 0);
  }
  if (sr->res == R_MAPPED) map_point(s, ar, bytes, op, 0);
}

/* ---- per series: arrays, sweep, table, CSV -------------------------------- */

static void free_arrays(int res, rg_arrays *ar) {
  void *const arr[3] = {ar->x, ar->y, ar->out}, *const staging[3] = {ar->sx, ar->sy, ar->sout};
  for (int i = 0; i < 3; ++i) {
    if (res == R_DEVICE)
      bench_free_device(arr[i]);
    else if (res == R_PINNED)
      bench_free_pinned(arr[i]);
    else
      free(arr[i]);
    if (ar->pinned_staging)
      bench_free_pinned(staging[i]);
    else
      free(staging[i]);
  }
  free(ar->check);
  memset(ar, 0, sizeof *ar);
}

/* The residency's arrays x, and y / out where want_y / want_out, of `bytes`
 * each; device data gets pinned host staging of the same shape. */
static int alloc_arrays(int res, size_t bytes, int want_y, int want_out, rg_arrays *ar,
                        char *why, size_t why_size) {
  memset(ar, 0, sizeof *ar);
  void **arr[3] = {&ar->x, &ar->y, &ar->out}, **staging[3] = {&ar->sx, &ar->sy, &ar->sout};
  const int want[3] = {1, want_y, want_out};
  int ok = 1;
  for (int i = 0; i < 3 && ok; ++i) {
    if (!want[i]) continue;
    if (res == R_DEVICE) {
      *arr[i] = bench_alloc_device(bytes, why, why_size);
      /* staging for the plain loops: pinned, the fastest copies an
       * application can have */
      *staging[i] = bench_alloc_pinned(bytes, why, why_size);
      ar->pinned_staging = 1;
      ok = *arr[i] && *staging[i];
    } else if (res == R_PINNED) {
      *arr[i] = bench_alloc_pinned(bytes, why, why_size);
      ok = *arr[i] != NULL;
    } else {
      *arr[i] = malloc(bytes);
      ok = *arr[i] != NULL;
      if (!ok) snprintf(why, why_size, "out of host memory");
    }
  }
  ar->check = malloc(bytes);
  if (!ar->check) snprintf(why, why_size, "out of host memory");
  return ok && ar->check;
}

static void print_series(FILE *f, const rg_state *s, const rg_series *sr) {
  fprintf(f, "\n# %s %s, %s data: median per call over interleaved rounds ('!' stalled "
             "rounds, '!!' median held by a stall)\n",
          sr->op->name, xpar_dtype_name(sr->dtype), res_names[sr->res]);
  fprintf(f, "%-6s", "n");
  for (int a = 0; a < A_COUNT; ++a)
    if (s->avail[a]) fprintf(f, " %12s", alt_names[a]);
  fprintf(f, " %12s %9s %7s %-11s %s\n", "auto/best", "target", "paired", "auto ran", "rounds");
  for (int e = sr->min_exp; e <= sr->max_exp; ++e) {
    const rg_point *p = &sr->pt[e];
    if (!p->measured) continue;
    char nb[16], buf[32];
    snprintf(nb, sizeof nb, "2^%d", e);
    fprintf(f, "%-6s", nb);
    for (int a = 0; a < A_COUNT; ++a) {
      if (!s->avail[a]) continue;
      fmt_alt(buf, sizeof buf, &p->a[a]);
      if (a == p->best) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "*");
      }
      fprintf(f, " %12s", buf);
    }
    if (isnan(p->ratio))
      fprintf(f, " %12s %9s", "-", "-");
    else
      fprintf(f, " %12.3f %9s", p->ratio,
              p->pass ? (p->confirm_rounds ? "ok+c" : "ok")
                      : p->same_tier ? (p->confirm_rounds ? "MISS=+c" : "MISS=")
                                     : (p->confirm_rounds ? "MISS+c" : "MISS"));
    if (isnan(p->paired))
      fprintf(f, " %7s", "-");
    else
      fprintf(f, " %6.3f%s", p->paired, p->paired_pass ? " " : "x");
    fprintf(f, " %-11s %d\n", p->a[A_AUTO].ran, p->a[A_AUTO].rounds);
  }
  /* Where calls took page faults (arrays stay mapped: a loop over them
   * should take none) or threads were preempted, per alternative. */
  for (int e = sr->min_exp; e <= sr->max_exp; ++e) {
    const rg_point *p = &sr->pt[e];
    if (!p->measured) continue;
    int shown = 0;
    for (int a = 0; a < A_COUNT; ++a) {
      const rg_alt_pt *q = &p->a[a];
      if (q->st != P_OK || (q->faults_per_call < RG_FAULTS_SHOWN && q->preempt_per_round < 1.0))
        continue;
      if (!shown++) fprintf(f, "#   2^%d faults per call / preemptions per round:", e);
      fprintf(f, " %s %.2f / %.1f", alt_names[a], q->faults_per_call, q->preempt_per_round);
    }
    if (shown) fprintf(f, "\n");
  }
  fflush(f);
}

static void csv_series(FILE *f, const rg_series *sr) {
  for (int e = sr->min_exp; e <= sr->max_exp; ++e) {
    const rg_point *p = &sr->pt[e];
    if (!p->measured) continue;
    for (int a = 0; a < A_COUNT; ++a) {
      const rg_alt_pt *q = &p->a[a];
      fprintf(f, "%s,%s,%s,%zu,%d,%s,%s,%.4f,%.4f,%.4f,%.4f,%d,%d,%d,%d,%s,%s,%.4f,%.4f,%d,%.4f,%.2f,%.4f,%d,%.4f,%d,%d\n",
              sr->op->name, xpar_dtype_name(sr->dtype), res_names[sr->res], (size_t)1 << e, e,
              alt_names[a], pstat_names[q->st], q->med * 1e6, q->p90 * 1e6, q->min * 1e6,
              q->max * 1e6, q->rounds, q->batch, q->stalls, q->held, a == A_AUTO ? q->ran : "",
              p->best >= 0 ? alt_names[p->best] : "", isnan(p->ratio) ? 0.0 : p->ratio,
              p->best >= 0 && p->a[A_AUTO].st == P_OK
                  ? (p->auto_in_window - p->a[p->best].med) * 1e6
                  : 0.0,
              p->pass, q->faults_per_call, q->preempt_per_round,
              isnan(p->paired) ? 0.0 : p->paired, p->paired_pass,
              isnan(p->first_ratio) ? 0.0 : p->first_ratio, p->first_pass, p->confirm_rounds);
    }
  }
  fflush(f);
}

static void summarise(rg_series *sr) {
  sr->points = sr->misses = sr->same_tier_misses = sr->paired_misses = sr->first_misses = 0;
  sr->points_no_one = sr->misses_no_one = 0;
  sr->log_sum = sr->paired_log_sum = sr->log_sum_no_one = 0;
  sr->worst = NAN;
  sr->worst_exp = -1;
  for (int e = sr->min_exp; e <= sr->max_exp; ++e) {
    const rg_point *p = &sr->pt[e];
    if (!p->measured || isnan(p->ratio)) continue;
    sr->points++;
    sr->log_sum += log(p->ratio);
    sr->paired_log_sum += log(isnan(p->paired) ? p->ratio : p->paired);
    if (!isnan(p->paired) && !p->paired_pass) sr->paired_misses++;
    if (!p->pass) sr->misses++;
    if (!p->first_pass) sr->first_misses++;
    if (!p->pass && p->same_tier) sr->same_tier_misses++;
    if (!isnan(p->ratio_no_one)) {
      sr->points_no_one++;
      sr->log_sum_no_one += log(p->ratio_no_one);
      if (!p->pass_no_one) sr->misses_no_one++;
    }
    if (isnan(sr->worst) || p->ratio > sr->worst) sr->worst = p->ratio, sr->worst_exp = e;
  }
}

static void plot_series(const rg_state *s, rg_series *sr, bench_plot *pl, char *base,
                        size_t base_size, int gnuplot) {
  memset(pl, 0, sizeof *pl);
  snprintf(pl->title, sizeof pl->title, "%s %s, %s data", sr->op->name,
           xpar_dtype_name(sr->dtype), res_names[sr->res]);
  pl->min_exp = sr->min_exp;
  pl->max_exp = sr->max_exp;
  for (int a = 0; a < A_COUNT && pl->nseries < BENCH_PLOT_MAX_SERIES; ++a) {
    if (!s->avail[a]) continue;
    int k = pl->nseries++;
    pl->series[k] = alt_names[a];
    for (int e = 0; e <= BENCH_MAX_EXP; ++e)
      pl->t_s[k][e] = (e >= sr->min_exp && e <= sr->max_exp && sr->pt[e].measured &&
                       sr->pt[e].a[a].st == P_OK)
                          ? sr->pt[e].a[a].med
                          : NAN;
  }
  snprintf(base, base_size, "%s/%s-%s-%s", s->o.out_dir, sr->op->name, xpar_dtype_name(sr->dtype),
           res_names[sr->res]);
  if (!bench_plot_write(pl, base, gnuplot, sr->plot_path, sizeof sr->plot_path))
    fprintf(stderr, "xpar-devbench regret: could not write the chart %s\n", base);
}

/* Where the geometric mean's excess lies: the sum of ln(AUTO / best) over the
 * points of each residency and band of N (the overall geometric mean is
 * exp(total / points), so these add up to its numerator; a negative sum is
 * AUTO ahead of every alternative).  Small N is the call's fixed cost against
 * a plain loop, mid N the thresholds, large N the tiers' own speed. */
static void print_excess(FILE *f, const rg_series *sw, int nsw, int points) {
  enum { BANDS = 3 };
  static const char *const band_names[BANDS] = {"2^7..2^10", "2^11..2^16", "2^17 and up"};
  double sum[R_COUNT][BANDS] = {{0}};
  int count[R_COUNT][BANDS] = {{0}}, used[R_COUNT] = {0};
  double total = 0;
  for (int i = 0; i < nsw; ++i)
    for (int e = sw[i].min_exp; e <= sw[i].max_exp; ++e) {
      const rg_point *p = &sw[i].pt[e];
      if (!p->measured || isnan(p->ratio)) continue; /* as summarise() counts */
      const int b = e <= 10 ? 0 : e <= 16 ? 1 : 2;
      sum[sw[i].res][b] += log(p->ratio);
      count[sw[i].res][b]++;
      used[sw[i].res] = 1;
      total += log(p->ratio);
    }
  if (!points) return;
  fprintf(f, "# excess: sum of ln(AUTO / best) by data and N (points), %.1f in all over %d "
             "points:\n",
          total, points);
  fprintf(f, "#   %-9s", "data");
  for (int b = 0; b < BANDS; ++b) fprintf(f, " %20s", band_names[b]);
  fprintf(f, "\n");
  for (int r = 0; r < R_COUNT; ++r) {
    if (!used[r]) continue;
    fprintf(f, "#   %-9s", res_names[r]);
    for (int b = 0; b < BANDS; ++b) {
      char cell[32];
      snprintf(cell, sizeof cell, "%.1f (%d)", sum[r][b], count[r][b]);
      fprintf(f, " %20s", count[r][b] ? cell : "-");
    }
    fprintf(f, "\n");
  }
}

static void print_summary(FILE *f, const rg_series *sw, int nsw, const rg_state *s) {
  fprintf(f, "\n# xpar-devbench regret summary: AUTO / best alternative per point (median of "
             "rounds); target <= %.2fx or within %.1f us at every point, geomean <= 1.03\n",
          RG_TARGET_RATIO, RG_TARGET_ABS_S * 1e6);
  fprintf(f, "%-7s %-7s %-9s %7s %8s %-22s %7s %7s %7s %8s %7s\n", "# op", "dtype", "data",
          "points", "geomean", "worst (at)", "misses", "(same)", "stalls", "paired:", "misses");
  int points = 0, misses = 0, same = 0, stalls_all = 0, wi = -1, paired_misses = 0;
  int first_misses = 0, points_no_one = 0, misses_no_one = 0;
  double log_sum = 0, paired_log_sum = 0, worst = NAN, log_sum_no_one = 0;
  for (int i = 0; i < nsw; ++i) {
    const rg_series *sr = &sw[i];
    char w[40] = "-";
    if (!isnan(sr->worst)) snprintf(w, sizeof w, "%.3f at 2^%d", sr->worst, sr->worst_exp);
    fprintf(f, "%-7s %-7s %-9s %7d %8.3f %-22s %7d %7d %7d %8.3f %7d\n", sr->op->name,
            xpar_dtype_name(sr->dtype), res_names[sr->res], sr->points,
            sr->points ? exp(sr->log_sum / sr->points) : NAN, w, sr->misses,
            sr->same_tier_misses, sr->stalls,
            sr->points ? exp(sr->paired_log_sum / sr->points) : NAN, sr->paired_misses);
    paired_misses += sr->paired_misses;
    paired_log_sum += sr->paired_log_sum;
    points += sr->points;
    misses += sr->misses;
    first_misses += sr->first_misses;
    points_no_one += sr->points_no_one;
    misses_no_one += sr->misses_no_one;
    log_sum_no_one += sr->log_sum_no_one;
    same += sr->same_tier_misses;
    stalls_all += sr->stalls;
    log_sum += sr->log_sum;
    if (!isnan(sr->worst) && (isnan(worst) || sr->worst > worst)) worst = sr->worst, wi = i;
  }
  double gm = points ? exp(log_sum / points) : NAN;
  fprintf(f, "# overall: %d points, geometric mean %.3f, worst %.3f", points, gm, worst);
  if (wi >= 0)
    fprintf(f, " (%s %s %s at 2^%d)", sw[wi].op->name, xpar_dtype_name(sw[wi].dtype),
            res_names[sw[wi].res], sw[wi].worst_exp);
  fprintf(f, ", %d points miss the per-point target; %d stalled rounds/medians\n", misses,
          stalls_all);
  fprintf(f, "# first look: %d points missed before their confirmation rounds (table: +c, "
             "judged again over all their rounds)\n",
          first_misses);
  fprintf(f, "# (same): %d of the misses are against the forced tier AUTO ran itself (table: "
             "MISS=), the same code in another context: the spread between rounds\n",
          same);
  fprintf(f, "# targets: per point %s, geometric mean %s\n", misses ? "NOT met" : "met",
          points && gm <= 1.03 ? "met" : "NOT met");
  if (points)
    fprintf(f, "# paired (median over rounds of AUTO's round / the best's round, the same "
               "round): geometric mean %.3f, %d points over 1.10x and 0.3 us\n",
            exp(paired_log_sum / points), paired_misses);
  if (points_no_one && s->avail[A_ONE])
    fprintf(f, "# without the one-thread alternative (AUTO's own one-thread tier in another "
               "context; the alternatives before it was one): geometric mean %.3f, %d points "
               "miss the per-point target\n",
            exp(log_sum_no_one / points_no_one), misses_no_one);
  print_excess(f, sw, nsw, points);
  fprintf(f, "# host speed: a plain fill of 128 int32 took %.1f ns at the start, %.1f ns at "
             "the end (small-N misses are absolute gaps: compare runs beside these)\n",
          s->host_ns_start, s->host_ns_end);
  fflush(f);
}

static void print_stalls(FILE *f) {
  if (nstalls_total == 0) {
    fprintf(f, "# stall episodes: none (no round > %.0fx its median)\n", RG_STALL_FACTOR);
    return;
  }
  fprintf(f, "\n# stall episodes: %d (a round > %.0fx its alternative's median at that point; "
             "'held': the median itself > %.0fx the fastest round). Kept in every figure.\n",
          nstalls_total, RG_STALL_FACTOR, RG_STALL_FACTOR);
  for (int i = 0; i < nstalls; ++i) {
    char a[32], b[32];
    fmt_t(a, sizeof a, stalls[i].t);
    fmt_t(b, sizeof b, stalls[i].med);
    if (stalls[i].held)
      fprintf(f, "#   %s %s %s 2^%d %s: median %s held, fastest round %s\n", stalls[i].op,
              stalls[i].dtype, stalls[i].res, stalls[i].exp, stalls[i].alt, a, b);
    else
      fprintf(f,
              "#   %s %s %s 2^%d %s: round %d took %s per call, median %s (batch of %d: %ld "
              "page faults, %ld preemptions)\n",
              stalls[i].op, stalls[i].dtype, stalls[i].res, stalls[i].exp, stalls[i].alt,
              stalls[i].round, a, b, stalls[i].batch, stalls[i].faults, stalls[i].preempts);
  }
  if (nstalls_total > nstalls) fprintf(f, "#   ... %d more\n", nstalls_total - nstalls);
}

/* ---- options ------------------------------------------------------------------ */

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-devbench regret [options]\n"
          "  --quick            CI smoke: pageable (and the other residencies with a GPU),\n"
          "                     every op x int32,float,double, 2^7..2^14, 5 rounds\n"
          "  --ops LIST         reduce,scan,axpy,add,fill,dot,sort,select,runs,argreduce,segmented,histogram (default all)\n"
          "  --dtypes LIST      default int32,float,double\n"
          "  --residencies LIST device,pinned,pageable,mapped (default: those available)\n"
          "  --alts LIST        subset of auto,serial,one-thread,openmp,cuda,plain-serial,\n"
          "                     plain-omp,cub\n"
          "  --min-exp E        smallest N = 2^E (default 7)\n"
          "  --max-exp E        largest N = 2^E (default 30; capped by free memory)\n"
          "  --max-n N          largest N (rounded down to a power of two)\n"
          "  --exp-step S       every S-th exponent from --min-exp (default 1)\n"
          "  --rounds R         interleaved rounds per point, each in a fresh shuffled\n"
          "                     order (default 15)\n"
          "  --contender-rounds R  then AUTO and the alternatives within 1.5x of the\n"
          "                     fastest go on alone, up to R rounds in all (default 45;\n"
          "                     --quick: 0, none)\n"
          "  --confirm-rounds R where AUTO then misses the target: up to R more rounds of\n"
          "                     AUTO, the contenders and the alternatives it trails, and\n"
          "                     the point judged again over all its rounds (default 45;\n"
          "                     --quick: 0; the first verdict is kept beside it)\n"
          "  --no-warm          no untimed call before each timed batch (the default\n"
          "                     warms each alternative, see measure_point)\n"
          "  --batch-us U       a sample lasts at least U us (default 20)\n"
          "  --point-budget-ms  fewer rounds (>= 3) where a point would take longer (3000)\n"
          "  --time-limit S     stop after S seconds and report what is measured\n"
          "  --threads T        OpenMP threads for xpar's tiers and the plain loop\n"
          "  --seed S           random seed (printed)\n"
          "  --out-dir DIR      regret.csv, summary.txt/csv, charts (default regret)\n"
          "  --no-plot          no charts\n"
          "  --load KIND        other work during the run: cpu (a busy process per core),\n"
          "                     gpu (a second process keeping the GPU busy), or cpu-toggle:\n"
          "                     per point the cpu load on, then off, and the calls AUTO\n"
          "                     needs to return to its idle choice (no regret table)\n"
          "  --load-on-ms MS    cpu-toggle: how long the load stays on per point (500)\n");
}

static int parse_opts(int argc, char **argv, rg_opts *o) {
  *o = (rg_opts){.ops = "reduce,scan,axpy,add,fill,dot,sort,select,runs,argreduce,segmented,histogram", .dtypes = "int32,float,double",
                 .residencies = "device,pinned,pageable,mapped",
                 .alts = "auto,serial,one-thread,openmp,cuda,plain-serial,plain-omp,cub",
                 .out_dir = "regret", .min_exp = 7, .max_exp = 30, .exp_step = 1, .rounds = 15,
                 .contender_rounds = 45, .confirm_rounds = 45, .plot = 1, .warm = 1,
                 .batch_s = 20e-6, .point_budget_s = 3.0, .load_on_s = 0.5,
                 .seed = (uint64_t)(bench_now_s() * 1e6)};
  int max_set = 0, rounds_set = 0, contenders_set = 0, confirm_set = 0, budget_set = 0;
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
    if (strcmp(a, "--no-plot") == 0) {
      o->plot = 0;
      continue;
    }
    if (strcmp(a, "--no-warm") == 0) {
      o->warm = 0;
      continue;
    }
    const char *val = i + 1 < argc ? argv[++i] : NULL;
    if (!val) {
      fprintf(stderr, "xpar-devbench regret: %s needs a value\n", a);
      return -1;
    }
    if (strcmp(a, "--ops") == 0) o->ops = val;
    else if (strcmp(a, "--dtypes") == 0) o->dtypes = val;
    else if (strcmp(a, "--residencies") == 0) o->residencies = val;
    else if (strcmp(a, "--alts") == 0) o->alts = val;
    else if (strcmp(a, "--out-dir") == 0) o->out_dir = val;
    else if (strcmp(a, "--load") == 0 && (strcmp(val, "cpu") == 0 || strcmp(val, "gpu") == 0 ||
                                          strcmp(val, "cpu-toggle") == 0))
      o->load = val;
    else if (strcmp(a, "--load-on-ms") == 0 && bench_parse_long(val, 1, 600000, &v))
      o->load_on_s = (double)v * 1e-3;
    else if (strcmp(a, "--min-exp") == 0 && bench_parse_long(val, 0, BENCH_MAX_EXP, &v))
      o->min_exp = (int)v;
    else if (strcmp(a, "--max-exp") == 0 && bench_parse_long(val, 0, BENCH_MAX_EXP, &v))
      o->max_exp = (int)v, max_set = 1;
    else if (strcmp(a, "--max-n") == 0 && bench_parse_long(val, 1, __LONG_MAX__, &v)) {
      int e = 0;
      while (e < BENCH_MAX_EXP && ((long)1 << (e + 1)) <= v) ++e;
      o->max_exp = e, max_set = 1;
    } else if (strcmp(a, "--exp-step") == 0 && bench_parse_long(val, 1, BENCH_MAX_EXP, &v))
      o->exp_step = (int)v;
    else if (strcmp(a, "--rounds") == 0 && bench_parse_long(val, 3, 100000, &v))
      o->rounds = (int)v, rounds_set = 1;
    else if (strcmp(a, "--contender-rounds") == 0 && bench_parse_long(val, 0, 100000, &v))
      o->contender_rounds = (int)v, contenders_set = 1;
    else if (strcmp(a, "--confirm-rounds") == 0 && bench_parse_long(val, 0, 100000, &v))
      o->confirm_rounds = (int)v, confirm_set = 1;
    else if (strcmp(a, "--batch-us") == 0 && bench_parse_long(val, 0, 1000000, &v))
      o->batch_s = (double)v * 1e-6;
    else if (strcmp(a, "--point-budget-ms") == 0 && bench_parse_long(val, 1, 10000000, &v))
      o->point_budget_s = (double)v * 1e-3, budget_set = 1;
    else if (strcmp(a, "--time-limit") == 0 && bench_parse_long(val, 1, 10000000, &v))
      o->time_limit_s = (double)v;
    else if (strcmp(a, "--threads") == 0 && bench_parse_long(val, 0, 4096, &v))
      o->threads = (int)v;
    else if (strcmp(a, "--seed") == 0 && bench_parse_long(val, 0, __LONG_MAX__, &v))
      o->seed = (uint64_t)v;
    else {
      fprintf(stderr, "xpar-devbench regret: bad option or value: %s %s\n", a, val);
      usage(stderr);
      return -1;
    }
  }
  if (o->quick) {
    if (!max_set) o->max_exp = 14;
    if (!rounds_set) o->rounds = 5;
    if (!contenders_set) o->contender_rounds = 0;
    if (!confirm_set) o->confirm_rounds = 0;
    if (!budget_set) o->point_budget_s = 0.2;
  }
  if (o->min_exp > o->max_exp) {
    fprintf(stderr, "xpar-devbench regret: --min-exp (%d) > --max-exp (%d%s)\n", o->min_exp,
            o->max_exp, max_set ? "" : ", the default");
    return -1;
  }
  if (!bench_ops_dtypes_valid("regret", o->ops, o->dtypes) ||
      !bench_list_valid("regret", "--residencies", o->residencies, res_names, R_COUNT) ||
      !bench_list_valid("regret", "--alts", o->alts, alt_names, A_COUNT))
    return -1;
  return 1;
}

/* The largest exponent whose arrays fit: host memory for the data, its
 * reference and the check buffer (+ staging); device memory for the
 * residency's arrays, four mappings and xpar's and CUB's staging. */
static int cap_exp(const rg_state *s, const bench_op *op, xpar_dtype t, int want) {
  size_t avail = bench_mem_available();
  double es = (double)xpar_dtype_size(t);
  int arrays = 1 + bench_op_reads_y(op->op) + bench_op_writes_out(op->op);
  int e = want;
  while (e > s->o.min_exp && avail && (2.0 + 3.0 * arrays) * ldexp(es, e) > 0.8 * (double)avail)
    --e;
  if (s->gpu && s->dev.total_memory)
    while (e > s->o.min_exp &&
           (double)arrays * 7.0 * ldexp(es, e) > 0.8 * (double)s->dev.total_memory)
      --e;
  if (e < want)
    fprintf(stderr, "xpar-devbench regret: %s %s: N capped at 2^%d by free memory\n", op->name,
            xpar_dtype_name(t), e);
  return e;
}

/* ---- the command -------------------------------------------------------------- */

int bench_cmd_regret(int argc, char **argv) {
  rg_state s;
  memset(&s, 0, sizeof s);
  int r = parse_opts(argc, argv, &s.o);
  if (r <= 0) return r == 0 ? 0 : 2;
  if (s.o.load && strcmp(s.o.load, "cpu-toggle") == 0)
    return bench_load_change(s.o.ops, s.o.dtypes, s.o.min_exp, s.o.max_exp, s.o.exp_step,
                             s.o.threads, s.o.load_on_s, s.o.seed);
  if (!bench_mkdir_p(s.o.out_dir)) {
    fprintf(stderr, "xpar-devbench regret: cannot create %s: %s\n", s.o.out_dir, strerror(errno));
    return 1;
  }
  if (xpar_device_query(&s.dev) != XPAR_OK) s.dev.usable = 0;
  s.gpu = s.dev.usable;
#if !defined(BENCH_HAVE_CUDART)
  s.gpu = 0; /* no runtime linked: no device or pinned arrays to make */
#endif
  for (int a = 0; a < A_COUNT; ++a) {
    if (!bench_list_has(s.o.alts, alt_names[a]) && a != A_AUTO) continue;
    if ((a == A_CUDA || a == A_CUB || a == A_SPLIT) && !s.gpu) continue;
#if !defined(BENCH_HAVE_CUB)
    if (a == A_CUB) continue;
#endif
    if (alt_tier[a]) {
      const bench_tier *t = NULL;
      for (int i = 0; i < bench_tier_count(); ++i)
        if (strcmp(bench_tier_at(i)->name, alt_tier[a]) == 0) t = bench_tier_at(i);
      xpar_status st = t ? bench_tier_open(&s.runs[a], t, s.o.threads) : XPAR_ERR_INTERNAL;
      if (st != XPAR_OK) {
        fprintf(stderr, "xpar-devbench regret: %s: %s (%s)\n", alt_names[a], xpar_status_name(st),
                xpar_last_error_detail());
        return 1;
      }
    }
    s.avail[a] = 1;
  }

  char path[1200];
  snprintf(path, sizeof path, "%s/regret.csv", s.o.out_dir);
  s.csv = bench_open_output("regret", path, "w");
  if (!s.csv) return 1;
  fprintf(s.csv, "op,dtype,residency,n,exp,alt,status,median_us,p90_us,min_us,max_us,rounds,"
                 "batch,stalled_rounds,median_held,auto_ran,best_alt,auto_over_best,"
                 "auto_minus_best_us,pass,faults_per_call,preemptions_per_round,"
                 "paired_auto_over_best,paired_pass,first_auto_over_best,first_pass,"
                 "confirm_rounds\n");
  printf("# xpar-devbench regret, seed %llu, GPU: %s, threads %d%s, rounds %d (shuffled order; "
         "AUTO and the alternatives within %.1fx of the fastest up to %d; where AUTO then misses, "
         "up to %d more), sample >= %.0f us, %s\n",
         (unsigned long long)s.o.seed, s.gpu ? s.dev.name : (s.dev.usable ? "no runtime" : s.dev.reason),
         s.o.threads, s.o.threads ? "" : " (runtime default)", s.o.rounds, RG_CONTENDER_FACTOR,
         s.o.contender_rounds > s.o.rounds ? s.o.contender_rounds : s.o.rounds, s.o.confirm_rounds,
         s.o.batch_s * 1e6,
         s.o.warm ? "one untimed call before each batch" : "no warm-up calls (--no-warm)");
  const char *prof = getenv("XPAR_PROFILE");
  printf("# thresholds: %s\n", prof && *prof ? prof : "built-in defaults (or the default profile)");
  const char *adapt = getenv("XPAR_ADAPT");
  printf("# adaptation: %s\n", adapt && *adapt ? adapt : "on (default)");
  /* Other work beside the whole run (bench_load.c), started before any timing. */
  bench_load *load = NULL;
  if (s.o.load) {
    char lwhy[160];
    load = bench_load_start(s.o.load, lwhy, sizeof lwhy);
    if (!load) {
      fprintf(stderr, "xpar-devbench regret: --load %s: %s\n", s.o.load, lwhy);
      return 1;
    }
    printf("# load: %s, %d busy process%s for the whole run\n", s.o.load, bench_load_count(load),
           bench_load_count(load) == 1 ? "" : "es");
  }
  s.host_ns_start = host_speed_ns();
  printf("# host speed: a plain fill of 128 int32 takes %.1f ns\n", s.host_ns_start);

  enum { MAX_OPS = BENCH_OP_COUNT, MAX_SERIES = MAX_OPS * XPAR_DTYPE_COUNT_ * R_COUNT };
  rg_series *sw = calloc(MAX_SERIES, sizeof *sw);
  bench_plot *plots = calloc(MAX_SERIES, sizeof *plots);
  char(*bases)[1024] = calloc(MAX_SERIES, sizeof *bases);
  if (!sw || !plots || !bases) return 1;
  int nsw = 0, failures = 0;
  int gnuplot = s.o.plot && bench_have_gnuplot();
  s.t_start = bench_now_s();

  /* Each residency's arrays are allocated once, at the largest size any
   * series needs, and freed only at the end.  Freeing pinned memory and then
   * allocating device memory can hand the device allocation the freed pinned
   * addresses (under unified addressing both come from the driver's range);
   * xpar's page cache still calls those pages host memory, and a small call
   * on them ran on the CPU and dereferenced device memory (a run on the H100
   * host, 2026-11-25, crashed so at the first device series after a pinned
   * one).  Stable buffers keep the bench off that path, whatever xpar's page
   * cache does. */
  int max_exp_of[MAX_OPS][XPAR_DTYPE_COUNT_];
  size_t max_bytes = 0;
  int any_y = 0, any_out = 0;
  for (int oi = 0; bench_op_at(oi) && oi < MAX_OPS; ++oi)
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t) {
      const bench_op *op = bench_op_at(oi);
      max_exp_of[oi][t] = -1;
      if (!bench_list_has(s.o.ops, op->name) ||
          !bench_list_has(s.o.dtypes, xpar_dtype_name((xpar_dtype)t)))
        continue;
      max_exp_of[oi][t] = cap_exp(&s, op, (xpar_dtype)t, s.o.max_exp);
      size_t b = ((size_t)1 << max_exp_of[oi][t]) * xpar_dtype_size((xpar_dtype)t);
      if (b > max_bytes) max_bytes = b;
      any_y |= bench_op_reads_y(op->op);
      any_out |= bench_op_writes_out(op->op);
    }
  rg_arrays arrs[R_COUNT];
  int arr_state[R_COUNT] = {0}; /* 0 not yet allocated, 1 ready, -1 failed */
  memset(arrs, 0, sizeof arrs);

  for (int oi = 0; bench_op_at(oi) && oi < MAX_OPS; ++oi) {
    const bench_op *op = bench_op_at(oi);
    if (!bench_list_has(s.o.ops, op->name)) continue;
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t) {
      xpar_dtype dt = (xpar_dtype)t;
      if (!bench_list_has(s.o.dtypes, xpar_dtype_name(dt)) || out_of_time(&s)) continue;
      int max_exp = max_exp_of[oi][t];
      size_t nmax = (size_t)1 << max_exp, es = xpar_dtype_size(dt);
      /* master data and the reference: the plain serial loop over all of it
       * (a scan's prefix is the scan of the prefix; a sort's reference is
       * redone at each size below, into the same output) */
      bench_case ref = {.reduction = XPAR_SUM, .kind = XPAR_INCLUSIVE};
      if (!bench_case_init(&ref, op, dt, nmax, s.o.seed + (uint64_t)oi * 131 + (uint64_t)t)) {
        fprintf(stderr, "xpar-devbench regret: out of memory at 2^%d\n", max_exp);
        failures++;
        continue;
      }
      /* axpy: ref.y becomes the reference output, ref.y0 keeps y's input */
      if (op->has_array_output) op->serial_baseline(&ref, 1);
      const void *ref_out = bench_case_output(&ref);
      const void *y_init = op->op == XPAR_OP_AXPY ? ref.y0 : ref.y;
      for (int res = 0; res < R_COUNT; ++res) {
        if (!bench_list_has(s.o.residencies, res_names[res]) || out_of_time(&s)) continue;
        if (res != R_PAGEABLE && !s.gpu) {
          if (!s.o.quick || res == R_DEVICE)
            fprintf(stderr, "xpar-devbench regret: %s data skipped: no usable GPU%s\n",
                    res_names[res], s.dev.usable ? " runtime in the bench" : "");
          continue;
        }
        char why[160] = "";
        if (arr_state[res] == 0)
          arr_state[res] =
              alloc_arrays(res, max_bytes, any_y, any_out, &arrs[res], why, sizeof why) ? 1 : -1;
        rg_arrays ar = arrs[res];
        int ok = arr_state[res] == 1;
        if (!ok && !why[0]) snprintf(why, sizeof why, "its arrays could not be allocated");
        if (ok && (!bench_copy_settled(ar.x, ref.x, nmax * es) ||
                   (y_init && !bench_copy_settled(ar.y, y_init, nmax * es)))) {
          snprintf(why, sizeof why, "copying the data in failed");
          ok = 0;
        }
        if (!ok) {
          fprintf(stderr, "xpar-devbench regret: %s %s %s: %s\n", op->name, xpar_dtype_name(dt),
                  res_names[res], why);
          failures++;
          continue;
        }
        rg_series *sr = &sw[nsw++];
        sr->op = op, sr->dtype = dt, sr->res = res;
        sr->min_exp = s.o.min_exp, sr->max_exp = max_exp;
        for (int e = s.o.min_exp; e <= max_exp; e += s.o.exp_step) {
          if (out_of_time(&s)) {
            sr->max_exp = e - 1;
            break;
          }
          unsigned char ref_result[8];
          if (!op->has_array_output) {
            bench_case v = bench_case_prefix(&ref, (size_t)1 << e);
            op->serial_baseline(&v, 1);
            memcpy(ref_result, v.result, sizeof ref_result);
          } else if (op->op == XPAR_OP_SORT || op->op == XPAR_OP_SELECT ||
                     op->op == XPAR_OP_RUNS || op->op == XPAR_OP_HISTOGRAM) {
            /* a sort's or a compaction's prefix is not the op of the prefix:
             * its own reference */
            bench_case v = bench_case_prefix(&ref, (size_t)1 << e);
            op->serial_baseline(&v, 1);
          }
          fprintf(stderr, "\r[%s %s %s] 2^%d ", op->name, xpar_dtype_name(dt), res_names[res], e);
          measure_point(&s, sr, &ar, e, ref_out, ref_result, y_init, &failures);
        }
        fprintf(stderr, "\r%50s\r", "");
        summarise(sr);
        print_series(stdout, &s, sr);
        csv_series(s.csv, sr);
        if (s.o.plot) plot_series(&s, sr, &plots[nsw - 1], bases[nsw - 1], sizeof bases[0], gnuplot);
      }
      bench_case_free(&ref);
    }
  }
  snprintf(path, sizeof path, "%s/regret.csv", s.o.out_dir);
  if (!bench_close_output("regret", path, s.csv)) failures++;
  bench_cub_release();
  for (int res = 0; res < R_COUNT; ++res)
    if (arr_state[res] != 0) free_arrays(res, &arrs[res]);

  if (s.o.plot && gnuplot && nsw > 1) {
    const char *b[MAX_SERIES];
    for (int i = 0; i < nsw; ++i) b[i] = bases[i];
    snprintf(path, sizeof path, "%s/regret.png", s.o.out_dir);
    if (bench_plot_overview(plots, b, nsw, path)) printf("# chart: %s\n", path);
  } else if (s.o.plot && nsw > 0) {
    printf("# charts: %s/<op>-<dtype>-<residency>.%s\n", s.o.out_dir, gnuplot ? "png" : "svg");
  }
  s.host_ns_end = host_speed_ns();
  bench_load_stop(load);
  snprintf(path, sizeof path, "%s/summary.csv", s.o.out_dir);
  FILE *f = bench_open_output("regret", path, "w");
  if (!f) failures++;
  if (f) {
    fprintf(f, "op,dtype,residency,points,geomean,worst,worst_exp,misses,stalls\n");
    for (int i = 0; i < nsw; ++i)
      fprintf(f, "%s,%s,%s,%d,%.4f,%.4f,%d,%d,%d\n", sw[i].op->name,
              xpar_dtype_name(sw[i].dtype), res_names[sw[i].res], sw[i].points,
              sw[i].points ? exp(sw[i].log_sum / sw[i].points) : NAN, sw[i].worst,
              sw[i].worst_exp, sw[i].misses, sw[i].stalls);
    if (!bench_close_output("regret", path, f)) failures++;
  }
  snprintf(path, sizeof path, "%s/summary.txt", s.o.out_dir);
  f = bench_open_output("regret", path, "w");
  if (!f) failures++;
  if (f) {
    print_stalls(f);
    print_summary(f, sw, nsw, &s);
    if (!bench_close_output("regret", path, f)) failures++;
  }
  print_stalls(stdout);
  print_summary(stdout, sw, nsw, &s);
  printf("# csv: %s/regret.csv, summary: %s/summary.txt (%.0f s)\n", s.o.out_dir, s.o.out_dir,
         bench_now_s() - s.t_start);
  free(sw);
  free(plots);
  free(bases);
  for (int a = 0; a < A_COUNT; ++a) bench_tier_close(&s.runs[a]);
  if (nsw == 0) {
    fprintf(stderr, "xpar-devbench regret: nothing was measured\n");
    return 1;
  }
  return failures ? 1 : 0;
}
