/* ptq.c - post-training quantization to QDQ ONNX (quant/ptq.h): the float
 * model run by the reference evaluator over the calibration samples, each
 * planned tensor's statistics, the ranges, the written model, and the
 * fake-quantization comparison.
 *
 * Design. The model is read twice from the same bytes: unpacked by
 * protobuf-c (what quant/qdq.c rewrites, every field kept) and loaded by
 * the project's loader into an IR graph (what the evaluator runs). The two
 * meet by tensor name: the loader gives every ONNX tensor's value its ONNX
 * name. A sample's values live in a per-sample arena, freed once the
 * statistics have taken them, so memory stays one forward pass.
 */
#include "quant/ptq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "passes/pass.h"

static status infer(ir_graph *g, diag *d) {
  pass_ctx ctx = {0};
  return pass_shape_infer(g, &ctx, d);
}

static status read_all(const char *path, void **data_out, size_t *size_out, diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return diag_set(d, ST_ERR_IO, "%s: cannot open", path);
  void *buf = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? 2 * cap : 1 << 20;
      void *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return diag_set(d, ST_ERR_NOMEM, "%s: out of memory reading", path);
      }
      buf = nb;
    }
    size_t got = fread((char *)buf + size, 1, cap - size, f);
    size += got;
    if (got == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return diag_set(d, ST_ERR_IO, "%s: read error", path);
  }
  *data_out = buf, *size_out = size;
  return ST_OK;
}

/* The graph inputs' shapes with symbolic dims as 1 (batch 1), for a model
 * loaded without --input_shape. */
static int default_shapes(const Onnx__ModelProto *m, arena *a, onnx_input_shape **out) {
  const Onnx__GraphProto *g = m->graph;
  onnx_input_shape *s = arena_array(a, g->n_input + 1, sizeof *s);
  int n = 0;
  for (size_t i = 0; s && i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    const Onnx__TypeProto *tp = vi->type;
    int init = 0;
    for (size_t k = 0; k < g->n_initializer && !init; k++)
      init = g->initializer[k]->name && !strcmp(g->initializer[k]->name, vi->name);
    if (init || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->shape ||
        tp->tensor_type->shape->n_dim > MAX_RANK)
      continue;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    s[n].name = vi->name;
    s[n].rank = (int)sh->n_dim;
    for (size_t k = 0; k < sh->n_dim; k++) {
      const Onnx__TensorShapeProto__Dimension *dm = sh->dim[k];
      s[n].dims[k] =
          dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value > 0
              ? dm->dim_value
              : 1;
    }
    n++;
  }
  *out = s;
  return n;
}

status oq_open(const char *path, const onnx_input_shape *shapes, int nshapes, const char *const *skip,
               int nskip, int every_op, oq_session **out, diag *d) {
  *out = NULL;
  oq_session *s = calloc(1, sizeof *s);
  if (!s) return diag_set(d, ST_ERR_NOMEM, "out of memory");
  s->path = path;
  arena_init(&s->a, 0);
  status st = read_all(path, &s->file, &s->file_bytes, d);
  if (!st) {
    s->model = onnx__model_proto__unpack(NULL, s->file_bytes, s->file);
    if (!s->model || !s->model->graph) st = diag_set(d, ST_ERR_PARSE, "%s: not an ONNX model", path);
  }
  if (!st && !shapes) nshapes = default_shapes(s->model, &s->a, (onnx_input_shape **)&shapes);
  onnx_options opt = {shapes, nshapes, 0, NULL, NULL, 1}; /* every node: the rewrite reads them all */
  if (!st) st = onnx_load_memory(s->file, s->file_bytes, NULL, path, &opt, &s->graph, d);
  if (!st) st = infer(s->graph, d);
  if (!st && s->graph->ninputs != 1)
    st = diag_set(d, ST_ERR_UNSUPPORTED, "%s: the model has %d inputs; one input is supported", path,
                  s->graph->ninputs);
  if (!st) st = oq_plan_make(s->model, s->graph, skip, nskip, every_op, &s->a, &s->plan, d);
  if (!st) {
    s->input_bytes = (size_t)ir_value_bytes(s->graph->inputs[0]);
    int n = s->plan.ntensors;
    s->stats = arena_array(&s->a, (size_t)n + 1, sizeof *s->stats);
    s->lo = arena_array(&s->a, (size_t)n + 1, sizeof *s->lo);
    s->hi = arena_array(&s->a, (size_t)n + 1, sizeof *s->hi);
    if (!s->stats || !s->lo || !s->hi) st = diag_set(d, ST_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++)
      qc_init(&s->stats[i]);
  }
  if (st) {
    oq_close(s);
    return st;
  }
  *out = s;
  return ST_OK;
}

