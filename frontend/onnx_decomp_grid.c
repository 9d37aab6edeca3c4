/* onnx_decomp_grid.c - GridSample, AffineGrid, RoiAlign and DeformConv as IR subgraphs
 * (onnx_decomp.h): sampling at computed positions, as gathers.
 *
 * GridSample(X [N, C, D1..Dr], grid [N, O1..Or, r]) samples X at the
 * normalized positions of grid (its last axis lists the coordinates in
 * reverse dim order: x for Dr first). Per spatial dim j, on [N, O] tensors
 * (O = O1 x .. x Or, grid flattened):
 *   x_j = (g + 1) / 2 * (D_j - 1)         align_corners = 1
 *   x_j = ((g + 1) * D_j - 1) / 2         align_corners = 0
 *   nearest rounds x_j half to even (the node tests' outputs do so in 3-D as
 *   well as 2-D); outside [lo, hi] (lo, hi = 0, D_j - 1, or
 *   -0.5, D_j - 0.5 without align_corners) border clamps x_j to [0, D_j - 1]
 *   and reflection reflects it into [lo, hi]: lo + rng * f, f = (x - lo) / rng
 *   taken mod 2 and mirrored above 1 (m > 1: 2 - m).
 * Then every tap of the window (linear: floor(x) + {0, 1} with weights 1 - t,
 * t; cubic: floor(x) + {-1, 0, 1, 2} with Keys' coefficients, a = -0.75;
 * nearest: the one pixel) is gathered from X flattened to [N, C, D1..Dr]
 * with GatherElements on one flat index per output position, weighted by the
 * product of its per-dim weights, and summed. A tap outside X reads 0
 * (zeros), the clamped pixel (border) or the reflected one (reflection).
 * X's shape must be known at import (N and C size the gather).
 */
#include <inttypes.h>
#include <string.h>

#include "frontend/onnx_decomp.h"

enum { GS_MAX_DIMS = 3 };

typedef struct gs {
  dc *b;
  int r, align, nearest, cubic;
  int pad; /* 0 zeros, 1 border, 2 reflection */
  int64_t d[GS_MAX_DIMS];
} gs;

static ir_value *f32(gs *s, double v) { return s->b->st ? NULL : dc_scalar(s->b, DT_FLOAT32, v); }
static ir_value *add(gs *s, ir_value *x, ir_value *y) { return dc_op2(s->b, IR_OP_ADD, x, y); }
static ir_value *sub(gs *s, ir_value *x, ir_value *y) { return dc_op2(s->b, IR_OP_SUB, x, y); }
static ir_value *mul(gs *s, ir_value *x, ir_value *y) { return dc_op2(s->b, IR_OP_MUL, x, y); }

/* x reflected into [lo, hi] (identity inside). */
static ir_value *reflect(gs *s, ir_value *x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return add(s, mul(s, x, f32(s, 0)), f32(s, lo));
  ir_value *t = mul(s, sub(s, x, f32(s, lo)), f32(s, 1 / rng));
  ir_value *m = sub(s, t, mul(s, dc_op1(s->b, IR_OP_FLOOR, mul(s, t, f32(s, 0.5))), f32(s, 2))); /* t mod 2 */
  ir_value *f = dc_where(s->b, dc_op2(s->b, IR_OP_GREATER, m, f32(s, 1)), sub(s, f32(s, 2), m), m);
  return add(s, mul(s, f, f32(s, rng)), f32(s, lo));
}

static void bounds(const gs *s, int j, double *lo, double *hi) {
  *lo = s->align ? 0 : -0.5;
  *hi = s->align ? (double)s->d[j] - 1 : (double)s->d[j] - 0.5;
}

