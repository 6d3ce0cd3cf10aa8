/*
 * Adaptive AUTO (opt-in: XPAR_ADAPTIVE=1, xpar_context_set_adaptive): near a
 * crossing whose threshold is a built-in default or a profile's, time both
 * sides on the context's first calls of each size class and keep the faster
 * one.  Off by default: a call's tier is then a function of n, the data's
 * location and the thresholds, which the header promises and applications'
 * tests check.
 *
 * Why: a threshold is one machine's crossing.  Where the two sides' curves
 * meet at a shallow angle (the CPU tier and CUDA on mapped arrays, the
 * one-thread loop and the OpenMP team), the crossing moves a power of two
 * or more between machines of one kind and with what the application does
 * to the caches (bench/NOTES.md, session 17: up to 50 % on the OpenMP side),
 * and no fixed value stays within 10 % of the faster side everywhere
 * (regret_floor.py).  What is measured in the running process does.
 *
 * A cell is one (op, dtype, crossing, size class) of a context, the size
 * classes being the four powers of two around the threshold's, [t/4, 4t).
 * Its first XPAR__ADAPT_CALLS calls are a run on the threshold's side, then
 * a run on the other -- runs, not turns: a call's time depends on where the
 * previous call left the arrays' cache lines (an OpenMP call after a
 * one-thread call that wrote its output fetches every line from that one
 * core, and ran 1.5-2.3x its steady time on the H100 host: bench/NOTES.md,
 * session 18, where taking turns chose the wrong side at 27 points).  Each
 * run's first call is a warm-up (it moves the lines; a kernel's first launch
 * loads its module, a first OpenMP region starts the team) and its best of
 * the others counts (the best, not the median: the stalls of bench/NOTES.md
 * only ever add time).  Then the cell keeps the side that was
 * faster by at least XPAR__ADAPT_MARGIN, else the threshold decides, per n,
 * as without measuring.  Thresholds the application set (API, environment)
 * are instructions, never measured around.
 *
 * The facts that make a call measurable (both sides reach its data without
 * changing where its valid copies are) are dispatch.c's; this file keeps
 * the cells and the schedule.
 */
#ifndef XPAR_DISPATCH_ADAPTIVE_H
#define XPAR_DISPATCH_ADAPTIVE_H

#include <stdint.h>

#include "state.h"

enum {
  XPAR__ADAPT_CLASSES = 4,     /* size classes per crossing: [t/4, 4t)          */
  XPAR__ADAPT_CLASSES_BELOW = 2,
  XPAR__ADAPT_CALLS = 8,       /* measured calls per cell: a run of 4 per side */
};
/* The other side must be this much faster (best against best) to win; a
 * closer race is left to the threshold, so a cell's choice does not follow
 * noise between two nearly equal sides. */
#define XPAR__ADAPT_MARGIN 0.95

/* The crossings measured: a call's nearest applicable threshold. */
typedef enum xpar__crossing_kind {
  XPAR__CROSS_OPENMP = 0,     /* one thread | the OpenMP team, host-reachable data */
  XPAR__CROSS_GPU_DATA,       /* the CPU tier | CUDA, data valid on both sides     */
  XPAR__CROSS_DEVICE_ONLY,    /* the CPU tier (copies) | CUDA, device memory       */
  XPAR__CROSS_COUNT_
} xpar__crossing_kind;

/* What a cell decided. */
enum { XPAR__ADAPT_MEASURING = 0, XPAR__ADAPT_TIE, XPAR__ADAPT_SMALL_SIDE, XPAR__ADAPT_LARGE_SIDE };

typedef struct xpar__adapt_cell {
  size_t threshold;          /* the threshold measured around (0: empty cell)    */
  int num_threads;           /* the context's OpenMP team setting then           */
  xpar_tier tier[2];         /* [0] the side below the threshold, [1] above      */
  unsigned char calls;       /* calls measured so far (up to XPAR__ADAPT_CALLS)  */
  unsigned char seen[2];     /* calls per side so far                            */
  unsigned char verdict;     /* XPAR__ADAPT_*                                    */
  unsigned char first;       /* the side its first call ran: the threshold's     */
  uint64_t best_ns[2];       /* each side's best timed call (0: none yet)        */
} xpar__adapt_cell;

struct xpar__adapt_cells {
  xpar__adapt_cell cell[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR__CROSS_COUNT_]
                       [XPAR__ADAPT_CLASSES];
};

/* One call's part in its cell, between choosing and recording. */
typedef struct xpar__adapt_step {
  xpar__adapt_cell *cell; /* NULL: the call is not measured */
  int side;               /* 0 or 1: the side it runs */
  uint64_t start_ns;
} xpar__adapt_step;

static inline int xpar__floor_log2(size_t v) {
  return 63 - __builtin_clzll((unsigned long long)v);
}

/** Whether n lies in the size classes measured around threshold t (a call
 *  far from it, the common case, costs the first compare). */
static inline int xpar__adapt_in_band(size_t n, size_t t) {
  if (n < t / 8 || !t || t == XPAR_NEVER) return 0;
  const int idx = xpar__floor_log2(n) - xpar__floor_log2(t) + XPAR__ADAPT_CLASSES_BELOW;
  return idx >= 0 && idx < XPAR__ADAPT_CLASSES;
}

/**
 * The tier a call runs.  `tier` is the threshold's choice, `small` and
 * `large` the tiers below and above threshold t of crossing `kind` (one of
 * them is `tier`).  Outside the band, with adaptive mode off, or where no
 * cell can be had (memory), returns `tier` with step->cell NULL.  Inside,
 * fills the record's adapt_* fields and step; while the cell measures, the
 * caller times the run (xpar__adapt_start / xpar__adapt_record).
 */
xpar_tier xpar__adapt_choose(xpar_context *ctx, xpar_op op, xpar_dtype dtype, size_t n,
                             xpar__crossing_kind kind, size_t t, xpar_tier small, xpar_tier large,
                             xpar_tier tier, xpar__decision_raw *d, xpar__adapt_step *step);

/** Whether the step's call is timed (the cell is still measuring). */
static inline int xpar__adapt_timed(const xpar__adapt_step *s) {
  return s->cell && s->cell->verdict == XPAR__ADAPT_MEASURING;
}

/** Note the start of a timed call's run. */
void xpar__adapt_start(xpar__adapt_step *s);

/** Record a timed call's run (only calls that succeeded). */
void xpar__adapt_record(xpar__adapt_step *s);

/** Free a context's cells (context teardown). */
void xpar__adapt_free(xpar_context *ctx);

#endif /* XPAR_DISPATCH_ADAPTIVE_H */
