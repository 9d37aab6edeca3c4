/* conv_taps.c - a Conv's kernel taps that read only padding are dropped.
 *
 * A dilated window on a small map reads padding through some of its taps at
 * every output position: DeepLab's ASPP convs (3x3, dilation 36, pads 36 on
 * a 32x32 map) multiply zeros by eight of their nine taps. Such a tap
 * contributes exactly zero, so the Conv computes the same numbers with a
 * smaller kernel, and every later stage (layout, tiling, the kernels) sees
 * the small Conv: a 1x1 when only the centre tap reads the image.
 *
 * Contract.
 *   Needs:   shape_infer (a Conv's kernel_shape, strides, dilations, pads
 *            explicit; its output shape known).
 *   Changes: in every spatial dim j of a Conv with a constant ND float weight,
 *            tap a reads input index o * s - pb + a * dl for the outputs
 *            o = 0 .. O - 1; a tap that reads no index in 0 .. D - 1 for any
 *            o is dead. The dead taps before the first live one and after
 *            the last live one are dropped: with the live range a0 .. a1 the
 *            window becomes k' = a1 - a0 + 1 taps, pads pb - a0 * dl and
 *            pe - (k - 1 - a1) * dl (the output extent is unchanged), and
 *            dilation 1 when k' = 1. A side whose new pad would be negative
 *            keeps its taps, and so does a dim whose new pads would not be
 *            below its new extent (the kernels' rule). The weight becomes a
 *            new constant "<W>_taps" holding the kept taps (the old one is
 *            dropped when nothing else reads it). Dead taps between live ones
 *            stay (only strides larger than the dilation make them). Tiles
 *            skip, at run time, the taps that read only padding for their
 *            own pixels (runtime/kernels.h, rt_conv_tap_dead).
 *   Leaves:  the same values, shapes and results (a dropped tap only ever
 *            added 0 * w; the kernels may sum the rest in another order);
 *            topological order.
 */
#include <stdio.h>
#include <string.h>

#include "ir/conv.h"
#include "pass.h"

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16 || dt == DT_DOUBLE; }

/* Whether tap a of a window (stride s, dilation dl, begin pad pb) reads an
 * input index in 0 .. D - 1 for some output o in 0 .. O - 1. */
static int tap_live(int64_t a, int64_t D, int64_t O, int64_t s, int64_t dl, int64_t pb) {
  int64_t need = pb - a * dl; /* the smallest o * s that reads index >= 0 */
  int64_t o = need <= 0 ? 0 : (need + s - 1) / s;
  return o < O && o * s - need < D;
}

/* The kept range [lo[j], hi[j]] of each spatial dim; 1 if any dim shrinks. */
static int live_range(const ir_conv *c, const int64_t *in_dims, const int64_t *out_dims, int64_t *lo,
                      int64_t *hi) {
  int shrinks = 0;
  for (int j = 0; j < c->r; j++) {
    int64_t D = in_dims[j], O = out_dims[j], a0 = 0, a1 = c->k[j] - 1;
    while (a0 <= a1 && !tap_live(a0, D, O, c->s[j], c->dl[j], c->pb[j]))
      a0++;
    if (a0 > a1) { /* no tap reads the image: the output is the bias; keep the Conv as it is */
      a0 = 0, a1 = c->k[j] - 1;
    } else {
      while (!tap_live(a1, D, O, c->s[j], c->dl[j], c->pb[j]))
        a1--;
    }
    if (c->pb[j] - a0 * c->dl[j] < 0) a0 = 0;
    if (c->pe[j] - (c->k[j] - 1 - a1) * c->dl[j] < 0) a1 = c->k[j] - 1;
    int64_t ext = c->dl[j] * (a1 - a0) + 1; /* the runtime wants pads below it (CONV2D's check) */
    if (c->pb[j] - a0 * c->dl[j] >= ext || c->pe[j] - (c->k[j] - 1 - a1) * c->dl[j] >= ext)
      a0 = 0, a1 = c->k[j] - 1;
    lo[j] = a0, hi[j] = a1;
    shrinks |= a0 > 0 || a1 < c->k[j] - 1;
  }
  return shrinks;
}

static status prune(ir_graph *g, ir_node *n, diag *d) {
  const ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  int r = x->rank - 2;
  ir_conv c;
  char err[400];
  if (ir_conv_read(n, r, &c, err, sizeof err)) return ir_node_error(d, ST_ERR_INVALID, n, "%s", err);
  int64_t lo[IR_CONV_MAX_SPATIAL], hi[IR_CONV_MAX_SPATIAL];
  if (!live_range(&c, x->dims + 2, y->dims + 2, lo, hi)) return ST_OK;

  /* W[M, Cg, k...] -> W'[M, Cg, k'...]: each kept tap row is a run of k'[r-1] elements */
  int64_t nk[IR_CONV_MAX_SPATIAL], wd[2 + IR_CONV_MAX_SPATIAL], pads[2 * IR_CONV_MAX_SPATIAL];
  int64_t planes = w->dims[0] * w->dims[1], taps = 1, ntaps = 1;
  for (int j = 0; j < r; j++) {
    nk[j] = hi[j] - lo[j] + 1;
    taps *= c.k[j], ntaps *= nk[j];
  }
  wd[0] = w->dims[0], wd[1] = w->dims[1];
  for (int j = 0; j < r; j++)
    wd[2 + j] = nk[j];
  size_t es = dtype_size(w->dtype);
  char name[300];
  snprintf(name, sizeof name, "%.250s_taps", w->name);
  ir_value *nw = ir_const_new(g, name, w->dtype, w->rank, wd, NULL, (size_t)(planes * ntaps) * es);
  if (!nw) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory pruning taps");
  uint8_t *dst = (uint8_t *)nw->data; /* ours to fill (ir_const_new with NULL data) */
  const uint8_t *src = w->data;
  int64_t rows = ntaps / nk[r - 1], run = nk[r - 1];
  for (int64_t p = 0; p < planes; p++)
    for (int64_t row = 0; row < rows; row++) {
      /* row -> kept tap coordinates of the dims before the last, then the source offset */
      int64_t rest = row, at = lo[r - 1], stride = c.k[r - 1];
      for (int j = r - 2; j >= 0; j--) {
        at += (lo[j] + rest % nk[j]) * stride;
        rest /= nk[j], stride *= c.k[j];
      }
      memcpy(dst + (size_t)((p * ntaps + row * run)) * es, src + (size_t)(p * taps + at) * es,
             (size_t)run * es);
    }
  for (int j = 0; j < r; j++) {
    pads[j] = c.pb[j] - lo[j] * c.dl[j];
    pads[r + j] = c.pe[j] - (c.k[j] - 1 - hi[j]) * c.dl[j];
    if (nk[j] == 1) c.dl[j] = 1;
  }
  if (ir_node_set_input(g, n, 1, nw) || ir_attr_set_ints(g, n, "kernel_shape", r, nk) ||
      ir_attr_set_ints(g, n, "dilations", r, c.dl) || ir_attr_set_ints(g, n, "pads", 2 * r, pads))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory pruning taps");
  return ST_OK;
}

status pass_conv_taps(ir_graph *g, pass_ctx *ctx, diag *d) {
  (void)ctx;
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead || n->op != IR_OP_CONV || n->nin < 2 || !n->in[1]) continue;
    const ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
    if (!w->data || w->layout != LAYOUT_ND || !is_float(w->dtype) || w->rank != x->rank ||
        y->rank != x->rank || (x->rank != 4 && x->rank != 5))
      continue;
    st = prune(g, n, d);
  }
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
