/* epilogue_ir.c - a Conv's or MatMul's epilogue program seen as a
 * VectorProgram node (epilogue_ir.h): the attributes renamed, the inputs
 * [result, extras]. */
#include "ir/epilogue_ir.h"

#include <string.h>

#include "common/arena.h"
#include "ir/ir_vprog.h"

int ir_epilogue_first_in(const ir_node *n) { return n->op == IR_OP_MATMUL ? 4 : 5; }

int ir_epilogue_max_extra(const ir_node *n) {
  return IR_EPI_MAX_EXTRA - (n->op == IR_OP_CONV && n->nin > 4 && n->in[4] ? 1 : 0);
}

int ir_epilogue_view(const ir_node *n, ir_epilogue *e) {
  static const char *const from[3] = {"epi_prog", "epi_fimm", "epi_iimm"}, *const to[3] = {"prog", "fimm",
                                                                                           "iimm"};
  if ((n->op != IR_OP_CONV && n->op != IR_OP_MATMUL) || !ir_attr_find(n, "epi_prog")) return 0;
  memset(e, 0, sizeof *e);
  const int first = ir_epilogue_first_in(n);
  int extra = n->nin > first ? n->nin - first : 0;
  if (extra > IR_EPI_MAX_EXTRA) extra = IR_EPI_MAX_EXTRA; /* ir_epilogue_check reports it */
  e->in[0] = n->out[0];
  for (int j = 0; j < extra; j++)
    e->in[1 + j] = n->in[first + j];
  e->out[0] = n->out[0];
  int na = 0;
  for (int k = 0; k < 3; k++) {
    const ir_attr *a = ir_attr_find(n, from[k]);
    if (!a) continue;
    e->attrs[na] = *a;
    e->attrs[na++].name = to[k];
  }
  e->node = (ir_node){.id = n->id,
                      .name = n->name,
                      .op = IR_OP_VECPROG,
                      .nin = 1 + extra,
                      .nout = 1,
                      .in = e->in,
                      .out = e->out,
                      .nattrs = na,
                      .attr_cap = na,
                      .attrs = e->attrs};
  return 1;
}

status ir_epilogue_check(const ir_node *n, diag *d) {
  ir_epilogue e;
  const int first = ir_epilogue_first_in(n);
  if (!ir_epilogue_view(n, &e))
    return n->nin > first
               ? ir_node_error(d, ST_ERR_INVALID, n, "%d inputs past %d without an epilogue program",
                               n->nin - first, first)
               : ST_OK;
  if (n->nin > first + ir_epilogue_max_extra(n))
    return ir_node_error(d, ST_ERR_INVALID, n, "%d epilogue inputs, at most %d", n->nin - first,
                         ir_epilogue_max_extra(n));
  for (int j = first; j < n->nin; j++)
    if (!n->in[j]) return ir_node_error(d, ST_ERR_INVALID, n, "epilogue input %d is missing", j);
  arena tmp;
  ir_vprog p;
  arena_init(&tmp, 0);
  status st = ir_vprog_decode(&e.node, &tmp, &p, d);
  arena_free(&tmp);
  return st;
}
