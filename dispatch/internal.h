/*
 * Internal helpers shared by api/, dispatch/ and the backends: error
 * reporting, dtype facts, symbol naming.  Usable from C and from CUDA C++.
 */
#ifndef XPAR_DISPATCH_INTERNAL_H
#define XPAR_DISPATCH_INTERNAL_H

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
 *  (status.c says why the thread-local itself is not read).  Only the C
 *  side needs it. */
#ifndef __cplusplus
#include <stdatomic.h>
extern atomic_uint xpar__details_held;
void xpar__clear_held_error(void);
static inline void xpar__clear_error(void) {
  if (atomic_load_explicit(&xpar__details_held, memory_order_relaxed)) xpar__clear_held_error();
}
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

/** Element size in bytes (0 for an invalid dtype). */
static inline size_t xpar__dtype_size(xpar_dtype t) {
  switch (t) {
#define XPAR__DT_SIZE_(e, ctype, name, size) case XPAR_##e: return size;
    XPAR_DTYPE_MAP(XPAR__DT_SIZE_)
#undef XPAR__DT_SIZE_
    default: return 0;
  }
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

#endif /* XPAR_DISPATCH_INTERNAL_H */
