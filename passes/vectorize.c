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
 *            The node's attributes go but "precision" (ir/ops.def).
 *            2. programs merge: while some VectorProgram C reads an output of
 *            a VectorProgram P with the same output dims, the same
 *            "precision" attribute, and the merged
 *            program would have <= 7 inputs and <= 8 tensors in all, at most
 *            VPROG_MAX_INSTRS instructions (counting both programs whole), and
 *            no cycle would form (no other path from P to C), P's instructions
 *            are put in front of C's, C's LOADs of P's outputs read P's
 *            registers, and P goes. An output of P that something besides C
 *            reads (or that is a graph output) stays an output of the merged
 *            node, after C's own (unless C's outputs are wider than that
 *            output, which then is the cheaper one to hand on: an int8
 *            activation C dequantizes stays C's to load). So chains and
 *            trees fuse into one program,
 *            and so do siblings that share an intermediate; a program whose
 *            output dims differ from its consumer's (a [N,C,1,1] squeeze
 *            feeding an [N,C,H,W] scale) stays separate, so nothing is
 *            recomputed per broadcast element; a chain longer than one
 *            program holds is split into several. The merged node keeps C's
 *            name.
 *            When ctx->fusion_off has FUSION_VECTOR_PROGRAM
 *            (VectorProgramFusionPass:off, part of the op-by-op build), step
 *            2 merges only programs of one origin (ir_node.origin: the
 *            pieces a decomposition or a lowering made of one ONNX op), so
 *            every ONNX op is one program.
 *   Cost:    a merge costs O(instructions of both programs), at most
 *            2 x VPROG_MAX_INSTRS; a sweep looks up readers in a table and
 *            positions in an array, so a chain of N ops takes O(N) merges.
 *            Sweeps repeat until one merges nothing, each from the start
 *            and sharing one table of readers, positions and members: a
 *            sweep ends early at a merge that keeps an output an earlier
 *            node may read, and only the nodes between the two programs
 *            are put back in order (RAFT's 1,350 tasks take ~3,300 sweeps).
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
  const char *prec = ir_attr_string(n, "precision", NULL);
  n->op = IR_OP_VECPROG;
  n->in = ins;
  n->nin = nslots;
  n->nattrs = 0;
  if (ir_vprog_encode(g, n, &p) || (prec && ir_attr_set_string(g, n, "precision", prec))) return nomem(d, n);
  return ir_vprog_check(n, p.ins, p.count, d);
}

