/* tasks.c - tasks as an application sees them: what each stands for in the
 * ONNX model (the SOURCES partition), what it wrote (task hooks), its
 * outputs as float32 in ONNX layout (layer dumps), and the overflow check.
 *
 * Everything here reads the verified model: slot names were checked at load
 * (om_load.c, check_sources), so lookups need no bounds checks. The tensors
 * a task "outputs" are the slots it writes (rt_task_writes), in slot order.
 * Converting to float32 undoes the stored layout: NC1HWC0 [N, C1, H, W, C0]
 * back to NCHW and NDC1HWC0 [N, D, C1, H, W, C0] back to NCDHW (padding
 * lanes dropped); ND is already C order, except an ATTENTION's y view,
 * read through its strides (om_format.h): its om tensor and SOURCES name
 * are the attention's own result, whose C order the view scatters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "common/fp16.h"
#include "runtime/rt.h"

int omrt_model_num_tasks(const omrt_model *model) { return model ? (int)model->def->ntasks : 0; }

const char *omrt_model_task_node(const omrt_model *m, int task, int i) {
  if (!m || !m->sources || task < 0 || (uint32_t)task >= m->def->ntasks || i < 0) return NULL;
  const om_task_source *r = &m->sources[task];
  return (uint32_t)i < r->nnodes ? rt_string(m, m->source_names[r->first + (uint32_t)i]) : NULL;
}

/* Slot s of task i as an omrt_task_tensor (data from args, NULL without). */
static void slot_tensor(const omrt_model *m, uint32_t i, uint32_t s, const rt_args *args,
                        omrt_task_tensor *o) {
  const om_task *t = &m->tasks[i];
  const om_task_source *r = m->sources ? &m->sources[i] : NULL;
  const om_tensor *x = &m->tensors[t->tensors[s]];
  memset(o, 0, sizeof *o);
  o->name = rt_string(m, x->name);
  uint32_t onnx = r ? m->source_names[r->first + r->nnodes + s] : 0;
  o->onnx_name = onnx ? rt_string(m, onnx) : NULL;
  o->dtype = (int)x->dtype;
  o->layout = (int)x->layout;
  o->rank = (int)x->rank;
  for (uint32_t k = 0; k < x->rank; k++)
    o->dims[k] = x->dims[k];
  o->data = args ? args->data[s] : NULL;
  o->bytes = (size_t)x->bytes;
}

void rt_task_info(const omrt_model *m, uint32_t i, const rt_args *args, omrt_task_info *info) {
  const om_task *t = &m->tasks[i];
  memset(info, 0, sizeof *info);
  info->index = (int)i;
  while ((uint32_t)info->gear + 1 < m->ngears && i >= m->gears[info->gear + 1].first_task)
    info->gear++;
  info->name = rt_string(m, t->name);
  info->kind = rt_kernels[t->kind].name;
  info->nnodes = m->sources ? (int)m->sources[i].nnodes : 0;
  uint32_t writes = rt_task_writes(m, t);
  for (uint32_t s = 0; s < t->ntensors; s++) {
    if (!(writes & OM_SLOT(s)) || t->tensors[s] == OM_NONE) continue;
    omrt_task_tensor *o = &info->outputs[info->noutputs++];
    slot_tensor(m, i, s, args, o);
    if (t->kind == OM_TASK_ATTENTION && s == OM_ATTENTION_T_Y && (t->params[OM_ATTENTION_P_VIEWS] >> 3 & 1)) {
      const int32_t *v = &t->params[OM_ATTENTION_P_VIEW + 4 * 3]; /* strides of all dims but the last */
      for (uint32_t k = 0; k + 1 < m->tensors[t->tensors[s]].rank; k++)
        o->strides[k] = v[k];
      o->strides[m->tensors[t->tensors[s]].rank - 1] = 1;
    }
  }
}

int rt_task_input(const omrt_model *m, uint32_t i, const rt_args *args, int k, omrt_task_tensor *out) {
  const om_task *t = &m->tasks[i];
  uint32_t writes = rt_task_writes(m, t);
  int n = 0;
  for (uint32_t s = 0; s < t->ntensors; s++) {
    if ((writes & OM_SLOT(s)) || t->tensors[s] == OM_NONE) continue;
    if (n++ == k) {
      slot_tensor(m, i, s, args, out);
      return 1;
    }
  }
  return 0;
}

omrt_status omrt_model_task(const omrt_model *m, int task, omrt_task_info *info_out) {
  if (!m || !info_out) return rt_error(OMRT_ERR_ARG, "omrt_model_task: NULL argument");
  if (task < 0 || (uint32_t)task >= m->def->ntasks)
    return rt_error(OMRT_ERR_ARG, "omrt_model_task: task %d outside 0..%u", task, m->def->ntasks - 1);
  rt_task_info(m, (uint32_t)task, NULL, info_out);
  return OMRT_OK;
}

