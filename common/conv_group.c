/* conv_group.c - the FRACTAL_Z_G geometry (see conv_group.h). */
#include "conv_group.h"

#include "fp16.h"

int convg_init(const int64_t *dims, convg_geom *g) {
  for (int i = 0; i < 5; i++)
    if (dims[i] < 1 || dims[i] > ((int64_t)1 << 31)) return -1;
  uint64_t cout, cin, taps;
  if (mul_u64((uint64_t)dims[0], (uint64_t)dims[1], &cout) ||
      mul_u64((uint64_t)dims[0], (uint64_t)dims[2], &cin) ||
      mul_u64((uint64_t)dims[3], (uint64_t)dims[4], &taps) || cout > ((uint64_t)1 << 31) ||
      cin > ((uint64_t)1 << 31))
    return -1;
  *g = (convg_geom){.g = dims[0],
                    .og = dims[1],
                    .ig = dims[2],
                    .kh = dims[3],
                    .kw = dims[4],
                    .cout = (int64_t)cout,
                    .cin = (int64_t)cin,
                    .taps = (int64_t)taps};
  g->c1out = (g->cout + C0 - 1) / C0;
  g->c1in = (g->cin + C0 - 1) / C0;
  return 0;
}

void convg_block_range(const convg_geom *g, int64_t nb, int64_t *c1_lo, int64_t *c1_hi) {
  int64_t co_hi = (nb + 1) * C0 < g->cout ? (nb + 1) * C0 : g->cout;
  int64_t g_lo = nb * C0 / g->og, g_hi = (co_hi - 1) / g->og;
  *c1_lo = g_lo * g->ig / C0;
  *c1_hi = ((g_hi + 1) * g->ig + C0 - 1) / C0;
}

void convg_run_of(const convg_geom *g, int64_t nb, convg_run *r) {
  *r = (convg_run){0}; /* the empty run before block 0 */
  do
    convg_run_next(g, r);
  while (nb >= r->nb0 + r->len);
}

void convg_run_next(const convg_geom *g, convg_run *r) {
  const int64_t nb = r->nb0 + r->len;
  const uint64_t base = r->base + (uint64_t)r->len * (uint64_t)((r->c1_hi - r->c1_lo) * g->taps);
  int64_t lo, hi, l2, h2, end = nb + 1;
  convg_block_range(g, nb, &lo, &hi);
  for (; end < g->c1out; end++) {
    convg_block_range(g, end, &l2, &h2);
    if (l2 != lo || h2 != hi) break;
  }
  *r = (convg_run){nb, end - nb, lo, hi, base};
}

int convg_fractals(const convg_geom *g, uint64_t *count_out) {
  uint64_t total = 0;
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    int64_t lo, hi;
    convg_block_range(g, nb, &lo, &hi);
    uint64_t f;
    if (mul_u64((uint64_t)(hi - lo), (uint64_t)g->taps, &f) || add_u64(total, f, &total)) return -1;
  }
  *count_out = total;
  return 0;
}

int64_t convg_max_k(const convg_geom *g) {
  int64_t best = 0;
  for (int64_t nb = 0; nb < g->c1out; nb++) {
    int64_t lo, hi;
    convg_block_range(g, nb, &lo, &hi);
    if ((hi - lo) * g->taps > best) best = (hi - lo) * g->taps;
  }
  return best;
}

void convg_pack_rows(const convg_geom *g, const void *src, int sdt, void *dst, int ddt, int64_t co_lo,
                     int64_t co_hi) {
  convg_run r = {0, 0, 0, 0, 0};
  for (int64_t co = co_lo; co < co_hi; co++) {
    int64_t nb = co / C0, grp = co / g->og;
    if (co == co_lo || nb >= r.nb0 + r.len) convg_run_of(g, nb, &r);
    int64_t kfr = (r.c1_hi - r.c1_lo) * g->taps;
    for (int64_t kk = 0; kk < kfr; kk++) {
      int64_t c1 = r.c1_lo + kk / g->taps, tap = kk % g->taps;
      uint64_t at =
          (r.base + (uint64_t)kk * (uint64_t)r.len + (uint64_t)(nb - r.nb0)) * C0 * C0 + (uint64_t)(co % C0);
      for (int64_t j = 0; j < C0; j++) { /* ci % 16 = j: row j of the fractal */
        int64_t c = c1 * C0 + j;
        float v = 0.0f;
        if (co < g->cout && c < g->cin && c / g->ig == grp) {
          uint64_t from = ((uint64_t)co * (uint64_t)g->ig + (uint64_t)(c - grp * g->ig)) * (uint64_t)g->taps +
                          (uint64_t)tap;
          v = sdt == DT_FLOAT16 ? half_to_float(((const uint16_t *)src)[from]) : ((const float *)src)[from];
        }
        if (ddt == DT_FLOAT16)
          ((uint16_t *)dst)[at + (uint64_t)j * C0] = float_to_half(v);
        else
          ((float *)dst)[at + (uint64_t)j * C0] = v;
      }
    }
  }
}
