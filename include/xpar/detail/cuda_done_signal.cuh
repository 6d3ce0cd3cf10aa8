/*
 * The done signal of a synchronous GPU call: the kernel tells the host it has finished
 * by raising a flag in pinned memory, and the host spins on the flag instead of
 * synchronising the stream (1.0-1.2 us less per call on the H100 host;
 * backend_cuda/done_signal.cuh says why and how the host waits).  Shared by the
 * built-in kernels and the application's (XPAR_KERNEL's grid-stride kernel,
 * xpar/xpar_kernel.h).  Installed (xpar/detail/); not a public API.
 *
 * Every block calls signal_block_done at its end, all threads together.  With one block,
 * thread 0 raises the flag after the block's barrier.  With several, thread 0 of each
 * block draws a ticket from the signal's word with an acquire-release atomic at GPU
 * scope, and the block that draws the last ticket resets the word (the next launch on
 * the stream finds 0) and raises the flag with a release store at system scope.  Why
 * every element is visible to the host and to any later work, on any stream, once the
 * host has read the flag (PTX memory model): each block's stores precede its thread 0's
 * ticket in causality order (bar.sync), each ticket release synchronises with the last
 * block's acquire of a later value of the word (one release sequence of atomics), and the
 * last block's system-scope release synchronises with the host's acquire load of the
 * flag; causality order is transitive.
 */
/* Needs xpar_kernel_done: xpar_kernel.h includes this file after defining it (as it
 * includes xpar_operator.cuh); a file of its own includes xpar/xpar_kernel.h instead. */
#ifndef XPAR_XPAR_KERNEL_H
#error "include <xpar/xpar_kernel.h>, not xpar/detail/cuda_done_signal.cuh"
#endif

#ifndef XPAR_DETAIL_CUDA_DONE_SIGNAL_CUH
#define XPAR_DETAIL_CUDA_DONE_SIGNAL_CUH

namespace xpar_cuda {

using DoneSignal = xpar_kernel_done;

#ifdef __CUDACC__
/* At the end of every block of the kernel, all threads (a uniform branch around it is
 * fine); nothing when the call does not wait for the signal (flag NULL). */
__device__ __forceinline__ void signal_block_done(const DoneSignal &d) {
  if (!d.flag) return;
  __syncthreads(); /* every store of the block precedes thread 0's next step */
  if (threadIdx.x != 0) return;
  if (gridDim.x > 1) {
    unsigned int drawn;
    asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;"
                 : "=r"(drawn)
                 : "l"(d.ticket)
                 : "memory");
    if (drawn != gridDim.x - 1) return;
    *d.ticket = 0;
  }
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(d.flag), "r"(d.seq) : "memory");
}
#endif

} // namespace xpar_cuda

#endif /* XPAR_DETAIL_CUDA_DONE_SIGNAL_CUH */
