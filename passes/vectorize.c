/* vectorize.c - elementwise work becomes vector programs, fused.
 *
 * Contract.
 *   Needs:   shape_infer, constfold, fuse (Conv epilogues -- bias, residual,
 *            Relu/Clip -- are already inside their Convs and stay there: the
 *            cube's epilogue is cheaper than any separate task).
 *   Changes: 1. every remaining node whose op has an expansion
 *            (ir/vexpand.h: the ELEMWISE/BROADCAST ops, Cast, Identity)
 *            becomes, in place (same name, same outputs, same position), a
 *            VectorProgram node: each distinct non-scalar input is one input
 *            slot and one LOAD; a one-element constant input becomes a CONST
 *            immediate in its own dtype instead; then the op's expansion and
 *            a STORE. Tensors of a dtype the vector unit lacks (string,
 *            bfloat16, the float8/float4/int4 family) are
 *            ST_ERR_UNSUPPORTED naming the node.
 *            2. programs merge: while some VectorProgram C reads an output of
 *            a VectorProgram P with the same output dims, and the merged
 *            program would have <= 7 inputs and <= 8 tensors in all and no
 *            cycle would form (no other path from P to C), P's instructions
 *            are put in front of C's, C's LOADs of P's outputs read P's
 *            registers, and P goes. An output of P that something besides C
 *            reads (or that is a graph output) stays an output of the merged
 *            node, after C's own. So chains and trees fuse into one program,
 *            and so do siblings that share an intermediate; a program whose
 *            output dims differ from its consumer's (a [N,C,1,1] squeeze
 *            feeding an [N,C,H,W] scale) stays separate, so nothing is
 *            recomputed per broadcast element. The merged node keeps C's name.
 *            When ctx->fusion_off has FUSION_VECTOR_PROGRAM
 *            (VectorProgramFusionPass:off, part of the op-by-op build), step
 *            2 merges only programs of one origin (ir_node.origin: the
 *            pieces a decomposition or a lowering made of one ONNX op), so
 *            every ONNX op is one program.
 *   Leaves:  g->nodes topologically sorted; every VectorProgram valid
 *            (ir_vprog_check); value dtypes untouched (precision retypes
 *            programs later), so the graph computes exactly what it did.
 */
#include <string.h>

#include "common/elem.h"
#include "ir/ir_vprog.h"
#include "pass.h"
#include "ir/vexpand.h"

static status nomem(diag *d, const ir_node *n) {
  return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory vectorizing");
}

static int is_scalar_const(const ir_value *v) { return v && v->data && ir_value_elements(v) == 1; }

/* CONST holding the one element of constant v, in v's dtype. */
static int const_reg(ir_vprog *p, const ir_value *v) {
  if (elem_is_float(v->dtype)) return ir_vprog_const_f(p, v->dtype, elem_get(v->data, v->dtype, 0));
  return ir_vprog_const_i(p, v->dtype, elem_get_int(v->data, v->dtype, 0));
}