/* Every value of g on `input` (in `a`). */
static const void **run(const ir_graph *g, const void *input, arena *a, diag *d, status *st) {
  const void **vals = arena_array(a, (size_t)g->nvalues + 1, sizeof *vals);
  if (!vals) {
    *st = diag_set(d, ST_ERR_NOMEM, "out of memory evaluating the model");
    return NULL;
  }
  *st = ir_eval_graph_values(g, &input, vals, a, d);
  return *st ? NULL : vals;
}

status oq_run(const oq_session *s, const void *input, oq_sample *r, diag *d) {
  status st;
  arena_init(&r->a, 0);
  r->vals = run(s->graph, input, &r->a, d, &st);
  return st;
}

void oq_take(oq_session *s, const oq_sample *r) {
  for (int i = 0; i < s->plan.ntensors; i++) {
    const ir_value *v = ir_value_find(s->graph, s->plan.tensors[i]);
    if (v && r->vals[v->id]) qc_add(&s->stats[i], r->vals[v->id], (size_t)ir_value_elements(v));
  }
  s->samples++;
}

void oq_run_free(oq_sample *r) {
  arena_free(&r->a);
  r->vals = NULL;
}

status oq_calibrate(oq_session *s, const void *input, diag *d) {
  oq_sample r;
  status st = oq_run(s, input, &r, d);
  if (!st) oq_take(s, &r);
  oq_run_free(&r);
  return st;
}

status oq_finish(oq_session *s, qc_method m, double percentile, diag *d) {
  if (!s->samples && s->plan.ntensors) return diag_set(d, ST_ERR_INVALID, "no calibration sample was given");
  for (int i = 0; i < s->plan.ntensors; i++)
    qc_range(&s->stats[i], m, percentile, &s->lo[i], &s->hi[i]);
  return oq_write(s->model, &s->plan, s->lo, s->hi, &s->a, &s->written, &s->written_bytes, d);
}

static double cosine(const float *x, const float *y, int64_t n) {
  double xy = 0, xx = 0, yy = 0;
  for (int64_t i = 0; i < n; i++)
    xy += (double)x[i] * y[i], xx += (double)x[i] * x[i], yy += (double)y[i] * y[i];
  return xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : xx == yy ? 1 : 0;
}

status oq_compare(oq_session *s, const void *input, double *cos_out, double *output_cos_out, diag *d) {
  if (!s->written) return diag_set(d, ST_ERR_INVALID, "oq_compare before oq_finish");
  ir_graph *q = NULL;
  onnx_input_shape shape = {s->graph->inputs[0]->name, s->graph->inputs[0]->rank, {0}};
  memcpy(shape.dims, s->graph->inputs[0]->dims, sizeof shape.dims);
  onnx_options opt = {&shape, 1, 0, NULL, NULL, 1};
  status st = onnx_load_memory(s->written, s->written_bytes, NULL, "the quantized model", &opt, &q, d);
  if (!st) st = infer(q, d);
  arena a;
  arena_init(&a, 0);
  const void **fv = st ? NULL : run(s->graph, input, &a, d, &st);
  const void **qv = st ? NULL : run(q, input, &a, d, &st);
  char name[512];
  for (int i = 0; qv && i < s->plan.ntensors; i++) {
    const ir_value *v = ir_value_find(s->graph, s->plan.tensors[i]);
    snprintf(name, sizeof name, "%s_dequantized", s->plan.tensors[i]);
    const ir_value *w = ir_value_find(q, name);
    if (!w) w = ir_value_find(q, s->plan.tensors[i]); /* a graph output's DequantizeLinear keeps its name */
    cos_out[i] = v && w && fv[v->id] && qv[w->id] && ir_value_elements(v) == ir_value_elements(w)
                     ? cosine(fv[v->id], qv[w->id], ir_value_elements(v))
                     : NAN;
  }
  if (qv) {
    const ir_value *v = s->graph->outputs[0], *w = q->outputs[0];
    *output_cos_out =
        v->dtype == DT_FLOAT32 && w->dtype == DT_FLOAT32 && ir_value_elements(v) == ir_value_elements(w)
            ? cosine(fv[v->id], qv[w->id], ir_value_elements(v))
            : NAN;
  }
  arena_free(&a);
  if (q) ir_graph_free(q);
  return st;
}

void oq_close(oq_session *s) {
  if (!s) return;
  if (s->graph) ir_graph_free(s->graph);
  if (s->model) onnx__model_proto__free_unpacked(s->model, NULL);
  free(s->file);
  arena_free(&s->a);
  free(s);
}
