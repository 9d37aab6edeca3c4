/* onnx_counted.c - shape arithmetic on counts at import (ir/count.h).
 *
 * A counted value's Shape is a run-time value (onnx_import_shape: its
 * count among the static dims), and exports compute with it: pick the
 * count out (Gather), Unsqueeze it, Concat it with constants, add 0 or 1,
 * compare it with -1 (torch's Expand), Cast it. Such a small i64 vector is
 * read here element by element (sym_eval): each element a constant or a
 * count plus a constant offset, so the count's compile-time bound (the
 * extent of the axis it counts) bounds the element. The ops that take such
 * a vector as a shape or an extent then stay static at the bound and carry
 * the count:
 *
 *   Slice     an end holding x's own count along that axis ends at the
 *             count (all of x's rows); an end holding another count c
 *             along a dense axis, from 0 with step 1, keeps rows [0, c):
 *             a Gather of them by a counted iota (c <= its bound <= the
 *             axis' length), counted by c.
 *   Reshape   an element holding the count of x's counted axis is that
 *             axis' bound; the count rules carry the count through.
 *   Expand    likewise; where x has extent 1 on that axis the rows are
 *             copies and a Gather by the counted iota counts them.
 *   ConstantOfShape  the fill at the bound, counted by the one count
 *             among constants (a counted constant).
 *   Range     from s to s + c with step 1: the constant s, s+1, ... at
 *             c's bound, counted by c.
 *   Flatten   merging x's counted axis with the axes after it: the
 *             Reshape to its two extents, with the Reshape's merge below.
 * And the consumers that would read the padding as data take the count:
 *   Concat    of one input along its counted axis is that input (its
 *             count kept: a single-tensor torch.cat).
 *   NonZero   of a counted input sees zeros past the count.
 *   ScatterElements  with indices and updates counted alike (torchvision's
 *             per-level RoI pooling result[idx] = level): the padding
 *             indices point at a spare slot one past x's extent along the
 *             axis (x concatenated with zeros there), and the output is a
 *             Gather of x's own slots, counted as x is.
 * An element holding a count that the op cannot place (x counted by
 * another count, or dense where the shape needs the count) is refused
 * naming the node, the input and the count.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "frontend/onnx_internal.h"

/* One element of a small integer vector: count + k (count NULL: k). */
typedef struct sym {
  const ir_value *count;
  int64_t k;
} sym;

enum { SYM_MAX = 2 * MAX_RANK, SYM_DEPTH = 24 };

static status nomem(onnx_node *nd) { return onnx_node_fail(nd, ST_ERR_NOMEM, "out of memory"); }

int64_t onnx_count_bound(const ir_value *c) {
  const ir_node *p = c ? c->producer : NULL;
  for (int k = 0; p && k < p->nout; k++)
    if (p->out[k] && p->out[k]->count == c && p->out[k]->count_axis >= 0)
      return p->out[k]->dims[p->out[k]->count_axis];
  return -1;
}

static int is_int(dtype dt) { return dt == DT_INT64 || dt == DT_INT32 || dt == DT_BOOL; }

/* Broadcast index: element i of an operand of n elements in a result of m. */
static int pick(int n, int i) { return n == 1 ? 0 : i; }

/* Elements of v (rank <= 1, at most SYM_MAX) as constants and counts into
 * out; their number, or -1 when some element is neither. */
