/* onnx_resize.c - the importers of ONNX Resize (opsets 10..19) and Upsample
 * (7, 9) into the IR Resize (ops.def has its contract).
 *
 * Every opset's way of saying the same thing becomes one set of explicit
 * attributes on a one-input node: the scales / sizes / roi inputs (which
 * must be constants) and Upsample's scales attribute become `scales`,
 * `sizes` and `roi` over every dim (opset 18's axes expanded: other dims
 * keep scale 1, size -1 = "as the input", roi [0, 1]); the defaults of the
 * opset are made explicit. Opset 10 Resize and Upsample had no coordinate
 * transform or rounding attributes: they are asymmetric, and nearest
 * rounds as ONNX Runtime does for them ("simple").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_internal.h"
#include "common/elem.h"

static int is_one_of(const char *s, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (!strcmp(s, names[i])) return 1;
  return 0;
}

/* The values of constant input i as doubles (float or int64 dtypes); *count
 * = -1 when the input is absent or empty (ONNX's way to omit it). */
static status const_values(onnx_node *nd, int i, const char *what, double *out, int max, int *count) {
  *count = -1;
  if (i >= nd->nin || !nd->in[i]) return ST_OK;
  const ir_value *v = NULL;
  status s = onnx_const_input(nd, i, what, &v);
  if (s) return s;
  int64_t n = ir_value_elements(v);
  if (n == 0) return ST_OK;
  int dt = v->dtype;
  if (v->rank != 1 || n > max || (dt != DT_FLOAT32 && dt != DT_FLOAT16 && dt != DT_DOUBLE && dt != DT_INT64))
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "input %d '%s' (%s) must be a 1-D float or int64 list of at most %d "
                          "values",
                          i, v->name, what, max);
  for (int64_t k = 0; k < n; k++)
    out[k] = elem_get(v->data, v->dtype, k);
  *count = (int)n;
  return ST_OK;
}

static status nomem(onnx_node *nd) { return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory importing"); }

/* The attributes shared by both importers once scales are known over all
 * dims (scales != NULL) or sizes are (sizes != NULL). */
static status finish(onnx_node *nd, ir_node *n, int rank, const double *scales, const int64_t *sizes) {
  n->nin = 1;
  if (scales) {
    for (int d = 0; d < rank; d++)
      if (!(scales[d] > 0) || !isfinite(scales[d]))
        return onnx_node_fail(nd, ST_ERR_INVALID, "scales[%d] = %g must be positive", d, scales[d]);
    return ir_attr_set_floats(nd->c->g, n, "scales", rank, scales) ? nomem(nd) : ST_OK;
  }
  return ir_attr_set_ints(nd->c->g, n, "sizes", rank, sizes) ? nomem(nd) : ST_OK;
}

/* Opset 10 Resize and Upsample: mode nearest or linear, asymmetric. */
static status import_old(onnx_node *nd, ir_node *n, const double *scales, int count) {
  int rank = nd->in[0]->rank;
  char mode[32];
  onnx_attr_string(nd, "mode", "nearest", mode, sizeof mode);
  if (!strcmp(mode, "bilinear")) snprintf(mode, sizeof mode, "linear");
  static const char *const modes[] = {"nearest", "linear"};
  if (!is_one_of(mode, modes, 2))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' = \"%s\", expected nearest or linear", mode);
  if (count != rank)
    return onnx_node_fail(nd, ST_ERR_INVALID, "scales has %d values, expected %d (the input's rank)", count,
                          rank);
  status s = onnx_set_string(nd, n, "mode", mode);
  if (!s) s = onnx_set_string(nd, n, "coordinate_transformation_mode", "asymmetric");
  if (!s) s = onnx_set_string(nd, n, "nearest_mode", "simple");
  return s ? s : finish(nd, n, rank, scales, NULL);
}

static status need_rank(onnx_node *nd) {
  int rank = nd->in[0]->rank;
  if (rank < 1 || rank > MAX_RANK)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "input '%s' needs a known rank of 1..%d", nd->in[0]->name,
                          MAX_RANK);
  return ST_OK;
}

status onnx_import_upsample(onnx_node *nd, ir_node *n) {
  status s = need_rank(nd);
  if (s) return s;
  double scales[MAX_RANK];
  int count = -1;
  if (nd->c->opset < 9) {
    const Onnx__AttributeProto *a = onnx_attr(nd, "scales");
    if (!a || a->n_floats > MAX_RANK)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'scales' is required");
    count = (int)a->n_floats;
    for (int k = 0; k < count; k++)
      scales[k] = a->floats[k];
  } else if ((s = const_values(nd, 1, "scales", scales, MAX_RANK, &count))) {
    return s;
  }
  return import_old(nd, n, scales, count);
}

