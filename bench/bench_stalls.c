/*
 * xpar-devbench stalls: the probe mode for OpenMP stall episodes.
 *
 * On the 16-core host of the lent H100 machine (2026-11-25), OpenMP calls of
 * 2^10..2^22 elements sometimes took 4-12 ms instead of 5-400 us, xpar's tier
 * and a plain `omp parallel for` alike.  A median hides how often; this probe times
 * every call on its own and reports p50, p99, max and the calls over 1 ms,
 * per variant and N, for the suspects one process can vary:
 *
 *   xpar-P        xpar's OpenMP tier with a team of P = omp_get_num_procs()
 *                 (xpar_context_set_num_threads)
 *   xpar-default  xpar's OpenMP tier with its default team (the runtime's
 *                 default, omp_get_max_threads(); cpu_internal.h)
 *   xpar-half     a team of P / 2
 *   xpar-alt      the team size changing every call (P, then P / 2)
 *   plain-P       a plain `#pragma omp parallel for reduction`, P threads
 *   plain-P-1     the same, P - 1 threads
 *
 * Variants take turns in blocks of --block calls (an episode that lasts
 * seconds hits all of them); --variants takes a subset, e.g. xpar-default,
 * plain-P: an application mixing xpar's calls with its own 16-thread loops,
 * without the resizing variants that reproduce the old behaviour.  What one process cannot vary is varied by
 * running it again: OMP_WAIT_POLICY, OMP_PROC_BIND / OMP_PLACES (read once
 * at start-up), and --cuda (initialise the CUDA runtime first, so its host
 * threads exist, as in an application that also uses the GPU).  xpar itself
 * never sets any of these (it uses num_threads clauses only).
 * --bandwidth adds the large-N cost of a smaller team: medians of P, P - 1
 * and P / 2 at 2^26 (reduce and scan), so a team size that avoids stalls is
 * taken only where it costs no bandwidth.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(BENCH_HAVE_OPENMP)
#include <omp.h>
#endif

#include "bench.h"

enum { V_XPAR_P, V_XPAR_DEF, V_XPAR_HALF, V_XPAR_ALT, V_PLAIN_P, V_PLAIN_P1, V_COUNT };
static const char *const v_names[V_COUNT] = {"xpar-P",   "xpar-default", "xpar-half",
                                             "xpar-alt", "plain-P",      "plain-P-1"};

static int procs(void) {
#if defined(BENCH_HAVE_OPENMP)
  return omp_get_num_procs();
#else
  return 1;
#endif
}

#define pct bench_quantile

static void usage(FILE *f) {
  fprintf(f, "usage: xpar-devbench stalls [options]\n"
             "  --op reduce|scan    (default reduce)\n"
             "  --dtype T           (default int32)\n"
             "  --exps LIST         N = 2^E for each E (default 10,14,18,22)\n"
             "  --calls C           timed calls per variant and N (default 2000)\n"
             "  --block B           calls per turn (default 50)\n"
             "  --cuda              initialise the CUDA runtime first (its host threads)\n"
             "  --bandwidth         also medians at 2^26 for teams P, P-1, P/2\n"
             "  --time-limit S      at most S seconds of probing in all (shared by the N;\n"
             "                      an N whose share runs out reports the calls made)\n"
             "  --variants LIST     the variants that take turns (default: all six: xpar-P,\n"
             "                      xpar-default, xpar-half, xpar-alt, plain-P, plain-P-1)\n"
             "  --csv FILE          one row per variant x N\n");
}

int bench_cmd_stalls(int argc, char **argv) {
  const char *opname = "reduce", *dtname = "int32", *exps = "10,14,18,22", *csv_path = NULL;
  const char *variants = "xpar-P,xpar-default,xpar-half,xpar-alt,plain-P,plain-P-1";
  long calls = 2000, block = 50, limit_s = 0;
  int cuda = 0, bandwidth = 0;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--cuda") == 0) {
      cuda = 1;
      continue;
    }
    if (strcmp(a, "--bandwidth") == 0) {
      bandwidth = 1;
      continue;
    }
    const char *v = i + 1 < argc ? argv[++i] : NULL;
    int ok = v != NULL;
    if (!ok) {
    } else if (strcmp(a, "--op") == 0) opname = v;
    else if (strcmp(a, "--dtype") == 0) dtname = v;
    else if (strcmp(a, "--exps") == 0) exps = v;
    else if (strcmp(a, "--csv") == 0) csv_path = v;
    else if (strcmp(a, "--variants") == 0) variants = v;
    else if (strcmp(a, "--calls") == 0) ok = bench_parse_long(v, 10, 10000000, &calls);
    else if (strcmp(a, "--block") == 0) ok = bench_parse_long(v, 1, 1000000, &block);
    else if (strcmp(a, "--time-limit") == 0) ok = bench_parse_long(v, 1, 100000, &limit_s);
    else ok = 0;
    if (!ok) {
      fprintf(stderr, "xpar-devbench stalls: bad option or value: %s\n", a);
      usage(stderr);
      return 2;
    }
  }
  const bench_op *op = bench_find_op(opname);
  xpar_dtype dt;
  if (!op || (op->op != XPAR_OP_REDUCE && op->op != XPAR_OP_SCAN) || !op->baseline ||
      !bench_parse_dtype(dtname, &dt)) {
    fprintf(stderr, "xpar-devbench stalls: needs --op reduce|scan, a dtype, and OpenMP\n");
    return 2;
  }
  /* --exps: exponents 1 to 34, comma-separated, each checked before anything runs */
  enum { MAX_EXPS = 34 };
  int ex[MAX_EXPS], nexps = 0, max_e = 0;
  for (const char *p = exps; p;) {
    size_t l;
    const char *it = bench_list_item(&p, &l);
    char item[24];
    long e = 0;
    if (l >= sizeof item || nexps == MAX_EXPS ||
        (memcpy(item, it, l), item[l] = '\0', !bench_parse_long(item, 1, 34, &e))) {
      fprintf(stderr, "xpar-devbench stalls: --exps %s: \"%.*s\" is not an exponent from 1 to 34 "
                      "(a comma-separated list of at most %d)\n",
              exps, (int)l, it, MAX_EXPS);
      return 2;
    }
    ex[nexps++] = (int)e;
    if (e > max_e) max_e = (int)e;
  }
  if (!bench_list_valid("stalls", "--variants", variants, v_names, V_COUNT)) return 2;
  int P = procs(), half = P / 2 > 0 ? P / 2 : 1, pm1 = P > 1 ? P - 1 : 1;
  if (cuda) {
    char why[160];
    void *d = bench_alloc_device(64, why, sizeof why);
    if (!d) fprintf(stderr, "xpar-devbench stalls: --cuda: %s (going on without)\n", why);
    bench_free_device(d);
  }
  const char *wait = getenv("OMP_WAIT_POLICY"), *bind = getenv("OMP_PROC_BIND"),
             *places = getenv("OMP_PLACES");
  printf("# xpar-devbench stalls: %s %s, %d procs, OMP_WAIT_POLICY=%s OMP_PROC_BIND=%s "
         "OMP_PLACES=%s, CUDA runtime %s; %ld calls per variant and N, turns of %ld\n",
         op->name, dtname, P, wait ? wait : "(unset)", bind ? bind : "(unset)",
         places ? places : "(unset)", cuda ? "initialised" : "not initialised", calls, block);

  /* contexts: the OpenMP tier (threshold 0), team set per variant */
  const bench_tier *omp_tier = NULL;
  for (int i = 0; i < bench_tier_count(); ++i)
    if (strcmp(bench_tier_at(i)->name, "openmp") == 0) omp_tier = bench_tier_at(i);
  bench_tier_run tr[4];
  int teams[4] = {P, 0, half, P};
  for (int i = 0; i < 4; ++i)
    if (!omp_tier || bench_tier_open(&tr[i], omp_tier, teams[i]) != XPAR_OK) {
      fprintf(stderr, "xpar-devbench stalls: cannot open the OpenMP tier: %s\n",
              xpar_last_error_detail());
      return 1;
    }
  int top = bandwidth && max_e < 26 ? 26 : max_e;
  bench_case c = {.reduction = XPAR_SUM, .kind = XPAR_INCLUSIVE};
  if (!bench_case_init(&c, op, dt, (size_t)1 << top, 12)) {
    fprintf(stderr, "xpar-devbench stalls: out of memory for 2^%d elements\n", top);
    for (int i = 0; i < 4; ++i) bench_tier_close(&tr[i]);
    return 1;
  }
  FILE *csv = csv_path ? bench_open_output("stalls", csv_path, "a") : NULL;
  if (csv_path && !csv) {
    bench_case_free(&c);
    for (int i = 0; i < 4; ++i) bench_tier_close(&tr[i]);
    return 1;
  }
  if (csv && ftell(csv) == 0)
    fprintf(csv, "op,dtype,wait,bind,cuda,exp,variant,threads,calls,p50_us,p90_us,p99_us,"
                 "max_us,over_1ms,over_10x_p50\n");
  /* --variants passed bench_list_valid: it names one variant at least */
  int on[V_COUNT];
  for (int k = 0; k < V_COUNT; ++k) on[k] = bench_list_has(variants, v_names[k]);
  /* the first variant taking turns counts the calls done */
  int first = 0;
  while (!on[first]) ++first;
  double *t = malloc((size_t)V_COUNT * (size_t)calls * sizeof *t);
  if (!t) return 1;
  printf("%-5s %-13s %7s %10s %10s %10s %10s %8s %8s\n", "n", "variant", "threads", "p50", "p90",
         "p99", "max", ">1ms", ">10xp50");
  double t_probe = bench_now_s();
  for (int ei = 0; ei < nexps; ++ei) {
    const int e = ex[ei];
    double deadline = t_probe + (double)limit_s * (ei + 1) / nexps;
    bench_case v = bench_case_prefix(&c, (size_t)1 << e);
    long done[V_COUNT] = {0};
    int flip = 0;
    for (int i = 0; i < 4; ++i) op->run(tr[i].ctx, &v); /* warm-up */
    op->baseline(&v, P);
    while (done[first] < calls &&
           !(limit_s > 0 && done[first] > 0 && bench_now_s() > deadline)) {
      for (int k = 0; k < V_COUNT; ++k) {
        if (!on[k]) continue;
        for (long b = 0; b < block && done[k] < calls; ++b) {
          double t0 = bench_now_s();
          switch (k) {
            case V_XPAR_P: op->run(tr[0].ctx, &v); break;
            case V_XPAR_DEF: op->run(tr[1].ctx, &v); break;
            case V_XPAR_HALF: op->run(tr[2].ctx, &v); break;
            case V_XPAR_ALT:
              flip ^= 1;
              xpar_context_set_num_threads(tr[3].ctx, flip ? P : half);
              op->run(tr[3].ctx, &v);
              break;
            case V_PLAIN_P: op->baseline(&v, P); break;
            default: op->baseline(&v, pm1); break;
          }
          t[(size_t)k * calls + done[k]++] = bench_now_s() - t0;
        }
      }
    }
    for (int k = 0; k < V_COUNT; ++k) {
      if (!on[k]) continue;
      double *s = &t[(size_t)k * calls];
      long m = done[k]; /* fewer than --calls when the time limit cut it short */
      bench_sort(s, (int)m);
      double p50 = pct(s, (int)m, 0.5);
      int over1 = 0, over10 = 0;
      for (long i = 0; i < m; ++i) over1 += s[i] > 1e-3, over10 += s[i] > 10 * p50;
      static const char *const thr[V_COUNT] = {"P", "default", "P/2", "P,P/2", "P", "P-1"};
      char nb[12];
      snprintf(nb, sizeof nb, "2^%d", e);
      printf("%-5s %-13s %7s %8.2fus %8.2fus %8.2fus %8.2fus %8d %8d%s\n", nb, v_names[k],
             thr[k], p50 * 1e6, pct(s, (int)m, 0.9) * 1e6, pct(s, (int)m, 0.99) * 1e6,
             s[m - 1] * 1e6, over1, over10, m < calls ? " (time limit: fewer calls)" : "");
      if (csv)
        fprintf(csv, "%s,%s,%s,%s,%d,%d,%s,%s,%ld,%.3f,%.3f,%.3f,%.3f,%d,%d\n", op->name, dtname,
                wait ? wait : "", bind ? bind : "", cuda, e, v_names[k], thr[k], m, p50 * 1e6,
                pct(s, (int)m, 0.9) * 1e6, pct(s, (int)m, 0.99) * 1e6, s[m - 1] * 1e6, over1,
                over10);
    }
    fflush(stdout);
  }
  if (bandwidth) {
    /* the price of a smaller team where bandwidth counts */
    bench_case v = bench_case_prefix(&c, (size_t)1 << 26);
    int team[3] = {P, pm1, half};
    double med[3];
    for (int i = 0; i < 3; ++i) {
      xpar_context_set_num_threads(tr[3].ctx, team[i]);
      double s[15];
      op->run(tr[3].ctx, &v);
      for (int r = 0; r < 15; ++r) {
        double t0 = bench_now_s();
        op->run(tr[3].ctx, &v);
        s[r] = bench_now_s() - t0;
      }
      bench_sort(s, 15);
      med[i] = s[7];
    }
    double bytes = op->bytes_per_elem * ldexp((double)c.esize, 26);
    printf("# 2^26 %s %s, xpar OpenMP tier, median of 15: team %d %.3f ms (%.1f GB/s), "
           "team %d %.3f ms (%.1f GB/s, %.3fx), team %d %.3f ms (%.1f GB/s, %.3fx)\n",
           op->name, dtname, P, med[0] * 1e3, bytes / med[0] / 1e9, pm1, med[1] * 1e3,
           bytes / med[1] / 1e9, med[1] / med[0], half, med[2] * 1e3, bytes / med[2] / 1e9,
           med[2] / med[0]);
  }
  const int written = bench_close_output("stalls", csv_path, csv);
  free(t);
  bench_case_free(&c);
  for (int i = 0; i < 4; ++i) bench_tier_close(&tr[i]);
  return written ? 0 : 1;
}
