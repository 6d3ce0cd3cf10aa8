/*
 * What the GPU tests that capture CUDA graphs share (test_graph_capture_gpu.cu,
 * test_capture_no_pools_gpu.cu): a seeded generator, device arrays that have landed
 * when they are made, the capture's state, an element-wise comparison.  The including
 * file defines `static int failures` (gpu_app_checks.h) and seeds rng_state.
 */
#ifndef XPAR_TESTS_GPU_CAPTURE_CHECKS_H
#define XPAR_TESTS_GPU_CAPTURE_CHECKS_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

#include "gpu_app_checks.h"

static unsigned long long rng_state;
static uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

static std::vector<int32_t> random_i32(size_t n) {
  std::vector<int32_t> v(n);
  for (auto &e : v) e = (int32_t)(next_u32() % 2001u) - 1000;
  return v;
}

template <class T> static std::vector<T> to_host(const T *d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/* A host-to-device copy that has landed when it returns.  cudaMemcpy from pageable memory
 * returns once the data is staged, its DMA possibly still in flight on the legacy stream,
 * which the tests' non-blocking streams do not wait for: a graph launched right after read
 * the tail of an array from before the copy (on the H100 host, 2026-11-26, a replay's
 * operator scan was wrong from element 917,504 on).  Never called during a capture. */
static void to_device(void *d, const void *h, size_t bytes) {
  CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
}

template <class T> static T *device_copy(const std::vector<T> &h) {
  T *d = NULL;
  CK(cudaMalloc(&d, h.size() * sizeof(T) + 1));
  to_device(d, h.data(), h.size() * sizeof(T));
  return d;
}

template <class T> static void upload(T *d, const std::vector<T> &h) {
  to_device(d, h.data(), h.size() * sizeof(T));
}

/* n elements of T, every byte 0xAB. */
template <class T> static T *device_poisoned(size_t n) {
  T *d = NULL;
  CK(cudaMalloc(&d, n * sizeof(T) + 1));
  CK(cudaMemset(d, 0xAB, n * sizeof(T)));
  CK(cudaDeviceSynchronize()); /* a memset of device memory may return before it lands */
  return d;
}

static void capture_status_is(cudaStream_t s, cudaStreamCaptureStatus want, const char *after) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CK(cudaStreamIsCapturing(s, &status));
  if (status != want)
    FAIL("after %s: capture status %d, expected %d", after, (int)status, (int)want);
}
static void still_capturing(cudaStream_t s, const char *after) {
  capture_status_is(s, cudaStreamCaptureStatusActive, after);
}

static void check_equal(const char *what, const std::vector<int32_t> &got,
                        const std::vector<int32_t> &want) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); i++)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (bad)
    FAIL("%s: %zu of %zu elements wrong, first [%zu] = %d, expected %d", what, bad, want.size(),
         first, got[first], want[first]);
}

/* The test's start: rng_state seeded from XPAR_TEST_SEED (else the time; printed under
 * the test's name); false, with the reason printed, when no usable GPU is there (the test
 * then exits 77: CTest's skip). */
static bool seeded_with_gpu(const char *test) {
  const char *s = getenv("XPAR_TEST_SEED");
  rng_state = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
  printf("%s: seed %llu\n", test, rng_state);
  xpar_device_info info;
  XK(xpar_device_query(&info));
  if (!info.usable) printf("skipped: no usable GPU (%s)\n", info.reason);
  return info.usable != 0;
}

#endif /* XPAR_TESTS_GPU_CAPTURE_CHECKS_H */
