/* kernels_poolnd.c - the POOL_ND task kind (contract in om_format.h): max,
 * average and Lp pooling over 1 to 3 spatial dims of ND [N, C, D1..Dr]
 * tensors, with dilations, asymmetric pads and ceil-mode windows.
 *
 * The ONNX pools that the NC1HWC0 POOL kind does not take (1-D and 3-D,
 * dilated, LpPool, MaxPool on i8/u8, global pools of other ranks) run here.
 * Each y element (the block unit) is one window. The spatial dims are
 * normalised to three (missing leading ones of extent 1), and per dim the
 * window's taps that land inside x are found arithmetically, so the inner
 * loops touch only real elements; the count_include_pad divisor is the
 * product of the per-dim counts of taps inside the padded extent. Values
 * are read as f32 (i8 and u8 exactly), accumulated in f32 and stored in y's
 * dtype.
 */
#include <math.h>

#include "runtime/kernels.h"

typedef struct pn_geom {
  int mode, include_pad, p;
  int64_t k[3], s[3], dl[3], pb[3], pe[3], xd[3], yd[3];
} pn_geom;

/* Spatial params and dims, right-aligned into three dims. */
static void pn_geom_read(const om_task *task, const om_tensor *x, const om_tensor *y, pn_geom *g) {
  const int32_t *q = task->params;
  int r = (int)x->rank - 2;
  g->mode = q[OM_POOL_ND_P_MODE], g->include_pad = q[OM_POOL_ND_P_COUNT_INCLUDE_PAD],
  g->p = q[OM_POOL_ND_P_LP_P];
  for (int j = 0; j < 3; j++) {
    int d = j - (3 - r); /* spatial dim index, < 0 for the padding dims */
    int on = d >= 0;
    g->k[j] = on ? q[OM_POOL_ND_P_KERNEL + d] : 1, g->s[j] = on ? q[OM_POOL_ND_P_STRIDES + d] : 1;
    g->dl[j] = on ? q[OM_POOL_ND_P_DILATIONS + d] : 1;
    g->pb[j] = on ? q[OM_POOL_ND_P_PAD_BEGIN + d] : 0, g->pe[j] = on ? q[OM_POOL_ND_P_PAD_END + d] : 0;
    g->xd[j] = on ? x->dims[2 + d] : 1, g->yd[j] = on ? y->dims[2 + d] : 1;
  }
}

static inline float pn_get(const void *p, int dt, int64_t i) {
  switch (dt) {
  case DT_INT8: return ((const int8_t *)p)[i];
  case DT_UINT8: return ((const uint8_t *)p)[i];
  default: return rt_get(p, dt, (size_t)i);
  }
}

static inline void pn_put(void *p, int dt, int64_t i, float v) {
  switch (dt) {
  case DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
  case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  default: rt_put(p, dt, (size_t)i, v);
  }
}

void rt_pool_nd_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_POOL_ND_T_X], *y = args->desc[OM_POOL_ND_T_Y];
  const void *xd = args->data[OM_POOL_ND_T_X];
  void *yd = args->data[OM_POOL_ND_T_Y];
  const int xt = (int)x->dtype, yt = (int)y->dtype;
  pn_geom g;
  pn_geom_read(task, x, y, &g);
  const int64_t plane = g.xd[0] * g.xd[1] * g.xd[2], oplane = g.yd[0] * g.yd[1] * g.yd[2];
  const float lowest = xt == DT_INT8 ? -128.0f : xt == DT_UINT8 ? 0.0f : -INFINITY;
  const float p = (float)g.p;
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  for (uint64_t i = lo; i < hi; i++) {
    int64_t nc = (int64_t)(i / (uint64_t)oplane), rest = (int64_t)(i % (uint64_t)oplane);
    int64_t o[3], t0[3], t1[3], start[3], padded = 1, valid = 1;
    o[2] = rest % g.yd[2], rest /= g.yd[2];
    o[1] = rest % g.yd[1], o[0] = rest / g.yd[1];
    for (int j = 0; j < 3; j++) {
      start[j] = o[j] * g.s[j] - g.pb[j];
      int64_t n_in = 0, n_pad = 0, first = -1, last = -1;
      for (int64_t t = 0; t < g.k[j]; t++) {
        int64_t at = start[j] + t * g.dl[j];
        if (at >= g.xd[j] + g.pe[j]) break;
        n_pad++;
        if (at < 0 || at >= g.xd[j]) continue;
        if (first < 0) first = t;
        last = t;
        n_in++;
      }
      t0[j] = first < 0 ? 0 : first, t1[j] = first < 0 ? 0 : last + 1;
      padded *= n_pad, valid *= n_in;
    }
    const int64_t xbase = nc * plane;
    float acc = g.mode == 0 ? lowest : 0.0f;
    for (int64_t a = t0[0]; a < t1[0]; a++) {
      int64_t ia = start[0] + a * g.dl[0];
      for (int64_t b = t0[1]; b < t1[1]; b++) {
        int64_t ib = start[1] + b * g.dl[1];
        const int64_t row = xbase + (ia * g.xd[1] + ib) * g.xd[2];
        for (int64_t e = t0[2]; e < t1[2]; e++) {
          float v = pn_get(xd, xt, row + start[2] + e * g.dl[2]);
          if (g.mode == 0)
            acc = v > acc || v != v ? v : acc;
          else if (g.mode == 1)
            acc += v;
          else
            acc += g.p == 1 ? fabsf(v) : g.p == 2 ? v * v : powf(fabsf(v), p);
        }
      }
    }
    if (g.mode == 1) {
      int64_t count = g.include_pad ? padded : valid;
      acc = count ? acc / (float)count : 0.0f;
    } else if (g.mode == 2) {
      acc = g.p == 1 ? acc : g.p == 2 ? sqrtf(acc) : powf(acc, 1.0f / p);
    }
    pn_put(yd, yt, (int64_t)i, acc);
  }
}

