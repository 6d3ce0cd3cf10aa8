/* The block-scan layer lives in the installed detail header, shared with the
 * application's operators (xpar/xpar_operator.cuh). */
#ifndef XPAR_BACKEND_CUDA_BLOCK_SCAN_CUH
#define XPAR_BACKEND_CUDA_BLOCK_SCAN_CUH
#include "xpar/detail/cuda_block_scan.cuh"
#endif /* XPAR_BACKEND_CUDA_BLOCK_SCAN_CUH */
