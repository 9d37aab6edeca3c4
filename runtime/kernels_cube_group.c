/* kernels_cube_group.c - grouped CONV2D (groups G > 1) on the cube.
 *
 * The weights are FRACTAL_Z_G (common/conv_group.h): output channel block
 * nb only meets the input channel blocks [c1_lo(nb), c1_hi(nb)) of its
 * groups, and the blocks of a run share that range and are stored as the
 * FRACTAL_Z weights of one dense convolution. So a tile (image, M tile,
 * tile_n output blocks, numbered as for the dense kind) is cut at run
 * boundaries, and each piece is a dense convolution the ordinary tile
 * function computes unchanged (portable or x86, whichever rt_conv2d_run
 * chose): x restricted to the piece's input blocks of its image, y and the
 * residual to its output blocks, the bias from its first channel, w to its
 * run's fractals. NC1HWC0 keeps an image's channel blocks contiguous, so
 * each restriction is a pointer offset with N = 1; the run's length is the
 * fractal stride of its weights (FRACTAL_Z's n-block count). The cube thus
 * multiplies only the fractals inside the groups' diagonal band: for group
 * width 8 one input block per output block instead of all C1in, and within
 * each of its fractals (two groups: two 8x8 diagonal blocks, the rest zero)
 * the x86 tile multiplies the diagonal blocks only (diag8).
 */
#include "common/conv_group.h"
#include "runtime/epilogue.h"
#include "runtime/kernels.h"

void rt_conv_group_run(const om_task *task, const rt_args *args, const rt_conv_geom *g0, rt_conv_tile_fn tile,
                       uint32_t block, rt_core *core) {
  convg_geom geo;
  if (convg_init(g0->w->dims, &geo)) return; /* checked at load */
  rt_conv_geom g = *g0;
  g.cout = geo.cout, g.c1out = geo.c1out, g.ntiles = rt_ceil_div(geo.c1out, g.tn);
  g.diag8 = geo.ig == 8 && geo.og == 8;
  const size_t xes = dtype_size((int)g.x->dtype), wes = dtype_size((int)g.w->dtype);
  const size_t yes = dtype_size((int)g.y->dtype), res = g.res ? dtype_size((int)g.res->dtype) : 0;
  const int64_t hw_in = g.h * g.w_, hw_out = g.ho * g.wo;
  uint64_t lo, hi, per_image = (uint64_t)(g.mtiles * g.ntiles);
  rt_block_range((uint64_t)g.n * per_image, task->block_dim, block, &lo, &hi);
  for (uint64_t t = lo; t < hi; t++) {
    int64_t img = (int64_t)(t / per_image), in_img = (int64_t)(t % per_image);
    int64_t mt = in_img / g.ntiles, nb = in_img % g.ntiles * g.tn;
    int64_t nend = nb + g.tn < g.c1out ? nb + g.tn : g.c1out, nb_first = nb;
    convg_run r;
    convg_run_of(&geo, nb, &r); /* then run after run: the walk from block 0 once per tile */
    while (nb < nend) {
      if (nb >= r.nb0 + r.len) convg_run_next(&geo, &r);
      int64_t end = r.nb0 + r.len < nend ? r.nb0 + r.len : nend;
      rt_conv_geom s = g;
      int64_t cin_hi = r.c1_hi * C0 < g.cin ? r.c1_hi * C0 : g.cin;
      s.n = 1, s.c1 = s.c1v = r.c1_hi - r.c1_lo, s.cin = cin_hi - r.c1_lo * C0, s.k = s.c1 * geo.taps;
      s.c1out = r.len, s.cout = g.cout - nb * C0, s.tn = end - nb, s.ntiles = 1;
      s.xd = (const uint8_t *)g.xd + (size_t)((img * g.c1 + r.c1_lo) * hw_in * C0) * xes;
      s.wd = (const uint8_t *)g.wd + ((size_t)r.base + (size_t)(nb - r.nb0)) * C0 * C0 * wes;
      s.yd = (uint8_t *)g.yd + (size_t)((img * g.c1out + nb) * hw_out * C0) * yes;
      s.rd = g.rd ? (const uint8_t *)g.rd + (size_t)((img * g.c1out + nb) * hw_out * C0) * res : NULL;
      s.bd = g.bd ? g.bd + nb * C0 : NULL;
      tile(&s, 0, mt, 0, core);
      nb = end;
    }
    if (args->aux) { /* the epilogue program over the whole tile (epilogue.c) */
      int64_t p0 = mt * g.tm, p1 = p0 + g.tm < hw_out ? p0 + g.tm : hw_out;
      rt_epi_pixels(args->aux, task, args, img, p0, p1, nb_first, nend, core);
    }
  }
}

