/* layout.c - data layouts: NC1HWC0 activations, FRACTAL_Z conv weights,
 * TransData where a consumer needs another layout or dtype.
 *
 * Needs: precision has run (value dtypes final, precision.h tells what each
 * node computes in); g->nodes topologically sorted.
 * Changes: the layout (and for constants also data, dtype, dims) of values;
 * adds TRANSDATA nodes; redirects producers of graph outputs through one.
 * Rejects what the backend cannot run with ST_ERR_UNSUPPORTED naming the node
 * and its op type, so this is the last pass that can refuse a model.
 * Leaves true: every node input has the layout and dtype its task kind
 * (common/om_format.h) reads; graph inputs and outputs are ND in the user's
 * dtype; g->nodes is topologically sorted; unused constants are compacted.
 *
 * Each node works in one of two domains:
 *   NC1HWC0  Conv (x, residual, y), MaxPool/AveragePool/Global*Pool, and
 *            rank-4 elementwise ops and Concat along axis 1 when one of their
 *            non-constant inputs already is NC1HWC0 (they follow the convs).
 *   ND       everything else: Flatten/Reshape/Squeeze/Unsqueeze/Identity/
 *            Cast (emitted as ND copies or aliases, which also cast f16<->f32,
 *            so they accept either float dtype), Softmax, graph I/O.
 * Walking the nodes in order, every float input is made to match what the
 * node wants, (domain layout, the node's compute dtype): a non-constant value
 * gets a TransData node, shared through a cache keyed by (value, layout,
 * dtype); a constant is converted at compile time instead (in place when the
 * node is its only reader, else as a cached copy). Conv weights become
 * FRACTAL_Z per common/types.h; depthwise weights [C,1,KH,KW] become NC1HWC0
 * with logical dims [1,C,KH,KW]; Conv bias is ND f32. Constant operands of
 * elementwise ops that broadcast are expanded to the full shape; broadcasting
 * between two computed values is unsupported. A node whose output is a graph
 * output but which computes in another layout or dtype writes a new value
 * that a TransData converts into the graph output.
 */
#include <stdio.h>
#include <string.h>

#include "common/fp16.h"
#include "pass.h"
#include "precision.h"

enum { ANY_DTYPE = DT_UNDEFINED };

typedef struct conv_entry {
  const ir_value *src;
  int layout, dtype;
  ir_value *dst;
} conv_entry;

typedef struct lay_state {
  ir_graph *g;
  om_precision precision;
  arena scratch;
  conv_entry *cache;
  int ncache, cache_cap;
  diag *d;
} lay_state;


static status unsupported(lay_state *s, const ir_node *n, const char *what) {
  return ir_node_error(s->d, ST_ERR_UNSUPPORTED, n, "%s", what);
}

static status nomem(lay_state *s, const ir_node *n) {
  return ir_node_error(s->d, ST_ERR_NOMEM, n, "out of memory in the layout pass");
}

static const char *layout_tag(int lay) {
  return lay == LAYOUT_NC1HWC0 ? "nc1hwc0" : lay == LAYOUT_FRACTAL_Z ? "fz" : "nd";
}

