/* conv.c - the Conv window over 2 or 3 spatial dims (conv.h): attribute
 * reading, shape inference and the reference evaluator.
 *
 * The window rules are ONNX's: output extent floor((D + pads - extent) /
 * stride) + 1 with extent = dilation * (kernel - 1) + 1; SAME_UPPER /
 * SAME_LOWER split the padding that keeps ceil(D / stride) outputs with the
 * odd pixel at the end / the start. A 2-D window is a 3-D one with a depth
 * of 1 to the evaluator, which runs every Conv as [N, C, D, H, W].
 */
#include "ir/conv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"

int ir_conv_read(const ir_node *n, int r, ir_conv *c, char *err, size_t cap) {
  memset(c, 0, sizeof *c);
  c->r = r;
  c->group = ir_attr_int(n, "group", 1);
  if (r < 2 || r > IR_CONV_MAX_SPATIAL) {
    snprintf(err, cap, "weight of rank %d: Conv takes 2 or 3 spatial dims (rank 4 or 5)", r + 2);
    return -1;
  }
  const ir_value *w = n->nin > 1 ? n->in[1] : NULL;
  for (int j = 0; j < r; j++)
    c->k[j] = w && w->rank == r + 2 ? w->dims[2 + j] : 0, c->s[j] = 1, c->dl[j] = 1;
  int64_t pads[2 * IR_CONV_MAX_SPATIAL] = {0};
  int nk = ir_attr_ints(n, "kernel_shape", c->k, IR_CONV_MAX_SPATIAL + 1);
  int ns = ir_attr_ints(n, "strides", c->s, IR_CONV_MAX_SPATIAL + 1);
  int nd = ir_attr_ints(n, "dilations", c->dl, IR_CONV_MAX_SPATIAL + 1);
  int np = ir_attr_ints(n, "pads", pads, 2 * IR_CONV_MAX_SPATIAL + 1);
  if ((nk >= 0 && nk != r) || (ns >= 0 && ns != r) || (nd >= 0 && nd != r) || (np >= 0 && np != 2 * r)) {
    snprintf(err, cap, "kernel_shape, strides, dilations and pads must have %d, %d, %d and %d values", r, r,
             r, 2 * r);
    return -1;
  }
  if (nk >= 0 && w && w->rank == r + 2)
    for (int j = 0; j < r; j++)
      if (c->k[j] != w->dims[2 + j]) {
        snprintf(err, cap, "kernel_shape %s does not match the weight %s", ir_dims_str(r, c->k),
                 ir_dims_str(w->rank, w->dims));
        return -1;
      }
  for (int j = 0; j < r; j++)
    c->pb[j] = pads[j], c->pe[j] = pads[r + j];
  const int64_t limit = ((int64_t)1 << 31) - 1;
  int ok = c->group >= 1 && c->group <= limit;
  for (int j = 0; j < r; j++)
    ok &= c->k[j] >= 1 && c->s[j] >= 1 && c->dl[j] >= 1 && c->k[j] <= limit && c->s[j] <= limit &&
          c->dl[j] <= limit && c->pb[j] >= 0 && c->pe[j] >= 0 && c->pb[j] <= limit && c->pe[j] <= limit;
  if (!ok) {
    snprintf(err, cap,
             "kernel %s, strides %s, dilations %s and group %lld must be in 1..%lld and pads %s in 0..%lld",
             ir_dims_str(r, c->k), ir_dims_str(r, c->s), ir_dims_str(r, c->dl), (long long)c->group,
             (long long)limit, ir_dims_str(2 * r, pads), (long long)limit);
    return -1;
  }
  return 0;
}

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

