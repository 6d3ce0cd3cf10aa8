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

/* The largest team any index of a reduce or scan ran in (1 without OpenMP):
 * the operators' team, which must not shrink with n. */
static int32_t team_zero(void) { return 0; }
static int32_t team_max(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t team_here(const int32_t *in, size_t i) {
  (void)in;
  (void)i;
#if defined(_OPENMP)
  return omp_get_num_threads();
#else
  return 1;
#endif
}
XPAR_OPERATOR(xk_team_max_cpu_only, int32_t, int32_t, team_zero, team_max, team_here);

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
