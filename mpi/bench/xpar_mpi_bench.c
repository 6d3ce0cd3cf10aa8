/*
 * xpar-mpi-bench: the MPI component's distributed reduce, wide sum, dot and
 * scan, timed on p ranks (run it under mpirun -np p; mpi/bench/run-gpu.sh
 * does), on device-resident slices (cudaMalloc on each rank's GPU, chosen by
 * xpar_mpi_local_device) or host slices.
 *
 * Sections (all by default):
 *  strong  the same total N cut into p slices, against one rank doing all of
 *          N (rank 0 alone on MPI_COMM_SELF, inside this same run), and with
 *          device data against the CUB + MPI baseline (cub_mpi_reference.cu)
 *          on the same slices: speedup = t(1 rank) / t(p ranks), vs CUB+MPI =
 *          t(CUB+MPI) / t(xpar) (> 1: xpar faster).
 *  weak    weak_n per rank (default 2^30 on the GPU) against one rank with
 *          weak_n: efficiency = t(1 rank) / t(p ranks).
 *  small   the cross-rank step at small n_local: median of the distributed
 *          call minus median of the local calls it makes (interleaved reps,
 *          per rep the slowest rank), beside a bare 16-byte MPI_Allgather.
 * Timing: per repetition MPI_Barrier, then each rank times the call; the
 * repetition's time is the slowest rank's (MPI_Allreduce MAX); medians are
 * printed.  Integer results are checked (all-ones data: sums, dots and the
 * scan's last element per rank are known exactly); a wrong one fails the run.
 *
 *   xpar-mpi-bench [--mem device|host] [--dtypes int32,float] [--n N] [--weak-n N]
 *                  [--reps R] [--small-reps R] [--sections strong,weak,small]
 *                  [--ops reduce,sum_wide,dot,scan]
 * N may be written 2^k.  Rank 0 prints; the exit status is 0 on every rank
 * when every check passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xpar/xpar_mpi.h"

#ifdef BENCH_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif
#ifdef BENCH_HAVE_CUB
#include "cub_mpi_reference.h"
#endif

/* ---- options ------------------------------------------------------------------ */

enum { SEC_STRONG = 1, SEC_WEAK = 2, SEC_SMALL = 4 };
typedef enum bop { B_REDUCE, B_SUM_WIDE, B_DOT, B_SCAN, NBOPS } bop;
static const char *const bop_names[NBOPS] = {"reduce", "sum_wide", "dot", "scan"};

typedef struct opts {
  int device; /* 1: device slices, 0: host */
  xpar_dtype dtypes[8];
  int ndtypes;
  size_t strong_n, weak_n;
  int reps, small_reps;
  int sections;
  int ops[NBOPS];
} opts;

static int g_rank, g_size, g_failed;

static void die(const char *fmt, const char *arg) {
  if (g_rank == 0) {
    fprintf(stderr, "xpar-mpi-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
  }
  MPI_Finalize();
  exit(2);
}

static size_t parse_size(const char *s) {
  char *end = NULL;
  if (s[0] == '2' && s[1] == '^') {
    unsigned long k = strtoul(s + 2, &end, 10);
    if (*end || k > 40) die("bad size %s", s);
    return (size_t)1 << k;
  }
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end) die("bad size %s", s);
  return (size_t)v;
}

static xpar_dtype parse_dtype(const char *s) {
  for (int d = 0; d < XPAR_DTYPE_COUNT_; d++)
    if (strcmp(s, xpar_dtype_name((xpar_dtype)d)) == 0) return (xpar_dtype)d;
  die("unknown dtype %s", s);
  return XPAR_INT32;
}

