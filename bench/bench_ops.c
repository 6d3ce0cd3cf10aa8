/*
 * The op table of xpar-bench: set-up, one call through the public API, the
 * plain OpenMP baselines, and the correctness check.
 *
 * Inputs.  Integers are full-range random bits, so sums, scans, axpy and dot
 * wrap (as they must, identically on every tier).  Floats are small random
 * integers in [-4, 4] (mean 0): every partial sum of any subset in any order
 * is then an integer far below 2^24 and exact in float, so all tiers --
 * serial, reassociating OpenMP, GPU, the plain baselines -- must agree bit
 * for bit.  The check is therefore exact equality for every dtype: a tier
 * that returns a wrong answer is reported, never timed.
 */
#include <stdlib.h>
#include <string.h>

#if defined(BENCH_HAVE_OPENMP)
#include <omp.h>
#endif

#include "bench.h"

const char *bench_location_name(bench_location loc) {
  return loc == BENCH_DEVICE ? "device" : "host";
}

/* ---- parsing ------------------------------------------------------------- */

int bench_parse_dtype(const char *s, xpar_dtype *out) {
  for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t)
    if (strcmp(s, xpar_dtype_name((xpar_dtype)t)) == 0) {
      *out = (xpar_dtype)t;
      return 1;
    }
  return 0;
}

int bench_parse_reduction(const char *s, xpar_reduction *out) {
  static const char *const names[XPAR_REDUCTION_COUNT_] = {"sum", "min", "max"};
  for (int r = 0; r < XPAR_REDUCTION_COUNT_; ++r)
    if (strcmp(s, names[r]) == 0) {
      *out = (xpar_reduction)r;
      return 1;
    }
  return 0;
}

/* ---- random data (splitmix64: seeded, reproducible) ---------------------- */

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#define BENCH_FILL_(e, ctype, name, size)                                  \
  static void fill_random_##e(void *p, size_t n, uint64_t *s) {           \
    ctype *a = (ctype *)p;                                                 \
    for (size_t i = 0; i < n; ++i) {                                       \
      uint64_t r = splitmix(s);                                            \
      if (_Generic((ctype)0, float: 1, double: 1, default: 0))             \
        a[i] = (ctype)((int)(r % 9u) - 4);                                 \
      else                                                                 \
        memcpy(&a[i], &r, sizeof a[i]); /* the low bytes: any bits */      \
    }                                                                      \
  }
XPAR_DTYPE_MAP(BENCH_FILL_)
#undef BENCH_FILL_

static void fill_random_serial(xpar_dtype t, void *p, size_t n, uint64_t *s) {
  switch (t) {
#define BENCH_CASE_(e, ctype, name, size) \
  case XPAR_##e: fill_random_##e(p, n, s); break;
    XPAR_DTYPE_MAP(BENCH_CASE_)
#undef BENCH_CASE_
    default: break;
  }
}

/* splitmix's state after i steps is seed + i * golden, so chunks filled in
 * parallel from their own offsets give exactly the sequential data; at 2^30
 * elements the sequential fill alone took seconds per array. */
#define BENCH_FILL_CHUNK ((size_t)1 << 16)
static void fill_random(xpar_dtype t, void *p, size_t n, uint64_t *s) {
  size_t es = xpar_dtype_size(t);
  long long chunks = (long long)((n + BENCH_FILL_CHUNK - 1) / BENCH_FILL_CHUNK);
  uint64_t base = *s;
#if defined(BENCH_HAVE_OPENMP)
#pragma omp parallel for schedule(static) if (chunks > 4)
#endif
  for (long long ch = 0; ch < chunks; ++ch) {
    size_t lo = (size_t)ch * BENCH_FILL_CHUNK;
    size_t len = n - lo < BENCH_FILL_CHUNK ? n - lo : BENCH_FILL_CHUNK;
    uint64_t st = base + (uint64_t)lo * 0x9e3779b97f4a7c15ull;
    fill_random_serial(t, (unsigned char *)p + lo * es, len, &st);
  }
  *s = base + (uint64_t)n * 0x9e3779b97f4a7c15ull;
}

void bench_fill_random(xpar_dtype t, void *p, size_t n, uint64_t seed) {
  fill_random(t, p, n, &seed);
}

/* ---- plain OpenMP baselines (SUM only; what an application writes) ------- */

typedef uint32_t bench_uint4;
typedef uint64_t bench_uint8;
/* Integers accumulate in the unsigned type of their width (wrapping, like
 * xpar); floats in their own type. */
