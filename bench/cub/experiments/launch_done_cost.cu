/*
 * Experiment (session 21): what a synchronous xpar_launch of an application kernel costs on
 * device data, against the built-in xpar_axpy of the same size and the application's own
 * launch of the same kernel followed by cudaStreamSynchronize.  Before XPAR_KERNEL_ABI 4 the
 * application's kernels ended a synchronous call with the stream's synchronisation, the
 * built-in ones on their done signal (backend_cuda/done_signal.cuh); the prediction was
 * ~1 us per call off xpar_launch at 2^10-2^22 (session 19: 1.0-1.2 us for the built-in add),
 * landing on xpar_axpy's time.  Built against both trees (the header's launch signature
 * differs; this file compiles against either):
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I TREE/include -o ldc \
 *        bench/cub/experiments/launch_done_cost.cu -L BUILD -lxpar -Xlinker -rpath=BUILD
 *
 * (with -DXPAR_KERNEL_FNS_HAVE_HANDLE for a tree whose xpar_kernel has gpu_handle, session 21)
 *
 * 2^24 and 2^26 (session 22) show the application kernel from DRAM, where the built-in
 * kernels launch one block per tile (its one-wave grid against a tile grid: no difference,
 * bench/NOTES.md, session 22, call 6).
 *
 * Rows take turns batch by batch (200 calls), 21 rounds; median and p90 of the rounds'
 * per-call means, microseconds, host wall clock.  A fourth row times the kernel's
 * occupancy query alone (the generated ldc_saxpy__xpar_gpu_occupancy, which xpar asked on
 * every launch until session 21's memo).  Every row computes y = a x + y on the
 * same float arrays (a = 1, x = 0: y unchanged, so the rounds compare like with like).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "xpar/xpar.h"
#include "xpar/xpar_kernel.h"

XPAR_KERNEL(ldc_saxpy, i) {
  const float a = XPAR_SCALAR(float, 0);
  const float *x = XPAR_ARRAY(const float, 1);
  float *y = XPAR_ARRAY(float, 2);
  y[i] = a * x[i] + y[i];
}
/* The kernel object, which xpar_add_kernels' C side would define (no CPU variant here:
 * the backend is forced to CUDA). */
#ifdef XPAR_KERNEL_FNS_HAVE_HANDLE /* set by the build line of the tree with gpu_handle */
static const xpar_kernel ldc_saxpy = {XPAR_KERNEL_ABI, "ldc_saxpy", NULL,
                                      ldc_saxpy__xpar_gpu_launch, ldc_saxpy__xpar_gpu_occupancy,
                                      ldc_saxpy__xpar_gpu_handle};
#else
static const xpar_kernel ldc_saxpy = {XPAR_KERNEL_ABI, "ldc_saxpy", NULL,
                                      ldc_saxpy__xpar_gpu_launch, ldc_saxpy__xpar_gpu_occupancy};
#endif

#define CK(x)                                                                      \
  do {                                                                             \
    auto e_ = (x);                                                                 \
    if (e_ != 0) {                                                                 \
      fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* The application's own launch of the same grid-stride kernel: the shape xpar would
 * choose is not known here, so a common one (256 threads, one index per thread up to
 * 132 x 8 blocks). */
static void app_launch(size_t n, const float *x, float *y, float a, cudaStream_t s) {
  xpar_kernel_args args = {};
  args.ptr[1] = (void *)x;
  args.ptr[2] = y;
  *(float *)args.scalar[0].bytes = a;
  const size_t want = (n + 255) / 256;
  const unsigned grid = (unsigned)(want < 132 * 8 ? want : 132 * 8);
#if XPAR_KERNEL_ABI >= 4
  const xpar_kernel_done none = {NULL, NULL, 0};
  ldc_saxpy__xpar_grid<<<grid, 256, 0, s>>>(n, args, none);
#else
  ldc_saxpy__xpar_grid<<<grid, 256, 0, s>>>(n, args);
#endif
  CK(cudaStreamSynchronize(s));
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 21, batch = 200;
  const size_t max_n = (size_t)1 << 26;
  float *x, *y;
  CK(cudaMalloc(&x, max_n * sizeof(float)));
  CK(cudaMalloc(&y, max_n * sizeof(float)));
  CK(cudaMemset(x, 0, max_n * sizeof(float)));
  CK(cudaMemset(y, 0, max_n * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  xpar_context *ctx;
  CK(xpar_context_create(&ctx));
  CK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  CK(xpar_context_set_stream(ctx, s));
  const float a = 1.0f;
  printf("# launch_done_cost: XPAR_KERNEL_ABI %d, %d rounds x %d calls, us per synchronous call\n",
         XPAR_KERNEL_ABI, rounds, batch);
  printf("# %-6s %22s %22s %22s %22s\n", "n", "xpar_launch p50/p90", "xpar_axpy p50/p90",
         "own launch+sync p50/p90", "occupancy query p50/p90");
  for (int e = 10; e <= 26; e += 2) {
    const size_t n = (size_t)1 << e;
    xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_FLOAT, &a), XPAR_ARG_IN(XPAR_FLOAT, x, n),
                        XPAR_ARG_INOUT(XPAR_FLOAT, y, n)};
    std::vector<double> t[4];
    for (int r = -1; r < rounds; r++)
      for (int row = 0; row < 4; row++) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < batch; k++) {
          if (row == 0) CK(xpar_launch(ctx, &ldc_saxpy, n, args, 3));
          else if (row == 1) CK(xpar_axpy(ctx, XPAR_FLOAT, &a, x, y, n));
          else if (row == 2) app_launch(n, x, y, a, s);
          else {
            int per_sm = 0;
            CK(ldc_saxpy__xpar_gpu_occupancy(256, &per_sm));
          }
        }
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count() / batch;
        if (r >= 0) t[row].push_back(us); /* round -1: warm-up */
      }
    printf("2^%-6d", e);
    for (auto &v : t) {
      std::sort(v.begin(), v.end());
      printf(" %10.2f / %-9.2f", v[v.size() / 2], v[v.size() * 9 / 10]);
    }
    printf("\n");
  }
  CK(xpar_context_set_stream(ctx, NULL));
  xpar_context_destroy(ctx);
  cudaFree(x), cudaFree(y);
  return 0;
}
