/* A kernel compiled for the CPU only (xpar_add_kernels ... CPU_ONLY), in
 * every build: the suite's kernel without a GPU variant. */
#include <stdint.h>

#include "xpar/xpar_kernel.h"
#if defined(_OPENMP)
#include <omp.h>
#endif

/* out[i] = x[i]^2 in uint32.  0: x (read), 1: out (write). */
XPAR_KERNEL(xk_square_cpu_only, i) {
  const uint32_t *x = XPAR_ARRAY(const uint32_t, 0);
  uint32_t *out = XPAR_ARRAY(uint32_t, 1);
  out[i] = x[i] * x[i];
}

/* out[i] = the size of the team that ran index i (1 without OpenMP), for the
 * thread cap of application loops.  0: out (write). */
XPAR_KERNEL(xk_team_size_cpu_only, i) {
  int32_t *out = XPAR_ARRAY(int32_t, 0);
#if defined(_OPENMP)
  out[i] = omp_get_num_threads();
#else
  out[i] = 1;
#endif
}

/* The OpenMP runtime's default team for the calling thread (its nthreads ICV,
 * what OMP_NUM_THREADS sets), as an application may raise it; returns the one
 * before, or 0 without OpenMP (nothing changed). */
int xk_set_default_threads(int threads) {
#if defined(_OPENMP)
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  return before;
#else
  (void)threads;
  return 0;
#endif
}
