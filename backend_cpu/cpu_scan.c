/*
 * CPU scan (inclusive / exclusive x sum / min / max), serial and OpenMP tiers.
 * out == in is allowed: every loop reads in[i] before it writes out[i].
 *
 * Serial tier, the exact formulas cuda-serial matches (init: the carry-in of
 * xpar_scan_init, the identity for xpar_scan):
 *   inclusive  run = init; for i: run = run op x[i]; out[i] = run
 *   exclusive  run = init; for i: out[i] = run; run = run op x[i]
 *
 * OpenMP tier: a cache-blocked reduce-then-scan inside one parallel region.
 * The plain two-pass OpenMP scan reads the whole array twice from DRAM
 * (reduce each thread's chunk, then scan it with its offset): 2 reads +
 * 1 write.  Here the array is processed in blocks of team x
 * XPAR__CPU_SCAN_BLOCK_BYTES.  Within a block each thread reduces its slice
 * (from DRAM), one barrier publishes the slice totals, each thread folds the
 * totals before its own into its offset, and scans its slice again -- now
 * from its own L2, where the first pass left it.  DRAM traffic is about
 * 1 read + 1 write.  The running carry between blocks, which starts at
 * init (no extra pass for the carry-in), is kept by every thread privately; all threads fold the same totals in the same order, so
 * they agree bit for bit, and the partials are double-buffered by block
 * parity, so one barrier per block suffices: a thread can only overwrite the
 * totals of block b (in block b + 2) after passing the barrier of block
 * b + 1, which every thread reaches only once it has finished reading them.
 */
#include "cpu_internal.h"

/* Bytes of input per thread per block: small enough that the slice and its
 * output stay in a 1-2 MiB L2 between the two passes, large enough that the
 * one barrier per block is noise (tuned in bench/NOTES.md). */
#ifndef XPAR__CPU_SCAN_BLOCK_BYTES
#define XPAR__CPU_SCAN_BLOCK_BYTES (256u * 1024u)
#endif

/** Scan [lo, hi) starting from *carry (the fold of everything before lo). */
typedef void (*scan_chunk_fn)(const void *in, void *out, size_t lo, size_t hi,
                              const xpar__scalar *carry, int exclusive);

#define XPAR__CPU_SCAN_KERNELS_(e, ctype, OP)                                              \
  static void scan_chunk_##OP##_##e(const void *in, void *out, size_t lo, size_t hi,        \
                                    const xpar__scalar *carry, int exclusive) {            \
    const ctype *x = (const ctype *)in;                                                    \
    ctype *y = (ctype *)out;                                                               \
    ctype run;                                                                             \
    memcpy(&run, carry->bytes, sizeof run);                                                \
    if (exclusive) {                                                                       \
      for (size_t i = lo; i < hi; ++i) {                                                   \
        ctype v = x[i];                                                                    \
        y[i] = run;                                                                        \
        run = xpar__cpu_##OP##_##e(run, v);                                                \
      }                                                                                    \
    } else {                                                                               \
      for (size_t i = lo; i < hi; ++i) {                                                   \
        run = xpar__cpu_##OP##_##e(run, x[i]);                                             \
        y[i] = run;                                                                        \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  static xpar__scalar scan_identity_##OP##_##e(void) {                                     \
    xpar__scalar s;                                                                        \
    memset(&s, 0, sizeof s);                                                               \
    ctype v = xpar__cpu_id_##OP##_##e();                                                   \
    memcpy(s.bytes, &v, sizeof v);                                                         \
    return s;                                                                              \
  }

#define XPAR__CPU_ALL_SCANS_(e, ctype, name, size) \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, sum)           \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, min)           \
  XPAR__CPU_SCAN_KERNELS_(e, ctype, max)
XPAR_DTYPE_MAP(XPAR__CPU_ALL_SCANS_)
#undef XPAR__CPU_ALL_SCANS_

typedef struct scan_kernels {
  scan_chunk_fn chunk;
  xpar__scalar (*identity)(void);
} scan_kernels;

#define XPAR__CPU_SSET_(e, OP) {scan_chunk_##OP##_##e, scan_identity_##OP##_##e}
#define XPAR__CPU_SROW_(e, ctype, name, size)                                              \
  [XPAR_##e] = {[XPAR_SUM] = XPAR__CPU_SSET_(e, sum), [XPAR_MIN] = XPAR__CPU_SSET_(e, min), \
                [XPAR_MAX] = XPAR__CPU_SSET_(e, max)},
static const scan_kernels scan_table[XPAR_DTYPE_COUNT_][XPAR_REDUCTION_COUNT_] = {
    XPAR_DTYPE_MAP(XPAR__CPU_SROW_)};
#undef XPAR__CPU_SROW_

/* The OpenMP tier: see the comment at the top of the file. */
static void scan_parallel(xpar_dtype t, xpar_reduction op, const xpar__scalar *init,
                          const void *in, void *out, size_t n, int team, int exclusive) {
  xpar__cpu_chunk_reduce_fn reduce;
  xpar__cpu_combine_fn combine;
  xpar__cpu_reduce_kernels(t, op, &reduce, &combine);
  const scan_chunk_fn chunk = scan_table[t][op].chunk;
  size_t per_thread = XPAR__CPU_SCAN_BLOCK_BYTES / xpar__dtype_size(t);
  xpar__cpu_partial part[2][XPAR__CPU_MAX_THREADS];

  XPAR__CPU_PRAGMA(omp parallel num_threads(team))
  {
    int id = xpar__cpu_thread_num(), nt = xpar__cpu_team_threads();
    size_t block = per_thread * (size_t)nt;
    xpar__scalar carry = *init;
    int parity = 0;
    for (size_t b0 = 0; b0 < n; b0 += block, parity ^= 1) {
      size_t b1 = (n - b0 < block) ? n : b0 + block;
      size_t lo, hi;
      xpar__cpu_split(b0, b1, id, nt, &lo, &hi);
      reduce(in, NULL, lo, hi, &part[parity][id].v);
      XPAR__CPU_PRAGMA(omp barrier)
      xpar__scalar offset = carry;
      for (int u = 0; u < nt; ++u) {
        if (u == id) offset = carry;
        combine(&carry, &part[parity][u].v);
      }
      chunk(in, out, lo, hi, &offset, exclusive);
    }
  }
}

xpar_status xpar__cpu_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                           xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                           void *out, size_t n) {
  XPAR__RETURN_IF(!xpar__dtype_valid(t) || (unsigned)op >= (unsigned)XPAR_REDUCTION_COUNT_ ||
                      (unsigned)kind >= (unsigned)XPAR_SCAN_KIND_COUNT_,
                  XPAR_ERR_INTERNAL, "cpu scan: bad dtype %d, op %d or kind %d", (int)t, (int)op,
                  (int)kind);
  int exclusive = (kind == XPAR_EXCLUSIVE);
  const xpar__scalar start = init ? *init : scan_table[t][op].identity();
  /* One thread: the serial formulas over the whole array, from init. */
  int team = ex->serial ? 1 : xpar__cpu_team_size(ex, n);
  if (team <= 1)
    scan_table[t][op].chunk(in, out, 0, n, &start, exclusive);
  else
    scan_parallel(t, op, &start, in, out, n, team, exclusive);
  return XPAR_OK;
}
