/* GPU placement: one device per rank of a node, by node-local rank. */
#include <stdlib.h>

#include "mpi_internal.h"

/* This rank's rank among the ranks of comm that share its node.  Collective. */
static xpar_status node_local_rank(MPI_Comm comm, int rank, int *node_rank) {
  MPI_Comm node = MPI_COMM_NULL;
  xpar_status st = xpar__mpi_check(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  if (st != XPAR_OK) return st;
  st = xpar__mpi_check(MPI_Comm_rank(node, node_rank), "MPI_Comm_rank (node communicator)");
  MPI_Comm_free(&node);
  return st;
}

/* The placement, for a rank whose communicator is already checked. */
static xpar_status choose_device(MPI_Comm comm, int rank, int *device) {
  int local = 0;
  xpar_status st = node_local_rank(comm, rank, &local);
  if (st != XPAR_OK) return st;
  xpar_device_info info;
  st = xpar_device_query(&info);
  if (st != XPAR_OK)
    return xpar__mpi_fail(st, "xpar_device_query failed: %s", xpar_last_error_detail());
  if (!info.usable || info.device_count <= 0)
    *device = -1;
  else if (getenv("XPAR_DEVICE"))
    *device = info.device; /* the environment's choice, as xpar reads it */
  else
    *device = local % info.device_count;
  return XPAR_OK;
}

XPAR_MPI_API xpar_status xpar_mpi_local_device(MPI_Comm comm, int *device) {
  xpar__mpi_clear_error();
  int rank = 0, size = 0, chosen = -1;
  xpar_status st = xpar__mpi_check_comm("xpar_mpi_local_device", comm, &rank, &size);
  if (st != XPAR_OK) return st;
  /* The split is made even when `device` is NULL: the other ranks are in it. */
  st = choose_device(comm, rank, &chosen);
  if (st != XPAR_OK) return st;
  if (!device) return xpar__mpi_fail(XPAR_ERR_NULL_POINTER, "xpar_mpi_local_device: device is NULL");
  *device = chosen;
  return XPAR_OK;
}

XPAR_MPI_API xpar_status xpar_mpi_context_create(MPI_Comm comm, xpar_context **out) {
  xpar__mpi_clear_error();
  if (out) *out = NULL;
  int rank = 0, size = 0, device = -1;
  xpar_status st = xpar__mpi_check_comm("xpar_mpi_context_create", comm, &rank, &size);
  if (st != XPAR_OK) return st;
  st = choose_device(comm, rank, &device);
  if (st != XPAR_OK) return st;
  if (!out) return xpar__mpi_fail(XPAR_ERR_NULL_POINTER, "xpar_mpi_context_create: out is NULL");
  xpar_context *ctx = NULL;
  st = xpar_context_create(&ctx);
  if (st != XPAR_OK)
    return xpar__mpi_fail(st, "xpar_mpi_context_create: xpar_context_create failed: %s",
                          xpar_last_error_detail());
  /* With XPAR_DEVICE set, xpar_context_create has already placed the context
   * where the environment says. */
  if (device >= 0 && !getenv("XPAR_DEVICE")) {
    st = xpar_context_set_device(ctx, device);
    if (st != XPAR_OK) {
      xpar__mpi_fail(st, "xpar_mpi_context_create: xpar_context_set_device(%d) failed: %s",
                     device, xpar_last_error_detail());
      xpar_context_destroy(ctx);
      return st;
    }
  }
  *out = ctx;
  return XPAR_OK;
}
