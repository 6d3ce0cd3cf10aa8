/*
 * xpar-cpu-sort-bench: the CPU backend's sort (xpar__cpu_sort, called
 * directly) against qsort, std::sort and __gnu_parallel::sort, with the copy
 * bandwidth that bounds an LSD radix sort.  Build tree only.
 *
 *   xpar-cpu-sort-bench [--types int32,float,int64] [--min 4] [--max 28]
 *                       [--threads T] [--reps R] [--serial-max E] [--no-qsort]
 *                       [--no-check]   (one-thread methods up to 2^E, default 24)
 *
 * Keys: uniform random int32 / int64, floats uniform in [-2^31, 2^31).  Every
 * timed call sorts a fresh copy of its input in place; the copy is timed
 * alone and subtracted.  Each figure is the median of R repetitions; a
 * repetition of a small n sorts 2^16 / n different inputs one after the
 * other (one input sorted again and again would let the branch predictor
 * learn it: std::sort of 64 keys ran 2.7 ns/key that way, against ~9).
 * Columns, ns/key (Gkeys/s in the second table):
 *   serial   xpar's serial tier (ex->serial)
 *   omp      xpar's OpenMP tier with T threads
 *   qsort    C qsort
 *   std      std::sort
 *   gnu-par  __gnu_parallel::sort with T threads
 *   copy     memcpy of the keys with T threads (one key read + written)
 *   bound    passes x copy: the traffic of the LSD passes the keys need
 *            (4 for 32-bit keys, 8 for 64-bit; fewer when a digit is constant)
 *   omp/bnd  omp / bound
 *   std/ser, q/ser, gnu/omp: speed-ups (time ratios); serGk/s, ompGk/s: Gkeys/s
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/backend.h"
#include "base/sort_key.h"
#if defined(_OPENMP)
#include <omp.h>
#endif

xpar_status xpar__cpu_sort(const xpar__exec *ex, const xpar__sort_spec *s);
void cpu_sort_bench_std_sort(int dtype, void *p, size_t n);
int cpu_sort_bench_gnu_parallel_sort(int dtype, void *p, size_t n, int threads);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}
static int cmp_f32(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}
static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

enum { M_SERIAL, M_OMP, M_QSORT, M_STD, M_GNU, M_COPY, M_COUNT };
static const char *const method_names[M_COUNT] = {"serial", "omp", "qsort", "std", "gnu-par", "copy"};

typedef struct bench {
  int dtype; /* 0 int32, 1 float, 2 int64 */
  size_t n, ksize;
  int threads;
  const void *in;
  void *work;
  xpar__host_scratch scratch;
} bench;

static void copy_mt(void *dst, const void *src, size_t bytes, int threads) {
#if defined(_OPENMP)
  if (threads > 1 && bytes >= ((size_t)1 << 20)) {
#pragma omp parallel num_threads(threads)
    {
      const int id = omp_get_thread_num(), t = omp_get_num_threads();
      const size_t lines = bytes / 64, q = lines / (size_t)t, r = lines % (size_t)t;
      const size_t up = (size_t)id;
      size_t lo = (up * q + (up < r ? up : r)) * 64, hi = lo + (q + (up < r ? 1 : 0)) * 64;
      if (id == t - 1) hi = bytes;
      memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
    }
    return;
  }
#else
  (void)threads;
#endif
  memcpy(dst, src, bytes);
}

