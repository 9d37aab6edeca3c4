/* kernels_qmatmul.c - QMATMUL, the int8 matrix product with a run-time x
 * zero point and a float epilogue (contract in om_tasks_cube.h): a
 * dynamically quantized model's MatMulInteger -> Cast -> Mul [-> Add].
 *
 * It is QCONV2D's 1x1 convolution over NHWC rows: x [M, K] is an image of
 * one row of M pixels with K channels, y [M, N] likewise, the weights in
 * QCONV2D's packing. The geometry (kernels_qconv.h) is filled here and the
 * tiles are QCONV2D's (portable, AVX2, AVX-512 VNNI: vpdpbusd is u8 x
 * i8), whose stores take the epilogue rt_qconv_geom's epi names instead
 * of the requantization: the zero point, known only now, enters as
 * -x_zp x the column sums, and the scale is read from its tensor.
 */
#include "runtime/kernels_qconv.h"

void rt_qmatmul_geom_init(const om_task *task, const rt_args *args, rt_qconv_geom *g) {
  const om_tensor *x = args->desc[OM_QMATMUL_T_X], *y = args->desc[OM_QMATMUL_T_Y];
  const om_tensor *s = args->desc[OM_QMATMUL_T_SCALE];
  const int64_t k = x->dims[x->rank - 1], n = y->dims[y->rank - 1],
                m = (int64_t)(rt_elements(y) / (uint64_t)n);
  (void)task;
  memset(g, 0, sizeof *g);
  g->x = args->data[OM_QMATMUL_T_X];
  g->w = args->data[OM_QMATMUL_T_W];
  g->bias = args->data[OM_QMATMUL_T_COLSUM];
  g->y = args->data[OM_QMATMUL_T_Y];
  g->c1in = rt_ceil_div(k, C0), g->h = 1, g->w_ = m;
  g->cout = n, g->c1out = rt_ceil_div(n, C0), g->ho = 1, g->wo = m;
  g->kg = g->c1in * 4;
  g->xis = (size_t)(m * k), g->xps = (size_t)k, g->xbs = C0;
  g->yis = (size_t)(m * n), g->yps = (size_t)n, g->ybs = C0;
  g->kh = g->kw = g->sh = g->sw = g->dh = g->dw = 1;
  const int64_t gd[5] = {1, n, k, 1, 1};
  convg_init(gd, &g->cg);
  g->qtail = (int)((k - (g->c1in - 1) * C0 + 3) / 4);
  g->cin = (int)k;
  g->nzp = -(int32_t) * (const uint8_t *)args->data[OM_QMATMUL_T_X_ZP];
  g->epi = s ? 2 : 1;
  g->scale = s ? args->data[OM_QMATMUL_T_SCALE] : NULL;
  g->sstep = s && rt_elements(s) > 1;
  g->fbias = args->data[OM_QMATMUL_T_BIAS];
}

void rt_qmatmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  rt_qconv_geom g;
  rt_qmatmul_geom_init(task, args, &g);
  const int64_t tm = task->params[OM_QMATMUL_P_TILE_M], tn = task->params[OM_QMATMUL_P_TILE_N];
  const int64_t mt = rt_ceil_div(g.wo, tm), nt = rt_ceil_div(g.c1out, tn);
  const rt_cpu_paths *cpu = rt_cpu();
  const rt_qconv_tile_fn tile = cpu->qconv_tile ? cpu->qconv_tile : rt_qconv_tile_c;
  uint64_t lo, hi;
  rt_block_range((uint64_t)(mt * nt), task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++) {
    const int64_t mi = (int64_t)t / nt, ni = (int64_t)t % nt, p0 = mi * tm, nb0 = ni * tn;
    tile(&g, 0, p0, p0 + tm < g.wo ? p0 + tm : g.wo, nb0, nb0 + tn < g.c1out ? nb0 + tn : g.c1out);
  }
}

omrt_status rt_qmatmul_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "QMATMUL"};
  const om_tensor *x, *w, *cs, *z, *s, *b, *y;
  omrt_status st;
  if ((st = rt_chk_ntensors(&c, OM_QMATMUL_NTENSORS)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_X, "x", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &x)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_W, "w", 0, LAYOUT_ND, 4, RT_DT(DT_INT8), &w)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_COLSUM, "colsum", 0, LAYOUT_ND, 1, RT_DT(DT_INT32), &cs)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_X_ZP, "x_zp", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &z)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_SCALE, "scale", 1, LAYOUT_ND, -1, RT_DT(DT_FLOAT32), &s)) ||
      (st = rt_chk_tensor_of(&c, OM_QMATMUL_T_BIAS, "bias", 1, LAYOUT_ND, 1, RT_DT(DT_FLOAT32), &b)) ||
      (st =
           rt_chk_tensor_of(&c, OM_QMATMUL_T_Y, "y", 0, LAYOUT_ND, -1, RT_DT(s ? DT_FLOAT32 : DT_INT32), &y)))
    return st;
  if (x->rank < 1 || y->rank != x->rank)
    return rt_chk_fail(&c, "x and y have ranks %u and %u, expected one rank >= 1", x->rank, y->rank);
  for (uint32_t d = 0; d + 1 < x->rank; d++)
    if (x->dims[d] != y->dims[d])
      return rt_chk_fail(&c, "y dim %u = %lld, x's %lld: y is x's dims with the last N", d,
                         (long long)y->dims[d], (long long)x->dims[d]);
  const int64_t k = x->dims[x->rank - 1], n = y->dims[y->rank - 1], c1out = rt_ceil_div(n, C0);
  if (k < 1 || n < 1 || k % 4 || k > OM_QCONV_MAX_K)
    return rt_chk_fail(&c, "K = %lld and N = %lld: K a multiple of 4 up to %d, N >= 1", (long long)k,
                       (long long)n, OM_QCONV_MAX_K);
  if (w->dims[0] != c1out || w->dims[1] != rt_ceil_div(k, C0) * 4 || w->dims[2] != C0 || w->dims[3] != 4)
    return rt_chk_fail(&c, "w dims [%lld, %lld, %lld, %lld], expected [%lld, %lld, 16, 4]",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2],
                       (long long)w->dims[3], (long long)c1out, (long long)(rt_ceil_div(k, C0) * 4));
  if (cs->dims[0] != c1out * C0 || (b && b->dims[0] != c1out * C0))
    return rt_chk_fail(&c, "colsum and bias have %lld and %lld elements, expected %lld",
                       (long long)cs->dims[0], b ? (long long)b->dims[0] : 0LL, (long long)(c1out * C0));
  if (rt_elements(z) != 1)
    return rt_chk_fail(&c, "x_zp has %llu elements, expected 1", (unsigned long long)rt_elements(z));
  if (s && rt_elements(s) != 1 && (rt_elements(s) != (uint64_t)n || s->dims[s->rank - 1] != n))
    return rt_chk_fail(&c, "scale has %llu elements, expected 1 or N = %lld",
                       (unsigned long long)rt_elements(s), (long long)n);
  if (b && !s) return rt_chk_fail(&c, "a bias without a scale (y i32)");
  const int32_t tm = task->params[OM_QMATMUL_P_TILE_M], tn = task->params[OM_QMATMUL_P_TILE_N];
  if (tm < 1 || tn < 1) return rt_chk_fail(&c, "tile_m %d and tile_n %d must be >= 1", tm, tn);
  const uint64_t rows = rt_elements(y) / (uint64_t)n;
  return rt_chk_block_dim(&c, rt_ceil_div((int64_t)rows, tm) * (uint64_t)rt_ceil_div(c1out, tn), "tiles");
}
