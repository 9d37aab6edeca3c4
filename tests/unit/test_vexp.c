/* test_vexp.c - the vector unit's exp, sigmoid and erf (common/vmath.h).
 * om_vexp against the exact
 * exp: every 61st float bit pattern of the finite-result range, the ranges'
 * edges and the special values. Normal results within 1 ulp of exp computed
 * in double and rounded; subnormal results within 1 unit of 2^-149; +inf
 * exactly where the rounded exact result overflows; NaN in, the same NaN out.
 * om_vsigmoid: absolute error <= 2e-7 against the exact sigmoid on every
 * 61st float in [-40, 40], results inside [0, 1], NaN kept, 0.5 at 0.
 * om_verf: within 6 ulp (and 3.4e-7 absolute) of the exact erf on every
 * 61st positive float and its negation, results inside [-1, 1], odd,
 * +-0 and +-1 exact, NaN kept.
 * The MATMUL activations on them, om_vgelu, om_vgelu_tanh and om_vsilu,
 * against their definitions in double on every 61st float in [-10, 10]:
 * absolute error within the bounds below (in units of max(1, |x|) *
 * 2^-23, an f32 ulp of the argument's scale), NaN kept.
 * (test_vprog_random's sweeps check that the interpreter and the JIT both
 * compute these functions' bits.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/vmath.h"
#include "support.h"

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static uint32_t to_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* |got - want| in units of want's ulp (as float), want = exp(x) rounded. */
static double ulps(float x, float got) {
  double exact = exp((double)x);
  float want = (float)exact;
  if (isinf(want)) return isinf(got) ? 0 : 1e9;
  int e;
  frexpf(want, &e);
  double ulp = want < 0x1p-126f ? 0x1p-149 : ldexp(1.0, e - 24);
  return fabs((double)got - exact) / ulp;
}

