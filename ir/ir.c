/* ir.c - graph construction, attributes, surgery, topological order and the
 * verifier (see ir.h). The text and DOT printers are in ir_print.c.
 *
 * Everything is allocated from the graph's arena. Value names are kept unique
 * by generating "<base>_<n>" when a name is missing or taken; value and node
 * names are found through hash tables, so building a graph of N nodes and
 * verifying it take O(N) (the verifier's name check O(N log N)).
 */
#include "ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bigmem.h"
#include "common/elem.h"
#include "ir/epilogue_ir.h"
#include "ir/ir_vprog.h"

const ir_op_info ir_ops[IR_OP_COUNT] = {
#define OP(e, name, min_in, max_in, min_out, max_out, fusion, fp16, unit, lay, task)                         \
  {name,           min_in,         max_in,       min_out,       max_out, IR_FUSE_##fusion,                   \
   IR_FP16_##fp16, IR_UNIT_##unit, IR_LAY_##lay, OM_TASK_##task},
#include "ops.def"
#undef OP
};

int ir_op_from_name(const char *onnx_name) {
  for (int i = 0; i < IR_OP_COUNT; i++)
    if (strcmp(ir_ops[i].name, onnx_name) == 0) return i;
  return -1;
}

ir_graph *ir_graph_new(const char *name, size_t budget_bytes) {
  ir_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  arena_init(&g->arena, budget_bytes);
  g->name = arena_strdup(&g->arena, name ? name : "graph");
  if (!g->name) {
    free(g);
    return NULL;
  }
  return g;
}

void ir_graph_free(ir_graph *g) {
  if (!g) return;
  arena_free(&g->arena);
  free(g);
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  while (*s)
    h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

/* The slot holding `name`, or the empty slot where it would go. */
static ir_value **name_slot(const ir_graph *g, const char *name) {
  uint32_t mask = (uint32_t)g->names_cap - 1;
  for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask)
    if (!g->names[i] || strcmp(g->names[i]->name, name) == 0) return &g->names[i];
}

static int name_taken(const ir_graph *g, const char *name) {
  return g->names_cap && *name_slot(g, name) != NULL;
}

/* Records v's name; -1 on allocation failure. */
static int name_insert(ir_graph *g, ir_value *v) {
  if (2 * (g->names_count + 1) > g->names_cap) {
    int cap = g->names_cap ? 2 * g->names_cap : 64;
    ir_value **old = g->names;
    int old_cap = g->names_cap;
    g->names = arena_array(&g->arena, (size_t)cap, sizeof *g->names);
    if (!g->names) {
      g->names = old;
      return -1;
    }
    g->names_cap = cap;
    for (int i = 0; i < old_cap; i++)
      if (old[i]) *name_slot(g, old[i]->name) = old[i];
  }
  *name_slot(g, v->name) = v;
  g->names_count++;
  return 0;
}

void ir_value_swap_names(ir_graph *g, ir_value *a, ir_value *b) {
  ir_value **sa = name_slot(g, a->name), **sb = name_slot(g, b->name);
  const char *t = a->name;
  a->name = b->name;
  b->name = t;
  *sa = b, *sb = a; /* each slot now holds the value that has its name */
}

ir_value *ir_value_find(const ir_graph *g, const char *name) {
  if (!g->names_cap) return NULL;
  ir_value *v = *name_slot(g, name);
  /* A value dropped by ir_graph_compact keeps its name reserved but is gone. */
  return v && v->id < g->nvalues && g->values[v->id] == v ? v : NULL;
}

/* A name no value has ever had: `base` itself when free, else base_N. */
static const char *unique_name(ir_graph *g, const char *base) {
  if (!name_taken(g, base)) return arena_strdup(&g->arena, base);
  char buf[256];
  for (int n = 1;; n++) {
    snprintf(buf, sizeof buf, "%.200s_%d", base, n);
    if (!name_taken(g, buf)) return arena_strdup(&g->arena, buf);
  }
}

ir_value *ir_value_new(ir_graph *g, const char *name, dtype dt) {
  if (arena_grow(&g->arena, (void **)&g->values, &g->value_cap, g->nvalues, sizeof(ir_value *))) return NULL;
  ir_value *v = arena_alloc(&g->arena, sizeof *v);
  if (!v) return NULL;
  v->name = unique_name(g, name && *name ? name : "v");
  if (!v->name || name_insert(g, v)) return NULL;
  v->id = g->nvalues;
  v->dtype = dt;
  v->layout = LAYOUT_ND;
  v->rank = -1;
  v->count_axis = -1;
  v->input_index = v->output_index = -1;
  v->region = IR_REGION_NONE;
  g->values[g->nvalues++] = v;
  return v;
}

void ir_value_set_shape(ir_value *v, int rank, const int64_t *dims) {
  v->rank = rank;
  for (int i = 0; i < MAX_RANK; i++)
    v->dims[i] = i < rank ? dims[i] : 0;
}

int64_t ir_value_elements(const ir_value *v) {
  uint64_t n;
  if (v->rank < 0 || layout_elements(LAYOUT_ND, v->rank, v->dims, &n) || n > INT64_MAX) return -1;
  return (int64_t)n;
}

int64_t ir_value_bytes(const ir_value *v) {
  uint64_t n, bytes;
  if (v->rank < 0 || layout_elements(v->layout, v->rank, v->dims, &n) || dtype_bytes(v->dtype, n, &bytes) ||
      bytes > INT64_MAX)
    return -1;
  return (int64_t)bytes;
}

ir_value *ir_const_new(ir_graph *g, const char *name, dtype dt, int rank, const int64_t *dims,
                       const void *data, size_t bytes) {
  if (rank < 0 || rank > MAX_RANK) return NULL;
  ir_value *v = ir_value_new(g, name, dt);
  if (!v) return NULL;
  ir_value_set_shape(v, rank, dims);
  int64_t want = ir_value_bytes(v);
  if (want < 0 || (uint64_t)want != bytes) return NULL;
  v->data = data ? arena_memdup(&g->arena, data, bytes) : arena_alloc_lazy(&g->arena, bytes ? bytes : 1);
  return v->data ? v : NULL;
}

/* 1 when a value of g other than v (any ever made: compacted ones too) has
 * payload p. */
static int data_shared(const ir_graph *g, const ir_value *v, const void *p) {
  for (int i = 0; i < g->names_cap; i++)
    if (g->names[i] && g->names[i] != v && g->names[i]->data == p) return 1;
  return 0;
}

void ir_value_replace_data(ir_graph *g, ir_value *v, const void *data) {
  const void *old = v->data;
  v->data = data;
  if (arena_releasable(&g->arena, old) && !data_shared(g, v, old)) arena_release(&g->arena, old);
}

enum { GIVE_BACK_BYTES = 32 << 20 };

void ir_payload_reader_init(ir_graph *g, ir_payload_reader *r, const ir_value *c, int replaced) {
  int64_t n = ir_value_elements(c);
  *r = (ir_payload_reader){c, 0, 0};
  r->consume = replaced && n > 0 && (uint64_t)n * dtype_size(c->dtype) >= GIVE_BACK_BYTES && c->data &&
               arena_releasable(&g->arena, c->data) && !data_shared(g, c, c->data);
}

void *ir_payload_alloc(ir_graph *g, const ir_payload_reader *r, size_t bytes) {
  return r->consume ? arena_alloc_lazy(&g->arena, bytes)
                    : arena_alloc_aligned(&g->arena, bytes ? bytes : 1, 64);
}

void ir_payload_read(ir_payload_reader *r, uint64_t elems) {
  uint64_t bytes = elems * dtype_size(r->c->dtype);
  if (r->consume && bytes - r->given >= GIVE_BACK_BYTES) {
    bigmem_discard((void *)r->c->data, (size_t)bytes);
    r->given = bytes;
  }
}

int ir_graph_add_input(ir_graph *g, ir_value *v) {
  if (arena_grow(&g->arena, (void **)&g->inputs, &g->input_cap, g->ninputs, sizeof(ir_value *))) return -1;
  v->input_index = g->ninputs;
  g->inputs[g->ninputs++] = v;
  return 0;
}

int ir_graph_add_output(ir_graph *g, ir_value *v) {
  if (arena_grow(&g->arena, (void **)&g->outputs, &g->output_cap, g->noutputs, sizeof(ir_value *))) return -1;
  v->output_index = g->noutputs;
  g->outputs[g->noutputs++] = v;
  return 0;
}

int ir_graph_add_source(ir_graph *g, const char *name, const char *op_type, int nin, const char *const *in,
                        int nout, const char *const *out) {
  if (arena_grow(&g->arena, (void **)&g->src, &g->src_cap, g->nsrc, sizeof *g->src)) return -1;
  ir_source *s = &g->src[g->nsrc];
  s->name = arena_strdup(&g->arena, name);
  s->op_type = arena_strdup(&g->arena, op_type);
  s->in = arena_array(&g->arena, (size_t)nin + 1, sizeof *s->in);
  s->out = arena_array(&g->arena, (size_t)nout + 1, sizeof *s->out);
  if (!s->name || !s->op_type || !s->in || !s->out) return -1;
  for (int i = 0; i < nin; i++)
    if (!(s->in[i] = arena_strdup(&g->arena, in[i]))) return -1;
  for (int i = 0; i < nout; i++)
    if (!(s->out[i] = arena_strdup(&g->arena, out[i]))) return -1;
  s->nin = nin, s->nout = nout;
  g->nsrc++;
  return 0;
}

/* Node names: the slot holding `name`, or the empty slot where it would go. */
static ir_node **node_slot(const ir_graph *g, const char *name) {
  uint32_t mask = (uint32_t)g->node_names_cap - 1;
  for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask)
    if (!g->node_names[i] || strcmp(g->node_names[i]->name, name) == 0) return &g->node_names[i];
}

