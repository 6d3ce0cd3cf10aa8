/*
 * Experiment (issue 11, reduce >= 1.02 x CUB at 2^29-2^30): what is the fastest
 * any kernel reads device memory on this GPU?
 *
 * xpar's reduce and CUB's both read 3046-3080 GB/s at 2^30 (4 GiB), above the
 * device-to-device copy's 3019 GB/s (read + write).  Every variant of the
 * library's kernel tried so far (16/8/4 loads in flight, 4 or 8 blocks/SM, a
 * grid of k x SMs) stayed within 0.994-0.998 x CUB there.  This measures
 * read-only sum kernels of other shapes against CUB in the same process,
 * interleaved, events, median of ROUNDS:
 *   grid-stride  - 16-byte ld.global.nc.L1::no_allocate.L2::256B loads, U in flight;
 *   contiguous   - each block reads one contiguous range (DRAM page locality);
 *   bulk copy    - the Hopper bulk-copy engine (cp.async.bulk, 1-D) filling
 *                  shared-memory stages that complete on an mbarrier, consumers
 *                  summing from shared memory (few load instructions, deep queue).
 * Every sum (uint32, wrapping) is checked against CUB's.
 *
 * Session 26 adds the bulk copies with an L2 evict-first policy (the read
 * data is never used again) and 2^31 (8 GiB, an 8-byte reduce of 2^30).
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o rc bench/cub/experiments/read_ceiling.cu && ./rc [ROUNDS] [MAX_EXP]
 */
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "check_cuda.cuh"

__global__ void fill(unsigned *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = x;
  }
}

__device__ __forceinline__ uint4 ld_stream(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ void finish(unsigned s, unsigned *out) {
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

template <int U> __global__ void __launch_bounds__(256) grid_stride(const uint4 *in, size_t nv, unsigned *out) {
  unsigned s = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < nv; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) v[u] = ld_stream(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < nv; i += stride) {
    const uint4 v = ld_stream(in + i);
    s += v.x + v.y + v.z + v.w;
  }
  finish(s, out);
}

template <int U> __global__ void __launch_bounds__(256) contiguous(const uint4 *in, size_t nv, unsigned *out) {
  const size_t per = (nv + gridDim.x - 1) / gridDim.x;
  const size_t lo = blockIdx.x * per, hi = min(nv, lo + per);
  unsigned s = 0;
  size_t i = lo + threadIdx.x;
  for (; i + (U - 1) * 256 < hi; i += U * 256) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) v[u] = ld_stream(in + i + u * 256);
#pragma unroll
    for (int u = 0; u < U; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < hi; i += 256) {
    const uint4 v = ld_stream(in + i);
    s += v.x + v.y + v.z + v.w;
  }
  finish(s, out);
}

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* Bulk copies of STAGE bytes into STAGES shared-memory stages; tile t of the
 * grid-stride sequence goes to stage t % STAGES. */
template <int STAGES, int STAGE, bool EVICT_FIRST = false>
__global__ void __launch_bounds__(256) bulk(const uint4 *in, size_t nv, unsigned *out) {
  extern __shared__ __align__(128) uint4 buf[];
  __shared__ __align__(8) unsigned long long bar[STAGES];
  constexpr size_t tile_v = STAGE / 16;
  const size_t tiles = nv / tile_v;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  unsigned long long policy = 0;
  if (EVICT_FIRST) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  auto issue = [&](size_t tile, int s) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar[s])),
                 "r"(STAGE)
                 : "memory");
    if (EVICT_FIRST)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], "
          "%4;" ::"r"(smem_addr(buf + s * tile_v)),
          "l"(in + tile * tile_v), "r"(STAGE), "r"(smem_addr(&bar[s])), "l"(policy)
          : "memory");
    else
      asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(buf + s * tile_v)),
        "l"(in + tile * tile_v), "r"(STAGE), "r"(smem_addr(&bar[s]))
        : "memory");
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; s++) {
      const size_t t = blockIdx.x + (size_t)s * gridDim.x;
      if (t < tiles) issue(t, s);
    }
  unsigned sum = 0;
  int it = 0;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, it++) {
    const int s = it % STAGES;
    const unsigned parity = (unsigned)(it / STAGES) & 1u;
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(smem_addr(&bar[s])), "r"(parity)
          : "memory");
    const uint4 *b = buf + s * tile_v;