int main(void) {
  double worst = 0;
  float worst_x = 0;
  uint64_t n = 0;
  /* finite arguments with a finite non-zero result or its edges */
  for (uint32_t sign = 0; sign < 2; sign++) {
    uint32_t top = sign ? to_bits(-104.5f) : to_bits(89.5f);
    for (uint32_t b = sign << 31; b <= top; b += 61) {
      float x = from_bits(b);
      double u = ulps(x, om_vexp(x));
      n++;
      if (u > worst) worst = u, worst_x = x;
    }
  }
  printf("vexp: %llu arguments, worst %.3f ulp at x = %a\n", (unsigned long long)n, worst, (double)worst_x);
  CHECK(worst <= 1.0); /* 0.959 ulp when written */

  CHECK(om_vexp(0.0f) == 1.0f && om_vexp(-0.0f) == 1.0f);
  CHECK(om_vexp(1.0f) == (float)exp(1.0));
  CHECK(isinf(om_vexp(INFINITY)) && om_vexp(INFINITY) > 0);
  CHECK(om_vexp(-INFINITY) == 0.0f && !signbit(om_vexp(-INFINITY)));
  CHECK(isinf(om_vexp(88.73f)) && !isinf(om_vexp(88.72f)) && ulps(88.72f, om_vexp(88.72f)) <= 1.0);
  CHECK(om_vexp(-103.0f) > 0 && om_vexp(-104.0f) == 0.0f && om_vexp(-1000.0f) == 0.0f);
  CHECK(om_vexp(-87.5f) < 0x1p-126f && om_vexp(-87.5f) > 0); /* subnormal result */
  CHECK(fabs(om_vexp(-100.0f) - exp(-100.0)) <= 0x1p-149);
  for (uint32_t nb = 0x7f800001u; nb < 0x80000000u; nb += 0x100001u) { /* NaNs, either sign: kept */
    CHECK(to_bits(om_vexp(from_bits(nb))) == nb);
    CHECK(to_bits(om_vexp(from_bits(nb | 0x80000000u))) == (nb | 0x80000000u));
  }

  /* sigmoid */
  double sworst = 0;
  float sx = 0;
  n = 0;
  for (uint32_t sign = 0; sign < 2; sign++) {
    uint32_t top = to_bits(sign ? -40.0f : 40.0f);
    for (uint32_t b = sign << 31; b <= top; b += 61) {
      float x = from_bits(b);
      double err = fabs((double)om_vsigmoid(x) - 1.0 / (1.0 + exp(-(double)x)));
      n++;
      if (err > sworst) sworst = err, sx = x;
    }
  }
  printf("vsigmoid: %llu arguments, worst absolute error %.3g at x = %a\n", (unsigned long long)n, sworst,
         (double)sx);
  CHECK(sworst <= 2e-7);
  CHECK(om_vsigmoid(0.0f) == 0.5f && om_vsigmoid(1e9f) == 1.0f && om_vsigmoid(INFINITY) == 1.0f);
  CHECK(om_vsigmoid(-1e9f) == 0.0f && om_vsigmoid(-INFINITY) == 0.0f);
  CHECK(isnan(om_vsigmoid(NAN)) && isnan(om_vsigmoid(-NAN)));
  int inside = 1;
  for (float x = -20.0f; x <= 20.0f; x += 0.0001f)
    inside &= om_vsigmoid(x) >= 0.0f && om_vsigmoid(x) <= 1.0f;
  CHECK(inside);

  /* erf */
  double eworst = 0, eabs = 0;
  float ex = 0;
  int odd = 1;
  n = 0;
  for (uint32_t b = 0; b < 0x7f800000u; b += 61) {
    float x = from_bits(b), got = om_verf(x);
    double exact = erf((double)x);
    int e;
    frexp(exact, &e);
    double ulp = exact < 0x1p-126 ? 0x1p-149 : ldexp(1.0, e - 24);
    double err = fabs((double)got - exact);
    n++;
    if (err / ulp > eworst) eworst = err / ulp, ex = x;
    if (err > eabs) eabs = err;
    odd &= to_bits(om_verf(-x)) == (to_bits(got) ^ 0x80000000u);
  }
  printf("verf: %llu arguments, worst %.3f ulp at x = %a, absolute error %.3g\n", (unsigned long long)n,
         eworst, (double)ex, eabs);
  CHECK(eworst <= 6.0 && eabs <= 3.4e-7 && odd);
  CHECK(to_bits(om_verf(0.0f)) == 0 && to_bits(om_verf(-0.0f)) == 0x80000000u);
  CHECK(om_verf(3.92f) == 1.0f && om_verf(1e9f) == 1.0f && om_verf(INFINITY) == 1.0f);
  CHECK(om_verf(-INFINITY) == -1.0f);
  CHECK(isnan(om_verf(NAN)) && isnan(om_verf(-NAN)));

  /* the MATMUL activations */
  static const struct {
    const char *name;
    float (*f)(float);
    double bound; /* in max(1, |x|) * 2^-23 */
  } acts[] = {{"vgelu", om_vgelu, 1.75}, {"vgelu_tanh", om_vgelu_tanh, 1.75}, {"vsilu", om_vsilu, 1.75}};
  for (int a = 0; a < 3; a++) {
    double aworst = 0;
    float ax = 0;
    n = 0;
    for (uint32_t sign = 0; sign < 2; sign++)
      for (uint32_t b = sign << 31; b <= (sign << 31 | to_bits(10.0f)); b += 61) {
        double x = from_bits(b),
               exact = a == 0   ? 0.5 * x * (1 + erf(x / sqrt(2)))
                       : a == 1 ? 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)))
                                : x / (1 + exp(-x));
        double err = fabs(acts[a].f((float)x) - exact) / (fmax(1, fabs(x)) * 0x1p-23);
        n++;
        if (err > aworst) aworst = err, ax = (float)x;
      }
    printf("%s: %llu arguments in [-10, 10], worst %.3f x max(1, |x|) 2^-23 at x = %a\n", acts[a].name,
           (unsigned long long)n, aworst, (double)ax);
    CHECK(aworst <= acts[a].bound && isnan(acts[a].f(NAN)) && acts[a].f(0.0f) == 0.0f);
  }
  return test_summary("vexp");
}
