/*
 * Application kernels on the GPU (xpar/xpar_kernel.h).  The __global__
 * grid-stride kernel and the host code that launches it were compiled in the
 * application's translation unit, against the CUDA runtime the application
 * links; libxpar's own (static) runtime does not know that kernel.  So this
 * backend decides the launch shape -- the elementwise family's block, a
 * persistent grid capped by the kernel's occupancy, grid = block = 1 for
 * cuda-serial, the context's overrides -- and hands grid, block and the
 * context's stream to the kernel object's launcher; the occupancy is asked
 * through the kernel object too, for the same reason.
 */
#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "launch_shape.cuh"
#include "scan_tile_status.cuh"
#include "xpar/xpar_kernel.h"

using namespace xpar_cuda;

/* The resident blocks per SM of an application kernel, asked of the kernel's own runtime
 * (k->gpu_occupancy), remembered by xpar__cuda_resident_blocks (a synchronous launch of a
 * few thousand elements is a few microseconds, the query alone 0.22-0.51 us on the H100 host,
 * 2026-11-26).  A module unloaded and another loaded at the same address would find its
 * kernel's entry: a grid cap, never a correctness fact.  The kernel's launch handle is not
 * kept here: k->gpu_handle keeps it in the kernel's own translation unit. */
static int kernel_occupancy(const void *key, unsigned block, int *per_sm) {
  const xpar_kernel *k = static_cast<const xpar_kernel *>(key);
  return k->gpu_occupancy ? k->gpu_occupancy(block, per_sm) : 0;
}

extern "C" xpar_status xpar__cuda_launch(const xpar__exec *ex, const xpar_kernel *k, size_t n,
                                         const xpar_kernel_args *args) {
  if (!k->gpu)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "kernel %s has no GPU variant in this build",
                      k->name);
  xpar__cuda_state *st = ex->cuda;
  /* No capture check: a nowait launch may be captured into a CUDA graph, the grid-stride
   * kernel takes its arguments by value and keeps nothing between calls. */
  XPAR__FORWARD(xpar__cuda_begin(st, k->name));
  if (n == 0) return XPAR_OK;

  /* The shape logic caps a grid at the kernel's resident blocks by asking
   * libxpar's runtime, which cannot see this kernel: ask the kernel's own
   * runtime here and hand the cap to it as a grid, which it then clamps to
   * the work (one index per thread per pass). */
  xpar__exec shaped = *ex;
  const unsigned block = ex->block ? ex->block : tuning::elementwise_block;
  if (!ex->serial && !ex->grid && block <= tuning::max_block) {
    int per_sm = 0;
    const int err = xpar__cuda_resident_blocks(k, st->device, block, kernel_occupancy, &per_sm);
    if (err != 0)
      return xpar__cuda_error((cudaError_t)err, "occupancy query of kernel %s (block %u)",
                              k->name, block);
    if (per_sm < 1) per_sm = 1;
    if ((unsigned)per_sm > tuning::kernel_max_blocks_per_sm)
      per_sm = (int)tuning::kernel_max_blocks_per_sm;
    const size_t sms = st->multiprocessors > 0 ? (size_t)st->multiprocessors : 1;
    const size_t cap = sms * (size_t)per_sm;
    shaped.grid = cap > 0x7fffffffu ? 0x7fffffffu : (unsigned)cap;
  }
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(&shaped, st, XPAR_CUDA_FAMILY_ELEMENTWISE, nullptr, n, 1,
                                        &shape));
  /* A synchronous call of moderate size waits for the kernel's done signal, not for the
   * stream (done_signal.cuh), as the built-in kernels do, and is latency-bound: launched
   * through the driver with the kernel's handle where it has one (xpar__cuda_launch). */
  const bool spin = !ex->nowait && n <= tuning::flag_wait_max_n;
  DoneSignal done;
  XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &done));
  size_t n_param = n;
  xpar_kernel_args args_param = *args;
  void *params[] = {&n_param, &args_param, &done};
  int err = 0;
  const void *handle = spin && k->gpu_handle ? k->gpu_handle() : nullptr;
  if (!(handle && xpar__cuda_driver_launch(st, handle, shape.grid, shape.block, params)))
    err = k->gpu(n, args, shape.grid, shape.block, (void *)st->stream, &done);
  /* Counted whatever the outcome: the staging slots handed out for this call
   * are free again after it (cuda_state.cuh). */
  XPAR__FORWARD(xpar__cuda_check_launch(st, k->name));
  if (err != 0)
    return xpar__cuda_error((cudaError_t)err, "kernel %s launch (grid %u, block %u)", k->name,
                            shape.grid, shape.block);
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, done, k->name));
  return XPAR_OK;
}

