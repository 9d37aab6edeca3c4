/* memplan.c - one workspace arena, liveness-based offsets.
 *
 * Needs: layout and tiling have run (value layouts, dtypes and dims final);
 * g->nodes topologically sorted; every value has a known shape.
 * Changes: region, offset and bytes of every value; marks Reshape-family
 * nodes and Concats that need no copy with the attribute alias=1 and Convs
 * and QConvs that write over their residual with over_input=3 or 4; sets
 * ctx->workspace_bytes and ctx->workspace_lower_bound.
 * Leaves true: constants are WEIGHTS (their offsets are assigned by emit),
 * graph inputs INPUT and outputs OUTPUT at offset 0, everything else
 * WORKSPACE at a 64-byte aligned offset with offset + bytes <=
 * workspace_bytes; two workspace values whose lifetimes overlap never
 * overlap in memory unless they are aliases of one buffer.
 *
 * Lifetimes: time t is a node's position in g->nodes. A value lives from
 * the node that writes it through the last node that reads it (both
 * inclusive: a node's inputs and outputs are live together, so no task
 * writes over its own input); a counted input's count lives as long, for
 * the task may read it (GATHER's extent). Unread values live at their producer only,
 * but the count of a counted graph output (ir.h) lives to the end: the
 * runtime reads it after the last task.
 *
 * Aliases: an ND -> ND Reshape/Flatten/Squeeze/Unsqueeze/Identity whose
 * input and output are workspace values of one dtype, or a BitCast between
 * workspace values, is a no-op on memory:
 * the output shares the input's buffer (same offset), the buffer's lifetime
 * is the union of both, and emit produces no task for the node (alias=1).
 * Any other such node is emitted as a TRANSDATA copy. A view op
 * (ir/view.h) whose walk is a gapless C-order run of its input (a
 * Transpose that moves only dims of 1, a Slice of leading rows; ND
 * workspace values of one dtype, the run at a 64-byte multiple) is a
 * no-op too: its output is that run of the input's buffer, and emit produces no
 * STRIDED_COPY (alias=1). Any other view is a STRIDED_COPY.
 * A Concat whose output holds its inputs one after the other in memory
 * (NC1HWC0 along C with N = 1 and every input but the last a whole number
 * of channel blocks; ND along an axis with only 1s before it) is a no-op
 * too when its inputs are workspace values of its dtype and layout that
 * alias nothing yet: each input is placed inside the output's buffer at its
 * byte offset there, so its producer writes it in place (SqueezeNet's fire
 * modules, Inception and DenseNet blocks), and emit produces no COPY_SLICE
 * (alias=1). An alias is a value with a parent in the same buffer and a
 * byte offset from the parent's start; a buffer lives from the first write
 * to the last read of any of its values.
 * A cube Conv (FRACTAL_Z, FRACTAL_Z_G or FRACTAL_Z_3D weights: a CONV2D or
 * CONV3D task) with a
 * residual writes its output over the residual when the Conv is the
 * residual's last reader, reads it in no other slot, and both are workspace
 * values of one dtype, layout and size that alias nothing (or, for the
 * residual, only an earlier residual it was written over, a chain through
 * ResNet's identity blocks): CONV2D reads
 * each residual element before it writes the output element at the same
 * place (om_format.h), so the output streams through the residual's lines
 * instead of a second buffer's (ResNet's residual blocks). Such a Conv gets
 * the attribute over_input=3 (its output shares input 3's buffer). So does
 * a QConv with a residual (QCONV2D's r, read before y at each element, as
 * om_tasks.h allows): over_input=4.
 *
 * Memory of its own (atc --disable_reuse_memory=1: every workspace value;
 * OP_NO_REUSE_MEM: the outputs of the nodes it names, ctx->no_reuse_nodes):
 * the value's buffer is placed as if it lived from the first node to the
 * last, so it shares bytes with no other buffer, and no Conv writes over
 * it or writes its output over a residual (the aliases of views and
 * in-place Concats stay: they overwrite nothing).
 *
 * Phases (pass_memplan, one function each): regions and sizes; lifetimes
 * and the view and Concat aliases, in node order; the values with memory
 * of their own; Convs over their
 * residuals, once every last reader is known; each value's root buffer and
 * offset in it; the buffers and their lifetimes; the lower bound; the
 * placement; the offsets written back.
 *
 * Placement: each buffer (an alias group) is an interval of time x a size.
 * The lower bound is the largest sum of sizes live at any one time. Offsets
 * are found greedily: take the buffers in some order, put each at an offset
 * that overlaps no already placed buffer whose interval meets its own. Two
 * orders (size descending, then start ascending) times two gap rules (the
 * lowest gap that fits; the smallest gap that fits, else the top) are tried
 * and the smallest arena wins; size-descending best-fit is usually within a
 * few percent of the bound on ResNet-style residual graphs. A placed buffer
 * is listed at every time step it lives, so finding the ones a new buffer
 * must avoid walks its own lifetime, not every buffer placed before it: on a
 * long chain the pass is linear in its nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/view.h"
#include "pass.h"

/* What the pass knows of one value (indexed by value id). */
typedef struct mp_value {
  int parent;       /* value whose buffer this one lives in (itself when none) */
  uint64_t sub;     /* bytes from the parent's start */
  int root;         /* the end of the parent chain: the buffer's value */
  uint64_t at;      /* bytes from the root's start */
  int def, last;    /* node positions of its writer and last reader, -1 when none */
  int children;     /* values whose parent it is */
  uint8_t over;     /* a Conv's output written over its residual */
  uint8_t own;      /* memory of its own (--disable_reuse_memory, OP_NO_REUSE_MEM) */
  uint8_t resolved; /* root and at are final */
  int buf;          /* index in mp_state.bufs of its root's buffer, -1 outside the workspace */
} mp_value;