/* Keys' cubic coefficient k (0..3) for the fraction t in [0, 1). */
static ir_value *cubic_coeff(gs *s, ir_value *t, int k) {
  const double a = -0.75;
  ir_value *u = k == 0   ? add(s, t, f32(s, 1))
                : k == 1 ? t
                : k == 2 ? sub(s, f32(s, 1), t)
                         : sub(s, f32(s, 2), t);
  if (k == 0 || k == 3) /* ((a u - 5a) u + 8a) u - 4a, u in [1, 2] */
    return sub(s, mul(s, add(s, mul(s, sub(s, mul(s, u, f32(s, a)), f32(s, 5 * a)), u), f32(s, 8 * a)), u),
               f32(s, 4 * a));
  /* ((a + 2) u - (a + 3)) u^2 + 1, u in [0, 1] */
  return add(s, mul(s, sub(s, mul(s, u, f32(s, a + 2)), f32(s, a + 3)), mul(s, u, u)), f32(s, 1));
}

/* The pixel index along dim j for tap position i (float, integral), and in *valid (zeros) whether it is
 * inside. */
static ir_value *pixel(gs *s, int j, ir_value *i, ir_value **valid) {
  const double last = (double)s->d[j] - 1;
  *valid = NULL;
  if (s->pad == 0)
    *valid = dc_op2(s->b, IR_OP_AND, dc_op2(s->b, IR_OP_GREATEROREQUAL, i, f32(s, 0)),
                    dc_op2(s->b, IR_OP_LESSOREQUAL, i, f32(s, last)));
  if (s->pad == 2) {
    double lo, hi;
    bounds(s, j, &lo, &hi);
    /* an integral position reflects to an integral one; rounded, since the
     * float arithmetic may land a hair below it */
    i = dc_op1(s->b, IR_OP_ROUND, reflect(s, i, lo, hi));
  }
  return dc_clip(s->b, i, 0, last);
}

