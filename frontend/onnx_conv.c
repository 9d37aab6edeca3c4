/* onnx_conv.c - the convolution family at import: 1-D Conv and ConvTranspose
 * (opset 1-22) in terms of the 2-D and 3-D Conv the backend runs on the
 * cube.
 *
 * 1-D: x [N, C, L] and w [M, C/G, K] gain a dim of 1 at axis 2, the window
 * attributes gain H entries (kernel 1, stride 1, dilation 1, pads 0), and the
 * 2-D result loses axis 2 again. auto_pad SAME_* stays: along H it pads 0.
 *
 * ConvTranspose y = conv_transpose(x, w) with w [C, M/G, k...] (1 to 3
 * spatial dims; 1-D as 2-D with H = 1) is the convolution, stride 1,
 * dilations d, of x with s-1 zeros inserted between neighbours
 * (zero-insertion: Unsqueeze, a constant Pad of s-1 zeros after each
 * element, Reshape merging them), padded by d*(k-1) - pad_begin before and
 * d*(k-1) - pad_end + output_padding after (negative amounts crop: one Pad),
 * with the weights flipped in every spatial dim and their channel axes
 * swapped per group: w' [M, C/G, k...], w'[g*M/G + o][i][a..] = w[g*C/G +
 * i][o][k-1-a..] (Reshape, Transpose, Slice with steps -1; they fold when w
 * is a constant). pads come from pads, or from output_shape / auto_pad
 * SAME_* as ONNX's reference does (total = s*(in-1) + output_padding +
 * d*(k-1) + 1 - out, halved by floor division; SAME_UPPER puts the smaller
 * half first, others the larger; a negative total pads the end). The
 * zero-inserted input costs the cube the product of the strides times the
 * work of the phase split (sub-pixel form, conv_transpose_phases), which
 * 1-D and 2-D ConvTransposes with a stride, dilations 1 and a crop that
 * stays inside the phases' output take instead: conv_tasnet's decoder
 * (k 16, stride 8, one output channel) ran 16 x 8 times the needed
 * multiply-accumulates. Neither route needs a kernel of its own. Needs:
 * x's dims known at import (graph inputs are, with --input_shape) and w's
 * dims.
 */
#include "frontend/onnx_conv.h"

#include <stdio.h>
#include <string.h>

#include "frontend/onnx_decomp.h"

int onnx_conv_spatial_rank(onnx_node *nd) {
  int64_t ks[8];
  int k = onnx_attr_ints_copy(nd, "kernel_shape", ks, 8);
  if (k >= 0) return k;
  const ir_value *w = nd->nin > 1 ? nd->in[1] : NULL;
  return w && w->rank >= 2 ? w->rank - 2 : -1;
}

/* The window attributes of a node with r spatial dims as `re` >= r dims
 * (a 1-D node as 2-D: [1, v] / [0, b, 0, e]): the leading re - r entries
 * stay kernel 1, stride 1, dilation 1, pads 0. */
typedef struct win {
  int re;
  int64_t k[3], s[3], d[3], pads[6], opad[3]; /* pads: re begins, then re ends */
} win;