#define BENCH_ACC(ctype, size) \
  __typeof__(_Generic((ctype)0, float: (float)0, double: (double)0, default: (bench_uint##size)0))

/* The elementwise ops as an application writes them (y = alpha x + y,
 * out = x + y, out = value): one loop each, run by one thread (prefix
 * plain_serial_, PARALLEL empty) or by one `parallel for` (prefix plain_,
 * PARALLEL the pragma). */
#define BENCH_ELEMENTWISE_LOOPS_(prefix, PARALLEL, e, ctype, size)                          \
  static void prefix##axpy_##e(bench_case *c, int threads) {                               \
    (void)threads;                                                                         \
    const ctype *x = (const ctype *)c->x;                                                  \
    ctype *y = (ctype *)c->y, a0;                                                          \
    memcpy(&a0, c->scalar, sizeof a0);                                                     \
    BENCH_ACC(ctype, size) a = (BENCH_ACC(ctype, size))a0;                                 \
    long long n = (long long)c->n;                                                         \
    PARALLEL                                                                               \
    for (long long i = 0; i < n; ++i)                                                      \
      y[i] = (ctype)(a * (BENCH_ACC(ctype, size))x[i] + (BENCH_ACC(ctype, size))y[i]);     \
  }                                                                                        \
  static void prefix##add_##e(bench_case *c, int threads) {                                \
    (void)threads;                                                                         \
    const ctype *x = (const ctype *)c->x, *y = (const ctype *)c->y;                        \
    ctype *out = (ctype *)c->out;                                                          \
    long long n = (long long)c->n;                                                         \
    PARALLEL                                                                               \
    for (long long i = 0; i < n; ++i)                                                      \
      out[i] = (ctype)((BENCH_ACC(ctype, size))x[i] + (BENCH_ACC(ctype, size))y[i]);       \
  }                                                                                        \
  static void prefix##fill_##e(bench_case *c, int threads) {                               \
    (void)threads;                                                                         \
    ctype *out = (ctype *)c->out, v;                                                       \
    memcpy(&v, c->scalar, sizeof v);                                                       \
    long long n = (long long)c->n;                                                         \
    PARALLEL                                                                               \
    for (long long i = 0; i < n; ++i) out[i] = v;                                          \
  }

#if defined(BENCH_HAVE_OPENMP)
static int bench_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

#define BENCH_BASELINES_(e, ctype, name, size)                                              \
  /* #pragma omp parallel for reduction(+:s) */                                            \
  static void plain_reduce_##e(bench_case *c, int threads) {                               \
    const ctype *x = (const ctype *)c->x;                                                  \
    BENCH_ACC(ctype, size) s = 0;                                                          \
    long long n = (long long)c->n;                                                         \
    _Pragma("omp parallel for reduction(+:s) num_threads(bench_threads(threads))")         \
    for (long long i = 0; i < n; ++i) s += (BENCH_ACC(ctype, size))x[i];                   \
    ctype r = (ctype)s;                                                                    \
    memcpy(c->result, &r, sizeof r);                                                       \
  }                                                                                        \
  static void plain_dot_##e(bench_case *c, int threads) {                                  \
    const ctype *x = (const ctype *)c->x, *y = (const ctype *)c->y;                        \
    BENCH_ACC(ctype, size) s = 0;                                                          \
    long long n = (long long)c->n;                                                         \
    _Pragma("omp parallel for reduction(+:s) num_threads(bench_threads(threads))")         \
    for (long long i = 0; i < n; ++i)                                                      \
      s += (BENCH_ACC(ctype, size))x[i] * (BENCH_ACC(ctype, size))y[i];                    \
    ctype r = (ctype)s;                                                                    \
    memcpy(c->result, &r, sizeof r);                                                       \
  }                                                                                        \
  /* The textbook two-pass scan: each thread reduces its static chunk, a      */          \
  /* barrier, then each scans its chunk again from its offset (2 reads, 1 write). */      \
  static void plain_scan_##e(bench_case *c, int threads) {                                 \
    const ctype *x = (const ctype *)c->x;                                                  \
    ctype *out = (ctype *)c->out;                                                          \
    size_t n = c->n;                                                                       \
    int exclusive = (c->kind == XPAR_EXCLUSIVE);                                           \
    BENCH_ACC(ctype, size) part[256];                                                      \
    _Pragma("omp parallel num_threads(bench_threads(threads) < 256 ? bench_threads(threads) : 256)") \
    {                                                                                      \
      int id = omp_get_thread_num(), nt = omp_get_num_threads();                           \
      size_t lo = n * (size_t)id / (size_t)nt, hi = n * (size_t)(id + 1) / (size_t)nt;     \
      BENCH_ACC(ctype, size) s = 0;                                                        \
      for (size_t i = lo; i < hi; ++i) s += (BENCH_ACC(ctype, size))x[i];                  \
      part[id] = s;                                                                        \
      _Pragma("omp barrier")                                                               \
      BENCH_ACC(ctype, size) off = 0;                                                      \
      for (int u = 0; u < id; ++u) off += part[u];                                         \
      if (exclusive)                                                                       \
        for (size_t i = lo; i < hi; ++i) {                                                 \
          BENCH_ACC(ctype, size) v = (BENCH_ACC(ctype, size))x[i];                         \
          out[i] = (ctype)off;                                                             \
          off += v;                                                                        \
        }                                                                                  \
      else                                                                                 \
        for (size_t i = lo; i < hi; ++i) {                                                 \
          off += (BENCH_ACC(ctype, size))x[i];                                             \
          out[i] = (ctype)off;                                                             \
        }                                                                                  \
    }                                                                                      \
  }