static int same_dims(const ir_value *a, int rank, const int64_t *dims) {
  if (a->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (a->dims[i] != dims[i]) return 0;
  return 1;
}

/* --- constant data conversion ------------------------------------------ */

static float load_elem(const void *data, int dt, uint64_t i) {
  if (dt == DT_FLOAT16) return half_to_float(((const uint16_t *)data)[i]);
  return ((const float *)data)[i];
}

static void store_elem(void *data, int dt, uint64_t i, float x) {
  if (dt == DT_FLOAT16)
    ((uint16_t *)data)[i] = float_to_half(x);
  else
    ((float *)data)[i] = x;
}

/* Physical index of logical element (a, b, c, e) of a rank-4 tensor with
 * logical dims `dm` in layout `lay` (types.h). */
static uint64_t phys_index(int lay, const int64_t *dm, int64_t a, int64_t b, int64_t c, int64_t e) {
  uint64_t c1 = (uint64_t)(dm[1] + C0 - 1) / C0;
  if (lay == LAYOUT_NC1HWC0)
    return ((((uint64_t)a * c1 + (uint64_t)b / C0) * (uint64_t)dm[2] + (uint64_t)c) * (uint64_t)dm[3] +
            (uint64_t)e) * C0 + (uint64_t)b % C0;
  /* FRACTAL_Z: a = co, b = ci, c = kh, e = kw */
  uint64_t n1 = (uint64_t)(dm[0] + C0 - 1) / C0;
  uint64_t frac = ((uint64_t)b / C0 * (uint64_t)dm[2] + (uint64_t)c) * (uint64_t)dm[3] + (uint64_t)e;
  return ((frac * n1 + (uint64_t)a / C0) * C0 + (uint64_t)a % C0) * C0 + (uint64_t)b % C0;
}

/* New payload for ND constant c reinterpreted with logical dims `dims` (same
 * element count) in layout `lay` and dtype `dt`; padding is zero. */
static void *convert_data(lay_state *s, const ir_value *c, int lay, int dt, int rank,
                          const int64_t *dims) {
  uint64_t phys;
  if (layout_elements(lay, rank, dims, &phys) != 0) return NULL;
  void *out = arena_array(&s->g->arena, phys ? phys : 1, dtype_size(dt));
  if (!out) return NULL;
  if (lay == LAYOUT_ND) {
    for (uint64_t i = 0; i < phys; i++) store_elem(out, dt, i, load_elem(c->data, c->dtype, i));
    return out;
  }
  uint64_t i = 0;
  for (int64_t a = 0; a < dims[0]; a++)
    for (int64_t b = 0; b < dims[1]; b++)
      for (int64_t h = 0; h < dims[2]; h++)
        for (int64_t w = 0; w < dims[3]; w++)
          store_elem(out, dt, phys_index(lay, dims, a, b, h, w), load_elem(c->data, c->dtype, i++));
  return out;
}

/* --- making an input match ---------------------------------------------- */

static ir_value *cache_find(lay_state *s, const ir_value *src, int lay, int dt) {
  for (int i = 0; i < s->ncache; i++)
    if (s->cache[i].src == src && s->cache[i].layout == lay && s->cache[i].dtype == dt)
      return s->cache[i].dst;
  return NULL;
}

static int cache_add(lay_state *s, const ir_value *src, int lay, int dt, ir_value *dst) {
  if (arena_grow(&s->scratch, (void **)&s->cache, &s->cache_cap, s->ncache, sizeof *s->cache))
    return -1;
  s->cache[s->ncache++] = (conv_entry){src, lay, dt, dst};
  return 0;
}

/* Makes input `slot` of n a value in layout `lay` and dtype `dt` (ANY_DTYPE:
 * keep the dtype), with logical dims `dims` (NULL: unchanged; only constants
 * are ever given new dims, the depthwise weights). */
static status ensure_input(lay_state *s, ir_node *n, int slot, int lay, int dt,
                           const int64_t *dims) {
  ir_value *v = n->in[slot];
  int want_dt = dt == ANY_DTYPE ? (int)v->dtype : dt;
  int rank = v->rank;
  const int64_t *want_dims = dims ? dims : v->dims;
  if ((int)v->layout == lay && (int)v->dtype == want_dt && same_dims(v, rank, want_dims))
    return ST_OK;
  ir_value *hit = cache_find(s, v, lay, want_dt);
  if (hit) return ir_node_set_input(s->g, n, slot, hit) ? nomem(s, n) : ST_OK;

  char name[512];
  snprintf(name, sizeof name, "%s_%s_%s", v->name, layout_tag(lay), dtype_name(want_dt));
  if (v->data) {
    if (v->layout != LAYOUT_ND)
      return ir_node_error(s->d, ST_ERR_INVALID, n, "constant '%s' is %s, wanted %s", v->name,
                           layout_name(v->layout), layout_name(lay));
    void *data = convert_data(s, v, lay, want_dt, rank, want_dims);
    if (!data) return nomem(s, n);
    if (ir_value_use_count(s->g, v) == 1) { /* only this node reads it: convert in place */
      v->data = data;
      v->dtype = want_dt;
      v->layout = lay;
      ir_value_set_shape(v, rank, want_dims);
      return ST_OK;
    }
    uint64_t phys;
    layout_elements(lay, rank, want_dims, &phys);
    /* build the copy as ND bytes of the physical size, then retag it */
    int64_t flat = (int64_t)phys;
    ir_value *c = ir_const_new(s->g, name, want_dt, 1, &flat, data, phys * dtype_size(want_dt));
    if (!c) return nomem(s, n);
    c->layout = lay;
    ir_value_set_shape(c, rank, want_dims);
    if (cache_add(s, v, lay, want_dt, c) || ir_node_set_input(s->g, n, slot, c)) return nomem(s, n);
    return ST_OK;
  }

  ir_value *t = ir_value_new(s->g, name, want_dt);
  if (!t) return nomem(s, n);
  ir_value_set_shape(t, rank, v->dims);
  t->layout = lay;
  char tname[600];
  snprintf(tname, sizeof tname, "trans_%s", name);
  if (!ir_node_new(s->g, IR_OP_TRANSDATA, tname, 1, &v, 1, &t)) return nomem(s, n);
  if (cache_add(s, v, lay, want_dt, t) || ir_node_set_input(s->g, n, slot, t)) return nomem(s, n);
  return ST_OK;
}

/* Expands constant input `slot` of elementwise node n to the output's dims
 * (numpy broadcasting) as a new ND constant in its own dtype. */
static status expand_const(lay_state *s, ir_node *n, int slot) {
  const ir_value *c = n->in[slot], *y = n->out[0];
  int r = y->rank, off = r - c->rank;
  for (int i = 0; i < c->rank; i++)
    if (off < 0 || (c->dims[i] != 1 && c->dims[i] != y->dims[off + i]))
      return unsupported(s, n, "constant operand does not broadcast to the output shape");
  int64_t count = ir_value_elements(y);
  if (count < 0) return unsupported(s, n, "output shape unknown");
  size_t es = dtype_size(c->dtype);
  uint8_t *out = arena_array(&s->g->arena, count ? (size_t)count : 1, es);
  if (!out) return nomem(s, n);
  const uint8_t *src = c->data;
  for (int64_t i = 0; i < count; i++) {
    int64_t rest = i, si = 0, stride = 1;
    for (int k = r - 1; k >= 0; k--) {
      int64_t idx = rest % y->dims[k];
      rest /= y->dims[k];
      if (k >= off) {
        int64_t cd = c->dims[k - off];
        si += (cd == 1 ? 0 : idx) * stride;
        stride *= cd;
      }
    }
    memcpy(out + (size_t)i * es, src + (size_t)si * es, es);
  }
  char name[512];
  snprintf(name, sizeof name, "%s_expanded", c->name);
  ir_value *e = ir_const_new(s->g, name, c->dtype, r, y->dims, out, (size_t)count * es);
  if (!e || ir_node_set_input(s->g, n, slot, e)) return nomem(s, n);
  return ST_OK;
}

/* Output k of n is a graph output in ND and the user's dtype; when n computes
 * in another layout or dtype, n writes a new value and a TransData converts
 * it into the graph output. */
static status redirect_output(lay_state *s, ir_node *n, int k, int lay, int dt) {
  ir_value *v = n->out[k];
  if (v->output_index < 0 || ((int)v->layout == lay && (int)v->dtype == dt)) {
    v->layout = lay;
    v->dtype = dt;
    return ST_OK;
  }
  char name[512];
  snprintf(name, sizeof name, "%s_%s_%s", v->name, layout_tag(lay), dtype_name(dt));
  ir_value *t = ir_value_new(s->g, name, dt);
  if (!t) return nomem(s, n);
  ir_value_set_shape(t, v->rank, v->dims);
  t->layout = lay;
  t->producer = n;
  n->out[k] = t;
  for (int i = 0; i < s->g->nnodes; i++) {
    ir_node *m = s->g->nodes[i];
    for (int j = 0; j < m->nin && !m->dead; j++)
      if (m->in[j] == v) m->in[j] = t;
  }
  char tname[600];
  snprintf(tname, sizeof tname, "trans_%s", v->name);
  if (!ir_node_new(s->g, IR_OP_TRANSDATA, tname, 1, &t, 1, &v)) return nomem(s, n);
  return ST_OK;
}

/* --- per op -------------------------------------------------------------- */

static status check_float(lay_state *s, const ir_node *n, const ir_value *v) {
  if (precision_is_float(v->dtype)) return ST_OK;
  char msg[160];
  snprintf(msg, sizeof msg, "value '%s' has dtype %s; only f32 and f16 are supported", v->name,
           dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  return unsupported(s, n, msg);
}

static status layout_conv(lay_state *s, ir_node *n, int cdt) {
  ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (x->rank != 4 || w->rank != 4 || y->rank != 4)
    return unsupported(s, n, "only 2-D convolution (rank-4 input and weights) is supported");
  if (w->dims[0] != y->dims[1]) return unsupported(s, n, "weight output channels differ from y's");
  if (!w->data) return unsupported(s, n, "weights must be a constant");
  int64_t group = ir_attr_int(n, "group", 1), cin = x->dims[1], cout = y->dims[1];
  int64_t dil[2] = {1, 1};
  ir_attr_ints(n, "dilations", dil, 2);
  if (dil[0] < 1 || dil[1] < 1) return unsupported(s, n, "dilations must be >= 1");
  if (group == 1) {
    if (w->dims[1] != cin) return unsupported(s, n, "weight input channels differ from x's");
    status st = ensure_input(s, n, 1, LAYOUT_FRACTAL_Z, cdt, NULL);
    if (st != ST_OK) return st;
  } else if (group == cin && group == cout && w->dims[1] == 1) {
    int64_t dims[4] = {1, w->dims[0], w->dims[2], w->dims[3]};
    status st = ensure_input(s, n, 1, LAYOUT_NC1HWC0, cdt, dims);
    if (st != ST_OK) return st;
  } else {
    char msg[128];
    snprintf(msg, sizeof msg,
             "grouped convolution with group=%lld is not supported (only 1 or depthwise)",
             (long long)group);
    return unsupported(s, n, msg);
  }
  status st = ensure_input(s, n, 0, LAYOUT_NC1HWC0, cdt, NULL);
  if (st == ST_OK && n->nin > 2 && n->in[2]) {
    if (n->in[2]->rank != 1 || n->in[2]->dims[0] != cout)
      return unsupported(s, n, "bias must have shape [Cout]");
    st = ensure_input(s, n, 2, LAYOUT_ND, DT_FLOAT32, NULL);
  }
  if (st == ST_OK && n->nin > 3 && n->in[3]) {
    if (!same_dims(n->in[3], y->rank, y->dims))
      return unsupported(s, n, "residual must have the output's shape");
    st = ensure_input(s, n, 3, LAYOUT_NC1HWC0, cdt, NULL);
  }
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NC1HWC0, cdt);
}

static status layout_pool(lay_state *s, ir_node *n, int cdt) {
  if (n->in[0]->rank != 4) return unsupported(s, n, "only 2-D pooling (rank-4 input) is supported");
  int64_t dil[2] = {1, 1};
  ir_attr_ints(n, "dilations", dil, 2);
  if (dil[0] != 1 || dil[1] != 1) return unsupported(s, n, "dilated pooling is not supported");
  status st = ensure_input(s, n, 0, LAYOUT_NC1HWC0, cdt, NULL);
  return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_NC1HWC0, cdt);
}

/* Elementwise ops and Concat: NC1HWC0 when rank 4 (and, for Concat, along
 * axis 1) and a computed input already is NC1HWC0, else ND. */
static status layout_follow(lay_state *s, ir_node *n, int cdt) {
  ir_value *y = n->out[0];
  int can_5hd = y->rank == 4;
  if (n->op == IR_OP_CONCAT) {
    int64_t axis = ir_attr_int(n, "axis", 0);
    if (axis < 0) axis += y->rank;
    can_5hd = can_5hd && axis == 1;
  }
  int lay = LAYOUT_ND;
  for (int j = 0; j < n->nin; j++) {
    ir_value *v = n->in[j];
    if (!v) return unsupported(s, n, "missing input");
    if (can_5hd && !v->data && v->layout == LAYOUT_NC1HWC0) lay = LAYOUT_NC1HWC0;
    if (n->op == IR_OP_CONCAT) continue;
    if (!same_dims(v, y->rank, y->dims)) {
      if (!v->data)
        return unsupported(s, n, "broadcasting between inputs of different shapes is not supported");
      status st = expand_const(s, n, j);
      if (st != ST_OK) return st;
    }
  }
  for (int j = 0; j < n->nin; j++) {
    status st = ensure_input(s, n, j, lay, cdt, NULL);
    if (st != ST_OK) return st;
  }
  return redirect_output(s, n, 0, lay, cdt);
}

