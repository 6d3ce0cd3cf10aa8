/*
 * Crossover charts.  gnuplot (Debian gnuplot-nox) renders PNGs when it is
 * installed; the data and script stay next to the PNG so a chart can be
 * re-rendered or restyled without re-measuring.  Without gnuplot (the lent
 * GPU machine may not have it) an SVG is written directly: same axes, same
 * curves, no dependency.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *const colors[BENCH_PLOT_MAX_SERIES] = {
    "#1f77b4", "#2ca02c", "#d62728", "#000000", "#9467bd", "#8c564b", "#ff7f0e", "#17becf"};

int bench_have_gnuplot(void) {
  static int cached = -1;
  if (cached < 0)
    cached = system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0 ? 1 : 0;
  return cached;
}

/* ---- gnuplot ------------------------------------------------------------- */

static int write_dat(const bench_plot *p, const char *base) {
  char path[1024];
  snprintf(path, sizeof path, "%s.dat", base);
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fprintf(f, "# exp n");
  for (int s = 0; s < p->nseries; ++s) fprintf(f, " %s_us", p->series[s]);
  fprintf(f, "\n");
  for (int e = p->min_exp; e <= p->max_exp; ++e) {
    fprintf(f, "%d %.0f", e, ldexp(1.0, e));
    for (int s = 0; s < p->nseries; ++s) {
      double t = p->t_s[s][e];
      if (isfinite(t) && t > 0)
        fprintf(f, " %.6g", t * 1e6);
      else
        fprintf(f, " NaN");
    }
    fprintf(f, "\n");
  }
  return fclose(f) == 0;
}

/* The plot commands of one chart (used alone and inside the overview grid). */
static void gp_chart(FILE *f, const bench_plot *p, const char *base, int small) {
  fprintf(f, "set title \"%s\"%s\n", p->title, small ? " font ',9'" : "");
  fprintf(f, "unset arrow\nunset label\n");
  for (int m = 0; m < p->nmarks; ++m) {
    double x = ldexp(1.0, p->mark_exp[m]);
    fprintf(f,
            "set arrow from %.0f, graph 0 to %.0f, graph 1 nohead dashtype 2 lc rgb '#777777'\n",
            x, x);
    fprintf(f, "set label \"%s\" at %.0f, graph %.2f rotate by 90 right offset -0.6,0 %s\n",
            p->mark_label[m], x, 0.97 - 0.0 * m, small ? "font ',7'" : "font ',9'");
  }
  fprintf(f, "plot ");
  for (int s = 0; s < p->nseries; ++s)
    fprintf(f, "%s'%s.dat' using 2:%d with linespoints lw %s pt 7 ps %s lc rgb '%s' title '%s'",
            s ? ", \\\n     " : "", base, 3 + s, strcmp(p->series[s], "auto") == 0 ? "3" : "1.5",
            small ? "0.4" : "0.6", colors[s % BENCH_PLOT_MAX_SERIES], p->series[s]);
  fprintf(f, "\n");
}

static void gp_axes(FILE *f) {
  fprintf(f,
          "set datafile missing 'NaN'\n"
          "set logscale x 2\nset logscale y 10\nset format x '2^{%%L}'\nset xtics 4\n"
          "set format y '10^{%%L}'\nset grid\nset key top left\n"
          "set xlabel 'N (elements)'\nset ylabel 'time per call (us)'\n");
}

static int run_gnuplot(const char *gp_path) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>/dev/null", gp_path);
  return system(cmd) == 0;
}

static int write_png(const bench_plot *p, const char *base, char *path, size_t size) {
  if (!write_dat(p, base)) return 0;
  char gp[1024];
  snprintf(gp, sizeof gp, "%s.gp", base);
  snprintf(path, size, "%s.png", base);
  FILE *f = fopen(gp, "w");
  if (!f) return 0;
  fprintf(f, "# re-render with: gnuplot %s\n", gp);
  fprintf(f, "set terminal pngcairo size 960,640 font ',10'\nset output '%s'\n", path);
  gp_axes(f);
  gp_chart(f, p, base, 0);
  if (fclose(f) != 0) return 0;
  return run_gnuplot(gp);
}

int bench_plot_overview(const bench_plot *plots, const char *const *bases, int n,
                        const char *png_path) {
  if (n <= 0) return 0;
  char gp[1024];
  snprintf(gp, sizeof gp, "%.1000s.gp", png_path);
  char *dot = strrchr(gp, '.');
  if (dot && dot > gp + 4 && strcmp(dot - 4, ".png.gp") == 0) strcpy(dot - 4, ".gp");
  FILE *f = fopen(gp, "w");
  if (!f) return 0;
  int cols = n < 2 ? 1 : 2, rows = (n + cols - 1) / cols;
  fprintf(f, "set terminal pngcairo size %d,%d font ',9'\nset output '%s'\n", 700 * cols,
          440 * rows, png_path);
  gp_axes(f);
  fprintf(f, "set multiplot layout %d,%d\n", rows, cols);
  for (int i = 0; i < n; ++i) gp_chart(f, &plots[i], bases[i], 1);
  fprintf(f, "unset multiplot\n");
  if (fclose(f) != 0) return 0;
  return run_gnuplot(gp);
}

