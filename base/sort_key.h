/*
 * The sort order (xpar_sort, xpar_sort_pairs, xpar_argsort) as unsigned radix
 * keys: every tier sorts by these keys, stably, so every tier gives the same
 * permutation and the same output bits.  Usable from C and CUDA C++.
 *
 * The order (xpar.h states it for users):
 *  - integers: numeric;
 *  - floats: numeric, -0.0 and +0.0 equal (their input order kept), every
 *    NaN (either sign, any payload) equal to every other and after +inf;
 *  - descending: the reverse of ascending for unequal keys, equal keys still
 *    in input order (stable) -- NaNs first.
 * The radix key is the key's bits with -0.0 read as +0.0 and every NaN as
 * the positive quiet NaN, then mapped to an unsigned integer of the same
 * width whose unsigned order is the order above (the sign bit flipped for
 * integers and non-negative floats, every bit flipped for negative floats),
 * then inverted (~) for descending.  Sorting moves the keys' original bits:
 * the radix key only decides where they go (-0.0 stays -0.0, a NaN keeps its
 * sign and payload).
 *
 * Equality is the same everywhere: two keys are equal when their radix keys
 * are (xpar_unique's runs of equal elements use it: -0.0 == +0.0, NaN == NaN).
 */
#ifndef XPAR_BASE_SORT_KEY_H
#define XPAR_BASE_SORT_KEY_H

#include <stdint.h>

#if defined(__CUDACC__)
#define XPAR__SORT_KEY_FN static inline __host__ __device__
#else
#define XPAR__SORT_KEY_FN static inline
#endif

/** How a key's bits are read: the xpar_dtype family of the key. */
typedef enum xpar__sort_key_class {
  XPAR__SORT_KEY_SIGNED = 0,   /* int32, int64    */
  XPAR__SORT_KEY_UNSIGNED = 1, /* uint32, uint64  */
  XPAR__SORT_KEY_FLOAT = 2     /* float, double   */
} xpar__sort_key_class;

/** The 32-bit radix key of a key's bits; descending: 0 or 1. */
XPAR__SORT_KEY_FN uint32_t xpar__sort_radix32(uint32_t bits, int key_class, int descending) {
  uint32_t r;
  if (key_class == XPAR__SORT_KEY_SIGNED) {
    r = bits ^ 0x80000000u;
  } else if (key_class == XPAR__SORT_KEY_UNSIGNED) {
    r = bits;
  } else {
    const uint32_t mag = bits & 0x7fffffffu;
    if (mag == 0) bits = 0;                         /* -0.0 reads as +0.0 */
    else if (mag > 0x7f800000u) bits = 0x7fc00000u; /* every NaN reads as +qNaN */
    r = bits ^ ((bits & 0x80000000u) ? 0xffffffffu : 0x80000000u);
  }
  return descending ? ~r : r;
}

/** The 64-bit radix key of a key's bits; descending: 0 or 1. */
XPAR__SORT_KEY_FN uint64_t xpar__sort_radix64(uint64_t bits, int key_class, int descending) {
  const uint64_t sign = 0x8000000000000000ull;
  uint64_t r;
  if (key_class == XPAR__SORT_KEY_SIGNED) {
    r = bits ^ sign;
  } else if (key_class == XPAR__SORT_KEY_UNSIGNED) {
    r = bits;
  } else {
    const uint64_t mag = bits & ~sign;
    if (mag == 0) bits = 0;
    else if (mag > 0x7ff0000000000000ull) bits = 0x7ff8000000000000ull;
    r = bits ^ ((bits & sign) ? ~0ull : sign);
  }
  return descending ? ~r : r;
}

#undef XPAR__SORT_KEY_FN

#endif /* XPAR_BASE_SORT_KEY_H */
