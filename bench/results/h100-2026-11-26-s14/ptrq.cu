// Cost of the driver/runtime pointer queries, per pointer kind (session 14).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
#define REPS 200000
typedef int (*q_fn)(const void *);
static int q_attrs2(const void *p) {
  CUpointer_attribute w[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned long long v[2] = {0, 0}; void *d[2] = {&v[0], &v[1]};
  return cuPointerGetAttributes(2, w, d, (CUdeviceptr)p) == CUDA_SUCCESS ? (int)(v[0] * 2 + v[1]) : -1;
}
static int q_attrs1(const void *p) {
  CUpointer_attribute w[1] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
  unsigned long long v[1] = {0}; void *d[1] = {&v[0]};
  return cuPointerGetAttributes(1, w, d, (CUdeviceptr)p) == CUDA_SUCCESS ? (int)v[0] : -1;
}
static int q_attr_type(const void *p) {
  unsigned int t = 0;
  CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
  return r == CUDA_SUCCESS ? (int)t : -(int)r;
}
static int q_attr_bufid(const void *p) {
  unsigned long long t = 0;
  CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)p);
  return r == CUDA_SUCCESS ? (int)t : -(int)r;
}
static int q_hostflags(const void *p) {
  unsigned int f = 0;
  CUresult r = cuMemHostGetFlags(&f, (void *)p);
  return r == CUDA_SUCCESS ? (int)f : -(int)r;
}
static int q_range(const void *p) {
  CUdeviceptr b = 0; size_t s = 0;
  CUresult r = cuMemGetAddressRange(&b, &s, (CUdeviceptr)p);
  return r == CUDA_SUCCESS ? 1 : -(int)r;
}
static int q_rt(const void *p) {
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  (void)cudaGetLastError();
  return e == cudaSuccess ? (int)a.type : -(int)e;
}
static int q_attrs4(const void *p) {
  CUpointer_attribute w[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned long long v[4] = {0, 0, 0, 0}; void *d[4] = {&v[0], &v[1], &v[2], &v[3]};
  return cuPointerGetAttributes(4, w, d, (CUdeviceptr)p) == CUDA_SUCCESS ? (int)(v[0] * 2 + v[1]) : -1;
}
static int q_ctx(const void *p) { CUcontext c; (void)p; return cuCtxGetCurrent(&c) == CUDA_SUCCESS; }
static int q_range2(const void *p) {
  CUpointer_attribute w[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned long long v[3] = {0, 0, 0}; void *d[3] = {&v[0], &v[1], &v[2]};
  return cuPointerGetAttributes(3, w, d, (CUdeviceptr)p) == CUDA_SUCCESS ? (int)v[0] : -1;
}
int main() {
  cudaSetDevice(0); cudaFree(0);
  void *pinned, *dev, *man, *page = malloc(4096);
  cudaMallocHost(&pinned, 4096); cudaMalloc(&dev, 4096); cudaMallocManaged(&man, 4096);
  // some unrelated allocations, as an application has
  for (int i = 0; i < 64; i++) { void *a; cudaMalloc(&a, 1 << 20); cudaMallocHost(&a, 1 << 16); }
  const char *names[] = {"attrs2(cur)", "attrs1", "attr_type", "attr_bufid", "hostflags", "addr_range", "rt_attrs", "ctx_current", "attrs3_range", "attrs4_range"};
  q_fn fns[] = {q_attrs2, q_attrs1, q_attr_type, q_attr_bufid, q_hostflags, q_range, q_rt, q_ctx, q_range2, q_attrs4};
  const void *ptrs[] = {page, pinned, dev, man};
  const char *pn[] = {"pageable", "pinned", "device", "managed"};
  printf("%-14s", "ns/call");
  for (int k = 0; k < 4; k++) printf(" %12s", pn[k]);
  printf("   (answers)\n");
  for (int f = 0; f < 10; f++) {
    printf("%-14s", names[f]);
    int ans[4];
    for (int k = 0; k < 4; k++) {
      double best = 1e30;
      for (int rep = 0; rep < 5; rep++) {
        double t0 = now(); volatile int s = 0;
        for (int i = 0; i < REPS; i++) s += fns[f](ptrs[k]);
        double t = (now() - t0) / REPS; if (t < best) best = t;
      }
      ans[k] = fns[f](ptrs[k]);
      printf(" %12.1f", best);
    }
    printf("   (%d %d %d %d)\n", ans[0], ans[1], ans[2], ans[3]);
  }
  return 0;
}
