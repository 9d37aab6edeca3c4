/* onnx_ops.c - the per-op importers: one ONNX node -> one IR node.
 *
 * Each ONNX op_type has one row in `importers`: the IR op it becomes, the
 * oldest opset it handles, its ONNX arity, and the attributes it accepts. The
 * generic part (onnx_import_node) does what every op needs: checks the arity
 * and the required inputs, refuses extra outputs that anything reads,
 * creates
 * the IR node with the inputs the IR op takes, and checks every attribute
 * against the row: unknown names are refused (an ignored attribute could
 * change the meaning), kinds must match, and attributes an opset removed are
 * refused from that opset on. Attributes marked for copying go onto the node
 * as they are; the rest are read by the row's function, which normalises the
 * node into the IR contract of ir/ops.def: defaults made explicit, opset-13
 * constant inputs turned into attributes, auto_pad=VALID turned into zero pads.
 * A row without an IR op is a decomposition (frontend/onnx_decomp.h): after
 * the same checks its function builds the op's ONNX function body out of IR
 * ops and produces every output itself.
 *
 * Attribute spec syntax, space separated: "[-]name:k[<N]"; k is i (INT),
 * f (FLOAT), s (STRING), I (INTS), F (FLOATS), t (TENSOR), S (STRINGS) or g
 * (GRAPH; these three read by the function only); a leading '-' means the
 * function reads it and it is not copied; "<N" means the attribute exists only
 * before opset N.
 */
#include "frontend/onnx_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_conv.h"
#include "frontend/onnx_decomp.h"
#include "common/dtype_cvt.h"
#include "common/elem.h"
#include "ir/view.h"

/* --- messages */

const char *onnx_node_label(const Onnx__NodeProto *np, int index, char *buf, size_t size) {
  const char *op = np->op_type ? np->op_type : "";
  if (np->name && *np->name)
    snprintf(buf, size, "node '%s' (%s)", np->name, op);
  else
    snprintf(buf, size, "node #%d (%s)", index, op);
  return buf;
}

status onnx_node_fail(const onnx_node *nd, status code, const char *fmt, ...) {
  char msg[768], label[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return onnx_fail(nd->c, code, "%s: %s", onnx_node_label(nd->np, nd->index, label, sizeof label), msg);
}

/* --- the importers */

/* Conv, MaxPool, AveragePool: kernel_shape, strides, pads, dilations made
 * explicit (Conv 2-D or 3-D here: 1-D went through onnx_conv.c); auto_pad
 * kept for shape inference when SAME_*. w is a convolution's weight (the
 * kernel shape when the attribute is absent), NULL for a pool. */
static status window_attrs(onnx_node *nd, ir_node *n, const ir_value *w) {
  const int is_conv = w != NULL;
  int k;
  const int64_t *ks = onnx_attr_ints(nd, "kernel_shape", &k);
  if (!ks && !is_conv) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'kernel_shape' is required");
  if (!ks) {
    if (w->rank < 0)
      return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                            "no kernel_shape attribute and weight input 1 '%s' has an unknown shape",
                            w->name);
    if (w->rank != 4 && w->rank != 5)
      return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                            "only 1-D to 3-D convolution is supported (weight '%s' has rank %d)", w->name,
                            w->rank);
    k = w->rank - 2;
    ks = w->dims + 2;
  }
  if (is_conv ? k < 2 || k > 3 : k < 1 || k > 3)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                          "only 1-D to 3-D windows are supported (kernel_shape has %d entries)", k);
  for (int i = 0; i < k; i++)
    if (ks[i] < 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "kernel_shape[%d] = %" PRId64 " must be >= 1", i, ks[i]);
  status s = onnx_set_ints(nd, n, "kernel_shape", k, ks);
  if (!s) s = onnx_set_ints_default(nd, n, "strides", k, 1, 1);
  if (!s) s = onnx_set_ints_default(nd, n, "dilations", k, 1, 1);
  if (!s) s = onnx_set_ints_default(nd, n, "pads", 2 * k, 0, 0);
  if (s) return s;

  static const char *const modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
  int mode = -1;
  for (int i = 0; i < 4; i++)
    if (onnx_attr_string_is(nd, "auto_pad", "NOTSET", modes[i])) mode = i;
  if (mode < 0)
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "attribute 'auto_pad' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  int npads;
  const int64_t *pads = onnx_attr_ints(nd, "pads", &npads);
  for (int i = 0; mode > 0 && pads && i < npads; i++)
    if (pads[i])
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'pads' and auto_pad=%s exclude each other",
                            modes[mode]);
  /* VALID is zero padding, which the pads above already say. */
  return mode >= 2 ? onnx_set_string(nd, n, "auto_pad", modes[mode]) : ST_OK;
}

status onnx_conv_window(onnx_node *nd, ir_node *n, const ir_value *w) {
  status s = window_attrs(nd, n, w);
  int64_t group = onnx_attr_int(nd, "group", 1);
  if (!s && group < 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'group' = %" PRId64 " must be >= 1", group);
  return s ? s : onnx_set_int(nd, n, "group", group);
}

static status import_conv(onnx_node *nd, ir_node *n) {
  if (onnx_conv_spatial_rank(nd) == 1) return onnx_conv_1d(nd, n); /* as 2-D with H = 1 (onnx_conv.c) */
  return onnx_conv_window(nd, n, nd->in[1]);
}

status onnx_maxpool_attrs(onnx_node *nd, ir_node *n) {
  status s = window_attrs(nd, n, NULL);
  int64_t order = onnx_attr_int(nd, "storage_order", 0);
  if (!s && order != 0 && order != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'storage_order' = %" PRId64 " must be 0 or 1",
                          order);
  return s ? s : onnx_set_flag(nd, n, "ceil_mode", 0);
}

status onnx_avgpool_attrs(onnx_node *nd, ir_node *n) {
  status s = window_attrs(nd, n, NULL);
  if (!s) s = onnx_set_flag(nd, n, "ceil_mode", 0);
  return s ? s : onnx_set_flag(nd, n, "count_include_pad", 0);
}

/* LpPool and GlobalLpPool: p (default 2) made explicit. */
static status lp_attr(onnx_node *nd, ir_node *n) {
  int64_t p = onnx_attr_int(nd, "p", 2);
  if (p < 1 || p > 64)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "attribute 'p' = %" PRId64 ", supported: 1..64", p);
  return onnx_set_int(nd, n, "p", p);
}

static status import_lppool(onnx_node *nd, ir_node *n) {
  status s = window_attrs(nd, n, NULL);
  if (!s) s = onnx_set_flag(nd, n, "ceil_mode", 0);
  return s ? s : lp_attr(nd, n);
}

/* Clip: constant bounds become the attributes min and max. From opset 11
 * the bounds are inputs; when one of them is computed at run time, the IR
 * node takes x, min, max with both present (ops.def), an omitted or constant
 * bound given as a one-element constant of x's dtype (its lowest or highest
 * value, +-inf for floats, when omitted). */
