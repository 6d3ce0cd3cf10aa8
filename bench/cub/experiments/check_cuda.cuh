/* The experiments' one error check: a failing CUDA runtime call ends the program with
 * where and why (they are single-file programs, built with nvcc alone). */
#ifndef XPAR_EXPERIMENTS_CHECK_CUDA_CUH
#define XPAR_EXPERIMENTS_CHECK_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

#endif
