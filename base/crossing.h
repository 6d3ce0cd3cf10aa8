/*
 * Reading a threshold off two measured curves: the rule xpar-bench calibrate
 * applies to the built-in ops' OpenMP thresholds and xpar_kernel_calibrate to
 * an application kernel's thresholds.  Pure functions over arrays of seconds
 * indexed by exponent (n = 2^e); no other dependency, so the bench compiles
 * this same file (it links libxpar, whose xpar__ symbols are hidden).
 */
#ifndef XPAR_BASE_CROSSING_H
#define XPAR_BASE_CROSSING_H

#ifdef __cplusplus
extern "C" {
#endif

#define XPAR__EXP_NEVER (-1)   /* the second side is never faster at the largest n */
#define XPAR__EXP_NO_DATA (-2) /* nothing to compare */

/**
 * The crossover of a (first side) to b (second side) over exponents lo..hi:
 * the smallest e such that b[e'] < a[e'] at every e' >= e where both are
 * known.  NAN = not measured (skipped); INFINITY = pruned (slower than
 * anything).  XPAR__EXP_NEVER if b is not faster at the largest comparable e,
 * XPAR__EXP_NO_DATA if nothing is comparable.
 */
int xpar__crossing(const double *a, const double *b, int lo, int hi);

/** A threshold chosen between two curves (xpar__threshold_pick). */
typedef struct xpar__threshold_choice {
  int pick;         /* exponent of the threshold, or XPAR__EXP_NEVER      */
  int crossing;     /* xpar__crossing's answer (NO_DATA read as NEVER)     */
  double worst;     /* AUTO's worst ratio (chosen side / faster side) with
                       the pick, over the points where both are known     */
  int worst_at;     /* where that worst ratio is (-1: no point)           */
} xpar__threshold_choice;

/**
 * The threshold for AUTO between `below` (run under the threshold) and
 * `above` (at or over it), measured at 2^lo..2^hi.  The curves need not
 * cross once (near-ties flip with noise; the OpenMP tier runs one thread at
 * small n), so the threshold is the candidate (2^k for k in lo..hi, or
 * never) that minimises AUTO's worst ratio over the sweep; with a single
 * crossing that is the crossing itself.  Near-ties (within 2 %) go to the
 * candidate nearest the crossing.  Points where either side is NAN are
 * ignored.  hi - lo < 64.
 */
xpar__threshold_choice xpar__threshold_pick(const double *below, const double *above, int lo,
                                            int hi);

#ifdef __cplusplus
}
#endif

#endif /* XPAR_BASE_CROSSING_H */
