/* shape.c - the shape and dtype rules of every IR op (ir/shape.h).
 *
 * One function per op family computes the output dims and dtype from the
 * inputs' and the attributes, checks what the op requires of them, and
 * normalises the node so that no later reader needs a default:
 *   - Conv and the pools get explicit kernel_shape, strides, dilations and
 *     pads (begins, then ends: [t,l,b,r] in 2-D; Conv also group); auto_pad
 *     is resolved into pads and removed;
 *   - Softmax gets an explicit axis >= 0, Reduce axes >= 0 in ascending
 *     order (or noop=1 when it reduces nothing), Split its sizes;
 *   - Resize gets the scales its coordinate transform uses in place of sizes
 *     and keep_aspect_ratio_policy (ir/resize.h);
 *   - the compile-time list inputs of Reduce, Expand and Split (ops.def)
 *     become attributes and the input is dropped from the node; a Cast still
 *     holding CastLike's like input gets `to` from its dtype and drops it;
 *     a Concat drops the empty 1-D inputs PyTorch's exports add among
 *     inputs of another rank.
 * The indexing ops (TopK, Scatter*, CumSum, GatherND, OneHot,
 * TensorScatter) are in ir/shape_index.c, Conv in ir/conv.c, the fused ops
 * (LayerNorm, FusedAttention) in ir/shape_fused.c, the pools in ir/pool.c,
 * Resize in ir/resize.c.
 *
 * Values matter in one place: Reshape, ConstantOfShape, Range and the list
 * inputs read the data of their shape-arithmetic inputs, from the caller's
 * `known` table (the shape_infer pass propagates small integer tensors
 * there) or, without one, from constants only.
 *
 * ir_shape_try, at the end, runs the rules early and without a trace but
 * the shapes: the frontend's use at import.
 */
#include "ir/shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/om_format.h"
#include "ir/conv.h"
#include "ir/eval.h"
#include "ir/eval_quant.h"
#include "ir/fused.h"
#include "ir/pool.h"
#include "ir/resize.h"
#include "ir/count.h"
#include "ir/shape_index.h"
#include "ir/view.h"

typedef struct si {
  ir_graph *g;
  diag *d;
  const ir_node *n;
  const void *const *known; /* per value id: what is known of its data; NULL: constants only */
} si;

/* What is known of v's data at compile time, or NULL. */
static const void *known_data(const si *s, const ir_value *v) { return s->known ? s->known[v->id] : v->data; }

/* Errors name the node: ir_node_error over the context's diag and node. */
#define fail(s, code, ...) ir_node_error((s)->d, (code), (s)->n, __VA_ARGS__)

static status nomem(si *s) { return fail(s, ST_ERR_NOMEM, "out of memory inferring shapes"); }

static const char *shape_str(const ir_value *v) { return ir_dims_str(v->rank, v->dims); }

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

static int is_int(int dt) {
  return dt == DT_INT64 || dt == DT_INT32 || dt == DT_INT16 || dt == DT_INT8 || dt == DT_UINT8 ||
         dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

static status need_float(si *s, int i) {
  const ir_value *v = s->n->in[i];
  if (!is_float(v->dtype))
    return fail(s, ST_ERR_UNSUPPORTED, "input %d '%s' has dtype %s; expected a float type", i, v->name,
                dtype_name(v->dtype));
  return ST_OK;
}

static status need_rank(si *s, int i, int rank) {
  const ir_value *v = s->n->in[i];
  if (v->rank != rank)
    return fail(s, ST_ERR_INVALID, "input %d '%s' has shape %s; expected rank %d", i, v->name, shape_str(v),
                rank);
  return ST_OK;
}

static status same_dtype(si *s, int i, int j) {
  const ir_value *a = s->n->in[i], *b = s->n->in[j];
  if (a->dtype != b->dtype)
    return fail(s, ST_ERR_INVALID, "inputs '%s' (%s) and '%s' (%s) have different dtypes", a->name,
                dtype_name(a->dtype), b->name, dtype_name(b->dtype));
  return ST_OK;
}

/* Normalises an axis against `rank` (valid: -rank..rank-1); -1 when out of range. */
static int axis_in(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return -1;
  return (int)(axis < 0 ? axis + rank : axis);
}

/* ---- broadcasting ---- */

static int broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *r_out, int64_t *out) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)], db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) return -1;
    out[i] = da == 1 ? db : da;
  }
  *r_out = r;
  return 0;
}

/* Inputs [first, n->nin) broadcast together (numpy); with `same`, they share
 * in[first]'s dtype. */
static status infer_nary(si *s, int first, int same, int *rank, int64_t *dims) {
  const ir_node *n = s->n;
  *rank = n->in[first]->rank;
  memcpy(dims, n->in[first]->dims, sizeof(int64_t) * (size_t)*rank);
  for (int i = first + 1; i < n->nin; i++) {
    const ir_value *v = n->in[i];
    status st = same ? same_dtype(s, first, i) : ST_OK;
    if (st) return st;
    int64_t prev[MAX_RANK];
    int r = *rank;
    memcpy(prev, dims, sizeof(int64_t) * (size_t)r);
    if (broadcast(r, prev, v->rank, v->dims, rank, dims))
      return fail(s, ST_ERR_INVALID, "inputs %s and %s do not broadcast", ir_dims_str(r, prev), shape_str(v));
  }
  return ST_OK;
}

/* The dtype class an elementwise op accepts for its (first value) input. */
typedef enum elem_kind { EK_FLOAT, EK_NUMERIC, EK_INT, EK_BOOL, EK_ANY } elem_kind;

static elem_kind elem_input_kind(ir_op op) {
  switch (op) {
  case IR_OP_ABS:
  case IR_OP_NEG:
  case IR_OP_SIGN:
  case IR_OP_RELU:
  case IR_OP_CLIP:
  case IR_OP_ADD:
  case IR_OP_SUB:
  case IR_OP_MUL:
  case IR_OP_DIV:
  case IR_OP_MOD:
  case IR_OP_POW:
  case IR_OP_PRELU:
  case IR_OP_MAX:
  case IR_OP_MIN:
  case IR_OP_LESS:
  case IR_OP_LESSOREQUAL:
  case IR_OP_GREATER:
  case IR_OP_GREATEROREQUAL: return EK_NUMERIC;
  case IR_OP_BITSHIFT:
  case IR_OP_BITWISEAND:
  case IR_OP_BITWISEOR:
  case IR_OP_BITWISEXOR:
  case IR_OP_BITWISENOT: return EK_INT;
  case IR_OP_AND:
  case IR_OP_OR:
  case IR_OP_XOR:
  case IR_OP_NOT: return EK_BOOL;
  case IR_OP_EQUAL:
  case IR_OP_WHERE: return EK_ANY;
  default: return EK_FLOAT;
  }
}