omrt_status rt_conv_group_check(const rt_chk *c) {
  const om_task *task = c->task;
  const om_tensor *x, *w, *bias, *res, *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(c, rt_epi_ntensors(c->task))) ||
      (s = rt_chk_tensor(c, OM_CONV_T_X, "x", 0, LAYOUT_NC1HWC0, 4, 0, &x)) ||
      (s = rt_chk_tensor(c, OM_CONV_T_W, "w", 0, LAYOUT_FRACTAL_Z_G, 5, 0, &w)) ||
      (s = rt_chk_tensor(c, OM_CONV_T_BIAS, "bias", 1, LAYOUT_ND, 1, 1, &bias)) ||
      (s = rt_chk_tensor(c, OM_CONV_T_RESIDUAL, "residual", 1, LAYOUT_NC1HWC0, 4, 0, &res)) ||
      (s = rt_chk_tensor(c, OM_CONV_T_Y, "y", 0, LAYOUT_NC1HWC0, 4, 0, &y)))
    return s;
  const int32_t algo = task->params[OM_CONV_P_ALGORITHM], groups = task->params[OM_CONV_P_GROUPS];
  if (algo != OM_CONV_DIRECT)
    return rt_chk_fail(c,
                       "params[%d] algorithm %d: a grouped convolution (params[%d] = %d groups) runs direct",
                       OM_CONV_P_ALGORITHM, (int)algo, OM_CONV_P_GROUPS, (int)groups);
  convg_geom geo;
  if (w->dtype != x->dtype) return rt_chk_fail(c, "w dtype %u: expected x's dtype %u", w->dtype, x->dtype);
  if (convg_init(w->dims, &geo) || w->dims[0] != groups || geo.cin != x->dims[1])
    return rt_chk_fail(c, "w [%lld, %lld, %lld, ...] does not match %d groups and x channels %lld",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2], (int)groups,
                       (long long)x->dims[1]);
  rt_conv_params p;
  rt_conv_params_read(task, &p);
  if (w->dims[3] != p.kh || w->dims[4] != p.kw)
    return rt_chk_fail(c, "w kernel %lldx%lld != params kh %d, kw %d", (long long)w->dims[3],
                       (long long)w->dims[4], p.kh, p.kw);
  if ((s = rt_chk_conv_params(c, &p, x, geo.cout, y))) return s;
  if (bias && bias->dims[0] != geo.cout)
    return rt_chk_fail(c, "bias dims[0] = %lld, expected Cout %lld", (long long)bias->dims[0],
                       (long long)geo.cout);
  if (res && (s = rt_chk_same_dims(c, "residual", res, "y", y))) return s;
  if ((s = rt_conv_tile_check(c))) return s;
  const int64_t tm = task->params[OM_CONV_P_TILE_M], tn = task->params[OM_CONV_P_TILE_N];
  uint64_t tiles = (uint64_t)x->dims[0] * (uint64_t)rt_ceil_div(y->dims[2] * y->dims[3], tm) *
                   (uint64_t)rt_ceil_div(geo.c1out, tn);
  return rt_chk_block_dim(c, tiles, "tiles");
}