static status read_win(onnx_node *nd, int r, int re, const ir_value *w, win *o) {
  int64_t v[8];
  o->re = re;
  for (int i = 0; i < 3; i++)
    o->k[i] = o->s[i] = o->d[i] = 1, o->opad[i] = 0;
  memset(o->pads, 0, sizeof o->pads);
  int off = re - r;
  int n = onnx_attr_ints_copy(nd, "kernel_shape", v, 8);
  if (n >= 0 && n != r)
    return onnx_node_fail(nd, ST_ERR_INVALID, "kernel_shape has %d values, expected %d", n, r);
  for (int i = 0; i < r; i++) {
    o->k[off + i] = n >= 0 ? v[i] : w->dims[2 + i];
    if (o->k[off + i] < 1) return onnx_node_fail(nd, ST_ERR_INVALID, "kernel_shape[%d] must be >= 1", i);
  }
  static const char *const names[] = {"strides", "dilations", "output_padding"};
  int64_t *dst[] = {o->s, o->d, o->opad};
  for (int a = 0; a < 3; a++) {
    n = onnx_attr_ints_copy(nd, names[a], v, 8);
    if (n < 0) continue;
    if (n != r)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s' has %d values, expected %d", names[a], n, r);
    for (int i = 0; i < r; i++) {
      if (v[i] < (a == 2 ? 0 : 1) || v[i] > 65535)
        return onnx_node_fail(nd, ST_ERR_INVALID, "attribute '%s'[%d] = %lld out of range", names[a], i,
                              (long long)v[i]);
      dst[a][off + i] = v[i];
    }
  }
  n = onnx_attr_ints_copy(nd, "pads", v, 8);
  if (n >= 0) {
    if (n != 2 * r)
      return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'pads' has %d values, expected %d", n, 2 * r);
    for (int i = 0; i < r; i++) {
      if (v[i] < 0 || v[r + i] < 0 || v[i] > 65535 || v[r + i] > 65535)
        return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'pads' out of range");
      o->pads[off + i] = v[i], o->pads[re + off + i] = v[r + i];
    }
  }
  return ST_OK;
}