XPAR_DTYPE_MAP(BENCH_BASELINES_)
#undef BENCH_BASELINES_

#define BENCH_OMP_FOR _Pragma("omp parallel for num_threads(bench_threads(threads))")
#define BENCH_ELEMENTWISE_OMP_(e, ctype, name, size) \
  BENCH_ELEMENTWISE_LOOPS_(plain_, BENCH_OMP_FOR, e, ctype, size)
XPAR_DTYPE_MAP(BENCH_ELEMENTWISE_OMP_)
#undef BENCH_ELEMENTWISE_OMP_

#define BENCH_DISPATCH_BASELINE_(opname)                                   \
  static void plain_##opname(bench_case *c, int threads) {                 \
    switch (c->dtype) {                                                    \
      BENCH_BASELINE_CASES_(opname)                                        \
      default: break;                                                      \
    }                                                                      \
  }
#define BENCH_BASELINE_CASE_reduce(e, ctype, name, size) \
  case XPAR_##e: plain_reduce_##e(c, threads); break;
#define BENCH_BASELINE_CASE_dot(e, ctype, name, size) \
  case XPAR_##e: plain_dot_##e(c, threads); break;
#define BENCH_BASELINE_CASE_scan(e, ctype, name, size) \
  case XPAR_##e: plain_scan_##e(c, threads); break;
#define BENCH_BASELINE_CASE_axpy(e, ctype, name, size) \
  case XPAR_##e: plain_axpy_##e(c, threads); break;
#define BENCH_BASELINE_CASE_add(e, ctype, name, size) \
  case XPAR_##e: plain_add_##e(c, threads); break;
#define BENCH_BASELINE_CASE_fill(e, ctype, name, size) \
  case XPAR_##e: plain_fill_##e(c, threads); break;
#define BENCH_BASELINE_CASES_(opname) XPAR_DTYPE_MAP(BENCH_BASELINE_CASE_##opname)
BENCH_DISPATCH_BASELINE_(reduce)
BENCH_DISPATCH_BASELINE_(dot)
BENCH_DISPATCH_BASELINE_(scan)
BENCH_DISPATCH_BASELINE_(axpy)
BENCH_DISPATCH_BASELINE_(add)
BENCH_DISPATCH_BASELINE_(fill)
#define BENCH_PLAIN(opname) plain_##opname
#else
#define BENCH_PLAIN(opname) NULL
#endif

/* ---- plain serial loops (SUM only): what an application writes without
 * OpenMP.  -O3 vectorises the integer reduce; the float reduce and every
 * scan stay element-order dependency chains, as written. ------------------- */

#define BENCH_SERIAL_LOOPS_(e, ctype, name, size)                                          \
  static void plain_serial_reduce_##e(bench_case *c, int threads) {                        \
    (void)threads;                                                                         \
    const ctype *x = (const ctype *)c->x;                                                  \
    BENCH_ACC(ctype, size) s = 0;                                                          \
    for (size_t i = 0; i < c->n; ++i) s += (BENCH_ACC(ctype, size))x[i];                   \
    ctype r = (ctype)s;                                                                    \
    memcpy(c->result, &r, sizeof r);                                                       \
  }                                                                                        \
  static void plain_serial_scan_##e(bench_case *c, int threads) {                          \
    (void)threads;                                                                         \
    const ctype *x = (const ctype *)c->x;                                                  \
    ctype *out = (ctype *)c->out;                                                          \
    BENCH_ACC(ctype, size) s = 0;                                                          \
    if (c->kind == XPAR_EXCLUSIVE)                                                         \
      for (size_t i = 0; i < c->n; ++i) {                                                  \
        BENCH_ACC(ctype, size) v = (BENCH_ACC(ctype, size))x[i];                           \
        out[i] = (ctype)s;                                                                 \
        s += v;                                                                            \
      }                                                                                    \
    else                                                                                   \
      for (size_t i = 0; i < c->n; ++i) {                                                  \
        s += (BENCH_ACC(ctype, size))x[i];                                                 \
        out[i] = (ctype)s;                                                                 \
      }                                                                                    \
  }
XPAR_DTYPE_MAP(BENCH_SERIAL_LOOPS_)
#undef BENCH_SERIAL_LOOPS_

/* dot, one thread (-O3 vectorises all but the float dot, whose sum stays an
 * element-order chain as written), and the elementwise ops. */
#define BENCH_SERIAL_DOT_(e, ctype, name, size)                                         \
  static void plain_serial_dot_##e(bench_case *c, int threads) {                           \
    (void)threads;                                                                         \
    const ctype *x = (const ctype *)c->x, *y = (const ctype *)c->y;                        \
    BENCH_ACC(ctype, size) s = 0;                                                          \
    for (size_t i = 0; i < c->n; ++i)                                                      \
      s += (BENCH_ACC(ctype, size))x[i] * (BENCH_ACC(ctype, size))y[i];                    \
    ctype r = (ctype)s;                                                                    \
    memcpy(c->result, &r, sizeof r);                                                       \
  }