static int sym_eval(const ir_value *v, sym *out, int depth) {
  int64_t n = v ? ir_value_elements(v) : -1;
  if (!v || !is_int(v->dtype) || v->rank > 1 || n < 0 || n > SYM_MAX || depth > SYM_DEPTH) return -1;
  if (v->data) {
    for (int64_t i = 0; i < n; i++)
      out[i] = (sym){NULL, elem_get_int(v->data, v->dtype, (size_t)i)};
    return (int)n;
  }
  if (n == 1 && v->dtype == DT_INT64 && onnx_count_bound(v) >= 0) {
    out[0] = (sym){v, 0};
    return 1;
  }
  const ir_node *p = v->producer;
  if (!p) return -1;
  sym a[SYM_MAX], b[SYM_MAX], c[SYM_MAX];
  switch (p->op) {
  case IR_OP_IDENTITY:
  case IR_OP_RESHAPE:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_FLATTEN: return sym_eval(p->in[0], out, depth + 1) == n ? (int)n : -1;
  case IR_OP_CAST: /* between integer types: counts and shape values fit */
    return is_int(p->in[0]->dtype) && v->dtype != DT_BOOL && sym_eval(p->in[0], out, depth + 1) == n ? (int)n
                                                                                                     : -1;
  case IR_OP_CONCAT: {
    int at = 0;
    if (ir_attr_int(p, "axis", 0) != 0 && ir_attr_int(p, "axis", 0) != -1) return -1;
    for (int j = 0; j < p->nin; j++) {
      int m = p->in[j] && at < SYM_MAX ? sym_eval(p->in[j], out + at, depth + 1) : -1;
      if (m < 0 || at + m > SYM_MAX) return -1;
      at += m;
    }
    return at == n ? at : -1;
  }
  case IR_OP_GATHER: {
    const ir_value *x = p->in[0], *ix = p->in[1];
    int m = ir_attr_int(p, "axis", 0) == 0 && ix->data && x->rank == 1 ? sym_eval(x, a, depth + 1) : -1;
    if (m < 0 || ir_value_elements(ix) != n) return -1;
    for (int64_t i = 0; i < n; i++) {
      int64_t k = elem_get_int(ix->data, ix->dtype, (size_t)i);
      k = k < 0 ? k + m : k;
      if (k < 0 || k >= m) return -1;
      out[i] = a[k];
    }
    return (int)n;
  }
  case IR_OP_ADD:
  case IR_OP_SUB:
  case IR_OP_MUL:
  case IR_OP_EQUAL: {
    int na = sym_eval(p->in[0], a, depth + 1), nb = na >= 0 ? sym_eval(p->in[1], b, depth + 1) : -1;
    if (na < 1 || nb < 1 || (na != n && na != 1) || (nb != n && nb != 1)) return -1;
    for (int i = 0; i < n; i++) {
      sym x = a[pick(na, i)], y = b[pick(nb, i)];
      if (x.count && y.count) return -1;
      if (p->op == IR_OP_ADD) {
        out[i] = (sym){x.count ? x.count : y.count, x.k + y.k};
      } else if (p->op == IR_OP_SUB) {
        if (y.count) return -1;
        out[i] = (sym){x.count, x.k - y.k};
      } else if (p->op == IR_OP_MUL) {
        if ((x.count && y.k != 1) || (y.count && x.k != 1)) return -1;
        out[i] = (sym){x.count ? x.count : y.count, x.count ? x.k : y.count ? y.k : x.k * y.k};
      } else { /* a count lies in [0, bound]: equal to a constant outside it never */
        sym s = x.count ? x : y;
        int64_t m = x.count ? y.k : x.k, bound = s.count ? onnx_count_bound(s.count) : 0;
        if (s.count && m - s.k >= 0 && m - s.k <= bound) return -1;
        out[i] = (sym){NULL, s.count ? 0 : x.k == y.k};
      }
    }
    return (int)n;
  }
  case IR_OP_WHERE: {
    int nc = sym_eval(p->in[0], c, depth + 1);
    int na = nc >= 0 ? sym_eval(p->in[1], a, depth + 1) : -1,
        nb = na >= 0 ? sym_eval(p->in[2], b, depth + 1) : -1;
    if (nc < 1 || na < 1 || nb < 1) return -1;
    for (int i = 0; i < n; i++) {
      sym t = c[pick(nc, i)];
      if (t.count) return -1;
      out[i] = t.k ? a[pick(na, i)] : b[pick(nb, i)];
    }
    return (int)n;
  }
  default: return -1;
  }
}

