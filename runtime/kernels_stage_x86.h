/* kernels_stage_x86.h - the x86 CONV2D tile's input staging
 * (kernels_stage_x86.c) for kernels_cube_x86.c: img2col rows of a K chunk
 * into L0A, and the packed input rows of an RGB stem in L1. Callable only
 * where rt_cpu() says the host has AVX2, FMA and F16C. The staged floats
 * live in the core's buffers (core->l1, the caller's l0a) until the tile's
 * next staging.
 */
#ifndef RUNTIME_KERNELS_STAGE_X86_H
#define RUNTIME_KERNELS_STAGE_X86_H

#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include "runtime/x86_simd.h"

/* The fractals of a K chunk (tile_k) the K walk lists; floats an img2col
 * staging may write past its rows (rt_stage_a). */
enum { MAX_CHUNK = OM_CONV_MAX_TILE_K, SLACK = C0 };

/* Inputs with at most 4 channels (RGB stems), dilation_w 1: the tile's input
 * rows are packed once into L1 as f32 [column][channel], padding columns
 * zeroed, so that each kernel row of a pixel's img2col row (the whole K) is
 * kw * cin consecutive floats there, which the micro-kernel reads in place
 * (conv_packed). */
typedef struct packed {
  const float *rows; /* [nrows][rowf] in core->l1 */
  int64_t oh0, rowf;
} packed;

/* 0 (nothing packed) when the case does not apply or L1 is too small. */
int rt_stage_pack_rows(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, rt_core *core,
                       packed *pk);

/* L0A[m][k] for pixels m0 .. m0+mrows-1 and the kn fractals kf[0 .. kn-1]
 * (ascending), the real lanes of each packed one after the other (lda of
 * them). Pixel by
 * pixel, fractals in order, each stored as 16 lanes: the padding lanes spill
 * into columns (or the next row) written later, and past the last row into
 * SLACK floats the chunk sizing leaves free. 1x1 convolutions (the only
 * ones with an x_scale) multiply by the image's x_scale on the way. */
void rt_stage_a(const rt_conv_geom *g, int64_t img, int64_t m0, int64_t mrows, const int64_t *kf, int64_t kn,
                int64_t lda, float *l0a);

#endif

#endif
