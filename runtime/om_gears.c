/* om_gears.c - the IO and GEARS partitions at load (om_format.h), and the
 * gear part of libomrt's API.
 *
 * rt_load_gears runs after the tensor table is checked and before the
 * tasks are: it reads the I/O formats, the gear records (or makes the one
 * implicit gear of a package without them), builds every gear's I/O
 * descriptors from its io[] and the model's across the gears (a dim that
 * differs is -1, bytes the largest), and checks that each gear's I/O and
 * WORKSPACE tensors fit its buffers. The loader then checks each gear's
 * tasks against the gear's tensors (om_load.c). Size arithmetic goes
 * through mul_u64 / add_u64, records are read only once their partition's
 * size is proved, and every rejection names the partition, the gear and
 * the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

static const char *format_name(uint32_t f) {
  static const char *const names[OM_IO_FORMAT_COUNT] = {"ND", "NCHW", "NHWC", "NC1HWC0"};
  return f < OM_IO_FORMAT_COUNT ? names[f] : "?";
}

/* The IO partition: one om_io_format per model input, then output. */
static omrt_status check_formats(omrt_model *m, const rt_part *p) {
  if (!p->present) return OMRT_OK;
  const om_model_def *d = m->def;
  uint64_t nio = (uint64_t)d->ninputs + d->noutputs;
  if (p->size != 4 * nio)
    return rt_error(OMRT_ERR_FORMAT,
                    "om partition IO (offset %llu): %llu bytes != 4 x (%u inputs + %u outputs)",
                    (unsigned long long)p->offset, (unsigned long long)p->size, d->ninputs, d->noutputs);
  m->formats = (const uint32_t *)(m->base + p->offset);
  for (uint64_t i = 0; i < nio; i++)
    if (m->formats[i] >= OM_IO_FORMAT_COUNT)
      return rt_error(OMRT_ERR_FORMAT, "om partition IO (offset %llu): %s %llu: unknown format %u",
                      (unsigned long long)p->offset, i < d->ninputs ? "input" : "output",
                      (unsigned long long)(i < d->ninputs ? i : i - d->ninputs), m->formats[i]);
  return OMRT_OK;
}

/* Builds the descriptor of input/output `k` of gear `gi` from its io[] and
 * checks that its tensor is the caller's buffer number k, one of the
 * gear's, in the layout its format says (C order; NC1HWC0 for that
 * format). */
static omrt_status build_io(omrt_model *m, uint32_t gi, uint32_t k, int is_input) {
  const om_model_def *d = m->def;
  rt_gear *g = &m->gears[gi];
  uint32_t slot = is_input ? k : d->ninputs + k;
  const char *what = is_input ? "input" : "output";
  char where[96];
  if (m->ngears > 1)
    snprintf(where, sizeof where, "om partition GEARS: gear %u %s %u", gi, what, k);
  else
    snprintf(where, sizeof where, "om partition MODEL: %s %u", what, k);
  uint32_t ti = g->io[slot];
  if (ti < g->first_tensor || ti - g->first_tensor >= g->ntensors)
    return rt_error(OMRT_ERR_FORMAT, "%s: tensor index %u outside the gear's tensors %u..%u", where, ti,
                    g->first_tensor, g->first_tensor + (g->ntensors ? g->ntensors - 1 : 0));
  const om_tensor *t = &m->tensors[ti];
  uint32_t region = is_input ? OM_REGION_INPUT : OM_REGION_OUTPUT;
  if (t->region != region || t->index != k)
    return rt_error(OMRT_ERR_FORMAT, "%s: tensor %u '%s' is region %s index %u, not %s index %u", where, ti,
                    rt_string(m, t->name), rt_region_name(t->region), t->index, rt_region_name(region), k);
  uint32_t format = m->formats ? m->formats[slot] : OM_IO_ND;
  int want = format == OM_IO_NC1HWC0 ? LAYOUT_NC1HWC0 : LAYOUT_ND;
  if ((int)t->layout != want)
    return rt_error(OMRT_ERR_FORMAT, "%s: tensor %u '%s' has layout %s; format %s I/O must be %s", where, ti,
                    rt_string(m, t->name), layout_name((int)t->layout), format_name(format),
                    layout_name(want));
  if ((format == OM_IO_NCHW || format == OM_IO_NHWC) && t->rank != 4)
    return rt_error(OMRT_ERR_FORMAT, "%s: tensor %u '%s' has rank %u; format %s needs 4", where, ti,
                    rt_string(m, t->name), t->rank, format_name(format));
  if (t->bytes > SIZE_MAX)
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes too large for this host", where,
                    (unsigned long long)t->bytes);
  omrt_tensor_desc *desc = is_input ? &g->inputs[k] : &g->outputs[k];
  desc->name = rt_string(m, t->name);
  desc->dtype = (int)t->dtype;
  desc->rank = (int)t->rank;
  for (uint32_t j = 0; j < t->rank; j++)
    desc->dims[j] = t->dims[j];
  desc->bytes = (size_t)t->bytes;
  desc->format = (int)format;
  desc->count_axis = -1; /* the COUNTS partition, checked later, says otherwise */
  return OMRT_OK;
}

