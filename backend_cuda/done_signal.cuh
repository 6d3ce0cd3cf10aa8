/*
 * The done signal of a synchronous call: the kernel tells the host it is finished by
 * raising a flag in pinned memory, and the host spins on the flag instead of
 * synchronising the stream.
 *
 * Why: on the H100 host a synchronous add of 2^10-2^22 device int32 took 1.0-1.2 us less
 * this way than with cudaStreamSynchronize (10.4 against 11.6 us at 2^10, 20.9 against
 * 21.8 at 2^22, 2026-11-26):
 * the flag lands when the last block's stores are done, the stream's own completion
 * only after the grid has retired.  A stream memory operation (cuStreamWriteValue32)
 * after the kernel was as fast, but it waits for the whole compute engine to go idle: an
 * application's resident kernel on another stream would hold it back for good
 * (measured as the ordered trigger on the H100 host, 2026-11-25).
 *
 * The device side -- every block calls signal_block_done at its end, the last one raises
 * the flag, and why every element is then visible (PTX memory model) -- is in
 * xpar/detail/cuda_done_signal.cuh, shared with the application's kernels (XPAR_KERNEL,
 * xpar/xpar_kernel.h).  The measurement above checked it from another stream right
 * after each flag: no stale element in 14,700 calls.
 *
 * The host side (cuda_state.cu): xpar__cuda_done_signal hands out the signal of the next
 * call (none for a queued call: the stream orders what follows; none on a device without
 * concurrent managed access, where the host must not touch managed memory while the
 * kernel retires; none without the pinned slot), xpar__cuda_finish waits for it -- at
 * most tuning::spin_limit_ns, then for the stream, which also reports a kernel's error.
 */
#ifndef XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH
#define XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH

#include "xpar/xpar_kernel.h" /* xpar_kernel_done, and detail/cuda_done_signal.cuh */

using xpar_cuda::DoneSignal;

#endif /* XPAR_BACKEND_CUDA_DONE_SIGNAL_CUH */
