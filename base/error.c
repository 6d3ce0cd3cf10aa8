/* The thread-local error slot: the detail message of the last failed call. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base.h"

/*
 * The detail of the last failed call, per thread.  A thread-local of the
 * default (global-dynamic) TLS model, not initial-exec: an initial-exec
 * variable must fit in the static TLS block that glibc sizes when the
 * program starts, and a library loaded later with dlopen (Python's ctypes,
 * Julia, R) gets only a small surplus of it, often already spent (dlopen then
 * fails with "cannot allocate memory in static TLS block"; tests/test_dlopen.c).
 *
 * Reaching a global-dynamic thread-local costs a __tls_get_addr call (13
 * instructions on a 497-instruction 128-element reduce, callgrind), so the
 * clear that every call makes (xpar__clear_error) reads a global first:
 * xpar__details_held counts the threads whose detail is not empty.  Each
 * thread increments it when its detail becomes non-empty and decrements it
 * only after that, when clearing, so a thread holding a detail always reads
 * a count >= 1 (coherence of one atomic object: relaxed order suffices).  A
 * thread that exits holding a detail leaves the count raised for good; the
 * clear then looks at the thread-local on every call (20 instructions more
 * than with no detail held), slower but still correct.
 */
_Thread_local char xpar__detail[512];
#define DETAIL_SIZE sizeof xpar__detail
atomic_uint xpar__details_held;

/* This thread's detail, about to be written non-empty: counted if it was empty. */
static char *detail_to_write(void) {
  char *d = xpar__detail;
  if (!d[0]) atomic_fetch_add_explicit(&xpar__details_held, 1, memory_order_relaxed);
  return d;
}

void xpar__clear_held_error(void) {
  char *d = xpar__detail;
  if (d[0]) {
    d[0] = '\0';
    atomic_fetch_sub_explicit(&xpar__details_held, 1, memory_order_relaxed);
  }
}

xpar_status xpar__fail(xpar_status status, const char *fmt, ...) {
  char *d = detail_to_write();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d, DETAIL_SIZE, fmt, ap);
  va_end(ap);
  /* Counted means non-empty (and a failure deserves words). */
  if (!d[0]) snprintf(d, DETAIL_SIZE, "%s", xpar__status_text(status));
  return status;
}


const char *xpar__error_detail(void) { return xpar__detail; }