static status import_clip(onnx_node *nd, ir_node *n) {
  double lo = -INFINITY, hi = INFINITY;
  status s = ST_OK;
  if (nd->c->opset < 11) {
    if (nd->nin > 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "Clip takes 1 input before opset 11, it has %d", nd->nin);
    lo = onnx_attr_float(nd, "min", lo);
    hi = onnx_attr_float(nd, "max", hi);
  } else if ((nd->nin > 1 && nd->in[1] && !nd->in[1]->data) ||
             (nd->nin > 2 && nd->in[2] && !nd->in[2]->data)) {
    dtype dt = nd->in[0]->dtype;
    for (int i = 1; i <= 2; i++) {
      if (i < nd->nin && nd->in[i]) continue;
      double v = i == 1 ? -INFINITY : INFINITY;
      if (dt == DT_INT64)
        v = i == 1 ? -9223372036854775808.0 : 9223372036854775807.0;
      else if (dt == DT_INT32)
        v = i == 1 ? INT32_MIN : INT32_MAX;
      else if (dt == DT_INT8)
        v = i == 1 ? INT8_MIN : INT8_MAX;
      else if (dt == DT_UINT8)
        v = i == 1 ? 0 : UINT8_MAX;
      else if (dt != DT_FLOAT32 && dt != DT_FLOAT16)
        return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "run-time bounds on dtype %s", onnx_dtype_name(dt));
      char name[300];
      snprintf(name, sizeof name, "%.280s_%s", nd->out[0]->name, i == 1 ? "min" : "max");
      uint8_t buf[8];
      elem_put(buf, dt, 0, v);
      ir_value *c = ir_const_new(nd->c->g, name, dt, 0, NULL, buf, dtype_size(dt));
      if (!c || ir_node_set_input(nd->c->g, n, i, c))
        return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory for a Clip bound");
    }
    return ST_OK;
  } else {
    if (nd->nin > 1 && nd->in[1]) s = onnx_scalar_input(nd, 1, "min", &lo);
    if (!s && nd->nin > 2 && nd->in[2]) s = onnx_scalar_input(nd, 2, "max", &hi);
    n->nin = 1;
  }
  if (!s) s = onnx_set_float(nd, n, "min", lo);
  return s ? s : onnx_set_float(nd, n, "max", hi);
}

/* Add, Sub, Mul, Div, ... before opset 7: broadcasting was opt-in
 * (broadcast = 1), B's dims matching a run of A's dims starting at `axis`
 * (default: A's last dims, which is numpy's rule). B gets an Unsqueeze of
 * trailing unit dims so that numpy's rule lines it up at axis, as ONNX's
 * version converter to opset 7 rewrites it; needs both ranks at import. */
static status import_binary(onnx_node *nd, ir_node *n) {
  if (onnx_attr_int(nd, "broadcast", 0) != 1 || !onnx_attr(nd, "axis")) return ST_OK;
  int64_t axis = onnx_attr_int(nd, "axis", 0);
  const ir_value *a = nd->in[0];
  ir_value *b = nd->in[1];
  if (a->rank < 0 || b->rank < 0)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                          "legacy broadcasting (broadcast = 1, axis = %" PRId64
                          ") needs the ranks of '%s' and '%s' at import",
                          axis, a->name, b->name);
  if (axis < 0 || axis + b->rank > a->rank)
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "axis = %" PRId64 " does not place the %d dims of '%s' inside the %d dims of '%s'",
                          axis, b->rank, b->name, a->rank, a->name);
  int trailing = a->rank - (int)axis - b->rank;
  if (trailing == 0) return ST_OK;
  int64_t axes[MAX_RANK];
  for (int i = 0; i < trailing; i++)
    axes[i] = b->rank + i;
  char name[300];
  snprintf(name, sizeof name, "%.280s/axis_aligned", b->name);
  ir_graph *g = nd->c->g;
  ir_value *u = ir_value_new(g, name, b->dtype);
  ir_node *un = u ? ir_node_new(g, IR_OP_UNSQUEEZE, name, 1, &b, 1, &u) : NULL;
  if (!un || ir_attr_set_ints(g, un, "axes", trailing, axes) || ir_node_set_input(g, n, 1, u))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
  return ST_OK;
}

/* Max, Min, Sum, Mean: every input is required. */
static status import_variadic(onnx_node *nd, ir_node *n) {
  for (int i = 0; i < nd->nin; i++)
    if (!nd->in[i]) return onnx_node_fail(nd, ST_ERR_INVALID, "input %d has no name", i);
  return ST_OK;
}

static status import_flatten(onnx_node *nd, ir_node *n) {
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 1));
  return s ? s : onnx_counted_flatten(nd, n);
}

static status import_reshape(onnx_node *nd, ir_node *n) {
  if (nd->c->opset >= 5) {
    if (nd->nin != 2 || !nd->in[1]) return onnx_node_fail(nd, ST_ERR_INVALID, "input 1 (shape) is required");
    status s = onnx_set_flag(nd, n, "allowzero", 0);
    if (!s) s = onnx_counted_shape_input(nd, n); /* a shape holding a count */
    return s ? s : onnx_counted_reshape_merge(nd, n);
  }
  /* Before opset 5 the target shape was an attribute: make it the input. */
  int count;
  const int64_t *shape = onnx_attr_ints(nd, "shape", &count);
  if (nd->nin != 1 || !shape)
    return onnx_node_fail(nd, ST_ERR_INVALID, "before opset 5 Reshape takes 1 input and a 'shape' attribute");
  char name[300];
  snprintf(name, sizeof name, "%.280s_shape", nd->out[0]->name);
  int64_t dim = count;
  ir_value *v = ir_const_new(nd->c->g, name, DT_INT64, 1, &dim, shape, (size_t)count * sizeof *shape);
  if (!v || ir_node_set_input(nd->c->g, n, 1, v))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory for the shape constant");
  return onnx_set_int(nd, n, "allowzero", 0);
}

/* Squeeze / Unsqueeze: axes from the attribute (opset < 13) or from constant
 * input 1 (opset >= 13), always an IR attribute. */
static status axes_attr(onnx_node *nd, ir_node *n, int required) {
  int count = 0;
  int64_t buf[2 * MAX_RANK];
  const int64_t *axes = NULL;
  if (nd->c->opset < 13) {
    if (nd->nin > 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "takes 1 input before opset 13, it has %d", nd->nin);
    axes = onnx_attr_ints(nd, "axes", &count);
  } else if (nd->nin > 1 && nd->in[1]) {
    status s = onnx_ints_input(nd, 1, "axes", buf, 2 * MAX_RANK, &count);
    if (s) return s;
    axes = buf;
  }
  if (!axes || count == 0) /* an empty list says nothing */
    return required ? onnx_node_fail(nd, ST_ERR_INVALID, "axes are required") : ST_OK;
  if (count > 2 * MAX_RANK)
    return onnx_node_fail(nd, ST_ERR_LIMIT, "%d axes are more than the limit of %d", count, 2 * MAX_RANK);
  return onnx_set_ints(nd, n, "axes", count, axes);
}

static status import_squeeze(onnx_node *nd, ir_node *n) { return axes_attr(nd, n, 0); }
static status import_unsqueeze(onnx_node *nd, ir_node *n) { return axes_attr(nd, n, 1); }

static status import_gather(onnx_node *nd, ir_node *n) {
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 0));
  return s ? s : onnx_counted_shape_gather(nd, n);
}

static status import_concat(onnx_node *nd, ir_node *n) {
  for (int i = 0; i < nd->nin; i++)
    if (!nd->in[i]) return onnx_node_fail(nd, ST_ERR_INVALID, "input %d has no name", i);
  if (!onnx_attr(nd, "axis") && nd->c->opset >= 4)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'axis' is required");
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 1));
  return s ? s : onnx_counted_concat(nd, n);
}

/* saturate and round_mode (Cast and CastLike, opset 19 and 25), kept when
 * the model gives them (a Convert reads ONNX's defaults, 1 and "up",
 * otherwise): they matter only to a Convert (ops.def). */
static status cast_attrs(onnx_node *nd, ir_node *n) {
  static const char *const modes[] = {
      [CVT_ROUND_UP] = "up", [CVT_ROUND_DOWN] = "down", [CVT_ROUND_NEAREST] = "nearest"};
  int mode = -1;
  for (int k = 0; k < 3; k++)
    if (onnx_attr_string_is(nd, "round_mode", "up", modes[k])) mode = k;
  if (mode < 0)
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "attribute 'round_mode' must be \"up\", \"down\" or \"nearest\"");
  int64_t sat = onnx_attr_int(nd, "saturate", 1);
  if (sat != 0 && sat != 1) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'saturate' must be 0 or 1");
  status s = onnx_attr(nd, "saturate") ? onnx_set_int(nd, n, "saturate", sat) : ST_OK;
  return s || !onnx_attr(nd, "round_mode") ? s : onnx_set_int(nd, n, "round_mode", mode);
}