static void parse(opts *o, int argc, char **argv, int gpu) {
  memset(o, 0, sizeof *o);
  o->device = gpu;
  o->dtypes[0] = XPAR_INT32;
  o->dtypes[1] = XPAR_FLOAT;
  o->ndtypes = 2;
  o->reps = 20;
  o->small_reps = 2000;
  o->sections = SEC_STRONG | SEC_WEAK | SEC_SMALL;
  for (int b = 0; b < NBOPS; b++) o->ops[b] = 1;
  int sizes_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) die("%s needs a value", a);
    i++;
    if (strcmp(a, "--mem") == 0) {
      if (strcmp(v, "device") == 0) o->device = 1;
      else if (strcmp(v, "host") == 0) o->device = 0;
      else die("--mem: device or host, not %s", v);
    } else if (strcmp(a, "--dtypes") == 0) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      o->ndtypes = 0;
      for (char *t = strtok(buf, ","); t && o->ndtypes < 8; t = strtok(NULL, ","))
        o->dtypes[o->ndtypes++] = parse_dtype(t);
    } else if (strcmp(a, "--n") == 0) {
      o->strong_n = parse_size(v);
      sizes_given |= 1;
    } else if (strcmp(a, "--weak-n") == 0) {
      o->weak_n = parse_size(v);
      sizes_given |= 2;
    } else if (strcmp(a, "--reps") == 0) {
      o->reps = atoi(v);
    } else if (strcmp(a, "--small-reps") == 0) {
      o->small_reps = atoi(v);
    } else if (strcmp(a, "--sections") == 0) {
      o->sections = (strstr(v, "strong") ? SEC_STRONG : 0) | (strstr(v, "weak") ? SEC_WEAK : 0) |
                    (strstr(v, "small") ? SEC_SMALL : 0);
    } else if (strcmp(a, "--ops") == 0) {
      for (int b = 0; b < NBOPS; b++) o->ops[b] = strstr(v, bop_names[b]) != NULL;
    } else {
      die("unknown option %s (see the comment at the top of xpar_mpi_bench.c)", a);
    }
  }
  if (o->reps < 1 || o->small_reps < 1) die("%s", "--reps and --small-reps must be >= 1");
  /* GPU: the sizes the targets are stated at; host: what a CPU node moves in
   * comparable time. */
  if (!(sizes_given & 1)) o->strong_n = o->device ? (size_t)1 << 30 : (size_t)1 << 24;
  if (!(sizes_given & 2)) o->weak_n = o->device ? (size_t)1 << 30 : (size_t)1 << 22;
}

/* ---- memory ------------------------------------------------------------------- */

