/*
 * Reproducible mode: the constants of the summation order that every tier
 * computes (docs/reproducible.md is the specification; this header is what
 * the backends share of it).  Usable from C and CUDA C++.
 *
 * In short (x the input, n elements; "+" is one IEEE-754 addition in the
 * accumulator type, rounded to nearest, never fused with a multiply):
 *  - blocks: block b is elements [b*B, min(n, (b+1)*B)), B = 8192;
 *  - lanes: inside a block, lane j (0 <= j < L = 1024) is
 *      ((((+0 + x[j]) + x[j+L]) + x[j+2L]) ... + x[j+7L])
 *    over the elements that exist (R = 8 rows of L elements);
 *  - the block total T_b is the lanes folded in halves: lane[i] =
 *    lane[i] + lane[i + h] for i < h, h = 512, 256, ..., 1; T_b = lane[0];
 *  - the sum is the aligned pairwise tree over the block totals T_0 ..
 *    T_{nb-1}, padded with +0 to a power of two (a node whose right half is
 *    all padding equals its left half: no total is ever -0);
 *  - dot: term = x[i] * y[i] rounded to the element type; wide sum of
 *    floats: term = (double)x[i], everything in double;
 *  - scan: carry C_b = init + (the aligned subtrees of the block-total tree
 *    that cover [0, b), largest first), folded left to right; inside a block
 *    quad q (elements 4q..4q+3 of the block) has the total
 *    U_q = ((x0 + x1) + x2) + x3, its seed is C_b folded with the aligned
 *    subtrees of the quad-total tree (2048 quads) that cover [0, q), largest
 *    first, and the elements of the quad run serially from the seed:
 *    inclusive out = (seed + x0), then + x1, ...; exclusive out[4q] = seed.
 */
#ifndef XPAR_DISPATCH_REPRO_SPEC_H
#define XPAR_DISPATCH_REPRO_SPEC_H

/* Lanes of a block, rows per lane, elements per block (L * R). */
#define XPAR__REPRO_LANES 1024u
#define XPAR__REPRO_ROWS 8u
#define XPAR__REPRO_BLOCK 8192u
/* Scan: elements per quad, quads per block, levels of the quad tree. */
#define XPAR__REPRO_QUAD 4u
#define XPAR__REPRO_QUADS 2048u
#define XPAR__REPRO_QUAD_LEVELS 11u

/* What a reproducible reduction sums. */
typedef enum xpar__repro_kind {
  XPAR__REPRO_SUM = 0,  /* x[i] in the element type                        */
  XPAR__REPRO_WIDE = 1, /* (double)x[i] for floats; doubles as SUM         */
  XPAR__REPRO_DOT = 2   /* x[i] * y[i] rounded to the element type         */
} xpar__repro_kind;

#endif /* XPAR_DISPATCH_REPRO_SPEC_H */