static int node_name_taken(const ir_graph *g, const char *name) {
  return g->node_names_cap && *node_slot(g, name) != NULL;
}

/* Records n's name (a name already there stays: it is taken either way);
 * -1 on allocation failure. */
static int node_name_insert(ir_graph *g, ir_node *n) {
  if (2 * (g->node_names_count + 1) > g->node_names_cap) {
    int cap = g->node_names_cap ? 2 * g->node_names_cap : 64;
    ir_node **table = arena_array(&g->arena, (size_t)cap, sizeof *table);
    if (!table) return -1;
    g->node_names = table;
    g->node_names_cap = cap;
    g->node_names_count = 0;
    for (int i = 0; i < g->nnodes; i++) /* n is not in g->nodes yet */
      if (!*node_slot(g, g->nodes[i]->name)) {
        *node_slot(g, g->nodes[i]->name) = g->nodes[i];
        g->node_names_count++;
      }
  }
  ir_node **slot = node_slot(g, n->name);
  if (!*slot) {
    *slot = n;
    g->node_names_count++;
  }
  return 0;
}

/* After nodes left g->nodes: only theirs are taken again. */
static void node_names_rebuild(ir_graph *g) {
  if (!g->node_names_cap) return;
  memset(g->node_names, 0, (size_t)g->node_names_cap * sizeof *g->node_names);
  g->node_names_count = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node **slot = node_slot(g, g->nodes[i]->name);
    if (!*slot) {
      *slot = g->nodes[i];
      g->node_names_count++;
    }
  }
}

