/* resize.c - Resize's output dims, tap tables and reference evaluator
 * (resize.h).
 *
 * One dim at a time (ONNX's Resize is separable): for output coordinate o
 * the coordinate transform gives x_ori, the source position (in double, as
 * the reference). With b = floor(x_ori), or x_ori - 1 when x_ori is an
 * integer, and ratio = x_ori - b in (0, 1], the n neighbours are b - n/2 +
 * 1 .. b + n/2, moved inside [-ceil(n/2), D + ceil(n/2)) (the reference
 * takes the nearest entries of x edge-padded by ceil(n/2)); their
 * coefficients come from the mode: nearest picks one of the two by
 * nearest_mode, linear is (1 - ratio, ratio), cubic Keys' kernel with
 * cubic_coeff_a, and with antialias the linear / cubic kernel stretched by
 * 1/scale when downsampling (more taps, normalised to sum 1).
 * exclude_outside zeroes the neighbours outside [0, D) and renormalises;
 * then every neighbour is clamped into [0, D) (edge padding).
 * tf_crop_and_resize maps through the roi and marks coordinates outside [0,
 * D - 1] with index -1: their elements are extrapolation_value. A dim whose
 * table is the identity (same extent, each output reading its own
 * coordinate with weight 1) gets no table (taps 0), so the task and the
 * evaluator skip it.
 */
#include "ir/resize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval.h"

/* FLOATS attribute `name` into out (at most max); the count or -1. */
static int attr_floats(const ir_node *n, const char *name, double *out, int max) {
  const ir_attr *a = ir_attr_find(n, name);
  if (!a || a->kind != IR_ATTR_FLOATS) return -1;
  for (int i = 0; i < a->n && i < max; i++)
    out[i] = a->floats[i];
  return a->n;
}