/* Elementwise ops other than Cast and Identity: dtype rules and broadcasting.
 * Compares, IsNaN and IsInf give bool; everything else in[0]'s dtype (Where:
 * in[1]'s). */
static status infer_elementwise(si *s, ir_node *n, int *rank, int64_t *dims, dtype *dt) {
  int first = n->op == IR_OP_WHERE ? 1 : 0;
  const ir_value *x = n->in[first];
  elem_kind k = elem_input_kind(n->op);
  int ok = k == EK_FLOAT     ? is_float(x->dtype)
           : k == EK_NUMERIC ? is_float(x->dtype) || is_int(x->dtype)
           : k == EK_INT     ? is_int(x->dtype)
           : k == EK_BOOL    ? x->dtype == DT_BOOL
                             : dtype_size(x->dtype) > 0;
  static const char *const want[] = {"a float type", "a numeric type", "an integer type", "bool",
                                     "a sized type"};
  if (!ok)
    return fail(s, ST_ERR_UNSUPPORTED, "input %d '%s' has dtype %s; expected %s", first, x->name,
                dtype_name(x->dtype) ? dtype_name(x->dtype) : "?", want[k]);
  if (n->op == IR_OP_WHERE && n->in[0]->dtype != DT_BOOL)
    return fail(s, ST_ERR_INVALID, "condition '%s' has dtype %s; expected bool", n->in[0]->name,
                dtype_name(n->in[0]->dtype));
  if (n->op == IR_OP_POW && !is_float(n->in[1]->dtype) && !is_int(n->in[1]->dtype))
    return fail(s, ST_ERR_UNSUPPORTED, "exponent '%s' has dtype %s", n->in[1]->name,
                dtype_name(n->in[1]->dtype));
  status st = infer_nary(s, first, n->op != IR_OP_POW, rank, dims);
  if (st) return st;
  if (n->op == IR_OP_WHERE) {
    int64_t prev[MAX_RANK];
    int r = *rank;
    memcpy(prev, dims, sizeof(int64_t) * (size_t)r);
    if (broadcast(n->in[0]->rank, n->in[0]->dims, r, prev, rank, dims))
      return fail(s, ST_ERR_INVALID, "condition %s and values %s do not broadcast", shape_str(n->in[0]),
                  ir_dims_str(r, prev));
  }
  switch (n->op) {
  case IR_OP_EQUAL:
  case IR_OP_LESS:
  case IR_OP_LESSOREQUAL:
  case IR_OP_GREATER:
  case IR_OP_GREATEROREQUAL:
  case IR_OP_ISNAN:
  case IR_OP_ISINF: *dt = DT_BOOL; break;
  default: *dt = x->dtype; break;
  }
  return ST_OK;
}

/* QuantizeLinear, DequantizeLinear: x's dims, the dtype of attribute to;
 * the scale and zero point broadcast against x (ops.def). */
static status infer_qdq(si *s, ir_node *n, int *rank, int64_t *dims, dtype *dt) {
  const ir_value *x = n->in[0], *sc = n->in[1], *zp = n->nin > 2 ? n->in[2] : NULL;
  int quant = n->op == IR_OP_QUANTIZE;
  *dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
  int in_ok = quant ? x->dtype == DT_FLOAT32 || x->dtype == DT_FLOAT16
                    : x->dtype == DT_INT8 || x->dtype == DT_UINT8 || x->dtype == DT_INT16 ||
                          x->dtype == DT_UINT16 || x->dtype == DT_INT32;
  int q = quant ? *dt : x->dtype, f = quant ? x->dtype : *dt;
  if (!in_ok || !(f == DT_FLOAT32 || f == DT_FLOAT16) ||
      !(q == DT_INT8 || q == DT_UINT8 || q == DT_INT16 || q == DT_UINT16 || q == DT_INT32) ||
      (quant && q == DT_INT32))
    return fail(s, ST_ERR_UNSUPPORTED, "x '%s' is %s and attribute to %s", x->name, dtype_name(x->dtype),
                dtype_name(*dt) ? dtype_name(*dt) : "?");
  if (sc->dtype != DT_FLOAT32 && sc->dtype != DT_FLOAT16)
    return fail(s, ST_ERR_UNSUPPORTED, "scale '%s' has dtype %s", sc->name, dtype_name(sc->dtype));
  if (zp && (int)zp->dtype != q)
    return fail(s, ST_ERR_INVALID, "zero point '%s' has dtype %s, the quantized values %s", zp->name,
                dtype_name(zp->dtype), dtype_name(q));
  status st = infer_nary(s, 0, 0, rank, dims);
  if (st) return st;
  if (*rank != x->rank || memcmp(dims, x->dims, sizeof(int64_t) * (size_t)x->rank))
    return fail(s, ST_ERR_INVALID, "the scale or zero point broadcasts x %s to %s", shape_str(x),
                ir_dims_str(*rank, dims));
  return ST_OK;
}

/* A VectorProgram keeps its outputs' dtypes (its STOREs fix them); their
 * dims are the broadcast of its inputs. */
static status infer_vecprog(si *s, ir_node *n) {
  int rank;
  int64_t dims[MAX_RANK];
  status st = infer_nary(s, 0, 0, &rank, dims);
  if (st) return st;
  for (int j = 0; j < n->nout; j++) {
    if (!n->out[j]) return fail(s, ST_ERR_INVALID, "output %d is missing", j);
    ir_value_set_shape(n->out[j], rank, dims);
  }
  return ST_OK;
}

/* ---- shape manipulation ---- */