/* Every tensor of gear `gi` in an I/O region fits in that gear's I/O
 * buffer, and every WORKSPACE one in the gear's workspace. */
static omrt_status check_gear_views(const omrt_model *m, uint32_t gi, const rt_part *p) {
  const rt_gear *g = &m->gears[gi];
  for (uint32_t i = g->first_tensor; i < g->first_tensor + g->ntensors; i++) {
    const om_tensor *t = &m->tensors[i];
    const omrt_tensor_desc *io = t->region == OM_REGION_INPUT    ? &g->inputs[t->index]
                                 : t->region == OM_REGION_OUTPUT ? &g->outputs[t->index]
                                                                 : NULL;
    if (io && t->bytes > io->bytes)
      return rt_error(
          OMRT_ERR_FORMAT,
          "om partition TENSORS (offset %llu): tensor %u '%s': %llu bytes exceed %s %u (%zu bytes)",
          (unsigned long long)p->offset, i, rt_string(m, t->name), (unsigned long long)t->bytes,
          rt_region_name(t->region), t->index, io->bytes);
    if (t->region == OM_REGION_WORKSPACE &&
        t->offset + t->bytes > g->workspace_bytes) /* (no overflow: checked) */
      return rt_error(
          OMRT_ERR_FORMAT,
          "om partition TENSORS (offset %llu): tensor %u '%s': WORKSPACE offset %llu + %llu bytes "
          "exceeds gear %u's workspace_bytes %llu",
          (unsigned long long)p->offset, i, rt_string(m, t->name), (unsigned long long)t->offset,
          (unsigned long long)t->bytes, gi, (unsigned long long)g->workspace_bytes);
  }
  return OMRT_OK;
}

/* The gear records of the GEARS partition, checked against the tensor and
 * task tables: they partition both in order, and their values are the
 * kind's. */
