/* qconv_weights.h - the operands of an int8 convolution (QConv, QCONV2D)
 * in the form libomrt's kernels read: the weights packed with K groups of
 * 4 innermost, or a depthwise convolution's per channel and tap
 * (om_format.h QCONV2D), and the bias corrected for the input's zero
 * point. Shared by the layout pass and the kernel tests
 * (lower/qconv_weights.c).
 */
#ifndef LOWER_QCONV_WEIGHTS_H
#define LOWER_QCONV_WEIGHTS_H

#include <stdint.h>

#include "common/conv_group.h"

/* The packed geometry of ONNX weights [Cout, Cin/group, KH, KW]. */
typedef struct qconvw_geom {
  int64_t cout, cin, group, kh, kw;
  int64_t c1out, kbmax; /* output channel blocks; the most input blocks one of them reads */
  int64_t kg;           /* K groups of 4 per output block: KH*KW*kbmax*4 */
  int depthwise;        /* depthwise (group = Cin = Cout): the diagonal packing */
  convg_geom cg;        /* the groups' block ranges (common/conv_group.h) */
} qconvw_geom;

/* Fills *g; -1 when a dim is < 1, group does not divide both channel
 * counts, or the sizes overflow. */
int qconvw_init(int64_t cout, int64_t cin, int64_t group, int64_t kh, int64_t kw, qconvw_geom *g);
/* Input channel blocks [c1_lo, c1_hi) output block nb reads
 * (convg_block_range). */
void qconvw_block_range(const qconvw_geom *g, int64_t nb, int64_t *c1_lo, int64_t *c1_hi);
/* The packed weights' dims: [C1out, KG, 16, 4], or depthwise [C1out,
 * KH*KW, 16, 1]; and their bytes. */
void qconvw_dims(const qconvw_geom *g, int64_t dims[4]);
uint64_t qconvw_bytes(const qconvw_geom *g);
/* Packs ONNX weights w into dst (qconvw_bytes, zeroed by the caller). */
void qconvw_pack(const qconvw_geom *g, const int8_t *w, int8_t *dst);
/* bias_out[C1out*16] = bias[co] - x_zp * (the sum of co's weights), 0 past
 * Cout; mult_out[C1out*16] = mult[co], 0 past Cout. */
void qconvw_bias(const qconvw_geom *g, const int8_t *w, const int32_t *bias, const float *mult, int32_t x_zp,
                 int32_t *bias_out, float *mult_out);

#endif