typedef struct mp_buf {
  uint64_t size;   /* bytes */
  int start, end;  /* node positions, inclusive */
  uint64_t offset; /* bytes, 64-aligned; result of the current strategy */
} mp_buf;

typedef struct mp_state {
  ir_graph *g;
  arena a;
  mp_value *val; /* [g->nvalues] */
  int ntimes;    /* live nodes */
  mp_buf *bufs;  /* [nbufs] */
  int nbufs;
  /* placement scratch: per time step the placed buffers living then (a
   * linked list through `next`), and a stamp per buffer so one is
   * collected once */
  int *head, *next_of, *owner, *stamp, nlinks;
  mp_buf **order, **tmp;
  diag *d;
} mp_state;

static status nomem(mp_state *s) { return diag_set(s->d, ST_ERR_NOMEM, "memplan: out of memory"); }

static uint64_t align64(uint64_t n) { return (n + OM_ALIGN - 1) & ~(uint64_t)(OM_ALIGN - 1); }

/* Whether Concat n can be a no-op on memory (the header says when): its
 * output a workspace value that aliases nothing, each input a distinct
 * workspace value of the output's dtype and layout that aliases nothing,
 * laid out one after the other in the output. */
static int concat_in_place(const mp_state *s, const ir_node *n) {
  const ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (y->region != IR_REGION_WORKSPACE || s->val[y->id].parent != y->id || axis < 0 || axis >= y->rank)
    return 0;
  if (y->layout == LAYOUT_NC1HWC0) {
    if (axis != 1 || y->dims[0] != 1) return 0;
  } else if (y->layout == LAYOUT_ND) {
    for (int64_t k = 0; k < axis; k++)
      if (y->dims[k] != 1) return 0;
  } else {
    return 0;
  }
  uint64_t bytes = 0;
  for (int j = 0; j < n->nin; j++) {
    const ir_value *x = n->in[j];
    if (x->region != IR_REGION_WORKSPACE || s->val[x->id].parent != x->id || x->dtype != y->dtype ||
        x->layout != y->layout)
      return 0;
    if (y->layout == LAYOUT_NC1HWC0 && j + 1 < n->nin && x->dims[1] % C0) return 0;
    for (int k = 0; k < j; k++)
      if (n->in[k] == x) return 0;
    bytes += x->bytes;
  }
  return bytes == y->bytes;
}

