// The C++ baselines of cpu_sort_bench.c: std::sort and libstdc++'s parallel
// mode sort (__gnu_parallel::sort, OpenMP), called explicitly (the build does
// not define _GLIBCXX_PARALLEL).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#if defined(_OPENMP)
#include <parallel/algorithm>
#endif

extern "C" {

// dtype: 0 int32, 1 float, 2 int64
void cpu_sort_bench_std_sort(int dtype, void *p, size_t n) {
  switch (dtype) {
    case 0: std::sort(static_cast<int32_t *>(p), static_cast<int32_t *>(p) + n); break;
    case 1: std::sort(static_cast<float *>(p), static_cast<float *>(p) + n); break;
    default: std::sort(static_cast<int64_t *>(p), static_cast<int64_t *>(p) + n); break;
  }
}

// 0 when built without OpenMP (nothing sorted)
int cpu_sort_bench_gnu_parallel_sort(int dtype, void *p, size_t n, int threads) {
#if defined(_OPENMP)
  const __gnu_parallel::default_parallel_tag tag(threads);
  switch (dtype) {
    case 0: {
      int32_t *a = static_cast<int32_t *>(p);
      __gnu_parallel::sort(a, a + n, std::less<int32_t>(), tag);
      break;
    }
    case 1: {
      float *a = static_cast<float *>(p);
      __gnu_parallel::sort(a, a + n, std::less<float>(), tag);
      break;
    }
    default: {
      int64_t *a = static_cast<int64_t *>(p);
      __gnu_parallel::sort(a, a + n, std::less<int64_t>(), tag);
      break;
    }
  }
  return 1;
#else
  (void)dtype;
  (void)p;
  (void)n;
  (void)threads;
  return 0;
#endif
}

}  // extern "C"