ir_node *ir_node_new(ir_graph *g, ir_op op, const char *name, int nin, ir_value *const *in, int nout,
                     ir_value *const *out) {
  if (arena_grow(&g->arena, (void **)&g->nodes, &g->node_cap, g->nnodes, sizeof(ir_node *))) return NULL;
  ir_node *n = arena_alloc(&g->arena, sizeof *n);
  if (!n) return NULL;
  n->id = g->next_node_id++;
  n->origin = n->id;
  n->op = op;
  if (name && *name && !node_name_taken(g, name)) {
    n->name = arena_strdup(&g->arena, name);
  } else {
    char buf[256];
    snprintf(buf, sizeof buf, "%.200s_%d", name && *name ? name : ir_ops[op].name, n->id);
    n->name = arena_strdup(&g->arena, buf);
  }
  n->in = arena_array(&g->arena, (size_t)nin, sizeof *n->in);
  n->out = arena_array(&g->arena, (size_t)nout, sizeof *n->out);
  if (!n->name || !n->in || !n->out || node_name_insert(g, n)) return NULL;
  n->nin = nin;
  n->nout = nout;
  if (nin) memcpy(n->in, in, (size_t)nin * sizeof *in);
  if (nout) memcpy(n->out, out, (size_t)nout * sizeof *out);
  for (int i = 0; i < nout; i++)
    if (out[i]) out[i]->producer = n;
  g->nodes[g->nnodes++] = n;
  return n;
}