static void *bench_alloc(const opts *o, size_t bytes) {
  void *p = NULL;
#ifdef BENCH_HAVE_CUDART
  if (o->device) {
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
      fprintf(stderr, "xpar-mpi-bench: rank %d: cudaMalloc(%zu): %s\n", g_rank, bytes,
              cudaGetErrorString(e));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
  }
#endif
  (void)o;
  p = aligned_alloc(64, ((bytes ? bytes : 1) + 63) & ~(size_t)63);
  if (!p) {
    fprintf(stderr, "xpar-mpi-bench: rank %d: out of host memory (%zu bytes)\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

static void bench_free(const opts *o, void *p) {
#ifdef BENCH_HAVE_CUDART
  if (o->device) {
    cudaFree(p);
    return;
  }
#endif
  (void)o;
  free(p);
}

/* One element of an array (device or host), to check results. */
static void read_element(const opts *o, const void *p, size_t i, size_t size, void *out) {
#ifdef BENCH_HAVE_CUDART
  if (o->device) {
    cudaMemcpy(out, (const char *)p + i * size, size, cudaMemcpyDeviceToHost);
    return;
  }
#endif
  (void)o;
  memcpy(out, (const char *)p + i * size, size);
}

/* ---- one timed call ---------------------------------------------------------------- */

typedef enum impl { XPAR_DIST, XPAR_LOCAL, CUB_MPI } impl;

typedef struct job {
  impl how;
  bop op;
  xpar_dtype dtype;
  xpar_context *ctx;
  MPI_Comm comm;
  const void *in, *y;
  void *out;
  size_t n;
  int last; /* this rank is the last of comm (XPAR_LOCAL's scan skips the reduce) */
  unsigned char result[8];
#ifdef BENCH_HAVE_CUB
  cub_mpi *cub;
#endif
} job;

static int run_job(job *j) {
  const unsigned char zero[8] = {0};
  xpar_context *c = j->ctx;
  const xpar_dtype d = j->dtype;
  switch (j->how) {
    case XPAR_DIST:
      switch (j->op) {
        case B_REDUCE: return xpar_mpi_reduce(c, j->comm, d, XPAR_SUM, j->in, j->n, j->result);
        case B_SUM_WIDE: return xpar_mpi_reduce_sum_wide(c, j->comm, d, j->in, j->n, j->result);
        case B_DOT: return xpar_mpi_dot(c, j->comm, d, j->in, j->y, j->n, j->result);
        default:
          return xpar_mpi_scan(c, j->comm, d, XPAR_SUM, XPAR_INCLUSIVE, j->in, j->out, j->n);
      }
    case XPAR_LOCAL: /* the local calls the distributed one makes */
      switch (j->op) {
        case B_REDUCE: return xpar_reduce(c, d, XPAR_SUM, j->in, j->n, j->result);
        case B_SUM_WIDE: return xpar_reduce_sum_wide(c, d, j->in, j->n, j->result);
        case B_DOT: return xpar_dot(c, d, j->in, j->y, j->n, j->result);
        default: {
          const xpar_status st =
              j->last ? XPAR_OK : xpar_reduce(c, d, XPAR_SUM, j->in, j->n, j->result);
          if (st != XPAR_OK) return (int)st;
          return xpar_scan_init(c, d, XPAR_SUM, XPAR_INCLUSIVE, zero, j->in, j->out, j->n);
        }
      }
    case CUB_MPI:
#ifdef BENCH_HAVE_CUB
      if (j->op == B_SCAN) return cub_mpi_scan_sum(j->cub, j->comm, d, j->in, j->out, j->n);
      return cub_mpi_reduce_sum(j->cub, j->comm, d, j->in, j->n, j->result);
#else
      return -1;
#endif
  }
  return -1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void job_failed(const job *j, int rc) {
  fprintf(stderr, "xpar-mpi-bench: rank %d: %s %s n=%zu failed: %d (%s)\n", g_rank,
          bop_names[j->op], xpar_dtype_name(j->dtype), j->n, rc,
          j->how == CUB_MPI ? "CUB+MPI" : xpar_mpi_last_error_detail());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Median over reps of the slowest rank's time of one job, on `comm` (every
 * rank of comm calls this with its own job). */
static double time_job(job *j, MPI_Comm comm, int reps) {
  double *t = (double *)malloc((size_t)reps * sizeof *t);
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  int rc = run_job(j); /* warm-up: scratch, page cache, first-touch */
  if (rc) job_failed(j, rc);
  for (int i = 0; i < reps; i++) {
    MPI_Barrier(comm);
    const double t0 = now();
    rc = run_job(j);
    t[i] = now() - t0;
    if (rc) job_failed(j, rc);
  }
  MPI_Allreduce(MPI_IN_PLACE, t, reps, MPI_DOUBLE, MPI_MAX, comm);
  const double m = median(t, reps);
  free(t);
  return m;
}

/* ---- checks (integers: all-ones data) ------------------------------------------------------ */

/* A job on all-ones slices: the result (reduce, wide sum, dot) is the global
 * count; the scan's last element on each rank is its slice's end. */
static void check_job(const opts *o, const job *j, size_t global_n, size_t slice_end,
                      const char *what) {
  if (j->dtype == XPAR_FLOAT || j->dtype == XPAR_DOUBLE) return;
  const size_t es = xpar_dtype_size(j->dtype);
  uint64_t got = 0, want = global_n;
  if (j->op == B_SCAN) {
    if (j->n == 0) return;
    read_element(o, j->out, j->n - 1, es, &got);
    want = slice_end;
  } else {
    memcpy(&got, j->result, j->op == B_SUM_WIDE ? 8 : es);
  }
  const size_t bits = (j->op == B_SUM_WIDE ? 8 : es) * 8;
  if (bits < 64) {
    got &= ((uint64_t)1 << bits) - 1;
    want &= ((uint64_t)1 << bits) - 1;
  }
  if (got != want) {
    fprintf(stderr, "xpar-mpi-bench: rank %d: WRONG %s %s %s n=%zu: got %llu, expected %llu\n",
            g_rank, what, bop_names[j->op], xpar_dtype_name(j->dtype), j->n,
            (unsigned long long)got, (unsigned long long)want);
    g_failed = 1;
  }
}

/* ---- the sections ---------------------------------------------------------------------------- */

typedef struct world {
  opts o;
  xpar_context *ctx;
  void *in, *y, *out; /* this rank's buffers, cap elements of the widest dtype */
  size_t cap;
  int shared_gpu; /* ranks of a node outnumber its GPUs */
#ifdef BENCH_HAVE_CUB
  cub_mpi *cub;
#endif
} world;

static void fill_ones(world *w, xpar_dtype d, size_t n) {
  unsigned char one[8];
  switch (d) {
    case XPAR_FLOAT: { float v = 1.0f; memcpy(one, &v, 4); break; }
    case XPAR_DOUBLE: { double v = 1.0; memcpy(one, &v, 8); break; }
    default: { uint64_t v = 1; memcpy(one, &v, 8); break; } /* little-endian low bytes */
  }
  if (xpar_fill(w->ctx, d, one, w->in, n) != XPAR_OK ||
      xpar_fill(w->ctx, d, one, w->y, n) != XPAR_OK) {
    fprintf(stderr, "xpar-mpi-bench: rank %d: xpar_fill: %s\n", g_rank, xpar_last_error_detail());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static job make_job(world *w, impl how, bop op, xpar_dtype d, MPI_Comm comm, size_t n) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  job j = {.how = how, .op = op, .dtype = d, .ctx = w->ctx, .comm = comm, .in = w->in,
           .y = w->y, .out = w->out, .n = n, .last = rank == size - 1};
#ifdef BENCH_HAVE_CUB
  j.cub = w->cub;
#endif
  return j;
}

/* Bytes a single-GPU call of op moves for n elements (the nominal traffic:
 * the distributed scan's extra read of each slice is not counted). */
static double nominal_bytes(bop op, xpar_dtype d, size_t n) {
  const double es = (double)xpar_dtype_size(d);
  return (op == B_DOT || op == B_SCAN ? 2.0 : 1.0) * es * (double)n;
}

static int has_cub(const world *w, bop op, xpar_dtype d) {
#ifdef BENCH_HAVE_CUB
  return w->o.device && w->cub && (op == B_REDUCE || op == B_SCAN) && cub_mpi_supports(d);
#else
  (void)w, (void)op, (void)d;
  return 0;
#endif
}

/* Target bookkeeping for the summary. */
typedef struct targets {
  double reduce_speedup, reduce_vs_cub, scan_speedup, scan_vs_cub, small_step_us;
  int have_speedup, have_cub, have_small;
} targets;

/* Time op at `total` elements: one rank (rank 0 alone, MPI_COMM_SELF) with
 * `one_rank_n`, then every rank with its slice `n_mine` [start, start+n). */
static void scaling_row(world *w, bop op, xpar_dtype d, size_t one_rank_n, size_t n_mine,
                        size_t start, size_t total, const char *section, targets *tg) {
  double t1 = 0, t1_cub = 0;
  if (g_rank == 0) {
    job j = make_job(w, XPAR_DIST, op, d, MPI_COMM_SELF, one_rank_n);
    t1 = time_job(&j, MPI_COMM_SELF, w->o.reps);
    check_job(&w->o, &j, one_rank_n, one_rank_n, "1-rank");
    if (has_cub(w, op, d)) {
      job c = make_job(w, CUB_MPI, op, d, MPI_COMM_SELF, one_rank_n);
      t1_cub = time_job(&c, MPI_COMM_SELF, w->o.reps);
      check_job(&w->o, &c, one_rank_n, one_rank_n, "1-rank CUB+MPI");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  job j = make_job(w, XPAR_DIST, op, d, MPI_COMM_WORLD, n_mine);
  const double tp = time_job(&j, MPI_COMM_WORLD, w->o.reps);
  check_job(&w->o, &j, total, start + n_mine, "p-rank");
  double tp_cub = 0;
  if (has_cub(w, op, d)) {
    job c = make_job(w, CUB_MPI, op, d, MPI_COMM_WORLD, n_mine);
    tp_cub = time_job(&c, MPI_COMM_WORLD, w->o.reps);
    check_job(&w->o, &c, total, start + n_mine, "p-rank CUB+MPI");
  }
  if (g_rank != 0) return;
  const int strong = section[0] == 's';
  const double ratio = t1 / tp; /* strong: speedup; weak: efficiency */
  char cub[64] = "         -        -", cub1[32] = "        -";
  if (tp_cub > 0) snprintf(cub, sizeof cub, "%10.3f %8.3f", tp_cub * 1e3, tp_cub / tp);
  if (t1_cub > 0) snprintf(cub1, sizeof cub1, "%9.3f", t1_cub * 1e3);
  printf("%-6s %-9s %-7s %12zu %9.3f %s %9.3f %8.3f %s %9.1f\n", section, bop_names[op],
         xpar_dtype_name(d), strong ? total : n_mine, t1 * 1e3, cub1, tp * 1e3, ratio, cub,
         nominal_bytes(op, d, total) / tp * 1e-9);
  if (strong && d == XPAR_INT32) {
    if (op == B_REDUCE) {
      tg->reduce_speedup = ratio;
      if (tp_cub > 0) tg->reduce_vs_cub = tp_cub / tp;
    } else if (op == B_SCAN) {
      tg->scan_speedup = ratio;
      if (tp_cub > 0) tg->scan_vs_cub = tp_cub / tp;
    }
    tg->have_speedup = 1;
    tg->have_cub |= tp_cub > 0;
  }
}

static void scaling_header(const char *what) {
  if (g_rank != 0) return;
  printf("\n# %s\n", what);
  printf("%-6s %-9s %-7s %12s %9s %9s %9s %8s %10s %8s %9s\n", "", "op", "dtype", "n",
         "1rank_ms", "1rk_cub", "p_ms", "1rank/p", "p_cub_ms", "cub/xpar", "GB/s_p");
}

static void section_strong(world *w, targets *tg) {
  const size_t N = w->o.strong_n, per = N / (size_t)g_size, extra = N % (size_t)g_size;
  const size_t n_mine = per + ((size_t)g_rank < extra), start =
      (size_t)g_rank * per + ((size_t)g_rank < extra ? (size_t)g_rank : extra);
  char title[160];
  snprintf(title, sizeof title, "strong scaling: %zu elements in all, %d ranks (%zu..%zu each); "
           "1 rank = rank 0 alone on MPI_COMM_SELF", N, g_size, per, per + (extra > 0));
  scaling_header(title);
  for (int di = 0; di < w->o.ndtypes; di++) {
    fill_ones(w, w->o.dtypes[di], g_rank == 0 ? (N > n_mine ? N : n_mine) : n_mine);
    for (int b = 0; b < NBOPS; b++)
      if (w->o.ops[b]) scaling_row(w, (bop)b, w->o.dtypes[di], N, n_mine, start, N, "strong", tg);
  }
}

static void section_weak(world *w, targets *tg) {
  const size_t n = w->o.weak_n;
  char title[160];
  snprintf(title, sizeof title, "weak scaling: %zu elements per rank, %d ranks; 1 rank = rank 0 "
           "alone with %zu", n, g_size, n);
  scaling_header(title);
  for (int di = 0; di < w->o.ndtypes; di++) {
    fill_ones(w, w->o.dtypes[di], n);
    for (int b = 0; b < NBOPS; b++)
      if (w->o.ops[b])
        scaling_row(w, (bop)b, w->o.dtypes[di], n, n, (size_t)g_rank * n, (size_t)g_size * n,
                    "weak", tg);
  }
}

/* The cross-rank step: distributed minus local, interleaved, medians. */
static void section_small(world *w, targets *tg) {
  const int reps = w->o.small_reps;
  double *td = (double *)malloc((size_t)reps * sizeof(double));
  double *tl = (double *)malloc((size_t)reps * sizeof(double));
  if (!td || !tl) MPI_Abort(MPI_COMM_WORLD, 1);
  /* The floor: a bare 16-byte MPI_Allgather, as the exchange makes. */
  unsigned char rec[16] = {0};
  unsigned char *all = (unsigned char *)malloc(16 * (size_t)g_size);
  if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < reps; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    MPI_Allgather(rec, 16, MPI_BYTE, all, 16, MPI_BYTE, MPI_COMM_WORLD);
    td[i] = now() - t0;
  }
  MPI_Allreduce(MPI_IN_PLACE, td, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(all);
  if (g_rank == 0) {
    printf("\n# cross-rank step at small n_local: median over %d interleaved reps of the "
           "distributed call minus the local calls it makes (slowest rank per rep)\n", reps);
    printf("# a bare 16-byte MPI_Allgather on %d ranks: %.2f us\n", g_size, median(td, reps) * 1e6);
    printf("%-9s %-7s %9s %10s %10s %10s\n", "op", "dtype", "n_local", "dist_us", "local_us",
           "step_us");
  }
  static const size_t sizes[] = {1, 1024, 16384};
  double worst_step = 0;
  for (int di = 0; di < w->o.ndtypes; di++) {
    const xpar_dtype d = w->o.dtypes[di];
    fill_ones(w, d, sizes[2]);
    for (int b = 0; b < NBOPS; b++) {
      if (!w->o.ops[b]) continue;
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        job dist = make_job(w, XPAR_DIST, (bop)b, d, MPI_COMM_WORLD, sizes[si]);
        job local = make_job(w, XPAR_LOCAL, (bop)b, d, MPI_COMM_WORLD, sizes[si]);
        int rc = run_job(&dist);
        if (!rc) rc = run_job(&local);
        if (rc) job_failed(&dist, rc);
        for (int i = 0; i < reps; i++) {
          MPI_Barrier(MPI_COMM_WORLD);
          double t0 = now();
          rc = run_job(&local);
          tl[i] = now() - t0;
          MPI_Barrier(MPI_COMM_WORLD);
          t0 = now();
          rc |= run_job(&dist);
          td[i] = now() - t0;
          if (rc) job_failed(&dist, rc);
        }
        check_job(&w->o, &dist, sizes[si] * (size_t)g_size, sizes[si] * (size_t)(g_rank + 1),
                  "small");
        MPI_Allreduce(MPI_IN_PLACE, td, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, tl, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const double md = median(td, reps), ml = median(tl, reps), step = md - ml;
        if (step > worst_step) worst_step = step;
        if (g_rank == 0)
          printf("%-9s %-7s %9zu %10.2f %10.2f %10.2f\n", bop_names[b], xpar_dtype_name(d),
                 sizes[si], md * 1e6, ml * 1e6, step * 1e6);
      }
    }
  }
  tg->small_step_us = worst_step * 1e6;
  tg->have_small = 1;
  free(td);
  free(tl);
}

static void print_targets(const world *w, const targets *tg) {
  if (g_rank != 0) return;
  printf("\n# targets (int32, strong scaling; one GPU per rank assumed)%s\n",
         w->shared_gpu ? ": RANKS SHARE GPUS HERE, the scaling targets do not apply" : "");
  if (tg->have_speedup) {
    printf("reduce  %.3fx one rank   (target >= 1.95x)  %s\n", tg->reduce_speedup,
           tg->reduce_speedup >= 1.95 ? "met" : "MISSED");
    printf("scan    %.3fx one rank   (target >= 1.5x)   %s\n", tg->scan_speedup,
           tg->scan_speedup >= 1.5 ? "met" : "MISSED");
  }
  if (tg->have_cub) {
    printf("reduce  %.3fx CUB+MPI    (target >= 0.98x)  %s\n", tg->reduce_vs_cub,
           tg->reduce_vs_cub >= 0.98 ? "met" : "MISSED");
    printf("scan    %.3fx CUB+MPI    (target >= 1.05x)  %s\n", tg->scan_vs_cub,
           tg->scan_vs_cub >= 1.05 ? "met" : "MISSED");
  }
  if (tg->have_small)
    printf("cross-rank step, worst over ops/dtypes/sizes: %.2f us (target <= 2 us)  %s\n",
           tg->small_step_us, tg->small_step_us <= 2.0 ? "met" : "MISSED");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  world w;
  memset(&w, 0, sizeof w);
  int device = -1;
  if (xpar_mpi_context_create(MPI_COMM_WORLD, &w.ctx) != XPAR_OK ||
      xpar_mpi_local_device(MPI_COMM_WORLD, &device) != XPAR_OK) {
    fprintf(stderr, "xpar-mpi-bench: rank %d: %s\n", g_rank, xpar_mpi_last_error_detail());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int gpu = device >= 0;
#ifndef BENCH_HAVE_CUDART
  gpu = 0; /* no CUDA runtime in this build: host slices only */
#endif
  MPI_Allreduce(MPI_IN_PLACE, &gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  parse(&w.o, argc, argv, gpu);
  if (w.o.device && !gpu) die("%s", "--mem device: no usable GPU on some rank (or no CUDA runtime)");
#ifdef BENCH_HAVE_CUDART
  if (w.o.device) cudaSetDevice(device);
#endif
  /* Which ranks share a GPU: node-local ranks beyond the device count.
   * (cudaGetDeviceCount: no CUDA context on a device this rank does not use,
   * as xpar_device_query would open on device 0.) */
  char gpu_name[256] = "";
  {
    MPI_Comm node;
    int node_size = 1, count = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
#ifdef BENCH_HAVE_CUDART
    if (w.o.device) {
      struct cudaDeviceProp prop;
      if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
      if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        snprintf(gpu_name, sizeof gpu_name, "%s", prop.name);
    }
#endif
    int shared = w.o.device && node_size > count;
    MPI_Allreduce(&shared, &w.shared_gpu, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }

  size_t widest = 0;
  for (int i = 0; i < w.o.ndtypes; i++) {
    const size_t s = xpar_dtype_size(w.o.dtypes[i]);
    widest = s > widest ? s : widest;
  }
  const size_t strong_slice = w.o.strong_n / (size_t)g_size + 1;
  w.cap = w.o.sections & SEC_STRONG ? (g_rank == 0 ? w.o.strong_n : strong_slice) : 0;
  if ((w.o.sections & SEC_WEAK) && w.o.weak_n > w.cap) w.cap = w.o.weak_n;
  if (w.cap < 16384) w.cap = 16384; /* the small-N section */
  w.in = bench_alloc(&w.o, w.cap * widest);
  w.y = bench_alloc(&w.o, w.cap * widest);
  w.out = bench_alloc(&w.o, w.cap * widest);
#ifdef BENCH_HAVE_CUB
  if (w.o.device && cub_mpi_create(&w.cub, w.cap) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
#endif

  if (g_rank == 0) {
    printf("xpar-mpi-bench: %d ranks, %s slices (%s), dtypes", g_size,
           w.o.device ? "device" : "host", w.o.device ? gpu_name : "pageable host memory");
    for (int i = 0; i < w.o.ndtypes; i++) printf(" %s", xpar_dtype_name(w.o.dtypes[i]));
    printf(", %d reps (small n: %d), medians%s\n", w.o.reps, w.o.small_reps,
           w.shared_gpu ? "; ranks share GPUs" : "");
#ifndef BENCH_HAVE_CUB
    printf("(no CUB + MPI baseline in this build: it needs CUDA)\n");
#endif
    fflush(stdout);
  }
  targets tg;
  memset(&tg, 0, sizeof tg);
  if (w.o.sections & SEC_STRONG) section_strong(&w, &tg);
  if (w.o.sections & SEC_WEAK) section_weak(&w, &tg);
  if (w.o.sections & SEC_SMALL) section_small(&w, &tg);
  print_targets(&w, &tg);

  MPI_Allreduce(MPI_IN_PLACE, &g_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (g_rank == 0 && g_failed) printf("\nSOME RESULTS WERE WRONG (see stderr)\n");
#ifdef BENCH_HAVE_CUB
  cub_mpi_destroy(w.cub);
#endif
  bench_free(&w.o, w.in);
  bench_free(&w.o, w.y);
  bench_free(&w.o, w.out);
  xpar_context_destroy(w.ctx);
  MPI_Finalize();
  return g_failed;
}
