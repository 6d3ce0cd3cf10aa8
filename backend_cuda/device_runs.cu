/*
 * Device layer: runs -- xpar_run_length_encode, xpar_reduce_by_key -- the entry point of
 * the backend table.  The kernels and the algorithm are in runs_kernel.cuh; this file
 * picks the path, takes the status words and scratch, and launches.
 *
 * Paths:
 *  - cuda-serial (ex->serial): runs_serial_kernel, one thread, element order;
 *  - otherwise runs_kernel, one block per tile of 2048 elements, decoupled look-back on
 *    the (heads, open value) pair;
 *  - reproducible mode, float or double SUM (either tier): the pass above with the
 *    starts (index, MIN) into a scratch array of n 8-byte words, then runs_repro_kernel,
 *    one thread per run.
 * Launch-shape overrides (ex->grid, ex->block) are not used: the shapes are the tiles'.
 * Key classes: the integers by their bits (uint32_t, uint64_t), floats by the sort's
 * equality (float, double); values by their dtype.
 *
 * The count: with ex->result_on_device written by the kernel into the caller's device
 * word; otherwise into the pinned result slot, copied to the caller's host word once the
 * kernel is done (such a call always waits, nowait or not, as select's).
 *
 * Scratch: the status words (48 bytes: a (heads, open value) pair with its flag) are
 * this call's, in the last staging slot, zeroed on the stream before the kernel (the
 * scan's shared arrays hold 8- and 16-byte words only); a captured call takes its own
 * from GraphScratch; the
 * reproducible starts are the sort's scratch buffer (grown, kept, freed by
 * release_cache; a captured call in reproducible mode is refused before anything is
 * queued).  Out of memory is reported before any launch: nothing is written.
 */
#include <string.h>

#include "cuda_ops.h"
#include "runs_kernel.cuh"