status onnx_decomp_grid_sample(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  gs s = {.b = &b};
  ir_value *x = dc_in(&b, 0), *grid = dc_in(&b, 1);
  dtype xt = dc_dtype(&b, x), gt = dc_dtype(&b, grid);
  if (b.st) return dc_end(&b);
  if ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || (gt != DT_FLOAT32 && gt != DT_FLOAT16))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "X and grid have types %s and %s; float32 and float16 are supported",
                     onnx_dtype_name(xt), onnx_dtype_name(gt));
  if (x->rank < 3 || x->rank > 2 + GS_MAX_DIMS || ir_value_elements(x) < 0 || grid->rank != x->rank ||
      ir_value_elements(grid) < 0 || grid->dims[grid->rank - 1] != x->rank - 2 || grid->dims[0] != x->dims[0])
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "X [N, C, D1..Dr] (r = 1..%d) and grid [N, O1..Or, r] need known, "
                     "matching shapes at import",
                     GS_MAX_DIMS);
  s.r = x->rank - 2;
  s.align = (int)dc_attr_int(&b, "align_corners", 0);
  char mode[16], pad[16];
  onnx_attr_string(nd, "mode", nd->c->opset >= 20 ? "linear" : "bilinear", mode, sizeof mode);
  onnx_attr_string(nd, "padding_mode", "zeros", pad, sizeof pad);
  s.nearest = !strcmp(mode, "nearest");
  s.cubic = !strcmp(mode, "cubic") || !strcmp(mode, "bicubic");
  if (!s.nearest && !s.cubic && strcmp(mode, "linear") && strcmp(mode, "bilinear"))
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'mode' = '%s' (linear, nearest or cubic)", mode);
  s.pad = !strcmp(pad, "zeros") ? 0 : !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : -1;
  if (s.pad < 0)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'padding_mode' = '%s' (zeros, border or reflection)",
                     pad);
  const int64_t n = x->dims[0], c = x->dims[1];
  int64_t o = 1, p = 1, stride[GS_MAX_DIMS];
  for (int j = 0; j < s.r; j++)
    s.d[j] = x->dims[2 + j], o *= grid->dims[1 + j];
  for (int j = s.r - 1; j >= 0; j--)
    stride[j] = p, p *= s.d[j];

  ir_value *xf = dc_reshape_to(&b, x, 3, (const int64_t[]){n, c, p});
  ir_value *gf = dc_cast(&b, dc_reshape_to(&b, grid, 3, (const int64_t[]){n, o, s.r}), DT_FLOAT32);
  ir_value *fl[GS_MAX_DIMS], *fr[GS_MAX_DIMS]; /* per dim: the first tap's position, the fraction */
  for (int j = 0; j < s.r; j++) {
    ir_value *g = dc_gather(&b, gf, b.st ? NULL : dc_scalar(&b, DT_INT64, s.r - 1 - j), 2); /* [N, O] */
    const double dj = (double)s.d[j];
    ir_value *xj =
        s.align ? mul(&s, add(&s, g, f32(&s, 1)), f32(&s, (dj - 1) / 2))
                : mul(&s, sub(&s, mul(&s, add(&s, g, f32(&s, 1)), f32(&s, dj)), f32(&s, 1)), f32(&s, 0.5));
    if (s.nearest) xj = dc_op1(&b, IR_OP_ROUND, xj);
    double lo, hi;
    bounds(&s, j, &lo, &hi);
    if (s.pad == 1) {
      ir_value *out = dc_op2(&b, IR_OP_OR, dc_op2(&b, IR_OP_LESS, xj, f32(&s, lo)),
                             dc_op2(&b, IR_OP_GREATER, xj, f32(&s, hi)));
      xj = dc_where(&b, out, dc_clip(&b, xj, 0, dj - 1), xj);
    } else if (s.pad == 2) {
      xj = reflect(&s, xj, lo, hi);
    }
    fl[j] = s.nearest ? xj : dc_op1(&b, IR_OP_FLOOR, xj);
    fr[j] = s.nearest ? NULL : sub(&s, xj, fl[j]);
  }
  const int taps = s.nearest ? 1 : s.cubic ? 4 : 2, first = s.cubic ? -1 : 0;
  int total = 1;
  for (int j = 0; j < s.r; j++)
    total *= taps;
  ir_value *sum = NULL;
  for (int t = 0; t < total && !b.st; t++) {
    ir_value *idx = NULL, *w = NULL, *valid = NULL;
    for (int j = 0, rest = t; j < s.r; j++, rest /= taps) {
      const int k = rest % taps;
      ir_value *v = NULL, *pos = add(&s, fl[j], f32(&s, first + k));
      ir_value *ij = pixel(&s, j, pos, &v);
      idx = idx ? add(&s, idx, mul(&s, ij, f32(&s, (double)stride[j])))
                : mul(&s, ij, f32(&s, (double)stride[j]));
      if (v) valid = valid ? dc_op2(&b, IR_OP_AND, valid, v) : v;
      ir_value *wj = s.nearest ? NULL
                     : s.cubic ? cubic_coeff(&s, fr[j], k)
                     : k       ? fr[j]
                               : sub(&s, f32(&s, 1), fr[j]);
      if (wj) w = w ? mul(&s, w, wj) : wj;
    }
    if (valid) w = w ? mul(&s, w, dc_cast(&b, valid, DT_FLOAT32)) : dc_cast(&b, valid, DT_FLOAT32);
    /* [N, O] -> [N, C, O] int64 flat indices into X's [N, C, P] */
    ir_value *ix = dc_unsqueeze(&b, dc_cast(&b, idx, DT_INT64), 1, (const int64_t[]){1});
    ix = dc_expand(&b, ix, dc_ints(&b, 3, (const int64_t[]){n, c, o}));
    ir_value *val = dc_cast(&b, dc_gather_elements(&b, xf, ix, 2), DT_FLOAT32);
    if (w) val = mul(&s, val, dc_unsqueeze(&b, w, 1, (const int64_t[]){1}));
    sum = sum ? add(&s, sum, val) : val;
  }
  int64_t yd[2 + GS_MAX_DIMS] = {n, c};
  for (int j = 0; j < s.r; j++)
    yd[2 + j] = grid->dims[1 + j];
  dc_output(&b, 0, dc_cast(&b, dc_reshape_to(&b, sum, 2 + s.r, yd), xt));
  return dc_end(&b);
}