static omrt_status check_gear_records(omrt_model *m, const rt_part *p) {
  const om_model_def *d = m->def;
  char where[64];
  snprintf(where, sizeof where, "om partition GEARS (offset %llu)", (unsigned long long)p->offset);
  if (p->size < sizeof(om_gears))
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes, shorter than its 16-byte header", where,
                    (unsigned long long)p->size);
  const om_gears *h = (const om_gears *)(m->base + p->offset);
  if (h->kind < OM_GEAR_BATCH || h->kind > OM_GEAR_DIMS)
    return rt_error(OMRT_ERR_FORMAT, "%s: unknown gear kind %u", where, h->kind);
  if (h->ngears < 1 || h->ngears > OM_MAX_GEARS)
    return rt_error(OMRT_ERR_FORMAT, "%s: ngears %u outside 1..%d", where, h->ngears, OM_MAX_GEARS);
  uint32_t want_values = h->kind == OM_GEAR_BATCH ? 1 : h->kind == OM_GEAR_IMAGE_SIZE ? 2 : 0;
  if (want_values ? h->nvalues != want_values : h->nvalues < 1 || h->nvalues > OM_GEAR_MAX_VALUES)
    return rt_error(OMRT_ERR_FORMAT, "%s: nvalues %u is not what gear kind %u takes", where, h->nvalues,
                    h->kind);
  if (h->reserved) return rt_error(OMRT_ERR_FORMAT, "%s: reserved header field is not zero", where);
  uint64_t nio = (uint64_t)d->ninputs + d->noutputs, per, want;
  if (mul_u64(nio, 4, &per) || add_u64(per, sizeof(om_gear), &per) || mul_u64(per, h->ngears, &want) ||
      add_u64(want, sizeof(om_gears), &want) || p->size != want)
    return rt_error(OMRT_ERR_FORMAT, "%s: %llu bytes != 16 + %u gears x (160 + 4 x %llu I/O)", where,
                    (unsigned long long)p->size, h->ngears, (unsigned long long)nio);
  const om_gear *recs = (const om_gear *)(h + 1);
  const uint32_t *ios = (const uint32_t *)(recs + h->ngears);
  if (!(m->gears = calloc(h->ngears, sizeof *m->gears)))
    return rt_error(OMRT_ERR_NOMEM, "om load: out of memory for the gears");
  m->ngears = h->ngears;
  m->gear_kind = h->kind;
  m->gear_nvalues = h->nvalues;
  uint64_t tensors = 0, tasks = 0;
  for (uint32_t gi = 0; gi < h->ngears; gi++) {
    const om_gear *r = &recs[gi];
    if (r->first_tensor != tensors || r->first_task != tasks)
      return rt_error(OMRT_ERR_FORMAT,
                      "%s: gear %u starts at tensor %u and task %u, not where gear %u ends (%llu, %llu)",
                      where, gi, r->first_tensor, r->first_task, gi ? gi - 1 : 0, (unsigned long long)tensors,
                      (unsigned long long)tasks);
    tensors += r->ntensors, tasks += r->ntasks;
    if (tensors > d->ntensors || tasks > d->ntasks)
      return rt_error(OMRT_ERR_FORMAT, "%s: gear %u runs past the %u tensors or %u tasks", where, gi,
                      d->ntensors, d->ntasks);
    if (r->workspace_bytes > d->workspace_bytes)
      return rt_error(OMRT_ERR_FORMAT, "%s: gear %u workspace_bytes %llu exceeds the model's %llu", where, gi,
                      (unsigned long long)r->workspace_bytes, (unsigned long long)d->workspace_bytes);
    if (r->reserved[0] || r->reserved[1])
      return rt_error(OMRT_ERR_FORMAT, "%s: gear %u: reserved fields are not zero", where, gi);
    for (uint32_t v = 0; v < OM_GEAR_MAX_VALUES; v++)
      if (v < h->nvalues ? r->values[v] < 1 : r->values[v] != 0)
        return rt_error(OMRT_ERR_FORMAT, "%s: gear %u value %u is %lld", where, gi, v,
                        (long long)r->values[v]);
    for (uint32_t o = 0; o < gi; o++)
      if (memcmp(recs[o].values, r->values, sizeof r->values) == 0)
        return rt_error(OMRT_ERR_FORMAT, "%s: gears %u and %u have the same values", where, o, gi);
    rt_gear *g = &m->gears[gi];
    g->rec = r;
    g->first_tensor = r->first_tensor, g->ntensors = r->ntensors;
    g->first_task = r->first_task, g->ntasks = r->ntasks;
    g->tasks = m->tasks + r->first_task;
    g->workspace_bytes = r->workspace_bytes;
    g->io = ios + (size_t)gi * nio;
  }
  if (tensors != d->ntensors || tasks != d->ntasks)
    return rt_error(OMRT_ERR_FORMAT, "%s: the gears hold %llu tensors and %llu tasks, not %u and %u", where,
                    (unsigned long long)tensors, (unsigned long long)tasks, d->ntensors, d->ntasks);
  if (nio && memcmp(m->gears[0].io, m->io, nio * 4) != 0)
    return rt_error(OMRT_ERR_FORMAT, "%s: gear 0's I/O tensors differ from MODEL's io[]", where);
  return OMRT_OK;
}

/* The gears (one implicit gear without a GEARS partition), each gear's I/O
 * descriptors, and the model's across them. */
omrt_status rt_load_gears(omrt_model *m, const rt_part *pio, const rt_part *pg, const rt_part *pt) {
  const om_model_def *d = m->def;
  omrt_status s;
  if ((s = check_formats(m, pio))) return s;
  if (pg->present) {
    if ((s = check_gear_records(m, pg))) return s;
  } else {
    if (!(m->gears = calloc(1, sizeof *m->gears))) return rt_error(OMRT_ERR_NOMEM, "om load: out of memory");
    m->ngears = 1;
    *m->gears = (rt_gear){.tasks = m->tasks,
                          .ntasks = d->ntasks,
                          .ntensors = d->ntensors,
                          .workspace_bytes = d->workspace_bytes,
                          .io = m->io};
  }
  m->inputs = calloc(d->ninputs ? d->ninputs : 1, sizeof *m->inputs);
  m->outputs = calloc(d->noutputs, sizeof *m->outputs);
  if (!m->inputs || !m->outputs)
    return rt_error(OMRT_ERR_NOMEM, "om load: out of memory for I/O descriptors");
  for (uint32_t gi = 0; gi < m->ngears; gi++) {
    rt_gear *g = &m->gears[gi];
    g->inputs = calloc(d->ninputs ? d->ninputs : 1, sizeof *g->inputs);
    g->outputs = calloc(d->noutputs, sizeof *g->outputs);
    if (!g->inputs || !g->outputs)
      return rt_error(OMRT_ERR_NOMEM, "om load: out of memory for I/O descriptors");
    for (uint32_t k = 0; k < d->ninputs + d->noutputs; k++) {
      int in = k < d->ninputs;
      uint32_t idx = in ? k : k - d->ninputs;
      if ((s = build_io(m, gi, idx, in))) return s;
      const omrt_tensor_desc *t = in ? &g->inputs[idx] : &g->outputs[idx];
      omrt_tensor_desc *all = in ? &m->inputs[idx] : &m->outputs[idx];
      if (gi == 0) {
        *all = *t;
        continue;
      }
      if (strcmp(t->name, all->name) || t->dtype != all->dtype || t->rank != all->rank)
        return rt_error(
            OMRT_ERR_FORMAT,
            "om partition GEARS: gear %u %s %u '%s' differs from gear 0's '%s' in name, dtype or rank", gi,
            in ? "input" : "output", idx, t->name, all->name);
      for (int j = 0; j < t->rank; j++)
        if (t->dims[j] != all->dims[j]) all->dims[j] = -1;
      if (t->bytes > all->bytes) all->bytes = t->bytes;
    }
    if ((s = check_gear_views(m, gi, pt))) return s;
  }
  return OMRT_OK;
}

int omrt_model_num_gears(const omrt_model *model) { return model ? (int)model->ngears : 0; }

omrt_status omrt_model_gear(const omrt_model *model, int gear, omrt_gear_desc *desc_out) {
  if (!model || !desc_out) return rt_error(OMRT_ERR_ARG, "omrt_model_gear: NULL argument");
  if (gear < 0 || (uint32_t)gear >= model->ngears)
    return rt_error(OMRT_ERR_ARG, "omrt_model_gear: gear %d outside 0..%u", gear, model->ngears - 1);
  memset(desc_out, 0, sizeof *desc_out);
  const om_gear *r = model->gears[gear].rec;
  if (!r) return OMRT_OK; /* OMRT_GEAR_NONE */
  desc_out->kind = (int)model->gear_kind;
  desc_out->nvalues = (int)model->gear_nvalues;
  for (uint32_t i = 0; i < model->gear_nvalues; i++)
    desc_out->values[i] = r->values[i];
  return OMRT_OK;
}

