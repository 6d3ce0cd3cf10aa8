#define SCAN4(NAME, ctype) \
static void NAME(const ctype *x, ctype *y, size_t lo, size_t hi, ctype run, int exclusive) { \
  size_t i = lo; \
  if (exclusive) { \
    for (; hi - i >= 4; i += 4) { \
      ctype a = x[i], b = x[i+1], c = x[i+2], d = x[i+3]; \
      ctype ab = a + b, abc = ab + c, abcd = ab + (c + d); \
      y[i] = run; y[i+1] = run + a; y[i+2] = run + ab; y[i+3] = run + abc; run = run + abcd; } \
  } else { \
    for (; hi - i >= 4; i += 4) { \
      ctype a = x[i], b = x[i+1], c = x[i+2], d = x[i+3]; \
      ctype ab = a + b, abc = ab + c, abcd = ab + (c + d); \
      y[i] = run + a; y[i+1] = run + ab; y[i+2] = run + abc; run = run + abcd; y[i+3] = run; } \
  } \
  for (; i < hi; ++i) { ctype v = x[i]; if (exclusive) { y[i] = run; run = run + v; } else { run = run + v; y[i] = run; } } \
}
SCAN4(s4f, float)
SCAN4(s4d, double)
