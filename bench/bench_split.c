/*
 * xpar-bench split: the split tier (cpu+cuda) against the two single tiers
 * on host data, and the share and `from` it should have (xpar.h,
 * xpar_context_set_split).  Per memory kind (pinned, pageable) x op x dtype x
 * n it times each alternative's rounds back to back, the two tiers first (the
 * split's share comes from their medians), and keeps the median of each:
 *
 *   openmp     XPAR_BACKEND_CPU, OpenMP at every n (the CPU threads over host
 *              memory)
 *   cuda       XPAR_BACKEND_CUDA (copies over PCIe both ways included)
 *   split      XPAR_BACKEND_CPU_CUDA at the share the two tiers' times give,
 *              share = t_openmp / (t_openmp + t_cuda) (equal finishing times)
 *   split@s    the same at the shares of --shares (0.2,0.35,0.5 by default)
 *
 * The bound: both sides at their measured rates at once, t_bound =
 * 1 / (1 / t_openmp + 1 / t_cuda); each split row says how close it comes
 * and its speed-up over the better single tier.  Every alternative's output
 * is checked once against the openmp tier's (inputs are small integers: every
 * summation order is exact, so the check is bit equality).
 *
 * The last lines are the settings to use, as profile lines (`split <op>
 * <dtype> <memory> <from|never> <share>`, docs/profile.md): the share from the
 * largest n, `from` the smallest n of the sweep from which the split beats
 * both tiers by 5 % at every larger n (never otherwise).  --save writes them
 * into the profile (--save FILE, else $XPAR_PROFILE, else the default path),
 * keeping what that profile already holds: the split's calibration
 * (xpar-bench calibrate measures the thresholds, this the split).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct split_opts {
  const char *ops, *dtypes, *memories, *shares;
  int save;
  const char *save_path;
  int min_exp, max_exp, rounds, threads;
} split_opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-bench split [--ops reduce,dot,axpy,add,fill,scan,histogram,segmented]\n"
          "         [--dtypes int32,float,double]\n"
          "         [--memory pinned,pageable] [--min-exp 24] [--max-exp 28] [--rounds 7]\n"
          "         [--shares 0.2,0.35,0.5] [--threads T] [--save [FILE]]\n");
}

enum { ALT_OPENMP, ALT_CUDA, ALT_SPLIT, ALT_FIXED0 };
enum { MAX_SHARES = 6, MAX_ALTS = ALT_FIXED0 + MAX_SHARES };

/* Pinned memory from the bench's runtime (bench_hostmem.c), else page-aligned
 * malloc'd memory faulted in once, outside the timing. */
static void *host_alloc(int pinned, size_t bytes) {
  char why[160];
  if (pinned) return bench_alloc_pinned(bytes, why, sizeof why);
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) return NULL;
  memset(p, 0, bytes);
  return p;
}

static void host_free(int pinned, void *p) {
  if (pinned)
    bench_free_pinned(p);
  else
    free(p);
}

/* Small integers of mean 0 (-3 .. 3, a hash of i and seed): every partial sum, product
 * sum and prefix stays far below 2^24 (a random walk: some sqrt(n), 2^17 at n = 2^30), so float
 * results are exact whatever the order of the additions and the tiers must agree bit
 * for bit. */
static void fill_small_ints(xpar_dtype t, void *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    const int v = (int)(h % 7) - 3;
    switch (t) {
      case XPAR_INT32: ((int32_t *)p)[i] = v; break;
      case XPAR_FLOAT: ((float *)p)[i] = (float)v; break;
      default: ((double *)p)[i] = (double)v; break;
    }
  }
}

enum { HIST_BINS = 256, SEG_ROW = 1024 }; /* segmented: rows of 1,024 (a batched reduce) */

typedef struct split_case {
  xpar_op op;
  xpar_dtype t;
  size_t n, bytes;
  void *x, *y, *out;
  void *y0; /* axpy: y before the call */
  unsigned char result[8];
  uint64_t counts[HIST_BINS]; /* histogram: 256 even bins over [-3, 4) */
} split_case;

