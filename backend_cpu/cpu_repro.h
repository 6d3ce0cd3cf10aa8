/* Reproducible mode on the CPU (cpu_repro.c): the backend table's
 * repro_reduce and repro_scan entries. */
#ifndef XPAR_BACKEND_CPU_REPRO_H
#define XPAR_BACKEND_CPU_REPRO_H

#include "base/backend.h"

xpar_status xpar__cpu_repro_reduce(const xpar__exec *ex, xpar__repro_kind kind, xpar_dtype t,
                                   const void *x, const void *y, size_t n, void *result);
xpar_status xpar__cpu_repro_scan(const xpar__exec *ex, xpar_dtype t, xpar_scan_kind kind,
                                 const xpar__scalar *init, const void *in, void *out, size_t n);

#endif