XPAR_DTYPE_MAP(BENCH_SERIAL_DOT_)
#undef BENCH_SERIAL_DOT_
#define BENCH_ELEMENTWISE_SERIAL_(e, ctype, name, size) \
  BENCH_ELEMENTWISE_LOOPS_(plain_serial_, , e, ctype, size)
XPAR_DTYPE_MAP(BENCH_ELEMENTWISE_SERIAL_)
#undef BENCH_ELEMENTWISE_SERIAL_

#define BENCH_SERIAL_CASE_reduce(e, ctype, name, size) \
  case XPAR_##e: plain_serial_reduce_##e(c, threads); break;
#define BENCH_SERIAL_CASE_scan(e, ctype, name, size) \
  case XPAR_##e: plain_serial_scan_##e(c, threads); break;
#define BENCH_DISPATCH_SERIAL_(opname)                                     \
  static void plain_serial_##opname(bench_case *c, int threads) {          \
    switch (c->dtype) {                                                    \
      XPAR_DTYPE_MAP(BENCH_SERIAL_CASE_##opname)                           \
      default: break;                                                      \
    }                                                                      \
  }
#define BENCH_SERIAL_CASE_dot(e, ctype, name, size) \
  case XPAR_##e: plain_serial_dot_##e(c, threads); break;
#define BENCH_SERIAL_CASE_axpy(e, ctype, name, size) \
  case XPAR_##e: plain_serial_axpy_##e(c, threads); break;
#define BENCH_SERIAL_CASE_add(e, ctype, name, size) \
  case XPAR_##e: plain_serial_add_##e(c, threads); break;
#define BENCH_SERIAL_CASE_fill(e, ctype, name, size) \
  case XPAR_##e: plain_serial_fill_##e(c, threads); break;
BENCH_DISPATCH_SERIAL_(reduce)
BENCH_DISPATCH_SERIAL_(scan)
BENCH_DISPATCH_SERIAL_(dot)
BENCH_DISPATCH_SERIAL_(axpy)
BENCH_DISPATCH_SERIAL_(add)
BENCH_DISPATCH_SERIAL_(fill)
#undef BENCH_DISPATCH_SERIAL_

/* Sort, as an application writes it without xpar: the C library's qsort of
 * a copy (the bench's floats are small integers: no NaN or -0.0, whose
 * order qsort's comparison would have to spell out). */
#define BENCH_QSORT_(e, ctype, name, size)                                   \
  static int plain_cmp_##e(const void *a, const void *b) {                   \
    const ctype x = *(const ctype *)a, y = *(const ctype *)b;                \
    return (x > y) - (x < y);                                                \
  }
XPAR_DTYPE_MAP(BENCH_QSORT_)
#undef BENCH_QSORT_
static void plain_serial_sort(bench_case *c, int threads) {
  (void)threads;
  int (*cmp)(const void *, const void *) = NULL;
  switch (c->dtype) {
#define BENCH_QSORT_CASE_(e, ctype, name, size) \
  case XPAR_##e: cmp = plain_cmp_##e; break;
    XPAR_DTYPE_MAP(BENCH_QSORT_CASE_)
#undef BENCH_QSORT_CASE_
    default: return;
  }
  memcpy(c->out, c->x, c->n * c->esize);
  qsort(c->out, c->n, c->esize, cmp);
}

/* Select (keep x > 2: about half of the bench's data), as an application
 * writes it: one loop.  The rest of out holds the poison every checked run
 * starts from (bench_case_reset), as xpar leaves it. */
#define BENCH_SELECT_(e, ctype, name, size)                                  \
  static size_t plain_select_##e(const ctype *x, ctype *out, size_t n) {     \
    size_t k = 0;                                                            \
    for (size_t i = 0; i < n; ++i)                                           \
      if (x[i] > (ctype)2) out[k++] = x[i];                                  \
    return k;                                                                \
  }
XPAR_DTYPE_MAP(BENCH_SELECT_)
#undef BENCH_SELECT_
static void plain_serial_select(bench_case *c, int threads) {
  (void)threads;
  memset(c->out, 0xA5, c->n * c->esize);
  size_t k = 0;
  switch (c->dtype) {
#define BENCH_SELECT_CASE_(e, ctype, name, size) \
  case XPAR_##e: k = plain_select_##e((const ctype *)c->x, (ctype *)c->out, c->n); break;
    XPAR_DTYPE_MAP(BENCH_SELECT_CASE_)
#undef BENCH_SELECT_CASE_
    default: break;
  }
  memcpy(c->result, &k, sizeof k);
}

/* Runs: reduce by key (SUM) with the keys as their own values, as an
 * application writes it: one loop.  Keys x, values x (inputs may alias), run
 * keys to out, run sums to y (the bench case's third array; its input is not
 * read).  The bench's data (full-range integers, float integers in [-4, 4]:
 * no NaN, no -0.0) make plain == the header's equality, runs of mean length
 * about 1 (the most output) and float sums exact in any order.  out past the
 * count holds the poison every checked run starts from. */