/* The residual input of node n whose kernel reads each residual element
 * before it writes the output element at the same place: a cube Conv's
 * (3: FRACTAL_Z, FRACTAL_Z_G or FRACTAL_Z_3D weights, a CONV2D or CONV3D
 * task) or a QConv's (4: QCONV2D's r); -1 for none. */
static int residual_input(const ir_node *n) {
  if (n->op == IR_OP_QCONV) return n->nin > 4 && !ir_qconv_dynamic(n) ? 4 : -1;
  if (n->op != IR_OP_CONV || n->nin < 4 || !n->in[3]) return -1;
  const int wl = n->in[1]->layout;
  return wl == LAYOUT_FRACTAL_Z || wl == LAYOUT_FRACTAL_Z_G || wl == LAYOUT_FRACTAL_Z_3D ? 3 : -1;
}

/* Whether node n (at position t) can write its output over its residual,
 * input k (the header says when). */
static int over_residual(const mp_state *s, const ir_node *n, int t, int k) {
  if (k < 0) return 0;
  const ir_value *r = n->in[k], *y = n->out[0];
  const mp_value *rv = &s->val[r->id], *yv = &s->val[y->id];
  if (r->region != IR_REGION_WORKSPACE || y->region != IR_REGION_WORKSPACE || rv->last != t) return 0;
  if (r->dtype != y->dtype || r->layout != y->layout || r->bytes != y->bytes) return 0;
  if ((rv->parent != r->id && !rv->over) || yv->parent != y->id || rv->children || yv->children) return 0;
  for (int j = 0; j < n->nin; j++)
    if (j != k && n->in[j] == r) return 0;
  return 1;
}

/* Whether view node n (ir/view.h: Transpose, Slice, Expand, ...; one
 * output) reads its input in C order without gaps, so that y is a run of
 * x's bytes in place: ND workspace values of one dtype, every step of the
 * walk (dims of 1 aside) the size of the dims after it, the run starting
 * at a 64-byte multiple (*sub, bytes from x's start) inside x. A Transpose
 * that only moves dims of 1, a Slice of leading rows. */
static int view_in_place(const ir_node *n, uint64_t *sub) {
  const ir_value *x = n->in[0], *y = n->out[0];
  if (!ir_view_op(n->op) || n->nout != 1 || x->region != IR_REGION_WORKSPACE ||
      y->region != IR_REGION_WORKSPACE || x->layout != LAYOUT_ND || y->layout != LAYOUT_ND ||
      x->dtype != y->dtype || ir_value_elements(y) <= 0)
    return 0;
  ir_view v;
  char err[256];
  if (ir_view_build(n, 0, x->rank, x->dims, &v, err, sizeof err)) return 0;
  int64_t step = 1;
  for (int d = v.rank - 1; d >= 0; d--) {
    if (v.dims[d] == 1) continue;
    if (v.strides[d] != step) return 0;
    step *= v.dims[d];
  }
  const uint64_t es = (uint64_t)dtype_size(y->dtype);
  if (v.offset < 0 || (uint64_t)v.offset * es % OM_ALIGN) return 0;
  *sub = (uint64_t)v.offset * es;
  return *sub + y->bytes <= x->bytes;
}

/* Node n moves x's bytes unchanged into y when both are ND workspace values
 * of one size and, for the Reshape family (ops.def lay COPY), one dtype; a
 * BitCast (lay REINTERPRET) changes only the dtype. */
static int is_view(const ir_node *n) {
  const ir_value *x = n->in[0], *y = n->out[0];
  ir_lay lay = ir_ops[n->op].lay;
  return (lay == IR_LAY_COPY || lay == IR_LAY_REINTERPRET) && x->region == IR_REGION_WORKSPACE &&
         y->region == IR_REGION_WORKSPACE && x->layout == LAYOUT_ND && y->layout == LAYOUT_ND &&
         (x->dtype == y->dtype || lay == IR_LAY_REINTERPRET) && x->bytes == y->bytes;
}