/* AffineGrid(theta [N, r, r+1], size [N, C, D1..Dr]) (opset 20), r = 2 or 3:
 * grid [N, D1..Dr, r] = base x theta^T, base the [D1*..*Dr, r+1] constant of
 * normalized pixel centres (x for the last dim first, then 1): -1 + (2i + 1)
 * / D, or -1 + 2i / (D - 1) with align_corners (0 when D = 1). size is a
 * compile-time input. */
status onnx_decomp_affine_grid(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *theta = dc_in(&b, 0);
  int64_t size[2 + GS_MAX_DIMS];
  int count = 0;
  status in = onnx_ints_input(nd, 1, "size", size, 2 + GS_MAX_DIMS, &count); /* its message is recorded */
  if (in) return in;
  const int r = count - 2, align = (int)dc_attr_int(&b, "align_corners", 0);
  dtype tt = dc_dtype(&b, theta);
  if (b.st) return dc_end(&b);
  if (r != 2 && r != 3)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "size has %d values; 4 (2-D) or 5 (3-D) are supported", count);
  if (tt != DT_FLOAT32 && tt != DT_FLOAT16)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "theta has type %s; float32 and float16 are supported",
                     onnx_dtype_name(tt));
  int64_t pts = 1;
  for (int j = 0; j < r; j++) {
    if (size[2 + j] < 1 || size[2 + j] > 65536)
      return dc_refuse(&b, ST_ERR_INVALID, "size[%d] = %" PRId64 " is outside 1..65536", 2 + j, size[2 + j]);
    pts *= size[2 + j];
  }
  if (pts > (1 << 24))
    return dc_refuse(&b, ST_ERR_LIMIT, "the grid has %" PRId64 " points, more than %d", pts, 1 << 24);
  float *base = arena_array(&b.g->arena, (size_t)pts * (size_t)(r + 1), sizeof *base);
  if (!base) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t p = 0; p < pts; p++) {
    int64_t rest = p;
    for (int j = r - 1; j >= 0; j--) { /* dim j's coordinate goes to column r - 1 - j */
      const int64_t d = size[2 + j], i = rest % d;
      rest /= d;
      double v = align ? (d > 1 ? -1.0 + 2.0 * (double)i / (double)(d - 1) : 0.0)
                       : -1.0 + (2.0 * (double)i + 1) / (double)d;
      base[p * (r + 1) + (r - 1 - j)] = (float)v;
    }
    base[p * (r + 1) + r] = 1.0f;
  }
  ir_value *bv = dc_const(&b, DT_FLOAT32, 2, (const int64_t[]){pts, r + 1}, base);
  static const int64_t perm[3] = {0, 2, 1};
  ir_value *g =
      dc_op2(&b, IR_OP_MATMUL, dc_cast(&b, bv, tt), dc_transpose(&b, theta, 3, perm)); /* [N, pts, r] */
  int64_t shape[2 + GS_MAX_DIMS];
  shape[0] = size[0];
  for (int j = 0; j < r; j++)
    shape[1 + j] = size[2 + j];
  shape[1 + r] = r;
  dc_output(&b, 0, dc_reshape_to(&b, g, r + 2, shape));
  return dc_end(&b);
}

/* RoiAlign(X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R])
 * (opset 10; coordinate_transformation_mode 16) -> [R, C, oh, ow]. Each
 * output bin averages (or takes the max of) sampling_ratio^2 bilinear
 * samples at the centres of a regular grid inside it, as ONNX's reference:
 * a sample more than one pixel outside X counts as 0; otherwise it is
 * clamped to X, its four neighbours weighted. Coordinates are [R, S] tensors
 * (S = oh * ow * sampling_ratio^2 samples), built from the run-time rois and
 * constant per-sample offsets; the neighbours are gathered from X laid out as
 * [C, N * H * W] at flat indices b * H * W + y * W + x. sampling_ratio 0
 * (a sample count that depends on each ROI's size) is refused. */