static size_t logical_count(const omrt_task_tensor *t) {
  size_t n = 1;
  for (int k = 0; k < t->rank; k++)
    n *= (size_t)t->dims[k];
  return n;
}

omrt_status omrt_task_tensor_to_f32(const omrt_task_tensor *t, float *dst, size_t count) {
  if (!t || !t->data || !dst) return rt_error(OMRT_ERR_ARG, "omrt_task_tensor_to_f32: NULL argument");
  if (count != logical_count(t))
    return rt_error(OMRT_ERR_ARG, "omrt_task_tensor_to_f32: '%s': count %zu, the tensor has %zu elements",
                    t->name, count, logical_count(t));
  if (t->layout == OMRT_LAYOUT_ND && t->rank > 0 && t->strides[t->rank - 1] != 0) { /* a strided view */
    for (size_t i = 0; i < count; i++) {
      size_t rest = i, at = 0;
      for (int k = t->rank - 1; k >= 0; k--)
        at += rest % (size_t)t->dims[k] * (size_t)t->strides[k], rest /= (size_t)t->dims[k];
      dst[i] = (float)elem_get(t->data, t->dtype, at);
    }
    return OMRT_OK;
  }
  if (t->layout == OMRT_LAYOUT_ND) {
    for (size_t i = 0; i < count; i++)
      dst[i] = (float)elem_get(t->data, t->dtype, i);
    return OMRT_OK;
  }
  if (t->layout != OMRT_LAYOUT_NC1HWC0 && t->layout != OMRT_LAYOUT_NDC1HWC0)
    return rt_error(OMRT_ERR_UNSUPPORTED, "omrt_task_tensor_to_f32: '%s': layout %d holds packed weights",
                    t->name, t->layout);
  /* NC1HWC0 is NDC1HWC0 with D = 1: [N, D, C1, H, W, C0] -> [N, C, D, H, W]. */
  const int d3 = t->layout == OMRT_LAYOUT_NDC1HWC0;
  const size_t N = (size_t)t->dims[0], C = (size_t)t->dims[1], D = d3 ? (size_t)t->dims[2] : 1;
  const size_t HW = (size_t)t->dims[2 + d3] * (size_t)t->dims[3 + d3];
  const size_t C1 = (C + C0 - 1) / C0;
  for (size_t n = 0; n < N; n++)
    for (size_t c = 0; c < C; c++)
      for (size_t d = 0; d < D; d++)
        for (size_t p = 0; p < HW; p++)
          dst[((n * C + c) * D + d) * HW + p] =
              (float)elem_get(t->data, t->dtype, (((n * D + d) * C1 + c / C0) * HW + p) * C0 + c % C0);
  return OMRT_OK;
}

/* The first non-finite element of a float tensor's stored data, or -1. */
static int64_t first_nonfinite(const omrt_task_tensor *t) {
  const size_t n = t->bytes / (t->dtype == OMRT_FLOAT16 ? 2 : 4);
  if (t->dtype == OMRT_FLOAT16) {
    const uint16_t *h = t->data;
    for (size_t i = 0; i < n; i++)
      if ((h[i] & 0x7C00u) == 0x7C00u) return (int64_t)i;
  } else if (t->dtype == OMRT_FLOAT32) {
    const float *f = t->data;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(f[i])) return (int64_t)i;
  }
  return -1;
}

omrt_status rt_check_overflow(const omrt_model *m, const omrt_task_info *info) {
  for (int k = 0; k < info->noutputs; k++) {
    const omrt_task_tensor *o = &info->outputs[k];
    int64_t at = first_nonfinite(o);
    if (at < 0) continue;
    char nodes[512] = "";
    size_t len = 0;
    for (int j = 0; j < info->nnodes && len + 1 < sizeof nodes; j++)
      len += (size_t)snprintf(nodes + len, sizeof nodes - len, "%s'%s'", j ? ", " : "",
                              omrt_model_task_node(m, info->index, j));
    double v = o->dtype == OMRT_FLOAT16 ? half_to_float(((const uint16_t *)o->data)[at])
                                        : ((const float *)o->data)[at];
    return rt_error(OMRT_ERR_OVERFLOW,
                    "overflow: task %d '%s' (%s) wrote %s into '%s'%s%s%s (%s, stored element %lld)%s%s%s",
                    info->index, info->name, info->kind,
                    isnan(v) ? "NaN"
                    : v > 0  ? "+inf"
                             : "-inf",
                    o->name, o->onnx_name ? " (ONNX tensor '" : "", o->onnx_name ? o->onnx_name : "",
                    o->onnx_name ? "')" : "", o->dtype == OMRT_FLOAT16 ? "fp16" : "fp32", (long long)at,
                    info->nnodes ? "; ONNX nodes: " : "", nodes,
                    o->dtype == OMRT_FLOAT16 ? "; fp16 holds |x| <= 65504" : "");
  }
  return OMRT_OK;
}