#define BENCH_RUNS_(e, ctype, name, size)                                    \
  static size_t plain_runs_##e(const ctype *x, ctype *out, ctype *sums, size_t n) { \
    size_t k = 0;                                                            \
    for (size_t i = 0; i < n; ++i) {                                         \
      if (i == 0 || x[i] != x[i - 1]) {                                      \
        out[k] = x[i];                                                       \
        sums[k++] = x[i];                                                    \
      } else {                                                               \
        sums[k - 1] = (ctype)(sums[k - 1] + x[i]);                           \
      }                                                                      \
    }                                                                        \
    return k;                                                                \
  }
XPAR_DTYPE_MAP(BENCH_RUNS_)
#undef BENCH_RUNS_
static void plain_serial_runs(bench_case *c, int threads) {
  (void)threads;
  memset(c->out, 0xA5, c->n * c->esize);
  size_t k = 0;
  switch (c->dtype) {
#define BENCH_RUNS_CASE_(e, ctype, name, size)                                          \
  case XPAR_##e:                                                                        \
    k = plain_runs_##e((const ctype *)c->x, (ctype *)c->out, (ctype *)c->y, c->n);      \
    break;
    XPAR_DTYPE_MAP(BENCH_RUNS_CASE_)
#undef BENCH_RUNS_CASE_
    default: break;
  }
  memcpy(c->result, &k, sizeof k);
}

/* argmin (its value in result) and the segmented scan (sum over segments of
 * bench_seg_size(n) elements), as an application writes them: plain loops. */
#define BENCH_ARG_(e, ctype, name, size)                                     \
  static ctype plain_argmin_##e(const ctype *x, size_t n) {                  \
    ctype b = x[0];                                                          \
    for (size_t i = 1; i < n; ++i)                                           \
      if (x[i] < b || (x[i] != x[i] && b == b)) b = x[i];                    \
    return b;                                                                \
  }                                                                          \
  static void plain_segscan_##e(const ctype *x, ctype *out, size_t n, size_t seg) { \
    for (size_t s = 0; s + seg <= n; s += seg) {                             \
      ctype acc = 0;                                                         \
      for (size_t i = s; i < s + seg; ++i) out[i] = acc = xpar__bench_add_##e(acc, x[i]); \
    }                                                                        \
  }
#define BENCH_ADD_(e, ctype, name, size)                                                   \
  static inline ctype xpar__bench_add_##e(ctype a, ctype b) {                              \
    return _Generic((ctype)0, float: a + b, double: a + b,                                 \
                    default: (ctype)((uint64_t)a + (uint64_t)b));                          \
  }
XPAR_DTYPE_MAP(BENCH_ADD_)
XPAR_DTYPE_MAP(BENCH_ARG_)
#undef BENCH_ARG_
#undef BENCH_ADD_
/* The bench's segments: 1,024 elements, or one segment where n is not a multiple. */
static size_t bench_seg_size(size_t n) { return n >= 1024 && n % 1024 == 0 ? 1024 : n; }
static void plain_serial_argreduce(bench_case *c, int threads) {
  (void)threads;
  if (!c->n) return;
  switch (c->dtype) {
#define BENCH_ARG_CASE_(e, ctype, name, size)                              \
  case XPAR_##e: {                                                         \
    const ctype v = plain_argmin_##e((const ctype *)c->x, c->n);           \
    memcpy(c->result, &v, sizeof v);                                       \
    break;                                                                 \
  }
    XPAR_DTYPE_MAP(BENCH_ARG_CASE_)
#undef BENCH_ARG_CASE_
    default: break;
  }
}
static void plain_serial_segmented(bench_case *c, int threads) {
  (void)threads;
  if (!c->n) return;
  switch (c->dtype) {
#define BENCH_SEG_CASE_(e, ctype, name, size) \
  case XPAR_##e: plain_segscan_##e((const ctype *)c->x, (ctype *)c->out, c->n, bench_seg_size(c->n)); break;
    XPAR_DTYPE_MAP(BENCH_SEG_CASE_)
#undef BENCH_SEG_CASE_
    default: break;
  }
}
/* Histogram: 256 equal-width bins (fewer where out, n elements, holds fewer
 * counts; one, in the result, where it holds none) over the dtype's whole range
 * for integers and [-4, 5) for floats (the bench's floats are the integers
 * -4..4): every element is counted.  The plain loop computes xpar.h's bin
 * (integers: exact in 128 bits; floats: the double formula). */
