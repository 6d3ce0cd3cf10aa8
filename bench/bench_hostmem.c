/*
 * Host memory for the sweeps: how much is available (sweeps of 2^30 doubles
 * need 8 GiB per array, more than some machines have), and pinned buffers
 * for calibrating the pinned-host-data threshold.  xpar has no allocator of
 * its own, so pinned memory comes from the CUDA runtime linked into the
 * bench (BENCH_HAVE_CUDART); the pages it returns belong to the device's
 * primary context, which libxpar's own runtime shares, so xpar classifies
 * them as pinned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(BENCH_HAVE_CUDART)
#include <cuda_runtime_api.h>
#endif

#include "bench.h"

size_t bench_mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  size_t kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %zu kB", &kib) == 1) break;
  fclose(f);
  return kib * 1024;
}

/* cudaMallocHost (pinned) or cudaMalloc (device); NULL with the reason. */
static void *cuda_alloc(int pinned, size_t bytes, char *why, size_t why_size) {
#if defined(BENCH_HAVE_CUDART)
  void *p = NULL;
  cudaError_t e = pinned ? cudaMallocHost(&p, bytes ? bytes : 1) : cudaMalloc(&p, bytes ? bytes : 1);
  if (e == cudaSuccess) return p;
  snprintf(why, why_size, "%s(%zu): %s", pinned ? "cudaMallocHost" : "cudaMalloc", bytes,
           cudaGetErrorName(e));
  (void)cudaGetLastError(); /* not sticky: clear it */
  return NULL;
#else
  (void)pinned, (void)bytes;
  snprintf(why, why_size, "xpar-bench was built without the CUDA runtime");
  return NULL;
#endif
}

void *bench_alloc_pinned(size_t bytes, char *why, size_t why_size) {
  return cuda_alloc(1, bytes, why, why_size);
}

/* Device memory: the regret bench's device-resident data and the
 * calibration of the device-only threshold. */
void *bench_alloc_device(size_t bytes, char *why, size_t why_size) {
  return cuda_alloc(0, bytes, why, why_size);
}

void bench_free_pinned(void *p) {
#if defined(BENCH_HAVE_CUDART)
  if (p) cudaFreeHost(p);
#else
  (void)p;
#endif
}

void bench_free_device(void *p) {
#if defined(BENCH_HAVE_CUDART)
  if (p) cudaFree(p);
#else
  (void)p;
#endif
}

#if defined(BENCH_HAVE_CUDART)
/* Without a usable CUDA runtime (no driver, no device) there is no device
 * memory: every pointer is host memory.  Asked once. */
static int have_gpu(void) {
  static int known = -1;
  if (known < 0) {
    int count = 0;
    known = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    (void)cudaGetLastError();
  }
  return known;
}
#endif

int bench_copy(void *dst, const void *src, size_t bytes) {
#if defined(BENCH_HAVE_CUDART)
  if (!have_gpu()) {
    memcpy(dst, src, bytes);
    return 1;
  }
  /* cudaMemcpyDefault: unified addressing tells the direction (bench.h: when it returns) */
  return cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) == cudaSuccess;
#else
  memcpy(dst, src, bytes);
  return 1;
#endif
}

int bench_copy_settled(void *dst, const void *src, size_t bytes) {
  if (!bench_copy(dst, src, bytes)) return 0;
#if defined(BENCH_HAVE_CUDART)
  /* A cudaMemcpy from pageable memory to the device may return before its
   * DMA has landed (CUDA runtime API, "API synchronization behavior"); work
   * on a non-blocking stream (the CUB alternative's) is not ordered after
   * it.  Wait for the device, so what follows sees the bytes. */
  if (have_gpu()) return cudaDeviceSynchronize() == cudaSuccess;
#endif
  return 1;
}
