/*
 * xt — the shared helpers of xpar's cmocka tests.
 *
 *  - seeds: one seed per test program (XPAR_TEST_SEED, else the time), printed
 *    once at start; every case derives its own generator from the seed and
 *    its label, so a failing case reproduces with the same seed whatever
 *    subset of cases is run;
 *  - guarded buffers: arrays at an element offset inside a larger, poisoned
 *    allocation, with checks that nothing outside [p, p + n) was touched;
 *  - per-dtype random data (full-range integers so sums wrap; floats of mixed
 *    signs and magnitudes, or small integers whose every partial sum is exact);
 *  - references in long double (which holds every int64/uint64 exactly), with
 *    integer wrap-around computed in unsigned arithmetic and a float tolerance
 *    derived from n and the magnitudes involved;
 *  - the tiers under test (cpu-serial, cpu-openmp, auto, cuda, cuda-serial):
 *    a context configured for each, and the check that the forced tier ran.
 *
 * Include <cmocka.h> (with its prerequisites) before this header.
 */
#ifndef XPAR_TESTS_XT_H
#define XPAR_TESTS_XT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "xpar/xpar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- seeds and random numbers ------------------------------------------ */

/** Read the seed (XPAR_TEST_SEED or time), print it, clear XPAR_* variables
 *  that would change what a test means (XPAR_VERBOSE and XPAR_TEST_* stay).
 *  Also applies argv[1], if given, as a cmocka test filter ("*\/cpu-serial"). */
void xt_init(const char *program, int argc, char **argv);
/** Unset every XPAR_* variable except XPAR_TEST_* (and XPAR_VERBOSE when
 *  keep_verbose), so the environment cannot change what a test means. */
void xt_unset_xpar_env(int keep_verbose);
uint64_t xt_seed(void);

typedef struct xt_rng {
  uint64_t s[4];
} xt_rng;

/** A generator for one case: a function of the program seed and the label. */
void xt_rng_for(xt_rng *r, const char *label);
uint64_t xt_next(xt_rng *r);
/** Uniform in [0, bound). */
uint64_t xt_below(xt_rng *r, uint64_t bound);

/* ---- dtypes --------------------------------------------------------------- */

/* Every dtype, from the header's one list (XPAR_DTYPE_MAP). */
#define XT_NDTYPES ((int)XPAR_DTYPE_COUNT_)
extern const xpar_dtype xt_dtypes[XT_NDTYPES];
int xt_is_float(xpar_dtype t);
int xt_is_signed(xpar_dtype t);
size_t xt_size(xpar_dtype t);
const char *xt_dname(xpar_dtype t);
/** int32 -> int64, uint32 -> uint64, float -> double, others themselves. */
xpar_dtype xt_wide(xpar_dtype t);

/** Element i of an array of dtype t, exactly, as long double. */
long double xt_get(xpar_dtype t, const void *p, size_t i);
/** Store v (exactly representable in t, or rounded for floats) at p[i]. */
void xt_put(xpar_dtype t, void *p, size_t i, long double v);
/** The bits of element i, zero-extended. */
uint64_t xt_bits(xpar_dtype t, const void *p, size_t i);
/** The value of an integer of type t whose low bits are `bits`. */
long double xt_int_from_bits(xpar_dtype t, uint64_t bits);
/** Largest / smallest value (+-infinity for floats): identities of MIN / MAX. */
long double xt_max_value(xpar_dtype t);
long double xt_min_value(xpar_dtype t);
/** Machine epsilon of a float dtype (0 for integers). */
long double xt_eps(xpar_dtype t);

/* ---- data ------------------------------------------------------------------ */

typedef enum xt_data {
  XT_DATA_RANDOM = 0, /* ints: full range; floats: +-[1,2) * 2^[-10,10]     */
  XT_DATA_SMALLINT = 1 /* floats only: integers in [-k, k]; all partial sums exact */
} xt_data;

/** Fill n elements with random values of dtype t.  For XT_DATA_SMALLINT,
 *  `k` bounds the magnitude (ignored for XT_DATA_RANDOM). */