static size_t hist_bins_of(const bench_case *c) {
  const size_t fit = c->n * c->esize / 8;
  return fit < 1 ? 1 : fit < 256 ? fit : 256;
}
static uint64_t *hist_counts_of(bench_case *c) {
  return c->n * c->esize < 8 ? (uint64_t *)(void *)c->result : (uint64_t *)c->out;
}
static void hist_bounds_of(xpar_dtype t, unsigned char *lo, unsigned char *hi) {
  switch (t) {
    case XPAR_INT32: {
      const int32_t l = INT32_MIN, h = INT32_MAX;
      memcpy(lo, &l, 4), memcpy(hi, &h, 4);
      break;
    }
    case XPAR_INT64: {
      const int64_t l = INT64_MIN, h = INT64_MAX;
      memcpy(lo, &l, 8), memcpy(hi, &h, 8);
      break;
    }
    case XPAR_UINT32: {
      const uint32_t l = 0, h = UINT32_MAX;
      memcpy(lo, &l, 4), memcpy(hi, &h, 4);
      break;
    }
    case XPAR_UINT64: {
      const uint64_t l = 0, h = UINT64_MAX;
      memcpy(lo, &l, 8), memcpy(hi, &h, 8);
      break;
    }
    case XPAR_FLOAT: {
      const float l = -4.0f, h = 5.0f;
      memcpy(lo, &l, 4), memcpy(hi, &h, 4);
      break;
    }
    default: {
      const double l = -4.0, h = 5.0;
      memcpy(lo, &l, 8), memcpy(hi, &h, 8);
      break;
    }
  }
}
#define BENCH_HIST_(e, ctype, name, size)                                              \
  static void plain_hist_##e(const ctype *x, size_t n, ctype lo, ctype hi, size_t nb,  \
                             uint64_t *counts) {                                      \
    memset(counts, 0, nb * sizeof *counts);                                           \
    for (size_t i = 0; i < n; ++i) {                                                  \
      const ctype v = x[i];                                                           \
      if (!(v >= lo && v < hi)) continue;                                             \
      size_t b;                                                                       \
      if (_Generic((ctype)0, float: 1, double: 1, default: 0)) {                      \
        const double t = (((double)v - (double)lo) / ((double)hi - (double)lo)) * (double)nb; \
        b = (size_t)t;                                                                \
      } else {                                                                        \
        const unsigned __int128 d = (unsigned __int128)(uint64_t)((uint64_t)v - (uint64_t)lo); \
        const unsigned __int128 r = (unsigned __int128)(uint64_t)((uint64_t)hi - (uint64_t)lo); \
        b = (size_t)(d * nb / r);                                                     \
      }                                                                               \
      counts[b < nb ? b : nb - 1]++;                                                  \
    }                                                                                 \
  }
XPAR_DTYPE_MAP(BENCH_HIST_)
#undef BENCH_HIST_
static void plain_serial_histogram(bench_case *c, int threads) {
  (void)threads;
  if (c->out) memset(c->out, 0xA5, c->n * c->esize);
  unsigned char lo[8], hi[8];
  hist_bounds_of(c->dtype, lo, hi);
  const size_t nb = hist_bins_of(c);
  uint64_t *counts = hist_counts_of(c);
  switch (c->dtype) {
#define BENCH_HIST_CASE_(e, ctype, name, size)                                          \
  case XPAR_##e: {                                                                     \
    ctype l, h;                                                                        \
    memcpy(&l, lo, sizeof l);                                                          \
    memcpy(&h, hi, sizeof h);                                                          \
    plain_hist_##e((const ctype *)c->x, c->n, l, h, nb, counts);                       \
    break;                                                                             \
  }
    XPAR_DTYPE_MAP(BENCH_HIST_CASE_)
#undef BENCH_HIST_CASE_
    default: break;
  }
}

/* ---- one call through the public API ------------------------------------- */

static xpar_status run_reduce(xpar_context *ctx, bench_case *c) {
  return xpar_reduce(ctx, c->dtype, c->reduction, c->x, c->n, c->result);
}
static xpar_status run_scan(xpar_context *ctx, bench_case *c) {
  if (c->with_init)
    return xpar_scan_init(ctx, c->dtype, c->reduction, c->kind, c->scalar, c->x, c->out, c->n);
  return xpar_scan(ctx, c->dtype, c->reduction, c->kind, c->x, c->out, c->n);
}
static xpar_status run_axpy(xpar_context *ctx, bench_case *c) {
  return xpar_axpy(ctx, c->dtype, c->scalar, c->x, c->y, c->n);
}
static xpar_status run_add(xpar_context *ctx, bench_case *c) {
  return xpar_add(ctx, c->dtype, c->x, c->y, c->out, c->n);
}
static xpar_status run_fill(xpar_context *ctx, bench_case *c) {
  return xpar_fill(ctx, c->dtype, c->scalar, c->out, c->n);
}
static xpar_status run_dot(xpar_context *ctx, bench_case *c) {
  return xpar_dot(ctx, c->dtype, c->x, c->y, c->n, c->result);
}
static xpar_status run_sort(xpar_context *ctx, bench_case *c) {
  return xpar_sort(ctx, c->dtype, XPAR_ASCENDING, c->x, c->out, c->n);
}
static xpar_status run_select(xpar_context *ctx, bench_case *c) {
  size_t count;
  xpar_status st = xpar_select(ctx, c->dtype, XPAR_GT, c->scalar, NULL, c->x, c->out, c->n, &count);
  memcpy(c->result, &count, sizeof count);
  return st;
}
static xpar_status run_runs(xpar_context *ctx, bench_case *c) {
  size_t count;
  xpar_status st = xpar_reduce_by_key(ctx, c->dtype, c->dtype, XPAR_SUM, c->x, c->x, c->n,
                                      c->out, c->y, &count);
  memcpy(c->result, &count, sizeof count);
  return st;
}