static status import_cast(onnx_node *nd, ir_node *n) {
  if (!onnx_attr(nd, "to")) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'to' is required");
  int64_t to = onnx_attr_int(nd, "to", 0);
  if (to < 0 || to > INT_MAX || !dtype_bits((int)to))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "Cast to data type %" PRId64 " (%s) is not supported", to,
                          onnx_dtype_name(to < 0 || to > INT_MAX ? 0 : (int)to));
  status s = onnx_set_int(nd, n, "to", to);
  return s ? s : cast_attrs(nd, n);
}

/* BitCast: `to` must name a dtype the vector unit moves; shape inference
 * checks that it has x's size. */
static status import_bitcast(onnx_node *nd, ir_node *n) {
  if (!onnx_attr(nd, "to")) return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'to' is required");
  int64_t to = onnx_attr_int(nd, "to", 0);
  if (to < 0 || to > INT_MAX || !dtype_size((int)to))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "BitCast to data type %" PRId64 " (%s) is not supported",
                          to, onnx_dtype_name(to < 0 || to > INT_MAX ? 0 : (int)to));
  return onnx_set_int(nd, n, "to", to);
}

static status softmax_attrs(onnx_node *nd, ir_node *n, int log) {
  int old = nd->c->opset < 13; /* opset < 13: coerce to 2-D at axis, default axis 1 */
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", old ? 1 : -1));
  if (!s) s = onnx_set_int(nd, n, "coerce_2d", old);
  return s ? s : onnx_set_int(nd, n, "log", log);
}

static status import_softmax(onnx_node *nd, ir_node *n) { return softmax_attrs(nd, n, 0); }
static status import_logsoftmax(onnx_node *nd, ir_node *n) { return softmax_attrs(nd, n, 1); }

static status import_gemm(onnx_node *nd, ir_node *n) {
  status s = onnx_set_float(nd, n, "alpha", onnx_attr_float(nd, "alpha", 1.0));
  if (!s) s = onnx_set_float(nd, n, "beta", onnx_attr_float(nd, "beta", 1.0));
  if (!s) s = onnx_set_flag(nd, n, "transA", 0);
  return s ? s : onnx_set_flag(nd, n, "transB", 0);
}

/* An optional FLOAT attribute made explicit with its ONNX default. */
static status float_attr(onnx_node *nd, ir_node *n, const char *name, double def) {
  return onnx_set_float(nd, n, name, onnx_attr_float(nd, name, def));
}

static status import_hardsigmoid(onnx_node *nd, ir_node *n) {
  status s = float_attr(nd, n, "alpha", 0.2);
  return s ? s : float_attr(nd, n, "beta", 0.5);
}

static status import_leakyrelu(onnx_node *nd, ir_node *n) { return float_attr(nd, n, "alpha", 0.01); }
/* Elu, Celu, ThresholdedRelu: alpha defaults to 1. */
static status import_alpha1(onnx_node *nd, ir_node *n) { return float_attr(nd, n, "alpha", 1.0); }

static status import_selu(onnx_node *nd, ir_node *n) {
  status s = float_attr(nd, n, "alpha", 1.67326319217681884765625);
  return s ? s : float_attr(nd, n, "gamma", 1.05070102214813232421875);
}

static status import_gelu(onnx_node *nd, ir_node *n) {
  int is_tanh = onnx_attr_string_is(nd, "approximate", "none", "tanh");
  if (!is_tanh && !onnx_attr_string_is(nd, "approximate", "none", "none"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'approximate' must be \"none\" or \"tanh\"");
  return onnx_set_string(nd, n, "approximate", is_tanh ? "tanh" : "none");
}

static status import_mod(onnx_node *nd, ir_node *n) { return onnx_set_flag(nd, n, "fmod", 0); }

static status import_bitshift(onnx_node *nd, ir_node *n) {
  int left = onnx_attr_string_is(nd, "direction", "", "LEFT");
  if (!left && !onnx_attr_string_is(nd, "direction", "", "RIGHT"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'direction' must be \"LEFT\" or \"RIGHT\"");
  return onnx_set_string(nd, n, "direction", left ? "LEFT" : "RIGHT");
}

static status import_isinf(onnx_node *nd, ir_node *n) {
  status s = onnx_set_flag(nd, n, "detect_positive", 1);
  return s ? s : onnx_set_flag(nd, n, "detect_negative", 1);
}

/* CastLike(x, like) is Cast(x) to like's dtype. When like's dtype is known
 * (a graph input, an initializer) the IR node keeps only x; when like is
 * computed by another node, its dtype is not known during import: the node
 * keeps it as in[1] and shape inference resolves `to` (ops.def). */
static status import_castlike(onnx_node *nd, ir_node *n) {
  int to = nd->in[1]->dtype;
  status s = cast_attrs(nd, n);
  if (s || to == DT_UNDEFINED) return s;
  if (!dtype_bits(to))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "target_type input '%s' has data type %d (%s)",
                          nd->in[1]->name, to, onnx_dtype_name(to));
  n->nin = 1;
  return onnx_set_int(nd, n, "to", to);
}

/* ReduceX -> Reduce{mode}: axes from the attribute (before opset 18, or 13
 * for ReduceSum) or from constant input 1; keepdims and noop made explicit.
 * No axes with noop_with_empty_axes=1 reduces nothing (noop=1). */
static status import_reduce(onnx_node *nd, ir_node *n) {
  static const struct {
    const char *op_type, *mode;
    int input_from;
  } modes[] = {
      {"ReduceSum", "sum", 13},
      {"ReduceMean", "mean", 18},
      {"ReduceMax", "max", 18},
      {"ReduceMin", "min", 18},
      {"ReduceProd", "prod", 18},
      {"ReduceL1", "l1", 18},
      {"ReduceL2", "l2", 18},
      {"ReduceLogSum", "logsum", 18},
      {"ReduceLogSumExp", "logsumexp", 18},
      {"ReduceSumSquare", "sumsquare", 18},
  };
  size_t k = 0;
  while (strcmp(modes[k].op_type, nd->np->op_type))
    k++; /* the table rows name only these */
  int count = 0;
  int64_t buf[MAX_RANK];
  const int64_t *axes = NULL;
  if (nd->c->opset < modes[k].input_from) {
    if (nd->nin > 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "takes 1 input before opset %d, it has %d",
                            modes[k].input_from, nd->nin);
    axes = onnx_attr_ints(nd, "axes", &count);
    if (count > MAX_RANK)
      return onnx_node_fail(nd, ST_ERR_LIMIT, "%d axes are more than the limit of %d", count, MAX_RANK);
  } else if (nd->nin > 1 && nd->in[1] && nd->in[1]->data) {
    status s = onnx_ints_input(nd, 1, "axes", buf, MAX_RANK, &count);
    if (s) return s;
    axes = buf;
  }
  status s = onnx_set_string(nd, n, "mode", modes[k].mode);
  if (s) return s;
  int64_t noop = onnx_attr_int(nd, "noop_with_empty_axes", 0);
  if (noop != 0 && noop != 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'noop_with_empty_axes' = %" PRId64 " must be 0 or 1",
                          noop);
  s = onnx_set_flag(nd, n, "keepdims", 1);
  if (!s && n->nin > 1 && !nd->in[1]->data) /* computed axes: shape inference resolves them */
    return onnx_set_int(nd, n, "noop_with_empty_axes", noop);
  n->nin = 1;
  if (!s) s = onnx_set_int(nd, n, "noop", count == 0 && noop);
  if (!s && count > 0) s = onnx_set_ints(nd, n, "axes", count, axes);
  return s ? s : onnx_counted_reduce(nd, n);
}

/* ArgMax / ArgMin -> Reduce{mode argmax|argmin} over the one axis. */
static status import_argreduce(onnx_node *nd, ir_node *n) {
  int is_max = !strcmp(nd->np->op_type, "ArgMax");
  int64_t axis = onnx_attr_int(nd, "axis", 0);
  status s = onnx_set_string(nd, n, "mode", is_max ? "argmax" : "argmin");
  if (!s) s = onnx_set_ints(nd, n, "axes", 1, &axis);
  if (!s) s = onnx_set_flag(nd, n, "keepdims", 1);
  if (!s) s = onnx_set_int(nd, n, "noop", 0);
  return s ? s : onnx_set_flag(nd, n, "select_last_index", 0);
}

/* A rank <= 1 constant input of int32 or int64 indices (Slice, Expand,
 * Tile), at most `max` of them, as an INTS attribute. */
static status index_input_attr(onnx_node *nd, ir_node *n, int i, const char *name, int max) {
  const ir_value *v = NULL;
  status s = onnx_const_input(nd, i, name, &v);
  if (s) return s;
  int64_t count = ir_value_elements(v), buf[2 * MAX_RANK];
  if ((v->dtype != DT_INT64 && v->dtype != DT_INT32) || v->rank > 1 || count > max || count > 2 * MAX_RANK)
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "input %d '%s' (%s) must be an int32 or int64 list of at most %d values", i,
                          v->name, name, max);
  for (int64_t k = 0; k < count; k++)
    buf[k] = v->dtype == DT_INT64 ? ((const int64_t *)v->data)[k] : ((const int32_t *)v->data)[k];
  return onnx_set_ints(nd, n, name, (int)count, buf);
}

