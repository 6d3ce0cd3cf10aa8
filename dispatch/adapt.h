/*
 * AUTO that corrects itself (docs/dispatch.md, "Adaptation").  AUTO's
 * thresholds were measured on an idle machine; on a loaded one the tier they
 * choose can be far slower than the next best.  For every place AUTO may
 * move a call -- per (op or kernel, dtype, where the data lives, log2 n) -- a
 * *site* keeps a running estimate of the call time of the tier the
 * thresholds chose (the static tier) and of the tier AUTO would move to (the
 * alternative: OpenMP -> one thread, the GPU -> the CPU tier).  When the
 * static tier runs far slower than the alternative is known to cost, the
 * alternative runs; the static tier is retried now and then (a bounded share
 * of the time, with backoff) and takes the call back when it is fast again.
 *
 * The logic is two functions over a site's numbers, pure (no clock, no
 * context): xpar__adapt_choose says which tier the next timed call runs,
 * xpar__adapt_observe folds its measured time in.  Dispatch reads the clock
 * and runs the call; tests feed synthetic timings (tests/test_adapt.c).
 */
#ifndef XPAR_DISPATCH_ADAPT_H
#define XPAR_DISPATCH_ADAPT_H

#include <stdint.h>

#include "xpar/xpar.h"

/* Where a call's data lives, as far as the cost of its tiers goes (the
 * policy's classes, policy.h: host data, data valid only on the device,
 * data valid on the device and perhaps the host). */
typedef enum xpar__adapt_where {
  XPAR__ADAPT_HOST_DATA = 0,
  XPAR__ADAPT_DEVICE_ONLY_DATA,
  XPAR__ADAPT_DEVICE_DATA,
  XPAR__ADAPT_WHERE_COUNT
} xpar__adapt_where;

/* Sites per (op, dtype) and where: one per power of two of n, 2^47 and up
 * sharing the last. */
enum { XPAR__ADAPT_BUCKETS = 48 };

/* ---- the rules, as data (each with its reason) ---------------------------- */
/* The alternative takes the call when the static tier's estimate is more than
 * this times the alternative's: far enough above the noise of one loaded
 * machine's timings that a tier near its threshold (where both cost the same
 * by definition) is not moved back and forth. */
#define XPAR__ADAPT_MOVE_FACTOR 1.25f
/* The static tier takes the call back when it measures at most this times the
 * alternative: the calibrated choice is trusted again as soon as it is about
 * as fast (the gap between the two factors keeps a choice from flapping). */
#define XPAR__ADAPT_BACK_FACTOR 1.10f
/* A site's static tier looks slowed when its estimate is this far above the
 * fastest it has been: the alternative is then timed again soon (the load
 * may have changed what it costs too). */
#define XPAR__ADAPT_SLOWED_FACTOR 2.0f
/* While adapted, a drop of the alternative's estimate below this share of its
 * level when last compared says the machine got lighter: the static tier is
 * retried at once (within the time share below, relaxed to
 * XPAR__ADAPT_QUICK_SHARE). */
#define XPAR__ADAPT_LIGHTER_FACTOR 0.7f
/* The first look at the alternative (not adapted, nothing measured of it)
 * could cost far more than the static tier's call: a 2^28 sum of device
 * data took 0.35 ms on the H100 and 30 ms as a CPU look, copies included.
 * Its cost is taken as prior_factor times the static tier's best time --
 * n over the threshold the static tier starts at: the two cost the same at
 * the threshold, and the alternative grows at least linearly with n (an
 * overestimate where the static tier grows too) -- and the look waits for
 * its time share of that (XPAR__ADAPT_PRIOR_MAX caps the factor).  An OpenMP
 * site whose machine has no room (a CPU load the idle thresholds did not
 * see), and a site whose static tier looks slowed, look at once. */

/* Calls between timing the tier not running: starts at MIN_GAP, doubles after
 * every time that did not change the choice, up to MAX_GAP_ADAPTED while the
 * alternative runs (the static tier is back within ~100 calls of the load
 * ending) and MAX_GAP_STATIC otherwise (on an idle machine the alternative
 * is timed ever more rarely). */
enum {
  XPAR__ADAPT_MIN_GAP = 16,
  XPAR__ADAPT_MAX_GAP_ADAPTED = 64,
  XPAR__ADAPT_MAX_GAP_STATIC = 4096
};
/* And time: the tier not running is timed only once this many times its
 * last estimate has passed since it was last timed, so those calls cost at
 * most ~1/SHARE of the run (1/QUICK_SHARE after the machine got lighter). */