/* --- phases ------------------------------------------------------------- */

/* Regions and sizes: constants WEIGHTS, graph inputs INPUT, outputs OUTPUT,
 * the rest WORKSPACE. */
static status plan_regions(mp_state *s) {
  for (int i = 0; i < s->g->nvalues; i++) {
    ir_value *v = s->g->values[i];
    int64_t bytes = ir_value_bytes(v);
    if (bytes < 0) return diag_set(s->d, ST_ERR_INVALID, "memplan: value '%s' has no known size", v->name);
    v->bytes = (uint64_t)bytes;
    v->offset = 0;
    s->val[i] = (mp_value){.parent = i, .root = i, .def = -1, .last = -1, .buf = -1};
    if (v->data)
      v->region = IR_REGION_WEIGHTS;
    else if (v->input_index >= 0)
      v->region = IR_REGION_INPUT;
    else if (v->output_index >= 0)
      v->region = IR_REGION_OUTPUT;
    else if (v->producer)
      v->region = IR_REGION_WORKSPACE;
    else
      return diag_set(s->d, ST_ERR_INVALID, "memplan: value '%s' has no producer", v->name);
  }
  return ST_OK;
}

/* Lifetimes, and the views and Concats that need no copy (alias=1), in
 * node order. */
static status plan_lifetimes(mp_state *s) {
  int t = 0;
  for (int i = 0; i < s->g->nnodes; i++) {
    ir_node *n = s->g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nin; j++) /* a counted input's count too: a task may read it (GATHER) */
      for (const ir_value *v = n->in[j]; v; v = v->count_axis >= 0 ? v->count : NULL)
        s->val[v->id].last = t;
    for (int j = 0; j < n->nout; j++)
      s->val[n->out[j]->id].def = t;
    const ir_value *x = n->in[0], *y = n->out[0];
    int alias = 0;
    uint64_t sub = 0;
    if (is_view(n) || view_in_place(n, &sub)) {
      s->val[y->id].parent = x->id, s->val[y->id].sub = sub;
      alias = 1;
    } else if (n->op == IR_OP_CONCAT && concat_in_place(s, n)) {
      uint64_t off = 0;
      for (int j = 0; j < n->nin; j++) {
        mp_value *v = &s->val[n->in[j]->id];
        v->parent = y->id, v->sub = off, off += n->in[j]->bytes;
      }
      alias = 1;
    }
    if (alias && ir_attr_set_int(s->g, n, "alias", 1)) return nomem(s);
    t++;
  }
  s->ntimes = t;
  for (int i = 0; i < s->g->noutputs; i++) { /* a counted output's count is read after the last task */
    const ir_value *c = s->g->outputs[i]->count;
    if (c && s->g->outputs[i]->count_axis >= 0 && t > 0) s->val[c->id].last = t - 1;
  }
  return ST_OK;
}

/* An entry of OP_NO_REUSE_MEM's list: a name, and whether it named anything. */
typedef struct mp_entry {
  const char *name;
  int len, hit;
} mp_entry;

/* The entries of list ("a,b,...", blanks around the names ignored) into
 * e (room for as many as list has commas, plus one); returns their count. */
static int split_entries(const char *list, mp_entry *e) {
  int n = 0;
  while (*list) {
    while (*list == ' ' || *list == ',')
      list++;
    int len = (int)strcspn(list, ","), m = len;
    while (m > 0 && list[m - 1] == ' ')
      m--;
    if (m) e[n++] = (mp_entry){list, m, 0};
    list += len;
  }
  return n;
}

/* 1 when one of the n entries is name (marking each that is). */
static int listed(mp_entry *e, int n, const char *name) {
  int found = 0;
  for (int i = 0; i < n; i++)
    if ((size_t)e[i].len == strlen(name) && !memcmp(e[i].name, name, (size_t)e[i].len)) e[i].hit = found = 1;
  return found;
}