/* Pooled extent with floor and ceil rounding; < 1 when the window does not fit. */
static void pn_out(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t dl, int64_t s, int64_t *fl,
                   int64_t *ce) {
  int64_t span = in + pb + pe - (dl * (k - 1) + 1);
  *fl = span < 0 ? 0 : span / s + 1;
  *ce = span < 0 ? 0 : (span + s - 1) / s + 1;
}

omrt_status rt_pool_nd_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "POOL_ND"};
  omrt_status s;
  const om_tensor *x, *y;
  if ((s = rt_chk_ntensors(&c, OM_POOL_ND_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_POOL_ND_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_POOL_ND_T_Y, "y", &y)))
    return s;
  if (x->rank < 3 || x->rank > 5 || y->rank != x->rank)
    return rt_chk_fail(&c, "x rank %u, y rank %u: expected equal, 3..5 (1 to 3 spatial dims)", x->rank,
                       y->rank);
  const int32_t *q = task->params;
  int mode = q[OM_POOL_ND_P_MODE], r = (int)x->rank - 2;
  if (mode < 0 || mode > 2)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0..2", OM_POOL_ND_P_MODE, mode);
  int fx = x->dtype == DT_FLOAT16 || x->dtype == DT_FLOAT32,
      fy = y->dtype == DT_FLOAT16 || y->dtype == DT_FLOAT32;
  int ints = x->dtype == y->dtype && (x->dtype == DT_INT8 || x->dtype == DT_UINT8);
  if (!(fx && fy) && !(mode == 0 && ints))
    return rt_chk_fail(&c, "x dtype %u, y dtype %u: expected f16/f32 (max also i8 or u8, x and y the same)",
                       x->dtype, y->dtype);
  const int32_t include_pad = q[OM_POOL_ND_P_COUNT_INCLUDE_PAD], p = q[OM_POOL_ND_P_LP_P];
  if (include_pad != 0 && (mode != 1 || include_pad != 1))
    return rt_chk_fail(&c, "params[%d] count_include_pad = %d, expected 0 or 1 (avg only)",
                       OM_POOL_ND_P_COUNT_INCLUDE_PAD, include_pad);
  if (mode == 2 ? p < 1 || p > 64 : p != 0)
    return rt_chk_fail(&c, "params[%d] p = %d, expected %s", OM_POOL_ND_P_LP_P, p,
                       mode == 2 ? "1..64" : "0 (lp only)");
  for (int k = OM_POOL_ND_P_KERNEL; k < OM_TASK_MAX_PARAMS; k++) { /* the five per-dim groups */
    int d = (k - OM_POOL_ND_P_KERNEL) % OM_POOL_ND_MAX_DIMS;
    int32_t v = q[k];
    if (k >= OM_POOL_ND_NPARAMS || d >= r) {
      if (v != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, v);
      continue;
    }
    int32_t min = k < OM_POOL_ND_P_PAD_BEGIN ? 1 : 0; /* kernel, strides, dilations >= 1 */
    if (v < min || v > 65535) return rt_chk_fail(&c, "params[%d] = %d, expected %d..65535", k, v, min);
  }
  if (x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
    return rt_chk_fail(&c, "y N, C = %lld, %lld differ from x's %lld, %lld", (long long)y->dims[0],
                       (long long)y->dims[1], (long long)x->dims[0], (long long)x->dims[1]);
  for (int d = 0; d < r; d++) {
    int64_t k = q[OM_POOL_ND_P_KERNEL + d], st = q[OM_POOL_ND_P_STRIDES + d],
            dl = q[OM_POOL_ND_P_DILATIONS + d];
    int64_t pb = q[OM_POOL_ND_P_PAD_BEGIN + d], pe = q[OM_POOL_ND_P_PAD_END + d], in = x->dims[2 + d];
    int64_t ext = dl * (k - 1) + 1, fl, ce;
    if (pb >= ext || pe >= ext)
      return rt_chk_fail(&c, "spatial dim %d: pads %lld, %lld must be below the kernel extent %lld", d,
                         (long long)pb, (long long)pe, (long long)ext);
    if (in < 1) return rt_chk_fail(&c, "x spatial dim %d = %lld, expected >= 1", d, (long long)in);
    pn_out(in, pb, pe, k, dl, st, &fl, &ce);
    if (fl < 1 || (y->dims[2 + d] != fl && y->dims[2 + d] != ce))
      return rt_chk_fail(
          &c,
          "y spatial dim %d = %lld, expected %lld (floor) or %lld (ceil) for x %lld, kernel %lld, "
          "stride %lld, dilation %lld, pads %lld, %lld",
          d, (long long)y->dims[2 + d], (long long)fl, (long long)ce, (long long)in, (long long)k,
          (long long)st, (long long)dl, (long long)pb, (long long)pe);
  }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
