/* kernels_resize.c - the RESIZE task kind (contract in om_format.h): every
 * ONNX Resize / Upsample mode as one separable weighted gather over tables
 * the compiler built.
 *
 * The compiler turns a resize into, per resampled dim, a table of taps (x
 * coordinate, weight) for each output coordinate, so this kernel knows no
 * modes: y[c] = sum over tap combinations of the product of the dims'
 * weights times the x element they address. Work goes by y rows (all dims
 * but the last fixed). For a row, the leading dims' taps are expanded once
 * into "combinations" (x offset, weight) -- 2 for bilinear NCHW, 1 for any
 * nearest -- and the last dim is then resampled: with up to 4 combinations
 * (bilinear NCHW upsampling, the LR-ASPP segmentation head's case) each
 * combination's x row is gathered along the last dim once into a small
 * cache of rows, which neighbouring output rows share, and the output row
 * is their weighted sum (vectorized); otherwise the combinations' x rows
 * are blended first and then gathered, or, for rows too wide for the
 * stack buffers, each output is a short gather of its own. Select
 * mode (nearest: one tap everywhere) copies elements as bytes, so it serves
 * every dtype. Values are computed in f32 into a stack chunk and converted
 * to y's dtype a chunk at a time.
 *
 * Load check: the tables must be WEIGHTS (immutable, so their entries are
 * verified once here): every entry inside its x dim, or -1 (outside) in tap
 * 0; tap counts bounded so the combinations fit the kernel's stack arrays.
 */
#include "runtime/kernels.h"

enum { RS_MAX_TAPS = 1024, RS_MAX_COMBOS = 4096, RS_CHUNK = 512, RS_ROW_MAX = 2048, RS_CACHE = 4 };

typedef struct rs_geom {
  int rank;
  int64_t taps[MAX_RANK];
  uint64_t base[MAX_RANK];   /* table entry where dim d's taps start */
  int64_t xstride[MAX_RANK]; /* x elements per step along dim d */
  uint64_t entries;          /* table entries in all */
} rs_geom;

static void rs_geom_read(const om_task *task, const om_tensor *x, const om_tensor *y, rs_geom *g) {
  g->rank = (int)x->rank;
  g->entries = 0;
  int64_t stride = 1;
  for (int d = g->rank - 1; d >= 0; d--) {
    g->xstride[d] = stride;
    stride *= x->dims[d];
  }
  for (int d = 0; d < g->rank; d++) {
    g->taps[d] = task->params[OM_RESIZE_P_TAPS + d];
    g->base[d] = g->entries;
    g->entries += (uint64_t)y->dims[d] * (uint64_t)g->taps[d];
  }
}

