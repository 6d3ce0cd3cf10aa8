/*
 * The done signal of a synchronous call: the kernel tells the host it is finished by
 * raising a flag in pinned memory, and the host spins on the flag instead of
 * synchronising the stream.
 *
 * Why: on the H100 host a synchronous add of 2^10-2^22 device int32 took 1.0-1.2 us less
 * this way than with cudaStreamSynchronize (10.4 against 11.6 us at 2^10, 20.9 against
 * 21.8 at 2^22; bench/cub/experiments/done_flag_cost.cu, bench/cub/NOTES.md session 19):
 * the flag lands when the last block's stores are done, the stream's own completion
 * only after the grid has retired.  A stream memory operation (cuStreamWriteValue32)
 * after the kernel was as fast, but it waits for the whole compute engine to go idle: an
 * application's resident kernel on another stream would hold it back for good
 * (bench/cub/NOTES.md session 7, the ordered trigger).
 *
 * Every block calls signal_block_done at its end, all threads together.  With one block,
 * thread 0 raises the flag after the block's barrier.  With several, thread 0 of each
 * block draws a ticket from the control block's word with an acquire-release atomic at
 * GPU scope, and the block that draws the last ticket resets the word (the next launch on
 * the stream finds 0) and raises the flag with a release store at system scope.  Why
 * every element is visible to the host and to any later work, on any stream, once the
 * host has read the flag (PTX memory model): each block's stores precede its thread 0's
 * ticket in causality order (bar.sync), each ticket release synchronises with the last
 * block's acquire of a later value of the word (one release sequence of atomics), and the
 * last block's system-scope release synchronises with the host's acquire load of the
 * flag; causality order is transitive.  The experiment above checked it from another
 * stream right after each flag: no stale element in 14,700 calls.
 *
 * The host side (cuda_state.cu): xpar__cuda_done_signal hands out the signal of the next
 * call (none for a queued call: the stream orders what follows; none on a device without
 * concurrent managed access, where the host must not touch managed memory while the
 * kernel retires; none without the pinned slot), xpar__cuda_finish waits for it -- at
 * most tuning::spin_limit_ns, then for the stream, which also reports a kernel's error.
 */
#ifndef XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH
#define XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH

struct DoneSignal {
  unsigned int *ticket;        /* the control block's done ticket (0 between launches) */
  volatile unsigned int *flag; /* the pinned done flag as the device sees it; NULL: none */
  unsigned int seq;            /* the value that says this launch is done */
};

#ifdef __CUDACC__
/* At the end of every block of the kernel, all threads (a uniform branch around it is
 * fine); nothing when the call does not wait for the signal. */
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

#endif /* XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH */
