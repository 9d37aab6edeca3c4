/* memplan.c - one workspace arena, liveness-based offsets.
 *
 * Needs: layout and tiling have run (value layouts, dtypes and dims final);
 * g->nodes topologically sorted; every value has a known shape.
 * Changes: region, offset and bytes of every value; marks Reshape-family
 * nodes and Concats that need no copy with the attribute alias=1 and Convs
 * that write over their residual with over_input=3; sets
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
 * writes over its own input). Unread values live at their producer only.
 *
 * Aliases: an ND -> ND Reshape/Flatten/Squeeze/Unsqueeze/Identity whose
 * input and output are workspace values of one dtype is a no-op on memory:
 * the output shares the input's buffer (same offset), the buffer's lifetime
 * is the union of both, and emit produces no task for the node (alias=1).
 * Any other such node is emitted as a TRANSDATA copy.
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
 * A cube Conv (FRACTAL_Z or FRACTAL_Z_G weights: a CONV2D task) with a
 * residual writes its output over the residual when the Conv is the
 * residual's last reader, reads it in no other slot, and both are workspace
 * values of one dtype, layout and size that alias nothing (or, for the
 * residual, only an earlier residual it was written over, a chain through
 * ResNet's identity blocks): CONV2D reads
 * each residual element before it writes the output element at the same
 * place (om_format.h), so the output streams through the residual's lines
 * instead of a second buffer's (ResNet's residual blocks). Such a Conv gets
 * the attribute over_input=3 (its output shares input 3's buffer).
 *
 * Placement: each buffer (an alias group) is an interval of time x a size.
 * The lower bound is the largest sum of sizes live at any one time. Offsets
 * are found greedily: take the buffers in some order, put each at an offset
 * that overlaps no already placed buffer whose interval meets its own. Two
 * orders (size descending, then start ascending) times two gap rules (the
 * lowest gap that fits; the smallest gap that fits, else the top) are tried
 * and the smallest arena wins; size-descending best-fit is usually within a
 * few percent of the bound on ResNet-style residual graphs.
 */
#include <stdlib.h>

#include "pass.h"

typedef struct mp_buf {
  uint64_t size;   /* bytes */
  int start, end;  /* node positions, inclusive */
  uint64_t offset; /* bytes, 64-aligned; result of the current strategy */
} mp_buf;

static uint64_t align64(uint64_t n) { return (n + OM_ALIGN - 1) & ~(uint64_t)(OM_ALIGN - 1); }

/* Whether Concat n can be a no-op on memory (the header says when): its
 * output a workspace value that aliases nothing, each input a distinct
 * workspace value of the output's dtype and layout that aliases nothing,
 * laid out one after the other in the output. */
static int concat_in_place(const ir_node *n, const int *parent) {
  const ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (y->region != IR_REGION_WORKSPACE || parent[y->id] != y->id || axis < 0 || axis >= y->rank) return 0;
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
    if (x->region != IR_REGION_WORKSPACE || parent[x->id] != x->id || x->dtype != y->dtype ||
        x->layout != y->layout)
      return 0;
    if (y->layout == LAYOUT_NC1HWC0 && j + 1 < n->nin && x->dims[1] % C0) return 0;
    for (int k = 0; k < j; k++)
      if (n->in[k] == x) return 0;
    bytes += x->bytes;
  }
  return bytes == y->bytes;
}

/* Whether cube Conv n (at position t) can write its output over its
 * residual (the header says when). */
static int conv_over_residual(const ir_node *n, int t, const int *parent, const int *children,
                              const int *last, const uint8_t *over) {
  if (n->op != IR_OP_CONV || n->nin < 4 || !n->in[3]) return 0;
  const ir_value *r = n->in[3], *y = n->out[0], *w = n->in[1];
  if (w->layout != LAYOUT_FRACTAL_Z && w->layout != LAYOUT_FRACTAL_Z_G) return 0;
  if (r->region != IR_REGION_WORKSPACE || y->region != IR_REGION_WORKSPACE || last[r->id] != t) return 0;
  if (r->dtype != y->dtype || r->layout != y->layout || r->bytes != y->bytes) return 0;
  if ((parent[r->id] != r->id && !over[r->id]) || parent[y->id] != y->id || children[r->id] ||
      children[y->id])
    return 0;
  for (int j = 0; j < n->nin; j++)
    if (j != 3 && n->in[j] == r) return 0;
  return 1;
}

