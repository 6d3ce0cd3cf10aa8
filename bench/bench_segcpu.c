/*
 * xpar-devbench segcpu: the CPU tiers' segmented reduce and scan against the
 * host's memory bound, per segment-size distribution (issue: within 1.5x of
 * the traffic bound for every distribution).
 *
 * For each distribution (all 1, all 16, all 1,024, all 2^20, power-law, one
 * half-size segment among tiny ones), int32 and double, int64 offsets:
 * xpar_segmented_reduce (sum) and xpar_segmented_scan (inclusive sum) on
 * cpu-openmp (every thread, or --threads) and cpu-serial, median of the
 * reps (cpu-openmp: the cpu backend, OpenMP at these sizes).  The bound:
 * the call's bytes over this run's plain OpenMP stream rates on the same arrays -- a sum loop (read) for the reduce's reads, a
 * copy loop (read + write) for the scan -- so a ratio of 1.0 is the speed
 * of a loop that only moves the bytes.  Bytes: a reduce reads n elements
 * and m + 1 offsets and writes m results; a scan reads n elements and the
 * offsets and writes n.  Every result is checked against a serial loop.
 *
 *   xpar-devbench segcpu [--log2n 24] [--threads T] [--reps 7]
 * Rows: SEGCPU op dtype dist n m tier ms GB/s bound-ms ratio.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench.h"

enum { SD_ONES, SD_16, SD_1024, SD_BIG, SD_POWER, SD_HALF, SD_COUNT };
static const char *const sd_names[SD_COUNT] = {"all-1",  "all-16",    "all-1024",
                                               "all-2^20", "power-law", "half+tiny"};

static uint64_t rng_next(uint64_t *s) {
  *s += 0x9E3779B97F4A7C15ull;
  uint64_t z = *s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Offsets of distribution d over n elements (the last segment trimmed to n):
 * *m segments, n_segments + 1 offsets (malloc'd). */
static int64_t *make_offsets(int d, size_t n, size_t *m, uint64_t seed) {
  size_t cap = n + 2, k = 0, sum = 0;
  int64_t *off = malloc((cap + 1) * sizeof *off);
  if (!off) return NULL;
  off[0] = 0;
  uint64_t s = seed;
  while (sum < n && k < cap) {
    size_t v;
    switch (d) {
      case SD_ONES: v = 1; break;
      case SD_16: v = 16; break;
      case SD_1024: v = 1024; break;
      case SD_BIG: v = (size_t)1 << 20; break;
      case SD_POWER: {
        const double u = (double)(rng_next(&s) >> 11) * 0x1p-53 + 1e-12;
        double x = pow(u, -1.0 / 1.2);
        if (x > (double)(n / 4 + 1)) x = (double)(n / 4 + 1);
        v = (size_t)x - 1;
        break;
      }
      default: /* half + tiny: tiny ones, one of n / 2 in the middle, tiny ones */
        v = (sum < n / 2 && sum + 4 >= n / 2) || (k == 0 && n < 8) ? n / 2
                                                                   : rng_next(&s) % 4;
        break;
    }
    if (sum + v > n) v = n - sum;
    sum += v;
    off[++k] = (int64_t)sum;
  }
  *m = k;
  return off;
}

typedef struct segcpu_call {
  xpar_context *ctx;
  int scan;
  xpar_dtype t;
  const void *x;
  void *out;
  size_t n, m;
  const int64_t *off;
} segcpu_call;

static int segcpu_run(void *arg) {
  const segcpu_call *c = arg;
  xpar_status st =
      c->scan ? xpar_segmented_scan(c->ctx, c->t, XPAR_SUM, XPAR_INCLUSIVE, c->x, c->out, c->n,
                                    c->off, XPAR_INT64, c->m)
              : xpar_segmented_reduce(c->ctx, c->t, XPAR_SUM, c->x, c->n, c->off, XPAR_INT64,
                                      c->m, c->out);
  return st == XPAR_OK; /* bench_time: non-zero is success */
}

/* The plain loops of the bound, OpenMP over every thread used. */
typedef struct stream_call {
  const void *x;
  void *y;
  size_t bytes;
  int copy, threads;
  volatile uint64_t sink;
} stream_call;

static int stream_run(void *arg) {
  stream_call *c = arg;
  const uint64_t *x = c->x;
  const size_t words = c->bytes / 8;
  if (c->copy) {
    uint64_t *y = c->y;
#pragma omp parallel for schedule(static) num_threads(c->threads)
    for (size_t i = 0; i < words; i++) y[i] = x[i];
  } else {
    uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s) num_threads(c->threads)
    for (size_t i = 0; i < words; i++) s += x[i];
    c->sink = s;
  }
  return 1;
}

/* The results against a serial loop (integers exact; doubles of small
 * integers: exact too). */
