/* dvpp_vpc.c - the bilinear scaler of dvpp_vpc.h.
 *
 * Per plane (luma, then the two chroma components of the interleaved plane),
 * the horizontal source positions and weights of every destination column
 * are computed once; each destination row then blends two source rows of
 * two taps each. No heap use.
 */
#include "acl/dvpp_vpc.h"

typedef struct tap {
  uint32_t i0, i1; /* source samples, relative to the region */
  float w1;        /* weight of i1; i0 has 1 - w1 */
} tap;

static tap tap_at(uint32_t d, uint32_t n, uint32_t m) {
  float s = ((float)d + 0.5f) * (float)n / (float)m - 0.5f;
  if (s < 0) s = 0;
  if (s > (float)(n - 1)) s = (float)(n - 1);
  uint32_t i0 = (uint32_t)s;
  uint32_t i1 = i0 + 1 < n ? i0 + 1 : i0;
  return (tap){i0, i1, s - (float)i0};
}

/* One plane: samples `step` bytes apart (1 luma, 2 chroma), region (x, y,
 * w, h) in samples of that plane. */
static void scale_plane(const uint8_t *src, size_t sstride, int sstep, dvpp_vpc_rect from, uint8_t *dst,
                        size_t dstride, int dstep, dvpp_vpc_rect to, tap *cols) {
  for (uint32_t x = 0; x < to.w; x++)
    cols[x] = tap_at(x, from.w, to.w);
  for (uint32_t y = 0; y < to.h; y++) {
    tap r = tap_at(y, from.h, to.h);
    const uint8_t *r0 = src + (size_t)(from.y + r.i0) * sstride + (size_t)from.x * sstep;
    const uint8_t *r1 = src + (size_t)(from.y + r.i1) * sstride + (size_t)from.x * sstep;
    uint8_t *o = dst + (size_t)(to.y + y) * dstride + (size_t)to.x * dstep;
    for (uint32_t x = 0; x < to.w; x++) {
      const tap *c = &cols[x];
      float a =
          r0[(size_t)c->i0 * sstep] + c->w1 * (float)(r0[(size_t)c->i1 * sstep] - r0[(size_t)c->i0 * sstep]);
      float b =
          r1[(size_t)c->i0 * sstep] + c->w1 * (float)(r1[(size_t)c->i1 * sstep] - r1[(size_t)c->i0 * sstep]);
      float v = a + r.w1 * (b - a) + 0.5f;
      o[(size_t)x * dstep] = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
    }
  }
}

void dvpp_vpc_scale(const dvpp_vpc_pic *in, dvpp_vpc_rect from, const dvpp_vpc_pic *out, dvpp_vpc_rect to) {
  tap cols[DVPP_VPC_MAX_DIM]; /* 96 KiB of stack */
  scale_plane(in->y, in->stride, 1, from, out->y, out->stride, 1, to, cols);
  dvpp_vpc_rect cf = {from.x / 2, from.y / 2, from.w / 2, from.h / 2},
                ct = {to.x / 2, to.y / 2, to.w / 2, to.h / 2};
  int swap = in->vu_order != out->vu_order;
  for (int k = 0; k < 2; k++)
    scale_plane(in->uv + k, in->stride, 2, cf, out->uv + (k ^ swap), out->stride, 2, ct, cols);
}