/* The values that get memory of their own: every workspace value under
 * ctx->no_reuse, else the outputs of the nodes ctx->no_reuse_nodes names
 * (by node name or op type). An entry that names nothing is reported
 * through ctx->note. */
static status plan_own(mp_state *s, const pass_ctx *ctx) {
  const char *list = ctx->no_reuse_nodes ? ctx->no_reuse_nodes : "";
  int cap = 1;
  for (const char *c = list; *c; c++)
    cap += *c == ',';
  mp_entry *e = arena_array(&s->a, (size_t)cap, sizeof *e);
  if (!e) return nomem(s);
  const int n = split_entries(list, e);
  if (!ctx->no_reuse && !n) return ST_OK;
  for (int i = 0; i < s->g->nnodes; i++) {
    const ir_node *x = s->g->nodes[i];
    /* both lookups: each marks the entries it matches */
    if (x->dead || !(ctx->no_reuse | listed(e, n, x->name) | listed(e, n, ir_ops[x->op].name))) continue;
    for (int j = 0; j < x->nout; j++)
      s->val[x->out[j]->id].own = 1;
  }
  if (!ctx->note || ctx->copy_weights) return ST_OK; /* gear 0 speaks for every gear */
  for (int i = 0; i < n; i++)
    if (!e[i].hit) {
      char msg[300];
      snprintf(msg, sizeof msg,
               "memplan: OP_NO_REUSE_MEM entry '%.*s' names no node or op type of the compiled graph "
               "(names as --dump_graph shows them)",
               e[i].len > 200 ? 200 : e[i].len, e[i].name);
      ctx->note(ctx->note_user, msg);
    }
  return ST_OK;
}

/* Convs and QConvs over their residuals (over_input=3 or 4), now that
 * every value's last reader is known. */
static status plan_over_residuals(mp_state *s) {
  for (int i = 0; i < s->g->nvalues; i++)
    if (s->val[i].parent != i) s->val[s->val[i].parent].children++;
  int t = 0;
  for (int i = 0; i < s->g->nnodes; i++) {
    ir_node *n = s->g->nodes[i];
    if (n->dead) continue;
    const int k = residual_input(n);
    if (over_residual(s, n, t, k) && !s->val[n->out[0]->id].own && !s->val[n->in[k]->id].own) {
      s->val[n->out[0]->id].parent = n->in[k]->id;
      s->val[n->in[k]->id].children++;
      s->val[n->out[0]->id].over = 1;
      if (ir_attr_set_int(s->g, n, "over_input", k)) return nomem(s);
    }
    t++;
  }
  return ST_OK;
}

/* Each value's buffer (the root of its parents) and offset in it; every
 * parent was set once, by a view (to an earlier value), a Concat (to a
 * later one, never itself an alias then) or a Conv (to its residual, an
 * earlier value, aliasing nothing or an earlier residual), so the chains
 * end. Each value is resolved once: a walk stops at the first value
 * already resolved, then resolves the values it passed, nearest first. */
static status plan_roots(mp_state *s) {
  int *path = arena_array(&s->a, (size_t)s->g->nvalues + 1, sizeof *path);
  if (!path) return nomem(s);
  for (int i = 0; i < s->g->nvalues; i++) {
    int n = 0, r = i;
    while (!s->val[r].resolved && s->val[r].parent != r)
      path[n++] = r, r = s->val[r].parent;
    s->val[r].resolved = 1; /* a root (root = itself, at = 0) or resolved before */
    while (n > 0) {
      mp_value *v = &s->val[path[--n]];
      const mp_value *p = &s->val[v->parent];
      v->root = p->root, v->at = p->at + v->sub, v->resolved = 1;
    }
  }
  return ST_OK;
}

/* One buffer per workspace root, living from the first write to the last
 * read of any value in it (a view is written after its root, a Concat's
 * input before it). */