/* Slice: from opset 10 starts, ends, axes, steps are (constant) inputs. */
static status import_slice(onnx_node *nd, ir_node *n) {
  if (nd->c->opset < 10) {
    if (!onnx_attr(nd, "starts") || !onnx_attr(nd, "ends"))
      return onnx_node_fail(nd, ST_ERR_INVALID, "attributes 'starts' and 'ends' are required");
    return onnx_counted_slice(nd, n);
  }
  static const char *const names[] = {"starts", "ends", "axes", "steps"};
  if (nd->nin < 3)
    return onnx_node_fail(nd, ST_ERR_INVALID, "inputs starts and ends are required from opset 10");
  status s = nd->in[2] && !nd->in[2]->data ? onnx_counted_slice_end(nd, n) : ST_OK;
  if (s) return s;
  for (int i = 1; i < nd->nin && i < 5; i++) {
    if (!nd->in[i]) continue;
    status s = index_input_attr(nd, n, i, names[i - 1], MAX_RANK);
    if (s) return s;
  }
  return onnx_counted_slice(nd, n);
}

/* Expand: a constant shape becomes the attribute; a computed one stays
 * in[1] for shape inference (ops.def). */
static status import_expand(onnx_node *nd, ir_node *n) {
  if (!nd->in[1]->data) return onnx_counted_shape_input(nd, n); /* a shape holding a count */
  n->nin = 1;
  return index_input_attr(nd, n, 1, "shape", MAX_RANK);
}

static status import_tile(onnx_node *nd, ir_node *n) {
  return index_input_attr(nd, n, 1, "repeats", MAX_RANK);
}

static status import_depthtospace(onnx_node *nd, ir_node *n) {
  if (!onnx_attr(nd, "blocksize"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'blocksize' is required");
  int crd = onnx_attr_string_is(nd, "mode", "DCR", "CRD");
  if (!crd && !onnx_attr_string_is(nd, "mode", "DCR", "DCR"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' must be \"DCR\" or \"CRD\"");
  return onnx_set_string(nd, n, "mode", crd ? "CRD" : "DCR");
}

static status import_spacetodepth(onnx_node *nd, ir_node *n) {
  (void)n;
  if (!onnx_attr(nd, "blocksize"))
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'blocksize' is required");
  return ST_OK;
}

/* ConstantOfShape: the `value` tensor (default f32 0) becomes input 1. */
static status import_constantofshape(onnx_node *nd, ir_node *n) {
  const Onnx__AttributeProto *a = onnx_attr(nd, "value");
  char name[300];
  snprintf(name, sizeof name, "%.280s_value", nd->out[0]->name);
  ir_value *v = NULL;
  if (a) {
    char what[400], label[256];
    snprintf(what, sizeof what, "%s attribute 'value'",
             onnx_node_label(nd->np, nd->index, label, sizeof label));
    status s = onnx_tensor_const(nd->c, a->t, name, what, &v);
    if (s) return s;
    if (ir_value_elements(v) != 1)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'value' must hold one element, it holds %" PRId64,
                            ir_value_elements(v));
  } else {
    float zero = 0.0f;
    v = ir_const_new(nd->c->g, name, DT_FLOAT32, 1, (const int64_t[]){1}, &zero, sizeof zero);
    if (!v) return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory for the value constant");
  }
  status st = ST_OK;
  if (!nd->in[0]->data && onnx_counted_fill(nd, n, v, &st)) return st; /* a counted shape */
  if (ir_node_set_input(nd->c->g, n, 1, v)) return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
  return ST_OK;
}

/* Trilu(x, k) -> Where(mask, x, 0): the mask over the last two dims is a
 * bool constant (x's shape and k are known at compile time), so the op is
 * one broadcasting vector program. Upper keeps j - i >= k, lower j - i <= k. */
static status import_trilu(onnx_node *nd, ir_node *n) {
  const ir_value *x = nd->in[0];
  double k = 0;
  if (nd->nin > 1 && nd->in[1]) {
    status s = onnx_scalar_input(nd, 1, "k", &k);
    if (s) return s;
  }
  if (x->rank < 2)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "input '%s' needs a known shape of rank >= 2", x->name);
  int upper = onnx_attr_int(nd, "upper", 1) != 0;
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  if (rows < 0 || cols < 0 || (rows && cols > INT32_MAX / rows))
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "input '%s' has unknown or huge matrix dims", x->name);
  uint8_t *mask = arena_array(&nd->c->scratch, (size_t)(rows * cols) + 1, 1);
  uint8_t zero[8] = {0};
  if (!mask || !dtype_size(x->dtype))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory for the Trilu mask");
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      mask[i * cols + j] = upper ? (double)(j - i) >= k : (double)(j - i) <= k;
  char name[300];
  snprintf(name, sizeof name, "%.280s_mask", nd->out[0]->name);
  int64_t md[2] = {rows, cols};
  ir_value *m = ir_const_new(nd->c->g, name, DT_BOOL, 2, md, mask, (size_t)(rows * cols));
  snprintf(name, sizeof name, "%.280s_zero", nd->out[0]->name);
  ir_value *z = ir_const_new(nd->c->g, name, x->dtype, 0, NULL, zero, dtype_size(x->dtype));
  ir_value *xv = nd->in[0];
  if (!m || !z || ir_node_set_input(nd->c->g, n, 0, m) || ir_node_set_input(nd->c->g, n, 1, xv) ||
      ir_node_set_input(nd->c->g, n, 2, z))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory for the Trilu mask");
  return ST_OK;
}

/* Split: sizes from the attribute (before opset 13) or constant input 1;
 * num_outputs (opset 18) must agree with the outputs; every output named. */
static status import_split(onnx_node *nd, ir_node *n) {
  for (int k = 0; k < nd->nout; k++)
    if (!nd->out[k]) return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "output %d has no name", k);
  if (nd->nout > IR_SPLIT_MAX_OUTPUTS)
    return onnx_node_fail(nd, ST_ERR_LIMIT, "%d outputs are more than the limit of %d", nd->nout,
                          IR_SPLIT_MAX_OUTPUTS);
  int64_t num = onnx_attr_int(nd, "num_outputs", nd->nout);
  if (num != nd->nout)
    return onnx_node_fail(nd, ST_ERR_INVALID, "num_outputs = %" PRId64 " but the node has %d outputs", num,
                          nd->nout);
  status s = onnx_set_int(nd, n, "axis", onnx_attr_int(nd, "axis", 0));
  if (s) return s;
  if (nd->c->opset < 13) {
    int count;
    n->nin = 1;
    const int64_t *split = onnx_attr_ints(nd, "split", &count);
    return split ? onnx_set_ints(nd, n, "split", count, split) : ST_OK;
  }
  if (nd->nin > 1 && nd->in[1] && !nd->in[1]->data) return ST_OK; /* computed: shape inference resolves it */
  n->nin = 1;
  if (nd->nin > 1 && nd->in[1]) {
    const ir_value *v = NULL;
    if ((s = onnx_const_input(nd, 1, "split", &v))) return s;
    int64_t count = ir_value_elements(v);
    if (v->dtype != DT_INT64 || v->rank != 1 || count != nd->nout)
      return onnx_node_fail(nd, ST_ERR_INVALID, "input 1 '%s' (split) must be an int64 list of %d sizes",
                            v->name, nd->nout);
    return onnx_set_ints(nd, n, "split", (int)count, v->data);
  }
  return ST_OK;
}

