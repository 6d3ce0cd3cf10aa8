/*
 * Experiment (issue 12, CUDA calls at mid N on device data): where do the 0.4-1.0 us go
 * that a synchronous xpar fill / add / axpy of 2^14..2^20 device elements takes over CUB
 * + cudaStreamSynchronize (bench/results/h100-2026-11-25-s9/call7/regret-ew-device.txt)?
 *
 * The regret bench runs CUB on a non-blocking stream; xpar, with no stream set, runs on a
 * blocking stream of its own (ordered with the legacy default stream, the embedding
 * promise of xpar_context_set_stream).  Rows, each a synchronous fill of N int32 in device
 * memory, host wall clock, median / p90 of CALLS calls, the rows interleaved round by round:
 *   kernel, non-blocking stream    - one block per 1,024 elements, + cudaStreamSynchronize
 *   kernel, blocking stream        - the same on a cudaStreamDefault stream
 *   kernel, legacy stream 0
 *   kernel, blocking + SetDevice   - cudaSetDevice(0) before each launch (xpar does)
 *   kernel + the library's API calls - cudaPointerGetAttributes, cudaSetDevice, launch,
 *                                    cudaGetLastError, sync: the runtime calls of an xpar call
 *                                    (the library classifies through the driver's
 *                                    cuPointerGetAttributes, ~0.06 us cheaper: this row errs high)
 *   kernel, library's shape        - 256 threads x 16 elements (4 int4 stores) per thread
 *   xpar_fill, own stream          - the library as an application without a stream sees it
 *   xpar_fill, non-blocking stream - the same context after xpar_context_set_stream
 * Every output is checked once per round.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -o skc \
 *        bench/cub/experiments/stream_kind_cost.cu -L BUILD -lxpar -Xlinker -rpath=BUILD
 */
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fill_probe.cuh"
#include "xpar/xpar.h"

/* The library's shape for fill int32: 256 threads x 4 vectors of 4 (16 elements) each. */
__global__ void fill_vec_kernel(int *out, int v, size_t n) {
  size_t base = (size_t)blockIdx.x * 4096 + threadIdx.x * 4;
  for (int k = 0; k < 4; k++) {
    size_t i = base + (size_t)k * 1024;
    if (i + 3 < n) *reinterpret_cast<int4 *>(out + i) = make_int4(v, v, v, v);
  }
}

enum Row {
  K_NONBLOCKING, K_BLOCKING, K_LEGACY, K_BLOCKING_SETDEV, K_LIBRARY_CALLS, K_VEC_SHAPE, X_OWN,
  X_NONBLOCKING, ROWS
};
static const char *row_name[ROWS] = {"kernel, non-blocking stream", "kernel, blocking stream",
                                     "kernel, legacy stream 0",     "kernel, blocking + SetDevice",
                                     "kernel + the library's API calls", "kernel, library's shape",
                                     "xpar_fill, own stream",       "xpar_fill, non-blocking stream"};

int main(int argc, char **argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 2000;
  const int rounds = 10;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  xpar_context *own = nullptr, *nb = nullptr;
  if (xpar_context_create(&own) != XPAR_OK || xpar_context_create(&nb) != XPAR_OK) return 1;
  if (xpar_context_set_backend(own, XPAR_BACKEND_CUDA) != XPAR_OK ||
      xpar_context_set_backend(nb, XPAR_BACKEND_CUDA) != XPAR_OK) {
    fprintf(stderr, "set_backend: %s\n", xpar_last_error_detail());
    return 1;
  }
  cudaStream_t s_nb, s_b;
  CK(cudaStreamCreateWithFlags(&s_nb, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s_b, cudaStreamDefault));
  if (xpar_context_set_stream(nb, (void *)s_nb) != XPAR_OK) {
    fprintf(stderr, "set_stream: %s\n", xpar_last_error_detail());
    return 1;
  }
  for (int e : {14, 16, 18, 20}) {
    const size_t n = (size_t)1 << e;
    int *d;
    CK(cudaMalloc(&d, n * sizeof(int)));
    std::vector<int> host(n);
    std::vector<std::vector<double>> t(ROWS);
    for (int r = 0; r < rounds; r++) {
      for (int row0 = 0; row0 < ROWS; row0++) {
        int row = (row0 + r) % ROWS; /* rotate the order round by round */
        const int v = r * ROWS + row + 1;
        const unsigned grid = (unsigned)((n + 1023) / 1024);
        for (int c = -10; c < calls / rounds; c++) {
          double t0 = now_us();
          xpar_status st = XPAR_OK;
          switch (row) {
            case K_NONBLOCKING:
              fill_kernel<<<grid, 256, 0, s_nb>>>(d, v, n);
              CK(cudaStreamSynchronize(s_nb));
              break;
            case K_BLOCKING:
              fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n);
              CK(cudaStreamSynchronize(s_b));
              break;
            case K_LEGACY:
              fill_kernel<<<grid, 256, 0, 0>>>(d, v, n);
              CK(cudaStreamSynchronize(0));
              break;
            case K_BLOCKING_SETDEV:
              CK(cudaSetDevice(0));
              fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n);
              CK(cudaStreamSynchronize(s_b));
              break;
            case K_LIBRARY_CALLS: { /* classify, select, launch, check, sync */
              cudaPointerAttributes attr;
              CK(cudaPointerGetAttributes(&attr, d));
              CK(cudaSetDevice(0));
              fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n);
              CK(cudaGetLastError());
              CK(cudaStreamSynchronize(s_b));
              break;
            }
            case K_VEC_SHAPE:
              fill_vec_kernel<<<(unsigned)((n + 4095) / 4096), 256, 0, s_b>>>(d, v, n);
              CK(cudaStreamSynchronize(s_b));
              break;
            case X_OWN: st = xpar_fill(own, XPAR_INT32, &v, d, n); break;
            case X_NONBLOCKING: st = xpar_fill(nb, XPAR_INT32, &v, d, n); break;
          }
          double dt = now_us() - t0;
          if (st != XPAR_OK) {
            fprintf(stderr, "xpar_fill: %s\n", xpar_last_error_detail());
            return 1;
          }
          if (c >= 0) t[row].push_back(dt);
        }
        if (!fill_is(d, n, v, host, row_name[row])) return 1;
      }
    }
    printf("fill int32, n = 2^%d, %d calls per row (interleaved in %d rounds), host wall clock\n",
           e, calls, rounds);
    for (int row = 0; row < ROWS; row++) {
      printf("  %-32s ", row_name[row]);
      print_median_p90(t[row]);
      printf("\n");
    }
    CK(cudaFree(d));
  }
  xpar_context_destroy(own);
  xpar_context_destroy(nb);
  return 0;
}
