/*
 * Experiment (issue 12's mid-N device and mapped points, issue 11's latency): how should a
 * synchronous multi-block kernel whose output stays on the device tell the host it is done?
 *
 * xpar's synchronous add / axpy / fill and its multi-tile scans end with
 * cudaStreamSynchronize; its small reduce and one-tile scan instead have the kernel
 * raise a pinned flag the host spins on (1.9 us less at the floor on the H100 host,
 * bench/cub/NOTES.md session 13: 6.1 against 8.0 us).  Here, z = x + y on N device int32
 * in the library's shape (256 threads x 4 16-byte vectors per thread, one block per
 * tile), host wall clock per synchronous call, rows interleaved call by call:
 *   sync          - kernel, cudaStreamSynchronize (blocking stream, as xpar's own);
 *   ticket-flag   - every block: bar.sync, then thread 0 fences (gpu scope) and draws a
 *                   ticket; the last block raises a pinned flag with st.release.sys; the
 *                   host spins on it (the chain: each block's stores -> its release at gpu
 *                   scope -> the last block's acquire -> its release at system scope);
 *   writevalue    - kernel, then cuStreamWriteValue32 of the pinned flag, host spins;
 *   event-query   - kernel, cudaEventRecord, host spins on cudaEventQuery.
 * Checked: after every ticket-flag call a checking kernel on a second (non-blocking)
 * stream compares every element with x + y (the inputs change every call, so a stale
 * element counts), and the host reads the mismatch count after that stream's sync.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o dfc bench/cub/experiments/done_flag_cost.cu -lcuda
 *   ./dfc [rounds=21] [calls per round=100]
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_cuda.cuh"

constexpr int kThreads = 256, kVectors = 4, kTile = kThreads * kVectors * 4;

template <bool TICKET>
__global__ void __launch_bounds__(kThreads)
    add_kernel(const int *x, const int *y, int *z, int n, unsigned *ticket, unsigned *flag,
               unsigned seq) {
  const int base = blockIdx.x * kTile;
  if (base + kTile <= n) {
    const int4 *vx = reinterpret_cast<const int4 *>(x + base);
    const int4 *vy = reinterpret_cast<const int4 *>(y + base);
    int4 *vz = reinterpret_cast<int4 *>(z + base);
    int4 a[kVectors], b[kVectors];
#pragma unroll
    for (int u = 0; u < kVectors; u++) {
      a[u] = vx[threadIdx.x + u * kThreads];
      b[u] = vy[threadIdx.x + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kVectors; u++)
      vz[threadIdx.x + u * kThreads] =
          make_int4(a[u].x + b[u].x, a[u].y + b[u].y, a[u].z + b[u].z, a[u].w + b[u].w);
  } else {
    for (int i = base + threadIdx.x; i < n; i += kThreads) z[i] = x[i] + y[i];
  }
  if (!TICKET) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned t;
  asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(t) : "l"(ticket) : "memory");
  if (t != gridDim.x - 1) return;
  *ticket = 0; /* ready for the next launch (stream order) */
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
}

__global__ void refresh(int *x, int *y, int n, unsigned seq) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] = (int)(i * 2654435761u + seq);
    y[i] = (int)(seq * 40503u) - i;
  }
}

__global__ void check(const int *x, const int *y, const int *z, int n, unsigned *bad) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (z[i] != x[i] + y[i]) atomicAdd(bad, 1u);
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static bool spin(const unsigned *flag, unsigned seq) {
  const double t0 = now_us();
  for (unsigned polls = 1;; polls++) {
    if (reinterpret_cast<const std::atomic<unsigned> *>(flag)->load(std::memory_order_acquire) == seq)
      return true;
    if ((polls & 63u) == 0 && now_us() - t0 > 200000.0) return false;
  }
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 100;
  const int max_n = 1 << 22;
  int *x, *y, *z;
  unsigned *ticket, *bad;
  CK(cudaMalloc(&x, max_n * sizeof(int)));
  CK(cudaMalloc(&y, max_n * sizeof(int)));
  CK(cudaMalloc(&z, max_n * sizeof(int)));
  CK(cudaMalloc(&ticket, 64));
  CK(cudaMemset(ticket, 0, 64));
  CK(cudaMallocManaged(&bad, 64));
  unsigned *flag_h, *flag_d;
  CK(cudaHostAlloc(&flag_h, 64, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  *flag_h = 0;
  cudaStream_t s, other;
  CK(cudaStreamCreate(&s));
  CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  unsigned seq = 0;
  const char *names[4] = {"sync", "ticket-flag", "writevalue", "event-query"};
  unsigned long long failures = 0, fallbacks = 0;
  std::printf("# done_flag_cost: z = x + y, int32 on the device, %d rounds x %d calls, host wall clock\n",
              rounds, calls);
  for (int lg = 10; lg <= 22; lg += 2) {
    const int n = 1 << lg;
    const int grid = (n + kTile - 1) / kTile;
    std::vector<double> per_round[4];
    for (int r = 0; r < rounds; r++) {
      std::vector<double> t[4];
      for (int c = 0; c < calls + 5; c++)
        for (int m = 0; m < 4; m++) {
          const int k = (m + c + r) % 4;
          ++seq;
          refresh<<<64, 256, 0, s>>>(x, y, n, seq);
          CK(cudaStreamSynchronize(s));
          const double t0 = now_us();
          if (k == 1) {
            add_kernel<true><<<grid, kThreads, 0, s>>>(x, y, z, n, ticket, flag_d, seq);
            if (!spin(flag_h, seq)) {
              fallbacks++;
              CK(cudaStreamSynchronize(s));
            }
          } else {
            add_kernel<false><<<grid, kThreads, 0, s>>>(x, y, z, n, ticket, flag_d, seq);
            if (k == 0) CK(cudaStreamSynchronize(s));
            if (k == 2) {
              if (cuStreamWriteValue32(s, (CUdeviceptr)flag_d, seq, CU_STREAM_WRITE_VALUE_DEFAULT) !=
                  CUDA_SUCCESS) {
                std::fprintf(stderr, "cuStreamWriteValue32 failed\n");
                return 1;
              }
              if (!spin(flag_h, seq)) fallbacks++;
            }
            if (k == 3) {
              CK(cudaEventRecord(ev, s));
              while (cudaEventQuery(ev) == cudaErrorNotReady) {
              }
            }
          }
          const double t1 = now_us();
          if (c >= 5) t[k].push_back(t1 - t0);
          if (k == 1) { /* is every element there for another stream, right after the flag? */
            *bad = 0;
            check<<<128, 256, 0, other>>>(x, y, z, n, bad);
            CK(cudaStreamSynchronize(other));
            failures += *bad;
          }
          CK(cudaStreamSynchronize(s));
        }
      for (int k = 0; k < 4; k++) {
        std::sort(t[k].begin(), t[k].end());
        per_round[k].push_back(t[k][t[k].size() / 2]);
      }
    }
    for (int k = 0; k < 4; k++) {
      std::sort(per_round[k].begin(), per_round[k].end());
      std::printf("DFC n=2^%-2d %-12s median of round medians %7.2f us  (rounds %7.2f .. %7.2f)\n",
                  lg, names[k], per_round[k][rounds / 2], per_round[k][0], per_round[k][rounds - 1]);
    }
  }
  CK(cudaGetLastError());
  std::printf("DFC check: %llu stale elements seen after the flag, %llu spin fallbacks\n", failures,
              fallbacks);
  return failures ? 1 : 0;
}