/* i64 constant [0, 1, ..., bound) (+ start) counted along 0 by c. */
static ir_value *counted_iota(onnx_node *nd, const char *tag, int64_t start, const ir_value *c,
                              int64_t bound) {
  int64_t *iota = arena_array(&nd->c->scratch, (size_t)bound + 1, sizeof *iota);
  for (int64_t i = 0; iota && i < bound; i++)
    iota[i] = start + i;
  char name[300];
  snprintf(name, sizeof name, "%.270s_%s", nd->out[0]->name, tag);
  ir_value *v =
      iota ? ir_const_new(nd->c->g, name, DT_INT64, 1, &bound, iota, (size_t)bound * sizeof *iota) : NULL;
  if (v) v->count_axis = 0, v->count = (ir_value *)c;
  return v;
}

/* The rows [0, count) of x along axis a (dense there, count's bound at most
 * its extent): Gather by the counted iota, counted by count. */
static ir_value *counted_rows(onnx_node *nd, ir_value *x, int a, const ir_value *count, const char *tag) {
  ir_graph *g = nd->c->g;
  char name[300];
  ir_value *ix = counted_iota(nd, tag, 0, count, onnx_count_bound(count));
  snprintf(name, sizeof name, "%.270s_%s_rows", nd->out[0]->name, tag);
  ir_value *y = ix ? ir_value_new(g, name, x->dtype) : NULL, *in[2] = {x, ix};
  ir_node *gn = y ? ir_node_new(g, IR_OP_GATHER, NULL, 2, in, 1, &y) : NULL;
  if (!gn || ir_attr_set_int(g, gn, "axis", a)) return NULL;
  int64_t dims[MAX_RANK]; /* what its inference will say, for the importer reading y next */
  memcpy(dims, x->dims, sizeof dims);
  dims[a] = ix->dims[0];
  ir_value_set_shape(y, x->rank, dims);
  y->count_axis = a, y->count = (ir_value *)count;
  return y;
}

static status refuse(onnx_node *nd, int i, int e, const ir_value *c, const char *why) {
  return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                        "input %d '%s' element %d holds the run-time count '%s' (bound %" PRId64 "): %s", i,
                        nd->in[i]->name, e, c->name, onnx_count_bound(c), why);
}

/* A 1-D i64 constant of s[0, n) with each count replaced by its bound plus
 * the offset, named after the node. */
static ir_value *at_bounds(onnx_node *nd, const sym *s, int n, const char *tag) {
  int64_t v[SYM_MAX], len = n;
  for (int i = 0; i < n; i++)
    v[i] = s[i].count ? onnx_count_bound(s[i].count) + s[i].k : s[i].k;
  char name[300];
  snprintf(name, sizeof name, "%.280s_%s", nd->out[0]->name, tag);
  return ir_const_new(nd->c->g, name, DT_INT64, 1, &len, v, (size_t)n * sizeof *v);
}

status onnx_counted_slice_end(onnx_node *nd, ir_node *n) {
  ir_value *x = nd->in[0], *ax = nd->nin > 3 ? nd->in[3] : NULL, *st = nd->in[1];
  ir_value *sp = nd->nin > 4 ? nd->in[4] : NULL;
  sym e[SYM_MAX];
  int ne = sym_eval(nd->in[2], e, 0), changed = 0;
  if (ne < 1 || (ax && !ax->data) || !st->data || (sp && !sp->data) || ir_value_elements(st) != ne)
    return ST_OK;
  for (int i = 0; i < ne; i++) {
    if (!e[i].count) continue;
    int64_t a = ax ? elem_get_int(ax->data, ax->dtype, (size_t)i) : i;
    a = a < 0 ? a + x->rank : a;
    int64_t s0 = elem_get_int(st->data, st->dtype, (size_t)i),
            step = sp ? elem_get_int(sp->data, sp->dtype, (size_t)i) : 1;
    if (a < 0 || a >= x->rank || e[i].k != 0) return ST_OK; /* refused by name after */
    if (x->count_axis == a && x->count == e[i].count) {
      e[i] = (sym){NULL, INT64_MAX}; /* to x's count: all of x's rows */
      changed = 1;
      continue;
    }
    if (x->count_axis == a || s0 != 0 || step != 1 || onnx_count_bound(e[i].count) > x->dims[a])
      return refuse(nd, 2, i, e[i].count,
                    x->count_axis == a
                        ? "the input is counted along that axis by another count"
                        : "a Slice to a count takes rows from 0 in steps of 1, and the count's bound "
                          "must fit the axis");
    if (x->count_axis >= 0 && x->count) return ST_OK; /* counted along another axis: the count rules say */
    ir_value *y = counted_rows(nd, x, (int)a, e[i].count, "to_count");
    if (!y || ir_node_set_input(nd->c->g, n, 0, y)) return nomem(nd);
    nd->in[0] = x = y;
    e[i] = (sym){NULL, INT64_MAX};
    changed = 1;
  }
  if (!changed) return ST_OK;
  ir_value *v = at_bounds(nd, e, ne, "ends");
  if (!v) return nomem(nd);
  nd->in[2] = v;
  return ST_OK;
}

/* Reshape and Expand: shape input 1's counts placed at x's counted axis. */
status onnx_counted_shape_input(onnx_node *nd, ir_node *n) {
  ir_value *x = nd->in[0], *sh = nd->in[1];
  sym s[SYM_MAX];
  int m = sh && !sh->data ? sym_eval(sh, s, 0) : -1, expand = n->op == IR_OP_EXPAND;
  if (m < 1) return ST_OK;
  const ir_value *other = NULL;
  int at = -1;
  for (int i = 0; i < m; i++) {
    if (!s[i].count) continue;
    if (s[i].k != 0)
      return refuse(nd, 1, i, s[i].count, "a shape may hold a count, not a count plus a constant");
    if (x->count && x->count_axis >= 0 && x->count == s[i].count) continue;
    /* Expand of a dense axis of extent 1 to the count: copies, counted after */
    int b = i - (m - x->rank);
    if (!expand || other || (x->count && x->count_axis >= 0) || (b >= 0 && x->dims[b] != 1))
      return refuse(nd, 1, i, s[i].count,
                    x->count && x->count_axis >= 0 ? "input 0 is counted by another count"
                                                   : "input 0 is not counted by it");
    other = s[i].count, at = i;
  }
  ir_value *v = at_bounds(nd, s, m, "shape_at_bound");
  if (!v) return nomem(nd);
  if (!expand) return ir_node_set_input(nd->c->g, n, 1, v) ? nomem(nd) : ST_OK;
  int64_t dims[MAX_RANK];
  memcpy(dims, v->data, (size_t)m * sizeof *dims);
  if (ir_attr_set_ints(nd->c->g, n, "shape", m, dims)) return nomem(nd);
  n->nin = 1;
  if (!other) return ST_OK;
  /* y = Expand(x) at the bound, dense; the ONNX output is its counted rows */
  char name[300];
  snprintf(name, sizeof name, "%.280s_at_bound", nd->out[0]->name);
  ir_value *y = ir_value_new(nd->c->g, name, x->dtype), *out = nd->out[0];
  if (!y) return nomem(nd);
  int rank = m > x->rank ? m : x->rank;
  ir_value *ix = counted_iota(nd, "to_count", 0, other, onnx_count_bound(other)), *gin[2] = {y, ix};
  n->out[0] = y, y->producer = n;
  ir_node *gn = ix ? ir_node_new(nd->c->g, IR_OP_GATHER, NULL, 2, gin, 1, &out) : NULL;
  return gn && !ir_attr_set_int(nd->c->g, gn, "axis", at + (rank - m)) ? ST_OK : nomem(nd);
}

