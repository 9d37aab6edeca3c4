/* pool.c - the window pools over 1 to 3 spatial dims (pool.h): attribute
 * reading, shape inference and the reference evaluator.
 *
 * The window rules are ONNX's: output extent floor((D + pads - extent) /
 * stride) + 1, or with ceil_mode the ceiling, dropping a last window that
 * would start past the input and the begin pad; SAME_UPPER / SAME_LOWER
 * split the padding that keeps ceil(D / stride) outputs with the odd pixel
 * at the end / the start. The evaluator computes in double: max over the
 * taps inside x, average over those taps (or, with count_include_pad, over
 * the taps inside the padded extent), Lp as (sum |x|^p)^(1/p).
 */
#include "ir/pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval.h"

int ir_is_pool(ir_op op) {
  return op == IR_OP_MAXPOOL || op == IR_OP_AVGPOOL || op == IR_OP_LPPOOL || op == IR_OP_GLOBALMAXPOOL ||
         op == IR_OP_GLOBALAVGPOOL || op == IR_OP_GLOBALLPPOOL;
}

static int pool_mode(ir_op op) {
  if (op == IR_OP_MAXPOOL || op == IR_OP_GLOBALMAXPOOL) return 0;
  if (op == IR_OP_AVGPOOL || op == IR_OP_GLOBALAVGPOOL) return 1;
  return 2;
}

int ir_pool_read(const ir_node *n, int rank, const int64_t *xdims, ir_pool *p, char *err, size_t cap) {
  memset(p, 0, sizeof *p);
  p->r = rank - 2;
  p->mode = pool_mode(n->op);
  p->global = n->op == IR_OP_GLOBALMAXPOOL || n->op == IR_OP_GLOBALAVGPOOL || n->op == IR_OP_GLOBALLPPOOL;
  p->ceil_mode = ir_attr_int(n, "ceil_mode", 0) != 0;
  p->include_pad = p->mode == 1 && ir_attr_int(n, "count_include_pad", 0) != 0;
  p->p = p->mode == 2 ? ir_attr_int(n, "p", 2) : 0;
  if (p->r < 1 || p->r > IR_POOL_MAX_SPATIAL) {
    snprintf(err, cap, "input of rank %d: pools take 1 to 3 spatial dims (rank 3 to 5)", rank);
    return -1;
  }
  if (p->mode == 2 && p->p < 1) {
    snprintf(err, cap, "p = %lld must be >= 1", (long long)p->p);
    return -1;
  }
  int r = p->r;
  for (int j = 0; j < r; j++)
    p->k[j] = p->global ? xdims[2 + j] : 0, p->s[j] = 1, p->dl[j] = 1;
  if (p->global) return 0;
  int64_t pads[2 * IR_POOL_MAX_SPATIAL] = {0};
  int nk = ir_attr_ints(n, "kernel_shape", p->k, IR_POOL_MAX_SPATIAL + 1);
  int ns = ir_attr_ints(n, "strides", p->s, IR_POOL_MAX_SPATIAL + 1);
  int nd = ir_attr_ints(n, "dilations", p->dl, IR_POOL_MAX_SPATIAL + 1);
  int np = ir_attr_ints(n, "pads", pads, 2 * IR_POOL_MAX_SPATIAL + 1);
  if (nk != r || (ns >= 0 && ns != r) || (nd >= 0 && nd != r) || (np >= 0 && np != 2 * r)) {
    snprintf(err, cap,
             "kernel_shape, strides, dilations and pads must have %d, %d, %d and %d values for input %s", r,
             r, r, 2 * r, ir_dims_str(rank, xdims));
    return -1;
  }
  for (int j = 0; j < r; j++)
    p->pb[j] = pads[j], p->pe[j] = pads[r + j];
  const int64_t attr_limit = ((int64_t)1 << 31) - 1;
  for (int j = 0; j < r; j++)
    if (p->k[j] < 1 || p->s[j] < 1 || p->dl[j] < 1 || p->k[j] > attr_limit || p->s[j] > attr_limit ||
        p->dl[j] > attr_limit || p->pb[j] < 0 || p->pe[j] < 0 || p->pb[j] > attr_limit ||
        p->pe[j] > attr_limit) {
      snprintf(err, cap, "kernel %s, strides %s and dilations %s must be in 1..%lld and pads %s in 0..%lld",
               ir_dims_str(r, p->k), ir_dims_str(r, p->s), ir_dims_str(r, p->dl), (long long)attr_limit,
               ir_dims_str(2 * r, pads), (long long)attr_limit);
      return -1;
    }
  return 0;
}

