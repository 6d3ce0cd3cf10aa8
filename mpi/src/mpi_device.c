/* GPU placement: one device per rank of a node, by node-local rank. */
#include <stdlib.h>

#include "mpi_internal.h"

/*
 * The placement, for a rank whose communicator is already checked.
 * Collective on comm: the node split, and one broadcast on the node.
 *
 * Only the node's first rank asks xpar_device_query about the GPUs (the
 * query initialises CUDA on the device it describes: device 0, which that
 * rank uses anyway); the others take the count and usability from it, so
 * that no rank opens a CUDA context on a GPU it will not use (eight ranks
 * each probing device 0 would put eight contexts on it).  A rank with
 * XPAR_DEVICE set asks itself: the query then describes that device.
 */
static xpar_status choose_device(const char *fn, MPI_Comm comm, int rank, int *device) {
  MPI_Comm node = MPI_COMM_NULL;
  xpar_status st = xpar__mpi_check(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), fn,
      "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  if (st != XPAR_OK) return st;
  int node_rank = 0;
  int facts[2] = {0, 0}; /* usable, device count: the node's first rank's view */
  xpar_device_info info;
  st = xpar__mpi_check(MPI_Comm_rank(node, &node_rank), fn, "MPI_Comm_rank (node communicator)");
  if (st == XPAR_OK && node_rank == 0 && xpar_device_query(&info) == XPAR_OK) {
    facts[0] = info.usable;
    facts[1] = info.device_count;
  }
  if (st == XPAR_OK)
    st = xpar__mpi_check(MPI_Bcast(facts, 2, MPI_INT, 0, node), fn,
                         "MPI_Bcast (node communicator)");
  MPI_Comm_free(&node);
  if (st != XPAR_OK) return st;
  if (getenv("XPAR_DEVICE")) {
    /* The environment's choice, as xpar reads it. */
    *device = xpar_device_query(&info) == XPAR_OK && info.usable ? info.device : -1;
  } else {
    *device = facts[0] && facts[1] > 0 ? node_rank % facts[1] : -1;
  }
  return XPAR_OK;
}

XPAR_MPI_API xpar_status xpar_mpi_local_device(MPI_Comm comm, int *device) {
  xpar__mpi_clear_error();
  int rank = 0, size = 0, chosen = -1;
  xpar_status st = xpar__mpi_check_comm("xpar_mpi_local_device", comm, &rank, &size);
  if (st != XPAR_OK) return st;
  /* The split is made even when `device` is NULL: the other ranks are in it. */
  st = choose_device("xpar_mpi_local_device", comm, rank, &chosen);
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
  st = choose_device("xpar_mpi_context_create", comm, rank, &device);
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