/* ---- SVG, written directly ------------------------------------------------ */

static int write_svg(const bench_plot *p, const char *base, char *path, size_t size) {
  snprintf(path, size, "%s.svg", base);
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  const double W = 900, H = 600, L = 80, R = 20, T = 40, B = 60;
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < p->nseries; ++s)
    for (int e = p->min_exp; e <= p->max_exp; ++e) {
      double t = p->t_s[s][e];
      if (isfinite(t) && t > 0) {
        lo = fmin(lo, t);
        hi = fmax(hi, t);
      }
    }
  if (!(hi > 0)) lo = 1e-7, hi = 1e-6;
  double ylo = floor(log10(lo)), yhi = ceil(log10(hi));
  if (yhi <= ylo) yhi = ylo + 1;
  int xlo = p->min_exp, xhi = p->max_exp > p->min_exp ? p->max_exp : p->min_exp + 1;
#define SX(e) (L + ((double)(e) - xlo) / (xhi - xlo) * (W - L - R))
#define SY(t) (H - B - (log10(t) - ylo) / (yhi - ylo) * (H - T - B))
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
          "font-family='sans-serif' font-size='12'>\n"
          "<rect width='100%%' height='100%%' fill='white'/>\n"
          "<text x='%.0f' y='22' text-anchor='middle' font-size='15'>%s</text>\n",
          W, H, W / 2, p->title);
  for (int e = xlo; e <= xhi; ++e) { /* x grid: every power of two, labels every 2nd */
    fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='#e5e5e5'/>\n", SX(e), T,
            SX(e), H - B);
    if ((e - xlo) % 2 == 0)
      fprintf(f, "<text x='%.1f' y='%.0f' text-anchor='middle'>2^%d</text>\n", SX(e), H - B + 18,
              e);
  }
  for (double y = ylo; y <= yhi; y += 1) {
    double t = pow(10, y);
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#e5e5e5'/>\n", L, SY(t),
            W - R, SY(t));
    const char *unit = y < -6 ? "ns" : y < -3 ? "us" : y < 0 ? "ms" : "s";
    double scale = y < -6 ? 1e9 : y < -3 ? 1e6 : y < 0 ? 1e3 : 1;
    fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end'>%g %s</text>\n", L - 6, SY(t) + 4,
            t * scale, unit);
  }
  fprintf(f,
          "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='black'/>\n"
          "<text x='%.0f' y='%.0f' text-anchor='middle'>N (elements)</text>\n"
          "<text x='18' y='%.0f' transform='rotate(-90 18 %.0f)' text-anchor='middle'>"
          "time per call</text>\n",
          L, T, W - L - R, H - T - B, (L + W - R) / 2, H - 15, (T + H - B) / 2, (T + H - B) / 2);
  for (int m = 0; m < p->nmarks; ++m) {
    double x = SX(p->mark_exp[m]);
    fprintf(f,
            "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='#777' stroke-dasharray='6,4'/>\n"
            "<text x='%.1f' y='%.0f' transform='rotate(-90 %.1f %.0f)' text-anchor='end' "
            "fill='#555'>%s</text>\n",
            x, T, x, H - B, x - 4, T + 8, x - 4, T + 8, p->mark_label[m]);
  }
  for (int s = 0; s < p->nseries; ++s) {
    const char *c = colors[s % BENCH_PLOT_MAX_SERIES];
    int is_auto = strcmp(p->series[s], "auto") == 0;
    int open = 0;
    for (int e = p->min_exp; e <= p->max_exp; ++e) { /* a gap breaks the line */
      double t = p->t_s[s][e];
      if (isfinite(t) && t > 0) {
        if (!open)
          fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%d' points='", c,
                  is_auto ? 3 : 2);
        fprintf(f, "%.1f,%.1f ", SX(e), SY(t));
        open = 1;
      } else if (open) {
        fprintf(f, "'/>\n");
        open = 0;
      }
    }
    if (open) fprintf(f, "'/>\n");
    fprintf(f,
            "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='%s' stroke-width='3'/>"
            "<text x='%.0f' y='%.0f'>%s</text>\n",
            L + 12, T + 18 + 18.0 * s, L + 40, T + 18 + 18.0 * s, c, L + 46, T + 22 + 18.0 * s,
            p->series[s]);
  }
#undef SX
#undef SY
  fprintf(f, "</svg>\n");
  return fclose(f) == 0;
}

int bench_plot_write(const bench_plot *p, const char *base, int use_gnuplot, char *path,
                     size_t size) {
  if (use_gnuplot && write_png(p, base, path, size)) return 1;
  return write_svg(p, base, path, size);
}