int ir_node_set_input(ir_graph *g, ir_node *n, int i, ir_value *v) {
  if (i < 0 || i > n->nin) return -1;
  if (i == n->nin) {
    ir_value **in = arena_array(&g->arena, (size_t)n->nin + 1, sizeof *in);
    if (!in) return -1;
    if (n->nin) memcpy(in, n->in, (size_t)n->nin * sizeof *in);
    n->in = in;
    n->nin++;
  }
  n->in[i] = v;
  return 0;
}

int ir_node_add_output(ir_graph *g, ir_node *n, ir_value *v) {
  ir_value **out = arena_array(&g->arena, (size_t)n->nout + 1, sizeof *out);
  if (!out) return -1;
  if (n->nout) memcpy(out, n->out, (size_t)n->nout * sizeof *out);
  out[n->nout++] = v;
  n->out = out;
  v->producer = n;
  return 0;
}

/* ---- attributes ---- */

static ir_attr *attr_slot(ir_graph *g, ir_node *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      const char *kept = n->attrs[i].name;
      memset(&n->attrs[i], 0, sizeof n->attrs[i]);
      n->attrs[i].name = kept;
      return &n->attrs[i];
    }
  if (arena_grow(&g->arena, (void **)&n->attrs, &n->attr_cap, n->nattrs, sizeof(ir_attr))) return NULL;
  ir_attr *a = &n->attrs[n->nattrs];
  a->name = arena_strdup(&g->arena, name);
  if (!a->name) return NULL;
  n->nattrs++;
  return a;
}

int ir_attr_set_int(ir_graph *g, ir_node *n, const char *name, int64_t v) {
  ir_attr *a = attr_slot(g, n, name);
  if (!a) return -1;
  a->kind = IR_ATTR_INT;
  a->i = v;
  return 0;
}

int ir_attr_set_float(ir_graph *g, ir_node *n, const char *name, double v) {
  ir_attr *a = attr_slot(g, n, name);
  if (!a) return -1;
  a->kind = IR_ATTR_FLOAT;
  a->f = v;
  return 0;
}

int ir_attr_set_string(ir_graph *g, ir_node *n, const char *name, const char *v) {
  ir_attr *a = attr_slot(g, n, name);
  if (!a) return -1;
  a->kind = IR_ATTR_STRING;
  a->s = arena_strdup(&g->arena, v);
  return a->s ? 0 : -1;
}

int ir_attr_set_ints(ir_graph *g, ir_node *n, const char *name, int count, const int64_t *v) {
  ir_attr *a = attr_slot(g, n, name);
  if (!a) return -1;
  a->kind = IR_ATTR_INTS;
  a->n = count;
  a->ints = arena_array(&g->arena, (size_t)count, sizeof *a->ints);
  if (!a->ints) return -1;
  if (count) memcpy(a->ints, v, (size_t)count * sizeof *v);
  return 0;
}

int ir_attr_set_floats(ir_graph *g, ir_node *n, const char *name, int count, const double *v) {
  ir_attr *a = attr_slot(g, n, name);
  if (!a) return -1;
  a->kind = IR_ATTR_FLOATS;
  a->n = count;
  a->floats = arena_array(&g->arena, (size_t)count, sizeof *a->floats);
  if (!a->floats) return -1;
  if (count) memcpy(a->floats, v, (size_t)count * sizeof *v);
  return 0;
}

const ir_attr *ir_attr_find(const ir_node *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

void ir_attr_remove(ir_node *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      memmove(&n->attrs[i], &n->attrs[i + 1], (size_t)(n->nattrs - i - 1) * sizeof *n->attrs);
      n->nattrs--;
      return;
    }
}