/* Pad: mode, full-rank pads and the constant made explicit; from opset 11
 * pads, constant_value and (opset 18) axes are constant inputs. */
static status import_pad(onnx_node *nd, ir_node *n) {
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
  int mode = -1;
  for (int i = 0; i < 4; i++)
    if (onnx_attr_string_is(nd, "mode", "constant", modes[i])) mode = i;
  if (mode < 0)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'mode' must be constant, reflect, edge or wrap");
  int rank = nd->in[0]->rank;
  if (rank < 0 || rank > MAX_RANK)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "input '%s' needs a known rank", nd->in[0]->name);
  int64_t pads[2 * MAX_RANK] = {0}, given[2 * MAX_RANK], axes[MAX_RANK];
  int np = 0, na = rank;
  double value = 0;
  for (int d = 0; d < rank; d++)
    axes[d] = d;
  status s = ST_OK;
  if (nd->c->opset < 11) {
    const int64_t *p = onnx_attr_ints(nd, "pads", &np);
    if (!p || np > 2 * MAX_RANK)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'pads' is required (2 x rank values)");
    memcpy(given, p, (size_t)np * sizeof *given);
    value = onnx_attr_float(nd, "value", 0.0);
  } else {
    if (nd->nin < 2 || !nd->in[1]) return onnx_node_fail(nd, ST_ERR_INVALID, "input pads is required");
    if ((s = onnx_ints_input(nd, 1, "pads", given, 2 * MAX_RANK, &np))) return s;
    if (nd->nin > 2 && nd->in[2] && (s = onnx_scalar_input(nd, 2, "constant_value", &value))) return s;
    if (nd->nin > 3 && nd->in[3]) {
      if ((s = onnx_ints_input(nd, 3, "axes", axes, MAX_RANK, &na))) return s;
      for (int i = 0; i < na; i++) {
        axes[i] = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axes[i] < 0 || axes[i] >= rank)
          return onnx_node_fail(nd, ST_ERR_INVALID, "axes[%d] out of range", i);
      }
    }
  }
  if (np != 2 * na) return onnx_node_fail(nd, ST_ERR_INVALID, "pads has %d values, expected %d", np, 2 * na);
  for (int i = 0; i < na; i++)
    pads[axes[i]] = given[i], pads[rank + axes[i]] = given[na + i];
  if ((s = onnx_set_string(nd, n, "mode", modes[mode]))) return s;
  s = onnx_set_ints(nd, n, "pads", 2 * rank, pads);
  return s ? s : onnx_set_float(nd, n, "value", value);
}

#define REDUCE_ATTRS "-keepdims:i -noop_with_empty_axes:i"

#define WINDOW "-auto_pad:s -kernel_shape:I -strides:I -pads:I -dilations:I"
#define BINARY "-broadcast:i<7 -axis:i<7 -consumed_inputs:I<6"
#define OLD_UNARY "-consumed_inputs:I<6"
#define RNN_ATTRS                                                                                            \
  "-activation_alpha:F -activation_beta:F -activations:S -clip:f -direction:s -hidden_size:i -layout:i"