static int one_of(const char *s, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { T_HALF_PIXEL, T_HALF_PIXEL_SYMMETRIC, T_PYTORCH_HALF_PIXEL, T_ALIGN_CORNERS, T_ASYMMETRIC, T_TF_CROP };
enum { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const ctm_names[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                        "align_corners", "asymmetric",           "tf_crop_and_resize"};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                            "simple"};

typedef struct rs_attrs {
  int mode, ctm, nearest, antialias, exclude_outside;
  double a, extrapolation;
  double roi[2 * MAX_RANK];
  double scales[MAX_RANK];
} rs_attrs;

/* Reads and checks the attributes every step needs (scales only when
 * with_scales). */
static status read_attrs(const ir_node *n, int rank, int with_scales, rs_attrs *r, diag *d) {
  r->mode = one_of(ir_attr_string(n, "mode", "nearest"), mode_names, 3);
  r->ctm = one_of(ir_attr_string(n, "coordinate_transformation_mode", "half_pixel"), ctm_names, 6);
  r->nearest = one_of(ir_attr_string(n, "nearest_mode", "round_prefer_floor"), nearest_names, 5);
  if (r->mode < 0 || r->ctm < 0 || r->nearest < 0)
    return ir_node_error(d, ST_ERR_INVALID, n,
                         "mode \"%s\", coordinate_transformation_mode \"%s\" or nearest_mode "
                         "\"%s\" is unknown",
                         ir_attr_string(n, "mode", "nearest"),
                         ir_attr_string(n, "coordinate_transformation_mode", "half_pixel"),
                         ir_attr_string(n, "nearest_mode", "round_prefer_floor"));
  r->antialias = ir_attr_int(n, "antialias", 0) != 0;
  r->exclude_outside = ir_attr_int(n, "exclude_outside", 0) != 0;
  if (r->antialias && r->mode == M_NEAREST)
    return ir_node_error(d, ST_ERR_INVALID, n, "antialias applies to linear and cubic modes only");
  r->a = ir_attr_float(n, "cubic_coeff_a", -0.75);
  r->extrapolation = ir_attr_float(n, "extrapolation_value", 0.0);
  for (int i = 0; i < rank; i++)
    r->roi[i] = 0.0, r->roi[rank + i] = 1.0;
  int nr = attr_floats(n, "roi", r->roi, 2 * MAX_RANK);
  if (nr >= 0 && nr != 2 * rank)
    return ir_node_error(d, ST_ERR_INVALID, n, "roi has %d values, expected %d (2 x rank)", nr, 2 * rank);
  if (!with_scales) return ST_OK;
  int ns = attr_floats(n, "scales", r->scales, MAX_RANK);
  if (ns != rank)
    return ir_node_error(d, ST_ERR_INVALID, n, "scales has %d values, expected %d (the rank)", ns, rank);
  for (int i = 0; i < rank; i++)
    if (!(r->scales[i] > 0) || !isfinite(r->scales[i]))
      return ir_node_error(d, ST_ERR_INVALID, n, "scales[%d] = %g must be positive", i, r->scales[i]);
  return ST_OK;
}

status ir_resize_infer(ir_graph *g, ir_node *n, diag *d, int64_t *dims) {
  const ir_value *x = n->in[0];
  int rank = x->rank, dt = x->dtype;
  if (rank < 1 || rank > MAX_RANK)
    return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' has rank %d, expected 1..%d", x->name, rank,
                         MAX_RANK);
  rs_attrs r;
  int has_sizes = ir_attr_find(n, "sizes") != NULL;
  status st = read_attrs(n, rank, !has_sizes, &r, d);
  if (st) return st;
  int is_float = dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE;
  if (!is_float && (r.mode != M_NEAREST || !dtype_size(dt)))
    return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' has dtype %s; %s mode takes floats", x->name,
                         dtype_name(dt) ? dtype_name(dt) : "?", mode_names[r.mode]);
  if (has_sizes) {
    int64_t sizes[MAX_RANK + 1];
    if (ir_attr_ints(n, "sizes", sizes, MAX_RANK + 1) != rank)
      return ir_node_error(d, ST_ERR_INVALID, n, "sizes must have %d values (the rank)", rank);
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    int policy = one_of(ir_attr_string(n, "keep_aspect_ratio_policy", "stretch"), policies, 3);
    if (policy < 0)
      return ir_node_error(d, ST_ERR_INVALID, n, "keep_aspect_ratio_policy \"%s\" is unknown",
                           ir_attr_string(n, "keep_aspect_ratio_policy", ""));
    double keep = policy == 1 ? INFINITY : 0.0;
    for (int i = 0; i < rank; i++) {
      if (sizes[i] < -1 || sizes[i] == 0 || sizes[i] >= (int64_t)1 << 40)
        return ir_node_error(d, ST_ERR_INVALID, n, "sizes[%d] = %lld out of range", i, (long long)sizes[i]);
      if (x->dims[i] < 1)
        return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "input '%s' has an empty dim %d", x->name, i);
      r.scales[i] = sizes[i] < 0 ? 1.0 : (double)sizes[i] / (double)x->dims[i];
      if (sizes[i] >= 0 && policy == 1) keep = fmin(keep, r.scales[i]);
      if (sizes[i] >= 0 && policy == 2) keep = fmax(keep, r.scales[i]);
    }
    for (int i = 0; i < rank; i++) {
      dims[i] = sizes[i] < 0 ? x->dims[i] : sizes[i];
      if (policy && sizes[i] >= 0) {
        r.scales[i] = keep;
        dims[i] = (int64_t)(keep * (double)x->dims[i] + 0.5);
      }
    }
    ir_attr_remove(n, "sizes");
    ir_attr_remove(n, "keep_aspect_ratio_policy");
    if (ir_attr_set_floats(g, n, "scales", rank, r.scales))
      return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory inferring shapes");
  } else {
    for (int i = 0; i < rank; i++) {
      double v = floor(r.scales[i] * (double)x->dims[i]);
      if (v >= (double)((int64_t)1 << 40))
        return ir_node_error(d, ST_ERR_LIMIT, n, "output dim %d = %g x %lld is too large", i, r.scales[i],
                             (long long)x->dims[i]);
      dims[i] = (int64_t)v;
    }
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] < 1 && x->dims[i] > 0)
      return ir_node_error(d, ST_ERR_INVALID, n, "output dim %d of input %lld would be %lld", i,
                           (long long)x->dims[i], (long long)dims[i]);
  return ST_OK;
}

/* Keys' cubic kernel at distance |t| with parameter A. */
static double cubic_w(double t, double A) {
  t = fabs(t);
  if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0.0;
}

/* Taps per output coordinate of one dim. */
static int dim_taps(const rs_attrs *r, double scale) {
  double s = scale < 1.0 ? scale : 1.0;
  if (r->mode == M_NEAREST) return 2;
  if (r->mode == M_LINEAR) return r->antialias ? 2 - 2 * (int)(floor(-1.0 / s) + 1) : 2;
  return r->antialias ? 2 - 2 * (int)(floor(-2.0 / s) + 1) : 4;
}

