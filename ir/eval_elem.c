/* eval_elem.c - the reference definition of the elementwise ops (see
 * eval_elem.h): each op is one formula, straight from the ONNX operator
 * documentation, applied per output element with numpy broadcasting.
 *
 * Floats are computed in double from the input values and rounded once to
 * the output dtype (so these results are the accurate ones the vector
 * programs are compared against). Integers are computed in int64 and wrapped
 * to the output width; integer division or Mod by zero is an error (ONNX
 * leaves it undefined, and constant folding should not invent a value).
 * Attributes are read once per node into `params`, with the ONNX defaults
 * (the frontend makes them explicit, hand-written IR may not).
 */
#include "ir/eval_elem.h"

#include <math.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval.h"

typedef struct params {
  double alpha, beta, gamma, lo, hi;
  int64_t fmod, detect_pos, detect_neg, shift_left, approx_tanh;
} params;

typedef struct elem {
  double f;  /* the value as a double */
  int64_t i; /* the value as an integer (floats truncated) */
} elem;

int ir_eval_is_elementwise(ir_op op) {
  ir_fusion f = ir_ops[op].fusion;
  return (f == IR_FUSE_ELEMWISE || f == IR_FUSE_BROADCAST) && op != IR_OP_BATCHNORM && op != IR_OP_CAST &&
         op != IR_OP_VECPROG && op != IR_OP_QUANTIZE && op != IR_OP_DEQUANTIZE;
}

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

static int bit_width(int dt) { return (int)dtype_size(dt) * 8; }

static double nan_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double nan_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* Float result of op on x[0..nin) (the values as doubles). */
static double float_op(ir_op op, const params *p, const elem *x, int nin) {
  double v = x[0].f, w = nin > 1 ? x[1].f : 0;
  switch (op) {
  case IR_OP_RELU: return v > 0 ? v : 0;
  case IR_OP_SIGMOID: return 1.0 / (1.0 + exp(-v));
  case IR_OP_CLIP: {
    double lo = nin == 3 ? x[1].f : p->lo, hi = nin == 3 ? x[2].f : p->hi;
    return nan_min(nan_max(v, lo), hi);
  }
  case IR_OP_IDENTITY: return v;
  case IR_OP_NEG: return -v;
  case IR_OP_ABS: return fabs(v);
  case IR_OP_SIGN: return v > 0 ? 1 : v < 0 ? -1 : v;
  case IR_OP_EXP: return exp(v);
  case IR_OP_LOG: return log(v);
  case IR_OP_SQRT: return sqrt(v);
  case IR_OP_RECIPROCAL: return 1.0 / v;
  case IR_OP_FLOOR: return floor(v);
  case IR_OP_CEIL: return ceil(v);
  case IR_OP_ROUND: return nearbyint(v);
  case IR_OP_SIN: return sin(v);
  case IR_OP_COS: return cos(v);
  case IR_OP_TAN: return tan(v);
  case IR_OP_ASIN: return asin(v);
  case IR_OP_ACOS: return acos(v);
  case IR_OP_ATAN: return atan(v);
  case IR_OP_SINH: return sinh(v);
  case IR_OP_COSH: return cosh(v);
  case IR_OP_ASINH: return asinh(v);
  case IR_OP_ACOSH: return acosh(v);
  case IR_OP_ATANH: return atanh(v);
  case IR_OP_ERF: return erf(v);
  case IR_OP_TANH: return tanh(v);
  case IR_OP_HARDSIGMOID: return nan_max(0, nan_min(1, p->alpha * v + p->beta));
  case IR_OP_HARDSWISH: return v * nan_max(0, nan_min(1, v / 6 + 0.5));
  case IR_OP_LEAKYRELU: return v < 0 ? p->alpha * v : v;
  case IR_OP_ELU: return v < 0 ? p->alpha * (exp(v) - 1) : v;
  case IR_OP_SELU: return v <= 0 ? p->gamma * (p->alpha * exp(v) - p->alpha) : p->gamma * v;
  case IR_OP_CELU: return nan_max(0, v) + nan_min(0, p->alpha * (exp(v / p->alpha) - 1));
  case IR_OP_THRESHOLDEDRELU: return v > p->alpha ? v : 0;
  case IR_OP_SOFTPLUS: return softplus(v);
  case IR_OP_SOFTSIGN: return v / (1 + fabs(v));
  case IR_OP_MISH: return v * tanh(softplus(v));
  case IR_OP_GELU:
    if (p->approx_tanh) return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1 + erf(v / sqrt(2)));
  case IR_OP_ADD: return v + w;
  case IR_OP_SUB: return v - w;
  case IR_OP_MUL: return v * w;
  case IR_OP_DIV: return v / w;
  case IR_OP_PRELU: return v < 0 ? w * v : v;
  case IR_OP_POW: return pow(v, w);
  case IR_OP_MOD: {
    double r = fmod(v, w);
    return !p->fmod && r != 0 && (r < 0) != (w < 0) ? r + w : r;
  }
  case IR_OP_WHERE: return x[0].i ? x[1].f : x[2].f;
  default: break;
  }
  /* variadic */
  double acc = v;
  for (int i = 1; i < nin; i++) {
    if (op == IR_OP_MAX)
      acc = nan_max(acc, x[i].f);
    else if (op == IR_OP_MIN)
      acc = nan_min(acc, x[i].f);
    else
      acc += x[i].f; /* Sum, Mean */
  }
  return op == IR_OP_MEAN ? acc / nin : acc;
}