status ir_conv_infer(ir_graph *g, ir_node *n, diag *d, int *rank_out, int64_t *dims_out) {
  const ir_value *x = n->in[0], *w = n->in[1];
  if (!is_float(x->dtype) || !is_float(w->dtype))
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "input '%s' (%s) and weight '%s' (%s) must be floats",
                         x->name, dtype_name(x->dtype), w->name, dtype_name(w->dtype));
  if ((x->rank != 4 && x->rank != 5) || w->rank != x->rank)
    return ir_node_error(d, x->rank == 3 || x->rank > 5 ? ST_ERR_UNSUPPORTED : ST_ERR_INVALID, n,
                         "input %s and weight %s: Conv takes rank 4 (2-D) or 5 (3-D) inputs of one rank",
                         ir_dims_str(x->rank, x->dims), ir_dims_str(w->rank, w->dims));
  int r = x->rank - 2;
  ir_conv c;
  char err[400];
  if (ir_conv_read(n, r, &c, err, sizeof err)) return ir_node_error(d, ST_ERR_INVALID, n, "%s", err);
  int64_t M = w->dims[0], C = x->dims[1];
  if (c.group > C || C % c.group || C / c.group != w->dims[1] || M % c.group)
    return ir_node_error(d, ST_ERR_INVALID, n, "input %s, weight %s and group %lld disagree on channels",
                         ir_dims_str(x->rank, x->dims), ir_dims_str(w->rank, w->dims), (long long)c.group);
  if (n->nin > 2 && n->in[2] && (n->in[2]->rank != 1 || n->in[2]->dims[0] != M))
    return ir_node_error(d, ST_ERR_INVALID, n, "bias '%s' has shape %s; expected [%lld]", n->in[2]->name,
                         ir_dims_str(n->in[2]->rank, n->in[2]->dims), (long long)M);
  for (int j = 0; j < r; j++)
    if (x->dims[2 + j] >= (int64_t)1 << 40)
      return ir_node_error(d, ST_ERR_LIMIT, n, "input %s: spatial dims of 2^40 or more",
                           ir_dims_str(x->rank, x->dims));
  const char *ap = ir_attr_string(n, "auto_pad", "NOTSET");
  int same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  if (!same && strcmp(ap, "VALID") != 0 && strcmp(ap, "NOTSET") != 0)
    return ir_node_error(d, ST_ERR_INVALID, n, "auto_pad \"%s\"", ap);
  if (strcmp(ap, "NOTSET") != 0)
    for (int j = 0; j < r; j++) {
      int64_t in = x->dims[2 + j], out = (in + c.s[j] - 1) / c.s[j];
      int64_t total = (out - 1) * c.s[j] + c.dl[j] * (c.k[j] - 1) + 1 - in;
      if (!same || total < 0) total = 0;
      int64_t small = total / 2, big = total - small;
      c.pb[j] = strcmp(ap, "SAME_UPPER") == 0 ? small : big;
      c.pe[j] = total - c.pb[j];
    }
  ir_attr_remove(n, "auto_pad");
  int64_t pads[2 * IR_CONV_MAX_SPATIAL];
  for (int j = 0; j < r; j++)
    pads[j] = c.pb[j], pads[r + j] = c.pe[j];
  *rank_out = x->rank;
  dims_out[0] = x->dims[0], dims_out[1] = M;
  for (int j = 0; j < r; j++) {
    int64_t span = x->dims[2 + j] + c.pb[j] + c.pe[j] - (c.dl[j] * (c.k[j] - 1) + 1);
    if (span < 0)
      return ir_node_error(
          d, ST_ERR_INVALID, n, "kernel %s with dilations %s and pads %s does not fit input %s",
          ir_dims_str(r, c.k), ir_dims_str(r, c.dl), ir_dims_str(2 * r, pads), ir_dims_str(x->rank, x->dims));
    dims_out[2 + j] = span / c.s[j] + 1;
  }
  if (n->nin > 3 && n->in[3] &&
      (n->in[3]->rank != x->rank || memcmp(n->in[3]->dims, dims_out, sizeof(int64_t) * (size_t)x->rank)))
    return ir_node_error(d, ST_ERR_INVALID, n, "residual '%s' has shape %s; the output is %s", n->in[3]->name,
                         ir_dims_str(n->in[3]->rank, n->in[3]->dims), ir_dims_str(x->rank, dims_out));
  if (ir_attr_set_ints(g, n, "kernel_shape", r, c.k) || ir_attr_set_ints(g, n, "strides", r, c.s) ||
      ir_attr_set_ints(g, n, "dilations", r, c.dl) || ir_attr_set_ints(g, n, "pads", 2 * r, pads) ||
      ir_attr_set_int(g, n, "group", c.group))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory inferring shapes");
  return ST_OK;
}

/* Input i as f32 (a copy in `a`), or NULL. */
static float *floats_of(const ir_node *n, const void *const *inputs, int i, arena *a) {
  const ir_value *v = n->in[i];
  int64_t count = ir_value_elements(v);
  float *f = arena_array(a, count ? (size_t)count : 1, sizeof *f);
  if (f)
    for (int64_t k = 0; k < count; k++)
      f[k] = (float)elem_get(inputs[i], v->dtype, (size_t)k);
  return f;
}

