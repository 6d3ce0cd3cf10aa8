/*
 * Internals of the MPI component shared by its sources: the thread-local
 * detail message, the communicator checks, MPI error conversion.  The
 * component stands on xpar's public API only (xpar.h), as an application
 * would.
 */
#ifndef XPAR_MPI_INTERNAL_H
#define XPAR_MPI_INTERNAL_H

#include <stddef.h>

#include "xpar/xpar_mpi.h"

/** Record `status` with a printf-style detail in this thread's slot (the
 *  component's own: it cannot write xpar's) and return `status`. */
xpar_status xpar__mpi_fail(xpar_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Clear this thread's detail (every public entry point does, first). */
void xpar__mpi_clear_error(void);

/**
 * The checks every public function makes before any communication: MPI is
 * initialised and not finalised, comm is neither a zero handle nor
 * MPI_COMM_NULL nor an intercommunicator.  On success *rank and *size are
 * this rank's place in comm.  `fn` names the public function in the detail.
 */
xpar_status xpar__mpi_check_comm(const char *fn, MPI_Comm comm, int *rank, int *size);

/** Convert an MPI error code from `what` (an MPI call) into XPAR_ERR_IO with
 *  MPI's error string; MPI_SUCCESS -> XPAR_OK. */
xpar_status xpar__mpi_check(int mpi_rc, const char *fn, const char *what);

#endif /* XPAR_MPI_INTERNAL_H */