/* Integer (or bool) result of op; *div0 set on an integer division by zero. */
/* u64 values are held as their bits: where the order matters (division, Max, Min), as unsigned. */
static int64_t u64_op(ir_op op, const elem *x, int nin, int *div0) {
  uint64_t acc = (uint64_t)x[0].i;
  for (int i = 1; i < nin; i++) {
    uint64_t w = (uint64_t)x[i].i;
    if (op == IR_OP_MAX)
      acc = w > acc ? w : acc;
    else if (op == IR_OP_MIN)
      acc = w < acc ? w : acc;
    else if (w == 0)
      return *div0 = 1, 0;
    else
      acc = op == IR_OP_DIV ? acc / w : acc % w;
  }
  return (int64_t)acc;
}

static int64_t int_op(ir_op op, const params *p, int dt, const elem *x, int nin, int *div0) {
  int64_t v = x[0].i, w = nin > 1 ? x[1].i : 0;
  uint64_t uv = (uint64_t)v, uw = (uint64_t)w;
  if (dt == DT_UINT64 && (op == IR_OP_DIV || op == IR_OP_MOD || op == IR_OP_MAX || op == IR_OP_MIN))
    return u64_op(op, x, nin, div0);
  switch (op) {
  case IR_OP_RELU: return v > 0 ? v : 0;
  case IR_OP_CLIP: {
    if (nin == 3) return v < x[1].i ? (x[1].i > x[2].i ? x[2].i : x[1].i) : v > x[2].i ? x[2].i : v;
    double c = (double)v < p->lo ? ceil(p->lo) : (double)v > p->hi ? floor(p->hi) : (double)v;
    return c == (double)v ? v : elem_trunc_i64(c);
  }
  case IR_OP_IDENTITY: return v;
  case IR_OP_NEG: return (int64_t)(0 - uv);
  case IR_OP_ABS: return v < 0 ? (int64_t)(0 - uv) : v;
  case IR_OP_SIGN: return v > 0 ? 1 : v < 0 ? -1 : 0;
  case IR_OP_NOT: return !v;
  case IR_OP_BITWISENOT: return ~v;
  case IR_OP_ADD: return (int64_t)(uv + uw);
  case IR_OP_SUB: return (int64_t)(uv - uw);
  case IR_OP_MUL: return (int64_t)(uv * uw);
  case IR_OP_PRELU: return v < 0 ? (int64_t)(uv * uw) : v;
  case IR_OP_DIV:
  case IR_OP_MOD: {
    if (w == 0) return *div0 = 1, 0;
    if (w == -1) return op == IR_OP_DIV ? (int64_t)(0 - uv) : 0;
    if (op == IR_OP_DIV) return v / w;
    int64_t r = v % w;
    return !p->fmod && r != 0 && (r < 0) != (w < 0) ? r + w : r;
  }
  case IR_OP_POW: return (int64_t)pow((double)v, x[1].f);
  case IR_OP_BITSHIFT:
    if (uw >= (uint64_t)bit_width(dt)) return 0;
    return p->shift_left ? (int64_t)(uv << uw) : (int64_t)(uv >> uw);
  case IR_OP_BITWISEAND: return v & w;
  case IR_OP_BITWISEOR: return v | w;
  case IR_OP_BITWISEXOR: return v ^ w;
  case IR_OP_AND: return v && w;
  case IR_OP_OR: return v || w;
  case IR_OP_XOR: return (v != 0) != (w != 0);
  case IR_OP_WHERE: return x[0].i ? x[1].i : x[2].i;
  default: break;
  }
  int64_t acc = v; /* Max, Min, Sum */
  for (int i = 1; i < nin; i++) {
    if (op == IR_OP_MAX)
      acc = x[i].i > acc ? x[i].i : acc;
    else if (op == IR_OP_MIN)
      acc = x[i].i < acc ? x[i].i : acc;
    else
      acc = (int64_t)((uint64_t)acc + (uint64_t)x[i].i);
  }
  return acc;
}

/* Bool results: compares, IsNaN, IsInf. -1 when op is none of them. */
static int bool_op(ir_op op, const params *p, int fl, const elem *x) {
  double a = x[0].f, b = x[1].f;
  int64_t i = x[0].i, j = x[1].i;
  switch (op) {
  case IR_OP_EQUAL: return fl ? a == b : i == j;
  case IR_OP_LESS: return fl ? a < b : i < j;
  case IR_OP_LESSOREQUAL: return fl ? a <= b : i <= j;
  case IR_OP_GREATER: return fl ? a > b : i > j;
  case IR_OP_GREATEROREQUAL: return fl ? a >= b : i >= j;
  case IR_OP_ISNAN: return isnan(a) != 0;
  case IR_OP_ISINF: return isinf(a) && ((a > 0 && p->detect_pos) || (a < 0 && p->detect_neg));
  default: return -1;
  }
}