/* One call; axpy restores y first (outside the timing, by the caller). */
static xpar_status run_call(xpar_context *ctx, split_case *c) {
  static const double alpha_d = 1.0;
  static const float alpha_f = 1.0f;
  static const int32_t alpha_i = 1;
  const void *alpha = c->t == XPAR_FLOAT ? (const void *)&alpha_f
                      : c->t == XPAR_INT32 ? (const void *)&alpha_i
                                           : (const void *)&alpha_d;
  switch (c->op) {
    case XPAR_OP_REDUCE: return xpar_reduce(ctx, c->t, XPAR_SUM, c->x, c->n, c->result);
    case XPAR_OP_DOT: return xpar_dot(ctx, c->t, c->x, c->y, c->n, c->result);
    case XPAR_OP_AXPY: return xpar_axpy(ctx, c->t, alpha, c->x, c->y, c->n);
    case XPAR_OP_ADD: return xpar_add(ctx, c->t, c->x, c->y, c->out, c->n);
    case XPAR_OP_FILL: return xpar_fill(ctx, c->t, alpha, c->out, c->n);
    case XPAR_OP_SCAN:
      return xpar_scan(ctx, c->t, XPAR_SUM, XPAR_INCLUSIVE, c->x, c->out, c->n);
    case XPAR_OP_HISTOGRAM: {
      const double lo_d = -3, hi_d = 4;
      const float lo_f = -3, hi_f = 4;
      const int32_t lo_i = -3, hi_i = 4;
      const void *lo = c->t == XPAR_FLOAT   ? (const void *)&lo_f
                       : c->t == XPAR_INT32 ? (const void *)&lo_i
                                            : (const void *)&lo_d;
      const void *hi = c->t == XPAR_FLOAT   ? (const void *)&hi_f
                       : c->t == XPAR_INT32 ? (const void *)&hi_i
                                            : (const void *)&hi_d;
      return xpar_histogram_even(ctx, c->t, c->x, c->n, lo, hi, HIST_BINS, c->counts);
    }
    case XPAR_OP_SEGMENTED:
      return xpar_segmented_reduce_fixed(ctx, c->t, XPAR_SUM, c->x, SEG_ROW, c->n / SEG_ROW,
                                         c->out);
    default: return XPAR_ERR_INVALID_ARGUMENT;
  }
}

/* The output to check: the result, y or out. */
static const void *output_of(const split_case *c, size_t *bytes) {
  if (c->op == XPAR_OP_HISTOGRAM) {
    *bytes = sizeof c->counts;
    return c->counts;
  }
  if (c->op == XPAR_OP_SEGMENTED) {
    *bytes = c->n / SEG_ROW * xpar_dtype_size(c->t);
    return c->out;
  }
  if (c->op == XPAR_OP_REDUCE || c->op == XPAR_OP_DOT) {
    *bytes = xpar_dtype_size(c->t);
    return c->result;
  }
  *bytes = c->bytes;
  return c->op == XPAR_OP_AXPY ? c->y : c->out; /* scan, add, fill: out */
}