/* Reshape family and Cast: ND copies (or aliases) that may also cast. */
static status layout_nd_copy(lay_state *s, ir_node *n) {
  status st = ensure_input(s, n, 0, LAYOUT_ND, ANY_DTYPE, NULL);
  n->out[0]->layout = LAYOUT_ND;
  return st;
}

static status layout_node(lay_state *s, ir_node *n) {
  int cdt = precision_node_dtype(n, s->precision);
  switch (n->op) {
  case IR_OP_BATCHNORM:
    return unsupported(s, n, "BatchNormalization is only supported folded into a preceding Conv");
  case IR_OP_GEMM:
    return unsupported(s, n, "only Gemm with a constant 2-D B is supported");
  case IR_OP_MATMUL:
    return unsupported(s, n, "only MatMul with a constant 2-D B is supported");
  case IR_OP_SIGMOID:
    return unsupported(s, n, "no Sigmoid kernel in the om format yet");
  case IR_OP_SHAPE:
  case IR_OP_GATHER:
    return unsupported(s, n, "shape arithmetic must fold to constants (are the input shapes static?)");
  case IR_OP_TRANSDATA:
    return ST_OK;
  default:
    break;
  }
  for (int j = 0; j < n->nin; j++) {
    if (!n->in[j] || (n->op == IR_OP_RESHAPE && j == 1)) continue;
    status st = check_float(s, n, n->in[j]);
    if (st != ST_OK) return st;
  }
  status st = check_float(s, n, n->out[0]);
  if (st != ST_OK) return st;
  switch (n->op) {
  case IR_OP_CONV:
    return layout_conv(s, n, cdt);
  case IR_OP_MAXPOOL:
  case IR_OP_AVGPOOL:
  case IR_OP_GLOBALAVGPOOL:
  case IR_OP_GLOBALMAXPOOL:
    return layout_pool(s, n, cdt);
  case IR_OP_RELU:
  case IR_OP_CLIP:
  case IR_OP_ADD:
  case IR_OP_SUB:
  case IR_OP_MUL:
  case IR_OP_DIV:
  case IR_OP_CONCAT:
    return layout_follow(s, n, cdt);
  case IR_OP_SOFTMAX:
    st = ensure_input(s, n, 0, LAYOUT_ND, cdt, NULL);
    return st != ST_OK ? st : redirect_output(s, n, 0, LAYOUT_ND, cdt);
  case IR_OP_FLATTEN:
  case IR_OP_RESHAPE:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_IDENTITY:
  case IR_OP_CAST:
    return layout_nd_copy(s, n);
  default:
    return unsupported(s, n, "op not supported by the backend");
  }
}

status pass_layout(ir_graph *g, pass_ctx *ctx, diag *d) {
  lay_state s = {.g = g, .precision = ctx->precision, .d = d};
  arena_init(&s.scratch, 0);
  for (int i = 0; i < g->ninputs; i++) g->inputs[i]->layout = LAYOUT_ND;
  status st = ST_OK;
  int count = g->nnodes; /* TransData nodes appended meanwhile need no visit */
  for (int i = 0; i < count && st == ST_OK; i++)
    if (!g->nodes[i]->dead) st = layout_node(&s, g->nodes[i]);
  arena_free(&s.scratch);
  if (st != ST_OK) return st;
  st = ir_graph_toposort(g, d);
  if (st != ST_OK) return st;
  ir_graph_compact(g);
  return ST_OK;
}
