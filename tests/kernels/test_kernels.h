/* The suite's kernels (test_kernels.xk.c, test_kernels_cpu_only.xk.c). */
#ifndef XPAR_TESTS_KERNELS_H
#define XPAR_TESTS_KERNELS_H
#include "xpar/xpar_kernel.h"
XPAR_KERNEL_DECLARE(xk_axpy_u32);
XPAR_KERNEL_DECLARE(xk_gather_i64);
XPAR_KERNEL_DECLARE(xk_poly_f64);
XPAR_KERNEL_DECLARE(xk_print);
XPAR_KERNEL_DECLARE(xk_square_cpu_only);
XPAR_KERNEL_DECLARE(xk_team_size_cpu_only);
XPAR_OPERATOR_DECLARE(xk_team_max_cpu_only);
#ifdef __cplusplus
extern "C"
#endif
int xk_set_default_threads(int threads);
#endif
