/*
 * Output writers: a human table (one line per n, one column per tier) and a
 * long-format CSV (one row per n x tier), which plotting and calibration read.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

static void fmt_time(char *buf, size_t size, const bench_row *r) {
  if (r->ok < 0)
    snprintf(buf, size, "-");
  else if (r->ok == 0)
    snprintf(buf, size, "WRONG");
  else if (r->t.median_s < 1e-3)
    snprintf(buf, size, "%.2fus", r->t.median_s * 1e6);
  else
    snprintf(buf, size, "%.3fms", r->t.median_s * 1e3);
}

/* ---- table ----------------------------------------------------------------- */

static void table_begin(bench_writer *w, const char *const *names, int ntiers, const char *title) {
  fprintf(w->f, "# %s\n", title);
  fprintf(w->f, "%-10s", "n");
  for (int i = 0; i < ntiers; ++i) fprintf(w->f, " %12s", names[i]);
  if (w->openmp_col >= 0) fprintf(w->f, " %10s", "omp GB/s");
  if (w->baseline_col >= 0 && w->openmp_col >= 0) fprintf(w->f, " %12s", "plain/openmp");
  fprintf(w->f, "  %s\n", "auto ran");
}

static void table_size_done(bench_writer *w, const bench_row *rows, int nrows) {
  char buf[32], nbuf[32];
  int e = 0;
  while (e < 63 && ((size_t)1 << e) < rows[0].n) ++e;
  if (((size_t)1 << e) == rows[0].n)
    snprintf(nbuf, sizeof nbuf, "2^%d", e);
  else
    snprintf(nbuf, sizeof nbuf, "%zu", rows[0].n);
  fprintf(w->f, "%-10s", nbuf);
  const char *auto_ran = "";
  for (int i = 0; i < nrows; ++i) {
    fmt_time(buf, sizeof buf, &rows[i]);
    fprintf(w->f, " %12s", buf);
    if (rows[i].ran_tier[0]) auto_ran = rows[i].ran_tier;
  }
  if (w->openmp_col >= 0) {
    const bench_row *o = &rows[w->openmp_col];
    if (o->ok == 1 && o->t.median_s > 0)
      fprintf(w->f, " %10.2f", (double)o->bytes / o->t.median_s / 1e9);
    else
      fprintf(w->f, " %10s", "-");
  }
  if (w->baseline_col >= 0 && w->openmp_col >= 0) {
    const bench_row *b = &rows[w->baseline_col], *o = &rows[w->openmp_col];
    if (b->ok == 1 && o->ok == 1 && o->t.median_s > 0)
      fprintf(w->f, " %12.3f", b->t.median_s / o->t.median_s);
    else
      fprintf(w->f, " %12s", "-");
  }
  fprintf(w->f, "  %s\n", auto_ran);
  for (int i = 0; i < nrows; ++i)
    if (rows[i].ok == 0) fprintf(w->f, "#   %s: %s\n", rows[i].tier, rows[i].note);
  fflush(w->f);
}

static void table_end(bench_writer *w) {
  fprintf(w->f, "# times: median host wall clock per synchronous call; "
                "plain/openmp > 1 means xpar's OpenMP tier is faster\n");
}

void bench_table_writer(bench_writer *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->begin = table_begin;
  w->size_done = table_size_done;
  w->end = table_end;
  w->f = f;
  w->baseline_col = w->openmp_col = -1;
}

/* ---- CSV ------------------------------------------------------------------- */

static void csv_begin(bench_writer *w, const char *const *names, int ntiers, const char *title) {
  (void)names, (void)ntiers, (void)title;
  fprintf(w->f, "op,dtype,reduction,location,n,tier,ran_tier,median_us,min_us,max_us,reps,"
                "bytes,gbps,ok,note\n");
}

static void csv_size_done(bench_writer *w, const bench_row *rows, int nrows) {
  for (int i = 0; i < nrows; ++i) {
    const bench_row *r = &rows[i];
    double med = r->ok == 1 ? r->t.median_s : 0.0;
    fprintf(w->f, "%s,%s,%s,%s,%zu,%s,%s,%.4f,%.4f,%.4f,%d,%zu,%.3f,%d,\"%s\"\n", r->op, r->dtype,
            r->reduction, r->location, r->n, r->tier, r->ran_tier, med * 1e6,
            r->ok == 1 ? r->t.min_s * 1e6 : 0.0, r->ok == 1 ? r->t.max_s * 1e6 : 0.0,
            r->ok == 1 ? r->t.reps : 0, r->bytes, med > 0 ? (double)r->bytes / med / 1e9 : 0.0,
            r->ok, r->note ? r->note : "");
  }
  fflush(w->f);
}

static void csv_end(bench_writer *w) { fflush(w->f); }

void bench_csv_writer(bench_writer *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->begin = csv_begin;
  w->size_done = csv_size_done;
  w->end = csv_end;
  w->f = f;
  w->baseline_col = w->openmp_col = -1;
}

/* ---- output files ------------------------------------------------------------ */

FILE *bench_open_output(const char *cmd, const char *path, const char *mode) {
  FILE *f = fopen(path, mode);
  if (!f) fprintf(stderr, "xpar-bench %s: cannot write %s: %s\n", cmd, path, strerror(errno));
  return f;
}

int bench_close_output(const char *cmd, const char *path, FILE *f) {
  if (!f) return 1;
  const int failed = fflush(f) != 0 || ferror(f);
  const int err = errno;
  if (fclose(f) != 0 || failed) {
    fprintf(stderr, "xpar-bench %s: writing %s failed: %s\n", cmd, path,
            strerror(failed ? err : errno));
    return 0;
  }
  return 1;
}

/* ---- directories ------------------------------------------------------------ */

int bench_mkdir_p(const char *dir) {
  char d[1024];
  /* the files go to dir/<name>: leave room for the longest name (crossover.csv) */
  if (!dir[0] || strlen(dir) + 32 >= sizeof d) {
    errno = dir[0] ? ENAMETOOLONG : ENOENT;
    return 0;
  }
  snprintf(d, sizeof d, "%s", dir);
  for (char *p = d + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(d, 0777) != 0 && errno != EEXIST) return 0;
      *p = '/';
    }
  return mkdir(d, 0777) == 0 || errno == EEXIST;
}