static status infer_reshape(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0], *sh = n->in[1];
  const int64_t *spec = known_data(s, sh);
  if (sh->dtype != DT_INT64 || sh->rank != 1)
    return fail(s, ST_ERR_INVALID, "shape input '%s' is %s%s; expected a 1-D i64 tensor", sh->name,
                dtype_name(sh->dtype), shape_str(sh));
  if (!spec) return fail(s, ST_ERR_UNSUPPORTED, "shape input '%s' is not known at compile time", sh->name);
  if (sh->dims[0] > MAX_RANK)
    return fail(s, ST_ERR_LIMIT, "target rank %lld exceeds %d", (long long)sh->dims[0], MAX_RANK);
  int allowzero = ir_attr_int(n, "allowzero", 0) != 0, infer_at = -1;
  int64_t total = ir_value_elements(x);
  uint64_t known = 1;
  *rank = (int)sh->dims[0];
  for (int i = 0; i < *rank; i++) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (i >= x->rank)
        return fail(s, ST_ERR_INVALID, "shape %s copies dim %d of input %s", ir_dims_str(*rank, spec), i,
                    shape_str(x));
      d = x->dims[i];
    }
    if (d == -1) {
      if (infer_at >= 0) return fail(s, ST_ERR_INVALID, "shape %s has two -1 dims", ir_dims_str(*rank, spec));
      infer_at = i;
      d = 1;
    } else if (d < 0) {
      return fail(s, ST_ERR_INVALID, "shape %s has dim %lld", ir_dims_str(*rank, spec), (long long)d);
    }
    dims[i] = d;
    if (mul_u64(known, (uint64_t)d, &known))
      return fail(s, ST_ERR_LIMIT, "shape %s overflows", ir_dims_str(*rank, spec));
  }
  if (infer_at >= 0) {
    if (known == 0 || (uint64_t)total % known)
      return fail(s, ST_ERR_INVALID, "cannot reshape input %s into %s", shape_str(x),
                  ir_dims_str(*rank, spec));
    dims[infer_at] = (int64_t)((uint64_t)total / known);
  } else if (known != (uint64_t)total) {
    return fail(s, ST_ERR_INVALID, "cannot reshape input %s (%lld elements) into %s", shape_str(x),
                (long long)total, ir_dims_str(*rank, spec));
  }
  return ST_OK;
}

static status infer_squeeze(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0];
  int64_t axes[MAX_RANK];
  int na = ir_attr_ints(n, "axes", axes, MAX_RANK), drop[MAX_RANK] = {0};
  if (na > MAX_RANK) return fail(s, ST_ERR_LIMIT, "%d axes", na);
  for (int i = 0; i < na; i++) {
    int a = axis_in(axes[i], x->rank);
    if (a < 0 || x->dims[a] != 1)
      return fail(s, ST_ERR_INVALID, "axis %lld of input %s is not a dim of size 1", (long long)axes[i],
                  shape_str(x));
    drop[a] = 1;
  }
  *rank = 0;
  for (int i = 0; i < x->rank; i++)
    if (!(na < 0 ? x->dims[i] == 1 : drop[i])) dims[(*rank)++] = x->dims[i];
  return ST_OK;
}

static status infer_unsqueeze(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0];
  int64_t axes[MAX_RANK];
  int na = ir_attr_ints(n, "axes", axes, MAX_RANK), ins[MAX_RANK] = {0};
  if (na < 0) return fail(s, ST_ERR_INVALID, "attribute axes is missing");
  if (x->rank + na > MAX_RANK)
    return fail(s, ST_ERR_LIMIT, "output rank %d exceeds %d", x->rank + na, MAX_RANK);
  *rank = x->rank + na;
  for (int i = 0; i < na; i++) {
    int a = axis_in(axes[i], *rank);
    if (a < 0 || ins[a])
      return fail(s, ST_ERR_INVALID, "axes %s are out of range or repeated for input %s",
                  ir_dims_str(na, axes), shape_str(x));
    ins[a] = 1;
  }
  for (int i = 0, j = 0; i < *rank; i++)
    dims[i] = ins[i] ? 1 : x->dims[j++];
  return ST_OK;
}

static status infer_flatten(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0];
  int64_t axis = ir_attr_int(n, "axis", 1);
  int a = axis == x->rank ? x->rank : axis_in(axis, x->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for input %s", (long long)axis, shape_str(x));
  *rank = 2;
  dims[0] = 1, dims[1] = 1;
  for (int i = 0; i < x->rank; i++)
    if (__builtin_mul_overflow(dims[i >= a], x->dims[i], &dims[i >= a]))
      return fail(s, ST_ERR_LIMIT, "the flattened dims of input %s exceed 2^63", shape_str(x));
  return ST_OK;
}