int onnx_counted_fill(onnx_node *nd, ir_node *n, const ir_value *value, status *st) {
  sym s[SYM_MAX];
  int m = sym_eval(nd->in[0], s, 0), axis = -1;
  if (m < 0 || m > MAX_RANK) return 0;
  for (int i = 0; i < m; i++) {
    if (!s[i].count) continue;
    if (axis >= 0 || s[i].k != 0) return 0; /* two counts, or count + k: not a counted fill */
    axis = i;
  }
  if (axis < 0) return 0;
  int64_t dims[MAX_RANK];
  for (int i = 0; i < m; i++)
    dims[i] = s[i].count ? onnx_count_bound(s[i].count) : s[i].k;
  ir_value probe = {.dtype = value->dtype, .rank = m};
  memcpy(probe.dims, dims, sizeof(int64_t) * (size_t)m);
  int64_t bytes = ir_value_bytes(&probe), total = ir_value_elements(&probe);
  size_t es = dtype_size(value->dtype);
  unsigned char *data = bytes >= 0 && es ? arena_alloc_aligned(&nd->c->scratch, (size_t)bytes + 1, 64) : NULL;
  if (bytes < 0 || !es) {
    *st = onnx_node_fail(nd, ST_ERR_LIMIT, "the fill of shape %s is too large", ir_dims_str(m, dims));
    return 1;
  }
  for (int64_t i = 0; data && i < total; i++)
    memcpy(data + (size_t)i * es, value->data, es);
  char name[300];
  snprintf(name, sizeof name, "%.280s_fill", nd->out[0]->name);
  ir_value *c = data ? ir_const_new(nd->c->g, name, value->dtype, m, dims, data, (size_t)bytes) : NULL;
  if (!c) {
    *st = nomem(nd);
    return 1;
  }
  c->count_axis = axis, c->count = (ir_value *)s[axis].count;
  n->op = IR_OP_IDENTITY;
  n->in[0] = c, n->nin = 1;
  *st = ST_OK;
  return 1;
}

status onnx_counted_range(onnx_node *nd, ir_node *n) {
  sym s[3][SYM_MAX];
  for (int j = 0; j < 3; j++)
    if (!nd->in[j] || ir_value_elements(nd->in[j]) != 1 || nd->in[j]->dtype != DT_INT64 ||
        sym_eval(nd->in[j], s[j], 0) != 1)
      return ST_OK; /* Range's own rule says what is wrong */
  const sym start = s[0][0], limit = s[1][0], delta = s[2][0];
  if (!limit.count || start.count || delta.count) return ST_OK;
  if (delta.k != 1 || limit.k != start.k)
    return refuse(nd, 1, 0, limit.count,
                  "a Range to a count runs from its start to start + count in steps of 1");
  ir_value *v = counted_iota(nd, "range", start.k, limit.count, onnx_count_bound(limit.count));
  if (!v) return nomem(nd);
  n->op = IR_OP_IDENTITY, n->nattrs = 0;
  n->in[0] = v, n->nin = 1;
  return ST_OK;
}

status onnx_counted_nonzero_input(onnx_node *nd, ir_node *n) {
  ir_value *x = nd->in[0];
  if (x->count_axis < 0 || !x->count) return ST_OK;
  ir_value *y = onnx_counted_masked(nd, x, 0.0, "nonzero");
  return y && !ir_node_set_input(nd->c->g, n, 0, y) ? ST_OK : nomem(nd);
}