/* ---- application operators (XPAR_OPERATOR) ------------------------------------ */
/* The operator's device code (xpar/xpar_operator.cuh, instantiated in the
 * application) decides its shape from the call's settings and asks for its
 * scratch first (CUB's idiom).  The scratch is the last operand staging slot:
 * an operator call has two array operands, so dispatch never hands that slot
 * out in the same call.  A scan of a 4- or 8-byte accumulator looks back over
 * the built-in scan's tile status instead (same words, same layout, one epoch
 * counter for both, one stream: a word of an earlier call, built-in or not,
 * never matches), so it clears nothing per call.  A call captured into a CUDA
 * graph takes its scratch, ticket and status words from the graph instead
 * (GraphScratch; the words zeroed there, epoch 1). */
static constexpr int kOperatorScratchSlot = XPAR__OPERAND_SLOTS - 1;
/* A device result's slot at the start of the reduce's scratch, before the partials
 * (256 bytes keeps them 256-byte aligned). */
static constexpr size_t kOperatorDeviceResultBytes = 256;

static xpar_operator_gpu_call operator_call(const xpar__exec *ex, const xpar__cuda_state *st,
                                            size_t n, const void *in, void *out,
                                            size_t *scratch_bytes) {
  xpar_operator_gpu_call c;
  c.n = n;
  c.in = in;
  c.out = out;
  c.exclusive = 0;
  c.serial = ex->serial;
  c.grid = ex->grid;
  c.block = ex->block;
  c.multiprocessors = st->multiprocessors;
  c.scratch = nullptr;
  c.scratch_bytes = scratch_bytes;
  c.stream = (void *)st->stream;
  c.ticket = st->reduce_ticket; /* NULL until xpar__cuda_ensure_control */
  c.status_tiles = nullptr;
  c.status = nullptr;
  c.status_epoch = 0;
  c.done = DoneSignal{nullptr, nullptr, 0};
  return c;
}

/* The operators run the built-in scan's tile shapes (xpar/xpar_operator.cuh copies
 * them into a header the application compiles, which cannot see launch_shape.cuh):
 * retuning ScanTuning must retune the operators too. */
template <size_t BYTES> constexpr bool operator_scan_shape_is_builtin() {
  using Op = xpar_operator_cuda::Tuning<BYTES>;
  using Tn = tuning::ScanTuning<BYTES>;
  return Op::scan_items == Tn::vectors * (int)(tuning::vector_bytes / BYTES) &&
         Op::scan_min_blocks == Tn::min_blocks && Op::block == Tn::block &&
         Op::window == Tn::window && Op::first_poll_delay_ns == Tn::first_poll_delay_ns &&
         Op::poll_delay_ns == Tn::poll_delay_ns && Op::delay_min_grid == Tn::delay_min_grid &&
         Op::scan_small_block == tuning::scan_small_block;
}
static_assert(operator_scan_shape_is_builtin<4>(), "xpar_operator.cuh's 4-byte scan is ScanTuning<4>");
static_assert(operator_scan_shape_is_builtin<8>(), "xpar_operator.cuh's 8-byte scan is ScanTuning<8>");
static_assert(TileWord<uint32_t>::bytes == 8 && TileWord<uint64_t>::bytes == 16,
              "scan_prepare_tile_status's two arrays hold 8- and 16-byte words");
static_assert(XPAR_OPERATOR_MAX_ACC <= kResultSlotBytes - kResultOperatorOffset,
              "an operator's result fits the pinned result slot");