static omrt_status gear_io(const char *call, const omrt_model *model, int gear, int index, int is_input,
                           omrt_tensor_desc *desc_out) {
  if (!model || !desc_out) return rt_error(OMRT_ERR_ARG, "%s: NULL argument", call);
  if (gear < 0 || (uint32_t)gear >= model->ngears)
    return rt_error(OMRT_ERR_ARG, "%s: gear %d outside 0..%u", call, gear, model->ngears - 1);
  uint32_t n = is_input ? model->def->ninputs : model->def->noutputs;
  if (index < 0 || (uint32_t)index >= n)
    return rt_error(OMRT_ERR_ARG, "%s: index %d outside 0..%d", call, index, (int)n - 1);
  *desc_out = is_input ? model->gears[gear].inputs[index] : model->gears[gear].outputs[index];
  return OMRT_OK;
}

omrt_status omrt_model_gear_input(const omrt_model *model, int gear, int index, omrt_tensor_desc *desc_out) {
  return gear_io("omrt_model_gear_input", model, gear, index, 1, desc_out);
}

omrt_status omrt_model_gear_output(const omrt_model *model, int gear, int index, omrt_tensor_desc *desc_out) {
  return gear_io("omrt_model_gear_output", model, gear, index, 0, desc_out);
}

/* "1, 2, 4, 8" or "224x224, 320x320" or "(32, 32), (64, 64)": the gears, for messages. */
void rt_gear_list(const omrt_model *m, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t g = 0; g < m->ngears && len < n; g++) {
    const om_gear *r = m->gears[g].rec;
    if (!r) {
      snprintf(buf, n, "none (a static model)");
      return;
    }
    len +=
        (size_t)snprintf(buf + len, n - len, "%s%s", g ? ", " : "", m->gear_kind == OM_GEAR_DIMS ? "(" : "");
    for (uint32_t v = 0; v < m->gear_nvalues && len < n; v++)
      len += (size_t)snprintf(buf + len, n - len, "%s%lld",
                              v ? (m->gear_kind == OM_GEAR_IMAGE_SIZE ? "x" : ", ") : "",
                              (long long)r->values[v]);
    if (m->gear_kind == OM_GEAR_DIMS && len < n) len += (size_t)snprintf(buf + len, n - len, ")");
  }
}

omrt_status omrt_model_find_gear(const omrt_model *model, const int64_t *values, int nvalues, int *gear_out) {
  if (!model || !gear_out || (nvalues && !values))
    return rt_error(OMRT_ERR_ARG, "omrt_model_find_gear: NULL argument");
  for (uint32_t g = 0; g < model->ngears; g++) {
    const om_gear *r = model->gears[g].rec;
    int match = r ? (uint32_t)nvalues == model->gear_nvalues : nvalues == 0;
    for (int v = 0; match && r && v < nvalues; v++)
      match = r->values[v] == values[v];
    if (match) return *gear_out = (int)g, OMRT_OK;
  }
  char want[256] = "", list[1024];
  size_t len = 0;
  for (int v = 0; v < nvalues && len < sizeof want; v++)
    len += (size_t)snprintf(want + len, sizeof want - len, "%s%lld", v ? "," : "", (long long)values[v]);
  rt_gear_list(model, list, sizeof list);
  static const char *const kinds[] = {"", "batch", "image size", "dims"};
  return rt_error(OMRT_ERR_ARG, "%s %s is not a gear of model '%s' (its gears: %s)",
                  kinds[model->gears[0].rec ? model->gear_kind : 0], nvalues ? want : "(none)",
                  rt_string(model, model->def->name), list);
}