static xpar_status run_argreduce(xpar_context *ctx, bench_case *c) {
  int64_t index;
  if (!c->n) return XPAR_OK; /* argmin of nothing is refused: nothing to time */
  return xpar_argmin(ctx, c->dtype, c->x, c->n, c->result, &index);
}
static xpar_status run_segmented(xpar_context *ctx, bench_case *c) {
  const size_t seg = bench_seg_size(c->n);
  return xpar_segmented_scan_fixed(ctx, c->dtype, XPAR_SUM, XPAR_INCLUSIVE, c->x, c->out, seg,
                                   seg ? c->n / seg : 0);
}
static xpar_status run_histogram(xpar_context *ctx, bench_case *c) {
  unsigned char lo[8], hi[8];
  hist_bounds_of(c->dtype, lo, hi);
  return xpar_histogram_even(ctx, c->dtype, c->x, c->n, lo, hi, hist_bins_of(c),
                             hist_counts_of(c));
}

/* Traffic per element in element sizes: what the floor time is made of. */
static const bench_op ops[] = {
    {"reduce", XPAR_OP_REDUCE, 0, 1.0, run_reduce, BENCH_PLAIN(reduce), "plain-reduce",
     plain_serial_reduce},
    {"scan", XPAR_OP_SCAN, 1, 2.0, run_scan, BENCH_PLAIN(scan), "plain-2pass", plain_serial_scan},
    {"axpy", XPAR_OP_AXPY, 1, 3.0, run_axpy, BENCH_PLAIN(axpy), "plain-loop", plain_serial_axpy},
    {"add", XPAR_OP_ADD, 1, 3.0, run_add, BENCH_PLAIN(add), "plain-loop", plain_serial_add},
    {"fill", XPAR_OP_FILL, 1, 1.0, run_fill, BENCH_PLAIN(fill), "plain-loop", plain_serial_fill},
    {"dot", XPAR_OP_DOT, 0, 2.0, run_dot, BENCH_PLAIN(dot), "plain-reduce", plain_serial_dot},
    /* sort: the one-pass floor (read the keys, write them once); a radix
     * sort moves them once per digit pass on top of it */
    {"sort", XPAR_OP_SORT, 1, 2.0, run_sort, NULL, "qsort", plain_serial_sort},
    /* select x > 2: read n, write the half kept */
    {"select", XPAR_OP_SELECT, 1, 1.5, run_select, NULL, "plain-loop", plain_serial_select},
    /* runs: reduce by key of x by itself: read n, write a key and a sum per
     * run (about n runs in the bench's data); the run keys are checked */
    {"runs", XPAR_OP_RUNS, 1, 3.0, run_runs, NULL, "plain-loop", plain_serial_runs},
    /* argmin: read n (the value compared; the index is the first of it) */
    {"argreduce", XPAR_OP_ARGREDUCE, 0, 1.0, run_argreduce, NULL, "plain-loop",
     plain_serial_argreduce},
    /* a segmented sum scan over segments of 1,024: read n, write n */
    {"segmented", XPAR_OP_SEGMENTED, 1, 2.0, run_segmented, NULL, "plain-loop",
     plain_serial_segmented},
    /* histogram: read n, write 256 counts (noise) */
    {"histogram", XPAR_OP_HISTOGRAM, 1, 1.0, run_histogram, NULL, "plain-loop",
     plain_serial_histogram},
};

_Static_assert(sizeof ops / sizeof ops[0] == BENCH_OP_COUNT, "BENCH_OP_COUNT: the ops above");

const bench_op *bench_op_at(int i) {
  return (i >= 0 && (size_t)i < sizeof ops / sizeof ops[0]) ? &ops[i] : NULL;
}

const bench_op *bench_find_op(const char *name) {
  for (int i = 0; bench_op_at(i); ++i)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  return NULL;
}

int bench_baseline_applies(const bench_op *op, const bench_case *c) {
  return op->baseline != NULL && c->reduction == XPAR_SUM && !c->with_init;
}

/* ---- case set-up and checking -------------------------------------------- */

static void set_scalar(bench_case *c, const bench_op *op);

/* Which arrays an op reads and writes (bench.h). */
int bench_op_reads_x(xpar_op op) { return op != XPAR_OP_FILL; }
int bench_op_reads_y(xpar_op op) {
  return op == XPAR_OP_AXPY || op == XPAR_OP_ADD || op == XPAR_OP_DOT ||
         op == XPAR_OP_RUNS; /* runs: y is written (the run sums), never read */
}
int bench_op_writes_out(xpar_op op) {
  return op == XPAR_OP_SCAN || op == XPAR_OP_ADD || op == XPAR_OP_FILL || op == XPAR_OP_SORT ||
         op == XPAR_OP_SELECT || op == XPAR_OP_RUNS || op == XPAR_OP_SEGMENTED ||
         op == XPAR_OP_HISTOGRAM;
}
void *bench_case_output(const bench_case *c) {
  return c->op == XPAR_OP_AXPY ? c->y : bench_op_writes_out(c->op) ? c->out : NULL;
}