status onnx_conv_1d(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  win wn;
  status st = read_win(nd, 1, 2, nd->in[1], &wn);
  if (st) return st;
  if (nd->in[1]->rank >= 0 && nd->in[1]->rank != 3)
    return onnx_node_fail(nd, ST_ERR_INVALID, "weight '%s' has rank %d; a 1-D Conv needs rank 3",
                          nd->in[1]->name, nd->in[1]->rank);
  char mode[32];
  onnx_attr_string(nd, "auto_pad", "NOTSET", mode, sizeof mode);
  int same = !strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER");
  if (!same && strcmp(mode, "NOTSET") && strcmp(mode, "VALID"))
    return onnx_node_fail(nd, ST_ERR_INVALID,
                          "attribute 'auto_pad' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  int64_t group = onnx_attr_int(nd, "group", 1);
  if (group < 1)
    return onnx_node_fail(nd, ST_ERR_INVALID, "attribute 'group' = %lld must be >= 1", (long long)group);
  if (ir_attr_set_ints(g, n, "kernel_shape", 2, wn.k) || ir_attr_set_ints(g, n, "strides", 2, wn.s) ||
      ir_attr_set_ints(g, n, "dilations", 2, wn.d) || ir_attr_set_ints(g, n, "pads", 4, wn.pads) ||
      ir_attr_set_int(g, n, "group", group) || (same && ir_attr_set_string(g, n, "auto_pad", mode)))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
  dc b;
  dc_begin(&b, nd);
  const int64_t axis = 2;
  ir_value *x2 = dc_unsqueeze(&b, nd->in[0], 1, &axis), *w2 = dc_unsqueeze(&b, nd->in[1], 1, &axis);
  if (b.st) return b.st;
  char name[256];
  snprintf(name, sizeof name, "%.200s/conv2d", b.base);
  ir_value *y = n->out[0], *t = ir_value_new(g, name, y->dtype);
  if (!t || ir_node_set_input(g, n, 0, x2) || ir_node_set_input(g, n, 1, w2))
    return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory");
  n->out[0] = t, t->producer = n, y->producer = NULL;
  ir_node *sq = dc_node(&b, IR_OP_SQUEEZE, 1, &t);
  dc_set_ints(&b, sq, "axes", 1, &axis);
  dc_output(&b, 0, dc_val(&b, sq));
  return dc_end(&b);
}

/* Pad node over x with begins/ends per dim (rank r), constant 0. */
static ir_value *pad(dc *b, ir_value *x, int r, const int64_t *begin, const int64_t *end) {
  int64_t pads[16];
  int any = 0;
  for (int i = 0; i < r; i++)
    pads[i] = begin[i], pads[r + i] = end[i], any |= begin[i] || end[i];
  return any ? dc_pad(b, x, r, pads, 0) : x;
}

/* The weights w [C, M/G, k...] (C = cin, M/G = og) as a Conv's [M, C/G, k...],
 * flipped in every spatial dim (channel axes swapped per group). */
static ir_value *flipped_weights(dc *b, ir_value *w, const win *wn, int re, int64_t group, int64_t cin,
                                 int64_t og) {
  int64_t ig = cin / group, cout = og * group;
  if (group == 1) {
    const int64_t perm[5] = {1, 0, 2, 3, 4};
    w = dc_transpose(b, w, 2 + re, perm);
  } else {
    int64_t d6[6] = {group, ig, og}, d5[5] = {cout, ig};
    for (int i = 0; i < re; i++)
      d6[3 + i] = wn->k[i], d5[2 + i] = wn->k[i];
    const int64_t perm[6] = {0, 2, 1, 3, 4, 5};
    w = dc_reshape_to(b, dc_transpose(b, dc_reshape_to(b, w, 3 + re, d6), 3 + re, perm), 2 + re, d5);
  }
  int64_t starts[3], ends[3], axes[3], steps[3];
  for (int i = 0; i < re; i++)
    starts[i] = -1, ends[i] = INT64_MIN, axes[i] = 2 + i, steps[i] = -1;
  return dc_slice_steps(b, w, re, starts, ends, axes, steps);
}

/* The phase split (sub-pixel) form of a 2-D ConvTranspose with dilations 1:
 * output position u = q*s + p along an axis of stride s takes input q - r
 * through tap p + r*s only, so the s_h*s_w phases are one stride-1 Conv of
 * x (not zero-inserted) with R = ceil(k/s) taps per axis and M*s_h*s_w
 * output channels, w''[(m*s_h + p_h)*s_w + p_w][c][r_h][r_w] =
 * w[c][m][p_h + (R_h-1-r_h)*s_h][p_w + (R_w-1-r_w)*s_w] (0 past k: the
 * flipped weights wf padded in front to R*s, split into [R, s], the phase
 * axis reversed and moved before C; all of it folds for constant weights),
 * bias repeated per phase; the phases interleave by a Reshape, Transpose,
 * Reshape to [N, M, Q_h*s_h, Q_w*s_w] (Q = in + R - 1), and the pads crop it
 * (one Pad of negative amounts). The cube does k/s times fewer
 * multiply-accumulates than on the zero-inserted input, and M*s_h*s_w
 * output channels fill its 16-wide n blocks where M alone (often 1 or 3)
 * would not. Used when every cropped amount is >= 0 (bias would be
 * missing from anything added). */
static ir_value *conv_transpose_phases(dc *b, ir_value *x, ir_value *wf, ir_value *bias, const win *wn,
                                       const int64_t *in, const int64_t *out, int64_t group, int64_t cout,
                                       int64_t ig) {
  int64_t R[2], q[2], P = wn->s[0] * wn->s[1];
  for (int i = 0; i < 2; i++)
    R[i] = (wn->k[i] + wn->s[i] - 1) / wn->s[i], q[i] = in[i] + R[i] - 1;
  const int64_t wb[4] = {0, 0, R[0] * wn->s[0] - wn->k[0], R[1] * wn->s[1] - wn->k[1]}, we[4] = {0};
  ir_value *w = pad(b, wf, 4, wb, we);
  const int64_t d6[6] = {cout, ig, R[0], wn->s[0], R[1], wn->s[1]};
  w = dc_reshape_to(b, w, 6, d6);
  const int64_t starts[2] = {-1, -1}, ends[2] = {INT64_MIN, INT64_MIN}, axes[2] = {3, 5}, steps[2] = {-1, -1};
  w = dc_slice_steps(b, w, 2, starts, ends, axes, steps);
  const int64_t wperm[6] = {0, 3, 5, 1, 2, 4}, d4[4] = {cout * P, ig, R[0], R[1]};
  w = dc_reshape_to(b, dc_transpose(b, w, 6, wperm), 4, d4);
  if (bias) {
    const int64_t one = 1, shape[2] = {cout, P}, flat = cout * P;
    bias = dc_reshape_to(b, dc_expand(b, dc_unsqueeze(b, bias, 1, &one), dc_ints(b, 2, shape)), 1, &flat);
  }
  ir_value *ins[3] = {x, w, bias};
  ir_node *cv = dc_node(b, IR_OP_CONV, bias ? 3 : 2, ins);
  const int64_t ones[2] = {1, 1}, pads[4] = {R[0] - 1, R[1] - 1, R[0] - 1, R[1] - 1};
  dc_set_ints(b, cv, "kernel_shape", 2, R);
  dc_set_ints(b, cv, "strides", 2, ones);
  dc_set_ints(b, cv, "dilations", 2, ones);
  dc_set_ints(b, cv, "pads", 4, pads);
  dc_set_int(b, cv, "group", group);
  const int64_t n = x->dims[0], z6[6] = {n, cout, wn->s[0], wn->s[1], q[0], q[1]},
                zperm[6] = {0, 1, 4, 2, 5, 3}, z4[4] = {n, cout, q[0] * wn->s[0], q[1] * wn->s[1]};
  ir_value *y = dc_reshape_to(b, dc_transpose(b, dc_reshape_to(b, dc_val(b, cv), 6, z6), 6, zperm), 4, z4);
  int64_t cb[4] = {0}, ce[4] = {0};
  for (int i = 0; i < 2; i++)
    cb[2 + i] = -wn->pads[i], ce[2 + i] = out[i] - (z4[2 + i] - wn->pads[i]);
  return pad(b, y, 4, cb, ce);
}

status onnx_decomp_conv_transpose(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = dc_in(&b, 0), *w = dc_in(&b, 1), *bias = dc_in(&b, 2);
  int r = onnx_conv_spatial_rank(nd);
  if (r < 1 || r > 3)
    return dc_fail(&b, ST_ERR_UNSUPPORTED, "only 1-D to 3-D ConvTranspose is supported (spatial rank %d)", r),
           dc_end(&b);
  if (w->rank != r + 2 || x->rank != r + 2)
    return dc_fail(&b, ST_ERR_UNSUPPORTED, "input '%s' and weight '%s' need known shapes of rank %d", x->name,
                   w->name, r + 2),
           dc_end(&b);
  for (int i = 0; i < r + 2; i++)
    if (x->dims[i] < 0 || w->dims[i] < 1)
      return dc_fail(&b, ST_ERR_UNSUPPORTED, "input '%s' and weight '%s' need known shapes", x->name,
                     w->name),
             dc_end(&b);
  const int re = r < 2 ? 2 : r, off = re - r; /* 1-D runs as 2-D */
  win wn;
  status st = read_win(nd, r, re, w, &wn);
  if (st) return st;
  int64_t group = dc_attr_int(&b, "group", 1), cin = w->dims[0], og = w->dims[1];
  if (group < 1 || cin < 1 || cin % group || x->dims[1] != cin)
    return dc_fail(&b, ST_ERR_INVALID, "group %lld, input channels %lld and weight %lld x %lld disagree",
                   (long long)group, (long long)x->dims[1], (long long)cin, (long long)og),
           dc_end(&b);
  int64_t in[3] = {1, 1, 1};
  for (int i = 0; i < r; i++)
    in[off + i] = x->dims[2 + i];
  char mode[32];
  onnx_attr_string(nd, "auto_pad", "NOTSET", mode, sizeof mode);
  int same = !strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER");
  if (!same && strcmp(mode, "NOTSET") && strcmp(mode, "VALID"))
    return dc_fail(&b, ST_ERR_INVALID,
                   "attribute 'auto_pad' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER"),
           dc_end(&b);
  if (!strcmp(mode, "VALID")) memset(wn.pads, 0, sizeof wn.pads);
  int64_t oshape[8];
  int no = onnx_attr_ints_copy(nd, "output_shape", oshape, 8);
  if (no >= 0 || same) {
    if (no >= 0 && no != r && no != r + 2)
      return dc_fail(&b, ST_ERR_INVALID, "output_shape has %d values, expected %d", no, r), dc_end(&b);
    for (int i = off; i < re; i++) {
      int64_t out = no >= 0 ? oshape[no - r + i - off] : in[i] * wn.s[i];
      int64_t total = wn.s[i] * (in[i] - 1) + wn.opad[i] + (wn.k[i] - 1) * wn.d[i] + 1 - out;
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2); /* floor: a negative total pads the end */
      int upper = !strcmp(mode, "SAME_UPPER");
      wn.pads[i] = upper ? half : total - half;
      wn.pads[re + i] = total - wn.pads[i];
    }
  }
  /* 1-D: add the H axis */
  const int64_t axis2 = 2;
  if (r == 1) x = dc_unsqueeze(&b, x, 1, &axis2), w = dc_unsqueeze(&b, w, 1, &axis2);
  int strided = 0, phases = re == 2;
  int64_t out[3];
  for (int i = 0; i < re; i++) {
    strided |= wn.s[i] > 1;
    out[i] = wn.s[i] * (in[i] - 1) + wn.opad[i] + wn.d[i] * (wn.k[i] - 1) + 1 - wn.pads[i] - wn.pads[re + i];
    int64_t r_taps = (wn.k[i] + wn.s[i] - 1) / wn.s[i], full = (in[i] + r_taps - 1) * wn.s[i];
    phases &= wn.d[i] == 1 && wn.pads[i] >= 0 && out[i] + wn.pads[i] <= full;
  }
  if (strided && phases) {
    ir_value *wf = flipped_weights(&b, w, &wn, re, group, cin, og);
    ir_value *y = conv_transpose_phases(&b, x, wf, bias, &wn, in, out, group, og * group, cin / group);
    if (r == 1) y = dc_squeeze(&b, y, 1, &axis2);
    if (b.st) return b.st;
    dc_output(&b, 0, y);
    return dc_end(&b);
  }
  /* zero insertion: [N, C, S1, 1, S2, 1, ...] padded to [N, C, S1, s1, S2, s2, ...], merged */
  if (strided) {
    int64_t axes[3], zb[8] = {0}, ze[8] = {0}, dims[5] = {x->dims[0], cin};
    for (int i = 0; i < re; i++) {
      axes[i] = 3 + 2 * i;
      ze[3 + 2 * i] = wn.s[i] - 1;
      dims[2 + i] = in[i] * wn.s[i];
    }
    ir_value *u = dc_unsqueeze(&b, x, re, axes);
    u = pad(&b, u, 2 + 2 * re, zb, ze);
    x = dc_reshape_to(&b, u, 2 + re, dims);
  }
  int64_t pb[5] = {0}, pe[5] = {0};
  for (int i = 0; i < re; i++) {
    int64_t ext = wn.d[i] * (wn.k[i] - 1);
    pb[2 + i] = ext - wn.pads[i];
    pe[2 + i] = ext - wn.pads[re + i] + wn.opad[i] - (wn.s[i] - 1);
  }
  x = pad(&b, x, 2 + re, pb, pe);
  w = flipped_weights(&b, w, &wn, re, group, cin, og);
  ir_value *ins[3] = {x, w, bias};
  ir_node *cv = dc_node(&b, IR_OP_CONV, bias ? 3 : 2, ins);
  const int64_t ones[3] = {1, 1, 1}, zeros[6] = {0};
  dc_set_ints(&b, cv, "kernel_shape", re, wn.k);
  dc_set_ints(&b, cv, "strides", re, ones);
  dc_set_ints(&b, cv, "dilations", re, wn.d);
  dc_set_ints(&b, cv, "pads", 2 * re, zeros);
  dc_set_int(&b, cv, "group", group);
  ir_value *y = dc_val(&b, cv);
  if (r == 1) y = dc_squeeze(&b, y, 1, &axis2);
  if (b.st) return b.st;
  dc_output(&b, 0, y);
  return dc_end(&b);
}
