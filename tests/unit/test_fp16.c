/* test_fp16.c - floats_to_halves (common/fp16.h) gives float_to_half's bits:
 * every sign, exponent and top-10-bit mantissa with the 13 dropped bits at
 * and around the rounding boundaries, the inputs that become subnormal
 * halves (their rounding point moves with the exponent) at a small stride,
 * and all 2^32 patterns at a large odd stride (infinities, NaNs, overflow).
 * The whole 2^32 was checked once by hand; this keeps the edges in CI. */
#include <string.h>

#include "common/fp16.h"
#include "support.h"

enum { BATCH = 4096 };

static uint32_t batch[BATCH];
static int nbatch, bad;

static void flush(void) {
  float f[BATCH];
  uint16_t h[BATCH];
  memcpy(f, batch, sizeof f);
  floats_to_halves(h, f, (size_t)nbatch);
  for (int i = 0; i < nbatch; i++)
    if (h[i] != float_to_half(f[i]) && bad++ < 5)
      test_note("0x%08x: floats_to_halves 0x%04x, float_to_half 0x%04x", batch[i], h[i], float_to_half(f[i]));
  nbatch = 0;
}

static void add(uint32_t bits) {
  batch[nbatch++] = bits;
  if (nbatch == BATCH) flush();
}

int main(void) {
  static const uint32_t low[] = {0, 1, 0xfff, 0x1000, 0x1001, 0x1fff};
  for (uint32_t hi = 0; hi < 1u << 19; hi++)
    for (int k = 0; k < 6; k++)
      add(hi << 13 | low[k]);
  for (uint32_t x = 0x33000000u - 64; x < 0x38800000u + 64; x += 7)
    add(x), add(x | 0x80000000u);
  for (uint64_t x = 0; x < 1ull << 32; x += 4099)
    add((uint32_t)x);
  flush();
  CHECK_EQ_INT(bad, 0);

  /* lengths that leave a remainder after any vector width */
  float f[37];
  uint16_t h[37];
  for (int i = 0; i < 37; i++)
    f[i] = (float)i * 0.37f - 5.0f;
  for (size_t n = 0; n <= 37; n++) {
    memset(h, 0xab, sizeof h);
    floats_to_halves(h, f, n);
    int ok = 1;
    for (size_t i = 0; i < 37; i++)
      ok &= h[i] == (i < n ? float_to_half(f[i]) : 0xabab);
    CHECK(ok);
  }

  /* clipped (ATC's --is_weight_clip): finite values past the range become
   * +-65504, everything else is the plain conversion */
  const float big[] = {65504.0f, 65519.0f,  65520.0f, -65520.0f, 1e10f,   -3.4028235e38f,
                       INFINITY, -INFINITY, NAN,      1.5f,      -1e-30f, 0.0f};
  const uint16_t want[] = {0x7bff, 0x7bff, 0x7bff, 0xfbff, 0x7bff, 0xfbff,
                           0x7c00, 0xfc00, 0,      0x3e00, 0x8000, 0};
  uint16_t hc[12];
  floats_to_halves_clipped(hc, big, 12);
  for (int i = 0; i < 12; i++) {
    uint16_t one = half_clipped(float_to_half(big[i]), big[i]);
    if (i == 8) /* NaN stays a NaN */
      CHECK((hc[i] & 0x7c00) == 0x7c00 && (hc[i] & 0x3ff) && one == hc[i]);
    else
      CHECK(hc[i] == want[i] && one == want[i]);
  }
  return test_summary("test_fp16");
}