int64_t ir_attr_int(const ir_node *n, const char *name, int64_t def) {
  const ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_INT ? a->i : def;
}

double ir_attr_float(const ir_node *n, const char *name, double def) {
  const ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_FLOAT ? a->f : def;
}

const char *ir_attr_string(const ir_node *n, const char *name, const char *def) {
  const ir_attr *a = ir_attr_find(n, name);
  return a && a->kind == IR_ATTR_STRING ? a->s : def;
}

int ir_attr_ints(const ir_node *n, const char *name, int64_t *out, int max) {
  const ir_attr *a = ir_attr_find(n, name);
  if (!a || a->kind != IR_ATTR_INTS) return -1;
  for (int i = 0; i < a->n && i < max; i++)
    out[i] = a->ints[i];
  return a->n;
}

status ir_node_error(diag *d, status code, const ir_node *n, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return diag_set(d, code, "node '%s' (%s): %s", n->name, ir_ops[n->op].name, msg);
}

const char *ir_dims_str(int rank, const int64_t *dims) {
  static _Thread_local char bufs[4][160];
  static _Thread_local int next;
  char *b = bufs[next++ & 3];
  int at = snprintf(b, 160, "[");
  for (int i = 0; i < rank && at < 150; i++)
    at += snprintf(b + at, (size_t)(160 - at), "%s%lld", i ? "," : "", (long long)dims[i]);
  snprintf(b + at, (size_t)(160 - at), "]");
  return b;
}

/* ---- surgery ---- */

void ir_replace_uses(ir_graph *g, ir_value *from, ir_value *to) {
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] == from) n->in[j] = to;
  }
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == from) {
      g->outputs[i] = to;
      from->output_index = -1;
      to->output_index = i;
    }
  for (int i = 0; i < g->nvalues; i++) /* the values `from` counts (ir/count.h) */
    if (g->values[i] && g->values[i]->count == from) g->values[i]->count = to;
}

int ir_value_use_count(const ir_graph *g, const ir_value *v) {
  int count = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nin; j++)
      count += n->in[j] == v;
  }
  for (int i = 0; i < g->noutputs; i++)
    count += g->outputs[i] == v;
  return count;
}

status ir_uses_build(const ir_graph *g, arena *a, ir_uses *u, diag *d) {
  u->nvalues = g->nvalues;
  u->count = arena_array(a, (size_t)g->nvalues + 1, sizeof *u->count);
  u->sum = arena_array(a, (size_t)g->nvalues + 1, sizeof *u->sum);
  if (!u->count || !u->sum) return diag_set(d, ST_ERR_NOMEM, "out of memory counting uses in '%s'", g->name);
  for (int i = 0; i < g->nnodes; i++)
    if (!g->nodes[i]->dead) ir_uses_node(u, g->nodes[i], 1);
  for (int i = 0; i < g->noutputs; i++)
    u->count[g->outputs[i]->id]++;
  return ST_OK;
}

void ir_uses_node(ir_uses *u, ir_node *n, int delta) {
  for (int j = 0; j < n->nin; j++) {
    const ir_value *v = n->in[j];
    if (!v || v->id >= u->nvalues) continue;
    u->count[v->id] += delta;
    u->sum[v->id] += delta > 0 ? (uintptr_t)n : -(uintptr_t)n; /* wraps, and unwraps */
  }
}

ir_node *ir_uses_single(const ir_uses *u, const ir_value *v) {
  /* One reader that is a graph output leaves the sum 0. */
  return v->id < u->nvalues && u->count[v->id] == 1 ? (ir_node *)u->sum[v->id] : NULL;
}

ir_node *ir_value_single_user(const ir_graph *g, const ir_value *v) {
  ir_node *user = NULL;
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == v) return NULL;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j] == v) {
        if (user) return NULL; /* a second reader, or the same node twice */
        user = n;
      }
  }
  return user;
}

ir_node *ir_value_sole_reader(const ir_graph *g, const ir_value *v) {
  ir_node *r = NULL;
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == v) return NULL;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    for (int j = 0; j < n->nin && !n->dead; j++)
      if (n->in[j] == v) {
        if (r && r != n) return NULL;
        r = n;
      }
  }
  return r;
}

