/* emit_sources.c - the SOURCES partition: which ONNX nodes each task stands
 * for, and which ONNX tensor each task output holds.
 *
 * The passes keep ONNX tensor names on the values that still hold those
 * tensors (a fused Conv produces its absorbed Relu's output value, name
 * kept; a vector program its chain's last value), and give new values new
 * names. So the mapping needs no bookkeeping in the passes: it is read off
 * the names at emit time, against the source nodes the frontend recorded
 * (ir_graph.src, in ONNX order).
 *   realized  a source node some of whose outputs a task writes (by name):
 *             listed with every task writing one of them, and that task's
 *             slot carries the ONNX tensor name.
 *   fused     a source node none of whose outputs survived, which computes
 *             from the model's inputs (not a Shape/Size/Constant, not a
 *             chain of constants: those folded at compile time): listed
 *             with the first task that any of its readers is listed with,
 *             found walking the nodes backwards (readers come later).
 * A node that is neither (folded, or dead) is listed with no task. A graph
 * with no source nodes (parsed from IR text) gets no SOURCES partition.
 */
#include "emit_sources.h"

#include <stdlib.h>
#include <string.h>

/* Name -> source node index, open addressing over a power-of-two table. */
typedef struct name_map {
  const char **keys;
  int *vals;
  size_t mask;
} name_map;

static size_t hash_name(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int map_init(name_map *m, size_t count, arena *a) {
  size_t cap = 64;
  while (cap < 2 * count + 2)
    cap *= 2;
  m->keys = arena_array(a, cap, sizeof *m->keys);
  m->vals = arena_array(a, cap, sizeof *m->vals);
  m->mask = cap - 1;
  return m->keys && m->vals ? 0 : -1;
}

static void map_put(name_map *m, const char *k, int v) {
  size_t i = hash_name(k) & m->mask;
  while (m->keys[i] && strcmp(m->keys[i], k) != 0)
    i = (i + 1) & m->mask;
  if (!m->keys[i]) m->keys[i] = k, m->vals[i] = v;
}

static int map_get(const name_map *m, const char *k) {
  size_t i = hash_name(k) & m->mask;
  while (m->keys[i]) {
    if (strcmp(m->keys[i], k) == 0) return m->vals[i];
    i = (i + 1) & m->mask;
  }
  return -1;
}

typedef struct pair {
  int task, node;
} pair;

static int pair_cmp(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->task != y->task) return x->task < y->task ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

enum { INPUT = -2 }; /* map value of a graph input's name */

status emit_sources(const ir_graph *g, const emit_task_src *tasks, int ntasks, om_writer *w, arena *a,
                    diag *d) {
  const int n = g->nsrc;
  if (n == 0) return ST_OK; /* a graph not read from a model (IR text): no SOURCES */
  size_t nnames = (size_t)g->ninputs;
  for (int i = 0; i < n; i++)
    nnames += (size_t)g->src[i].nout;
  name_map prod;
  int *owner = arena_array(a, (size_t)n + 1, sizeof *owner);
  unsigned char *realized = arena_array(a, (size_t)n + 1, 1), *dynamic = arena_array(a, (size_t)n + 1, 1);
  size_t npairs = 0, cap_pairs = (size_t)n + 1;
  for (int t = 0; t < ntasks; t++)
    cap_pairs += (size_t)tasks[t].ntensors;
  pair *pairs = arena_array(a, cap_pairs, sizeof *pairs);
  if (map_init(&prod, nnames, a) || !owner || !realized || !dynamic || !pairs) goto nomem;
  for (int i = 0; i < g->ninputs; i++)
    map_put(&prod, g->inputs[i]->name, INPUT);
  for (int i = 0; i < n; i++) {
    owner[i] = -1;
    for (int k = 0; k < g->src[i].nout; k++)
      if (*g->src[i].out[k]) map_put(&prod, g->src[i].out[k], i);
  }

  for (int t = 0; t < ntasks; t++)
    for (int s = 0; s < tasks[t].ntensors; s++) {
      const char *name = tasks[t].writes[s] ? tasks[t].writes[s]->name : tasks[t].names[s];
      int p = name ? map_get(&prod, name) : -1;
      if (p < 0) continue;
      pairs[npairs++] = (pair){t, p};
      if (!realized[p]) owner[p] = t, realized[p] = 1;
    }

  for (int i = 0; i < n; i++) {
    const ir_source *s = &g->src[i];
    if (!strcmp(s->op_type, "Shape") || !strcmp(s->op_type, "Size") || !strcmp(s->op_type, "Constant"))
      continue;
    for (int k = 0; k < s->nin && !dynamic[i]; k++) {
      int p = *s->in[k] ? map_get(&prod, s->in[k]) : -1;
      dynamic[i] = p == INPUT || (p >= 0 && p < i && dynamic[p]);
    }
  }
  for (int j = n - 1; j >= 0; j--) {
    if (owner[j] < 0) continue;
    for (int k = 0; k < g->src[j].nin; k++) {
      int q = *g->src[j].in[k] ? map_get(&prod, g->src[j].in[k]) : -1;
      if (q >= 0 && q < j && !realized[q] && dynamic[q] && (owner[q] < 0 || owner[j] < owner[q]))
        owner[q] = owner[j];
    }
  }
  for (int i = 0; i < n; i++)
    if (!realized[i] && owner[i] >= 0) pairs[npairs++] = (pair){owner[i], i};
  if (npairs) qsort(pairs, npairs, sizeof *pairs, pair_cmp);

  om_task_source *recs = arena_array(a, (size_t)ntasks + 1, sizeof *recs);
  uint32_t *names = arena_array(a, npairs + cap_pairs + 1, sizeof *names), count = 0;
  if (!recs || !names) goto nomem;
  size_t at = 0;
  for (int t = 0; t < ntasks; t++) {
    recs[t].first = count;
    for (; at < npairs && pairs[at].task == t; at++) {
      if (at > 0 && pairs[at - 1].task == t && pairs[at - 1].node == pairs[at].node) continue;
      if ((names[count++] = om_writer_string(w, g->src[pairs[at].node].name)) == OM_NONE) goto nomem;
      recs[t].nnodes++;
    }
    for (int s = 0; s < tasks[t].ntensors; s++) {
      const char *name = tasks[t].writes[s] ? tasks[t].writes[s]->name : tasks[t].names[s];
      names[count] = name && map_get(&prod, name) >= 0 ? om_writer_string(w, name) : 0;
      if (names[count++] == OM_NONE) goto nomem;
    }
  }
  if (om_writer_add_sources(w, recs, (uint32_t)ntasks, names, count)) goto nomem;
  return ST_OK;
nomem:
  return diag_set(d, ST_ERR_NOMEM, "emit: out of memory for the task sources");
}