ir_value *onnx_counted_masked(onnx_node *nd, ir_value *x, double neutral, const char *tag) {
  ir_graph *g = nd->c->g;
  int a = x->count_axis, r = x->rank - a; /* iota [b, 1, ..., 1] lines up with x's axis a */
  int64_t b = x->dims[a], dims[MAX_RANK];
  int64_t *iota = arena_array(&nd->c->scratch, (size_t)b + 1, sizeof *iota);
  unsigned char nv[16];
  for (int64_t i = 0; iota && i < b; i++)
    iota[i] = i;
  for (int d = 0; d < r; d++)
    dims[d] = d ? 1 : b;
  if (!dtype_size(x->dtype) || dtype_size(x->dtype) > sizeof nv) return NULL;
  elem_put(nv, x->dtype, 0, neutral);
  char name[300];
  snprintf(name, sizeof name, "%.260s_%s_rows", nd->out[0]->name, tag);
  ir_value *rows = iota ? ir_const_new(g, name, DT_INT64, r, dims, iota, (size_t)b * sizeof *iota) : NULL;
  snprintf(name, sizeof name, "%.260s_%s_neutral", nd->out[0]->name, tag);
  ir_value *nc = rows ? ir_const_new(g, name, x->dtype, 0, dims, nv, dtype_size(x->dtype)) : NULL;
  snprintf(name, sizeof name, "%.260s_%s_valid", nd->out[0]->name, tag);
  ir_value *mask = nc ? ir_value_new(g, name, DT_BOOL) : NULL, *lin[2] = {rows, x->count};
  snprintf(name, sizeof name, "%.260s_%s_masked", nd->out[0]->name, tag);
  ir_value *y =
      mask && ir_node_new(g, IR_OP_LESS, NULL, 2, lin, 1, &mask) ? ir_value_new(g, name, x->dtype) : NULL;
  ir_value *win[3] = {mask, x, nc};
  return y && ir_node_new(g, IR_OP_WHERE, NULL, 3, win, 1, &y) ? y : NULL;
}

/* A new node op(in) with one output of dtype dt named after nd's output
 * and tag; its output, or NULL out of memory. */
static ir_value *node1(onnx_node *nd, ir_op op, int nin, ir_value *const *in, dtype dt, const char *tag) {
  char name[300];
  snprintf(name, sizeof name, "%.270s_%s", nd->out[0]->name, tag);
  ir_value *y = ir_value_new(nd->c->g, name, dt);
  return y && ir_node_new(nd->c->g, op, NULL, nin, in, 1, &y) ? y : NULL;
}

