// The CUB + MPI baseline of xpar-mpi-bench: see cub_mpi_reference.h.
// Written as an application would, with nothing of xpar's inside: one
// stream, scratch sized once, a pinned host scalar for the result.  Counts
// are passed to CUB as int64_t, as bench/cub's single-GPU comparisons do (the
// README's xpar-vs-CUB figures are against the same calls).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cub_mpi_reference.h"

struct cub_mpi {
  cudaStream_t stream;
  void *temp;            // scratch for DeviceReduce and DeviceScan
  size_t temp_bytes;
  void *d_total;         // a device scalar: the slice total
  void *h_total;         // its pinned host copy
};

namespace {

int report(cudaError_t e, const char *what) {
  if (e != cudaSuccess) std::fprintf(stderr, "cub_mpi: %s: %s\n", what, cudaGetErrorString(e));
  return (int)e;
}

#define CUB_MPI_TRY(expr)                            \
  do {                                               \
    const cudaError_t e_ = (expr);                   \
    if (e_ != cudaSuccess) return report(e_, #expr); \
  } while (0)

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <> MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

template <typename T>
size_t scratch_bytes(size_t n) {
  size_t reduce = 0, scan = 0;
  cub::DeviceReduce::Sum(nullptr, reduce, (const T *)nullptr, (T *)nullptr, (int64_t)n);
  cub::DeviceScan::InclusiveScanInit(nullptr, scan, (const T *)nullptr, (T *)nullptr,
                                     ::cuda::std::plus<>{}, T{}, (int64_t)n);
  return reduce > scan ? reduce : scan;
}

template <typename T>
int reduce_sum(cub_mpi *c, MPI_Comm comm, const T *d_in, size_t n, T *result) {
  size_t bytes = c->temp_bytes;
  CUB_MPI_TRY(
      cub::DeviceReduce::Sum(c->temp, bytes, d_in, (T *)c->d_total, (int64_t)n, c->stream));
  CUB_MPI_TRY(cudaMemcpyAsync(c->h_total, c->d_total, sizeof(T), cudaMemcpyDeviceToHost, c->stream));
  CUB_MPI_TRY(cudaStreamSynchronize(c->stream));
  T local;
  std::memcpy(&local, c->h_total, sizeof local);
  return MPI_Allreduce(&local, result, 1, mpi_type<T>(), MPI_SUM, comm);
}

template <typename T>
int scan_sum(cub_mpi *c, MPI_Comm comm, const T *d_in, T *d_out, size_t n) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  T local{}, carry{};
  if (rank != size - 1) {  // the last rank's total is needed by nobody
    size_t bytes = c->temp_bytes;
    CUB_MPI_TRY(
        cub::DeviceReduce::Sum(c->temp, bytes, d_in, (T *)c->d_total, (int64_t)n, c->stream));
    CUB_MPI_TRY(
        cudaMemcpyAsync(c->h_total, c->d_total, sizeof(T), cudaMemcpyDeviceToHost, c->stream));
    CUB_MPI_TRY(cudaStreamSynchronize(c->stream));
    std::memcpy(&local, c->h_total, sizeof local);
  }
  const int rc = MPI_Exscan(&local, &carry, 1, mpi_type<T>(), MPI_SUM, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (rank == 0) carry = T{};  // MPI_Exscan leaves rank 0's result undefined
  size_t bytes = c->temp_bytes;
  CUB_MPI_TRY(cub::DeviceScan::InclusiveScanInit(c->temp, bytes, d_in, d_out,
                                                 ::cuda::std::plus<>{}, carry, (int64_t)n,
                                                 c->stream));
  CUB_MPI_TRY(cudaStreamSynchronize(c->stream));
  return 0;
}

}  // namespace

extern "C" int cub_mpi_supports(xpar_dtype dtype) {
  return dtype == XPAR_INT32 || dtype == XPAR_INT64 || dtype == XPAR_FLOAT ||
         dtype == XPAR_DOUBLE;
}

extern "C" int cub_mpi_create(cub_mpi **out, size_t max_n) {
  *out = nullptr;
  cub_mpi *c = new cub_mpi{};
  size_t need = scratch_bytes<int32_t>(max_n);
  const size_t others[] = {scratch_bytes<int64_t>(max_n), scratch_bytes<float>(max_n),
                           scratch_bytes<double>(max_n)};
  for (size_t b : others) need = b > need ? b : need;
  c->temp_bytes = need;
  cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaMalloc(&c->temp, need);
  if (e == cudaSuccess) e = cudaMalloc(&c->d_total, 8);
  if (e == cudaSuccess) e = cudaMallocHost(&c->h_total, 8);
  if (e != cudaSuccess) {
    cub_mpi_destroy(c);
    return report(e, "cub_mpi_create");
  }
  *out = c;
  return 0;
}

extern "C" void cub_mpi_destroy(cub_mpi *c) {
  if (!c) return;
  cudaFree(c->temp);
  cudaFree(c->d_total);
  cudaFreeHost(c->h_total);
  if (c->stream) cudaStreamDestroy(c->stream);
  delete c;
}

extern "C" int cub_mpi_reduce_sum(cub_mpi *c, MPI_Comm comm, xpar_dtype dtype, const void *d_in,
                                  size_t n, void *result) {
  switch (dtype) {
    case XPAR_INT32: return reduce_sum(c, comm, (const int32_t *)d_in, n, (int32_t *)result);
    case XPAR_INT64: return reduce_sum(c, comm, (const int64_t *)d_in, n, (int64_t *)result);
    case XPAR_FLOAT: return reduce_sum(c, comm, (const float *)d_in, n, (float *)result);
    case XPAR_DOUBLE: return reduce_sum(c, comm, (const double *)d_in, n, (double *)result);
    default: return -1;
  }
}

extern "C" int cub_mpi_scan_sum(cub_mpi *c, MPI_Comm comm, xpar_dtype dtype, const void *d_in,
                                void *d_out, size_t n) {
  switch (dtype) {
    case XPAR_INT32: return scan_sum(c, comm, (const int32_t *)d_in, (int32_t *)d_out, n);
    case XPAR_INT64: return scan_sum(c, comm, (const int64_t *)d_in, (int64_t *)d_out, n);
    case XPAR_FLOAT: return scan_sum(c, comm, (const float *)d_in, (float *)d_out, n);
    case XPAR_DOUBLE: return scan_sum(c, comm, (const double *)d_in, (double *)d_out, n);
    default: return -1;
  }
}