status onnx_decomp_roi_align(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  gs s = {.b = &b};
  ir_value *x = dc_in(&b, 0), *rois = dc_in(&b, 1), *bi = dc_in(&b, 2);
  dtype xt = dc_dtype(&b, x), rt = dc_dtype(&b, rois);
  dc_dtype(&b, bi);
  const int64_t oh = dc_attr_int(&b, "output_height", 1), ow = dc_attr_int(&b, "output_width", 1);
  const int64_t ratio = dc_attr_int(&b, "sampling_ratio", 0);
  const double scale = dc_attr_float(&b, "spatial_scale", 1.0);
  char mode[8], ctm[24];
  onnx_attr_string(nd, "mode", "avg", mode, sizeof mode);
  /* before opset 16 there is no attribute, and the behaviour is output_half_pixel */
  onnx_attr_string(nd, "coordinate_transformation_mode",
                   nd->c->opset >= 16 ? "half_pixel" : "output_half_pixel", ctm, sizeof ctm);
  if (b.st) return dc_end(&b);
  const int is_max = !strcmp(mode, "max"), half = !strcmp(ctm, "half_pixel");
  if (!is_max && strcmp(mode, "avg"))
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'mode' = '%s' (avg or max)", mode);
  if (!half && strcmp(ctm, "output_half_pixel"))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "attribute 'coordinate_transformation_mode' = '%s' (half_pixel or "
                     "output_half_pixel)",
                     ctm);
  if (ratio < 1 || ratio > 64)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "attribute 'sampling_ratio' = %" PRId64 "; 1..64 are supported (0 picks "
                     "each ROI's sample count from its size, which a static graph cannot)",
                     ratio);
  if (oh < 1 || ow < 1 || oh * ow > 65536)
    return dc_refuse(&b, ST_ERR_INVALID,
                     "output_height x output_width = %" PRId64 " x %" PRId64 " (1..65536 bins)", oh, ow);
  if ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || (rt != DT_FLOAT32 && rt != DT_FLOAT16))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "X and rois have types %s and %s; float32 and float16 are supported",
                     onnx_dtype_name(xt), onnx_dtype_name(rt));
  if (x->rank != 4 || ir_value_elements(x) < 0 || rois->rank != 2 || rois->dims[1] != 4 || rois->dims[0] < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "X [N, C, H, W] and rois [R, 4] need known shapes at import");
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3], r = rois->dims[0];
  const int64_t g2 = ratio * ratio, S = oh * ow * g2;
  /* per-sample offsets in bins: ph + (iy + 0.5) / ratio, pw + (ix + 0.5) / ratio */
  float *ah = arena_array(&b.g->arena, (size_t)S, sizeof *ah),
        *aw = arena_array(&b.g->arena, (size_t)S, sizeof *aw);
  if (!ah || !aw) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < S; i++) {
    const int64_t bin = i / g2, k = i % g2;
    ah[i] = (float)((double)(bin / ow) + ((double)(k / ratio) + 0.5) / (double)ratio);
    aw[i] = (float)((double)(bin % ow) + ((double)(k % ratio) + 0.5) / (double)ratio);
  }
  ir_value *rf = dc_cast(&b, rois, DT_FLOAT32);
  ir_value *col[4];
  for (int k = 0; k < 4; k++) /* [R, 1] */
    col[k] = dc_slice(&b, rf, 1, (const int64_t[]){k}, (const int64_t[]){k + 1}, (const int64_t[]){1});
  const double off = half ? 0.5 : 0.0;
  ir_value *ys = sub(&s, mul(&s, col[1], f32(&s, scale)), f32(&s, off));
  ir_value *xs = sub(&s, mul(&s, col[0], f32(&s, scale)), f32(&s, off));
  ir_value *rh = mul(&s, sub(&s, col[3], col[1]), f32(&s, scale)),
           *rw = mul(&s, sub(&s, col[2], col[0]), f32(&s, scale));
  if (!half) rh = dc_op2(&b, IR_OP_MAX, rh, f32(&s, 1)), rw = dc_op2(&b, IR_OP_MAX, rw, f32(&s, 1));
  ir_value *y =
      add(&s, ys,
          mul(&s, mul(&s, rh, f32(&s, 1.0 / (double)oh)), dc_const(&b, DT_FLOAT32, 1, &S, ah))); /* [R, S] */
  ir_value *xx =
      add(&s, xs, mul(&s, mul(&s, rw, f32(&s, 1.0 / (double)ow)), dc_const(&b, DT_FLOAT32, 1, &S, aw)));
  ir_value *valid = dc_op1(&b, IR_OP_NOT,
                           dc_op2(&b, IR_OP_OR,
                                  dc_op2(&b, IR_OP_OR, dc_op2(&b, IR_OP_LESS, y, f32(&s, -1)),
                                         dc_op2(&b, IR_OP_GREATER, y, f32(&s, (double)h))),
                                  dc_op2(&b, IR_OP_OR, dc_op2(&b, IR_OP_LESS, xx, f32(&s, -1)),
                                         dc_op2(&b, IR_OP_GREATER, xx, f32(&s, (double)w)))));
  /* per axis: the low and high neighbour and the fraction, clamped as the reference */
  ir_value *lo[2], *hi[2], *fr[2];
  ir_value *pos[2] = {y, xx};
  const double last[2] = {(double)h - 1, (double)w - 1};
  for (int a = 0; a < 2; a++) {
    ir_value *p = dc_op2(&b, IR_OP_MAX, pos[a], f32(&s, 0));
    ir_value *fl = dc_op1(&b, IR_OP_FLOOR, p);
    ir_value *edge = dc_op2(&b, IR_OP_GREATEROREQUAL, fl, f32(&s, last[a]));
    lo[a] = dc_where(&b, edge, f32(&s, last[a]), fl);
    hi[a] = dc_where(&b, edge, f32(&s, last[a]), add(&s, fl, f32(&s, 1)));
    fr[a] = sub(&s, dc_where(&b, edge, f32(&s, last[a]), p), lo[a]);
  }
  ir_value *vf = dc_cast(&b, valid, DT_FLOAT32);
  ir_value *wy[2] = {sub(&s, f32(&s, 1), fr[0]), fr[0]}, *wx[2] = {sub(&s, f32(&s, 1), fr[1]), fr[1]};
  /* X as [C, N*H*W]; each ROI's image at b * H * W */
  ir_value *xc = dc_reshape_to(&b,
                               dc_transpose(&b, dc_reshape_to(&b, x, 3, (const int64_t[]){n, c, h * w}), 3,
                                            (const int64_t[]){1, 0, 2}),
                               2, (const int64_t[]){c, n * h * w});
  ir_value *base = mul(&s, dc_cast(&b, dc_unsqueeze(&b, bi, 1, (const int64_t[]){1}), DT_FLOAT32),
                       f32(&s, (double)(h * w)));
  ir_value *acc = NULL;
  for (int k = 0; k < 4 && !b.st; k++) {
    ir_value *yk = (k & 2) ? hi[0] : lo[0], *xk = (k & 1) ? hi[1] : lo[1];
    ir_value *idx =
        dc_cast(&b, add(&s, base, add(&s, mul(&s, yk, f32(&s, (double)w)), xk)), DT_INT64); /* [R, S] */
    ir_value *v = dc_cast(&b, dc_gather(&b, xc, idx, 1), DT_FLOAT32);                       /* [C, R, S] */
    ir_value *t = mul(&s, v, mul(&s, mul(&s, wy[k >> 1], wx[k & 1]), vf));
    acc = !acc ? t : is_max ? dc_op2(&b, IR_OP_MAX, acc, t) : add(&s, acc, t);
  }
  ir_value *bins = dc_reshape_to(&b, acc, 4, (const int64_t[]){c, r, oh * ow, g2});
  static const int64_t last_axis = 3;
  ir_value *pooled = dc_reduce(&b, is_max ? "max" : "mean", bins, 1, &last_axis, 0); /* [C, R, oh*ow] */
  ir_value *out = dc_transpose(&b, pooled, 3, (const int64_t[]){1, 0, 2});
  dc_output(&b, 0, dc_cast(&b, dc_reshape_to(&b, out, 4, (const int64_t[]){r, c, oh, ow}), xt));
  return dc_end(&b);
}