int ir_value_float_scalar(const ir_value *v, double *f) {
  if (!v || !v->data || ir_value_elements(v) != 1 || (v->dtype != DT_FLOAT32 && v->dtype != DT_FLOAT16))
    return 0;
  *f = elem_get(v->data, v->dtype, 0);
  return 1;
}

void ir_graph_compact(ir_graph *g) {
  int k = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    if (!n->dead) {
      g->nodes[k++] = n;
    } else {
      for (int j = 0; j < n->nout; j++)
        if (n->out[j] && n->out[j]->producer == n) n->out[j]->producer = NULL;
    }
  }
  g->nnodes = k;
  node_names_rebuild(g);
  /* Mark referenced values: graph I/O, node inputs and outputs. */
  unsigned char *used = calloc((size_t)g->nvalues + 1, 1);
  if (!used) return; /* keeping unreferenced values is harmless */
  for (int i = 0; i < g->ninputs; i++)
    used[g->inputs[i]->id] = 1;
  for (int i = 0; i < g->noutputs; i++)
    used[g->outputs[i]->id] = 1;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++)
      if (n->in[j]) used[n->in[j]->id] = 1;
    for (int j = 0; j < n->nout; j++)
      if (n->out[j]) used[n->out[j]->id] = 1;
  }
  /* A dropped constant's payload goes back unless another value has it. */
  for (int i = 0; i < g->nvalues; i++) {
    ir_value *v = g->values[i];
    if (used[i] || !v->data || !arena_releasable(&g->arena, v->data)) continue;
    const void *p = v->data;
    v->data = NULL;
    if (!data_shared(g, v, p)) arena_release(&g->arena, p);
  }
  k = 0;
  for (int i = 0; i < g->nvalues; i++)
    if (used[i]) {
      g->values[k] = g->values[i];
      g->values[k]->id = k;
      k++;
    }
  g->nvalues = k;
  free(used);
}

/* 1 when every node input is produced by an earlier node (or by none);
 * -1 when out of memory. */
/* Dependency k of n, for k in [0, 2 x nin): its inputs, then the counts of
 * its counted inputs (a task reads its inputs' counts, ir/count.h, so it
 * runs after their producers even when its inputs are constants: a Gather
 * of a constant by a counted iota), or NULL. */
static const ir_value *dep(const ir_node *n, int k) {
  const ir_value *v = n->in[k % n->nin];
  return k < n->nin || !v || v->count_axis < 0 ? v : v->count;
}

static int is_sorted(const ir_graph *g) {
  int *pos = malloc(((size_t)g->next_node_id + 1) * sizeof *pos);
  if (!pos) return -1;
  for (int i = 0; i <= g->next_node_id; i++)
    pos[i] = -1; /* -1: not in g->nodes (verify reports it) */
  for (int i = 0; i < g->nnodes; i++)
    pos[g->nodes[i]->id] = i;
  int sorted = 1;
  for (int i = 0; i < g->nnodes && sorted; i++)
    for (int j = 0; j < 2 * g->nodes[i]->nin; j++) {
      const ir_value *v = dep(g->nodes[i], j);
      if (v && v->producer && !v->producer->dead && pos[v->producer->id] >= i) sorted = 0;
    }
  free(pos);
  return sorted;
}

/* Kahn's algorithm taking, of the ready nodes, the one earliest in the
 * current order (a binary min-heap of node indices): every node stays where
 * it was unless an input's producer comes after it, and then moves only as
 * far as that producer, so an already sorted graph is left exactly as it
 * is and a pass that appends a node (layout's TransData at the graph's
 * edges) does not reorder the rest. A FIFO of ready nodes would run the
 * graph breadth first: ResNet's downsample Conv, ready with a block's
 * first Conv, went between that Conv and the second, whose input it then
 * pushed out of the cache. Edges are kept in a compressed (CSR) producer
 * -> consumer list. */
static void heap_push(int *heap, int *count, int v) {
  int i = (*count)++;
  for (; i > 0 && heap[(i - 1) / 2] > v; i = (i - 1) / 2)
    heap[i] = heap[(i - 1) / 2];
  heap[i] = v;
}

