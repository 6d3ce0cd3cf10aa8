/*
 * What classifying one pointer costs (issue 12): the runtime's
 * cudaPointerGetAttributes, which xpar used per operand, against the
 * driver's cuPointerGetAttributes asked for the two attributes xpar needs
 * (memory type, managed), reached through cudaGetDriverEntryPointByVersion
 * as backend_cuda/cuda_state.cu does.  Pinned, pageable, device and managed
 * pointers; median ns per query over 31 batches of 20,000, the variants
 * interleaved batch by batch; every answer checked against the runtime's.
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

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int main() {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    printf("pointer_query_cost: no driver entry point for cuPointerGetAttributes\n");
    return 1;
  }
  get_attributes_fn get = (get_attributes_fn)fn;
  const size_t bytes = 1 << 20;
  void *pinned = nullptr, *device = nullptr, *managed = nullptr;
  void *pageable = malloc(bytes);
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess || cudaMalloc(&device, bytes) != cudaSuccess ||
      cudaMallocManaged(&managed, bytes) != cudaSuccess || !pageable) {
    printf("pointer_query_cost: allocation failed\n");
    return 1;
  }
  struct target {
    const char *name;
    const char *p;
  } targets[] = {{"pinned", (const char *)pinned + 4096},
                 {"pageable", (const char *)pageable + 4096},
                 {"device", (const char *)device + 4096},
                 {"managed", (const char *)managed + 4096}};
  int failures = 0;
  printf("# pointer classification cost, median ns per query (31 batches x 20000)\n");
  printf("%-9s %22s %28s %8s\n", "pointer", "cudaPointerGetAttributes",
         "cuPointerGetAttributes (2)", "ratio");
  for (const target &t : targets) {
    /* the answers first: the driver's must agree with the runtime's */
    cudaPointerAttributes a = {};
    cudaPointerGetAttributes(&a, t.p);
    (void)cudaGetLastError();
    CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned long long v[2] = {0, 0};
    void *data[2] = {&v[0], &v[1]};
    CUresult r = get(2, which, data, (CUdeviceptr)(uintptr_t)t.p);
    int expect = a.type == cudaMemoryTypeManaged  ? 3
                 : a.type == cudaMemoryTypeHost   ? 1
                 : a.type == cudaMemoryTypeDevice ? 2
                                                  : 0;
    int got = r != CUDA_SUCCESS                ? -1
              : v[1]                           ? 3
              : v[0] == CU_MEMORYTYPE_HOST     ? 1
              : v[0] == CU_MEMORYTYPE_DEVICE   ? 2
              : v[0] == 0                      ? 0
                                               : -2;
    if (got != expect) {
      printf("%-9s MISMATCH: runtime says %d, driver %d (type %llu, managed %llu, rc %d)\n",
             t.name, expect, got, v[0], v[1], (int)r);
      failures++;
    }
    std::vector<double> rt, dr;
    const int calls = 20000;
    for (int b = 0; b < 31; ++b) {
      double t0 = now_s();
      for (int i = 0; i < calls; ++i) {
        cudaPointerAttributes x;
        cudaPointerGetAttributes(&x, t.p);
        asm volatile("" : : "r"(&x) : "memory");
      }
      (void)cudaGetLastError();
      double t1 = now_s();
      for (int i = 0; i < calls; ++i) {
        v[0] = v[1] = 0;
        get(2, which, data, (CUdeviceptr)(uintptr_t)t.p);
        asm volatile("" : : "r"(v) : "memory");
      }
      double t2 = now_s();
      rt.push_back((t1 - t0) / calls * 1e9);
      dr.push_back((t2 - t1) / calls * 1e9);
    }
    std::sort(rt.begin(), rt.end());
    std::sort(dr.begin(), dr.end());
    printf("%-9s %22.1f %28.1f %8.2f\n", t.name, rt[15], dr[15], rt[15] / dr[15]);
  }
  cudaFreeHost(pinned);
  cudaFree(device);
  cudaFree(managed);
  free(pageable);
  printf("%s\n", failures ? "pointer_query_cost: the driver's answers DIFFER" :
                            "pointer_query_cost: the driver's answers agree with the runtime's");
  return failures ? 1 : 0;
}