status ir_eval_conv(const ir_node *n, const void *const *inputs, void **outputs_out, arena *a, diag *d) {
  const ir_value *X = n->in[0], *W = n->in[1], *Y = n->out[0];
  const ir_value *Bv = n->nin > 2 ? n->in[2] : NULL, *R = n->nin > 3 ? n->in[3] : NULL;
  const ir_value *S = n->nin > 4 ? n->in[4] : NULL; /* x_scale [N, C, 1, 1] (passes/fuse.c) */
  ir_conv c;
  char err[400];
  if ((X->rank != 4 && X->rank != 5) || W->rank != X->rank || Y->rank != X->rank)
    return ir_node_error(d, ST_ERR_INVALID, n, "input, weight and output need one rank, 4 or 5");
  if (ir_conv_read(n, X->rank - 2, &c, err, sizeof err))
    return ir_node_error(d, ST_ERR_INVALID, n, "%s", err);
  /* [N, C, D, H, W] with D = 1 for 2-D: index 0 of the window is depth */
  int64_t xd[3] = {1, 1, 1}, yd[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0};
  for (int j = 0; j < c.r; j++) {
    int at = 3 - c.r + j;
    xd[at] = X->dims[2 + j], yd[at] = Y->dims[2 + j], k[at] = c.k[j], s[at] = c.s[j], dl[at] = c.dl[j],
    pb[at] = c.pb[j];
  }
  int64_t N = X->dims[0], C = X->dims[1], M = W->dims[0], Cg = W->dims[1], G = c.group;
  if (C != Cg * G || M % G || Y->dims[0] != N || Y->dims[1] != M)
    return ir_node_error(d, ST_ERR_INVALID, n,
                         "input channels %lld, weight [%lld,%lld,..], group %lld and output disagree",
                         (long long)C, (long long)M, (long long)Cg, (long long)G);
  if (Bv && ir_value_elements(Bv) != M)
    return ir_node_error(d, ST_ERR_INVALID, n, "bias '%s' is not [%lld]", Bv->name, (long long)M);
  if (R && ir_value_elements(R) != ir_value_elements(Y))
    return ir_node_error(d, ST_ERR_INVALID, n, "residual '%s' does not match the output", R->name);
  if (S && ir_value_elements(S) != N * C)
    return ir_node_error(d, ST_ERR_INVALID, n, "x_scale '%s' is not [N, C, 1, 1]", S->name);
  const char *act = ir_attr_string(n, "act", NULL);
  double lo = -INFINITY, hi = INFINITY;
  if (act && strcmp(act, "relu") == 0) {
    lo = 0;
  } else if (act && strcmp(act, "clip") == 0) {
    lo = ir_attr_float(n, "clip_min", -INFINITY);
    hi = ir_attr_float(n, "clip_max", INFINITY);
  } else if (act) {
    return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "act \"%s\"", act);
  }
  const float *x = floats_of(n, inputs, 0, a), *wt = floats_of(n, inputs, 1, a);
  const float *b = Bv ? floats_of(n, inputs, 2, a) : NULL, *r = R ? floats_of(n, inputs, 3, a) : NULL,
              *sc = S ? floats_of(n, inputs, 4, a) : NULL;
  void *y = arena_alloc(a, (size_t)ir_value_bytes(Y) + 1);
  if (!x || !wt || !y || (Bv && !b) || (R && !r) || (S && !sc))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  outputs_out[0] = y;
  /* One output row (the last spatial dim) at a time, its sums in row: each
   * output still adds its products in the order (input channel, tap) of the
   * definition, so the result is as if computed one output at a time, but the
   * innermost loop runs along the row over the taps' valid range, with no
   * bounds test per product (a calibration run of omquant is mostly this). */
  int64_t Mg = M / G, xplane = xd[0] * xd[1] * xd[2], taps = k[0] * k[1] * k[2];
  double *row = arena_array(a, (size_t)yd[2] + 1, sizeof *row);
  if (!row) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory evaluating");
  for (int64_t in = 0; in < N; in++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t o0 = 0; o0 < yd[0]; o0++)
        for (int64_t o1 = 0; o1 < yd[1]; o1++) {
          for (int64_t o2 = 0; o2 < yd[2]; o2++)
            row[o2] = b ? b[m] : 0;
          for (int64_t ci = 0; ci < Cg; ci++) {
            int64_t ch = m / Mg * Cg + ci;
            const float *xp = x + (in * C + ch) * xplane, *wp = wt + (m * Cg + ci) * taps;
            double scale = sc ? sc[in * C + ch] : 1;
            for (int64_t a0 = 0; a0 < k[0]; a0++) {
              int64_t i0 = o0 * s[0] - pb[0] + a0 * dl[0];
              if (i0 < 0 || i0 >= xd[0]) continue;
              for (int64_t a1 = 0; a1 < k[1]; a1++) {
                int64_t i1 = o1 * s[1] - pb[1] + a1 * dl[1];
                if (i1 < 0 || i1 >= xd[1]) continue;
                const float *xr = xp + (i0 * xd[1] + i1) * xd[2];
                for (int64_t a2 = 0; a2 < k[2]; a2++) {
                  /* i2 = o2 * sw + off lies in [0, xd[2]) for o2 in [from, to) */
                  int64_t off = a2 * dl[2] - pb[2], sw = s[2];
                  int64_t from = off < 0 ? (-off + sw - 1) / sw : 0;
                  int64_t to = xd[2] - off <= 0 ? 0 : (xd[2] - off - 1) / sw + 1;
                  const float wv = wp[(a0 * k[1] + a1) * k[2] + a2];
                  if (to > yd[2]) to = yd[2];
                  if (sc) /* x * 1 is exact: without x_scale, one multiply less */
                    for (int64_t o2 = from; o2 < to; o2++)
                      row[o2] += (double)xr[o2 * sw + off] * scale * wv;
                  else
                    for (int64_t o2 = from; o2 < to; o2++)
                      row[o2] += (double)xr[o2 * sw + off] * wv;
                }
              }
            }
          }
          int64_t o = (((in * M + m) * yd[0] + o0) * yd[1] + o1) * yd[2];
          for (int64_t o2 = 0; o2 < yd[2]; o2++, o++) {
            double acc = row[o2];
            if (r) acc += r[o];
            elem_put(y, Y->dtype, (size_t)o, (float)(acc < lo ? lo : acc > hi ? hi : acc));
          }
        }
  return ST_OK;
}