/* The coefficients for ratio in (0, 1] (ONNX's get_coeffs functions). */
static void coeffs(const rs_attrs *r, double ratio, double scale, int down, int n, double *c) {
  double s = scale < 1.0 ? scale : 1.0, sum = 0;
  if (r->mode == M_NEAREST) {
    int second;
    if (ratio == 1.0)
      second = 1;
    else if (r->nearest == N_ROUND_PREFER_FLOOR)
      second = ratio > 0.5;
    else if (r->nearest == N_ROUND_PREFER_CEIL)
      second = ratio >= 0.5;
    else if (r->nearest == N_FLOOR)
      second = 0;
    else if (r->nearest == N_CEIL)
      second = 1;
    else
      second = down; /* simple: ceil when downsampling, else floor */
    c[0] = !second, c[1] = second;
    return;
  }
  if (!r->antialias) {
    if (r->mode == M_LINEAR) {
      c[0] = 1 - ratio, c[1] = ratio;
    } else {
      c[0] = cubic_w(ratio + 1, r->a), c[1] = cubic_w(ratio, r->a);
      c[2] = cubic_w(1 - ratio, r->a), c[3] = cubic_w(2 - ratio, r->a);
    }
    return;
  }
  int start = 1 - n / 2;
  for (int i = 0; i < n; i++) {
    double t = s * ((double)(start + i) - ratio);
    c[i] = r->mode == M_LINEAR ? fmax(0.0, 1 - fabs(t)) : cubic_w(t, r->a);
    sum += c[i];
  }
  for (int i = 0; i < n; i++)
    c[i] /= sum;
}

/* Source position of output coordinate o; *outside set for tf_crop_and_resize
 * positions outside [0, in - 1]. */
static double source_pos(const rs_attrs *r, int dim, int rank, int64_t o, int64_t in, int64_t out,
                         double scale, int *outside) {
  double x = (double)o, len = scale * (double)in;
  *outside = 0;
  switch (r->ctm) {
  case T_ALIGN_CORNERS: return len == 1 ? 0.0 : x * (double)(in - 1) / (len - 1);
  case T_ASYMMETRIC: return x / scale;
  case T_TF_CROP: {
    double r0 = r->roi[dim], r1 = r->roi[rank + dim], v;
    v = len == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (len - 1);
    v += r0 * (double)(in - 1);
    *outside = v < 0 || v > (double)(in - 1);
    return v;
  }
  case T_PYTORCH_HALF_PIXEL: return len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  case T_HALF_PIXEL_SYMMETRIC: {
    double adjustment = (double)out / len, center = (double)in / 2, offset = center * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  default: return (x + 0.5) / scale - 0.5;
  }
}

status ir_resize_tables_build(const ir_node *n, const ir_value *x, const ir_value *y, arena *a,
                              ir_resize_tables *t, diag *d) {
  int rank = x->rank;
  rs_attrs r;
  status st = read_attrs(n, rank, 1, &r, d);
  if (st) return st;
  if (y->rank != rank) return ir_node_error(d, ST_ERR_INVALID, n, "input and output ranks differ");
  memset(t, 0, sizeof *t);
  t->rank = rank;
  t->select = r.mode == M_NEAREST;
  int n_of[MAX_RANK];
  uint64_t total = 0;
  for (int dim = 0; dim < rank; dim++) {
    n_of[dim] = dim_taps(&r, r.scales[dim]);
    if (n_of[dim] > IR_RESIZE_MAX_TAPS)
      return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "dim %d needs %d taps (scale %g), more than %d", dim,
                           n_of[dim], r.scales[dim], IR_RESIZE_MAX_TAPS);
    total += (uint64_t)y->dims[dim] * (uint64_t)(t->select ? 1 : n_of[dim]);
  }
  if (total > (uint64_t)INT32_MAX)
    return ir_node_error(d, ST_ERR_LIMIT, n, "the resize tables are too large");
  t->idx = arena_array(a, total + 1, sizeof *t->idx);
  t->w = t->select ? NULL : arena_array(a, total + 1, sizeof *t->w);
  if (!t->idx || (!t->select && !t->w))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory for the resize tables");
  uint64_t combos = 1;
  for (int dim = 0; dim < rank; dim++) {
    int64_t in = x->dims[dim], out = y->dims[dim];
    int nt = n_of[dim], keep = t->select ? 1 : nt, pad = (nt + 1) / 2, identity = in == out;
    double scale = r.scales[dim], c[IR_RESIZE_MAX_TAPS];
    int32_t *ti = t->idx + t->count;
    float *tw = t->w ? t->w + t->count : NULL;
    for (int64_t o = 0; o < out; o++, ti += keep, tw = tw ? tw + keep : NULL) {
      int outside;
      double pos = source_pos(&r, dim, rank, o, in, out, scale, &outside);
      double b = floor(pos), ratio = pos - b;
      if (ratio == 0.0) ratio = 1.0, b -= 1;
      coeffs(&r, ratio, scale, scale < 1.0, nt, c);
      int64_t first = (int64_t)b - nt / 2 + 1;
      if (first < -pad) first = -pad;
      if (first > in + pad - nt) first = in + pad - nt;
      if (r.exclude_outside) {
        double sum = 0;
        for (int k = 0; k < nt; k++) {
          if (first + k < 0 || first + k >= in) c[k] = 0;
          sum += c[k];
        }
        for (int k = 0; k < nt; k++)
          c[k] /= sum;
      }
      double at_o = 0;
      for (int k = 0; k < nt; k++) {
        int64_t src = first + k < 0 ? 0 : first + k >= in ? in - 1 : first + k;
        if (t->select) {
          if (c[k] != 0) ti[0] = (int32_t)src, at_o = src == o;
          continue;
        }
        ti[k] = (int32_t)src, tw[k] = (float)c[k];
        if (src == o)
          at_o += (float)c[k];
        else if ((float)c[k] != 0)
          identity = 0;
      }
      if (at_o != 1.0) identity = 0;
      if (outside) ti[0] = -1, identity = 0;
    }
    if (identity && (t->count > 0 || dim < rank - 1))
      continue; /* no table: read in place (the last dim keeps
                   one when no other has any) */
    t->taps[dim] = keep;
    t->count += out * keep;
    if (dim < rank - 1) combos *= (uint64_t)keep;
  }
  if (combos > IR_RESIZE_MAX_COMBOS)
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n,
                         "%llu tap combinations over the leading dims, more than %d",
                         (unsigned long long)combos, IR_RESIZE_MAX_COMBOS);
  return ST_OK;
}