static void read_params(const ir_node *n, params *p) {
  double alpha = 0.01;
  switch (n->op) {
  case IR_OP_HARDSIGMOID: alpha = 0.2; break;
  case IR_OP_ELU:
  case IR_OP_CELU:
  case IR_OP_THRESHOLDEDRELU: alpha = 1.0; break;
  case IR_OP_SELU: alpha = 1.67326319217681884765625; break;
  default: break;
  }
  p->alpha = ir_attr_float(n, "alpha", alpha);
  p->beta = ir_attr_float(n, "beta", 0.5);
  p->gamma = ir_attr_float(n, "gamma", 1.05070102214813232421875);
  p->lo = ir_attr_float(n, "min", -INFINITY);
  p->hi = ir_attr_float(n, "max", INFINITY);
  p->fmod = ir_attr_int(n, "fmod", 0);
  p->detect_pos = ir_attr_int(n, "detect_positive", 1);
  p->detect_neg = ir_attr_int(n, "detect_negative", 1);
  p->shift_left = strcmp(ir_attr_string(n, "direction", "LEFT"), "LEFT") == 0;
  p->approx_tanh = strcmp(ir_attr_string(n, "approximate", "none"), "tanh") == 0;
}

status ir_eval_elementwise(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a,
                           diag *d) {
  const ir_value *y = n->out[0];
  int nin = n->nin, rank = y->rank;
  if (nin < 1) return ir_node_error(d, ST_ERR_INVALID, n, "no inputs");
  int64_t *strides = arena_array(a, (size_t)nin * MAX_RANK, sizeof *strides);
  int64_t *off = arena_array(a, (size_t)nin, sizeof *off);
  elem *x = arena_array(a, (size_t)nin, sizeof *x);
  int64_t bytes = ir_value_bytes(y);
  void *out = arena_alloc_aligned(a, bytes > 0 ? (size_t)bytes : 1, 64);
  if (!strides || !off || !x || !out) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  for (int i = 0; i < nin; i++) {
    const ir_value *v = n->in[i];
    int shift = rank - v->rank;
    int64_t s = 1;
    if (shift < 0)
      return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' has a higher rank than the output", v->name);
    for (int k = rank - 1; k >= 0; k--) {
      int64_t dim = k >= shift ? v->dims[k - shift] : 1;
      if (dim != 1 && dim != y->dims[k])
        return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' does not broadcast to output '%s'", v->name,
                             y->name);
      strides[i * MAX_RANK + k] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  params p;
  read_params(n, &p);
  /* Where and the compares decide float-ness by their value inputs. */
  int fl = is_float(n->in[n->op == IR_OP_WHERE ? 1 : 0]->dtype);
  int out_fl = is_float(y->dtype);
  int64_t idx[MAX_RANK] = {0}, count = ir_value_elements(y);
  for (int64_t e = 0; e < count; e++) {
    for (int i = 0; i < nin; i++) {
      int dt = n->in[i]->dtype;
      if (is_float(dt)) {
        x[i].f = elem_get(inputs[i], (dtype)dt, off[i]);
        x[i].i = elem_trunc_i64(x[i].f);
      } else {
        x[i].i = elem_get_int(inputs[i], dt, off[i]);
        x[i].f = dt == DT_UINT64 ? (double)(uint64_t)x[i].i : (double)x[i].i;
      }
    }
    elem u[2]; /* u64 compares: flipping the top bit orders the bits as unsigned numbers */
    if (n->in[0]->dtype == DT_UINT64 && nin == 2)
      for (int i = 0; i < 2; i++)
        u[i] = x[i], u[i].i = (int64_t)((uint64_t)x[i].i ^ (1ull << 63));
    int b = bool_op(n->op, &p, fl, n->in[0]->dtype == DT_UINT64 && nin == 2 ? u : x);
    if (b >= 0) {
      elem_put_int(out, DT_BOOL, e, b);
    } else if (out_fl) {
      elem_put(out, y->dtype, e, float_op(n->op, &p, x, nin));
    } else {
      int div0 = 0;
      int64_t r = int_op(n->op, &p, y->dtype, x, nin, &div0);
      if (div0) return ir_node_error(d, ST_ERR_INVALID, n, "integer division by zero");
      elem_put_int(out, y->dtype, e, r);
    }
    for (int k = rank - 1; k >= 0; k--) {
      idx[k]++;
      for (int i = 0; i < nin; i++)
        off[i] += strides[i * MAX_RANK + k];
      if (idx[k] < y->dims[k]) break;
      for (int i = 0; i < nin; i++)
        off[i] -= strides[i * MAX_RANK + k] * y->dims[k];
      idx[k] = 0;
    }
  }
  outputs_out[0] = out;
  return ST_OK;
}