static int heap_pop(int *heap, int *count) {
  int top = heap[0], v = heap[--*count], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *count) break;
    if (c + 1 < *count && heap[c + 1] < heap[c]) c++;
    if (heap[c] >= v) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = v;
  return top;
}

status ir_graph_toposort(ir_graph *g, diag *d) {
  int n = g->nnodes;
  if (n == 0 || is_sorted(g) == 1) return ST_OK;
  int *pending = calloc((size_t)n, sizeof *pending);   /* unmet inputs per node */
  int *pos = malloc((size_t)g->nvalues * sizeof *pos); /* producer index per value id */
  ir_node **order = malloc((size_t)n * sizeof *order);
  int *users_start = calloc((size_t)n + 1, sizeof *users_start);
  int *queue = calloc((size_t)n, sizeof *queue); /* ready nodes, a min-heap of indices */
  int *users = NULL;
  status st = ST_OK;
  if (!pending || !pos || !order || !users_start || !queue) {
    st = diag_set(d, ST_ERR_NOMEM, "out of memory sorting graph '%s'", g->name);
    goto done;
  }
  for (int i = 0; i < g->nvalues; i++)
    pos[i] = -1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < g->nodes[i]->nout; j++)
      if (g->nodes[i]->out[j]) pos[g->nodes[i]->out[j]->id] = i;
  /* CSR list of (producer -> consumer) edges. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * g->nodes[i]->nin; j++) {
      const ir_value *v = dep(g->nodes[i], j);
      if (v && pos[v->id] >= 0) {
        users_start[pos[v->id] + 1]++;
        pending[i]++;
      }
    }
  for (int i = 0; i < n; i++)
    users_start[i + 1] += users_start[i];
  users = malloc(((size_t)users_start[n] + 1) * sizeof *users);
  int *fill = calloc((size_t)n, sizeof *fill);
  if (!users || !fill) {
    free(fill);
    st = diag_set(d, ST_ERR_NOMEM, "out of memory sorting graph '%s'", g->name);
    goto done;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * g->nodes[i]->nin; j++) {
      const ir_value *v = dep(g->nodes[i], j);
      if (v && pos[v->id] >= 0) {
        int p = pos[v->id];
        users[users_start[p] + fill[p]++] = i;
      }
    }
  free(fill);
  int emitted = 0, count = 0;
  for (int i = 0; i < n; i++)
    if (pending[i] == 0) heap_push(queue, &count, i);
  while (count > 0) {
    int i = heap_pop(queue, &count);
    order[emitted++] = g->nodes[i];
    for (int e = users_start[i]; e < users_start[i + 1]; e++)
      if (--pending[users[e]] == 0) heap_push(queue, &count, users[e]);
  }
  if (emitted < n) {
    for (int i = 0; i < n; i++)
      if (pending[i] > 0) {
        st = diag_set(d, ST_ERR_INVALID, "graph '%s' has a cycle through node '%s' (%s)", g->name,
                      g->nodes[i]->name, ir_ops[g->nodes[i]->op].name);
        break;
      }
    goto done;
  }
  memcpy(g->nodes, order, (size_t)n * sizeof *order);
done:
  free(pending);
  free(pos);
  free(order);
  free(users_start);
  free(queue);
  free(users);
  return st;
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(ir_value *const *)a)->name, (*(ir_value *const *)b)->name);
}

/* No two values share a name: sorted by name, neighbours differ. */
static status unique_names(const ir_graph *g, diag *d) {
  ir_value **sorted = malloc(((size_t)g->nvalues + 1) * sizeof *sorted);
  if (!sorted) return diag_set(d, ST_ERR_NOMEM, "out of memory verifying graph '%s'", g->name);
  if (g->nvalues) memcpy(sorted, g->values, (size_t)g->nvalues * sizeof *sorted);
  qsort(sorted, (size_t)g->nvalues, sizeof *sorted, by_name);
  status st = ST_OK;
  for (int i = 1; i < g->nvalues && st == ST_OK; i++)
    if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
      st = diag_set(d, ST_ERR_INVALID, "two values are named '%s'", sorted[i]->name);
  free(sorted);
  return st;
}