static const onnx_importer importers[] = {
    {"Conv", "Conv", 1, 2, 3, 1, WINDOW " -group:i", import_conv},
    {"ConvTranspose", NULL, 1, 2, 3, 1, WINDOW " -group:i -output_padding:I -output_shape:I",
     onnx_decomp_conv_transpose},
    {"BatchNormalization", NULL, 1, 5, 5, 5,
     "-epsilon:f -momentum:f -spatial:i<9 -training_mode:i -is_test:i<7 -consumed_inputs:I<6",
     onnx_decomp_batchnorm},
    {"Relu", "Relu", 1, 1, 1, 1, "-consumed_inputs:I<6", NULL},
    {"Sigmoid", "Sigmoid", 1, 1, 1, 1, "-consumed_inputs:I<6", NULL},
    {"Clip", "Clip", 1, 1, 3, 1, "-min:f<11 -max:f<11 -consumed_inputs:I<6", import_clip},
    {"MaxPool", NULL, 1, 1, 1, 2, WINDOW " -ceil_mode:i -storage_order:i", onnx_decomp_maxpool},
    {"AveragePool", "AveragePool", 1, 1, 1, 1, WINDOW " -ceil_mode:i -count_include_pad:i",
     onnx_avgpool_attrs},
    {"GlobalAveragePool", "GlobalAveragePool", 1, 1, 1, 1, "", NULL},
    {"GlobalMaxPool", "GlobalMaxPool", 1, 1, 1, 1, "", NULL},
    {"LpPool", "LpPool", 2, 1, 1, 1, WINDOW " -ceil_mode:i -p:i", import_lppool},
    {"GlobalLpPool", "GlobalLpPool", 2, 1, 1, 1, "-p:i", lp_attr},
    {"Resize", "Resize", 10, 1, 4, 1,
     "-mode:s -coordinate_transformation_mode:s -cubic_coeff_a:f -exclude_outside:i -extrapolation_value:f "
     "-nearest_mode:s -antialias:i -axes:I -keep_aspect_ratio_policy:s",
     onnx_import_resize},
    {"Upsample", "Resize", 7, 1, 2, 1, "-mode:s -scales:F<9", onnx_import_upsample},
    /* ONNX's experimental ops, removed in opset 10 (onnx_decomp_experimental.c) */
    {"ImageScaler", NULL, 1, 1, 1, 1, "-bias:F -scale:f", onnx_decomp_image_scaler},
    {"Scale", NULL, 1, 1, 1, 1, "-scale:f", onnx_decomp_scale},
    {"Affine", NULL, 1, 1, 1, 1, "-alpha:f -beta:f", onnx_decomp_affine},
    {"ScaledTanh", NULL, 1, 1, 1, 1, "-alpha:f -beta:f", onnx_decomp_scaled_tanh},
    {"ParametricSoftplus", NULL, 1, 1, 1, 1, "-alpha:f -beta:f", onnx_decomp_parametric_softplus},
    {"Crop", NULL, 1, 1, 1, 1, "-border:I -scale:I", onnx_decomp_crop},
    {"Add", "Add", 1, 2, 2, 1, BINARY, import_binary},
    {"Sub", "Sub", 1, 2, 2, 1, BINARY, import_binary},
    {"Mul", "Mul", 1, 2, 2, 1, BINARY, import_binary},
    {"Div", "Div", 1, 2, 2, 1, BINARY, import_binary},
    {"Flatten", "Flatten", 1, 1, 1, 1, "-axis:i", import_flatten},
    {"Reshape", "Reshape", 1, 1, 2, 1, "-shape:I<5 -allowzero:i -consumed_inputs:I<5", import_reshape},
    {"Squeeze", "Squeeze", 1, 1, 2, 1, "-axes:I<13", import_squeeze},
    {"Unsqueeze", "Unsqueeze", 1, 1, 2, 1, "-axes:I<13", import_unsqueeze},
    {"Identity", "Identity", 1, 1, 1, 1, "", NULL},
    {"Dropout", NULL, 1, 1, 3, 2, "-ratio:f<12 -is_test:i<7 -seed:i -consumed_inputs:I<6",
     onnx_decomp_dropout},
    {"Shape", "Shape", 1, 1, 1, 1, "start:i end:i", onnx_import_shape},
    {"Gather", "Gather", 1, 2, 2, 1, "-axis:i", import_gather},
    {"Concat", "Concat", 1, 1, 65535, 1, "-axis:i", import_concat},
    {"Cast", "Cast", 6, 1, 1, 1, "-to:i -saturate:i -round_mode:s", import_cast},
    {"BitCast", "BitCast", 26, 1, 1, 1, "-to:i", import_bitcast},
    {"Softmax", "Softmax", 1, 1, 1, 1, "-axis:i", import_softmax},
    {"LogSoftmax", "Softmax", 1, 1, 1, 1, "-axis:i", import_logsoftmax},
    {"Gemm", "Gemm", 1, 2, 3, 1, "-alpha:f -beta:f -transA:i -transB:i -broadcast:i<7", import_gemm},
    {"MatMul", "MatMul", 1, 2, 2, 1, "", NULL},
    /* elementwise (issue 3); all become vector programs */
    {"Abs", "Abs", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Neg", "Neg", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Sign", "Sign", 9, 1, 1, 1, "", NULL},
    {"Exp", "Exp", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Log", "Log", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Sqrt", "Sqrt", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Reciprocal", "Reciprocal", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Floor", "Floor", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Ceil", "Ceil", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"Round", "Round", 11, 1, 1, 1, "", NULL},
    {"Sin", "Sin", 7, 1, 1, 1, "", NULL},
    {"Cos", "Cos", 7, 1, 1, 1, "", NULL},
    {"Tan", "Tan", 7, 1, 1, 1, "", NULL},
    {"Asin", "Asin", 7, 1, 1, 1, "", NULL},
    {"Acos", "Acos", 7, 1, 1, 1, "", NULL},
    {"Atan", "Atan", 7, 1, 1, 1, "", NULL},
    {"Sinh", "Sinh", 9, 1, 1, 1, "", NULL},
    {"Cosh", "Cosh", 9, 1, 1, 1, "", NULL},
    {"Asinh", "Asinh", 9, 1, 1, 1, "", NULL},
    {"Acosh", "Acosh", 9, 1, 1, 1, "", NULL},
    {"Atanh", "Atanh", 9, 1, 1, 1, "", NULL},
    {"Erf", "Erf", 9, 1, 1, 1, "", NULL},
    {"Tanh", "Tanh", 1, 1, 1, 1, OLD_UNARY, NULL},
    {"HardSigmoid", "HardSigmoid", 1, 1, 1, 1, "-alpha:f -beta:f " OLD_UNARY, import_hardsigmoid},
    {"HardSwish", "HardSwish", 14, 1, 1, 1, "", NULL},
    {"LeakyRelu", "LeakyRelu", 1, 1, 1, 1, "-alpha:f " OLD_UNARY, import_leakyrelu},
    {"Elu", "Elu", 1, 1, 1, 1, "-alpha:f " OLD_UNARY, import_alpha1},
    {"Selu", "Selu", 1, 1, 1, 1, "-alpha:f -gamma:f " OLD_UNARY, import_selu},
    {"Celu", "Celu", 12, 1, 1, 1, "-alpha:f", import_alpha1},
    {"ThresholdedRelu", "ThresholdedRelu", 10, 1, 1, 1, "-alpha:f", import_alpha1},
    {"Softplus", "Softplus", 1, 1, 1, 1, "", NULL},
    {"Softsign", "Softsign", 1, 1, 1, 1, "", NULL},
    {"Mish", "Mish", 18, 1, 1, 1, "", NULL},
    {"Gelu", "Gelu", 20, 1, 1, 1, "-approximate:s", import_gelu},
    {"IsNaN", "IsNaN", 9, 1, 1, 1, "", NULL},
    {"IsInf", "IsInf", 10, 1, 1, 1, "-detect_positive:i -detect_negative:i", import_isinf},
    {"Not", "Not", 1, 1, 1, 1, "", NULL},
    {"BitwiseNot", "BitwiseNot", 18, 1, 1, 1, "", NULL},
    {"PRelu", "PRelu", 1, 2, 2, 1, OLD_UNARY, NULL},
    {"Pow", "Pow", 1, 2, 2, 1, BINARY, import_binary},
    {"Mod", "Mod", 10, 2, 2, 1, "-fmod:i", import_mod},
    {"BitShift", "BitShift", 11, 2, 2, 1, "-direction:s", import_bitshift},
    {"BitwiseAnd", "BitwiseAnd", 18, 2, 2, 1, "", NULL},
    {"BitwiseOr", "BitwiseOr", 18, 2, 2, 1, "", NULL},
    {"BitwiseXor", "BitwiseXor", 18, 2, 2, 1, "", NULL},
    {"And", "And", 1, 2, 2, 1, BINARY, import_binary},
    {"Or", "Or", 1, 2, 2, 1, BINARY, import_binary},
    {"Xor", "Xor", 1, 2, 2, 1, BINARY, import_binary},
    {"Equal", "Equal", 1, 2, 2, 1, BINARY, import_binary},
    {"Less", "Less", 1, 2, 2, 1, BINARY, import_binary},
    {"LessOrEqual", "LessOrEqual", 12, 2, 2, 1, "", NULL},
    {"Greater", "Greater", 1, 2, 2, 1, BINARY, import_binary},
    {"GreaterOrEqual", "GreaterOrEqual", 12, 2, 2, 1, "", NULL},
    {"Max", "Max", 1, 1, 65535, 1, OLD_UNARY, import_variadic},
    {"Min", "Min", 1, 1, 65535, 1, OLD_UNARY, import_variadic},
    {"Sum", "Sum", 1, 1, 65535, 1, OLD_UNARY, import_variadic},
    {"Mean", "Mean", 1, 1, 65535, 1, OLD_UNARY, import_variadic},
    {"Where", "Where", 9, 3, 3, 1, "", NULL},
    {"CastLike", "Cast", 15, 2, 2, 1, "-saturate:i -round_mode:s", import_castlike},
    /* reductions (issue 3) */
    {"ReduceSum", "Reduce", 1, 1, 2, 1, "-axes:I<13 " REDUCE_ATTRS, import_reduce},
    {"ReduceMean", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceMax", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceMin", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceProd", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceL1", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceL2", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceLogSum", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceLogSumExp", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ReduceSumSquare", "Reduce", 1, 1, 2, 1, "-axes:I<18 " REDUCE_ATTRS, import_reduce},
    {"ArgMax", "Reduce", 1, 1, 1, 1, "-axis:i -keepdims:i -select_last_index:i", import_argreduce},
    {"ArgMin", "Reduce", 1, 1, 1, 1, "-axis:i -keepdims:i -select_last_index:i", import_argreduce},
    {"Size", "Size", 1, 1, 1, 1, "", onnx_import_size},
    {"Trilu", "Where", 14, 1, 2, 1, "-upper:i", import_trilu},
    {"Range", "Range", 11, 3, 3, 1, "", onnx_counted_range},
    {"GatherElements", "GatherElements", 11, 2, 2, 1, "-axis:i", import_gather},
    {"Pad", "Pad", 2, 1, 4, 1, "-mode:s -pads:I<11 -value:f<11", import_pad},
    /* indexing (frontend/onnx_ops_index.c) */
    {"TopK", "TopK", 1, 1, 2, 2, "-k:i<10 -axis:i -largest:i -sorted:i", onnx_import_topk},
    {"Scatter", "ScatterElements", 9, 3, 3, 1, "-axis:i", onnx_import_scatter},
    {"ScatterElements", "ScatterElements", 11, 3, 3, 1, "-axis:i -reduction:s", onnx_import_scatter},
    {"ScatterND", "ScatterND", 11, 3, 3, 1, "-reduction:s", onnx_import_scatternd},
    {"TensorScatter", "TensorScatter", 24, 2, 3, 1, "-axis:i -mode:s", onnx_import_tensorscatter},
    {"CumSum", "CumSum", 11, 2, 2, 1, "-exclusive:i -reverse:i", onnx_import_cumulative},
    {"CumProd", "CumProd", 26, 2, 2, 1, "-exclusive:i -reverse:i", onnx_import_cumulative},
    {"GatherND", "GatherND", 11, 2, 2, 1, "-batch_dims:i", onnx_import_gathernd},
    {"OneHot", "OneHot", 9, 3, 3, 1, "-axis:i", onnx_import_onehot},
    {"Compress", "Gather", 9, 2, 2, 1, "-axis:i", onnx_import_compress},
    {"NonZero", "NonZero", 9, 1, 1, 1, "", onnx_import_nonzero},
    {"NonMaxSuppression", "NonMaxSuppression", 10, 2, 5, 1, "-center_point_box:i", onnx_import_nms},
    {"Unique", "Unique", 11, 1, 1, 4, "-axis:i -sorted:i", onnx_import_unique},
    {"TfIdfVectorizer", "TfIdfVectorizer", 9, 1, 1, 1,
     "-max_gram_length:i -max_skip_count:i -min_gram_length:i -mode:s -ngram_counts:I -ngram_indexes:I "
     "-pool_int64s:I -pool_strings:S -weights:F",
     onnx_import_tfidf},
    {"ConstantOfShape", "ConstantOfShape", 9, 1, 1, 1, "-value:t", import_constantofshape},
    /* strided views (ir/view.h) */
    {"Split", "Split", 1, 1, 2, IR_SPLIT_MAX_OUTPUTS, "-axis:i -split:I<13 -num_outputs:i", import_split},
    {"Transpose", "Transpose", 1, 1, 1, 1, "perm:I", NULL},
    {"Slice", "Slice", 1, 1, 5, 1, "starts:I<10 ends:I<10 axes:I<10", import_slice},
    {"Expand", "Expand", 8, 2, 2, 1, "", import_expand},
    {"Tile", "Tile", 6, 2, 2, 1, "", import_tile},
    {"DepthToSpace", "DepthToSpace", 1, 1, 1, 1, "blocksize:i -mode:s", import_depthtospace},
    {"SpaceToDepth", "SpaceToDepth", 1, 1, 1, 1, "blocksize:i", import_spacetodepth},
    /* decompositions: ONNX functions built from the ops above (frontend/onnx_decomp.h) */
    /* LayerNormalization before opset 17 and SimplifiedLayerNormalization
     * (RMSNorm): ONNX Runtime's contrib schemas in the default domain (since
     * version 1), which its transformer optimizer writes at any opset */
    {"LayerNormalization", NULL, 1, 2, 3, 3, "-axis:i -epsilon:f -stash_type:i", onnx_decomp_layer_norm},
    {"SimplifiedLayerNormalization", NULL, 1, 2, 2, 2, "-axis:i -epsilon:f -stash_type:i",
     onnx_decomp_simplified_layer_norm},
    {"RMSNormalization", NULL, 23, 2, 2, 1, "-axis:i -epsilon:f -stash_type:i", onnx_decomp_rms_norm},
    {"GroupNormalization", NULL, 18, 3, 3, 1, "-epsilon:f -num_groups:i -stash_type:i",
     onnx_decomp_group_norm},
    {"InstanceNormalization", NULL, 6, 3, 3, 1, "-epsilon:f", onnx_decomp_instance_norm},
    {"MeanVarianceNormalization", NULL, 9, 1, 1, 1, "-axes:I", onnx_decomp_mvn},
    {"LpNormalization", NULL, 1, 1, 1, 1, "-axis:i -p:i", onnx_decomp_lp_norm},
    {"NegativeLogLikelihoodLoss", NULL, 12, 2, 3, 1, "-reduction:s -ignore_index:i", onnx_decomp_nll_loss},
    {"SoftmaxCrossEntropyLoss", NULL, 12, 2, 3, 2, "-reduction:s -ignore_index:i", onnx_decomp_sce_loss},
    {"Hardmax", NULL, 1, 1, 1, 1, "-axis:i", onnx_decomp_hardmax},
    {"Einsum", NULL, 12, 1, 8, 1, "-equation:s", onnx_decomp_einsum},
    {"CenterCropPad", NULL, 18, 2, 2, 1, "-axes:I", onnx_decomp_center_crop_pad},
    {"Swish", NULL, 24, 1, 1, 1, "-alpha:f", onnx_decomp_swish},
    {"CausalConvWithState", NULL, 27, 2, 4, 2, "-activation:s", onnx_decomp_causal_conv},
    {"EyeLike", NULL, 9, 1, 1, 1, "-dtype:i -k:i", onnx_decomp_eye_like},
    {"Det", NULL, 11, 1, 1, 1, "", onnx_decomp_det},
    {"ReverseSequence", NULL, 10, 2, 2, 1, "-batch_axis:i -time_axis:i", onnx_decomp_reverse_sequence},
    {"DFT", NULL, 17, 1, 3, 1, "-axis:i<20 -inverse:i -onesided:i", onnx_decomp_dft},
    {"STFT", NULL, 17, 2, 4, 1, "-onesided:i", onnx_decomp_stft},
    {"Col2Im", NULL, 18, 3, 3, 1, "-dilations:I -pads:I -strides:I", onnx_decomp_col2im},
    {"MaxUnpool", NULL, 9, 2, 3, 1, "-kernel_shape:I -pads:I -strides:I", onnx_decomp_max_unpool},
    {"SwiGLU", NULL, 28, 2, 2, 1, "-alpha:f", onnx_decomp_swiglu},
    {"Shrink", NULL, 9, 1, 1, 1, "-lambd:f -bias:f", onnx_decomp_shrink},
    {"LRN", NULL, 1, 1, 1, 1, "-size:i -alpha:f -beta:f -bias:f", onnx_decomp_lrn},
    {"HannWindow", NULL, 17, 1, 1, 1, "-output_datatype:i -periodic:i", onnx_decomp_window},
    {"HammingWindow", NULL, 17, 1, 1, 1, "-output_datatype:i -periodic:i", onnx_decomp_window},
    {"BlackmanWindow", NULL, 17, 1, 1, 1, "-output_datatype:i -periodic:i", onnx_decomp_window},
    {"MelWeightMatrix", NULL, 17, 5, 5, 1, "-output_datatype:i", onnx_decomp_mel_weight_matrix},
    {"LinearAttention", NULL, 27, 3, 7, 2,
     "-chunk_size:i -kv_num_heads:i -q_num_heads:i -scale:f -update_rule:s", onnx_decomp_linear_attention},
    {"RotaryEmbedding", NULL, 23, 3, 4, 1, "-interleaved:i -num_heads:i -rotary_embedding_dim:i",
     onnx_decomp_rotary},
    {"AffineGrid", NULL, 20, 2, 2, 1, "-align_corners:i", onnx_decomp_affine_grid},
    {"DeformConv", NULL, 19, 3, 5, 1,
     "-dilations:I -group:i -kernel_shape:I -offset_group:i -pads:I -strides:I", onnx_decomp_deform_conv},
    {"RoiAlign", NULL, 10, 3, 3, 1,
     "-coordinate_transformation_mode:s -mode:s -output_height:i -output_width:i -sampling_ratio:i "
     "-spatial_scale:f",
     onnx_decomp_roi_align},
    {"GridSample", NULL, 16, 2, 2, 1, "-align_corners:i -mode:s -padding_mode:s", onnx_decomp_grid_sample},
    {"QuantizeLinear", NULL, 10, 2, 3, 1, "-axis:i -block_size:i -output_dtype:i -precision:i -saturate:i",
     onnx_decomp_quantize},
    {"DequantizeLinear", NULL, 10, 2, 3, 1, "-axis:i -block_size:i -output_dtype:i", onnx_decomp_dequantize},
    {"DynamicQuantizeLinear", NULL, 11, 1, 1, 3, "", onnx_decomp_dynamic_quantize},
    {"QLinearConv", NULL, 10, 8, 9, 1, WINDOW " -group:i", onnx_decomp_qlinear_conv},
    {"QLinearMatMul", NULL, 10, 8, 8, 1, "", onnx_decomp_qlinear_matmul},
    {"ConvInteger", NULL, 10, 2, 4, 1, WINDOW " -group:i", onnx_decomp_conv_integer},
    {"MatMulInteger", NULL, 10, 2, 4, 1, "", onnx_decomp_matmul_integer},
    {"RNN", NULL, 7, 3, 6, 2, RNN_ATTRS, onnx_decomp_rnn},
    {"GRU", NULL, 7, 3, 6, 2, RNN_ATTRS " -linear_before_reset:i", onnx_decomp_gru},
    {"LSTM", NULL, 7, 3, 8, 3, RNN_ATTRS " -input_forget:i", onnx_decomp_lstm},
    /* control flow, resolved at import (onnx_control.c) */
    {"If", NULL, 1, 1, 1, DC_MAX_OUTPUTS, "-then_branch:g -else_branch:g", onnx_import_if},
    /* Loop's M and cond and opset-8 Scan's sequence_lens may be omitted (""): min_in 0, the
     * importers check the count */
    {"Loop", NULL, 1, 0, 2 + DC_MAX_OUTPUTS, DC_MAX_OUTPUTS, "-body:g", onnx_import_loop},
    /* sequences, resolved at import into lists of tensors (onnx_seq.c) */
    {"SequenceEmpty", NULL, 11, 0, 0, 1, "-dtype:i", onnx_import_sequence_empty},
    {"SequenceConstruct", NULL, 11, 1, IR_SPLIT_MAX_OUTPUTS, 1, "", onnx_import_sequence_construct},
    {"SplitToSequence", NULL, 11, 1, 2, 1, "-axis:i -keepdims:i", onnx_import_split_to_sequence},
    {"SequenceInsert", NULL, 11, 2, 3, 1, "", onnx_import_sequence_insert},
    {"SequenceErase", NULL, 11, 1, 2, 1, "", onnx_import_sequence_erase},
    {"SequenceAt", NULL, 11, 2, 2, 1, "", onnx_import_sequence_at},
    {"SequenceLength", NULL, 11, 1, 1, 1, "", onnx_import_sequence_length},
    {"ConcatFromSequence", NULL, 11, 1, 1, 1, "-axis:i -new_axis:i", onnx_import_concat_from_sequence},
    {"Scan", NULL, 8, 0, 1 + DC_MAX_OUTPUTS, DC_MAX_OUTPUTS,
     "-body:g -num_scan_inputs:i -directions:I<9 -scan_input_axes:I -scan_input_directions:I "
     "-scan_output_axes:I -scan_output_directions:I",
     onnx_import_scan},
    {"Attention", NULL, 23, 3, 7, 4,
     "-is_causal:i -kv_num_heads:i -q_num_heads:i -qk_matmul_output_mode:i -scale:f -softcap:f "
     "-softmax_precision:i",
     onnx_decomp_attention},
};

static const onnx_importer *find_importer(const char *op_type) {
  for (size_t i = 0; i < sizeof importers / sizeof *importers; i++)
    if (!strcmp(importers[i].op_type, op_type)) return &importers[i];
  return NULL;
}

int onnx_op_known(const char *op_type) { return find_importer(op_type) || onnx_ms_importer_find(op_type); }

status onnx_import_node(onnx_node *nd) {
  const Onnx__NodeProto *np = nd->np;
  int ms = np->domain && !strcmp(np->domain, ONNX_MS_DOMAIN); /* the loader refused other domains */
  const onnx_ms_importer *msi = ms ? onnx_ms_importer_find(np->op_type) : NULL;
  const onnx_importer *im = ms ? (msi ? &msi->im : NULL) : find_importer(np->op_type);
  int opset = ms ? nd->c->ms_opset : nd->c->opset;
  if (!im && ms) {
    char known[1024];
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "op %s of domain '%s' is not supported (of it: %s)",
                          np->op_type, np->domain, onnx_ms_op_list(known, sizeof known));
  }
  if (!im)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "no importer for op %s (opset %d)", np->op_type, opset);
  if (opset < im->min_opset)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED, "opset %d is not supported (needs opset >= %d)", opset,
                          im->min_opset);
  if (nd->nin < im->min_in || nd->nin > im->max_in)
    return onnx_node_fail(nd, ST_ERR_INVALID, "has %d inputs, %s takes %d to %d", nd->nin, np->op_type,
                          im->min_in, im->max_in);
  if (nd->nout < 1 || nd->nout > im->max_out)
    return onnx_node_fail(nd, ST_ERR_INVALID, "has %d outputs, %s has 1 to %d", nd->nout, np->op_type,
                          im->max_out);
  const char *name = msi ? msi->inputs : ""; /* input i's in the row's list */
  for (int i = 0; i < im->min_in; i++) {
    int len = (int)strcspn(name, ","), optional = len > 0 && name[len - 1] == '?';
    if (!nd->in[i] && !optional)
      return onnx_node_fail(nd, ST_ERR_INVALID, "required input %d%s%.*s%s has no name", i, len ? " (" : "",
                            len, name, len ? ")" : "");
    name += len + (name[len] == ',');
  }
  if (!im->ir_name) { /* a decomposition: the row's function builds the subgraph (onnx_decomp.h) */
    int named = 0;    /* any output may be omitted (RNN's Y, ...), but not all */
    for (int k = 0; k < nd->nout; k++)
      named |= nd->out[k] != NULL;
    if (!named) return onnx_node_fail(nd, ST_ERR_INVALID, "has no named output");
    status s = onnx_check_attrs(nd, im->attrs, NULL);
    return s ? s : im->fn(nd, NULL);
  }
  if (!nd->out[0]) return onnx_node_fail(nd, ST_ERR_INVALID, "output 0 has no name");

  int op = ir_op_from_name(im->ir_name);
  assert(op >= 0 && "importer table names an op missing from ops.def");
  const ir_op_info *info = &ir_ops[op];
  for (int i = info->max_out; i < nd->nout; i++)
    if (nd->out[i] && nd->uses[i] > 0)
      return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                            "output %d '%s' is used, but only the first %d output(s) of %s are "
                            "supported (inference)",
                            i, nd->out[i]->name, info->max_out, np->op_type);
  int nin = nd->nin < info->max_in ? nd->nin : info->max_in;
  while (nin > 0 && !nd->in[nin - 1])
    nin--;
  ir_node *n = ir_node_new(nd->c->g, (ir_op)op, np->name && *np->name ? np->name : NULL, nin, nd->in,
                           nd->nout < info->max_out ? nd->nout : info->max_out, nd->out);
  if (!n) return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
  status s = onnx_check_attrs(nd, im->attrs, n);
  if (!s && im->fn) s = im->fn(nd, n);
  return s; /* the loader infers n's outputs next (onnx_load.c, step 4) */
}

