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
#include "xpar/xpar_kernel.h"

using namespace xpar_cuda;

extern "C" xpar_status xpar__cuda_launch(const xpar__exec *ex, const xpar_kernel *k, size_t n,
                                         const xpar_kernel_args *args) {
  if (!k->gpu)
    return xpar__fail(XPAR_ERR_NOT_SUPPORTED, "kernel %s has no GPU variant in this build",
                      k->name);
  xpar__cuda_state *st = ex->cuda;
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
    if (k->gpu_occupancy) {
      int err = k->gpu_occupancy(block, &per_sm);
      if (err != 0)
        return xpar__cuda_error((cudaError_t)err, "occupancy query of kernel %s (block %u)",
                                k->name, block);
    }
    if (per_sm < 1) per_sm = 1;
    if ((unsigned)per_sm > tuning::elementwise_max_blocks_per_sm)
      per_sm = (int)tuning::elementwise_max_blocks_per_sm;
    const size_t sms = st->multiprocessors > 0 ? (size_t)st->multiprocessors : 1;
    const size_t cap = sms * (size_t)per_sm;
    shaped.grid = cap > 0x7fffffffu ? 0x7fffffffu : (unsigned)cap;
  }
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(&shaped, st, XPAR_CUDA_FAMILY_ELEMENTWISE, nullptr, n, 1,
                                        &shape));
  const int err = k->gpu(n, args, shape.grid, shape.block, (void *)st->stream);
  /* Counted whatever the outcome: the staging slots handed out for this call
   * are free again after it (cuda_state.cuh). */
  XPAR__FORWARD(xpar__cuda_check_launch(st, k->name));
  if (err != 0)
    return xpar__cuda_error((cudaError_t)err, "kernel %s launch (grid %u, block %u)", k->name,
                            shape.grid, shape.block);
  if (!ex->nowait) XPAR__FORWARD(xpar__cuda_sync(st, k->name));
  return XPAR_OK;
}