status ir_verify(const ir_graph *g, diag *d) {
  status st = ST_OK;
  unsigned char *defined = calloc((size_t)g->nvalues + 1, 1);
  if (!defined) return diag_set(d, ST_ERR_NOMEM, "out of memory verifying graph '%s'", g->name);
  for (int i = 0; i < g->nvalues && st == ST_OK; i++) {
    const ir_value *v = g->values[i];
    if (v->id != i)
      st = diag_set(d, ST_ERR_INVALID, "value '%s' has id %d at position %d", v->name, v->id, i);
    else if (dtype_bits(v->dtype) == 0)
      st = diag_set(d, ST_ERR_INVALID, "value '%s' has unknown dtype %d", v->name, (int)v->dtype);
    else if (v->rank > MAX_RANK)
      st = diag_set(d, ST_ERR_LIMIT, "value '%s' has rank %d (limit %d)", v->name, v->rank, MAX_RANK);
    for (int k = 0; st == ST_OK && k < v->rank; k++)
      if (v->dims[k] < 0)
        st = diag_set(d, ST_ERR_INVALID, "value '%s' has dim %d = %lld", v->name, k, (long long)v->dims[k]);
    if (v->data || v->input_index >= 0) defined[i] = 1;
  }
  if (st == ST_OK) st = unique_names(g, d);
  for (int i = 0; i < g->nnodes && st == ST_OK; i++) {
    const ir_node *n = g->nodes[i];
    const ir_op_info *info = &ir_ops[n->op];
    if (n->nin < info->min_in || n->nin > info->max_in || n->nout < info->min_out ||
        n->nout > info->max_out) {
      st = diag_set(d, ST_ERR_INVALID, "node '%s' (%s): %d inputs and %d outputs, expected %d..%d and %d..%d",
                    n->name, info->name, n->nin, n->nout, info->min_in, info->max_in, info->min_out,
                    info->max_out);
      break;
    }
    for (int j = 0; j < n->nin && st == ST_OK; j++) {
      const ir_value *v = n->in[j];
      if (j < info->min_in && !v)
        st = diag_set(d, ST_ERR_INVALID, "node '%s' (%s): required input %d is missing", n->name, info->name,
                      j);
      else if (v && (v->id >= g->nvalues || g->values[v->id] != v))
        st = diag_set(d, ST_ERR_INVALID, "node '%s' (%s): input %d '%s' is not in the graph", n->name,
                      info->name, j, v->name);
      else if (v && !defined[v->id])
        st = diag_set(
            d, ST_ERR_INVALID,
            "node '%s' (%s): input %d '%s' is not produced by an earlier node, an input or a constant",
            n->name, info->name, j, v->name);
    }
    for (int j = 0; j < n->nout && st == ST_OK; j++) {
      const ir_value *v = n->out[j];
      if (!v) continue;
      if (v->id >= g->nvalues || g->values[v->id] != v)
        st = diag_set(d, ST_ERR_INVALID, "node '%s' (%s): output %d is not in the graph", n->name, info->name,
                      j);
      else if (v->producer != n || defined[v->id])
        st = diag_set(d, ST_ERR_INVALID, "node '%s' (%s): output %d '%s' has another producer", n->name,
                      info->name, j, v->name);
      else
        defined[v->id] = 1;
    }
    if (st == ST_OK && (n->op == IR_OP_CONV || n->op == IR_OP_MATMUL))
      st = ir_epilogue_check(n, d);              /* ir/epilogue_ir.h */
    if (st == ST_OK && n->op == IR_OP_VECPROG) { /* the program must fit its node */
      arena tmp;
      ir_vprog p;
      arena_init(&tmp, 0);
      st = ir_vprog_decode(n, &tmp, &p, d);
      arena_free(&tmp);
    }
  }
  for (int i = 0; i < g->noutputs && st == ST_OK; i++)
    if (!defined[g->outputs[i]->id])
      st = diag_set(d, ST_ERR_INVALID, "graph output '%s' is produced by no node", g->outputs[i]->name);
  free(defined);
  return st;
}
