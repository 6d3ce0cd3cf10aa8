/*
 * Issue 12, pinned operands: which driver query classifies a pointer cheapest.
 * xpar asks cuPointerGetAttributes for two attributes (memory type, managed)
 * per pinned operand on every call (page_cache.h says why).  Here, per
 * pointer kind, median ns per query over 31 batches of 20,000, the variants
 * interleaved batch by batch:
 *   D2  cuPointerGetAttributes(MEMORY_TYPE, IS_MANAGED)  (what ships)
 *   D1  cuPointerGetAttributes(MEMORY_TYPE)
 *   S1  cuPointerGetAttribute(MEMORY_TYPE)
 *   SM  cuPointerGetAttribute(IS_MANAGED)
 * and the raw answers, to see whether memory type alone tells managed memory
 * apart (if it does not, a two-step query -- the type, then managed only for a
 * device answer -- would give pinned operands the one-attribute cost).
 *   nvcc -O2 -arch=sm_90 bench/cub/experiments/pointer_query_variants.cu -o pqv && ./pqv
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
    printf("pointer_query_variants: no driver entry points\n");
    return 1;
  }
  const size_t bytes = 1 << 20;
  void *pinned = nullptr, *device = nullptr, *managed = nullptr, *registered = malloc(bytes);
  void *pageable = malloc(bytes);
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess || cudaMalloc(&device, bytes) != cudaSuccess ||
      cudaMallocManaged(&managed, bytes) != cudaSuccess || !pageable || !registered ||
      cudaHostRegister(registered, bytes, cudaHostRegisterDefault) != cudaSuccess) {
    printf("pointer_query_variants: allocation failed\n");
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
  printf("# raw answers: D2 (type, managed) rc; S1 type rc; SM managed rc\n");
  for (const target &t : targets) {
    CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned long long v[2] = {0, 0};
    void *data[2] = {&v[0], &v[1]};
    CUresult r2 = gets(2, which, data, (CUdeviceptr)(uintptr_t)t.p);
    unsigned long long s1 = 0, sm = 0;
    CUresult r1 = get1(&s1, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)t.p);
    CUresult rm = get1(&sm, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)(uintptr_t)t.p);
    printf("%-10s D2 (%llu, %llu) rc %d; S1 %llu rc %d; SM %llu rc %d\n", t.name, v[0], v[1],
           (int)r2, s1, (int)r1, sm, (int)rm);
  }
  printf("# median ns per query (31 batches x 20000, interleaved)\n");
  printf("%-10s %8s %8s %8s %8s\n", "pointer", "D2", "D1", "S1", "SM");
  const int calls = 20000;
  for (const target &t : targets) {
    std::vector<double> tv[4];
    const CUdeviceptr p = (CUdeviceptr)(uintptr_t)t.p;
    for (int b = 0; b < 31; ++b) {
      for (int v = 0; v < 4; ++v) {
        double t0 = now_s();
        for (int i = 0; i < calls; ++i) {
          unsigned long long val[2] = {0, 0};
          if (v == 0) {
            CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                            CU_POINTER_ATTRIBUTE_IS_MANAGED};
            void *data[2] = {&val[0], &val[1]};
            gets(2, which, data, p);
          } else if (v == 1) {
            CUpointer_attribute which = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
            void *data = &val[0];
            gets(1, &which, &data, p);
          } else if (v == 2) {
            get1(&val[0], CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
          } else {
            get1(&val[0], CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
          }
          asm volatile("" : : "r"(val) : "memory");
        }
        tv[v].push_back((now_s() - t0) / calls * 1e9);
      }
    }
    printf("%-10s", t.name);
    for (int v = 0; v < 4; ++v) {
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
  return 0;
}