int64_t ir_pool_out(int64_t in, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t pe, int ceil_mode) {
  int64_t span = in + pb + pe - (dl * (k - 1) + 1);
  if (span < 0) return -1;
  int64_t out = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) out--; /* the last window must start inside */
  return out;
}

status ir_pool_infer(ir_graph *g, ir_node *n, diag *d, int *rank_out, int64_t *dims_out) {
  const ir_value *x = n->in[0];
  int dt = x->dtype, is_float = dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE;
  if (!is_float && !(pool_mode(n->op) == 0 && (dt == DT_INT8 || dt == DT_UINT8)))
    return ir_node_error(d, ST_ERR_INVALID, n, "input '%s' has dtype %s; expected a float%s", x->name,
                         dtype_name(dt) ? dtype_name(dt) : "?",
                         pool_mode(n->op) == 0 ? ", int8 or uint8" : "");
  for (int j = 2; j < x->rank; j++)
    if (x->dims[j] >= (int64_t)1 << 40)
      return ir_node_error(d, ST_ERR_LIMIT, n, "input %s: spatial dims of 2^40 or more",
                           ir_dims_str(x->rank, x->dims));
  ir_pool p;
  char err[400];
  const char *ap = ir_attr_string(n, "auto_pad", "NOTSET");
  int same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (!same && strcmp(ap, "VALID") != 0 && strcmp(ap, "NOTSET") != 0)
    return ir_node_error(d, ST_ERR_INVALID, n, "auto_pad \"%s\"", ap);
  if (ir_pool_read(n, x->rank, x->dims, &p, err, sizeof err))
    return ir_node_error(d, ST_ERR_INVALID, n, "%s", err);
  int r = p.r;
  if (strcmp(ap, "NOTSET") != 0)
    for (int j = 0; j < r; j++) {
      int64_t in = x->dims[2 + j], out = (in + p.s[j] - 1) / p.s[j];
      int64_t total = (out - 1) * p.s[j] + p.dl[j] * (p.k[j] - 1) + 1 - in;
      if (!same || total < 0) total = 0;
      int64_t small = total / 2, big = total - small;
      p.pb[j] = strcmp(ap, "SAME_UPPER") == 0 ? small : big;
      p.pe[j] = total - p.pb[j];
    }
  ir_attr_remove(n, "auto_pad");
  *rank_out = x->rank;
  dims_out[0] = x->dims[0], dims_out[1] = x->dims[1];
  for (int j = 0; j < r; j++) {
    dims_out[2 + j] =
        p.global ? 1 : ir_pool_out(x->dims[2 + j], p.k[j], p.s[j], p.dl[j], p.pb[j], p.pe[j], p.ceil_mode);
    if (dims_out[2 + j] < 1) {
      int64_t pads[2 * IR_POOL_MAX_SPATIAL];
      for (int i = 0; i < r; i++)
        pads[i] = p.pb[i], pads[r + i] = p.pe[i];
      return ir_node_error(
          d, ST_ERR_INVALID, n, "kernel %s with dilations %s and pads %s does not fit input %s",
          ir_dims_str(r, p.k), ir_dims_str(r, p.dl), ir_dims_str(2 * r, pads), ir_dims_str(x->rank, x->dims));
    }
  }
  if (p.global) return ST_OK;
  int64_t pads[2 * IR_POOL_MAX_SPATIAL];
  for (int j = 0; j < r; j++)
    pads[j] = p.pb[j], pads[r + j] = p.pe[j];
  if (ir_attr_set_ints(g, n, "kernel_shape", r, p.k) || ir_attr_set_ints(g, n, "strides", r, p.s) ||
      ir_attr_set_ints(g, n, "dilations", r, p.dl) || ir_attr_set_ints(g, n, "pads", 2 * r, pads) ||
      (p.mode == 2 && ir_attr_set_int(g, n, "p", p.p)))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory inferring shapes");
  return ST_OK;
}

