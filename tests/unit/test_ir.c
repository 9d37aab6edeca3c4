/* test_ir.c - the IR core: building, attributes, surgery, topological sort,
 * the verifier's rejections, and the text printer. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "support.h"

static ir_value *val(ir_graph *g, const char *name, int rank, const int64_t *dims) {
  ir_value *v = ir_value_new(g, name, DT_FLOAT32);
  ir_value_set_shape(v, rank, dims);
  return v;
}

int main(void) {
  const int64_t d4[] = {1, 3, 8, 8}, dw[] = {4, 3, 3, 3}, dy[] = {1, 4, 6, 6};
  ir_graph *g = ir_graph_new("t", 0);
  ir_value *x = val(g, "x", 4, d4);
  ir_graph_add_input(g, x);
  float w[4 * 3 * 3 * 3];
  for (int i = 0; i < 108; i++)
    w[i] = (float)i / 8;
  ir_value *wv = ir_const_new(g, "w", DT_FLOAT32, 4, dw, w, sizeof w);
  CHECK(wv && wv->data && ir_value_bytes(wv) == (int64_t)sizeof w);
  CHECK(ir_const_new(g, "w2", DT_FLOAT32, 4, dw, w, sizeof w - 4) == NULL); /* size mismatch */
  ir_value *y = val(g, "y", 4, dy), *z = val(g, "z", 4, dy);
  ir_value *in1[] = {x, wv, NULL};
  /* Relu first, Conv second: out of order on purpose. */
  ir_node *relu = ir_node_new(g, IR_OP_RELU, "relu", 1, &y, 1, &z);
  ir_node *conv = ir_node_new(g, IR_OP_CONV, "conv", 3, in1, 1, &y);
  ir_graph_add_output(g, z);
  CHECK(relu && conv && y->producer == conv && z->producer == relu);
  CHECK(strcmp(ir_value_new(g, "x", DT_FLOAT32)->name, "x_1") == 0); /* names stay unique */
  ir_graph_compact(g);

  diag d;
  diag_init(&d);
  CHECK(ir_verify(g, &d) != ST_OK && strstr(d.msg, "relu") && strstr(d.msg, "'y'"));
  diag_init(&d);
  CHECK_EQ_INT(ir_graph_toposort(g, &d), ST_OK);
  CHECK(g->nodes[0] == conv && g->nodes[1] == relu);
  diag_init(&d);
  CHECK_EQ_INT(ir_verify(g, &d), ST_OK);

  /* attributes */
  int64_t ks[] = {3, 3};
  ir_attr_set_ints(g, conv, "kernel_shape", 2, ks);
  ir_attr_set_int(g, conv, "group", 1);
  ir_attr_set_string(g, conv, "act", "relu");
  ir_attr_set_float(g, conv, "clip_max", 6.0);
  ir_attr_set_int(g, conv, "group", 2); /* replaces */
  int64_t got[4];
  CHECK_EQ_INT(ir_attr_ints(conv, "kernel_shape", got, 4), 2);
  CHECK_EQ_INT(got[1], 3);
  CHECK_EQ_INT(ir_attr_int(conv, "group", 0), 2);
  CHECK_EQ_INT(conv->nattrs, 4);
  CHECK(strcmp(ir_attr_string(conv, "act", ""), "relu") == 0);
  CHECK(ir_attr_float(conv, "clip_max", 0) == 6.0);
  CHECK_EQ_INT(ir_attr_int(conv, "missing", -7), -7);
  CHECK_EQ_INT(ir_attr_int(conv, "act", -7), -7); /* wrong kind gives the default */

  /* printer: deterministic, attributes sorted */
  char *text = ir_print_string(g);
  CHECK(text && strstr(text, "input %x : f32[1,3,8,8]"));
  CHECK(text &&
        strstr(
            text,
            "%y : f32[1,4,6,6] = Conv(%x, %w, _) {act=\"relu\", clip_max=6.0, group=2, kernel_shape=[3,3]}"));
  CHECK(text && strstr(text, "const %w : f32[4,3,3,3] = <bytes 432 crc "));
  CHECK(text && strstr(text, "output %z"));
  free(text);

  /* surgery: bypass the relu */
  CHECK_EQ_INT(ir_value_use_count(g, y), 1);
  CHECK(ir_value_single_user(g, y) == relu);
  ir_replace_uses(g, z, y);
  relu->dead = 1;
  ir_graph_compact(g);
  CHECK_EQ_INT(g->nnodes, 1);
  CHECK(g->outputs[0] == y && y->output_index == 0);
  CHECK(ir_value_single_user(g, y) == NULL); /* a graph output */
  diag_init(&d);
  CHECK_EQ_INT(ir_verify(g, &d), ST_OK);

  /* Stable order: a node moves only past the producer it must follow. u's
   * Relu comes before t's, its producer; s's reads the input like t's does.
   * Breadth first would give t s u v; the sort keeps u right after t. */
  ir_graph *o = ir_graph_new("stable", 0);
  ir_value *ox = val(o, "x", 4, dy), *ot = val(o, "t", 4, dy), *os = val(o, "s", 4, dy),
           *ou = val(o, "u", 4, dy), *ov = val(o, "v", 4, dy);
  ir_graph_add_input(o, ox);
  ir_node *nu = ir_node_new(o, IR_OP_RELU, "nu", 1, &ot, 1, &ou);
  ir_node *nt = ir_node_new(o, IR_OP_RELU, "nt", 1, &ox, 1, &ot);
  ir_node *ns = ir_node_new(o, IR_OP_RELU, "ns", 1, &ox, 1, &os);
  ir_node *nv = ir_node_new(o, IR_OP_RELU, "nv", 1, &ou, 1, &ov);
  ir_graph_add_output(o, os);
  ir_graph_add_output(o, ov);
  diag_init(&d);
  CHECK_EQ_INT(ir_graph_toposort(o, &d), ST_OK);
  CHECK(o->nodes[0] == nt && o->nodes[1] == nu && o->nodes[2] == ns && o->nodes[3] == nv);
  ir_graph_free(o);

  /* cycle: a -> b -> a */
  ir_graph *c = ir_graph_new("cyc", 0);
  ir_value *a = val(c, "a", 4, dy), *b = val(c, "b", 4, dy);
  ir_node_new(c, IR_OP_RELU, "na", 1, &b, 1, &a);
  ir_node_new(c, IR_OP_RELU, "nb", 1, &a, 1, &b);
  ir_graph_add_output(c, b);
  diag_init(&d);
  CHECK(ir_graph_toposort(c, &d) == ST_ERR_INVALID && strstr(d.msg, "cycle") && strstr(d.msg, "(Relu)"));
  ir_graph_free(c);

  /* verifier: arity */
  ir_graph *h = ir_graph_new("arity", 0);
  ir_value *p = val(h, "p", 4, dy), *q = val(h, "q", 4, dy);
  ir_graph_add_input(h, p);
  ir_value *two[] = {p, p};
  ir_node_new(h, IR_OP_RELU, "r", 2, two, 1, &q);
  ir_graph_add_output(h, q);
  diag_init(&d);
  CHECK(ir_verify(h, &d) == ST_ERR_INVALID && strstr(d.msg, "'r' (Relu)") && strstr(d.msg, "2 inputs"));
  ir_graph_free(h);

  CHECK_EQ_INT(ir_op_from_name("Conv"), IR_OP_CONV);
  CHECK_EQ_INT(ir_op_from_name("NoSuchOp"), -1);
  ir_graph_free(g);
  return test_summary("ir");
}
