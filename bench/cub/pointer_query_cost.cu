/*
 * What classifying one pointer costs: the runtime's
 * cudaPointerGetAttributes, which xpar used per operand, against the driver's
 * queries, reached through cudaGetDriverEntryPointByVersion as
 * backend_cuda/cuda_state.cu does:
 *   RT  cudaPointerGetAttributes
 *   D2  cuPointerGetAttributes(MEMORY_TYPE, IS_MANAGED)   (what ships)
 *   D1  cuPointerGetAttributes(MEMORY_TYPE)
 *   S1  cuPointerGetAttribute(MEMORY_TYPE)
 *   SM  cuPointerGetAttribute(IS_MANAGED)
 * Pinned (cudaMallocHost), registered (cudaHostRegister), pageable, device and
 * managed pointers; median ns per query over 31 batches of 20,000, the
 * variants interleaved batch by batch.  D2's answers are checked against the
 * runtime's, and the raw answers printed (memory type alone calls managed
 * memory device memory: H100 host, 2026-11-26).
 *
 * Not part of the build: bench/run-regret-h100.sh compiles and runs it
 *   nvcc -O2 -arch=sm_90 bench/cub/pointer_query_cost.cu -o pqc && ./pqc
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef CUresult(CUDAAPI *get_attributes_fn)(unsigned int, CUpointer_attribute *, void **,
                                             CUdeviceptr);
typedef CUresult(CUDAAPI *get_attribute_fn)(void *, CUpointer_attribute, CUdeviceptr);

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static void *entry(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return fn;
}

int main() {
  get_attributes_fn gets = (get_attributes_fn)entry("cuPointerGetAttributes");
  get_attribute_fn get1 = (get_attribute_fn)entry("cuPointerGetAttribute");
  if (!gets || !get1) {
    printf("pointer_query_cost: no driver entry points for cuPointerGetAttribute(s)\n");
    return 1;
  }
  const size_t bytes = 1 << 20;
  void *pinned = nullptr, *device = nullptr, *managed = nullptr;
  void *pageable = malloc(bytes), *registered = malloc(bytes);
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess || cudaMalloc(&device, bytes) != cudaSuccess ||
      cudaMallocManaged(&managed, bytes) != cudaSuccess || !pageable || !registered ||
      cudaHostRegister(registered, bytes, cudaHostRegisterDefault) != cudaSuccess) {
    printf("pointer_query_cost: allocation failed\n");
    return 1;
  }
  struct target {
    const char *name;
    const char *p;
  } targets[] = {{"pinned", (const char *)pinned + 4096},
                 {"registered", (const char *)registered + 4096},
                 {"pageable", (const char *)pageable + 4096},
                 {"device", (const char *)device + 4096},
                 {"managed", (const char *)managed + 4096}};
  const CUpointer_attribute both[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       CU_POINTER_ATTRIBUTE_IS_MANAGED};
  int failures = 0;
  printf("# raw answers: D2 (type, managed) rc; S1 type rc; SM managed rc\n");
  for (const target &t : targets) {
    const CUdeviceptr p = (CUdeviceptr)(uintptr_t)t.p;
    cudaPointerAttributes a = {};
    cudaPointerGetAttributes(&a, t.p);
    (void)cudaGetLastError();
    unsigned long long v[2] = {0, 0}, s1 = 0, sm = 0;
    void *data[2] = {&v[0], &v[1]};
    CUresult r2 = gets(2, (CUpointer_attribute *)both, data, p);
    CUresult r1 = get1(&s1, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
    CUresult rm = get1(&sm, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    printf("%-10s D2 (%llu, %llu) rc %d; S1 %llu rc %d; SM %llu rc %d\n", t.name, v[0], v[1],
           (int)r2, s1, (int)r1, sm, (int)rm);
    /* the driver's answer (as cuda_state.cu reads it) must agree with the runtime's */
    int expect = a.type == cudaMemoryTypeManaged  ? 3
                 : a.type == cudaMemoryTypeHost   ? 1
                 : a.type == cudaMemoryTypeDevice ? 2
                                                  : 0;
    int got = r2 != CUDA_SUCCESS               ? -1
              : v[1]                           ? 3
              : v[0] == CU_MEMORYTYPE_HOST     ? 1
              : v[0] == CU_MEMORYTYPE_DEVICE   ? 2
              : v[0] == 0                      ? 0
                                               : -2;
    if (got != expect) {
      printf("%-10s MISMATCH: runtime says %d, driver %d\n", t.name, expect, got);
      failures++;
    }
  }
  enum { RT, D2, D1, S1, SM, NV };
  printf("# median ns per query (31 batches x 20000, interleaved)\n");
  printf("%-10s %8s %8s %8s %8s %8s\n", "pointer", "RT", "D2", "D1", "S1", "SM");
  const int calls = 20000;
  for (const target &t : targets) {
    std::vector<double> tv[NV];
    const CUdeviceptr p = (CUdeviceptr)(uintptr_t)t.p;
    for (int b = 0; b < 31; ++b) {
      for (int v = 0; v < NV; ++v) {
        double t0 = now_s();
        for (int i = 0; i < calls; ++i) {
          unsigned long long val[2] = {0, 0};
          void *data[2] = {&val[0], &val[1]};
          switch (v) {
            case RT: {
              cudaPointerAttributes x;
              cudaPointerGetAttributes(&x, t.p);
              asm volatile("" : : "r"(&x) : "memory");
              break;
            }
            case D2: gets(2, (CUpointer_attribute *)both, data, p); break;
            case D1: gets(1, (CUpointer_attribute *)both, data, p); break;
            case S1: get1(&val[0], CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p); break;
            default: get1(&val[0], CU_POINTER_ATTRIBUTE_IS_MANAGED, p); break;
          }
          asm volatile("" : : "r"(val) : "memory");
        }
        if (v == RT) (void)cudaGetLastError();
        tv[v].push_back((now_s() - t0) / calls * 1e9);
      }
    }
    printf("%-10s", t.name);
    for (int v = 0; v < NV; ++v) {
      std::sort(tv[v].begin(), tv[v].end());
      printf(" %8.1f", tv[v][15]);
    }
    printf("\n");
  }
  cudaHostUnregister(registered);
  cudaFreeHost(pinned);
  cudaFree(device);
  cudaFree(managed);
  free(pageable);
  free(registered);
  printf("%s\n", failures ? "pointer_query_cost: the driver's answers DIFFER" :
                            "pointer_query_cost: the driver's answers agree with the runtime's");
  return failures ? 1 : 0;
}