status onnx_import_resize(onnx_node *nd, ir_node *n) {
  status s = need_rank(nd);
  if (s) return s;
  int rank = nd->in[0]->rank, opset = nd->c->opset;
  double scales[MAX_RANK], roi[2 * MAX_RANK], sizes_d[MAX_RANK];
  int nscales = -1, nroi = -1, nsizes = -1;
  if (opset < 11) {
    if ((s = const_values(nd, 1, "scales", scales, MAX_RANK, &nscales))) return s;
    return import_old(nd, n, scales, nscales);
  }
  if ((s = const_values(nd, 2, "scales", scales, MAX_RANK, &nscales)) ||
      (s = const_values(nd, 3, "sizes", sizes_d, MAX_RANK, &nsizes)))
    return s;
  if ((nscales < 0) == (nsizes < 0))
    return onnx_node_fail(nd, ST_ERR_INVALID, "exactly one of the inputs scales and sizes must be given");
  char mode[32], ctm[32], nearest[32], policy[32];
  onnx_attr_string(nd, "mode", "nearest", mode, sizeof mode);
  onnx_attr_string(nd, "coordinate_transformation_mode", "half_pixel", ctm, sizeof ctm);
  onnx_attr_string(nd, "nearest_mode", "round_prefer_floor", nearest, sizeof nearest);
  onnx_attr_string(nd, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy);
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  static const char *const ctms[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                     "align_corners", "asymmetric",           "tf_crop_and_resize"};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
  if (!is_one_of(mode, modes, 3))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' = \"%s\" is unknown", mode);
  if (!is_one_of(ctm, ctms, 6))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "coordinate_transformation_mode \"%s\" is not supported",
                          ctm);
  if (!is_one_of(nearest, nearests, 4))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'nearest_mode' = \"%s\" is unknown", nearest);
  if (!is_one_of(policy, policies, 3))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'keep_aspect_ratio_policy' = \"%s\" is unknown",
                          policy);
  int64_t antialias = 0, exclude = 0;
  const Onnx__AttributeProto *a;
  if ((a = onnx_attr(nd, "antialias"))) antialias = a->i;
  if ((a = onnx_attr(nd, "exclude_outside"))) exclude = a->i;
  if ((antialias != 0 && antialias != 1) || (exclude != 0 && exclude != 1))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attributes 'antialias' and 'exclude_outside' must be 0 or 1");
  if (antialias && !strcmp(mode, "nearest"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "antialias applies to linear and cubic modes only");
  /* axes (opset 18): which dims the lists name */
  int64_t axes[MAX_RANK];
  int naxes = rank;
  for (int d = 0; d < rank; d++)
    axes[d] = d;
  if ((a = onnx_attr(nd, "axes"))) {
    if (a->n_ints < 1 || a->n_ints > (size_t)rank)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'axes' has %zu values for rank %d", a->n_ints,
                            rank);
    naxes = (int)a->n_ints;
    for (int k = 0; k < naxes; k++) {
      int64_t ax = a->ints[k] < 0 ? a->ints[k] + rank : a->ints[k];
      if (ax < 0 || ax >= rank)
        return onnx_node_fail(nd, ST_ERR_INVALID, "axes[%d] = %lld out of range", k, (long long)a->ints[k]);
      for (int j = 0; j < k; j++)
        if (axes[j] == ax)
          return onnx_node_fail(nd, ST_ERR_INVALID, "axes names dim %lld twice", (long long)ax);
      axes[k] = ax;
    }
  }
  int count = nscales >= 0 ? nscales : nsizes;
  if (count != naxes)
    return onnx_node_fail(nd, ST_ERR_INVALID, "%s has %d values, expected %d",
                          nscales >= 0 ? "scales" : "sizes", count, naxes);
  double full_scales[MAX_RANK], full_roi[2 * MAX_RANK];
  int64_t full_sizes[MAX_RANK];
  for (int d = 0; d < rank; d++)
    full_scales[d] = 1.0, full_sizes[d] = -1, full_roi[d] = 0.0, full_roi[rank + d] = 1.0;
  for (int k = 0; k < naxes; k++) {
    if (nscales >= 0) full_scales[axes[k]] = scales[k];
    if (nsizes >= 0) {
      if (!(sizes_d[k] >= 1) || sizes_d[k] >= 0x1p40)
        return onnx_node_fail(nd, ST_ERR_INVALID, "sizes[%d] = %g must be >= 1", k, sizes_d[k]);
      full_sizes[axes[k]] = (int64_t)sizes_d[k];
    }
  }
  if (!strcmp(ctm, "tf_crop_and_resize")) {
    if ((s = const_values(nd, 1, "roi", roi, 2 * MAX_RANK, &nroi))) return s;
    if (nroi != 2 * naxes)
      return onnx_node_fail(nd, ST_ERR_INVALID, "tf_crop_and_resize needs roi with %d values, it has %d",
                            2 * naxes, nroi < 0 ? 0 : nroi);
    for (int k = 0; k < naxes; k++)
      full_roi[axes[k]] = roi[k], full_roi[rank + axes[k]] = roi[naxes + k];
    if (ir_attr_set_floats(nd->c->g, n, "roi", 2 * rank, full_roi)) return nomem(nd);
  }
  double cubic_a = (a = onnx_attr(nd, "cubic_coeff_a")) ? a->f : -0.75;
  double extrap = (a = onnx_attr(nd, "extrapolation_value")) ? a->f : 0.0;
  if ((s = onnx_set_string(nd, n, "mode", mode)) ||
      (s = onnx_set_string(nd, n, "coordinate_transformation_mode", ctm)) ||
      (s = onnx_set_string(nd, n, "nearest_mode", nearest)))
    return s;
  if (ir_attr_set_float(nd->c->g, n, "cubic_coeff_a", cubic_a) ||
      ir_attr_set_float(nd->c->g, n, "extrapolation_value", extrap) ||
      ir_attr_set_int(nd->c->g, n, "exclude_outside", exclude) ||
      ir_attr_set_int(nd->c->g, n, "antialias", antialias))
    return nomem(nd);
  if (nsizes >= 0 && (s = onnx_set_string(nd, n, "keep_aspect_ratio_policy", policy))) return s;
  return finish(nd, n, rank, nscales >= 0 ? full_scales : NULL, nscales >= 0 ? NULL : full_sizes);
}
