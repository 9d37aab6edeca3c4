/* qconv_weights.c - QCONV2D's packed weights and corrected bias
 * (lower/qconv_weights.h; the layout is om_format.h's QCONV2D).
 *
 * An output channel block nb reads the input channel blocks of its groups,
 * as FRACTAL_Z_G does (common/conv_group.h's convg_block_range, which
 * libomrt's kernels call too): dense convolutions read every block. A
 * depthwise convolution (group = Cin = Cout) stores only what would be the
 * blocks' diagonals: [C1out][KH*KW][16].
 */
#include "lower/qconv_weights.h"

#include <string.h>

enum { QB = 16 }; /* channels per block (the activations' C0) */

int qconvw_init(int64_t cout, int64_t cin, int64_t group, int64_t kh, int64_t kw, qconvw_geom *g) {
  memset(g, 0, sizeof *g);
  const int64_t lim = (int64_t)1 << 30;
  if (cout < 1 || cin < 1 || group < 1 || kh < 1 || kw < 1 || cout > lim || cin > lim || kh > 65535 ||
      kw > 65535 || cout % group || cin % group)
    return -1;
  *g = (qconvw_geom){.cout = cout, .cin = cin, .group = group, .kh = kh, .kw = kw};
  const int64_t gdims[5] = {group, cout / group, cin / group, kh, kw};
  if (convg_init(gdims, &g->cg)) return -1;
  g->c1out = (cout + QB - 1) / QB;
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    int64_t lo, hi;
    qconvw_block_range(g, nb, &lo, &hi);
    if (hi - lo > g->kbmax) g->kbmax = hi - lo;
  }
  if (g->kbmax > lim / (kh * kw * 4)) return -1;
  g->kg = kh * kw * g->kbmax * 4;
  g->depthwise = group == cin && group == cout;
  if ((uint64_t)g->c1out * (uint64_t)g->kg > ((uint64_t)1 << 40)) return -1;
  return 0;
}

void qconvw_block_range(const qconvw_geom *g, int64_t nb, int64_t *c1_lo, int64_t *c1_hi) {
  convg_block_range(&g->cg, nb, c1_lo, c1_hi);
}

void qconvw_dims(const qconvw_geom *g, int64_t dims[4]) {
  dims[0] = g->c1out, dims[1] = g->depthwise ? g->kh * g->kw : g->kg, dims[2] = QB,
  dims[3] = g->depthwise ? 1 : 4;
}

uint64_t qconvw_bytes(const qconvw_geom *g) {
  int64_t d[4];
  qconvw_dims(g, d);
  return (uint64_t)d[0] * (uint64_t)d[1] * (uint64_t)d[2] * (uint64_t)d[3];
}

void qconvw_pack(const qconvw_geom *g, const int8_t *w, int8_t *dst) {
  const int64_t og = g->cout / g->group, ig = g->cin / g->group, taps = g->kh * g->kw;
  if (g->depthwise) { /* [C1out][taps][16]: channel co's tap t */
    for (int64_t co = 0; co < g->cout; co++)
      for (int64_t t = 0; t < taps; t++)
        dst[((co / QB) * taps + t) * QB + co % QB] = w[co * taps + t];
    return;
  }
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    int64_t lo, hi;
    qconvw_block_range(g, nb, &lo, &hi);
    const int64_t kb = hi - lo;
    int8_t *blk = dst + (size_t)(nb * g->kg) * QB * 4;
    for (int64_t j = 0; j < QB && nb * QB + j < g->cout; j++) {
      const int64_t co = nb * QB + j, grp = co / og;
      for (int64_t t = 0; t < g->kh * g->kw; t++)
        for (int64_t cb = 0; cb < kb; cb++)
          for (int64_t c0 = 0; c0 < QB; c0++) {
            const int64_t ci = (lo + cb) * QB + c0;
            if (ci >= g->cin || ci / ig != grp) continue;
            const int64_t k = (t * kb + cb) * QB + c0;
            blk[((k / 4) * QB + j) * 4 + k % 4] = w[(co * ig + (ci - grp * ig)) * g->kh * g->kw + t];
          }
    }
  }
}

void qconvw_bias(const qconvw_geom *g, const int8_t *w, const int32_t *bias, const float *mult, int32_t x_zp,
                 int32_t *bias_out, float *mult_out) {
  const int64_t per = g->cin / g->group * g->kh * g->kw;
  for (int64_t co = 0; co < g->c1out * QB; co++) {
    if (co >= g->cout) {
      bias_out[co] = 0, mult_out[co] = 0.0f;
      continue;
    }
    int64_t sum = 0;
    for (int64_t i = 0; i < per; i++)
      sum += w[co * per + i];
    bias_out[co] = (int32_t)((int64_t)bias[co] - (int64_t)x_zp * sum);
    mult_out[co] = mult[co];
  }
}