static status plan_buffers(mp_state *s) {
  s->bufs = arena_array(&s->a, (size_t)s->g->nvalues + 1, sizeof *s->bufs);
  if (!s->bufs) return nomem(s);
  for (int i = 0; i < s->g->nvalues; i++) {
    mp_value *v = &s->val[i];
    if (s->g->values[i]->region != IR_REGION_WORKSPACE || v->root != i) continue;
    v->buf = s->nbufs;
    s->bufs[s->nbufs++] = (mp_buf){s->g->values[i]->bytes, v->def, v->last > v->def ? v->last : v->def, 0};
  }
  for (int i = 0; i < s->g->nvalues; i++) {
    mp_value *v = &s->val[i];
    if (s->g->values[i]->region != IR_REGION_WORKSPACE || v->root == i) continue;
    mp_buf *b = &s->bufs[s->val[v->root].buf];
    int end = v->last > v->def ? v->last : v->def;
    if (end > b->end) b->end = end;
    if (v->def < b->start) b->start = v->def;
  }
  for (int i = 0; i < s->g->nvalues; i++) /* memory of its own: the buffer lives throughout */
    if (s->val[i].own && s->g->values[i]->region == IR_REGION_WORKSPACE) {
      mp_buf *b = &s->bufs[s->val[s->val[i].root].buf];
      b->start = 0, b->end = s->ntimes > 0 ? s->ntimes - 1 : 0;
    }
  return ST_OK;
}

/* The largest sum of sizes live at one time: a sweep over the start and
 * end events. */
static status plan_bound(mp_state *s, uint64_t *bound_out) {
  int64_t *delta = arena_array(&s->a, (size_t)s->ntimes + 2, sizeof *delta);
  if (!delta) return nomem(s);
  for (int i = 0; i < s->nbufs; i++) {
    delta[s->bufs[i].start] += (int64_t)s->bufs[i].size;
    delta[s->bufs[i].end + 1] -= (int64_t)s->bufs[i].size;
  }
  uint64_t live = 0, bound = 0;
  for (int t = 0; t < s->ntimes; t++) {
    live += (uint64_t)delta[t];
    if (live > bound) bound = live;
  }
  *bound_out = bound;
  return ST_OK;
}

/* qsort comparators over arrays of mp_buf pointers (all into one array, so
 * comparing the pointers themselves breaks ties deterministically). */
static int tie(const mp_buf *x, const mp_buf *y) { return x < y ? -1 : x > y; }
static int by_size_desc(const void *a, const void *b) {
  const mp_buf *x = *(mp_buf *const *)a, *y = *(mp_buf *const *)b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  if (x->start != y->start) return x->start - y->start;
  return tie(x, y);
}
static int by_start(const void *a, const void *b) {
  const mp_buf *x = *(mp_buf *const *)a, *y = *(mp_buf *const *)b;
  if (x->start != y->start) return x->start - y->start;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return tie(x, y);
}
static int by_offset(const void *a, const void *b) {
  const mp_buf *x = *(mp_buf *const *)a, *y = *(mp_buf *const *)b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return tie(x, y);
}

/* Places s->order[0..nbufs) in that order; best_fit picks the smallest gap
 * that fits instead of the lowest. Returns the arena size in bytes. */
static uint64_t place(mp_state *s, int best_fit) {
  uint64_t total = 0;
  for (int t = 0; t < s->ntimes; t++)
    s->head[t] = -1;
  for (int i = 0; i < s->nbufs; i++)
    s->stamp[i] = -1;
  s->nlinks = 0;
  for (int i = 0; i < s->nbufs; i++) {
    mp_buf *b = s->order[i];
    int self = (int)(b - s->bufs), nconf = 0;
    for (int t = b->start; t <= b->end; t++) /* the placed buffers living then */
      for (int l = s->head[t]; l >= 0; l = s->next_of[l])
        if (s->stamp[s->owner[l]] != i) s->stamp[s->owner[l]] = i, s->tmp[nconf++] = &s->bufs[s->owner[l]];
    qsort(s->tmp, (size_t)nconf, sizeof *s->tmp, by_offset);
    uint64_t cand = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (int j = 0; j < nconf; j++) {
      const mp_buf *o = s->tmp[j];
      if (cand + b->size <= o->offset) {
        uint64_t gap = o->offset - cand;
        if (!best_fit) {
          best = cand;
          break;
        }
        if (gap < best_gap) best_gap = gap, best = cand;
      }
      uint64_t end = align64(o->offset + o->size);
      if (end > cand) cand = end;
    }
    b->offset = best != UINT64_MAX ? best : cand;
    if (b->offset + b->size > total) total = b->offset + b->size;
    for (int t = b->start; t <= b->end; t++) {
      s->owner[s->nlinks] = self, s->next_of[s->nlinks] = s->head[t];
      s->head[t] = s->nlinks++;
    }
  }
  return align64(total);
}