status ir_eval_pool(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  const ir_value *X = n->in[0], *Y = n->out[0];
  ir_pool p;
  char err[400];
  if (X->rank != Y->rank || ir_pool_read(n, X->rank, X->dims, &p, err, sizeof err))
    return ir_node_error(d, ST_ERR_INVALID, n, "%s",
                         X->rank != Y->rank ? "input and output ranks differ" : err);
  if (Y->dims[0] != X->dims[0] || Y->dims[1] != X->dims[1])
    return ir_node_error(d, ST_ERR_INVALID, n, "output '%s' has other N or C", Y->name);
  int64_t count = ir_value_elements(Y);
  void *y = arena_alloc(a, (size_t)ir_value_bytes(Y) + 1);
  if (!y) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  outputs_out[0] = y;
  const void *x = inputs[0];
  int64_t xd[3] = {1, 1, 1}, yd[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  for (int j = 0; j < p.r; j++) { /* right-aligned into three dims */
    int at = 3 - p.r + j;
    xd[at] = X->dims[2 + j], yd[at] = Y->dims[2 + j], k[at] = p.k[j], s[at] = p.s[j], dl[at] = p.dl[j];
    pb[at] = p.pb[j], pe[at] = p.pe[j];
  }
  int64_t plane = xd[0] * xd[1] * xd[2], oplane = yd[0] * yd[1] * yd[2];
  double lowest = X->dtype == DT_INT8 ? -128 : X->dtype == DT_UINT8 ? 0 : -INFINITY;
  for (int64_t i = 0; i < count; i++) {
    int64_t nc = i / oplane, rest = i % oplane, o[3];
    o[2] = rest % yd[2], rest /= yd[2], o[1] = rest % yd[1], o[0] = rest / yd[1];
    double acc = p.mode == 0 ? lowest : 0;
    int64_t valid = 0, padded = 0;
    for (int64_t a0 = 0; a0 < k[0]; a0++)
      for (int64_t a1 = 0; a1 < k[1]; a1++)
        for (int64_t a2 = 0; a2 < k[2]; a2++) {
          int64_t c[3] = {o[0] * s[0] - pb[0] + a0 * dl[0], o[1] * s[1] - pb[1] + a1 * dl[1],
                          o[2] * s[2] - pb[2] + a2 * dl[2]};
          int inside = 1, in_pad = 1;
          for (int j = 0; j < 3; j++) {
            inside &= c[j] >= 0 && c[j] < xd[j];
            in_pad &= c[j] < xd[j] + pe[j];
          }
          padded += in_pad;
          if (!inside) continue;
          valid++;
          double v = elem_get(x, X->dtype, nc * plane + (c[0] * xd[1] + c[1]) * xd[2] + c[2]);
          if (p.mode == 0)
            acc = v > acc || v != v ? v : acc;
          else if (p.mode == 1)
            acc += v;
          else
            acc += pow(fabs(v), (double)p.p);
        }
    if (p.mode == 1) {
      int64_t cnt = p.include_pad ? padded : valid;
      acc = cnt ? acc / (double)cnt : 0;
    } else if (p.mode == 2) {
      acc = pow(acc, 1.0 / (double)p.p);
    }
    elem_put(y, Y->dtype, i, acc);
  }
  return ST_OK;
}