status ir_eval_resize(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  const ir_value *X = n->in[0], *Y = n->out[0];
  ir_resize_tables t;
  status st = ir_resize_tables_build(n, X, Y, a, &t, d);
  if (st) return st;
  void *y = arena_alloc(a, (size_t)ir_value_bytes(Y) + 1);
  if (!y) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  outputs_out[0] = y;
  int rank = t.rank;
  int64_t base[MAX_RANK], xstride[MAX_RANK], count = ir_value_elements(Y), at = 0, s = 1;
  for (int k = rank - 1; k >= 0; k--)
    xstride[k] = s, s *= X->dims[k];
  for (int k = 0; k < rank; k++)
    base[k] = at, at += Y->dims[k] * t.taps[k];
  double extrap = ir_attr_float(n, "extrapolation_value", 0.0);
  for (int64_t i = 0; i < count; i++) {
    int64_t c[MAX_RANK], rest = i;
    for (int k = rank - 1; k >= 0; k--)
      c[k] = rest % Y->dims[k], rest /= Y->dims[k];
    int outside = 0;
    for (int k = 0; k < rank; k++)
      outside |= t.taps[k] && t.idx[base[k] + c[k] * t.taps[k]] < 0;
    if (outside) {
      elem_put(y, Y->dtype, i, extrap);
      continue;
    }
    int tap[MAX_RANK] = {0};
    double acc = 0;
    for (;;) { /* every combination of the resampled dims' taps */
      int64_t off = 0;
      double w = 1;
      for (int k = 0; k < rank; k++) {
        if (!t.taps[k]) {
          off += c[k] * xstride[k];
          continue;
        }
        int64_t e = base[k] + c[k] * t.taps[k] + tap[k];
        off += t.idx[e] * xstride[k];
        if (t.w) w *= t.w[e];
      }
      acc += w * elem_get(inputs[0], X->dtype, off);
      int k = rank - 1;
      while (k >= 0 && (!t.taps[k] || ++tap[k] == t.taps[k])) {
        if (t.taps[k]) tap[k] = 0;
        k--;
      }
      if (k < 0) break;
    }
    elem_put(y, Y->dtype, i, acc);
  }
  return ST_OK;
}
