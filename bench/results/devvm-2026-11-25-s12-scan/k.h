#include <emmintrin.h>
#include <string.h>
#include <stddef.h>
/* lanes up by k, -0.0 (the exact additive identity) shifted in */
static inline __m128 f32_up1(__m128 v) {
  return _mm_or_ps(_mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(v), 4)),
                   _mm_castsi128_ps(_mm_set_epi32(0, 0, 0, (int)0x80000000u)));
}
static inline __m128 f32_up2(__m128 v) {
  return _mm_or_ps(_mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(v), 8)),
                   _mm_castsi128_ps(_mm_set_epi32(0, 0, (int)0x80000000u, (int)0x80000000u)));
}
static inline __m128 f32_top(__m128 v) { return _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 3, 3, 3)); }

static void scan_f32(const float *x, float *y, size_t lo, size_t hi, float run, int exclusive) {
  __m128 c = _mm_set1_ps(run);
  size_t i = lo;
  for (; hi - i >= 8; i += 8) {
    __m128 v0 = _mm_loadu_ps(x + i), v1 = _mm_loadu_ps(x + i + 4);
    __m128 p0 = _mm_add_ps(v0, f32_up1(v0));
    __m128 p1 = _mm_add_ps(v1, f32_up1(v1));
    p0 = _mm_add_ps(p0, f32_up2(p0));
    p1 = _mm_add_ps(p1, f32_up2(p1));
    __m128 t0 = f32_top(p0);
    __m128 o0, o1;
    if (exclusive) {
      o0 = _mm_add_ps(c, f32_up1(p0));
      o1 = _mm_add_ps(c, _mm_add_ps(f32_up1(p1), t0));
      p1 = _mm_add_ps(p1, t0);
    } else {
      p1 = _mm_add_ps(p1, t0);
      o0 = _mm_add_ps(c, p0);
      o1 = _mm_add_ps(c, p1);
    }
    c = _mm_add_ps(c, f32_top(p1));
    _mm_storeu_ps(y + i, o0);
    _mm_storeu_ps(y + i + 4, o1);
  }
  run = _mm_cvtss_f32(c);
  for (; i < hi; ++i) {
    float v = x[i];
    if (exclusive) { y[i] = run; run = run + v; } else { run = run + v; y[i] = run; }
  }
}