static inline float rs_ld(const void *p, int f16, int64_t i) {
  return f16 ? rt_h2f(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* Interpolated values of outputs [o0, o0 + n) of one row into out[]. */
static void rs_interp(const rs_geom *g, const void *xd, int xf16, const int32_t *idx, const float *w,
                      const int64_t *coff, const float *cw, int nc, int64_t o0, int64_t n, float extrap,
                      float *out) {
  int L = g->rank - 1;
  int64_t tl = g->taps[L];
  if (tl == 0) {
    for (int64_t j = 0; j < n; j++)
      out[j] = 0.0f;
    for (int k = 0; k < nc; k++)
      for (int64_t j = 0; j < n; j++)
        out[j] += cw[k] * rs_ld(xd, xf16, coff[k] + o0 + j);
    return;
  }
  const int32_t *ti = idx + g->base[L] + (uint64_t)o0 * (uint64_t)tl;
  const float *tw = w + g->base[L] + (uint64_t)o0 * (uint64_t)tl;
  if (nc == 2 && tl == 2) { /* bilinear */
    const int64_t b0 = coff[0], b1 = coff[1];
    const float w0 = cw[0], w1 = cw[1];
    for (int64_t j = 0; j < n; j++, ti += 2, tw += 2) {
      if (ti[0] < 0) {
        out[j] = extrap;
        continue;
      }
      float r0 = tw[0] * rs_ld(xd, xf16, b0 + ti[0]) + tw[1] * rs_ld(xd, xf16, b0 + ti[1]);
      float r1 = tw[0] * rs_ld(xd, xf16, b1 + ti[0]) + tw[1] * rs_ld(xd, xf16, b1 + ti[1]);
      out[j] = w0 * r0 + w1 * r1;
    }
    return;
  }
  for (int64_t j = 0; j < n; j++, ti += tl, tw += tl) {
    if (ti[0] < 0) {
      out[j] = extrap;
      continue;
    }
    float acc = 0.0f;
    for (int k = 0; k < nc; k++) {
      float r = 0.0f;
      for (int64_t t = 0; t < tl; t++)
        r += tw[t] * rs_ld(xd, xf16, coff[k] + ti[t]);
      acc += cw[k] * r;
    }
    out[j] = acc;
  }
}

/* tmp[0..len) = sum_k cw[k] * x[coff[k] + 0..len), rows read through row[]
 * (f32 staging for f16 x); every loop here vectorizes. */
static void rs_blend(const void *xd, int xt, const int64_t *coff, const float *cw, int nc, int64_t len,
                     float *tmp, float *row) {
  for (int k = 0; k < nc; k++) {
    const float *r = row;
    if (xt == DT_FLOAT16)
      rt_load_f32(row, xd, xt, (size_t)coff[k], (size_t)len);
    else
      r = (const float *)xd + coff[k];
    const float c = cw[k];
    if (k == 0)
      for (int64_t i = 0; i < len; i++)
        tmp[i] = c * r[i];
    else
      for (int64_t i = 0; i < len; i++)
        tmp[i] += c * r[i];
  }
}

/* out[j] = sum_t w[j*tl + t] * tmp[idx[j*tl + t]] for n outputs (tap 0 = -1:
 * the extrapolation value). */
static void rs_gather(const int32_t *ti, const float *tw, int64_t tl, const float *tmp, int64_t n,
                      float extrap, float *out) {
  if (tl == 2) {
    for (int64_t j = 0; j < n; j++, ti += 2, tw += 2)
      out[j] = ti[0] < 0 ? extrap : tw[0] * tmp[ti[0]] + tw[1] * tmp[ti[1]];
    return;
  }
  for (int64_t j = 0; j < n; j++, ti += tl, tw += tl) {
    if (ti[0] < 0) {
      out[j] = extrap;
      continue;
    }
    float acc = 0.0f;
    for (int64_t t = 0; t < tl; t++)
      acc += tw[t] * tmp[ti[t]];
    out[j] = acc;
  }
}

void rt_resize_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_RESIZE_T_X], *y = args->desc[OM_RESIZE_T_Y];
  const uint8_t *xd = args->data[OM_RESIZE_T_X];
  const int32_t *idx = args->data[OM_RESIZE_T_IDX];
  const float *w = args->data[OM_RESIZE_T_W];
  uint8_t *yd = args->data[OM_RESIZE_T_Y];
  const int select = task->params[OM_RESIZE_P_MODE] == 1, xt = (int)x->dtype, yt = (int)y->dtype;
  const size_t xs = dtype_size(xt), ys = dtype_size(yt);
  rs_geom g;
  rs_geom_read(task, x, y, &g);
  uint8_t value[8];
  uint64_t bits = (uint64_t)(uint32_t)task->params[OM_RESIZE_P_VALUE_HI] << 32 |
                  (uint32_t)task->params[OM_RESIZE_P_VALUE_LO];
  for (int k = 0; k < 8; k++)
    value[k] = (uint8_t)(bits >> (8 * k));
  const float extrap = select ? 0.0f : rt_get(value, yt, 0);
  const int L = g.rank - 1;
  const int64_t W = y->dims[L], tl = g.taps[L];
  int64_t coff[RS_MAX_COMBOS];
  float cw[RS_MAX_COMBOS], buf[RS_ROW_MAX], tmp[RS_ROW_MAX];
  /* the last dim's resampled rows, keyed by the x row they came from */
  float cache[RS_CACHE][RS_ROW_MAX];
  int64_t cache_off[RS_CACHE];
  uint64_t cache_use[RS_CACHE] = {0}, clock = 0;
  for (int e = 0; e < RS_CACHE; e++)
    cache_off[e] = -1;
  int last_outside = 0;
  for (int64_t o = 0; !select && tl && o < W; o++)
    last_outside |= idx[g.base[L] + (uint64_t)o * (uint64_t)tl] < 0;
  uint64_t lo, hi;
  rt_block_range(rt_elements(y) / (uint64_t)W, task->block_dim, block, &lo, &hi);
  for (uint64_t row = lo; row < hi; row++) {
    int64_t c[MAX_RANK];
    uint64_t rest = row;
    for (int d = L - 1; d >= 0; d--) {
      c[d] = (int64_t)(rest % (uint64_t)y->dims[d]);
      rest /= (uint64_t)y->dims[d];
    }
    int nc = 1, outside = 0;
    coff[0] = 0, cw[0] = 1.0f;
    for (int d = 0; d < L && !outside; d++) {
      if (g.taps[d] == 0) {
        for (int k = 0; k < nc; k++)
          coff[k] += c[d] * g.xstride[d];
        continue;
      }
      uint64_t at = g.base[d] + (uint64_t)c[d] * (uint64_t)g.taps[d];
      const int32_t *ti = idx + at;
      if (ti[0] < 0) {
        outside = 1;
        break;
      }
      for (int64_t t = g.taps[d] - 1; t >= 0; t--) /* t = 0 last: it overwrites the sources */
        for (int k = 0; k < nc; k++) {
          coff[t * nc + k] = coff[k] + ti[t] * g.xstride[d];
          cw[t * nc + k] = cw[k] * (w ? w[at + (uint64_t)t] : 1.0f);
        }
      nc *= (int)g.taps[d];
    }
    uint8_t *yrow = yd + row * (uint64_t)W * ys;
    if (outside) {
      for (int64_t o = 0; o < W; o++)
        memcpy(yrow + (uint64_t)o * ys, value, ys);
      continue;
    }
    if (select) {
      const int32_t *ti = tl ? idx + g.base[L] : NULL;
      for (int64_t o = 0; o < W; o++) {
        int64_t src = ti ? ti[o] : o;
        if (src < 0)
          memcpy(yrow + (uint64_t)o * ys, value, ys);
        else if (xt == yt)
          memmove(yrow + (uint64_t)o * ys, xd + (uint64_t)(coff[0] + src) * xs, ys);
        else
          rt_put(yrow, yt, (size_t)o, rt_get(xd, xt, (size_t)(coff[0] + src)));
      }
      continue;
    }
    if (tl && nc <= RS_CACHE && W <= RS_ROW_MAX && x->dims[L] <= RS_ROW_MAX) {
      /* resample each combination's x row along the last dim once (rows
       * are shared by neighbouring output rows), then blend: y = sum_k
       * cw[k] * row_k, which vectorizes */
      float *rows[RS_CACHE];
      for (int k = 0; k < nc; k++) {
        int hit = -1;
        for (int e = 0; e < RS_CACHE && hit < 0; e++)
          if (cache_off[e] == coff[k]) hit = e;
        if (hit < 0) { /* the least recently used slot no combination of this row holds */
          for (int e = 0; e < RS_CACHE; e++) {
            int held = 0;
            for (int j = 0; j < k; j++)
              held |= rows[j] == cache[e];
            if (!held && (hit < 0 || cache_use[e] < cache_use[hit])) hit = e;
          }
          const float *r = (const float *)xd + coff[k];
          if (xt == DT_FLOAT16) rt_load_f32(tmp, xd, xt, (size_t)coff[k], (size_t)x->dims[L]), r = tmp;
          rs_gather(idx + g.base[L], w + g.base[L], tl, r, W, extrap, cache[hit]);
          cache_off[hit] = coff[k];
        }
        cache_use[hit] = ++clock;
        rows[k] = cache[hit];
      }
      for (int64_t o = 0; o < W; o++)
        buf[o] = cw[0] * rows[0][o];
      for (int k = 1; k < nc; k++)
        for (int64_t o = 0; o < W; o++)
          buf[o] += cw[k] * rows[k][o];
      if (last_outside)
        for (int64_t o = 0; o < W; o++)
          if (idx[g.base[L] + (uint64_t)o * (uint64_t)tl] < 0) buf[o] = extrap; /* exactly, not blended */
      rt_store_f32(yrow, yt, 0, buf, (size_t)W);
      continue;
    }
    if (x->dims[L] <= RS_ROW_MAX) { /* blend the combinations' x rows first, then gather along the row */
      rs_blend(xd, xt, coff, cw, nc, x->dims[L], tmp, buf);
      for (int64_t o0 = 0; o0 < W; o0 += RS_CHUNK) {
        int64_t n = W - o0 < RS_CHUNK ? W - o0 : RS_CHUNK;
        const float *out = tl ? buf : tmp + o0;
        if (tl)
          rs_gather(idx + g.base[L] + (uint64_t)o0 * (uint64_t)tl,
                    w + g.base[L] + (uint64_t)o0 * (uint64_t)tl, tl, tmp, n, extrap, buf);
        rt_store_f32(yrow, yt, (size_t)o0, out, (size_t)n);
      }
      continue;
    }
    for (int64_t o0 = 0; o0 < W; o0 += RS_CHUNK) {
      int64_t n = W - o0 < RS_CHUNK ? W - o0 : RS_CHUNK;
      rs_interp(&g, xd, xt == DT_FLOAT16, idx, w, coff, cw, nc, o0, n, extrap, buf);
      rt_store_f32(yrow, yt, (size_t)o0, buf, (size_t)n);
    }
  }
}

