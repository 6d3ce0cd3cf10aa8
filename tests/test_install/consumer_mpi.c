/* An MPI application of the installed xpar and its MPI component: every rank
 * holds rank + 1 int64 values; a distributed wide sum and an inclusive scan,
 * checked exactly on every rank.  Exit status 0 on every rank when right. */
#include <stdio.h>

#include <xpar/xpar_mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  xpar_context *ctx = NULL;
  xpar_status st = xpar_mpi_context_create(MPI_COMM_WORLD, &ctx);
  if (st != XPAR_OK) {
    fprintf(stderr, "xpar_mpi_context_create: %s (%s)\n", xpar_status_name(st),
            xpar_mpi_last_error_detail());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Rank r holds the values 1..r+1 of the global sequence 1, 1, 2, 1, 2, 3, ... */
  int64_t mine[64], prefix[64];
  const size_t n = (size_t)rank + 1;
  if (n > 64) MPI_Abort(MPI_COMM_WORLD, 2); /* a test of a few ranks */
  for (size_t i = 0; i < n; i++) mine[i] = (int64_t)i + 1;
  int64_t total = 0, want_total = 0, before = 0;
  for (int r = 0; r < size; r++) want_total += (int64_t)(r + 1) * (r + 2) / 2;
  for (int r = 0; r < rank; r++) before += (int64_t)(r + 1) * (r + 2) / 2;
  int bad = 0;
  st = xpar_mpi_reduce_sum_wide(ctx, MPI_COMM_WORLD, XPAR_INT64, mine, n, &total);
  if (st != XPAR_OK || total != want_total) bad = 1;
  st = xpar_mpi_scan(ctx, MPI_COMM_WORLD, XPAR_INT64, XPAR_SUM, XPAR_INCLUSIVE, mine, prefix, n);
  for (size_t i = 0; i < n; i++)
    if (st != XPAR_OK || prefix[i] != before + (int64_t)((i + 1) * (i + 2) / 2)) bad = 1;
  xpar_decision d;
  xpar_last_decision(ctx, &d);
  printf("consumer_mpi: rank %d of %d: total %lld, last local call on %s: %s\n", rank, size,
         (long long)total, xpar_tier_name(d.tier), bad ? "WRONG" : "ok");
  xpar_context_destroy(ctx);
  MPI_Finalize();
  return bad;
}