void xt_fill_random(xt_rng *r, xpar_dtype t, void *p, size_t n, xt_data kind, int k);
/** One random scalar (8 bytes of storage). */
void xt_random_scalar(xt_rng *r, xpar_dtype t, void *out, xt_data kind, int k);

/* ---- guarded buffers -------------------------------------------------------- */

#define XT_GUARD_BYTES 256

/**
 * An array of n elements of dtype t placed `off` elements past a 64-byte
 * aligned point, with XT_GUARD_BYTES of poison before and after.  The whole
 * allocation starts poisoned (see xt_poison_byte).
 */
typedef struct xt_buf {
  unsigned char *base; /* the allocation                                 */
  size_t total;        /* its size in bytes                              */
  void *p;             /* the array                                      */
  size_t n, off;
  xpar_dtype t;
} xt_buf;

void xt_buf_alloc(xt_buf *b, xpar_dtype t, size_t n, size_t off);
void xt_buf_free(xt_buf *b);
/** A malloc'd copy of the whole allocation (array and guards), to check later that
 *  a call left an input untouched (xt_check_bytes over b->total bytes); free() it. */
unsigned char *xt_buf_copy(const xt_buf *b);
/** The poison byte pattern of dtype t: floats get a quiet NaN pattern, so an
 *  unwritten float element never compares equal to anything. */
void xt_poison(xpar_dtype t, void *p, size_t n);
/** Poison the whole allocation. */
void xt_buf_poison(xt_buf *b);
/** 1 if every byte outside [p, p + n) still holds the poison. */
int xt_buf_guards_intact(const xt_buf *b, size_t *bad_byte);
/** 1 if the array still holds exactly the poison (nothing written). */
int xt_is_poison(xpar_dtype t, const void *p, size_t n);

/* ---- references --------------------------------------------------------------- */

/** The expected value of one output element, and the tolerance allowed. */
typedef struct xt_expect {
  long double v;
  long double tol; /* 0: exact; floats: |got - v| <= tol */
} xt_expect;

/* `exact` (for floats): the inputs are small integers, every partial sum is
 * representable, so any summation order gives the exact result: tol = 0. */
xt_expect xt_ref_reduce(xpar_dtype t, xpar_reduction op, const void *in, size_t n, int exact);
xt_expect xt_ref_sum_wide(xpar_dtype t, const void *in, size_t n, int exact);
/* out[i] for i < n, of a scan starting from *init (one element of t), or from
 * the identity when init is NULL. */
void xt_ref_scan(xpar_dtype t, xpar_reduction op, xpar_scan_kind kind, const void *init,
                 const void *in, size_t n, int exact, xt_expect *out);
xt_expect xt_ref_dot(xpar_dtype t, const void *x, const void *y, size_t n, int exact);
void xt_ref_axpy(xpar_dtype t, const void *alpha, const void *x, const void *y, size_t n,
                 int exact, xt_expect *out);
void xt_ref_add(xpar_dtype t, const void *x, const void *y, size_t n, int exact,
                xt_expect *out);

/** Serial, element-order accumulation in the type itself (floats): what the
 *  serial tiers must produce bit for bit.  Results stored in dtype. */
void xt_serial_sum(xpar_dtype t, const void *in, size_t n, void *result);
void xt_serial_sum_wide(xpar_dtype t, const void *in, size_t n, void *result);
void xt_serial_scan_sum(xpar_dtype t, xpar_scan_kind kind, const void *init, const void *in,
                        size_t n, void *out);

/* ---- comparing -------------------------------------------------------------------- */

/** 1 if got (of dtype t) matches e. */
int xt_match(xpar_dtype t, long double got, xt_expect e);

/**
 * Check n elements of got against exp; on the first mismatch print the case
 * label, seed, index, expected, got and tolerance, the count of mismatches,
 * and fail the cmocka test.
 */
void xt_check_array(const char *label, const char *what, xpar_dtype t, const void *got,
                    const xt_expect *exp, size_t n);