/* One call of method m on segment c of the pool (copy included). */
static int run_method(bench *b, int m, size_t c) {
  const size_t bytes = b->n * b->ksize;
  void *work = (char *)b->work + c * bytes;
  copy_mt(work, (const char *)b->in + c * bytes, bytes, b->threads);
  if (m == M_COPY) return 1;
  if (m == M_SERIAL || m == M_OMP) {
    static const xpar_dtype types[3] = {XPAR_INT32, XPAR_FLOAT, XPAR_INT64};
    xpar__exec ex;
    memset(&ex, 0, sizeof ex);
    ex.serial = m == M_SERIAL;
    ex.num_threads = m == M_SERIAL ? 1 : b->threads;
    ex.host_scratch = &b->scratch;
    xpar__sort_spec s;
    memset(&s, 0, sizeof s);
    s.key_dtype = types[b->dtype];
    s.value_dtype = XPAR_INT32;
    s.keys_in = work;
    s.keys_out = work;
    s.n = b->n;
    return xpar__cpu_sort(&ex, &s) == XPAR_OK;
  }
  if (m == M_QSORT) {
    qsort(work, b->n, b->ksize, b->dtype == 0 ? cmp_i32 : b->dtype == 1 ? cmp_f32 : cmp_i64);
    return 1;
  }
  if (m == M_STD) {
    cpu_sort_bench_std_sort(b->dtype, work, b->n);
    return 1;
  }
  return cpu_sort_bench_gnu_parallel_sort(b->dtype, work, b->n, b->threads);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over reps of the time of one call (copy included), ns, of every
 * method in on[] (t[m] < 0 for the rest and where unavailable).  The
 * repetitions interleave the methods, so that a noisy spell of the machine
 * falls on all of them. */
static void time_methods(bench *b, const int *on, int reps, size_t calls, double *t) {
  double v[M_COUNT][64];
  if (reps > 64) reps = 64;
  int avail[M_COUNT];
  for (int m = 0; m < M_COUNT; ++m) avail[m] = on[m] && run_method(b, m, 0); /* warm-up */
  for (int r = 0; r < reps; ++r)
    for (int m = 0; m < M_COUNT; ++m) {
      if (!avail[m]) continue;
      const double t0 = now_ns();
      for (size_t c = 0; c < calls; ++c) run_method(b, m, c);
      v[m][r] = (now_ns() - t0) / (double)calls;
    }
  for (int m = 0; m < M_COUNT; ++m) {
    t[m] = -1;
    if (!avail[m]) continue;
    qsort(v[m], (size_t)reps, sizeof v[m][0], cmp_double);
    t[m] = v[m][reps / 2];
  }
}

/* The LSD passes the keys need: digit positions (8-bit) not constant. */
static int lsd_passes(const bench *b) {
  int K = (int)b->ksize, passes = 0;
  for (int p = 0; p < K; ++p) {
    const int shift = 8 * p;
    uint64_t first = 0;
    int varies = 0;
    for (size_t i = 0; i < b->n && !varies; ++i) {
      uint64_t r;
      if (b->dtype == 0)
        r = xpar__sort_radix32(((const uint32_t *)b->in)[i], XPAR__SORT_KEY_SIGNED, 0);
      else if (b->dtype == 1)
        r = xpar__sort_radix32(((const uint32_t *)b->in)[i], XPAR__SORT_KEY_FLOAT, 0);
      else
        r = xpar__sort_radix64(((const uint64_t *)b->in)[i], XPAR__SORT_KEY_SIGNED, 0);
      const uint64_t d = (r >> shift) & 255u;
      if (i == 0) first = d;
      else if (d != first) varies = 1;
    }
    passes += varies;
  }
  return passes;
}

int main(int argc, char **argv) {
  int min_e = 4, max_e = 28, reps = 7, qsort_on = 1, check = 1, threads = 0, serial_max = 24;
  int types[3] = {1, 1, 1};
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--min") && a + 1 < argc) min_e = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--max") && a + 1 < argc) max_e = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--serial-max") && a + 1 < argc) serial_max = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--no-qsort")) qsort_on = 0;
    else if (!strcmp(argv[a], "--no-check")) check = 0;
    else if (!strcmp(argv[a], "--types") && a + 1 < argc) {
      const char *t = argv[++a];
      types[0] = strstr(t, "int32") != NULL;
      types[1] = strstr(t, "float") != NULL;
      types[2] = strstr(t, "int64") != NULL;
    } else {
      fprintf(stderr,
              "usage: %s [--types int32,float,int64] [--min E] [--max E] [--threads T] "
              "[--reps R] [--serial-max E] [--no-qsort] [--no-check]\n",
              argv[0]);
      return 2;
    }
  }
  if (min_e < 0 || max_e > 40 || min_e > max_e || reps < 1) {
    fprintf(stderr, "bad range\n");
    return 2;
  }
#if defined(_OPENMP)
  if (threads <= 0) threads = omp_get_max_threads();