extern "C" xpar_status xpar__cuda_op_reduce(const xpar__exec *ex, const xpar_operator *op,
                                            size_t n, const void *in, void *result) {
  if (!op->gpu_reduce)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "operator %s has no GPU variant in this build",
                      op->name);
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, op->name));
  const bool captured = ex->captured;
  /* The ticket and the pinned result slot; a captured call's ticket is the graph's. */
  if (!captured) XPAR__FORWARD(xpar__cuda_ensure_control(st));
  size_t need = 0;
  xpar_operator_gpu_call c = operator_call(ex, st, n, in, nullptr, &need);
  int err = op->gpu_reduce(&c);
  if (err != 0) return xpar__cuda_error((cudaError_t)err, "operator %s: shape", op->name);
  /* Scratch: the partials; a device result first when the caller's result is on the
   * device (copied there on the stream).  A host result: the kernel writes it straight
   * into the pinned result slot, read after the synchronisation (as the built-in reduce
   * does: a pageable device-to-host copy would cost more than a small kernel).  Captured
   * into a CUDA graph: the ticket (zeroed), then the same, all the graph's. */
  const size_t device_result = ex->result_on_device ? kOperatorDeviceResultBytes : 0;
  void *scratch = nullptr;
  GraphScratch graph_scratch(st);
  if (captured) {
    constexpr size_t kTicketBytes = 256; /* keeps the result and partials 256-aligned */
    XPAR__FORWARD(graph_scratch.take(kTicketBytes + device_result + need, kTicketBytes, op->name));
    c.ticket = static_cast<unsigned *>(graph_scratch.get());
    scratch = static_cast<unsigned char *>(graph_scratch.get()) + kTicketBytes;
  } else {
    XPAR__FORWARD(xpar__cuda_staging(st, kOperatorScratchSlot, device_result + need, &scratch));
  }
  unsigned char *base = (unsigned char *)scratch;
  c.out = ex->result_on_device ? (void *)base
                               : (void *)((unsigned char *)st->result_device + kResultOperatorOffset);
  c.scratch = base + device_result;
  /* A host result of moderate size: the host reads it once the kernel's done signal is
   * up, without synchronising the stream (done_signal.cuh), as the built-in reduce's
   * stamped result.  A device result is copied by a later step on the stream. */
  const bool spin = !captured && !ex->result_on_device && n <= tuning::flag_wait_max_n;
  XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &c.done));
  err = op->gpu_reduce(&c);
  XPAR__FORWARD(xpar__cuda_check_launch(st, op->name));
  if (err != 0) return xpar__cuda_error((cudaError_t)err, "operator %s reduce launch", op->name);
  if (ex->result_on_device) {
    XPAR_CUDA_TRY(cudaMemcpyAsync(result, base, op->acc_size, cudaMemcpyDeviceToDevice, st->stream),
                  "operator %s result", op->name);
    XPAR__FORWARD(graph_scratch.free(op->name));
    if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, op->name));
    return XPAR_OK;
  }
  XPAR__FORWARD(xpar__cuda_finish(st, c.done, op->name));
  memcpy(result, (const unsigned char *)st->result_host + kResultOperatorOffset, op->acc_size);
  return XPAR_OK;
}

extern "C" xpar_status xpar__cuda_op_scan(const xpar__exec *ex, const xpar_operator *op,
                                          xpar_scan_kind kind, size_t n, const void *in,
                                          void *out) {
  if (!op->gpu_scan)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "operator %s has no GPU variant in this build",
                      op->name);
  xpar__cuda_state *st = ex->cuda;
  XPAR__FORWARD(xpar__cuda_begin(st, op->name));
  if (n == 0) return XPAR_OK;
  size_t need = 0, status_tiles = 0;
  xpar_operator_gpu_call c = operator_call(ex, st, n, in, out, &need);
  c.exclusive = kind == XPAR_EXCLUSIVE;
  c.status_tiles = &status_tiles;
  int err = op->gpu_scan(&c);
  if (err != 0) return xpar__cuda_error((cudaError_t)err, "operator %s: shape", op->name);
  /* The scratch first: it is stamped as this call's, so growing the status
   * buffer never frees it (release_idle_buffers, cuda_state.cu), while growing
   * the scratch after taking the status pointer could free that.  Captured into a
   * CUDA graph, both are the graph's (the operator's code zeroes what it needs of
   * the scratch on the stream, inside the graph too). */
  if (status_tiles && op->acc_size != 4 && op->acc_size != 8)
    return xpar__fail(XPAR_ERR_INTERNAL, "operator %s: tile status asked for a %zu-byte accumulator",
                      op->name, op->acc_size);
  GraphScratch graph_scratch(st), graph_status(st);
  if (ex->captured) {
    XPAR__FORWARD(graph_scratch.take(need, 0, op->name));
    c.scratch = graph_scratch.get();
  } else {
    XPAR__FORWARD(xpar__cuda_staging(st, kOperatorScratchSlot, need, &c.scratch));
  }
  if (status_tiles) {
    /* The words of the operator's TileWord<Acc>, which are the built-in's. */
    const size_t word = op->acc_size == 4 ? TileWord<uint32_t>::bytes : TileWord<uint64_t>::bytes;
    ScanParams p;
    XPAR__FORWARD(scan_prepare_tile_status(ex, status_tiles, word, &p, &graph_status, op->name));
    c.status = p.status;
    c.status_epoch = p.epoch;
  }
  /* A synchronous call of moderate size returns on the kernel's done signal. */
  const bool spin = !ex->nowait && n <= tuning::flag_wait_max_n;
  XPAR__FORWARD(xpar__cuda_done_signal(st, spin, &c.done));
  err = op->gpu_scan(&c);
  XPAR__FORWARD(xpar__cuda_check_launch(st, op->name));
  if (err != 0) return xpar__cuda_error((cudaError_t)err, "operator %s scan launch", op->name);
  XPAR__FORWARD(graph_status.free(op->name));
  XPAR__FORWARD(graph_scratch.free(op->name));
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_finish(st, c.done, op->name));
  return XPAR_OK;
}