static int segcpu_check(const segcpu_call *c) {
  for (size_t g = 0; g < c->m; g++) {
    double acc = 0;
    for (int64_t i = c->off[g]; i < c->off[g + 1]; i++) {
      const double v = c->t == XPAR_INT32 ? (double)((const int32_t *)c->x)[i]
                                          : ((const double *)c->x)[i];
      acc += v;
      if (c->scan) {
        const double o = c->t == XPAR_INT32 ? (double)((const int32_t *)c->out)[i]
                                            : ((const double *)c->out)[i];
        if (o != acc) return -1;
      }
    }
    if (!c->scan) {
      const double o = c->t == XPAR_INT32 ? (double)((const int32_t *)c->out)[g]
                                          : ((const double *)c->out)[g];
      if (o != acc) return -1;
    }
  }
  return 0;
}

int bench_cmd_segcpu(int argc, char **argv) {
  long log2n = 24, threads = 0, reps = 7;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--log2n") && i + 1 < argc) {
      if (!bench_parse_long(argv[++i], 20, 32, &log2n)) return 2;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      if (!bench_parse_long(argv[++i], 1, 4096, &threads)) return 2;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      if (!bench_parse_long(argv[++i], 1, 1000, &reps)) return 2;
    } else {
      const int help = !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
      fprintf(help ? stdout : stderr,
              "usage: xpar-devbench segcpu [--log2n 24 (20..32)] [--threads T] [--reps 7]\n");
      return help ? 0 : 2;
    }
  }
#ifdef _OPENMP
  if (!threads) threads = omp_get_max_threads();
#else
  if (!threads) threads = 1;
#endif
  const size_t n = (size_t)1 << log2n;
  void *x = malloc(n * 8), *y = malloc(n * 8), *out = malloc(n * 8);
  if (!x || !y || !out) {
    fprintf(stderr, "segcpu: out of memory for 2^%ld elements\n", log2n);
    return 1;
  }
  bench_timing_cfg cfg = {.fixed_reps = (int)reps};
  printf("# xpar-devbench segcpu: n = 2^%ld, %ld threads, int64 offsets, median of %ld; "
         "bound = the call's bytes at this run's plain OpenMP sum (reduce) or copy (scan) rate\n",
         log2n, threads, reps);
  printf("SEGCPU op     dtype  dist        n      m          tier        ms       GB/s  "
         "bound-ms  ratio\n");
  int fails = 0;
  for (int ti = 0; ti < 2; ti++) {
    const xpar_dtype t = ti ? XPAR_DOUBLE : XPAR_INT32;
    const size_t es = ti ? 8 : 4;
    for (size_t i = 0; i < n; i++) {
      const int v = (int)(i * 2654435761u % 17) - 8;
      if (ti) ((double *)x)[i] = v;
      else ((int32_t *)x)[i] = v;
    }
    /* the stream rates over this dtype's bytes */
    stream_call sr = {.x = x, .y = y, .bytes = n * es, .copy = 0, .threads = (int)threads};
    stream_call sc = sr;
    sc.copy = 1;
    bench_timing tr, tc;
    bench_time(&cfg, stream_run, &sr, &tr);
    bench_time(&cfg, stream_run, &sc, &tc);
    const double read_bw = (double)(n * es) / tr.median_s;       /* bytes read a s */
    const double copy_bw = (double)(2 * n * es) / tc.median_s;   /* read + written */
    printf("# %s: plain sum %.1f GB/s read, plain copy %.1f GB/s read + write\n",
           xpar_dtype_name(t), read_bw / 1e9, copy_bw / 1e9);
    for (int d = 0; d < SD_COUNT; d++) {
      size_t m = 0;
      int64_t *off = make_offsets(d, n, &m, 0x5EED + (uint64_t)d);
      if (!off) return 1;
      for (int scan = 0; scan < 2; scan++)
        for (int tier = 0; tier < 2; tier++) {
          xpar_context *ctx;
          if (xpar_context_create(&ctx) != XPAR_OK) return 1;
          xpar_context_set_backend(ctx, tier ? XPAR_BACKEND_CPU_SERIAL : XPAR_BACKEND_CPU);
          if (!tier) xpar_context_set_num_threads(ctx, (int)threads);
          segcpu_call c = {ctx, scan, t, x, out, n, m, off};
          bench_timing tm;
          const int bad = !bench_time(&cfg, segcpu_run, &c, &tm) || segcpu_check(&c);
          fails += bad;
          const double bytes = scan ? (double)(2 * n * es + (m + 1) * 8)
                                    : (double)(n * es + (m + 1) * 8 + m * es);
          const double bound_s = scan ? bytes / copy_bw : bytes / read_bw;
          printf("SEGCPU %-6s %-6s %-10s 2^%-3ld %-10zu %-11s %8.3f %8.1f %8.3f %6.2f%s\n",
                 scan ? "scan" : "reduce", xpar_dtype_name(t), sd_names[d], log2n, m,
                 tier ? "cpu-serial" : "cpu-openmp", tm.median_s * 1e3,
                 bytes / tm.median_s / 1e9, bound_s * 1e3, tm.median_s / bound_s,
                 bad ? "  WRONG" : "");
          fflush(stdout);
          xpar_context_destroy(ctx);
        }
      free(off);
    }
  }
  free(x);
  free(y);
  free(out);
  return fails ? 1 : 0;
}