#define XPAR__ADAPT_SHARE 16.0f
#define XPAR__ADAPT_QUICK_SHARE 2.0f
/* The time share guards against a retry costing what the displaced tier cost
 * under load -- an estimate taken under load, so the return after the load
 * ends waits for it too (16 x 30 ms = 0.5 s for a 2^20 add on the 2-core
 * VM).  When the static tier is OpenMP and the machine has room for it now --
 * the other runnable tasks (Linux: /proc/loadavg) plus its team fit the
 * machine's online CPUs, give or take ROOM_SLACK -- the retry does not
 * wait for the share: the load it was measured under is gone.  The room is
 * read at most once per ROOM_REFRESH_NS per process; one retry that finds
 * the tier still slow stops the room from counting at that site until the
 * site is back on the static tier (the room cannot see every load: CPU
 * quotas, memory traffic). */
#define XPAR__ADAPT_ROOM_REFRESH_NS 1000000u
/* Runnable tasks beyond the CPUs that still leave room: a machine's own
 * background (kernel threads, agents) shows one or two at any instant -- one
 * in 8 CPUs, at least one -- while a load that slows OpenMP fills every
 * CPU. */
#define XPAR__ADAPT_ROOM_SLACK(cpus) ((cpus) / 8 > 1 ? (cpus) / 8 : 1)
/* After a parallel region libgomp's workers spin before they sleep (300,000
 * rounds unless OMP_WAIT_POLICY / GOMP_SPINCOUNT say otherwise: ~15-20 ms
 * where a pause costs ~140 cycles): runnable, they would read as a load
 * filling the machine just after every OpenMP call.  Within this long after
 * this process's OpenMP tier last ran (none with OMP_WAIT_POLICY=passive),
 * up to its team less one of the runnable tasks are taken for its own team,
 * with the slack of one task in 8 CPUs only from 8 CPUs up (on 2 CPUs the
 * two together would read a busy process per core as room).  (The H100
 * host's load-change run missed 27 of 144 points while they counted.) */
#define XPAR__ADAPT_OMP_SPIN_NS 25000000u
/* The first look's prior factor at most: n / threshold times the static
 * tier's time at n overestimates where the static tier grows with n too (a
 * 2^26 add on device data, threshold 2^4: 2^22, a first look after hours);
 * capped, the look comes within 16 x 256 static calls (1.4 s for a 2^28
 * device sum), and at once when the static tier looks slowed. */
#define XPAR__ADAPT_PRIOR_MAX 256.0f
/* Timed calls: every one where the running tier's estimate is above
 * SAMPLE_ALL_NS (two clock reads cost ~50 ns, under 2.5 % of such a call),
 * else one in SAMPLE_PERIOD (the rest pay a counter decrement). */
#define XPAR__ADAPT_SAMPLE_ALL_NS 2000.0f
enum { XPAR__ADAPT_SAMPLE_PERIOD = 8 };

/* One tier's call time at one site, in nanoseconds.  A tier's first call at a
 * site, and the first of a tier not run for a while, can pay for waking it
 * (the OpenMP pool's creation or its sleeping threads: 2.4 ms against 15 us
 * warm for a 2^18 reduce on the 2-core development VM): the second sample
 * replaces the first, and a probe that does not decide is repeated once, its
 * second time the one that counts. */
typedef struct xpar__adapt_estimate {
  float recent_ns; /* running estimate: each timed call moves it a quarter of
                      the way; a call timed after a gap replaces it */
  float best_ns;   /* the lowest running estimate seen */
  uint32_t samples;
} xpar__adapt_estimate;

/* Which of a site's two tiers. */
enum { XPAR__ADAPT_STATIC = 0, XPAR__ADAPT_ALT = 1 };

typedef struct xpar__adapt_site {
  unsigned char static_tier; /* the thresholds' choice (XPAR_TIER_NONE: unused) */
  unsigned char alt_tier;    /* where AUTO moves the call                         */
  unsigned char adapted;     /* 1: the alternative runs                           */
  unsigned char probe_again; /* the last probe did not decide: probe once more   */
  unsigned char room_probing; /* the current retry was taken for the room        */
  unsigned char room_failed;  /* a retry for the room found the tier still slow  */
  int32_t sample_in;         /* calls until the next timed one (dispatch counts)  */
  uint32_t sample_period;    /* calls between timed ones                          */
  uint32_t calls_since_probe; /* calls since the tier not running was last timed  */
  uint32_t probe_gap;        /* calls between such times (backoff)                */
  float alt_ref_ns;          /* the alternative's estimate when last compared     */
  float alt_prior_factor;    /* the alternative's prior, in static-tier times     */
  uint64_t start_ns;         /* the clock at the site's first timed call          */
  uint64_t last_probe_ns;    /* the clock when the other tier was last timed      */
  xpar__adapt_estimate est[2]; /* XPAR__ADAPT_STATIC, XPAR__ADAPT_ALT */
} xpar__adapt_site;

