/*
 * The checks of the GPU tests written as CUDA applications (test_embed_gpu.cu,
 * test_graph_capture_gpu.cu): CK stops on a CUDA error and XK on an xpar error
 * (setup the test relies on), FAIL counts a failed expectation and prints the
 * first 40.  The including file defines `static int failures`.
 */
#ifndef XPAR_TESTS_GPU_APP_CHECKS_H
#define XPAR_TESTS_GPU_APP_CHECKS_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <xpar/xpar.h>

#define CK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)
#define XK(call)                                                                          \
  do {                                                                                    \
    xpar_status s_ = (call);                                                              \
    if (s_ != XPAR_OK) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                  \
              xpar_status_name(s_), xpar_last_error_detail());                            \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)
#define FAIL(...)                                  \
  do {                                             \
    failures++;                                    \
    if (failures <= 40) {                          \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);  \
      printf(__VA_ARGS__);                         \
      printf("\n");                                \
    }                                              \
  } while (0)

#endif /* XPAR_TESTS_GPU_APP_CHECKS_H */