static double timed_call(xpar_context *ctx, split_case *c, xpar_status *st) {
  if (c->op == XPAR_OP_AXPY) memcpy(c->y, c->y0, c->bytes);
  const double t0 = bench_now_s();
  *st = run_call(ctx, c);
  return bench_now_s() - t0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int bench_cmd_split(int argc, char **argv) {
  split_opts o = {"reduce,dot,axpy,add,fill,scan,histogram,segmented", "int32,float,double", "pinned,pageable",
                  "0.2,0.35,0.5", 0, NULL, 24, 28, 7, 0};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--save") == 0) {
      o.save = 1;
      if (v && v[0] != '-') {
        o.save_path = v;
        i++;
      }
      continue;
    }
    if (!v) {
      fprintf(stderr, "xpar-bench split: %s needs a value\n", a);
      usage(stderr);
      return 2;
    }
    if (strcmp(a, "--ops") == 0) o.ops = v;
    else if (strcmp(a, "--dtypes") == 0) o.dtypes = v;
    else if (strcmp(a, "--memory") == 0) o.memories = v;
    else if (strcmp(a, "--shares") == 0) o.shares = v;
    else if (strcmp(a, "--min-exp") == 0) o.min_exp = atoi(v);
    else if (strcmp(a, "--max-exp") == 0) o.max_exp = atoi(v);
    else if (strcmp(a, "--rounds") == 0) o.rounds = atoi(v);
    else if (strcmp(a, "--threads") == 0) o.threads = atoi(v);
    else {
      fprintf(stderr, "xpar-bench split: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    i++;
  }
  if (o.min_exp < 14 || o.max_exp > 31 || o.min_exp > o.max_exp || o.rounds < 1 ||
      o.rounds > 99) {
    fprintf(stderr, "xpar-bench split: --min-exp 14..31 <= --max-exp, --rounds 1..99\n");
    return 2;
  }
  double shares[MAX_SHARES];
  int nshares = 0;
  for (const char *s = o.shares; s && *s && nshares < MAX_SHARES;) {
    shares[nshares] = strtod(s, NULL);
    if (!(shares[nshares] > 0 && shares[nshares] < 1)) {
      fprintf(stderr, "xpar-bench split: --shares: each in (0, 1)\n");
      return 2;
    }
    nshares++;
    s = strchr(s, ',');
    if (s) s++;
  }
  xpar_device_info dev;
  xpar_device_query(&dev);
  if (!dev.usable) {
    fprintf(stderr, "xpar-bench split: no usable GPU (%s)\n", dev.reason);
    return 1;
  }
  static const xpar_op ops[] = {XPAR_OP_REDUCE, XPAR_OP_DOT,       XPAR_OP_AXPY,
                                XPAR_OP_ADD,    XPAR_OP_FILL,      XPAR_OP_SCAN,
                                XPAR_OP_HISTOGRAM, XPAR_OP_SEGMENTED};
  static const xpar_dtype dts[] = {XPAR_INT32, XPAR_FLOAT, XPAR_DOUBLE};
  xpar_context *ctx[3];
  const xpar_backend backends[3] = {XPAR_BACKEND_CPU, XPAR_BACKEND_CUDA, XPAR_BACKEND_CPU_CUDA};
  for (int k = 0; k < 3; k++) {
    if (xpar_context_create(&ctx[k]) != XPAR_OK ||
        xpar_context_set_backend(ctx[k], backends[k]) != XPAR_OK ||
        xpar_context_set_adapt(ctx[k], 0) != XPAR_OK ||
        (o.threads > 0 && xpar_context_set_num_threads(ctx[k], o.threads) != XPAR_OK)) {
      fprintf(stderr, "xpar-bench split: context: %s\n", xpar_last_error_detail());
      return 1;
    }
    for (int op = 0; op < XPAR_OP_COUNT_; op++)
      for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
        xpar_context_set_threshold(ctx[k], (xpar_op)op, (xpar_dtype)t, XPAR_THRESHOLD_OPENMP, 0);
  }
  printf("# xpar-bench split on %s; %d rounds, median; times in ms; bound = both tiers' "
         "rates at once\n",
         dev.name, o.rounds);
  char settings[8192] = "";
  /* The measured settings, for --save. */
  struct {
    xpar_op op;
    xpar_dtype t;
    xpar_split_memory m;
    size_t from;
    double share;
  } measured[2 * 8 * 3];
  int nmeasured = 0;
  size_t used = 0;
  for (int mi = 0; mi < 2; mi++) {
    const int pinned = mi == 0;
    const char *mname = pinned ? "pinned" : "pageable";
    if (!bench_list_has(o.memories, mname)) continue;
    for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
      if (!bench_list_has(o.ops, xpar_op_name(ops[oi]))) continue;
      for (size_t ti = 0; ti < 3; ti++) {
        if (!bench_list_has(o.dtypes, xpar_dtype_name(dts[ti]))) continue;
        const xpar_op op = ops[oi];
        const xpar_dtype t = dts[ti];
        const size_t esz = xpar_dtype_size(t);
        const size_t nmax = (size_t)1 << o.max_exp;
        split_case c = {.op = op, .t = t};
        c.x = op == XPAR_OP_FILL ? NULL : host_alloc(pinned, nmax * esz);
        const int has_y = op == XPAR_OP_DOT || op == XPAR_OP_AXPY || op == XPAR_OP_ADD;
        const int has_out = op == XPAR_OP_SCAN || op == XPAR_OP_ADD || op == XPAR_OP_FILL ||
                            op == XPAR_OP_SEGMENTED;
        c.x = op == XPAR_OP_FILL ? NULL : c.x;
        c.y = has_y ? host_alloc(pinned, nmax * esz) : NULL;
        c.out = has_out ? host_alloc(pinned, nmax * esz) : NULL;
        c.y0 = op == XPAR_OP_AXPY ? malloc(nmax * esz) : NULL;
        void *check = malloc(nmax * esz);
        if ((op != XPAR_OP_FILL && !c.x) || (has_y && !c.y) || (has_out && !c.out) ||
            (op == XPAR_OP_AXPY && !c.y0) || !check) {
          fprintf(stderr, "xpar-bench split: cannot allocate %zu bytes of %s memory\n",
                  nmax * esz, mname);
          return 1;
        }
        if (c.x) fill_small_ints(t, c.x, nmax, 1);
        if (c.y) fill_small_ints(t, c.y, nmax, 2);
        if (c.y0) memcpy(c.y0, c.y, nmax * esz);
        printf("\n## %s %s %s\n%-6s %9s %9s %9s %9s %7s %9s %6s %6s", xpar_op_name(op),
               xpar_dtype_name(t), mname, "log2n", "openmp", "cuda", "bound", "split", "share",
               "x best", "bound%", "");
        for (int s = 0; s < nshares; s++) printf(" @%-7.2f", shares[s]);
        printf("\n");
        size_t from = XPAR_NEVER;
        int wins_to_end = 1;
        double last_share = 0.0;
        size_t froms[32];
        int wins[32];
        int nrows = 0;
        for (int e = o.min_exp; e <= o.max_exp; e++) {
          c.n = (size_t)1 << e;
          c.bytes = c.n * esz;
          double med[MAX_ALTS];
          double samples[MAX_ALTS][99];
          const int nalt = ALT_FIXED0 + nshares;
          xpar_status st = XPAR_OK;
          /* The two tiers first: the share for the split column. */
          for (int a = 0; a < 2 && st == XPAR_OK; a++) {
            timed_call(ctx[a], &c, &st); /* warm: staging, pages, the check below */
            size_t ob;
            const void *out = output_of(&c, &ob);
            if (a == 0) memcpy(check, out, ob);
            else if (memcmp(check, out, ob) != 0)
              fprintf(stderr, "xpar-bench split: %s %s n=2^%d: cuda differs from openmp\n",
                      xpar_op_name(op), xpar_dtype_name(t), e);
            for (int r = 0; r < o.rounds && st == XPAR_OK; r++)
              samples[a][r] = timed_call(ctx[a], &c, &st);
            qsort(samples[a], (size_t)o.rounds, sizeof(double), cmp_double);
            med[a] = samples[a][o.rounds / 2];
          }
          if (st != XPAR_OK) {
            fprintf(stderr, "xpar-bench split: %s\n", xpar_last_error_detail());
            return 1;
          }
          const double share = med[0] / (med[0] + med[1]);
          const xpar_split_memory m = pinned ? XPAR_SPLIT_PINNED : XPAR_SPLIT_PAGEABLE;
          for (int a = ALT_SPLIT; a < nalt && st == XPAR_OK; a++) {
            const double s = a == ALT_SPLIT ? share : shares[a - ALT_FIXED0];
            st = xpar_context_set_split(ctx[2], op, t, m, XPAR_NEVER, s);
            if (st != XPAR_OK) break;
            timed_call(ctx[2], &c, &st);
            size_t ob;
            const void *out = output_of(&c, &ob);
            if (st == XPAR_OK && memcmp(check, out, ob) != 0)
              fprintf(stderr, "xpar-bench split: %s %s n=2^%d share %.2f: differs\n",
                      xpar_op_name(op), xpar_dtype_name(t), e, s);
            for (int r = 0; r < o.rounds && st == XPAR_OK; r++)
              samples[a][r] = timed_call(ctx[2], &c, &st);
            qsort(samples[a], (size_t)o.rounds, sizeof(double), cmp_double);
            med[a] = samples[a][o.rounds / 2];
          }
          if (st != XPAR_OK) {
            fprintf(stderr, "xpar-bench split: %s\n", xpar_last_error_detail());
            return 1;
          }
          const double best = med[0] < med[1] ? med[0] : med[1];
          const double bound = 1.0 / (1.0 / med[0] + 1.0 / med[1]);
          printf("%-6d %9.3f %9.3f %9.3f %9.3f %7.3f %9.2f %5.0f%% %6s", e, med[0] * 1e3,
                 med[1] * 1e3, bound * 1e3, med[ALT_SPLIT] * 1e3, share, best / med[ALT_SPLIT],
                 100.0 * bound / med[ALT_SPLIT], "");
          for (int a = ALT_FIXED0; a < nalt; a++) printf(" %8.3f", med[a] * 1e3);
          printf("\n");
          froms[nrows] = c.n;
          wins[nrows] = med[ALT_SPLIT] * 1.05 <= best;
          nrows++;
          last_share = share;
        }
        for (int r = nrows - 1; r >= 0; r--) {
          if (!wins[r]) wins_to_end = 0;
          if (wins_to_end) from = froms[r];
        }
        char fromtxt[32];
        if (from == XPAR_NEVER) snprintf(fromtxt, sizeof fromtxt, "never");
        else snprintf(fromtxt, sizeof fromtxt, "%zu", from);
        const int w = snprintf(settings + used, sizeof settings - used, "split %s %s %s %s %.3f\n",
                               xpar_op_name(op), xpar_dtype_name(t), mname, fromtxt, last_share);
        if (w > 0 && used + (size_t)w < sizeof settings) used += (size_t)w;
        if (nmeasured < (int)(sizeof measured / sizeof *measured) && last_share > 0.0 &&
            last_share < 1.0) {
          measured[nmeasured].op = op;
          measured[nmeasured].t = t;
          measured[nmeasured].m = pinned ? XPAR_SPLIT_PINNED : XPAR_SPLIT_PAGEABLE;
          measured[nmeasured].from = from;
          measured[nmeasured].share = last_share;
          nmeasured++;
        }
        if (c.x) host_free(pinned, c.x);
        if (c.y) host_free(pinned, c.y);
        if (c.out) host_free(pinned, c.out);
        free(c.y0);
        free(check);
      }
    }
  }
  printf("\n# the settings (profile lines, xpar_context_set_split): split <op> <dtype> "
         "<memory> <from|never> <share>\n%s",
         settings);
  for (int k = 0; k < 3; k++) xpar_context_destroy(ctx[k]);
  if (!o.save) return 0;
  /* Into the profile: what it holds is loaded first and written back with the
   * split's settings (xpar_profile_save writes API and profile values). */
  char path[1024];
  const char *env_profile = getenv("XPAR_PROFILE");
  if (o.save_path)
    snprintf(path, sizeof path, "%s", o.save_path);
  else if (env_profile && env_profile[0])
    snprintf(path, sizeof path, "%s", env_profile);
  else if (xpar_profile_default_path(path, sizeof path) != XPAR_OK) {
    fprintf(stderr, "xpar-bench split: no default profile path (%s); use --save FILE\n",
            xpar_last_error_detail());
    return 1;
  }
  xpar_context *save = NULL;
  int applied = 0;
  xpar_status st = xpar_context_create(&save);
  FILE *exists = st == XPAR_OK ? fopen(path, "r") : NULL;
  if (exists) {
    fclose(exists);
    st = xpar_profile_load(save, path, &applied);
  }
  for (int i = 0; st == XPAR_OK && i < nmeasured; i++)
    st = xpar_context_set_split(save, measured[i].op, measured[i].t, measured[i].m,
                                measured[i].from, measured[i].share);
  if (st == XPAR_OK) st = xpar_profile_save(save, path);
  if (save) xpar_context_destroy(save);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar-bench split: saving %s: %s (%s)\n", path, xpar_status_name(st),
            xpar_last_error_detail());
    return 1;
  }
  printf("# written into the profile %s\n", path);
  return 0;
}