/* Tries two orders x two gap rules and keeps the smallest arena's offsets
 * in best_off. */
static status plan_place(mp_state *s, uint64_t *arena_out, uint64_t **best_off_out) {
  size_t links = 0; /* buffer-time pairs */
  for (int i = 0; i < s->nbufs; i++)
    links += (size_t)(s->bufs[i].end - s->bufs[i].start + 1);
  uint64_t *best_off = arena_array(&s->a, (size_t)s->nbufs + 1, sizeof *best_off);
  s->order = arena_array(&s->a, (size_t)s->nbufs + 1, sizeof *s->order);
  s->tmp = arena_array(&s->a, (size_t)s->nbufs + 1, sizeof *s->tmp);
  s->stamp = arena_array(&s->a, (size_t)s->nbufs + 1, sizeof *s->stamp);
  s->head = arena_array(&s->a, (size_t)s->ntimes + 1, sizeof *s->head);
  s->next_of = arena_array(&s->a, links + 1, sizeof *s->next_of);
  s->owner = arena_array(&s->a, links + 1, sizeof *s->owner);
  if (!best_off || !s->order || !s->tmp || !s->stamp || !s->head || !s->next_of || !s->owner) return nomem(s);
  uint64_t best = UINT64_MAX;
  int (*const orders[2])(const void *, const void *) = {by_size_desc, by_start};
  for (int o = 0; o < 2; o++) {
    for (int i = 0; i < s->nbufs; i++)
      s->order[i] = &s->bufs[i];
    qsort(s->order, (size_t)s->nbufs, sizeof *s->order, orders[o]);
    for (int fit = 0; fit < 2; fit++) {
      uint64_t total = place(s, fit);
      if (total < best) {
        best = total;
        for (int i = 0; i < s->nbufs; i++)
          best_off[i] = s->bufs[i].offset;
      }
    }
  }
  *arena_out = s->nbufs ? best : 0;
  *best_off_out = best_off;
  return ST_OK;
}

status pass_memplan(ir_graph *g, pass_ctx *ctx, diag *d) {
  mp_state s = {.g = g, .d = d};
  arena_init(&s.a, 0);
  uint64_t bound = 0, total = 0, *offsets = NULL;
  s.val = arena_array(&s.a, (size_t)g->nvalues + 1, sizeof *s.val);
  status st = s.val ? plan_regions(&s) : nomem(&s);
  if (st == ST_OK) st = plan_lifetimes(&s);
  if (st == ST_OK) st = plan_own(&s, ctx);
  if (st == ST_OK) st = plan_over_residuals(&s);
  if (st == ST_OK) st = plan_roots(&s);
  if (st == ST_OK) st = plan_buffers(&s);
  if (st == ST_OK) st = plan_bound(&s, &bound);
  if (st == ST_OK) st = plan_place(&s, &total, &offsets);
  if (st == ST_OK) {
    for (int i = 0; i < g->nvalues; i++)
      if (g->values[i]->region == IR_REGION_WORKSPACE)
        g->values[i]->offset = offsets[s.val[s.val[i].root].buf] + s.val[i].at;
    ctx->workspace_bytes = total;
    ctx->workspace_lower_bound = bound;
  }
  arena_free(&s.a);
  return st;
}
