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

/* A point (12 bytes: the GPU tiers do not take it, AUTO runs it on the CPU). */
typedef struct xk_point {
  float x, y, z;
} xk_point;

/* Predicates (XPAR_PREDICATE) for xpar_select_op and xpar_partition_op. */
XPAR_PREDICATE_DECLARE(xk_even_i32);    /* int32: even                                */
XPAR_PREDICATE_DECLARE(xk_rise_f64);    /* double: above the element before it        */
XPAR_PREDICATE_DECLARE(xk_in_box_point); /* xk_point inside [0, 1)^3                  */
#endif
