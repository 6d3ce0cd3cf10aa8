/* The component's detail message, communicator checks and MPI errors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

/* The default TLS model of a shared library (no initial-exec): libxpar_mpi
 * must stay loadable with dlopen.  The cost, a __tls_get_addr call per
 * access, is nothing beside the collective every call makes. */
static _Thread_local char detail[512];

xpar_status xpar__mpi_fail(xpar_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return status;
}

void xpar__mpi_clear_error(void) { detail[0] = '\0'; }

XPAR_MPI_API const char *xpar_mpi_last_error_detail(void) { return detail; }

xpar_status xpar__mpi_check(int mpi_rc, const char *fn, const char *what) {
  if (mpi_rc == MPI_SUCCESS) return XPAR_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "?");
  return xpar__mpi_fail(XPAR_ERR_IO, "%s: %s failed: MPI error %d (%s)", fn, what, mpi_rc, text);
}

/* A handle whose bytes are all zero is never a valid communicator: a NULL
 * pointer where MPI_Comm is a pointer (Open MPI), and no valid handle value
 * where it is an integer (MPICH's handles carry a kind in their high bits). */
static int comm_is_zero(MPI_Comm comm) {
  static const unsigned char zero[sizeof(MPI_Comm)];
  return memcmp(&comm, zero, sizeof comm) == 0;
}

xpar_status xpar__mpi_check_comm(const char *fn, MPI_Comm comm, int *rank, int *size) {
  int flag = 0;
  /* MPI_Initialized and MPI_Finalized may be called at any time. */
  MPI_Initialized(&flag);
  if (!flag)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                          "%s: MPI is not initialised (call MPI_Init or MPI_Init_thread first)",
                          fn);
  MPI_Finalized(&flag);
  if (flag)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT, "%s: MPI is already finalised", fn);
  if (comm_is_zero(comm))
    return xpar__mpi_fail(XPAR_ERR_NULL_POINTER, "%s: comm is a NULL (zero) handle", fn);
  if (comm == MPI_COMM_NULL)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
  int inter = 0;
  xpar_status st = xpar__mpi_check(MPI_Comm_test_inter(comm, &inter), fn, "MPI_Comm_test_inter");
  if (st != XPAR_OK) return st;
  if (inter)
    return xpar__mpi_fail(XPAR_ERR_INVALID_ARGUMENT,
                          "%s: comm is an intercommunicator; only intracommunicators are "
                          "supported (MPI_Intercomm_merge makes one)",
                          fn);
  st = xpar__mpi_check(MPI_Comm_rank(comm, rank), fn, "MPI_Comm_rank");
  if (st == XPAR_OK) st = xpar__mpi_check(MPI_Comm_size(comm, size), fn, "MPI_Comm_size");
  return st;
}