/* Step 1 for one node. */
static status to_program(ir_graph *g, ir_node *n, arena *scratch, diag *d) {
  for (int i = 0; i < n->nin + n->nout; i++) {
    const ir_value *v = i < n->nin ? n->in[i] : n->out[i - n->nin];
    if (!v)
      return ir_node_error(d, ST_ERR_INVALID, n, "%s %d is missing", i < n->nin ? "input" : "output",
                           i < n->nin ? i : i - n->nin);
    if (!ir_vprog_dtype_ok(v->dtype))
      return ir_node_error(d, ST_ERR_UNSUPPORTED, n,
                           "'%s' has dtype %s; the vector unit takes f32, f16, f64, i64, i32, i16, i8, "
                           "u64, u32, u16, u8 and bool",
                           v->name, dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  }
  ir_value **ins = arena_array(&g->arena, (size_t)n->nin, sizeof *ins);
  int *regs = arena_array(scratch, (size_t)n->nin, sizeof *regs);
  if (!ins || !regs) return nomem(d, n);
  int nslots = 0, all_scalar = 1;
  for (int i = 0; i < n->nin; i++)
    all_scalar = all_scalar && is_scalar_const(n->in[i]);
  ir_vprog p;
  ir_vprog_init(&p, scratch);
  for (int i = 0; i < n->nin; i++) {
    ir_value *v = n->in[i];
    if (is_scalar_const(v) && !(all_scalar && i == 0)) {
      regs[i] = const_reg(&p, v);
      continue;
    }
    int slot = 0;
    while (slot < nslots && ins[slot] != v)
      slot++;
    if (slot == nslots) {
      if (nslots == VPROG_MAX_IO - 1)
        return ir_node_error(d, ST_ERR_UNSUPPORTED, n, "more than %d distinct tensor inputs",
                             VPROG_MAX_IO - 1);
      ins[nslots++] = v;
    }
    regs[i] = ir_vprog_load(&p, slot, v->dtype);
  }
  int out;
  status st = ir_vexpand_node(&p, n, regs, &out, d);
  if (st) return st;
  if (ir_vprog_store(&p, 0, out) < 0) return nomem(d, n);
  n->op = IR_OP_VECPROG;
  n->in = ins;
  n->nin = nslots;
  n->nattrs = 0;
  if (ir_vprog_encode(g, n, &p)) return nomem(d, n);
  return ir_vprog_check(n, p.ins, p.count, d);
}

static int same_dims(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

static int index_of(ir_node *const *nodes, int count, const ir_node *n) {
  for (int i = 0; i < count; i++)
    if (nodes[i] == n) return i;
  return -1;
}

/* 1 when some path from P reaches C through another node (then merging P
 * into C would make a cycle). g->nodes is topologically sorted. */
static int other_path(const ir_graph *g, const ir_node *P, const ir_node *C, unsigned char *mark) {
  int from = index_of(g->nodes, g->nnodes, P), to = index_of(g->nodes, g->nnodes, C);
  memset(mark, 0, (size_t)g->next_node_id);
  mark[P->id] = 1;
  for (int i = from + 1; i < to; i++) {
    const ir_node *x = g->nodes[i];
    for (int j = 0; j < x->nin && !x->dead && !mark[x->id]; j++)
      if (x->in[j] && x->in[j]->producer && mark[x->in[j]->producer->id]) mark[x->id] = 1;
  }
  for (int j = 0; j < C->nin; j++) {
    const ir_node *q = C->in[j]->producer;
    if (q && q != P && mark[q->id]) return 1;
  }
  return 0;
}

typedef struct merge_plan {
  ir_value *in[VPROG_MAX_IO];
  int nin;
  ir_value *out[VPROG_MAX_IO];
  int nout;
  int keep[VPROG_MAX_IO]; /* per output of P: its slot in out[], or -1 */
} merge_plan;

/* Decides whether P merges into C; fills the plan. */
static int plan_merge(const ir_graph *g, const ir_node *P, const ir_node *C, merge_plan *m) {
  if (!same_dims(P->out[0], C->out[0])) return 0;
  m->nin = m->nout = 0;
  for (int j = 0; j < C->nout; j++)
    m->out[m->nout++] = C->out[j];
  for (int j = 0; j < P->nout; j++) {
    int read_by_c = 0;
    for (int i = 0; i < C->nin; i++)
      read_by_c += C->in[i] == P->out[j];
    m->keep[j] = -1;
    if (ir_value_use_count(g, P->out[j]) > read_by_c || !read_by_c) {
      if (m->nout == VPROG_MAX_IO) return 0;
      m->keep[j] = m->nout;
      m->out[m->nout++] = P->out[j];
    }
  }
  for (int k = 0; k < P->nin + C->nin; k++) {
    ir_value *v = k < P->nin ? P->in[k] : C->in[k - P->nin];
    if (v->producer == P) continue;
    int at = 0;
    while (at < m->nin && m->in[at] != v)
      at++;
    if (at < m->nin) continue;
    if (m->nin == VPROG_MAX_IO - 1) return 0;
    m->in[m->nin++] = v;
  }
  return m->nin + m->nout <= VPROG_MAX_IO;
}

static int slot_of(ir_value *const *vals, int count, const ir_value *v) {
  for (int i = 0; i < count; i++)
    if (vals[i] == v) return i;
  return -1;
}

/* Appends program q of node `owner` to p: LOADs of values in `from_regs`
 * (value -> register, nregs_from entries) read those registers, other LOADs
 * read plan inputs; STOREs go to `store_slot[output]` (-1: dropped, the
 * register is recorded in stored_reg[output]). */
static int splice(ir_vprog *p, const ir_vprog *q, const ir_node *owner, const merge_plan *m,
                  ir_value *const *from_vals, const int *from_regs, int nfrom, const int *store_slot,
                  int *stored_reg, int *map) {
  for (int k = 0; k < q->count; k++) {
    om_vinstr in = q->ins[k];
    if (in.op == VOP_LOAD) {
      ir_value *v = owner->in[in.a];
      int f = slot_of(from_vals, nfrom, v);
      if (f >= 0) {
        map[in.dst] = from_regs[f];
        continue;
      }
      in.a = (uint16_t)slot_of(m->in, m->nin, v);
      if ((map[in.dst] = ir_vprog_append(p, in)) < 0) return -1;
      continue;
    }
    if (in.op == VOP_STORE) {
      stored_reg[in.a] = map[in.b];
      if (store_slot[in.a] < 0) continue;
      in.a = (uint16_t)store_slot[in.a];
      in.b = (uint16_t)map[in.b];
      if (ir_vprog_append(p, in) < 0) return -1;
      continue;
    }
    int ops = in.op >= VOP_SELECT ? 3 : in.op >= VOP_ADD ? 2 : in.op >= VOP_CAST ? 1 : 0;
    if (ops > 0) in.a = (uint16_t)map[in.a];
    if (ops > 1) in.b = (uint16_t)map[in.b];
    if (ops > 2) in.c = (uint16_t)map[in.c];
    if ((map[in.dst] = ir_vprog_append(p, in)) < 0) return -1;
  }
  return 0;
}

/* Merges P into C per plan m. */
static status merge(ir_graph *g, ir_node *P, ir_node *C, const merge_plan *m, diag *d) {
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog pp, cp, out;
  status st = ir_vprog_decode(P, &tmp, &pp, d);
  if (st == ST_OK) st = ir_vprog_decode(C, &tmp, &cp, d);
  if (st) {
    arena_free(&tmp);
    return st;
  }
  ir_vprog_init(&out, &tmp);
  int *map = arena_array(&tmp, (size_t)(pp.nregs + cp.nregs) + 1, sizeof *map);
  int preg[VPROG_MAX_IO], creg[VPROG_MAX_IO], cslot[VPROG_MAX_IO];
  for (int j = 0; j < C->nout; j++)
    cslot[j] = j;
  ir_value **ins = arena_array(&g->arena, (size_t)m->nin, sizeof *ins);
  ir_value **outs = arena_array(&g->arena, (size_t)m->nout, sizeof *outs);
  if (!map || !ins || !outs || splice(&out, &pp, P, m, NULL, NULL, 0, m->keep, preg, map) ||
      splice(&out, &cp, C, m, P->out, preg, P->nout, cslot, creg, map + pp.nregs)) {
    arena_free(&tmp);
    return nomem(d, C);
  }
  memcpy(ins, m->in, sizeof *ins * (size_t)m->nin);
  memcpy(outs, m->out, sizeof *outs * (size_t)m->nout);
  for (int j = 0; j < m->nout; j++)
    outs[j]->producer = C;
  C->in = ins, C->nin = m->nin;
  C->out = outs, C->nout = m->nout;
  P->dead = 1;
  if (ir_vprog_encode(g, C, &out)) st = nomem(d, C);
  if (st == ST_OK) st = ir_vprog_check(C, out.ins, out.count, d);
  arena_free(&tmp);
  return st;
}

/* One sweep of merges over g->nodes; *merged counts them, *resort is set
 * when a merged node kept an output that an earlier node may read. */
static status merge_sweep(ir_graph *g, int one_origin, unsigned char *mark, int *merged, int *resort,
                          diag *d) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *C = g->nodes[i];
    if (C->dead || C->op != IR_OP_VECPROG) continue;
    for (int j = 0; j < C->nin; j++) {
      ir_node *P = C->in[j]->producer;
      merge_plan m;
      if (!P || P->dead || P->op != IR_OP_VECPROG || (one_origin && P->origin != C->origin) ||
          !plan_merge(g, P, C, &m) || other_path(g, P, C, mark))
        continue;
      status st = merge(g, P, C, &m, d);
      if (st) return st;
      (*merged)++;
      for (int k = 0; k < P->nout; k++)
        *resort |= m.keep[k] >= 0;
      if (*resort) return ST_OK; /* positions are stale until the caller re-sorts */
      j = -1;                    /* C's inputs changed: look at them again */
    }
  }
  return ST_OK;
}

status pass_vectorize(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (!n->dead && ir_vexpand_supported(n->op)) st = to_program(g, n, &scratch, d);
  }
  unsigned char *mark = st ? NULL : arena_alloc(&scratch, (size_t)g->next_node_id + 1);
  if (st == ST_OK && !mark) st = diag_set(d, ST_ERR_NOMEM, "vectorize: out of memory");
  int one_origin = (ctx->fusion_off & FUSION_VECTOR_PROGRAM) != 0;
  for (int merged = 1; st == ST_OK && merged;) {
    int resort = 0;
    merged = 0;
    st = merge_sweep(g, one_origin, mark, &merged, &resort, d);
    if (st == ST_OK) ir_graph_compact(g);
    if (st == ST_OK && resort) st = ir_graph_toposort(g, d);
  }
  arena_free(&scratch);
  return st;
}
