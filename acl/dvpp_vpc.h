/* dvpp_vpc.h - the scaler of the DVPP's VPC calls (crop, resize, crop and
 * paste) on YUV420 semi-planar pictures: a pure function over the caller's
 * planes, no AscendCL state; acl_dvpp.c checks the documented rules first.
 *
 * Bilinear scaling with half-pixel centres (a destination sample d of a
 * region scaled from n to m samples reads source position (d + 0.5) * n / m
 * - 0.5, clamped to the region), computed in float and rounded to nearest
 * (half up); luma on the luma plane, each chroma component on the chroma
 * plane at half resolution, so regions have even offsets and sizes.
 * Chroma order (NV12 / NV21) is converted when the two pictures differ.
 */
#ifndef ACL_DVPP_VPC_H
#define ACL_DVPP_VPC_H

#include <stddef.h>
#include <stdint.h>

enum { DVPP_VPC_MAX_DIM = 8192 }; /* pixels per side of a region */

typedef struct dvpp_vpc_pic {
  uint8_t *y, *uv; /* borrowed: luma plane, chroma pairs (rows of `stride` bytes in both) */
  size_t stride;   /* bytes per row */
  int vu_order;    /* chroma pairs V first (NV21) */
} dvpp_vpc_pic;

typedef struct dvpp_vpc_rect {
  uint32_t x, y, w, h; /* pixels; x, y, w, h even */
} dvpp_vpc_rect;

/* Scales the region `from` of `in` onto the region `to` of `out` (the rest of
 * out untouched); both regions non-empty, at most DVPP_VPC_MAX_DIM per side,
 * inside their pictures. The pictures must not overlap. */
void dvpp_vpc_scale(const dvpp_vpc_pic *in, dvpp_vpc_rect from, const dvpp_vpc_pic *out, dvpp_vpc_rect to);

#endif
