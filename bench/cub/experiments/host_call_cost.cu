/*
 * Experiment (issue 12, small calls on host data): where the 0.15-0.25 us that a 128-element
 * xpar_fill on pageable memory takes over a plain loop goes on the H100 host (the regret run
 * of session 10: fill int32 pageable 2^7, xpar 0.29 us, plain loop 0.07), and what a pinned
 * operand's classification costs through each driver or runtime query that could answer
 * "is this host memory?" (the pinned answer cannot be cached: dispatch/page_cache.h).
 *
 * Linked against the library's objects (not libxpar.so) so that it can time the pieces
 * below the public API.  The last two rows time the first batch after a 16-thread OpenMP
 * region (the regret bench's state after an OpenMP alternative); the three after them split
 * a pinned call (the memory itself, the look-up and the loop in sequence).  Each row is a batch of back-to-back calls, nanoseconds per call;
 * the rows take turns batch by batch, median and p90 over the rounds.
 *
 *   objs=$(find BUILD/CMakeFiles/xpar.dir -name '*.o')
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I include -I dispatch -I . -DXPAR_STATIC_DEFINE=1 \
 *        -o hcc bench/cub/experiments/host_call_cost.cu $objs -Xcompiler -fopenmp -ldl -lcuda
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "xpar/xpar.h"

extern "C" {
#include "backend.h"
#include "page_cache.h"
xpar_status xpar__cuda_pointer_kind(const void *p, xpar__ptr_kind *out);
}

#define CK(x)                                                                     \
  do {                                                                            \
    auto e_ = (x);                                                                \
    if (e_ != 0) {                                                                \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, (int)e_); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

static double now_ns() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

__attribute__((noipa)) static void plain_fill(int32_t *out, int32_t v, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = v;
}

enum Row {
  PLAIN, AUTO_PAGEABLE, AUTO_N0, SERIAL_PAGEABLE, AUTO_OFFLOAD_OFF, AUTO_PINNED, AUTO_MALLOC_3,
  CACHE_LOOKUP, KIND_PINNED, KIND_PAGEABLE, DRV_ATTRS2_PINNED, DRV_ATTR1_PINNED,
  DRV_ATTR1_PAGEABLE, DRV_HOSTFLAGS_PINNED, DRV_HOSTFLAGS_PAGEABLE, DRV_HOSTFLAGS_DEVICE,
  DRV_RANGE_PINNED, RT_ATTRS_PINNED, DRV_CTX_CURRENT, PLAIN_AFTER_REGION, AUTO_AFTER_REGION,
  OFF_PINNED, KIND_THEN_PLAIN, PLAIN_PINNED, ROWS
};
static const char *row_name[ROWS] = {
    "plain fill loop, 128 int32",
    "xpar_fill AUTO, pageable, 128",
    "xpar_fill AUTO, pageable, n = 0",
    "xpar_fill forced serial, pageable, 128",
    "xpar_fill AUTO, offload disabled, 128",
    "xpar_fill AUTO, pinned, 128",
    "xpar_add AUTO, pageable, 128 (3 operands)",
    "page cache lookup (hit)",
    "xpar__cuda_pointer_kind, pinned",
    "xpar__cuda_pointer_kind, pageable",
    "cuPointerGetAttributes (2), pinned",
    "cuPointerGetAttribute MEMORY_TYPE, pinned",
    "cuPointerGetAttribute MEMORY_TYPE, pageable",
    "cuMemHostGetFlags, pinned",
    "cuMemHostGetFlags, pageable (error)",
    "cuMemHostGetFlags, device (error)",
    "cuMemGetAddressRange, pinned",
    "cudaPointerGetAttributes, pinned",
    "cuCtxGetCurrent",
    "plain fill, right after a 16-thread region",
    "xpar_fill AUTO pageable, after a region",
    "xpar_fill AUTO, offload disabled, pinned",
    "pointer_kind(pinned) + plain fill of it",
    "plain fill loop, pinned, 128",
};

static volatile unsigned long long sink;

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 41;
  const int batch = 2000;
  const size_t n = 128;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  xpar_context *autoc = nullptr, *serial = nullptr, *off = nullptr;
  CK(xpar_context_create(&autoc));
  CK(xpar_context_create(&serial));
  CK(xpar_context_create(&off));
  CK(xpar_context_set_backend(serial, XPAR_BACKEND_CPU_SERIAL));
  CK(xpar_context_set_offload(off, XPAR_OFFLOAD_DISABLED));
  int32_t *pageable = (int32_t *)aligned_alloc(64, 3 * 4096);
  int32_t *pinned = nullptr;
  int32_t *device = nullptr;
  CK(cudaMallocHost(&pinned, n * sizeof(int32_t)));
  CK(cudaMalloc(&device, n * sizeof(int32_t)));
  int32_t *pa = pageable, *pb = pageable + 1024, *pc = pageable + 2048;
  std::memset(pageable, 0, 3 * 4096);
  xpar__page_cache cache;
  xpar__page_cache_clear(&cache);
  xpar__page_cache_store(&cache, pageable);
  int32_t v = 7;
  CUcontext cu_ctx;
  /* one of each, checked, before timing */
  CK(xpar_fill(autoc, XPAR_INT32, &v, pinned, n));
  for (size_t i = 0; i < n; i++)
    if (pinned[i] != 7) {
      std::fprintf(stderr, "pinned fill wrong at %zu\n", i);
      return 1;
    }
  {
    xpar__ptr_kind k;
    CK(xpar__cuda_pointer_kind(pinned, &k));
    std::printf("# kind(pinned) = %d, kind(pageable) = ", (int)k);
    CK(xpar__cuda_pointer_kind(pageable, &k));
    std::printf("%d\n", (int)k);
    unsigned flags = 0;
    CUresult r = cuMemHostGetFlags(&flags, pinned);
    std::printf("# cuMemHostGetFlags: pinned %d (flags %u), ", (int)r, flags);
    r = cuMemHostGetFlags(&flags, pageable);
    std::printf("pageable %d, ", (int)r);
    r = cuMemHostGetFlags(&flags, device);
    std::printf("device %d\n", (int)r);
    unsigned mt = 0;
    r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)pageable);
    std::printf("# cuPointerGetAttribute(pageable) = %d, type %u\n", (int)r, mt);
  }
  std::vector<std::vector<double>> t(ROWS);
  for (int r = 0; r < rounds; r++) {
    for (int row0 = 0; row0 < ROWS; row0++) {
      const int row = (row0 + r) % ROWS; /* rotate the order */
      unsigned long long acc = 0;
      if (row == PLAIN_AFTER_REGION || row == AUTO_AFTER_REGION) {
        /* the state the regret bench leaves for the next alternative after an OpenMP one:
         * the team's threads spinning on their cores for a while after the region */
#pragma omp parallel
        { sink = 1; }
      }
      const double t0 = now_ns();
      for (int b = 0; b < batch; b++) {
        switch (row) {
          case PLAIN:
          case PLAIN_AFTER_REGION: plain_fill(pa, v, n); break;
          case AUTO_AFTER_REGION:
          case AUTO_PAGEABLE: CK(xpar_fill(autoc, XPAR_INT32, &v, pa, n)); break;
          case AUTO_N0: CK(xpar_fill(autoc, XPAR_INT32, &v, pa, 0)); break;
          case SERIAL_PAGEABLE: CK(xpar_fill(serial, XPAR_INT32, &v, pa, n)); break;
          case AUTO_OFFLOAD_OFF: CK(xpar_fill(off, XPAR_INT32, &v, pa, n)); break;
          case AUTO_PINNED: CK(xpar_fill(autoc, XPAR_INT32, &v, pinned, n)); break;
          case OFF_PINNED: CK(xpar_fill(off, XPAR_INT32, &v, pinned, n)); break;
          case PLAIN_PINNED: plain_fill(pinned, v, n); break;
          case KIND_THEN_PLAIN: {
            xpar__ptr_kind k;
            CK(xpar__cuda_pointer_kind(pinned, &k));
            plain_fill(pinned, v, n);
            acc += k;
            break;
          }
          case AUTO_MALLOC_3: CK(xpar_add(autoc, XPAR_INT32, pa, pb, pc, n)); break;
          case CACHE_LOOKUP: acc += xpar__page_cache_lookup(&cache, pageable); break;
          case KIND_PINNED:
          case KIND_PAGEABLE: {
            xpar__ptr_kind k;
            CK(xpar__cuda_pointer_kind(row == KIND_PINNED ? (void *)pinned : (void *)pageable, &k));
            acc += k;
            break;
          }
          case DRV_ATTRS2_PINNED: {
            CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                            CU_POINTER_ATTRIBUTE_IS_MANAGED};
            unsigned long long value[2] = {0, 0};
            void *data[2] = {&value[0], &value[1]};
            CK(cuPointerGetAttributes(2, which, data, (CUdeviceptr)pinned));
            acc += value[0];
            break;
          }
          case DRV_ATTR1_PINNED:
          case DRV_ATTR1_PAGEABLE: {
            unsigned mt = 0;
            (void)cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (CUdeviceptr)(row == DRV_ATTR1_PINNED ? pinned : pageable));
            acc += mt;
            break;
          }
          case DRV_HOSTFLAGS_PINNED:
          case DRV_HOSTFLAGS_PAGEABLE:
          case DRV_HOSTFLAGS_DEVICE: {
            unsigned flags = 0;
            void *p = row == DRV_HOSTFLAGS_PINNED ? (void *)pinned
                      : row == DRV_HOSTFLAGS_PAGEABLE ? (void *)pageable : (void *)device;
            acc += (unsigned)cuMemHostGetFlags(&flags, p) + flags;
            break;
          }
          case DRV_RANGE_PINNED: {
            CUdeviceptr base = 0;
            size_t size = 0;
            (void)cuMemGetAddressRange(&base, &size, (CUdeviceptr)pinned);
            acc += size;
            break;
          }
          case RT_ATTRS_PINNED: {
            cudaPointerAttributes a;
            CK(cudaPointerGetAttributes(&a, pinned));
            acc += a.type;
            break;
          }
          case DRV_CTX_CURRENT:
            CK(cuCtxGetCurrent(&cu_ctx));
            acc += (uintptr_t)cu_ctx;
            break;
        }
      }
      t[row].push_back((now_ns() - t0) / batch);
      sink = acc;
    }
  }
  for (size_t i = 0; i < n; i++)
    if (pa[i] != 7 || pb[i] != 0 || pc[i] != 7 || pinned[i] != 7) {
      std::fprintf(stderr, "wrong output at %zu\n", i);
      return 1;
    }
  std::printf("%-44s %10s %10s %10s\n", "row (ns per call)", "median", "p90", "min");
  for (int row = 0; row < ROWS; row++) {
    std::sort(t[row].begin(), t[row].end());
    std::printf("%-44s %10.1f %10.1f %10.1f\n", row_name[row], t[row][t[row].size() / 2],
                t[row][t[row].size() * 9 / 10], t[row][0]);
  }
  return 0;
}