/* Zeros of x's dtype and dims but extent `len` along axis a. */
static ir_value *zeros_like(onnx_node *nd, const ir_value *x, int a, int64_t len, const char *tag) {
  int64_t dims[MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[a] = len;
  ir_value probe = {.dtype = x->dtype, .rank = x->rank};
  memcpy(probe.dims, dims, sizeof dims);
  int64_t bytes = ir_value_bytes(&probe);
  void *z = bytes >= 0 ? arena_array(&nd->c->scratch, (size_t)bytes + 1, 1) : NULL;
  if (!z) return NULL;
  memset(z, 0, (size_t)bytes + 1);
  char name[300];
  snprintf(name, sizeof name, "%.270s_%s", nd->out[0]->name, tag);
  return ir_const_new(nd->c->g, name, x->dtype, x->rank, dims, z, (size_t)bytes);
}

status onnx_counted_scatter(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  ir_value *x = nd->in[0], *ix = nd->in[1], *up = nd->in[2];
  if (ix->count_axis < 0 || !ix->count) return ST_OK;
  int a = (int)ir_attr_int(n, "axis", 0), c = ix->count_axis;
  a = a < 0 ? a + x->rank : a;
  if (a < 0 || a >= x->rank || up->count != ix->count || up->count_axis != c)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                          "input 1 '%s' (indices) is counted along axis %d by '%s'; the updates '%s' must be "
                          "counted alike",
                          ix->name, c, ix->count->name, up->name);
  if (x->count && x->count_axis >= 0 && x->count_axis != a)
    return onnx_node_fail(nd, ST_ERR_UNSUPPORTED,
                          "input 0 '%s' is counted along axis %d, not the scatter axis %d, and the indices "
                          "are counted",
                          x->name, x->count_axis, a);
  /* x with one more slot along a, where the padding indices point */
  int64_t slot = x->dims[a], rd[MAX_RANK] = {0};
  ir_value *row = zeros_like(nd, x, a, 1, "spare_slot"), *cin[2] = {x, row};
  ir_value *wide = row ? node1(nd, IR_OP_CONCAT, 2, cin, x->dtype, "with_spare_slot") : NULL;
  if (!wide || ir_attr_set_int(g, wide->producer, "axis", a) ||
      ir_attr_set_int(g, wide->producer, "with_padding", 1))
    return nomem(nd);
  int64_t *iota = arena_array(&nd->c->scratch, (size_t)ix->dims[c] + 1, sizeof *iota);
  for (int64_t i = 0; iota && i < ix->dims[c]; i++)
    iota[i] = i;
  for (int d = c; d < ix->rank; d++)
    rd[d - c] = d == c ? ix->dims[c] : 1;
  char name[300];
  snprintf(name, sizeof name, "%.270s_index_rows", nd->out[0]->name);
  ir_value *rows =
      iota ? ir_const_new(g, name, DT_INT64, ix->rank - c, rd, iota, (size_t)ix->dims[c] * 8) : NULL;
  unsigned char sv[8];
  elem_put(sv, ix->dtype, 0, (double)slot);
  snprintf(name, sizeof name, "%.270s_spare_index", nd->out[0]->name);
  ir_value *spare = rows ? ir_const_new(g, name, ix->dtype, 0, rd, sv, dtype_size(ix->dtype)) : NULL;
  ir_value *lin[2] = {rows, ix->count},
           *valid = spare ? node1(nd, IR_OP_LESS, 2, lin, DT_BOOL, "index_valid") : NULL;
  ir_value *win[3] = {valid, ix, spare},
           *ix2 = valid ? node1(nd, IR_OP_WHERE, 3, win, ix->dtype, "indices") : NULL;
  snprintf(name, sizeof name, "%.270s_with_spare_slot_out", nd->out[0]->name);
  ir_value *y = ix2 ? ir_value_new(g, name, x->dtype) : NULL, *out = nd->out[0];
  if (!y || ir_node_set_input(g, n, 0, wide) || ir_node_set_input(g, n, 1, ix2) ||
      ir_attr_set_int(g, n, "with_padding", 1))
    return nomem(nd);
  n->out[0] = y, y->producer = n;
  /* the slots of x: counted as x is */
  ir_value *keep = x->count && x->count_axis == a ? counted_iota(nd, "slots", 0, x->count, slot) : NULL;
  if (!keep) {
    int64_t *all = arena_array(&nd->c->scratch, (size_t)slot + 1, sizeof *all);
    for (int64_t i = 0; all && i < slot; i++)
      all[i] = i;
    snprintf(name, sizeof name, "%.270s_slots", nd->out[0]->name);
    keep = all ? ir_const_new(g, name, DT_INT64, 1, &slot, all, (size_t)slot * sizeof *all) : NULL;
  }
  ir_value *gin[2] = {y, keep};
  ir_node *gn = keep ? ir_node_new(g, IR_OP_GATHER, NULL, 2, gin, 1, &out) : NULL;
  return gn && !ir_attr_set_int(g, gn, "axis", a) ? ST_OK : nomem(nd);
}

/* Reshape n of x counted along a that merges a with the axes after it into
 * one output axis (torchvision's boxes.reshape(-1, 4) of [count, classes,
 * 4]): the valid elements of that axis are a prefix of count x the merged
 * extents. n reshapes the bound (attr with_padding: the count stays
 * behind), and the rows below count x those extents (a Mul at run time)
 * are gathered, counted by that product. Does nothing when the count's
 * axis maps to an output axis of its own. */