int bench_case_init(bench_case *c, const bench_op *op, xpar_dtype t, size_t n, uint64_t seed) {
  xpar_reduction red = c->reduction; /* chosen by the caller before init */
  xpar_scan_kind kind = c->kind;
  int with_init = c->with_init;
  memset(c, 0, sizeof *c);
  c->op = op->op;
  c->dtype = t;
  c->reduction = red;
  c->kind = kind;
  c->with_init = with_init;
  c->n = n;
  c->esize = xpar_dtype_size(t);
  size_t bytes = (n ? n : 1) * c->esize;
  int need_y = bench_op_reads_y(op->op);
  int need_out = bench_op_writes_out(op->op);
  c->x = malloc(bytes);
  c->y = need_y ? malloc(bytes) : NULL;
  c->y0 = (op->op == XPAR_OP_AXPY) ? malloc(bytes) : NULL;
  c->out = need_out ? malloc(bytes) : NULL;
  c->ref_array = op->has_array_output ? malloc(bytes) : NULL;
  if (!c->x || (need_y && !c->y) || (op->op == XPAR_OP_AXPY && !c->y0) || (need_out && !c->out) ||
      (op->has_array_output && !c->ref_array)) {
    bench_case_free(c);
    return 0;
  }
  uint64_t s = seed;
  fill_random(t, c->x, n, &s);
  if (c->y) fill_random(t, c->y, n, &s);
  if (c->y0) memcpy(c->y0, c->y, n * c->esize);
  if (c->out) memset(c->out, 0, n * c->esize); /* touch the pages outside the timing */
  set_scalar(c, op);
  return 1;
}

void bench_case_view(bench_case *c, const bench_op *op, xpar_dtype t, size_t n, void *x, void *y,
                     void *out) {
  memset(c, 0, sizeof *c);
  c->op = op->op;
  c->dtype = t;
  c->reduction = XPAR_SUM;
  c->kind = XPAR_INCLUSIVE;
  c->n = n;
  c->esize = xpar_dtype_size(t);
  c->x = x;
  if (bench_op_reads_y(op->op)) c->y = y;
  if (bench_op_writes_out(op->op)) c->out = out;
  set_scalar(c, op);
}

static void set_scalar(bench_case *c, const bench_op *op) {
  xpar_dtype t = c->dtype;
  /* alpha and a scan's init = 2 (exact for floats), value = 7 */
  switch (t) {
#define BENCH_SCALAR_(e, ctype, name, size)                            \
  case XPAR_##e: {                                                     \
    ctype v = (op->op == XPAR_OP_FILL) ? (ctype)7 : (ctype)2;          \
    memcpy(c->scalar, &v, sizeof v);                                   \
    break;                                                             \
  }
    XPAR_DTYPE_MAP(BENCH_SCALAR_)
#undef BENCH_SCALAR_
    default: break;
  }
}

void bench_case_free(bench_case *c) {
  free(c->x);
  free(c->y);
  free(c->y0);
  free(c->out);
  free(c->ref_array);
  c->x = c->y = c->y0 = c->out = c->ref_array = NULL;
}

void bench_case_reset(bench_case *c, const bench_op *op) {
  if (op->op == XPAR_OP_AXPY) memcpy(c->y, c->y0, c->n * c->esize);
  memset(c->result, 0xA5, sizeof c->result); /* poison: a call must write it */
  if (c->out) memset(c->out, 0xA5, c->n * c->esize);
}

void bench_case_save_reference(bench_case *c) {
  void *o = bench_case_output(c);
  if (o)
    memcpy(c->ref_array, o, c->n * c->esize);
  else
    memcpy(c->ref_result, c->result, sizeof c->result);
}

int bench_case_check(const bench_case *c, char *why, size_t why_size) {
  void *o = bench_case_output(c);
  if (!o) {
    if (memcmp(c->result, c->ref_result, c->esize) == 0) return 1;
    snprintf(why, why_size, "result differs from the serial tier's");
    return 0;
  }
  const unsigned char *a = (const unsigned char *)o, *b = (const unsigned char *)c->ref_array;
  /* one memcmp first: at 2^30 elements the element loop takes seconds */
  if (memcmp(a, b, c->n * c->esize) == 0) return 1;
  for (size_t i = 0; i < c->n; ++i)
    if (memcmp(a + i * c->esize, b + i * c->esize, c->esize) != 0) {
      snprintf(why, why_size, "element %zu differs from the serial tier's", i);
      return 0;
    }
  return 1;
}

bench_case bench_case_prefix(const bench_case *c, size_t n) {
  bench_case v = *c;
  v.n = n;
  return v;
}
