/* conv_weights.c - convolution weights into their cube layouts (see
 * conv_weights.h): compile-time conversion of constant grouped weights to
 * FRACTAL_Z_G, and packing TransData nodes for weights computed at run time.
 *
 * Needs: n is a Conv whose weights in[1] are ND [Cout, Cin/group, KH, KW]
 * (3-D: [Cout, Cin, KD, KH, KW]) in f16 or f32. Changes: in[1] of n (a new constant or a TransData output);
 * the graph's node list (a TransData is appended; the layout pass sorts).
 */
#include <stdio.h>
#include <string.h>

#include "common/conv_group.h"
#include "common/fp16.h"
#include "lower/conv_weights.h"

static status nomem(const ir_node *n, diag *d) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory packing the convolution weights");
}

static int same_dims(const ir_value *v, int rank, const int64_t *dims) {
  if (v->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (v->dims[i] != dims[i]) return 0;
  return 1;
}

static const char *tag(int lay) {
  return lay == LAYOUT_FRACTAL_Z_G ? "fzg" : lay == LAYOUT_FRACTAL_Z ? "fz" : "dw";
}

status convw_make_input(ir_graph *g, ir_node *n, int lay, int dt, int rank, const int64_t *dims, diag *d) {
  ir_value *w = n->in[1];
  if ((int)w->layout == lay && (int)w->dtype == dt && same_dims(w, rank, dims)) return ST_OK;
  uint64_t phys;
  if (layout_elements(lay, rank, dims, &phys) || phys > ((uint64_t)1 << 40))
    return ir_node_error(d, ST_ERR_LIMIT, n, "weights '%s' are too large", w->name);
  char name[512];
  snprintf(name, sizeof name, "%s_%s_%s", w->name, tag(lay), dtype_name(dt));
  if (!w->data) { /* computed at run time: a packing TransData (a WPACK task) */
    ir_value *t = ir_value_new(g, name, dt);
    if (!t) return nomem(n, d);
    ir_value_set_shape(t, rank, dims);
    t->layout = lay;
    char tname[600];
    snprintf(tname, sizeof tname, "pack_%s", name);
    if (!ir_node_new(g, IR_OP_TRANSDATA, tname, 1, &w, 1, &t) || ir_node_set_input(g, n, 1, t))
      return nomem(n, d);
    return ST_OK;
  }
  if (lay != LAYOUT_FRACTAL_Z_G || w->layout != LAYOUT_ND || w->rank != 4)
    return ir_node_error(d, ST_ERR_INVALID, n, "constant weights '%s' cannot be packed as %s", w->name,
                         layout_name(lay));
  convg_geom geo;
  if (convg_init(dims, &geo)) return ir_node_error(d, ST_ERR_LIMIT, n, "weights '%s' are too large", w->name);
  void *data = arena_array(&g->arena, (size_t)phys, dtype_size(dt));
  if (!data) return nomem(n, d);
  convg_pack_rows(&geo, w->data, w->dtype, data, dt, 0, geo.c1out * C0);
  if (ir_value_use_count(g, w) == 1) { /* only n reads it: convert in place */
    ir_value_replace_data(g, w, data);
    w->dtype = dt;
    w->layout = lay;
    ir_value_set_shape(w, rank, dims);
    return ST_OK;
  }
  int64_t flat = (int64_t)phys;
  ir_value *c = ir_const_new(g, name, dt, 1, &flat, data, (size_t)phys * dtype_size(dt));
  arena_release(&g->arena, data); /* c has its own copy */
  if (!c) return nomem(n, d);
  c->layout = lay;
  ir_value_set_shape(c, rank, dims);
  return ir_node_set_input(g, n, 1, c) ? nomem(n, d) : ST_OK;
}

int convw_is_pack(const ir_node *n) {
  if (n->op != IR_OP_TRANSDATA || ir_attr_int(n, "channels_last", 0)) return 0; /* (an NHWC TransData) */
  const ir_value *x = n->in[0], *y = n->out[0];
  if (y->layout == LAYOUT_FRACTAL_Z || y->layout == LAYOUT_FRACTAL_Z_G || y->layout == LAYOUT_FRACTAL_Z_3D)
    return 1;
  return y->layout == LAYOUT_NC1HWC0 && x->layout == LAYOUT_ND && !same_dims(x, y->rank, y->dims);
}

uint64_t convw_pack_units(const ir_node *n) {
  const ir_value *y = n->out[0];
  int64_t cout = y->layout == LAYOUT_FRACTAL_Z_G                                     ? y->dims[0] * y->dims[1]
                 : y->layout == LAYOUT_FRACTAL_Z || y->layout == LAYOUT_FRACTAL_Z_3D ? y->dims[0]
                                                                                     : y->dims[1];
  return (uint64_t)(cout + C0 - 1) / C0 * C0;
}
