/*
 * Application predicates on the GPU (XPAR_PREDICATE, xpar/xpar_kernel.h).  The
 * predicate's flag kernel was compiled in the application's translation unit
 * (xpar/xpar_predicate.cuh), against the application's runtime; it writes one
 * byte per element into this call's scratch on the context's stream, and the
 * built-in select by flags (select_kernel.cuh: XPAR__SELECT_FLAGGED, or
 * XPAR__PARTITION_FLAGGED for a stable partition) compacts after it in stream
 * order.  Elements of 4 and 8 bytes only (the select kernels move words of
 * those sizes; dispatch sends others to the CPU).  Bytes: n elements and n
 * flags read, n flags written by the test; the compaction reads both again.
 */
#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "xpar/xpar_kernel.h"

/* The last staging slot: the call's own operands use the first ones (dispatch
 * stages in and out there when they are host memory), as an operator's scratch. */
static constexpr int kPredicateFlagsSlot = XPAR__OPERAND_SLOTS - 1;

extern "C" xpar_status xpar__cuda_op_select(const xpar__exec *ex, const xpar_predicate_op *pred,
                                            int partition, size_t n, const void *in, void *out,
                                            uint64_t *count) {
  if (!pred->gpu_flags)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "predicate %s has no GPU variant in this build",
                      pred->name);
  if (pred->in_size != 4 && pred->in_size != 8)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED,
                      "predicate %s: %zu-byte elements; the GPU compacts 4- and 8-byte ones",
                      pred->name, pred->in_size);
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, pred->name));
  if (ex->captured)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED,
                      "predicate %s: a select or partition with a predicate cannot be captured "
                      "into a CUDA graph (its flags live in the context's scratch)",
                      pred->name);
  unsigned char *flags = nullptr;
  if (n) {
    void *scratch = nullptr;
    XPAR__FORWARD(xpar__cuda_staging(st, kPredicateFlagsSlot, n, &scratch));
    flags = static_cast<unsigned char *>(scratch);
    xpar_predicate_gpu_call c;
    c.n = n;
    c.in = in;
    c.flags = flags;
    c.serial = ex->serial;
    c.grid = ex->grid;
    c.block = ex->block;
    c.multiprocessors = st->multiprocessors;
    c.stream = (void *)st->stream;
    const int err = pred->gpu_flags(&c);
    if (err != 0)
      return xpar__cuda_error((cudaError_t)err, "predicate %s: flag kernel launch", pred->name);
  }
  xpar__select_spec s;
  memset(&s, 0, sizeof s);
  s.kind = partition ? XPAR__PARTITION_FLAGGED : XPAR__SELECT_FLAGGED;
  s.dtype = pred->in_size == 4 ? XPAR_UINT32 : XPAR_UINT64;
  s.in = in;
  s.flags = flags;
  s.out = out;
  s.n = n;
  s.count = count;
  return xpar__cuda_select(ex, &s);
}