status onnx_counted_reshape_merge(onnx_node *nd, ir_node *n) {
  ir_graph *g = nd->c->g;
  ir_value *x = nd->in[0], *sh = n->nin > 1 ? n->in[1] : NULL;
  int a = x->count_axis;
  if (a < 0 || !x->count || !sh || !sh->data || sh->rank != 1 || sh->dims[0] > MAX_RANK) return ST_OK;
  int r = (int)sh->dims[0], infer = -1;
  int64_t dims[MAX_RANK], known = 1, total = ir_value_elements(x);
  for (int i = 0; i < r; i++) {
    int64_t d = ((const int64_t *)sh->data)[i];
    dims[i] = d == 0 && i < x->rank && !ir_attr_int(n, "allowzero", 0) ? x->dims[i] : d;
    if (dims[i] == -1) {
      if (infer >= 0) return ST_OK;
      infer = i;
    } else if (dims[i] < 0) {
      return ST_OK;
    } else {
      known *= dims[i];
    }
  }
  if (infer >= 0) dims[infer] = known > 0 ? total / known : 0;
  int64_t before = 1, after = 1, out_before = 1;
  for (int i = 0; i < a; i++)
    before *= x->dims[i];
  for (int b = 0; b < r; b++, out_before *= dims[b - 1]) {
    if (out_before != before) continue;
    if (dims[b] == x->dims[a]) return ST_OK; /* its own axis: the count rules carry it */
    after = 1;
    for (int j = a + 1; j < x->rank && x->dims[a] * after < dims[b]; j++)
      after *= x->dims[j];
    if (x->dims[a] * after != dims[b] || after < 1) return ST_OK;
    char name[300];
    snprintf(name, sizeof name, "%.270s_merged", nd->out[0]->name);
    ir_value *k = ir_const_new(g, name, DT_INT64, 1, (const int64_t[]){1}, &after, sizeof after);
    ir_value *min[2] = {x->count, k}, *count = k ? node1(nd, IR_OP_MUL, 2, min, DT_INT64, "count") : NULL;
    snprintf(name, sizeof name, "%.270s_at_bound", nd->out[0]->name);
    ir_value *y = count ? ir_value_new(g, name, x->dtype) : NULL, *out = nd->out[0];
    int64_t *iota = y ? arena_array(&nd->c->scratch, (size_t)dims[b] + 1, sizeof *iota) : NULL;
    for (int64_t i = 0; iota && i < dims[b]; i++)
      iota[i] = i;
    snprintf(name, sizeof name, "%.270s_valid_rows", nd->out[0]->name);
    ir_value *ix =
        iota ? ir_const_new(g, name, DT_INT64, 1, &dims[b], iota, (size_t)dims[b] * sizeof *iota) : NULL;
    if (!ix || ir_attr_set_int(g, n, "with_padding", 1)) return nomem(nd);
    ix->count_axis = 0, ix->count = count;
    n->out[0] = y, y->producer = n;
    ir_value *gin[2] = {y, ix};
    ir_node *gn = ir_node_new(g, IR_OP_GATHER, NULL, 2, gin, 1, &out);
    return gn && !ir_attr_set_int(g, gn, "axis", b) ? ST_OK : nomem(nd);
  }
  return ST_OK;
}

status onnx_counted_flatten(onnx_node *nd, ir_node *n) {
  ir_value *x = nd->in[0];
  int64_t axis = ir_attr_int(n, "axis", 1), dims[2] = {1, 1}, two = 2;
  axis = axis < 0 ? axis + x->rank : axis;
  if (x->count_axis < 0 || !x->count || axis < 0 || axis > x->rank) return ST_OK; /* Flatten's rule says */
  for (int i = 0; i < x->rank; i++)
    dims[i >= axis] *= x->dims[i];
  if (dims[x->count_axis >= axis] == x->dims[x->count_axis]) return ST_OK; /* alone: carried */
  for (int i = x->count_axis >= axis ? (int)axis : 0; i < x->count_axis; i++)
    if (x->dims[i] != 1) return ST_OK; /* merged with axes before it: refused by the count rules */
  char name[300];
  snprintf(name, sizeof name, "%.280s_shape", nd->out[0]->name);
  ir_value *sh = ir_const_new(nd->c->g, name, DT_INT64, 1, &two, dims, sizeof dims);
  n->op = IR_OP_RESHAPE, n->nattrs = 0;
  if (!sh || ir_node_set_input(nd->c->g, n, 1, sh) || ir_attr_set_int(nd->c->g, n, "allowzero", 0))
    return nomem(nd);
  return onnx_counted_reshape_merge(nd, n);
}