static int same_dims(const ir_value *a, const ir_value *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* A merge sweep decides which programs merge, then builds each merged
 * program once. Deciding needs only the nodes' tensor lists: a merge of P
 * into C gives C the planned inputs and outputs and puts P's members in
 * front of C's in C's member list. As P's instructions go in front of C's,
 * C's program is its members' own programs, in list order, one after the
 * other; build_program splices them so, LOADs of a value an earlier member
 * computed reading that member's register and STOREs of values no longer
 * outputs dropped, exactly as merging two programs at a time would. */
typedef struct member {
  ir_node *first, *next, *last; /* first, last: of the list this node heads;
                                   next: the member after this one */
  ir_value **in, **out;         /* the node's own tensors, its program's slots */
  int nout;                     /* entries of out */
  int count;                    /* instructions of the members' programs in all */
} member;

/* What the merge sweeps know about the graph, kept from one sweep to the
 * next: each node's position in g->nodes (merging only marks nodes dead;
 * reorder_window moves the few nodes a kept output puts out of order),
 * the readers of every value, a mark per node for other_path, the members
 * and register of each value for build_program, and each node's
 * "precision" attribute. */
typedef struct sweep {
  int *pos;            /* by node id */
  member *mem;         /* by node id */
  unsigned char *mark; /* by node id, all 0 between questions */
  int *reg;            /* by value id: the register a member stored it from, or -1 */
  const char **prec;   /* by node id: its "precision", "" when none */
  ir_node **held;      /* reorder_window's dependents */
  ir_uses uses;        /* kept current across merges */
} sweep;

/* Instructions in VectorProgram n's program (its prog attribute, ops.def). */
static int instr_count(const ir_node *n) {
  const ir_attr *prog = ir_attr_find(n, "prog");
  return prog ? prog->n / 6 : 0;
}

/* 1 when some path from P reaches C through another node (then merging P
 * into C would make a cycle). g->nodes is topologically sorted, so only the
 * nodes between P and C can be on such a path. */
static int other_path(const ir_graph *g, const ir_node *P, const ir_node *C, sweep *sw) {
  int from = sw->pos[P->id], to = sw->pos[C->id];
  unsigned char *mark = sw->mark;
  mark[P->id] = 1;
  for (int i = from + 1; i < to; i++) {
    const ir_node *x = g->nodes[i];
    for (int j = 0; j < x->nin && !x->dead && !mark[x->id]; j++)
      if (x->in[j] && x->in[j]->producer && mark[x->in[j]->producer->id]) mark[x->id] = 1;
  }
  int found = 0;
  for (int j = 0; j < C->nin; j++) {
    const ir_node *q = C->in[j]->producer;
    if (q && q != P && mark[q->id]) found = 1;
  }
  mark[P->id] = 0; /* clear for the next question */
  for (int i = from + 1; i < to; i++)
    mark[g->nodes[i]->id] = 0;
  return found;
}

typedef struct merge_plan {
  ir_value *in[VPROG_MAX_IO];
  int nin;
  ir_value *out[VPROG_MAX_IO];
  int nout;
} merge_plan;

/* Decides whether P merges into C; fills the plan. A merge whose program
 * could exceed VPROG_MAX_INSTRS is not made: the chain splits there. */
static int plan_merge(const ir_node *P, const ir_node *C, const sweep *sw, merge_plan *m) {
  if (!same_dims(P->out[0], C->out[0]) || sw->mem[P->id].count + sw->mem[C->id].count > VPROG_MAX_INSTRS)
    return 0;
  m->nin = m->nout = 0;
  for (int j = 0; j < C->nout; j++)
    m->out[m->nout++] = C->out[j];
  for (int j = 0; j < P->nout; j++) {
    int read_by_c = 0;
    for (int i = 0; i < C->nin; i++)
      read_by_c += C->in[i] == P->out[j];
    if (sw->uses.count[P->out[j]->id] > read_by_c || !read_by_c) {
      if (m->nout == VPROG_MAX_IO) return 0;
      m->out[m->nout++] = P->out[j];
      /* P's output stays stored, and C's outputs, wider, would be stored
       * where C loads it: an int8 activation that C dequantizes for a
       * later reader. C reading the narrow value itself costs less. */
      for (int i = 0; i < C->nout && read_by_c; i++)
        if (dtype_size(C->out[i]->dtype) > dtype_size(P->out[j]->dtype)) return 0;
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

/* Merges P into C per plan m: C's tensors and members; the program is built
 * at the end of the sweep. *kept is set when an output of P stays one. */
static status merge(ir_graph *g, ir_node *P, ir_node *C, const merge_plan *m, sweep *sw, int *kept, diag *d) {
  ir_value **ins = arena_array(&g->arena, (size_t)m->nin, sizeof *ins);
  ir_value **outs = arena_array(&g->arena, (size_t)m->nout, sizeof *outs);
  if (!ins || !outs) return nomem(d, C);
  memcpy(ins, m->in, sizeof *ins * (size_t)m->nin);
  memcpy(outs, m->out, sizeof *outs * (size_t)m->nout);
  *kept = m->nout > C->nout;
  for (int j = 0; j < m->nout; j++)
    outs[j]->producer = C;
  ir_uses_node(&sw->uses, P, -1);
  ir_uses_node(&sw->uses, C, -1);
  C->in = ins, C->nin = m->nin;
  C->out = outs, C->nout = m->nout;
  P->dead = 1;
  ir_uses_node(&sw->uses, C, 1);
  member *mp = &sw->mem[P->id], *mc = &sw->mem[C->id];
  sw->mem[mp->last->id].next = mc->first;
  mc->first = mp->first;
  mc->count += mp->count;
  return ST_OK;
}

static int slot_of(ir_value *const *vals, int count, const ir_value *v) {
  for (int i = 0; i < count; i++)
    if (vals[i] == v) return i;
  return -1;
}

/* Appends member X's own program to p, for the merged node C. */
static status splice(ir_vprog *p, ir_node *X, ir_node *C, sweep *sw, arena *tmp, diag *d) {
  ir_vprog q;
  status st = ir_vprog_read(X, tmp, &q, d);
  if (st) return st;
  const member *mx = &sw->mem[X->id];
  int *map = arena_array(tmp, (size_t)q.nregs + 1, sizeof *map);
  if (!map) return nomem(d, C);
  for (int k = 0; k < q.count; k++) {
    om_vinstr in = q.ins[k];
    if (in.op == VOP_LOAD) {
      const ir_value *v = mx->in[in.a];
      if (sw->reg[v->id] >= 0) { /* an earlier member computed it */
        map[in.dst] = sw->reg[v->id];
        continue;
      }
      int slot = slot_of(C->in, C->nin, v);
      if (slot < 0) return ir_node_error(d, ST_ERR_INVALID, C, "merged program lost input '%s'", v->name);
      in.a = (uint16_t)slot;
      if ((map[in.dst] = ir_vprog_append(p, in)) < 0) return nomem(d, C);
      continue;
    }
    if (in.op == VOP_STORE) {
      const ir_value *v = mx->out[in.a];
      sw->reg[v->id] = map[in.b];
      int slot = slot_of(C->out, C->nout, v);
      if (slot < 0) continue; /* read only by later members */
      in.a = (uint16_t)slot;
      in.b = (uint16_t)map[in.b];
      if (ir_vprog_append(p, in) < 0) return nomem(d, C);
      continue;
    }
    int ops = in.op >= VOP_SELECT ? 3 : in.op >= VOP_ADD ? 2 : in.op >= VOP_CAST ? 1 : 0;
    if (ops > 0) in.a = (uint16_t)map[in.a];
    if (ops > 1) in.b = (uint16_t)map[in.b];
    if (ops > 2) in.c = (uint16_t)map[in.c];
    if ((map[in.dst] = ir_vprog_append(p, in)) < 0) return nomem(d, C);
  }
  return ST_OK;
}

/* Builds merged node C's program from its members' and checks it. */
static status build_program(ir_graph *g, ir_node *C, sweep *sw, diag *d) {
  arena tmp;
  arena_init(&tmp, 0);
  ir_vprog out;
  ir_vprog_init(&out, &tmp);
  status st = ST_OK;
  for (ir_node *X = sw->mem[C->id].first; X && st == ST_OK; X = sw->mem[X->id].next)
    st = splice(&out, X, C, sw, &tmp, d);
  for (ir_node *X = sw->mem[C->id].first; X; X = sw->mem[X->id].next) /* clear the registers */
    for (int j = 0; j < sw->mem[X->id].nout; j++)
      sw->reg[sw->mem[X->id].out[j]->id] = -1;
  if (st == ST_OK && ir_vprog_encode(g, C, &out)) st = nomem(d, C);
  if (st == ST_OK) st = ir_vprog_check(C, out.ins, out.count, d);
  arena_free(&tmp);
  return st;
}

/* Node n as a program of one member: its own tensors and instructions. */
static void member_reset(sweep *sw, ir_node *n) {
  sw->mem[n->id] =
      (member){.first = n, .last = n, .in = n->in, .out = n->out, .nout = n->nout, .count = instr_count(n)};
}

static status sweep_init(ir_graph *g, arena *a, sweep *sw, diag *d) {
  sw->pos = arena_array(a, (size_t)g->next_node_id + 1, sizeof *sw->pos);
  sw->mem = arena_array(a, (size_t)g->next_node_id + 1, sizeof *sw->mem);
  sw->mark = arena_alloc(a, (size_t)g->next_node_id + 1);
  sw->reg = arena_array(a, (size_t)g->nvalues + 1, sizeof *sw->reg);
  sw->prec = arena_array(a, (size_t)g->next_node_id + 1, sizeof *sw->prec);
  sw->held = arena_array(a, (size_t)g->nnodes + 1, sizeof *sw->held);
  if (!sw->pos || !sw->mem || !sw->mark || !sw->reg || !sw->prec || !sw->held)
    return diag_set(d, ST_ERR_NOMEM, "vectorize: out of memory");
  status st = ir_uses_build(g, a, &sw->uses, d);
  for (int i = 0; i < g->nvalues; i++)
    sw->reg[i] = -1;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    sw->pos[n->id] = i;
    sw->prec[n->id] = ir_attr_string(n, "precision", "");
    member_reset(sw, n);
  }
  return st;
}

/* 1 when x, a live node between P's old place and C's, reads a value that
 * C or a marked node computes, as a tensor or as a count (ir/count.h). */
static int reads_marked(const ir_node *x, const ir_node *C, const unsigned char *mark) {
  for (int j = 0; j < x->nin; j++) {
    const ir_value *v = x->in[j];
    for (int k = 0; v && k < 2; k++, v = v->count_axis >= 0 ? v->count : NULL)
      if (v->producer && (v->producer == C || mark[v->producer->id])) return 1;
  }
  return 0;
}

/* After P (at `from`) merged into C (at `to`) keeping an output that nodes
 * between them read, the order is what ir_graph_toposort (Kahn, the
 * earliest ready node first) makes of it: the nodes in between that do not
 * depend on C's outputs, in order, then C, then those that do, in order;
 * the rest of g->nodes stays where it is. */
static void reorder_window(ir_graph *g, int from, int to, sweep *sw) {
  ir_node *C = g->nodes[to];
  int k = from, nd = 0;
  for (int i = from; i < to; i++) { /* the others move up (P, dead, too); the dependents wait in held */
    ir_node *x = g->nodes[i];
    if (!x->dead && reads_marked(x, C, sw->mark)) {
      sw->mark[x->id] = 1;
      sw->held[nd++] = x;
    } else {
      g->nodes[k++] = x;
    }
  }
  g->nodes[k++] = C;
  memcpy(g->nodes + k, sw->held, sizeof *sw->held * (size_t)nd);
  for (int i = from; i <= to; i++) {
    sw->pos[g->nodes[i]->id] = i;
    sw->mark[g->nodes[i]->id] = 0;
  }
}

/* One sweep of merges over g->nodes; *merged counts them. It stops after a
 * merge that keeps an output of P which an earlier node may read: then the
 * window between P and C is put in order, and the caller sweeps again
 * from the start, as it does after any sweep that merged. */
static status merge_sweep(ir_graph *g, sweep *sw, int one_origin, int *merged, diag *d) {
  status st = ST_OK;
  int from = -1, to = -1;
  for (int i = 0; i < g->nnodes && st == ST_OK && from < 0; i++) {
    ir_node *C = g->nodes[i];
    if (C->dead || C->op != IR_OP_VECPROG) continue;
    for (int j = 0; j < C->nin; j++) {
      ir_node *P = C->in[j]->producer;
      merge_plan m;
      int kept = 0;
      if (!P || P->dead || P->op != IR_OP_VECPROG || (one_origin && P->origin != C->origin) ||
          strcmp(sw->prec[P->id], sw->prec[C->id]) != 0 || !plan_merge(P, C, sw, &m) ||
          other_path(g, P, C, sw))
        continue;
      st = merge(g, P, C, &m, sw, &kept, d);
      if (st) break;
      (*merged)++;
      if (kept) { /* readers of the kept output may come before C */
        from = sw->pos[P->id], to = i;
        break;
      }
      j = -1; /* C's inputs changed: look at them again */
    }
  }
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *C = g->nodes[i];
    if (C->dead || C->op != IR_OP_VECPROG || sw->mem[C->id].first == C) continue;
    st = build_program(g, C, sw, d);
    member_reset(sw, C); /* the next sweep sees the program built */
  }
  if (st == ST_OK && from >= 0) reorder_window(g, from, to, sw);
  return st;
}

status pass_vectorize(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena scratch;
  arena_init(&scratch, 0);
  status st = ST_OK;
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    ir_node *n = g->nodes[i];
    if (!n->dead && ir_vexpand_supported(n->op)) st = to_program(g, n, &scratch, d);
  }
  arena_free(&scratch);
  int one_origin = (ctx->fusion_off & FUSION_VECTOR_PROGRAM) != 0;
  arena tmp;
  arena_init(&tmp, 0);
  sweep sw;
  if (st == ST_OK) st = sweep_init(g, &tmp, &sw, d);
  for (int merged = 1; st == ST_OK && merged;) {
    merged = 0;
    st = merge_sweep(g, &sw, one_origin, &merged, d);
  }
  arena_free(&tmp);
  if (st == ST_OK) ir_graph_compact(g);
  return st;
}
