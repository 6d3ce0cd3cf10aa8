static inline __m128d f64_up1(__m128d v) { return _mm_unpacklo_pd(_mm_set1_pd(-0.0), v); }
static inline __m128d f64_top(__m128d v) { return _mm_unpackhi_pd(v, v); }
static void scan_f64(const double *x, double *y, size_t lo, size_t hi, double run, int exclusive) {
  __m128d c = _mm_set1_pd(run);
  size_t i = lo;
  for (; hi - i >= 4; i += 4) {
    __m128d v0 = _mm_loadu_pd(x + i), v1 = _mm_loadu_pd(x + i + 2);
    __m128d p0 = _mm_add_pd(v0, f64_up1(v0));
    __m128d p1 = _mm_add_pd(v1, f64_up1(v1));
    __m128d t0 = f64_top(p0);
    __m128d o0, o1;
    if (exclusive) {
      o0 = _mm_add_pd(c, f64_up1(p0));
      o1 = _mm_add_pd(c, _mm_add_pd(f64_up1(p1), t0));
      p1 = _mm_add_pd(p1, t0);
    } else {
      p1 = _mm_add_pd(p1, t0);
      o0 = _mm_add_pd(c, p0);
      o1 = _mm_add_pd(c, p1);
    }
    c = _mm_add_pd(c, f64_top(p1));
    _mm_storeu_pd(y + i, o0);
    _mm_storeu_pd(y + i + 2, o1);
  }
  run = _mm_cvtsd_f64(c);
  for (; i < hi; ++i) {
    double v = x[i];
    if (exclusive) { y[i] = run; run = run + v; } else { run = run + v; y[i] = run; }
  }
}