static status infer_shape_op(si *s, ir_node *n, int *rank, int64_t *dims) {
  int r = n->in[0]->rank;
  int64_t start = ir_attr_int(n, "start", 0), end = ir_attr_int(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  *rank = 1;
  dims[0] = end > start ? end - start : 0;
  return ST_OK;
}

/* ConstantOfShape: dims from the (compile-time) shape input, dtype from the
 * value input. */
static status infer_constantofshape(si *s, ir_node *n, int *rank, int64_t *dims, dtype *dt) {
  const ir_value *sh = n->in[0], *val = n->in[1];
  const int64_t *spec = known_data(s, sh);
  if (sh->dtype != DT_INT64 || sh->rank != 1)
    return fail(s, ST_ERR_INVALID, "shape input '%s' is %s%s; expected a 1-D i64 tensor", sh->name,
                dtype_name(sh->dtype), shape_str(sh));
  if (!spec) return fail(s, ST_ERR_UNSUPPORTED, "shape input '%s' is not known at compile time", sh->name);
  if (sh->dims[0] > MAX_RANK)
    return fail(s, ST_ERR_LIMIT, "rank %lld exceeds %d", (long long)sh->dims[0], MAX_RANK);
  if (ir_value_elements(val) != 1)
    return fail(s, ST_ERR_INVALID, "value '%s' must hold one element", val->name);
  *rank = (int)sh->dims[0];
  for (int i = 0; i < *rank; i++) {
    if (spec[i] < 0) return fail(s, ST_ERR_INVALID, "shape %s has a negative dim", ir_dims_str(*rank, spec));
    dims[i] = spec[i];
  }
  *dt = val->dtype;
  return ST_OK;
}

/* Range: max(ceil((limit - start) / delta), 0) elements; the three scalars
 * must be known (constants or shape arithmetic). */
static status infer_range(si *s, ir_node *n, int *rank, int64_t *dims) {
  double v[3];
  for (int i = 0; i < 3; i++) {
    const ir_value *x = n->in[i];
    if (ir_value_elements(x) != 1 || x->dtype != n->in[0]->dtype ||
        (!is_float(x->dtype) && !is_int(x->dtype)))
      return fail(s, ST_ERR_INVALID, "input %d '%s' must be a numeric scalar of input 0's dtype", i, x->name);
    if (!known_data(s, x))
      return fail(s, ST_ERR_UNSUPPORTED, "input %d '%s' is not known at compile time", i, x->name);
    v[i] = elem_get(known_data(s, x), x->dtype, 0);
  }
  if (v[2] == 0 || isnan(v[0]) || isnan(v[1]) || isnan(v[2]))
    return fail(s, ST_ERR_INVALID, "delta is 0 or a bound is NaN");
  double count = ceil((v[1] - v[0]) / v[2]);
  if (!(count < 1e15)) return fail(s, ST_ERR_LIMIT, "Range of %g elements", count);
  *rank = 1;
  dims[0] = count > 0 ? (int64_t)count : 0;
  return ST_OK;
}

/* Split without sizes: ceil(D / outputs) each, the rest in the last. */
static status split_sizes(si *s, ir_node *n) {
  if (ir_attr_find(n, "split")) return ST_OK;
  const ir_value *x = n->in[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  int a = axis_in(axis, x->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for input %s", (long long)axis, shape_str(x));
  int64_t D = x->dims[a], chunk = (D + n->nout - 1) / n->nout, sizes[IR_SPLIT_MAX_OUTPUTS];
  for (int k = 0; k < n->nout; k++) {
    int64_t left = D - chunk * k;
    sizes[k] = left < 0 ? 0 : left < chunk ? left : chunk;
  }
  if (chunk * (n->nout - 1) >= D && n->nout > 1 && D > 0)
    return fail(s, ST_ERR_INVALID, "axis %d of input %s does not split into %d outputs", a, shape_str(x),
                n->nout);
  return ir_attr_set_ints(s->g, n, "split", n->nout, sizes) ? nomem(s) : ST_OK;
}

static status infer_gather(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0], *ix = n->in[1];
  int64_t axis = ir_attr_int(n, "axis", 0);
  int a = axis_in(axis, x->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for data %s", (long long)axis, shape_str(x));
  if (ix->dtype != DT_INT64 && ix->dtype != DT_INT32)
    return fail(s, ST_ERR_INVALID, "indices '%s' have dtype %s; expected i64 or i32", ix->name,
                dtype_name(ix->dtype));
  if (x->rank - 1 + ix->rank > MAX_RANK) return fail(s, ST_ERR_LIMIT, "output rank exceeds %d", MAX_RANK);
  status st = ir_shape_check_indices(n, ix, 1, &x->dims[a], s->d);
  if (st) return st;
  *rank = 0;
  for (int i = 0; i < a; i++)
    dims[(*rank)++] = x->dims[i];
  for (int i = 0; i < ix->rank; i++)
    dims[(*rank)++] = ix->dims[i];
  for (int i = a + 1; i < x->rank; i++)
    dims[(*rank)++] = x->dims[i];
  return ST_OK;
}

/* GatherElements: y has the indices' dims; axis normalised >= 0. */
static status infer_gather_elements(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *x = n->in[0], *ix = n->in[1];
  int64_t axis = ir_attr_int(n, "axis", 0);
  int a = axis_in(axis, x->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for data %s", (long long)axis, shape_str(x));
  if (ix->dtype != DT_INT64 && ix->dtype != DT_INT32)
    return fail(s, ST_ERR_INVALID, "indices '%s' have dtype %s; expected i64 or i32", ix->name,
                dtype_name(ix->dtype));
  if (ix->rank != x->rank)
    return fail(s, ST_ERR_INVALID, "indices %s and data %s differ in rank", shape_str(ix), shape_str(x));
  for (int d = 0; d < x->rank; d++)
    if (d != a && ix->dims[d] > x->dims[d])
      return fail(s, ST_ERR_INVALID, "indices %s exceed data %s outside the axis", shape_str(ix),
                  shape_str(x));
  status st = ir_shape_check_indices(n, ix, 1, &x->dims[a], s->d);
  if (st) return st;
  if (ir_attr_set_int(s->g, n, "axis", a)) return nomem(s);
  *rank = ix->rank;
  memcpy(dims, ix->dims, sizeof(int64_t) * (size_t)ix->rank);
  return ST_OK;
}

/* PyTorch's torch.cat skips empty 1-D inputs (shape [0]) among inputs of
 * another rank, a legacy rule its ONNX exports keep (torchaudio's Emformer
 * concatenates an empty memory bank so): such inputs are dropped from the
 * node, which then concatenates the rest. Inputs of one rank are all kept. */
static void drop_legacy_empty(ir_node *n) {
  int other_rank = 0, kept = 0;
  for (int i = 0; i < n->nin; i++)
    other_rank |= n->in[i]->rank != 1;
  if (!other_rank) return;
  for (int i = 0; i < n->nin; i++)
    if (n->in[i]->rank != 1 || n->in[i]->dims[0] != 0) n->in[kept++] = n->in[i];
  n->nin = kept;
}

static status infer_concat(si *s, ir_node *n, int *rank, int64_t *dims) {
  drop_legacy_empty(n);
  const ir_value *x0 = n->in[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  int a = axis_in(axis, x0->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for input %s", (long long)axis, shape_str(x0));
  *rank = x0->rank;
  memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
  for (int i = 1; i < n->nin; i++) {
    const ir_value *x = n->in[i];
    status st = same_dtype(s, 0, i);
    if (st) return st;
    int ok = x->rank == x0->rank;
    for (int k = 0; ok && k < x->rank; k++)
      ok = k == a || x->dims[k] == x0->dims[k];
    if (!ok)
      return fail(s, ST_ERR_INVALID, "inputs %s and %s differ outside axis %d", shape_str(x0), shape_str(x),
                  a);
    if (__builtin_add_overflow(dims[a], x->dims[a], &dims[a]))
      return fail(s, ST_ERR_LIMIT, "the inputs' dims along axis %d add up past 2^63 (input %d %s)", a, i,
                  shape_str(x));
  }
  return ST_OK;
}

static status infer_softmax(si *s, ir_node *n) {
  const ir_value *x = n->in[0];
  int64_t axis = ir_attr_int(n, "axis", ir_attr_int(n, "coerce_2d", 0) ? 1 : -1);
  int a = axis_in(axis, x->rank);
  if (a < 0)
    return fail(s, ST_ERR_INVALID, "axis %lld out of range for input %s", (long long)axis, shape_str(x));
  if (ir_attr_set_int(s->g, n, "axis", a)) return nomem(s);
  return need_float(s, 0);
}

/* Reduce: axes normalised (>= 0, ascending; absent only when every axis
 * is reduced or noop); y keeps reduced dims as 1 with keepdims, else drops
 * them; argmax/argmin give i64. */
static status infer_reduce(si *s, ir_node *n, int *rank, int64_t *dims, dtype *dt) {
  const ir_value *x = n->in[0];
  int mode = ir_reduce_mode(n);
  uint32_t mask;
  if (mode < 0) return fail(s, ST_ERR_INVALID, "unknown mode '%s'", ir_attr_string(n, "mode", ""));
  if (ir_reduce_mask(n, x->rank, &mask))
    return fail(s, ST_ERR_INVALID, "axes out of range or repeated for input %s", shape_str(x));
  int is_arg = mode == OM_REDUCE_ARGMAX || mode == OM_REDUCE_ARGMIN;
  if (is_arg && (__builtin_popcount(mask) != 1 || x->dims[__builtin_ctz(mask)] < 1))
    return fail(s, ST_ERR_INVALID, "%s needs one non-empty axis of input %s",
                mode == OM_REDUCE_ARGMAX ? "argmax" : "argmin", shape_str(x));
  if (!is_float(x->dtype) && !is_int(x->dtype) && x->dtype != DT_BOOL)
    return fail(s, ST_ERR_UNSUPPORTED, "input '%s' has dtype %s", x->name,
                dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
  int64_t axes[MAX_RANK];
  int count = 0, keep = ir_attr_int(n, "keepdims", 1) != 0;
  *rank = 0;
  for (int d = 0; d < x->rank; d++) {
    int red = (int)((mask >> d) & 1u);
    if (red) axes[count++] = d;
    if (!red || keep) dims[(*rank)++] = red ? 1 : x->dims[d];
  }
  if (count > 0 && ir_attr_set_ints(s->g, n, "axes", count, axes)) return nomem(s);
  if (count == 0 && ir_attr_set_int(s->g, n, "noop", 1)) return nomem(s);
  *dt = is_arg ? DT_INT64 : x->dtype;
  return ST_OK;
}

static status infer_gemm(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *A = n->in[0], *B = n->in[1], *C = n->nin > 2 ? n->in[2] : NULL;
  status st;
  if ((st = need_rank(s, 0, 2)) || (st = need_rank(s, 1, 2)) || (st = need_float(s, 0)) ||
      (st = same_dtype(s, 0, 1)))
    return st;
  int ta = ir_attr_int(n, "transA", 0) != 0, tb = ir_attr_int(n, "transB", 0) != 0;
  int64_t M = A->dims[ta], K = A->dims[!ta], Kb = B->dims[tb], N = B->dims[!tb];
  if (K != Kb)
    return fail(s, ST_ERR_INVALID,
                "K differs: input 0 '%s' %s (transA=%d) has K %lld, input 1 '%s' %s (transB=%d) has K %lld",
                A->name, shape_str(A), ta, (long long)K, B->name, shape_str(B), tb, (long long)Kb);
  *rank = 2;
  dims[0] = M, dims[1] = N;
  int64_t bc[MAX_RANK];
  int rc;
  if (C && (C->rank > 2 || broadcast(C->rank, C->dims, 2, dims, &rc, bc) || bc[0] != M || bc[1] != N))
    return fail(s, ST_ERR_INVALID, "C %s does not broadcast to [%lld,%lld]", shape_str(C), (long long)M,
                (long long)N);
  return ST_OK;
}

/* Operand j of MatMul n seen through its permA / permB (a folded
 * Transpose): *view is the input with its dims permuted. */
static status matmul_view(si *s, ir_node *n, int j, ir_value *view) {
  const ir_value *v = n->in[j];
  int64_t perm[MAX_RANK + 1];
  int count = ir_attr_ints(n, j ? "permB" : "permA", perm, MAX_RANK + 1);
  unsigned seen = 0;
  *view = *v;
  if (count < 0) return ST_OK;
  if (count != v->rank)
    return fail(s, ST_ERR_INVALID, "%s has %d entries for input %d of rank %d", j ? "permB" : "permA", count,
                j, v->rank);
  for (int d = 0; d < v->rank; d++) {
    if (perm[d] < 0 || perm[d] >= v->rank || (seen >> perm[d]) & 1u)
      return fail(s, ST_ERR_INVALID, "%s is no permutation of 0..%d", j ? "permB" : "permA", v->rank - 1);
    seen |= 1u << perm[d];
    view->dims[d] = v->dims[perm[d]];
  }
  return ST_OK;
}

/* MatMul, as imported (2 in) and as passes make it (ops.def): permA and
 * permB permute an operand's dims, then transA and transB swap its last
 * two; bias (in[2]) has N elements in one dim, c (in[3]) broadcasts to y. */
static status infer_matmul(si *s, ir_node *n, int *rank, int64_t *dims) {
  const ir_value *Bias = n->nin > 2 ? n->in[2] : NULL, *C = n->nin > 3 ? n->in[3] : NULL;
  ir_value va, vb, *A = &va, *B = &vb;
  status st;
  if ((st = need_float(s, 0)) || (st = same_dtype(s, 0, 1)) || (st = matmul_view(s, n, 0, &va)) ||
      (st = matmul_view(s, n, 1, &vb)))
    return st;
  if (A->rank < 1 || B->rank < 1)
    return fail(s, ST_ERR_INVALID, "inputs %s and %s: MatMul of a scalar", shape_str(A), shape_str(B));
  int ta = ir_attr_int(n, "transA", 0) != 0, tb = ir_attr_int(n, "transB", 0) != 0;
  if ((ta && A->rank < 2) || (tb && B->rank < 2))
    return fail(s, ST_ERR_INVALID, "transA/transB on a rank-1 input (%s, %s)", shape_str(A), shape_str(B));
  int ka = A->rank >= 2 ? A->rank - 1 - ta : 0, kb = B->rank >= 2 ? B->rank - 2 + tb : 0;
  if (A->dims[ka] != B->dims[kb])
    return fail(s, ST_ERR_INVALID,
                "K differs: input 0 '%s' %s has %lld in dim %d, input 1 '%s' %s has %lld in dim %d", A->name,
                shape_str(A), (long long)A->dims[ka], ka, B->name, shape_str(B), (long long)B->dims[kb], kb);
  int ba = A->rank >= 2 ? A->rank - 2 : 0, bb = B->rank >= 2 ? B->rank - 2 : 0;
  if (broadcast(ba, A->dims, bb, B->dims, rank, dims))
    return fail(s, ST_ERR_INVALID,
                "batch dims do not broadcast: input 0 '%s' %s (batch %s), input 1 '%s' %s (batch %s)",
                A->name, shape_str(A), ir_dims_str(ba, A->dims), B->name, shape_str(B),
                ir_dims_str(bb, B->dims));
  if (A->rank >= 2) dims[(*rank)++] = A->dims[A->rank - 2 + ta];
  if (B->rank >= 2) dims[(*rank)++] = B->dims[B->rank - 1 - tb];
  int64_t N = B->rank >= 2 ? B->dims[B->rank - 1 - tb] : 1, bc[MAX_RANK];
  int rc;
  if (Bias && (Bias->rank != 1 || Bias->dims[0] != N))
    return fail(s, ST_ERR_INVALID, "bias '%s' %s is not [%lld]", Bias->name, shape_str(Bias), (long long)N);
  if (C && (C->rank > *rank || broadcast(C->rank, C->dims, *rank, dims, &rc, bc) ||
            memcmp(bc, dims, sizeof(int64_t) * (size_t)*rank) != 0))
    return fail(s, ST_ERR_INVALID, "c '%s' %s does not broadcast to %s", C->name, shape_str(C),
                ir_dims_str(*rank, dims));
  return ST_OK;
}

/* ---- the walk ---- */

/* Reduce axes, Expand shape, Split sizes computed by shape arithmetic
 * (in[1], ops.def): the known value becomes the attribute, in[1] goes. */
static status resolve_list_input(si *s, ir_node *n) {
  static const struct {
    ir_op op;
    const char *attr;
  } lists[] = {{IR_OP_REDUCE, "axes"}, {IR_OP_EXPAND, "shape"}, {IR_OP_SPLIT, "split"}};
  const char *name = NULL;
  for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
    if (lists[i].op == n->op) name = lists[i].attr;
  if (!name || n->nin < 2 || !n->in[1]) return ST_OK;
  const ir_value *v = n->in[1];
  const void *data = known_data(s, v);
  int64_t count = ir_value_elements(v), buf[IR_SPLIT_MAX_OUTPUTS];
  if ((v->dtype != DT_INT64 && v->dtype != DT_INT32) || v->rank > 1 || count > IR_SPLIT_MAX_OUTPUTS)
    return fail(s, ST_ERR_INVALID, "input 1 '%s' (%s) must be an i64 or i32 list of at most %d values",
                v->name, name, IR_SPLIT_MAX_OUTPUTS);
  if (!data)
    return fail(s, ST_ERR_UNSUPPORTED, "input 1 '%s' (%s) is not known at compile time", v->name, name);
  for (int64_t k = 0; k < count; k++)
    buf[k] = (int64_t)elem_get(data, v->dtype, k);
  if (n->op == IR_OP_REDUCE) {
    int noop = count == 0 && ir_attr_int(n, "noop_with_empty_axes", 0);
    if (ir_attr_set_int(s->g, n, "noop", noop)) return nomem(s);
    if (count == 0) {
      n->nin = 1;
      return ST_OK;
    }
  }
  if (ir_attr_set_ints(s->g, n, name, (int)count, buf)) return nomem(s);
  n->nin = 1;
  return ST_OK;
}

static status infer_node(si *s, ir_node *n) {
  ir_value *y = n->out[0];
  int rank = -1;
  int64_t dims[MAX_RANK + 2];
  dtype dt = n->in[0]->dtype;
  status st = ST_OK;
  switch (n->op) {
  case IR_OP_CONV: st = ir_conv_infer(s->g, n, s->d, &rank, dims); break; /* ir/conv.h: 2-D or 3-D */
  case IR_OP_MAXPOOL:
  case IR_OP_AVGPOOL:
  case IR_OP_GLOBALAVGPOOL:
  case IR_OP_GLOBALMAXPOOL:
  case IR_OP_LPPOOL:
  case IR_OP_GLOBALLPPOOL:
    st = ir_pool_infer(s->g, n, s->d, &rank, dims); /* ir/pool.h: 1 to 3 spatial dims */
    break;
  case IR_OP_RESIZE:
    rank = n->in[0]->rank;
    st = ir_resize_infer(s->g, n, s->d, dims); /* ir/resize.h */
    break;
  case IR_OP_BATCHNORM:
    if ((st = need_float(s, 0))) return st;
    if (n->in[0]->rank < 2) return fail(s, ST_ERR_INVALID, "input %s has rank < 2", shape_str(n->in[0]));
    for (int i = 1; i < 5; i++)
      if (n->in[i]->rank != 1 || n->in[i]->dims[0] != n->in[0]->dims[1])
        return fail(s, ST_ERR_INVALID, "input %d '%s' has shape %s; expected [%lld] for input %s", i,
                    n->in[i]->name, shape_str(n->in[i]), (long long)n->in[0]->dims[1], shape_str(n->in[0]));
    __attribute__((fallthrough)); /* same shape as the input */
  case IR_OP_IDENTITY:
  case IR_OP_TRANSDATA:
    rank = n->in[0]->rank;
    memcpy(dims, n->in[0]->dims, sizeof(int64_t) * MAX_RANK);
    if (n->op == IR_OP_TRANSDATA && y->dtype != DT_UNDEFINED) dt = y->dtype;
    if (n->op == IR_OP_TRANSDATA && ir_attr_int(n, "channels_last", 0) && rank == 4) { /* NHWC <-> NC1HWC0 */
      const int64_t *x = n->in[0]->dims;
      int to_nchw = n->in[0]->layout == LAYOUT_ND;
      int64_t p[4] = {x[0], to_nchw ? x[3] : x[2], to_nchw ? x[1] : x[3], to_nchw ? x[2] : x[1]};
      memcpy(dims, p, sizeof p);
    }
    break;
  case IR_OP_FLATTEN: st = infer_flatten(s, n, &rank, dims); break;
  case IR_OP_RESHAPE: st = infer_reshape(s, n, &rank, dims); break;
  case IR_OP_SQUEEZE: st = infer_squeeze(s, n, &rank, dims); break;
  case IR_OP_UNSQUEEZE: st = infer_unsqueeze(s, n, &rank, dims); break;
  case IR_OP_SHAPE: st = infer_shape_op(s, n, &rank, dims), dt = DT_INT64; break;
  case IR_OP_SIZE: rank = 0, dt = DT_INT64; break;
  case IR_OP_CONSTANTOFSHAPE: st = infer_constantofshape(s, n, &rank, dims, &dt); break;
  case IR_OP_RANGE: st = infer_range(s, n, &rank, dims); break;
  case IR_OP_GATHER: st = infer_gather(s, n, &rank, dims); break;
  case IR_OP_GATHERELEMENTS: st = infer_gather_elements(s, n, &rank, dims); break;
  case IR_OP_PAD: {
    const ir_value *x = n->in[0];
    int64_t pads[2 * MAX_RANK + 1];
    if (ir_attr_ints(n, "pads", pads, 2 * MAX_RANK + 1) != 2 * x->rank)
      return fail(s, ST_ERR_INVALID, "pads must have 2 x %d values for input %s", x->rank, shape_str(x));
    rank = x->rank;
    for (int d = 0; d < rank; d++) {
      dims[d] = x->dims[d] + pads[d] + pads[rank + d];
      if (dims[d] < 0 || pads[d] < INT32_MIN || pads[d] > INT32_MAX)
        return fail(s, ST_ERR_INVALID, "pads of dim %d do not fit input %s", d, shape_str(x));
    }
    break;
  }
  case IR_OP_CONCAT: st = infer_concat(s, n, &rank, dims); break;
  case IR_OP_CAST:
    if (n->nin > 1) { /* CastLike: the like input's dtype is known now (ops.def) */
      if (n->in[1] && ir_attr_set_int(s->g, n, "to", n->in[1]->dtype)) return nomem(s);
      n->nin = 1;
    }
    dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
    if (dtype_bits(dt) == 0 || !dtype_name(dt))
      return fail(s, ST_ERR_UNSUPPORTED, "cast to dtype %lld", (long long)ir_attr_int(n, "to", DT_UNDEFINED));
    if (dtype_is_storage(dt) || dtype_is_storage(n->in[0]->dtype))
      n->op = IR_OP_CONVERT; /* ops.def: only Convert computes on storage dtypes */
    /* fall through */
  case IR_OP_CONVERT:
    dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
    if (dtype_bits(dt) == 0 || !dtype_name(dt) || dtype_bits(n->in[0]->dtype) == 0)
      return fail(s, ST_ERR_UNSUPPORTED, "convert from dtype %d to dtype %lld", (int)n->in[0]->dtype,
                  (long long)ir_attr_int(n, "to", DT_UNDEFINED));
    rank = n->in[0]->rank;
    memcpy(dims, n->in[0]->dims, sizeof(int64_t) * MAX_RANK);
    break;
  case IR_OP_AIPP: { /* the image the model's first layer takes: attr dims [N, C, H, W] */
    const ir_attr *a = ir_attr_find(n, "dims");
    if (!a || a->kind != IR_ATTR_INTS || a->n != 4 || n->in[0]->dtype != DT_UINT8 ||
        n->in[1]->dtype != DT_UINT8)
      return fail(s, ST_ERR_INVALID, "needs uint8 src and params and attr dims (4 ints)");
    for (int i = 0; i < 4; i++)
      if (a->ints[i] < 1) return fail(s, ST_ERR_INVALID, "dims[%d] = %lld", i, (long long)a->ints[i]);
    rank = 4;
    memcpy(dims, a->ints, 4 * sizeof(int64_t));
    dt = y->dtype == DT_FLOAT16 ? DT_FLOAT16 : DT_FLOAT32;
    break;
  }
  case IR_OP_BITCAST:
    dt = (dtype)ir_attr_int(n, "to", DT_UNDEFINED);
    if (dtype_size(dt) == 0 || !dtype_name(dt))
      return fail(s, ST_ERR_UNSUPPORTED, "bit cast to dtype %lld",
                  (long long)ir_attr_int(n, "to", DT_UNDEFINED));
    if (dtype_size(dt) != dtype_size(n->in[0]->dtype))
      return fail(s, ST_ERR_INVALID, "bit cast from %s to %s: the dtypes differ in size",
                  dtype_name(n->in[0]->dtype), dtype_name(dt));
    rank = n->in[0]->rank;
    memcpy(dims, n->in[0]->dims, sizeof(int64_t) * MAX_RANK);
    break;
  case IR_OP_SOFTMAX:
    st = infer_softmax(s, n);
    rank = n->in[0]->rank;
    memcpy(dims, n->in[0]->dims, sizeof(int64_t) * MAX_RANK);
    break;
  case IR_OP_GEMM: st = infer_gemm(s, n, &rank, dims); break;
  case IR_OP_MATMUL: st = infer_matmul(s, n, &rank, dims); break;
  case IR_OP_VECPROG: return infer_vecprog(s, n);
  case IR_OP_QUANTIZE:
  case IR_OP_DEQUANTIZE: st = infer_qdq(s, n, &rank, dims, &dt); break;
  case IR_OP_QCONV: {
    char err[256];
    if (ir_qconv_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(s, ST_ERR_INVALID, "%s", err);
    break;
  }
  case IR_OP_QELTWISE: {
    char err[256];
    if (ir_qeltwise_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(s, ST_ERR_INVALID, "%s", err);
    break;
  }
  case IR_OP_QMATMUL: {
    char err[256];
    if (ir_qmatmul_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(s, ST_ERR_INVALID, "%s", err);
    break;
  }
  case IR_OP_QLUT: {
    char err[256];
    if (ir_qlut_infer(n, &rank, dims, &dt, err, sizeof err)) return fail(s, ST_ERR_INVALID, "%s", err);
    break;
  }
  case IR_OP_DYNQUANT: /* y u8 of x's dims, scale f32 [], zp u8 [] */
    if ((n->in[0]->dtype != DT_FLOAT32 && n->in[0]->dtype != DT_FLOAT16) || n->nout != 3)
      return fail(s, ST_ERR_INVALID, "expected x f32 or f16 and 3 outputs, got %s and %d",
                  dtype_name(n->in[0]->dtype), n->nout);
    n->out[1]->dtype = DT_FLOAT32, n->out[2]->dtype = DT_UINT8;
    ir_value_set_shape(n->out[1], 0, dims);
    ir_value_set_shape(n->out[2], 0, dims);
    dt = DT_UINT8, rank = n->in[0]->rank;
    memcpy(dims, n->in[0]->dims, sizeof(int64_t) * (size_t)rank);
    break;
  case IR_OP_LAYERNORM:
  case IR_OP_ATTENTION:
  case IR_OP_RECURRENCE: return ir_shape_infer_fused(s->g, n, s->d); /* ir/shape_fused.c */
  case IR_OP_TOPK:
  case IR_OP_SCATTERELEMENTS:
  case IR_OP_SCATTERND:
  case IR_OP_CUMSUM:
  case IR_OP_CUMPROD:
  case IR_OP_GATHERND:
  case IR_OP_ONEHOT:
  case IR_OP_TFIDF:
  case IR_OP_TENSORSCATTER: return ir_shape_infer_index(s->g, n, s->d); /* ir/shape_index.c */
  case IR_OP_REDUCE: st = infer_reduce(s, n, &rank, dims, &dt); break;
  case IR_OP_TRANSPOSE:
  case IR_OP_SLICE:
  case IR_OP_EXPAND:
  case IR_OP_TILE:
  case IR_OP_DEPTHTOSPACE:
  case IR_OP_SPACETODEPTH:
  case IR_OP_SPLIT: {
    if (n->op == IR_OP_SPLIT && (st = split_sizes(s, n))) return st;
    ir_view v;
    char err[256];
    for (int k = n->nout - 1; k >= 0; k--) { /* out[0] last: the common path below sets it */
      if (ir_view_build(n, k, n->in[0]->rank, n->in[0]->dims, &v, err, sizeof err))
        return fail(s, ST_ERR_INVALID, "input %s: %s", shape_str(n->in[0]), err);
      if (k > 0) {
        n->out[k]->dtype = dt;
        ir_value_set_shape(n->out[k], v.out_rank, v.out_dims);
      }
    }
    rank = v.out_rank;
    memcpy(dims, v.out_dims, sizeof v.out_dims);
    break;
  }
  default:
    if (ir_ops[n->op].fusion != IR_FUSE_ELEMWISE && ir_ops[n->op].fusion != IR_FUSE_BROADCAST)
      return fail(s, ST_ERR_INVALID, "bad op");
    st = infer_elementwise(s, n, &rank, dims, &dt);
    break;
  }
  if (st) return st;
  if (rank > MAX_RANK) return fail(s, ST_ERR_LIMIT, "output rank %d exceeds %d", rank, MAX_RANK);
  y->dtype = dt;
  ir_value_set_shape(y, rank, dims);
  if (ir_value_bytes(y) < 0)
    return fail(s, ST_ERR_LIMIT, "output '%s' of shape %s is too large", y->name, shape_str(y));
  return ST_OK;
}

status ir_shape_infer_node(ir_graph *g, ir_node *n, const void *const *known, diag *d) {
  si ss = {g, d, n, known}, *s = &ss;
  for (int j = 0; j < n->nin; j++) {
    const ir_value *v = n->in[j];
    if (!v && (j < ir_ops[n->op].min_in || n->op == IR_OP_CONCAT))
      return fail(s, ST_ERR_INVALID, "required input %d is missing", j);
    if (v && (v->rank < 0 || ir_value_bytes(v) < 0))
      return fail(s, ST_ERR_INVALID, "input %d '%s' has an unknown shape or dtype", j, v->name);
  }
  if (n->nout < 1 || !n->out[0] ||
      (n->nout != 1 && n->op != IR_OP_VECPROG && n->op != IR_OP_SPLIT && n->op != IR_OP_TOPK &&
       n->op != IR_OP_DYNQUANT && !ir_fused_op(n->op) &&
       !ir_count_is_producer(n))) /* the fused ops count their own outputs */
    return fail(s, ST_ERR_INVALID, "%d outputs, expected 1", n->nout);
  if (ir_count_is_producer(n)) return ir_count_infer(g, n, d); /* ir/count.c */
  status st = resolve_list_input(s, n);
  if (!st) st = infer_node(s, n);
  return st ? st : ir_count_propagate(n, d);
}

/* Inference may normalise n's attributes and drop list inputs; those are
 * put back unless n folds, so that the shape_infer pass later starts from
 * exactly the node the caller made (normalisation is not always idempotent:
 * Resize's sizes become float scales). */
status ir_shape_try(ir_graph *g, ir_node *n, int64_t fold_max_bytes, diag *d) {
  if (n->dead) return ST_OK;
  for (int j = 0; j < n->nin; j++)
    if (n->in[j] && (n->in[j]->rank < 0 || ir_value_bytes(n->in[j]) < 0)) return ST_OK; /* not yet */
  diag local;
  diag_init(&local);
  arena scratch;
  arena_init(&scratch, 0);
  int nattrs = n->nattrs, nin = n->nin;
  ir_attr *attrs = arena_array(&scratch, (size_t)nattrs + 1, sizeof *attrs);
  ir_value *outs = arena_array(&scratch, (size_t)n->nout + 1, sizeof *outs);
  ir_value **ins = arena_array(&scratch, (size_t)nin + 1, sizeof *ins);
  status st = attrs && outs && ins ? ST_OK : diag_set(d, ST_ERR_NOMEM, "out of memory inferring shapes");
  if (st) {
    arena_free(&scratch);
    return st;
  }
  if (nattrs) memcpy(attrs, n->attrs, (size_t)nattrs * sizeof *attrs);
  if (nin) memcpy(ins, n->in, (size_t)nin * sizeof *ins);
  for (int k = 0; k < n->nout; k++)
    if (n->out[k]) outs[k] = *n->out[k];
  int ok = ir_shape_infer_node(g, n, NULL, &local) == ST_OK;
  for (int k = 0; ok && k < n->nout; k++) /* every output fully known, or none */
    ok = !n->out[k] || ir_value_bytes(n->out[k]) >= 0;
  if (ok)
    st = ir_fold_node(g, n, fold_max_bytes, &scratch, &local) == ST_ERR_NOMEM
             ? diag_set(d, ST_ERR_NOMEM, "%s", local.msg)
             : ST_OK;
  if (!n->dead) { /* evaluation errors are the shape_infer pass's to report */
    if (nattrs) memcpy(n->attrs, attrs, (size_t)nattrs * sizeof *attrs);
    n->nattrs = nattrs;
    n->nin = nin;
    if (nin) memcpy(n->in, ins, (size_t)nin * sizeof *ins);
    for (int k = 0; !ok && k < n->nout; k++)
      if (n->out[k]) {
        n->out[k]->dtype = outs[k].dtype;
        n->out[k]->rank = outs[k].rank;
        memcpy(n->out[k]->dims, outs[k].dims, sizeof outs[k].dims);
      }
  }
  arena_free(&scratch);
  return st;
}
