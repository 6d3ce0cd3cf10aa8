/*
 * The floor every layer stands on (api/, dispatch/, the backends): the
 * thread-local error slot and its macros, dtype facts, and the names of every
 * enumeration, taken from the public header's maps.  It calls nothing above
 * it.  Usable from C and from CUDA C++.
 *
 * Why a directory of its own ("base", not "core": core already names the
 * library as opposed to its optional MPI component): these facts were
 * defined in api/ and used from everywhere, which made every backend and
 * dispatch module depend on the public entry layer.
 */
#ifndef XPAR_BASE_BASE_H
#define XPAR_BASE_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "xpar/xpar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal non-static symbols are xpar__*; they are hidden from the shared
 * library (the build uses -fvisibility=hidden; XPAR_API marks exports). */

/**
 * Record `status` with a printf-style detail message in this thread's error
 * slot and return `status`, so callers can write
 * `return xpar__fail(XPAR_ERR_NULL_POINTER, "in is NULL (n = %zu)", n);`.
 */
xpar_status xpar__fail(xpar_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Clear this thread's detail message.  Every public entry point does, so
 *  it is inline and, while no thread holds a detail, only reads a global
 *  (error.c says why the thread-local itself is not read).  Only the C
 *  side needs it. */
#ifndef __cplusplus
#include <stdatomic.h>
extern atomic_uint xpar__details_held;
void xpar__clear_held_error(void);
static inline void xpar__clear_error(void) {
  if (atomic_load_explicit(&xpar__details_held, memory_order_relaxed)) xpar__clear_held_error();
}
#endif


/** Threads inside a public call whose current driver context the CUDA
 *  backend switched to its device's (caller_context.c says why a count):
 *  the backend adds 1 when it first switches in a call and 1 less when the
 *  door puts the caller's context back. */
void xpar__callers_switched_add(int delta);
#ifndef __cplusplus
extern atomic_uint xpar__callers_switched;
#endif

/** This thread's detail message ("" when none); never NULL. */
const char *xpar__error_detail(void);

/** For the small static functions of the one hot path (api/ops.c's checks
 *  behind the door): a call out of line costs the N = 128 call more than its
 *  body (callgrind: +50 instructions for reduce's). */
#if defined(__GNUC__)
#define XPAR__HOT_INLINE static inline __attribute__((always_inline))
#else
#define XPAR__HOT_INLINE static inline
#endif
/** Their failing side: out of line and away from the hot path. */
#if defined(__GNUC__)
#define XPAR__COLD static __attribute__((cold, noinline))
#else
#define XPAR__COLD static
#endif
/** A large step a hot path calls only sometimes: out of line, so that the
 *  hot path's own frame stays small (no registers saved for its sake). */
#if defined(__GNUC__)
#define XPAR__OUT_OF_LINE static __attribute__((noinline))
#else
#define XPAR__OUT_OF_LINE static
#endif

#define XPAR__RETURN_IF(cond, status, ...)    \
  do {                                        \
    if (cond) return xpar__fail((status), __VA_ARGS__); \
  } while (0)

#define XPAR__FORWARD(expr)                   \
  do {                                        \
    xpar_status xpar__st_ = (expr);           \
    if (xpar__st_ != XPAR_OK) return xpar__st_; \
  } while (0)

/** 1 if dtype is a known xpar_dtype value. */
static inline int xpar__dtype_valid(xpar_dtype t) { return (unsigned)t < (unsigned)XPAR_DTYPE_COUNT_; }

/** Element size in bytes (0 for an invalid dtype).  The sizes packed four
 *  bits each into one constant: a shift and a mask, where the switch it
 *  replaces cost the 128-element call ~9 instructions per use (callgrind). */
static inline size_t xpar__dtype_size(xpar_dtype t) {
#define XPAR__DT_SIZE_NIBBLE_(e, ctype, name, size) | ((uint64_t)(size) << (4 * XPAR_##e))
  const uint64_t sizes = 0 XPAR_DTYPE_MAP(XPAR__DT_SIZE_NIBBLE_);
#undef XPAR__DT_SIZE_NIBBLE_
  return xpar__dtype_valid(t) ? (size_t)((sizes >> (4 * (unsigned)t)) & 15) : 0;
}

/** The accumulator dtype of xpar_reduce_sum_wide for dtype t. */
static inline xpar_dtype xpar__wide_dtype(xpar_dtype t) {
  switch (t) {
    case XPAR_INT32: return XPAR_INT64;
    case XPAR_UINT32: return XPAR_UINT64;
    case XPAR_FLOAT: return XPAR_DOUBLE;
    default: return t;
  }
}

/* ---- names (names.c), from the public header's maps -------------------------
 * The public xpar_*_name functions (api/) return these; every layer below the
 * API spells values through them, never by hand.  "?" for a value out of range. */
const char *xpar__status_text(xpar_status s);  /* "the context is NULL" */
const char *xpar__status_name(xpar_status s);  /* "ERR_NULL_CONTEXT"    */
const char *xpar__dtype_name(xpar_dtype t);    /* "int32"               */
const char *xpar__op_name(xpar_op op);         /* "reduce", the profile key too */
const char *xpar__op_env(xpar_op op);          /* "REDUCE" (XPAR_REDUCE_*_THRESHOLD) */
const char *xpar__backend_name(xpar_backend b); /* "cuda-serial", XPAR_BACKEND's word */
const char *xpar__offload_name(xpar_offload o); /* "mandatory", XPAR_OFFLOAD's word */
const char *xpar__tier_name(xpar_tier tier);   /* "cpu-openmp"          */
const char *xpar__threshold_key(xpar_threshold k);  /* "gpu_pinned" (profile) */
const char *xpar__threshold_env(xpar_threshold k);  /* "GPU_PINNED" (environment) */
const char *xpar__threshold_data(xpar_threshold k); /* "pinned host data" (records) */

/** The value a spelling names, or -1: profile words exactly, environment
 *  words (backend, offload) case-insensitively. */
int xpar__dtype_index(const char *name);
int xpar__op_index(const char *name);
int xpar__threshold_index(const char *key);
int xpar__backend_index(const char *word);
int xpar__offload_index(const char *word);

/** A host scalar of any dtype (axpy's alpha, fill's value, results). */
typedef union xpar__scalar {
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
  unsigned char bytes[8];
} xpar__scalar;

#ifdef __cplusplus
}
#endif

#endif /* XPAR_BASE_BASE_H */
