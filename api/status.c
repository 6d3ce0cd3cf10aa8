/* Status strings, names, the thread-local detail message, enum names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* initial-exec: the detail is cleared on every call, and the default TLS
 * model of a shared library would make that a function call. */
_Thread_local char xpar__detail[512] __attribute__((tls_model("initial-exec")));
#define last_detail xpar__detail

xpar_status xpar__fail(xpar_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_detail, sizeof last_detail, fmt, ap);
  va_end(ap);
  return status;
}


void xpar__prefix_error(const char *prefix) {
  char tmp[sizeof last_detail];
  snprintf(tmp, sizeof tmp, "%s: %.*s", prefix, (int)(sizeof tmp / 2), last_detail);
  memcpy(last_detail, tmp, sizeof last_detail);
}

XPAR_API const char *xpar_last_error_detail(void) { return last_detail; }

XPAR_API const char *xpar_status_string(xpar_status status) {
  switch (status) {
#define XPAR__STATUS_TEXT_(name, value, text) \
  case XPAR_##name:                           \
    return text;
    XPAR_STATUS_MAP(XPAR__STATUS_TEXT_)
#undef XPAR__STATUS_TEXT_
  }
  return "unknown status";
}

XPAR_API const char *xpar_status_name(xpar_status status) {
  switch (status) {
#define XPAR__STATUS_NAME_(name, value, text) \
  case XPAR_##name:                           \
    return #name;
    XPAR_STATUS_MAP(XPAR__STATUS_NAME_)
#undef XPAR__STATUS_NAME_
  }
  return "UNKNOWN";
}

XPAR_API const char *xpar_dtype_name(xpar_dtype dtype) {
  switch (dtype) {
#define XPAR__DTYPE_NAME_(e, ctype, name, size) \
  case XPAR_##e:                                \
    return name;
    XPAR_DTYPE_MAP(XPAR__DTYPE_NAME_)
#undef XPAR__DTYPE_NAME_
    default: return "?";
  }
}

XPAR_API size_t xpar_dtype_size(xpar_dtype dtype) { return xpar__dtype_size(dtype); }

XPAR_API const char *xpar_op_name(xpar_op op) {
  static const char *const names[XPAR_OP_COUNT_] = {"reduce", "scan", "axpy", "add", "fill", "dot"};
  return (unsigned)op < XPAR_OP_COUNT_ ? names[op] : "?";
}

XPAR_API const char *xpar_backend_name(xpar_backend b) {
  static const char *const names[XPAR_BACKEND_COUNT_] = {"auto", "cpu", "serial", "cuda",
                                                         "cuda-serial"};
  return (unsigned)b < XPAR_BACKEND_COUNT_ ? names[b] : "?";
}

XPAR_API const char *xpar_tier_name(xpar_tier tier) {
  static const char *const names[XPAR_TIER_COUNT_] = {"none", "cpu-serial", "cpu-openmp", "cuda",
                                                      "cuda-serial"};
  return (unsigned)tier < XPAR_TIER_COUNT_ ? names[tier] : "?";
}
