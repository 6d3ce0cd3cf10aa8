/* The shipped operator examples (operators.xk.c) and their types. */
#ifndef XPAR_EXAMPLES_OPERATORS_H
#define XPAR_EXAMPLES_OPERATORS_H
#include <stdint.h>

#include "xpar/xpar_kernel.h"

/* A value and its index (argmin / argmax). */
typedef struct xk_arg {
  int32_t v;
  int32_t pad_;
  int64_t i;
} xk_arg;

/* The affine map h -> a h + b (the linear recurrence). */
typedef struct xk_affine {
  uint32_t a, b;
} xk_affine;

XPAR_OPERATOR_DECLARE(xk_argmin);
XPAR_OPERATOR_DECLARE(xk_argmax);
XPAR_OPERATOR_DECLARE(xk_recurrence);
XPAR_OPERATOR_DECLARE(xk_sumsq);
XPAR_OPERATOR_DECLARE(xk_sum_u32);
#endif