dtype onnx_result_dtype(const ir_node *n) {
  switch (n->op) {
  case IR_OP_SHAPE:
  case IR_OP_SIZE:
  case IR_OP_NONZERO:
  case IR_OP_NMS: return DT_INT64;
  case IR_OP_TFIDF: return DT_FLOAT32;
  case IR_OP_QMATMUL: return n->nin > 3 ? DT_FLOAT32 : DT_INT32;
  case IR_OP_QCONV: return (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  case IR_OP_DYNQUANT: return DT_UINT8; /* y and zp; scale is f32 */
  case IR_OP_CONSTANTOFSHAPE: return n->nin > 1 && n->in[1] ? n->in[1]->dtype : DT_UNDEFINED;
  case IR_OP_CAST: /* CastLike keeps its like input until shape inference */
    return n->nin > 1 && n->in[1] && !ir_attr_find(n, "to") ? n->in[1]->dtype
                                                            : (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  case IR_OP_EQUAL:
  case IR_OP_LESS:
  case IR_OP_LESSOREQUAL:
  case IR_OP_GREATER:
  case IR_OP_GREATEROREQUAL:
  case IR_OP_ISNAN:
  case IR_OP_ISINF: return DT_BOOL;
  case IR_OP_WHERE: return n->nin > 1 && n->in[1] ? n->in[1]->dtype : DT_UNDEFINED;
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE: return (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  case IR_OP_ONEHOT: return n->nin > 1 && n->in[1] ? n->in[1]->dtype : DT_UNDEFINED; /* values */
  case IR_OP_REDUCE: {
    const char *mode = ir_attr_string(n, "mode", "");
    return !strcmp(mode, "argmax") || !strcmp(mode, "argmin") ? DT_INT64
           : n->in[0]                                         ? n->in[0]->dtype
                                                              : DT_UNDEFINED;
  }
  default: return n->in[0] ? n->in[0]->dtype : DT_UNDEFINED;
  }
}
