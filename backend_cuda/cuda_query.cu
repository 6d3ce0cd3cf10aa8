/*
 * Detection: is there a driver, a device, and code for its architecture in
 * this build?  Probed once per device per process and cached; never fails
 * (and never crashes) on a machine without GPU or driver.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "cuda_state.cuh"

namespace xpar_cuda {
/* Does nothing; cudaFuncGetAttributes on it tells whether this binary holds
 * code the device can run (all kernels are built for the same targets). */
__global__ void probe_kernel(int *unused) {
  if (unused) *unused = 0;
}
} // namespace xpar_cuda

namespace {

constexpr int kCachedDevices = 64;

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
int g_count_probed;
cudaError_t g_count_error;
int g_device_count;
int g_cached[kCachedDevices];
xpar_device_info g_info[kCachedDevices];

/* "sm_90" or "sm_80, sm_90": the architectures this file was compiled for. */
void built_architectures(char *buf, size_t size) {
  buf[0] = '\0';
#if defined(__CUDA_ARCH_LIST__)
  static const int archs[] = {__CUDA_ARCH_LIST__};
  size_t used = 0;
  for (size_t i = 0; i < sizeof archs / sizeof archs[0] && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%ssm_%d", i ? ", " : "", archs[i] / 10);
#else
  snprintf(buf, size, "unknown architectures");
#endif
}

void probe_device(int dev, xpar_device_info *info) {
  cudaDeviceProp prop;
  cudaError_t err = cudaGetDeviceProperties(&prop, dev);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(info->reason, sizeof info->reason, "cannot read the properties of device %d (%s)",
             dev, cudaGetErrorName(err));
    return;
  }
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  info->total_memory = prop.totalGlobalMem;

  /* cudaFuncGetAttributes looks at the current device: select ours (the caller's
   * context goes back when the public call leaves: xpar__cuda_select_device). */
  err = xpar__cuda_select_device(dev);
  if (err == cudaSuccess) {
    cudaFuncAttributes attr;
    err = cudaFuncGetAttributes(&attr, xpar_cuda::probe_kernel);
  }
  const cudaError_t probe_error = err;
  (void)cudaGetLastError();

  if (probe_error == cudaErrorNoKernelImageForDevice ||
      probe_error == cudaErrorInvalidDeviceFunction || probe_error == cudaErrorInvalidKernelImage) {
    char built[64];
    built_architectures(built, sizeof built);
    snprintf(info->reason, sizeof info->reason,
             "no kernel image for sm_%d%d in this build (built for %s)", prop.major, prop.minor,
             built);
    return;
  }
  if (probe_error != cudaSuccess) {
    snprintf(info->reason, sizeof info->reason, "device %d cannot run kernels (%s)", dev,
             cudaGetErrorName(probe_error));
    return;
  }
  info->usable = 1;
}

} // namespace

extern "C" xpar_status xpar__cuda_query(int device, xpar_device_info *out) {
  pthread_mutex_lock(&g_lock);
  if (!g_count_probed) {
    g_count_error = cudaGetDeviceCount(&g_device_count);
    if (g_count_error != cudaSuccess) g_device_count = 0;
    (void)cudaGetLastError();
    g_count_probed = 1;
  }
  xpar_device_info info;
  memset(&info, 0, sizeof info);
  info.built_with_cuda = 1;
  info.device_count = g_device_count;
  info.device = -1;
  const int dev = device < 0 ? 0 : device;

  if (g_count_error == cudaErrorInsufficientDriver || g_count_error == cudaErrorStubLibrary) {
    snprintf(info.reason, sizeof info.reason, "no CUDA driver (%s)", cudaGetErrorName(g_count_error));
  } else if (g_count_error == cudaErrorNoDevice) {
    snprintf(info.reason, sizeof info.reason, "no device (%s)", cudaGetErrorName(g_count_error));
  } else if (g_count_error != cudaSuccess) {
    snprintf(info.reason, sizeof info.reason, "CUDA runtime unavailable (%s)",
             cudaGetErrorName(g_count_error));
  } else if (g_device_count == 0) {
    snprintf(info.reason, sizeof info.reason, "no device");
  } else if (dev >= g_device_count) {
    snprintf(info.reason, sizeof info.reason, "device %d requested but %d visible", dev,
             g_device_count);
  } else if (dev < kCachedDevices && g_cached[dev]) {
    info = g_info[dev];
  } else {
    info.device = dev;
    probe_device(dev, &info);
    if (dev < kCachedDevices) {
      g_info[dev] = info;
      g_cached[dev] = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  *out = info;
  return XPAR_OK;
}