/* What the next timed call does. */
typedef struct xpar__adapt_choice {
  xpar_tier tier; /* the tier it runs */
  int probe;      /* 1: it times the tier not chosen now (a retry of the
                     displaced static tier, or a first look at the alternative);
                     2: a retry taken because the machine has room (above) */
} xpar__adapt_choice;

/** A site for the pair (static tier, alternative), nothing measured; the
 *  first call is timed.  prior_factor: xpar__adapt_alt's (below). */
void xpar__adapt_site_init(xpar__adapt_site *s, xpar_tier static_tier, xpar_tier alt_tier,
                           float prior_factor);
/** The tier a site runs between timed calls. */
static inline xpar_tier xpar__adapt_running(const xpar__adapt_site *s) {
  return (xpar_tier)(s->adapted ? s->alt_tier : s->static_tier);
}
/** Which tier a timed call at clock now_ns runs, and whether it is a probe of
 *  the tier not chosen.  room: 1 when the machine has room for the static
 *  tier now, 0 when it has not (xpar__adapt_cpu_room), -1 not read (read only
 *  where xpar__adapt_wants_room).  Pure: reads the site only. */
xpar__adapt_choice xpar__adapt_choose(const xpar__adapt_site *s, uint64_t now_ns, int room);
/** Whether the machine's room would decide the next timed call of site s,
 *  whose static tier is OpenMP: adapted, a retry for the room once the retry
 *  gap is over (unless the room failed it); not adapted, the first look at
 *  the alternative, taken at once where there is no room. */
static inline int xpar__adapt_wants_room(const xpar__adapt_site *s) {
  if (s->static_tier != (unsigned char)XPAR_TIER_CPU_OPENMP || s->probe_again) return 0;
  if (!s->adapted)
    return s->est[XPAR__ADAPT_STATIC].samples >= 2 && !s->est[XPAR__ADAPT_ALT].samples;
  return !s->room_failed && s->calls_since_probe >= s->probe_gap;
}
/** 1 when the other runnable tasks of the machine plus `threads` (the
 *  OpenMP tier's team) fit the machine's online CPUs, read from
 *  /proc/loadavg at most once per XPAR__ADAPT_ROOM_REFRESH_NS (the value
 *  read last otherwise); 0 where that cannot be known (not Linux, no /proc).
 *  (The online CPUs, not the calling thread's affinity: OMP_PROC_BIND pins
 *  the initial thread to one CPU.) */
int xpar__adapt_cpu_room(int threads, uint64_t now_ns);
/** The room from a reading: `others` runnable tasks besides the reader
 *  (-1: unknown), `cpus` online, the OpenMP tier's `threads` (0: one per
 *  CPU), and whether this process's OpenMP team may still be spinning
 *  (XPAR__ADAPT_OMP_SPIN_NS).  Pure. */
int xpar__adapt_room_from(int others, int cpus, int threads, int team_may_spin);
/** This process's OpenMP tier ran a timed call ending at now_ns (its team
 *  may spin a while: xpar__adapt_cpu_room). */
void xpar__adapt_openmp_ran(uint64_t now_ns);
/** Fold a timed call into the site: it ran `tier` (a probe when `probe`) for
 *  `ns` nanoseconds and ended at clock now_ns.  Moves the choice when the
 *  numbers say so; sets the next sample countdown.  Pure over the site. */
void xpar__adapt_observe(xpar__adapt_site *s, xpar_tier tier, int probe, double ns,
                         uint64_t now_ns);
/** The site of a bucket: log2 n, the last bucket for everything above. */
static inline int xpar__adapt_bucket(size_t n) {
  const int b = n ? 63 - __builtin_clzll((unsigned long long)n) : 0;
  return b < XPAR__ADAPT_BUCKETS ? b : XPAR__ADAPT_BUCKETS - 1;
}
/** A row of sites (every where and bucket), calloc'd: all unused. */
xpar__adapt_site *xpar__adapt_row_new(void);
/** The monotonic clock in nanoseconds (the timed calls' clock). */
uint64_t xpar__adapt_now_ns(void);

#endif /* XPAR_DISPATCH_ADAPT_H */