#pragma unroll 4
    for (size_t k = threadIdx.x; k < tile_v; k += 256) {
      const uint4 v = b[k];
      sum += v.x + v.y + v.z + v.w;
    }
    __syncthreads(); /* the stage is read by everyone before it is refilled */
    if (threadIdx.x == 0) {
      const size_t nt = t + (size_t)STAGES * gridDim.x;
      if (nt < tiles) issue(nt, s);
    }
  }
  /* the tail that is not a whole tile */
  for (size_t k = tiles * tile_v + blockIdx.x * 256 + threadIdx.x; k < nv; k += (size_t)gridDim.x * 256) {
    const uint4 v = in[k];
    sum += v.x + v.y + v.z + v.w;
  }
  finish(sum, out);
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  const unsigned seed = 0x9e3779b9u ^ (unsigned)time(nullptr);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("read_ceiling: %d SMs, seed %u, median of %d (events), interleaved\n", sms, seed, rounds);
  const int max_e = argc > 2 ? std::atoi(argv[2]) : 30; /* 31: 8 GiB, an 8-byte 2^30 */
  for (int e = 28; e <= max_e; e++) {
    const size_t n = (size_t)1 << e, nv = n / 4;
    unsigned *in = nullptr, *res = nullptr;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&res, 64 * 4));
    fill<<<sms * 8, 256>>>(in, n, seed);
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, in, res, (long long)n));
    CK(cudaMalloc(&tmp, tmp_bytes));
    struct Variant {
      std::string name;
      std::function<void(unsigned *)> run;
      std::vector<float> ms;
      unsigned sum;
    };
    const uint4 *v4 = reinterpret_cast<const uint4 *>(in);
    std::vector<Variant> vs;
    vs.push_back({"cub DeviceReduce::Sum", [&](unsigned *o) {
                    size_t tb = tmp_bytes;
                    CK(cub::DeviceReduce::Sum(tmp, tb, in, o, (long long)n));
                  }});
    auto add = [&](std::string name, auto kernel, int grid, size_t smem) {
      if (smem > 0) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      vs.push_back({name, [=](unsigned *o) {
                      CK(cudaMemsetAsync(o, 0, 4));
                      kernel<<<grid, 256, smem>>>(v4, nv, o);
                    }});
    };
    add("grid-stride U4 x 4/SM", grid_stride<4>, sms * 4, 0);
    add("grid-stride U8 x 4/SM", grid_stride<8>, sms * 4, 0);
    add("grid-stride U4 x 8/SM", grid_stride<4>, sms * 8, 0);
    add("contiguous U4 x 4/SM", contiguous<4>, sms * 4, 0);
    add("contiguous U8 x 8/SM", contiguous<8>, sms * 8, 0);
    add("bulk 4 x 32K x 1/SM", bulk<4, 32768>, sms, 4 * 32768);
    add("bulk 4 x 16K x 2/SM", bulk<4, 16384>, sms * 2, 4 * 16384);
    add("bulk 8 x 16K x 1/SM", bulk<8, 16384>, sms, 8 * 16384);
    add("bulk 3 x 16K x 4/SM", bulk<3, 16384>, sms * 4, 3 * 16384);
    add("bulk 4 x 16K x 2/SM evict1st", bulk<4, 16384, true>, sms * 2, 4 * 16384);
    add("bulk 4 x 32K x 1/SM evict1st", bulk<4, 32768, true>, sms, 4 * 32768);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = -2; r < rounds; r++)
      for (size_t k = 0; k < vs.size(); k++) {
        auto &v = vs[(k + r + 2) % vs.size()];
        CK(cudaEventRecord(a));
        v.run(res + ((k + r + 2) % vs.size()));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 0) v.ms.push_back(ms);
      }
    std::vector<unsigned> sums(vs.size());
    CK(cudaMemcpy(sums.data(), res, vs.size() * 4, cudaMemcpyDeviceToHost));
    float cub_med = 0;
    for (size_t k = 0; k < vs.size(); k++) {
      auto &v = vs[k];
      std::sort(v.ms.begin(), v.ms.end());
      const float med = v.ms[v.ms.size() / 2];
      if (k == 0) cub_med = med;
      std::printf("RC 2^%d %-24s %8.1f us %7.0f GB/s  x CUB %.3f  min %8.1f us  %s\n", e, v.name.c_str(),
                  med * 1e3, n * 4 / (med * 1e-3) / 1e9, cub_med / med, v.ms.front() * 1e3,
                  sums[k] == sums[0] ? "sum ok" : "SUM WRONG");
    }
    CK(cudaFree(tmp));
    CK(cudaFree(res));
    CK(cudaFree(in));
  }
  return 0;
}
