/*
 * Experiment (issue 12, CUDA calls at mid N on device data): which layer of a synchronous
 * xpar call holds the 0.5-1.4 us it takes over a bare kernel + stream sync
 * (stream_kind_cost.cu cleared the stream kind and the runtime calls)?
 *
 * Linked against the library's objects (not libxpar.so) so that it can call the layers
 * below the public API.  Rows, each a synchronous fill of N device int32, host wall clock,
 * median / p90, the rows interleaved round by round, every output checked once per round:
 *   kernel + sync          - a bare fill kernel on a blocking stream, cudaStreamSynchronize
 *   backend                - xpar__cuda_fill on a state of its own (begin, checks, launch
 *                            shape, launch, launch check, sync): the CUDA layer alone
 *   public API, CUDA tier  - xpar_fill on a context forced to XPAR_BACKEND_CUDA
 *   public API, AUTO       - xpar_fill on a default context (device data: the CUDA tier)
 *   classify only          - xpar__cuda_pointer_kind on the device array (no kernel)
 *   kernel: launch | sync  - the bare kernel, the launch and the sync timed apart
 *   backend, n = 0         - xpar__cuda_fill's entry (sticky check, device select) only
 *   cudaSetDevice / cudaGetDevice alone
 *   backend nowait: call | wait - xpar__cuda_fill with nowait (returns once launched),
 *                            then xpar__cuda_wait, timed apart: host cost vs device time
 * public API - backend = the door, checks, classification, decision, trace and dispatch.
 *
 *   objs=$(find BUILD/CMakeFiles/xpar.dir -name '*.o')
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 \
 *        -o cpc bench/cub/experiments/call_path_cost.cu $objs -Xcompiler -fopenmp -ldl
 */
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fill_probe.cuh"
#include "xpar/xpar.h"

extern "C" {
#include "backend.h"
xpar_status xpar__cuda_state_create(int device, void *stream, struct xpar__cuda_state **out);
void xpar__cuda_state_destroy(struct xpar__cuda_state *st);
xpar_status xpar__cuda_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                            size_t n);
xpar_status xpar__cuda_pointer_kind(const void *p, xpar__ptr_kind *out);
xpar_status xpar__cuda_wait(struct xpar__cuda_state *st);
}

enum Row {
  KERNEL, BACKEND, API_CUDA, API_AUTO, CLASSIFY, KERNEL_SPLIT, BACKEND_SPLIT, BACKEND_EMPTY,
  SET_DEVICE, GET_DEVICE, ROWS
};
static const char *row_name[ROWS] = {"kernel + sync", "backend (xpar__cuda_fill)",
                                     "public API, CUDA tier", "public API, AUTO",
                                     "classify only (no kernel)",
                                     "kernel: launch | sync", "backend nowait: call | wait",
                                     "backend, n = 0 (begin only)", "cudaSetDevice(0) alone",
                                     "cudaGetDevice alone"};

int main(int argc, char **argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 2000;
  const int rounds = 10;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  xpar_context *forced = nullptr, *autoc = nullptr;
  if (xpar_context_create(&forced) != XPAR_OK || xpar_context_create(&autoc) != XPAR_OK) return 1;
  if (xpar_context_set_backend(forced, XPAR_BACKEND_CUDA) != XPAR_OK) {
    fprintf(stderr, "set_backend: %s\n", xpar_last_error_detail());
    return 1;
  }
  struct xpar__cuda_state *st = nullptr;
  if (xpar__cuda_state_create(0, NULL, &st) != XPAR_OK) {
    fprintf(stderr, "state: %s\n", xpar_last_error_detail());
    return 1;
  }
  xpar__exec ex = {};
  ex.cuda = st;
  cudaStream_t s_b;
  CK(cudaStreamCreateWithFlags(&s_b, cudaStreamDefault));
  for (int e : {14, 18}) {
    const size_t n = (size_t)1 << e;
    int *d;
    CK(cudaMalloc(&d, n * sizeof(int)));
    std::vector<int> host(n);
    std::vector<std::vector<double>> t(ROWS), t2(ROWS); /* t2: the split rows' second part */
    for (int r = 0; r < rounds; r++) {
      for (int row0 = 0; row0 < ROWS; row0++) {
        const int row = (row0 + r) % ROWS;
        const int v = r * ROWS + row + 1;
        const unsigned grid = (unsigned)((n + 1023) / 1024);
        if (row == CLASSIFY || row >= BACKEND_EMPTY) fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n); /* the check's value */
        CK(cudaDeviceSynchronize());
        for (int c = -10; c < calls / rounds; c++) {
          xpar_status s = XPAR_OK;
          xpar__ptr_kind kind = XPAR__PTR_HOST_PAGEABLE;
          double t0 = now_us();
          switch (row) {
            case KERNEL:
              fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n);
              CK(cudaStreamSynchronize(s_b));
              break;
            case BACKEND: s = xpar__cuda_fill(&ex, XPAR_INT32, &v, d, n); break;
            case API_CUDA: s = xpar_fill(forced, XPAR_INT32, &v, d, n); break;
            case API_AUTO: s = xpar_fill(autoc, XPAR_INT32, &v, d, n); break;
            case BACKEND_EMPTY: s = xpar__cuda_fill(&ex, XPAR_INT32, &v, d, 0); break;
            case SET_DEVICE: CK(cudaSetDevice(0)); break;
            case GET_DEVICE: {
              int dev = -1;
              CK(cudaGetDevice(&dev));
              break;
            }
            case CLASSIFY:
              s = xpar__cuda_pointer_kind(d, &kind);
              if (s == XPAR_OK && kind != XPAR__PTR_DEVICE) {
                fprintf(stderr, "classify: kind %d, expected device\n", (int)kind);
                return 1;
              }
              break;
          }
          double t1 = now_us();
          if (row == KERNEL_SPLIT) {
            fill_kernel<<<grid, 256, 0, s_b>>>(d, v, n);
            t1 = now_us();
            CK(cudaStreamSynchronize(s_b));
          } else if (row == BACKEND_SPLIT) {
            xpar__exec nw = ex;
            nw.nowait = 1;
            s = xpar__cuda_fill(&nw, XPAR_INT32, &v, d, n);
            t1 = now_us();
            if (s == XPAR_OK) s = xpar__cuda_wait(st);
          }
          double dt = now_us() - t0;
          if (c >= 0 && (row == KERNEL_SPLIT || row == BACKEND_SPLIT)) {
            t2[row].push_back(now_us() - t1);
            dt = t1 - t0;
          }
          if (s != XPAR_OK) {
            fprintf(stderr, "%s: %s\n", row_name[row], xpar_last_error_detail());
            return 1;
          }
          if (c >= 0) t[row].push_back(dt);
        }
        CK(cudaDeviceSynchronize());
        if (!fill_is(d, n, v, host, row_name[row])) return 1;
      }
    }
    printf("fill int32, n = 2^%d, %d calls per row (interleaved in %d rounds), host wall clock\n",
           e, calls, rounds);
    for (int row = 0; row < ROWS; row++) {
      printf("  %-28s ", row_name[row]);
      print_median_p90(t[row]);
      if (!t2[row].empty()) {
        printf("  | ");
        print_median_p90(t2[row]);
      }
      printf("\n");
    }
    CK(cudaFree(d));
  }
  xpar__cuda_state_destroy(st);
  xpar_context_destroy(forced);
  xpar_context_destroy(autoc);
  return 0;
}