#else
  if (threads <= 0) threads = 1;
#endif
  printf("# xpar__cpu_sort: ns/key (Gkeys/s), median of %d; threads %d for omp, gnu-par, copy\n",
         reps, threads);
  static const char *const tnames[3] = {"int32", "float", "int64"};
  int bad = 0;
  for (int dt = 0; dt < 3; ++dt) {
    if (!types[dt]) continue;
    printf("\n%-6s %5s %9s %9s %9s %9s %9s %9s %6s %9s %7s %7s %7s %7s %8s %8s\n", tnames[dt],
           "n", "serial", "omp", "qsort", "std", "gnu-par", "copy", "passes", "bound", "omp/bnd",
           "std/ser", "q/ser", "gnu/omp", "serGk/s", "ompGk/s");
    for (int e = min_e; e <= max_e; ++e) {
      bench b;
      memset(&b, 0, sizeof b);
      b.dtype = dt;
      b.n = (size_t)1 << e;
      b.ksize = dt == 2 ? 8 : 4;
      b.threads = threads;
      /* calls per repetition, each on its own input */
      const size_t calls = b.n >= 65536 ? 1 : 65536 / b.n;
      void *in = malloc(calls * b.n * b.ksize);
      b.work = malloc(calls * b.n * b.ksize);
      if (!in || !b.work) {
        fprintf(stderr, "out of memory at 2^%d\n", e);
        return 1;
      }
      for (size_t i = 0; i < calls * b.n; ++i) {
        const uint64_t r = next_rand();
        if (dt == 0) ((int32_t *)in)[i] = (int32_t)(uint32_t)r;
        else if (dt == 1) ((float *)in)[i] = (float)(int32_t)(uint32_t)r;
        else ((int64_t *)in)[i] = (int64_t)r;
      }
      b.in = in;
      double t[M_COUNT];
      int on[M_COUNT];
      /* one-thread methods up to 2^serial_max (std::sort of 2^28 keys takes ~20 s) */
      for (int m = 0; m < M_COUNT; ++m)
        on[m] = m == M_QSORT  ? qsort_on && e <= 24 && e <= serial_max
                : m == M_SERIAL || m == M_STD ? e <= serial_max
                                              : 1;
      time_methods(&b, on, e >= 26 ? (reps < 3 ? reps : 3) : reps, calls, t);
      if (check && e <= 24 && e <= serial_max) { /* xpar's output against std::sort's */
        void *want = malloc(b.n * b.ksize);
        run_method(&b, M_STD, 0);
        memcpy(want, b.work, b.n * b.ksize);
        for (int m = M_SERIAL; m <= M_OMP; ++m) {
          run_method(&b, m, 0);
          if (memcmp(want, b.work, b.n * b.ksize)) {
            printf("MISMATCH %s %s n=2^%d\n", tnames[dt], method_names[m], e);
            bad = 1;
          }
        }
        free(want);
      }
      const double copy = t[M_COPY];
      const int passes = lsd_passes(&b);
      printf("%-6s 2^%-3d", "", e);
      for (int m = 0; m < M_COUNT; ++m) {
        const double v = m == M_COPY ? copy : t[m] - copy;
        if (t[m] < 0) printf(" %9s", "-");
        else printf(" %9.2f", v / (double)b.n);
      }
      const double bound = copy * passes;
      const double ser = t[M_SERIAL] - copy, omp = t[M_OMP] - copy;
      printf(" %6d %9.2f %7.2f %7.2f %7.2f %7.2f %8.3f %8.3f\n", passes, bound / (double)b.n,
             omp / bound, t[M_SERIAL] < 0 || t[M_STD] < 0 ? 0.0 : (t[M_STD] - copy) / ser,
             t[M_SERIAL] < 0 || t[M_QSORT] < 0 ? 0.0 : (t[M_QSORT] - copy) / ser,
             t[M_GNU] < 0 ? 0.0 : (t[M_GNU] - copy) / omp, t[M_SERIAL] < 0 ? 0.0 : (double)b.n / ser,
             (double)b.n / omp);
      fflush(stdout);
      xpar__host_scratch_free(&b.scratch);
      free(in);
      free(b.work);
    }
  }
  return bad;
}