void xt_check_scalar(const char *label, const char *what, xpar_dtype t, const void *got,
                     xt_expect e);
/** Fail unless the buffer's guards are intact. */
void xt_check_guards(const char *label, const char *what, const xt_buf *b);
/** Fail unless the n bytes at got equal those at want. */
void xt_check_bytes(const char *label, const char *what, const void *got, const void *want,
                    size_t bytes);
/** Fail with the label, the seed and a message. */
void xt_failf(const char *label, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** In a test body: fail unless the xpar call returns XPAR_OK (prints the status and the
 *  detail, labelled with the call's text). */
#define XT_OK(call)                                                                           \
  do {                                                                                        \
    xpar_status s_ = (call);                                                                  \
    if (s_ != XPAR_OK)                                                                        \
      xt_failf(#call, "status %s; detail \"%s\"", xpar_status_name(s_), xpar_last_error_detail()); \
  } while (0)
/** Fail unless st == want; prints the status names and the detail. */
void xt_check_status(const char *label, const char *what, xpar_status st, xpar_status want);

/* ---- tiers under test ----------------------------------------------------------------- */

typedef enum xt_tier {
  XT_CPU_SERIAL = 0,
  XT_CPU_OPENMP = 1,
  XT_AUTO = 2,
  XT_CUDA = 3,
  XT_CUDA_SERIAL = 4,
  XT_NTIERS
} xt_tier;

const char *xt_tier_name(xt_tier t);
int xt_tier_is_gpu(xt_tier t);
/** The largest n a conformance suite runs on the tier (cuda-serial is one GPU
 *  thread: slow). */
size_t xt_tier_max_n(xt_tier t);
/** 1 if xpar_device_query says a GPU is usable (queried once). */
int xt_gpu_usable(void);
/** The reason the GPU is not usable (from xpar_device_query). */
const char *xt_gpu_reason(void);

/** A fresh directory /tmp/xpar-test-<tag>-XXXXXX (into buf) made the
 *  XDG_CACHE_HOME, with XPAR_PROFILE unset: profiles a test saves or loads
 *  stay there and the user's real one is kept out.  0 on failure. */
int xt_private_cache(const char *tag, char *buf, size_t size);
/** Remove such a directory and everything under it; 0 on success. */
int xt_remove_tree(const char *dir);
/** 1 if the library was built with the OpenMP tier (from CMake). */
int xt_have_openmp(void);

/** The state of one tier's cmocka test: set up by xt_tier_setup. */
typedef struct xt_tier_state {
  xt_tier tier;
  xpar_context *ctx;
} xt_tier_state;

/**
 * In a test body: skip() if the tier can't run here (no GPU, no OpenMP),
 * otherwise create the tier's context (kept in st, destroyed by
 * xt_tier_teardown) and return it.
 */
xpar_context *xt_tier_open(xt_tier_state *st);
int xt_tier_teardown(void **state);
/** A fresh context configured for the tier (the caller destroys it); no skip. */
xpar_context *xt_tier_context(xt_tier tier);

/** After a successful call on ctx: the decision record names op, dtype, n and
 *  (for forced tiers, n > 0) the tier; otherwise fail with the label. */
void xt_check_decision(const char *label, xpar_context *ctx, xt_tier tier, xpar_op op,
                       xpar_dtype dtype, size_t n);

/** The sizes every conformance suite runs, and the offsets. */
#define XT_NSIZES 9
extern const size_t xt_sizes[XT_NSIZES];
/** (input offset, output offset) pairs, in elements: each of 0..3 appears as
 *  an input and as an output offset, and most pairs differ. */
#define XT_NOFFS 4
extern const size_t xt_offs[XT_NOFFS][2];

/**
 * Build and run a cmocka group with one test per tier for each body given:
 * names "<name>/<tier>".  Returns cmocka's result.
 */
typedef void (*xt_body)(void **state);
int xt_run_tier_tests(const char *group, const char *const *names, const xt_body *bodies,
                      size_t count);

#ifdef __cplusplus
}
#endif

#endif /* XPAR_TESTS_XT_H */
