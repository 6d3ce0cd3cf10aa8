/*
 * The hand-written CUB + MPI baseline that xpar-mpi-bench times beside the
 * MPI component, in the same run and on the same device slices:
 *   reduce: cub::DeviceReduce::Sum -> cudaMemcpy of the result to the host
 *           -> MPI_Allreduce(MPI_SUM)
 *   scan:   every rank but the last cub::DeviceReduce::Sum of its slice ->
 *           cudaMemcpy -> MPI_Exscan(MPI_SUM) of the totals ->
 *           cub::DeviceScan::InclusiveScanInit(carry) on the slice
 * (MPI combines float partials in an order it picks: this is the plain way,
 * not a reproducible one.)  Built when CUDA and MPI are both present.
 */
#ifndef XPAR_MPI_BENCH_CUB_MPI_REFERENCE_H
#define XPAR_MPI_BENCH_CUB_MPI_REFERENCE_H

#include <mpi.h>
#include <stddef.h>

#include "xpar/xpar.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cub_mpi cub_mpi;

/** Scratch for slices of up to max_n elements of int32, int64, float or
 *  double, on the current CUDA device; 0 on success, else a CUDA error code
 *  (message printed). */
int cub_mpi_create(cub_mpi **out, size_t max_n);
void cub_mpi_destroy(cub_mpi *c);
/** 1 if the baseline supports dtype (int32, int64, float, double). */
int cub_mpi_supports(xpar_dtype dtype);

/** Allreduce-sum of every rank's d_in[0, n) into *result (a host scalar of
 *  dtype), on every rank.  0 on success. */
int cub_mpi_reduce_sum(cub_mpi *c, MPI_Comm comm, xpar_dtype dtype, const void *d_in, size_t n,
                       void *result);
/** Inclusive sum scan of the concatenated slices; d_out[0, n) is this rank's
 *  part.  0 on success. */
int cub_mpi_scan_sum(cub_mpi *c, MPI_Comm comm, xpar_dtype dtype, const void *d_in, void *d_out,
                     size_t n);

#ifdef __cplusplus
}
#endif

#endif