static int is_view_op(ir_op op) {
  return op == IR_OP_RESHAPE || op == IR_OP_FLATTEN || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE ||
         op == IR_OP_IDENTITY;
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

/* Places order[0..n) in that order; best_fit picks the smallest gap that
 * fits instead of the lowest. `tmp` has room for n pointers. Returns the
 * arena size in bytes. */
static uint64_t place(mp_buf **order, int n, int best_fit, mp_buf **tmp) {
  uint64_t total = 0;
  for (int i = 0; i < n; i++) {
    mp_buf *b = order[i];
    int nconf = 0;
    for (int j = 0; j < i; j++)
      if (order[j]->start <= b->end && b->start <= order[j]->end) tmp[nconf++] = order[j];
    qsort(tmp, (size_t)nconf, sizeof *tmp, by_offset);
    uint64_t cand = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (int j = 0; j < nconf; j++) {
      const mp_buf *o = tmp[j];
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
  }
  return align64(total);
}

status pass_memplan(ir_graph *g, pass_ctx *ctx, diag *d) {
  arena a;
  arena_init(&a, 0);
  int nv = g->nvalues;
  int *parent = arena_array(&a, (size_t)nv + 1, sizeof *parent),
      *root = arena_array(&a, (size_t)nv + 1, sizeof *root);
  uint64_t *sub = arena_array(&a, (size_t)nv + 1, sizeof *sub); /* bytes from the parent's start */
  uint64_t *at = arena_array(&a, (size_t)nv + 1, sizeof *at);   /* bytes from the root's start */
  int *def = arena_array(&a, (size_t)nv + 1, sizeof *def);
  int *last = arena_array(&a, (size_t)nv + 1, sizeof *last);
  int *children = arena_array(&a, (size_t)nv + 1, sizeof *children); /* values whose parent it is */
  uint8_t *over = arena_array(&a, (size_t)nv + 1, sizeof *over);     /* a Conv's output over its residual */
  int *buf_of = arena_array(&a, (size_t)nv + 1, sizeof *buf_of);
  mp_buf *bufs = arena_array(&a, (size_t)nv + 1, sizeof *bufs);
  mp_buf **order = arena_array(&a, (size_t)nv + 1, sizeof *order);
  mp_buf **tmp = arena_array(&a, (size_t)nv + 1, sizeof *tmp);
  status st = ST_OK;
  if (!parent || !root || !sub || !at || !def || !last || !children || !over || !buf_of || !bufs || !order ||
      !tmp) {
    st = diag_set(d, ST_ERR_NOMEM, "memplan: out of memory");
    goto done;
  }

  for (int i = 0; i < nv; i++) {
    ir_value *v = g->values[i];
    int64_t bytes = ir_value_bytes(v);
    if (bytes < 0) {
      st = diag_set(d, ST_ERR_INVALID, "memplan: value '%s' has no known size", v->name);
      goto done;
    }
    v->bytes = (uint64_t)bytes;
    v->offset = 0;
    parent[i] = i, sub[i] = 0;
    def[i] = last[i] = -1;
    if (v->data)
      v->region = IR_REGION_WEIGHTS;
    else if (v->input_index >= 0)
      v->region = IR_REGION_INPUT;
    else if (v->output_index >= 0)
      v->region = IR_REGION_OUTPUT;
    else if (v->producer)
      v->region = IR_REGION_WORKSPACE;
    else {
      st = diag_set(d, ST_ERR_INVALID, "memplan: value '%s' has no producer", v->name);
      goto done;
    }
  }

  /* Lifetimes and aliases, in node order. */
  int t = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j]) last[n->in[j]->id] = t;
    for (int j = 0; j < n->nout; j++)
      def[n->out[j]->id] = t;
    const ir_value *x = n->in[0], *y = n->out[0];
    int alias = 0;
    if (is_view_op(n->op) && x->region == IR_REGION_WORKSPACE && y->region == IR_REGION_WORKSPACE &&
        x->layout == LAYOUT_ND && y->layout == LAYOUT_ND && x->dtype == y->dtype && x->bytes == y->bytes) {
      parent[y->id] = x->id;
      alias = 1;
    } else if (n->op == IR_OP_CONCAT && concat_in_place(n, parent)) {
      uint64_t off = 0;
      for (int j = 0; j < n->nin; j++)
        parent[n->in[j]->id] = y->id, sub[n->in[j]->id] = off, off += n->in[j]->bytes;
      alias = 1;
    }
    if (alias && ir_attr_set_int(g, n, "alias", 1)) {
      st = diag_set(d, ST_ERR_NOMEM, "memplan: out of memory");
      goto done;
    }
    t++;
  }
  /* Convs over their residuals, now that every value's last reader is known. */
  for (int i = 0; i < nv; i++)
    children[i] = 0, over[i] = 0;
  for (int i = 0; i < nv; i++)
    if (parent[i] != i) children[parent[i]]++;
  t = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead) continue;
    if (conv_over_residual(n, t, parent, children, last, over)) {
      parent[n->out[0]->id] = n->in[3]->id;
      children[n->in[3]->id]++;
      over[n->out[0]->id] = 1;
      if (ir_attr_set_int(g, n, "over_input", 3)) {
        st = diag_set(d, ST_ERR_NOMEM, "memplan: out of memory");
        goto done;
      }
    }
    t++;
  }
  /* Each value's buffer (the root of its parents) and offset in it; every
   * parent was set once, by a view (to an earlier value), a Concat (to a
   * later one, never itself an alias then) or a Conv (to its residual, an
   * earlier value, aliasing nothing or an earlier residual), so the chains end. */
  for (int i = 0; i < nv; i++) {
    uint64_t off = 0;
    int r = i;
    while (parent[r] != r)
      off += sub[r], r = parent[r];
    root[i] = r, at[i] = off;
  }

  int nb = 0;
  for (int i = 0; i < nv; i++) {
    const ir_value *v = g->values[i];
    buf_of[i] = -1;
    if (v->region != IR_REGION_WORKSPACE) continue;
    if (root[i] == i) {
      buf_of[i] = nb;
      bufs[nb++] = (mp_buf){v->bytes, def[i], last[i] > def[i] ? last[i] : def[i], 0};
    }
  }
  /* Aliases extend their root's buffer, both ways: a view is written after
   * its root, a Concat's input before it. */
  for (int i = 0; i < nv; i++) {
    if (g->values[i]->region != IR_REGION_WORKSPACE || root[i] == i) continue;
    mp_buf *b = &bufs[buf_of[root[i]]];
    int end = last[i] > def[i] ? last[i] : def[i];
    if (end > b->end) b->end = end;
    if (def[i] < b->start) b->start = def[i];
  }

  uint64_t bound = 0;
  for (int time = 0; time < t; time++) {
    uint64_t live = 0;
    for (int i = 0; i < nb; i++)
      if (bufs[i].start <= time && time <= bufs[i].end) live += bufs[i].size;
    if (live > bound) bound = live;
  }

  uint64_t best = UINT64_MAX;
  uint64_t *best_off = arena_array(&a, (size_t)nb + 1, sizeof *best_off);
  if (!best_off) {
    st = diag_set(d, ST_ERR_NOMEM, "memplan: out of memory");
    goto done;
  }
  int (*const orders[2])(const void *, const void *) = {by_size_desc, by_start};
  for (int o = 0; o < 2; o++) {
    for (int i = 0; i < nb; i++)
      order[i] = &bufs[i];
    qsort(order, (size_t)nb, sizeof *order, orders[o]);
    for (int fit = 0; fit < 2; fit++) {
      uint64_t total = place(order, nb, fit, tmp);
      if (total < best) {
        best = total;
        for (int i = 0; i < nb; i++)
          best_off[i] = bufs[i].offset;
      }
    }
  }
  for (int i = 0; i < nv; i++)
    if (g->values[i]->region == IR_REGION_WORKSPACE) g->values[i]->offset = best_off[buf_of[root[i]]] + at[i];
  ctx->workspace_bytes = nb ? best : 0;
  ctx->workspace_lower_bound = bound;

done:
  arena_free(&a);
  return st;
}
