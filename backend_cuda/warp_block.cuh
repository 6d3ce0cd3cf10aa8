/* The warp and block layers live in the installed detail header, shared with the
 * application's operators (xpar/xpar_operator.cuh). */
#ifndef XPAR_BACKEND_CUDA_WARP_BLOCK_CUH
#define XPAR_BACKEND_CUDA_WARP_BLOCK_CUH
#include "xpar/detail/cuda_warp_block.cuh"
#endif /* XPAR_BACKEND_CUDA_WARP_BLOCK_CUH */