/* DeformConv(X [N, C, H, W], W [oC, C/G, kH, kW], offset [N, og*kH*kW*2, oH,
 * oW], [B], [mask [N, og*kH*kW, oH, oW]]) (opset 19), 2-D: a convolution whose
 * taps read X at positions moved by offset (per offset group og), bilinearly
 * (a corner outside X reads 0, as GridSample with zeros padding and
 * align_corners), each sample times its mask. Per tap the samples of all
 * channels are gathered as [N, og, C/og, P] (P = oH*oW); the taps stacked
 * make the [N, G, (C/G)*kH*kW, P] columns that one batched MatMul with W as
 * [G, oC/G, (C/G)*kH*kW] turns into the output. Shapes must be known at
 * import. */
status onnx_decomp_deform_conv(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  gs s = {.b = &b, .pad = 0}; /* pixel(): a tap outside X is invalid (reads 0) */
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *off = dc_in(&b, 2), *bias = dc_in(&b, 3),
           *mask = dc_in(&b, 4);
  const dtype xt = dc_dtype(&b, x);
  const int64_t G = dc_attr_int(&b, "group", 1), og = dc_attr_int(&b, "offset_group", 1);
  int64_t ks[2] = {0, 0}, st[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  int nk = dc_attr_ints(&b, "kernel_shape", ks, 2), ns = dc_attr_ints(&b, "strides", st, 2);
  int ndl = dc_attr_ints(&b, "dilations", dl, 2), np = dc_attr_ints(&b, "pads", pads, 4);
  if (b.st) return dc_end(&b);
  if ((xt != DT_FLOAT32 && xt != DT_FLOAT16) || x->rank != 4 || w->rank != 4 || off->rank != 4 ||
      ir_value_elements(x) < 0 || ir_value_elements(w) < 0 || ir_value_elements(off) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "X, W and offset need a float type and known 4-D shapes at import "
                     "(2-D deformable convolution)");
  if (nk < 0) ks[0] = w->dims[2], ks[1] = w->dims[3];
  if ((nk >= 0 && nk != 2) || (ns >= 0 && ns != 2) || (ndl >= 0 && ndl != 2) || (np >= 0 && np != 4))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "kernel_shape, strides, dilations and pads need 2, 2, 2 and 4 values");
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], wd = x->dims[3], oc = w->dims[0];
  s.d[0] = h, s.d[1] = wd;
  const int64_t T = ks[0] * ks[1], oh = off->dims[2], ow = off->dims[3], P = oh * ow;
  if (G < 1 || og < 1 || c % G || oc % G || c % og || w->dims[1] != c / G || ks[0] != w->dims[2] ||
      ks[1] != w->dims[3] || off->dims[0] != n || off->dims[1] != og * T * 2 ||
      (mask && (mask->rank != 4 || mask->dims[1] != og * T)) || T > 1024 || P > (1 << 20))
    return dc_refuse(&b, ST_ERR_INVALID,
                     "X [%" PRId64 ", %" PRId64 ", ..], W [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                     "] and offset/mask channels do not agree with group %" PRId64
                     " and offset_group %" PRId64,
                     n, c, oc, w->dims[1], w->dims[2], w->dims[3], G, og);
  const int64_t cog = c / og;
  ir_value *xg = dc_cast(&b, dc_reshape_to(&b, x, 4, (const int64_t[]){n, og, cog, h * wd}), DT_FLOAT32);
  ir_value *offs = dc_cast(&b, dc_reshape_to(&b, off, 5, (const int64_t[]){n, og, T, 2, P}), DT_FLOAT32);
  ir_value *masks =
      mask ? dc_cast(&b, dc_reshape_to(&b, mask, 4, (const int64_t[]){n, og, T, P}), DT_FLOAT32) : NULL;
  float *bh = arena_array(&b.g->arena, (size_t)P, sizeof *bh),
        *bw = arena_array(&b.g->arena, (size_t)P, sizeof *bw);
  ir_value **cols = arena_array(&b.g->arena, (size_t)T, sizeof *cols);
  if (!bh || !bw || !cols) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  static const int64_t ax3 = 3, ax2 = 2;
  for (int64_t t = 0; t < T && !b.st; t++) {
    const int64_t ki = t / ks[1], kj = t % ks[1];
    for (int64_t p = 0; p < P; p++) {
      bh[p] = (float)((p / ow) * st[0] - pads[0] + ki * dl[0]);
      bw[p] = (float)((p % ow) * st[1] - pads[1] + kj * dl[1]);
    }
    ir_value *ot = dc_gather(&b, offs, dc_scalar(&b, DT_INT64, (double)t), 2); /* [N, og, 2, P] */
    ir_value *pos[2];
    for (int a = 0; a < 2; a++)
      pos[a] = add(&s, dc_gather(&b, ot, dc_scalar(&b, DT_INT64, a), 2),
                   dc_const(&b, DT_FLOAT32, 1, &P, a ? bw : bh));
    ir_value *fl[2], *fr[2];
    for (int a = 0; a < 2; a++)
      fl[a] = dc_op1(&b, IR_OP_FLOOR, pos[a]), fr[a] = sub(&s, pos[a], fl[a]);
    ir_value *acc = NULL;
    for (int corner = 0; corner < 4 && !b.st; corner++) {
      ir_value *ix[2], *wt = NULL, *ok = NULL;
      for (int a = 0; a < 2; a++) {
        const int hi = a == 0 ? corner >> 1 : corner & 1;
        ir_value *in = NULL;
        ix[a] = pixel(&s, a, hi ? add(&s, fl[a], f32(&s, 1)) : fl[a],
                      &in); /* zeros padding: clamped, and valid */
        ok = ok ? dc_op2(&b, IR_OP_AND, ok, in) : in;
        ir_value *wa = hi ? fr[a] : sub(&s, f32(&s, 1), fr[a]);
        wt = wt ? mul(&s, wt, wa) : wa;
      }
      wt = mul(&s, wt, dc_cast(&b, ok, DT_FLOAT32)); /* [N, og, P] */
      ir_value *flat = dc_cast(&b, add(&s, mul(&s, ix[0], f32(&s, (double)wd)), ix[1]), DT_INT64);
      ir_value *at =
          dc_expand(&b, dc_unsqueeze(&b, flat, 1, &ax2), dc_ints(&b, 4, (const int64_t[]){n, og, cog, P}));
      ir_value *v =
          mul(&s, dc_gather_elements(&b, xg, at, 3), dc_unsqueeze(&b, wt, 1, &ax2)); /* [N, og, cog, P] */
      acc = acc ? add(&s, acc, v) : v;
    }
    if (masks)
      acc = mul(&s, acc,
                dc_unsqueeze(&b, dc_gather(&b, masks, dc_scalar(&b, DT_INT64, (double)t), 2), 1, &ax2));
    cols[t] = dc_unsqueeze(&b, acc, 1, &ax3); /* [N, og, cog, 1, P] */
  }
  if (b.st) return dc_end(&b);
  ir_value *all =
      T == 1 ? cols[0] : dc_concat(&b, 3, (int)T, cols); /* [N, og, cog, T, P]: channel-major, then tap */
  all = dc_reshape_to(&b, all, 4, (const int64_t[]){n, G, (c / G) * T, P});
  ir_value *wg = dc_cast(&b, dc_reshape_to(&b, w, 3, (const int64_t[]){G, oc / G, (c / G) * T}), DT_FLOAT32);
  ir_value *y = dc_reshape_to(&b, dc_op2(&b, IR_OP_MATMUL, wg, all), 4, (const int64_t[]){n, oc, oh, ow});
  if (bias) y = add(&s, y, dc_reshape_to(&b, dc_cast(&b, bias, DT_FLOAT32), 3, (const int64_t[]){oc, 1, 1}));
  dc_output(&b, 0, dc_cast(&b, y, xt));
  return dc_end(&b);
}