static int rs_is_float(uint32_t dt) { return dt == DT_FLOAT16 || dt == DT_FLOAT32; }

omrt_status rt_resize_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "RESIZE"};
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_RESIZE_NTENSORS))) return s;
  const om_tensor *x, *y, *ix, *wt = NULL;
  if ((s = rt_chk_nd_tensor(&c, OM_RESIZE_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_RESIZE_T_IDX, "idx", &ix)) ||
      (s = rt_chk_nd_tensor(&c, OM_RESIZE_T_Y, "y", &y)))
    return s;
  const int32_t *q = task->params;
  int mode = q[OM_RESIZE_P_MODE];
  if (mode != 0 && mode != 1)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0 or 1", OM_RESIZE_P_MODE, mode);
  if (mode == 0 && (s = rt_chk_nd_tensor(&c, OM_RESIZE_T_W, "w", &wt))) return s;
  if (mode == 1 && task->tensors[OM_RESIZE_T_W] != OM_NONE)
    return rt_chk_fail(&c, "w: select mode (1) takes no weights");
  if (mode == 0 && (!rs_is_float(x->dtype) || !rs_is_float(y->dtype)))
    return rt_chk_fail(&c, "x dtype %u, y dtype %u: interpolation takes f16 or f32", x->dtype, y->dtype);
  if (mode == 1 && x->dtype != y->dtype && !(rs_is_float(x->dtype) && rs_is_float(y->dtype)))
    return rt_chk_fail(&c, "x dtype %u and y dtype %u: only equal dtypes or f16 <-> f32", x->dtype, y->dtype);
  if (x->rank < 1 || x->rank != y->rank)
    return rt_chk_fail(&c, "x rank %u, y rank %u: expected equal, >= 1", x->rank, y->rank);
  for (uint32_t d = 0; d < x->rank; d++)
    if (x->dims[d] < 1 || y->dims[d] < 1)
      return rt_chk_fail(&c, "dim %u: x %lld, y %lld, expected >= 1", d, (long long)x->dims[d],
                         (long long)y->dims[d]);
  uint64_t combos = 1;
  for (int d = 0; d < MAX_RANK; d++) {
    int32_t t = q[OM_RESIZE_P_TAPS + d];
    if (d >= (int)x->rank) {
      if (t != 0)
        return rt_chk_fail(&c, "params[%d] taps = %d past the rank, expected 0", OM_RESIZE_P_TAPS + d, t);
      continue;
    }
    if (t < 0 || t > RS_MAX_TAPS || (mode == 1 && t > 1))
      return rt_chk_fail(&c, "params[%d] taps of dim %d = %d, expected 0..%d", OM_RESIZE_P_TAPS + d, d, t,
                         mode == 1 ? 1 : RS_MAX_TAPS);
    if (t == 0 && x->dims[d] != y->dims[d])
      return rt_chk_fail(&c, "dim %d has no taps but x %lld != y %lld", d, (long long)x->dims[d],
                         (long long)y->dims[d]);
    if (t > 0 && d < (int)x->rank - 1) combos *= (uint64_t)t;
  }
  if (combos > RS_MAX_COMBOS)
    return rt_chk_fail(&c, "%llu tap combinations over the leading dims, at most %d",
                       (unsigned long long)combos, RS_MAX_COMBOS);
  for (int k = OM_RESIZE_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  size_t ys = dtype_size((int)y->dtype);
  const int32_t lo32 = q[OM_RESIZE_P_VALUE_LO], hi32 = q[OM_RESIZE_P_VALUE_HI];
  if ((ys < 8 && hi32 != 0) || (ys < 4 && ((uint32_t)lo32 >> (8 * ys)) != 0))
    return rt_chk_fail(&c, "params[%d..%d] = %d, %d: the extrapolation value has %zu bytes",
                       OM_RESIZE_P_VALUE_LO, OM_RESIZE_P_VALUE_HI, lo32, hi32, ys);
  rs_geom g;
  rs_geom_read(task, x, y, &g);
  if (ix->dtype != DT_INT32 || ix->rank != 1 || (uint64_t)ix->dims[0] != g.entries)
    return rt_chk_fail(&c, "idx: dtype %u rank %u dims[0] %lld, expected i32 [%llu] (the taps' tables)",
                       ix->dtype, ix->rank, (long long)ix->dims[0], (unsigned long long)g.entries);
  if (wt && (wt->dtype != DT_FLOAT32 || wt->rank != 1 || wt->dims[0] != ix->dims[0]))
    return rt_chk_fail(&c, "w: dtype %u rank %u, expected f32 [%lld]", wt->dtype, wt->rank,
                       (long long)ix->dims[0]);
  if (ix->region != OM_REGION_WEIGHTS)
    return rt_chk_fail(&c, "idx: region %u, expected WEIGHTS (its entries are verified at load)", ix->region);
  const int32_t *tab = (const int32_t *)(m->weights + ix->offset);
  for (int d = 0; d < g.rank; d++)
    for (uint64_t e = 0; e < (uint64_t)y->dims[d] * (uint64_t)g.taps[d]; e++) {
      int32_t v = tab[g.base[d] + e];
      int first = e % (uint64_t)g.taps[d] == 0;
      if (v < (first ? -1 : 0) || v >= x->dims[d])
        return rt_chk_fail(&c, "idx[%llu] (dim %d, output %llu, tap %llu) = %d outside x dim %lld",
                           (unsigned long long)(g.base[d] + e), d,
                           (unsigned long long)(e / (uint64_t)g.taps[d]),
                           (unsigned long long)(e % (uint64_t)g.taps[d]), v, (long long)x->dims[d]);
    }
  return rt_chk_block_dim(&c, rt_elements(y) / (uint64_t)y->dims[y->rank - 1], "y rows");
}