namespace xpar_cuda {
namespace runs {
namespace {

/* The last staging slot: the call's own arrays use the first ones when they are host
 * memory (dispatch stages them there), as an operator's scratch does. */
constexpr int kRunsStatusSlot = XPAR__OPERAND_SLOTS - 1;

const char *op_name(const xpar__runs_spec *s) {
  return s->lengths ? "run_length_encode" : "reduce_by_key";
}

/* One pass (look-back or serial) over the keys with values of kind KIND into
 * keys_out / values_out. */
template <class K, class Op, int KIND>
xpar_status launch_pass(const xpar__exec *ex, RunsParams &p, const char *name) {
  xpar__cuda_state *st = ex->cuda;
  if (ex->serial) {
    p.num_tiles = 1;
    void *args[] = {&p};
    return xpar__cuda_launch(st, (const void *)runs_serial_kernel<K, Op, KIND>, NULL, 1, 1, 0,
                             args, name);
  }
  const size_t tile_items = (size_t)runs_block * runs_items;
  p.num_tiles = (p.n + tile_items - 1) / tile_items;
  XPAR__RETURN_IF(p.num_tiles > 0x7fffffffu, XPAR_ERR_INVALID_ARGUMENT,
                  "%s: n = %zu needs more tiles than a grid holds", name, p.n);
  /* The pair's words are wider than the scan's two shared arrays hold: this call's own,
   * zeroed on the stream before the kernel, epoch 1 (a zero word never matches).  A
   * captured call's come from the graph's scratch, zeroed at every replay. */
  constexpr size_t word = TileWord<Pair<typename Op::Type>>::bytes;
  GraphScratch graph_scratch(st);
  if (ex->captured) {
    ScanParams sp;
    memset(&sp, 0, sizeof sp);
    XPAR__FORWARD(scan_prepare_tile_status(ex, p.num_tiles, word, &sp, &graph_scratch, name));
    p.status = sp.status;
  } else {
    void *words = nullptr;
    XPAR__FORWARD(xpar__cuda_staging(st, kRunsStatusSlot, p.num_tiles * word, &words));
    XPAR_CUDA_TRY(cudaMemsetAsync(words, 0, p.num_tiles * word, st->stream),
                  "%s: clearing the tile status (%zu bytes)", name, p.num_tiles * word);
    p.status = words;
  }
  p.epoch = 1;
  if (p.num_tiles >= 500) {
    p.first_poll_delay_ns = 800;
    p.poll_delay_ns = 400;
  }
  void *args[] = {&p};
  XPAR__FORWARD(xpar__cuda_launch(st, (const void *)runs_kernel<K, Op, KIND>, NULL,
                                  (unsigned)p.num_tiles, runs_block, 0, args, name));
  XPAR__FORWARD(graph_scratch.free(name));
  return XPAR_OK;
}

template <class K, class Op, int KIND>
xpar_status runs_run(const xpar__exec *ex, const xpar__runs_spec *s) {
  xpar__cuda_state *st = ex->cuda;
  const char *name = op_name(s);
  const bool host_count = !ex->result_on_device;
  const bool wait = !ex->nowait || host_count;
  if (host_count) XPAR__FORWARD(xpar__cuda_ensure_control(st));
  unsigned long long *count = host_count ? static_cast<unsigned long long *>(st->result_device)
                                         : reinterpret_cast<unsigned long long *>(s->count);
  RunsParams p;
  memset(&p, 0, sizeof p);
  p.keys = s->keys_in;
  p.values = s->values_in;
  p.keys_out = s->keys_out;
  p.values_out = s->values_out;
  p.n = s->n;
  p.count = count;
  XPAR__FORWARD(xpar__cuda_done_signal(st, false, &p.done));
  XPAR__FORWARD((launch_pass<K, Op, KIND>(ex, p, name)));
  if (!wait) return XPAR_OK;
  XPAR__FORWARD(xpar__cuda_finish(st, p.done, name));
  if (host_count) {
    uint64_t k;
    memcpy(&k, (const void *)st->result_host, sizeof k);
    *s->count = k;
  }
  return XPAR_OK;
}

/* Reproducible float sums: the starts, then one thread per run. */
template <class K, class A> xpar_status runs_repro(const xpar__exec *ex, const xpar__runs_spec *s) {
  xpar__cuda_state *st = ex->cuda;
  const char *name = op_name(s);
  if (ex->captured)
    return xpar__cuda_refuse_capture(name, "reproducible mode takes scratch it may have to grow");
  const bool host_count = !ex->result_on_device;
  const bool wait = !ex->nowait || host_count;
  if (host_count) XPAR__FORWARD(xpar__cuda_ensure_control(st));
  XPAR__FORWARD(xpar__cuda_grow_device(st, &st->sort_scratch, s->n * sizeof(uint64_t),
                                       "runs scratch", NULL));
  uint64_t *starts = static_cast<uint64_t *>(st->sort_scratch.ptr);
  unsigned long long *count = host_count ? static_cast<unsigned long long *>(st->result_device)
                                         : reinterpret_cast<unsigned long long *>(s->count);
  RunsParams p;
  memset(&p, 0, sizeof p);
  p.keys = s->keys_in;
  p.values = NULL;
  p.keys_out = s->keys_out;
  p.values_out = starts;
  p.n = s->n;
  p.count = count;
  XPAR__FORWARD((launch_pass<K, MinOp<uint64_t>, STARTS>(ex, p, name)));
  const size_t max_runs = s->n;
  size_t grid = (max_runs + repro_block - 1) / repro_block;
  const size_t cap = (size_t)(st->multiprocessors > 0 ? st->multiprocessors : 1) * 16;
  if (grid > cap) grid = cap;
  if (ex->serial) grid = 1;
  DoneSignal done;
  XPAR__FORWARD(xpar__cuda_done_signal(st, false, &done));
  const A *values = static_cast<const A *>(s->values_in);
  const uint64_t *cstarts = starts;
  const unsigned long long *ccount = count;
  size_t n = s->n;
  A *vo = static_cast<A *>(s->values_out);
  void *args[] = {&values, &cstarts, &ccount, &n, &vo, &done};
  XPAR__FORWARD(xpar__cuda_launch(st, (const void *)runs_repro_kernel<A>, NULL, (unsigned)grid,
                                  ex->serial ? 1u : repro_block, 0, args, name));
  if (!wait) return XPAR_OK;
  XPAR__FORWARD(xpar__cuda_finish(st, done, name));
  if (host_count) {
    uint64_t k;
    memcpy(&k, (const void *)st->result_host, sizeof k);
    *s->count = k;
  }
  return XPAR_OK;
}

template <class K> xpar_status runs_key(const xpar__exec *ex, const xpar__runs_spec *s) {
  if (s->lengths) return runs_run<K, SumOp<uint64_t>, LENGTHS>(ex, s);
  if (ex->reproducible && s->op == XPAR_SUM) {
    if (s->value_dtype == XPAR_FLOAT) return runs_repro<K, float>(ex, s);
    if (s->value_dtype == XPAR_DOUBLE) return runs_repro<K, double>(ex, s);
  }
  return with_dtype(s->value_dtype, [&](auto zero) -> xpar_status {
    using V = decltype(zero);
    return with_op<V>(s->op, [&](auto op) -> xpar_status {
      return runs_run<K, decltype(op), VALUES>(ex, s);
    });
  });
}

} // namespace
} // namespace runs
} // namespace xpar_cuda

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_runs(const xpar__exec *ex, const xpar__runs_spec *s) {
  const char *name = runs::op_name(s);
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, name));
  if (!xpar__dtype_valid(s->key_dtype) || !xpar__dtype_valid(s->value_dtype) ||
      (int)s->op < 0 || (int)s->op >= (int)XPAR_REDUCTION_COUNT_)
    return xpar__fail(XPAR_ERR_INVALID_ENUM, "%s: unknown key dtype %d, value dtype %d or op %d",
                      name, (int)s->key_dtype, (int)s->value_dtype, (int)s->op);
  if (ex->captured && !ex->result_on_device)
    return xpar__cuda_refuse_capture(name, "its count goes to host memory (the call would wait)");
  if (s->n == 0) {
    if (!ex->result_on_device) {
      *s->count = 0;
      return XPAR_OK;
    }
    XPAR_CUDA_TRY(cudaMemsetAsync(s->count, 0, sizeof(uint64_t), ex->cuda->stream),
                  "%s: writing the count", name);
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(ex->cuda, name));
    return XPAR_OK;
  }
  if (ex->result_on_device && !aligned_to(s->count, 8))
    return xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "%s: the device count %p is not 8-byte aligned",
                      name, (void *)s->count);
  switch (s->key_dtype) {
    case XPAR_FLOAT: return runs::runs_key<float>(ex, s);
    case XPAR_DOUBLE: return runs::runs_key<double>(ex, s);
    case XPAR_INT32:
    case XPAR_UINT32: return runs::runs_key<uint32_t>(ex, s);
    default: return runs::runs_key<uint64_t>(ex, s);
  }
}
