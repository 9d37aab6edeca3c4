/* aipp.c - libomrt's AIPP API (omrt.h): which inputs a package
 * preprocesses, and dynamic AIPP parameters from an application's
 * omrt_aipp sets into the om_aipp_params records the AIPP task reads.
 *
 * An image input has AIPP when an AIPP task reads it as its src; every
 * gear of a package with shape gears has that task (atc puts the AIPP in
 * each gear's graph) with the same mode, and only the sizes differ: the
 * batch, or with image size gears the image. The description follows
 * ATC's rule for the model's input size: the largest gear's (the gear
 * whose task reads the most bytes). The task's params tensor says static
 * (WEIGHTS: the record is in the package) or dynamic (INPUT: a record an
 * image is another model input, the largest gear's batch of them; a gear
 * of batch n reads the first n). Packing fills the records from the sets
 * (one for every image, or one an image; crop off: the whole image;
 * padding off: no pad) and runs the same validation the loader and
 * omrt_execute run (kernels_aipp.c) against every gear until one takes
 * them; a run checks them against the gear it runs. With image size gears
 * ATC's rule for dynamic AIPP holds too: no crop and no padding, the image
 * is the gear's size.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/rt.h"

const om_task *rt_aipp_task(const omrt_model *m, uint32_t gear, uint32_t input) {
  const rt_gear *g = &m->gears[gear];
  for (uint32_t t = 0; t < g->ntasks; t++) {
    const om_task *task = &g->tasks[t];
    if (task->kind != OM_TASK_AIPP) continue;
    const om_tensor *src = &m->tensors[task->tensors[OM_AIPP_T_SRC]];
    if (src->region == OM_REGION_INPUT && src->index == input) return task;
  }
  return NULL;
}

/* The AIPP task of input `input` in the gear whose task reads the most
 * bytes, or NULL. */
static const om_task *largest_task(const omrt_model *m, uint32_t input) {
  const om_task *best = NULL;
  for (uint32_t gi = 0; gi < m->ngears; gi++) {
    const om_task *t = rt_aipp_task(m, gi, input);
    if (t && (!best ||
              m->tensors[t->tensors[OM_AIPP_T_SRC]].bytes > m->tensors[best->tensors[OM_AIPP_T_SRC]].bytes))
      best = t;
  }
  return best;
}

/* The records recs (bytes) against task: rt_aipp_validate_records, and
 * ATC's rule for image size gears. */
static int validate(const omrt_model *m, const om_task *task, const uint8_t *recs, uint64_t bytes, char *msg,
                    size_t len) {
  const om_tensor *src = &m->tensors[task->tensors[OM_AIPP_T_SRC]];
  return rt_aipp_validate_records(recs, bytes, m->tensors[task->tensors[OM_AIPP_T_Y]].dims, src->bytes,
                                  m->gear_kind == OM_GEAR_IMAGE_SIZE, msg, len);
}

static void to_config(const om_aipp_params *p, omrt_aipp *c) {
  memset(c, 0, sizeof *c);
  c->input_format = (int)p->input_format;
  c->src_w = p->src_w, c->src_h = p->src_h;
  c->csc_switch = p->csc, c->rbuv_swap_switch = p->rbuv_swap, c->ax_swap_switch = p->ax_swap;
  c->crop = p->crop, c->crop_x = p->crop_x, c->crop_y = p->crop_y, c->crop_w = p->crop_w,
  c->crop_h = p->crop_h;
  c->padding = p->padding, c->pad_left = p->pad_left, c->pad_right = p->pad_right, c->pad_top = p->pad_top;
  c->pad_bottom = p->pad_bottom, c->pad_value = p->pad_value;
  memcpy(c->matrix, p->matrix, sizeof c->matrix);
  memcpy(c->input_bias, p->input_bias, sizeof c->input_bias);
  memcpy(c->output_bias, p->output_bias, sizeof c->output_bias);
  memcpy(c->mean, p->mean, sizeof c->mean);
  memcpy(c->min, p->min, sizeof c->min);
  memcpy(c->var_reci, p->var_reci, sizeof c->var_reci);
}

static int flag(int v) { return v != 0; }

static void from_config(const omrt_aipp *c, om_aipp_params *p) {
  memset(p, 0, sizeof *p);
  p->input_format = (uint32_t)c->input_format;
  p->src_w = c->src_w, p->src_h = c->src_h;
  p->csc = (uint8_t)flag(c->csc_switch), p->rbuv_swap = (uint8_t)flag(c->rbuv_swap_switch);
  p->ax_swap = (uint8_t)flag(c->ax_swap_switch), p->crop = (uint8_t)flag(c->crop);
  p->padding = (uint8_t)flag(c->padding);
  if (p->crop)
    p->crop_x = c->crop_x, p->crop_y = c->crop_y, p->crop_w = c->crop_w, p->crop_h = c->crop_h;
  else
    p->crop_w = c->src_w, p->crop_h = c->src_h;
  if (p->padding)
    p->pad_left = c->pad_left, p->pad_right = c->pad_right, p->pad_top = c->pad_top,
    p->pad_bottom = c->pad_bottom;
  p->pad_value = c->pad_value;
  memcpy(p->matrix, c->matrix, sizeof p->matrix);
  memcpy(p->input_bias, c->input_bias, sizeof p->input_bias);
  memcpy(p->output_bias, c->output_bias, sizeof p->output_bias);
  memcpy(p->mean, c->mean, sizeof p->mean);
  memcpy(p->min, c->min, sizeof p->min);
  memcpy(p->var_reci, c->var_reci, sizeof p->var_reci);
}

omrt_status omrt_model_input_aipp(const omrt_model *m, int input, omrt_aipp_info *info) {
  if (!m || !info) return rt_error(OMRT_ERR_ARG, "omrt_model_input_aipp: model or info_out is NULL");
  if (input < 0 || (uint32_t)input >= m->def->ninputs)
    return rt_error(OMRT_ERR_ARG, "omrt_model_input_aipp: input %d outside 0..%u", input,
                    m->def->ninputs - 1);
  memset(info, 0, sizeof *info);
  info->params_input = -1;
  const om_task *task = largest_task(m, (uint32_t)input);
  if (!task) return OMRT_OK;
  const om_tensor *src = &m->tensors[task->tensors[OM_AIPP_T_SRC]];
  const om_tensor *par = &m->tensors[task->tensors[OM_AIPP_T_PARAMS]];
  const om_tensor *y = &m->tensors[task->tensors[OM_AIPP_T_Y]];
  info->src_bytes = (int64_t)src->bytes;
  memcpy(info->out_dims, y->dims, sizeof info->out_dims);
  if (par->region == OM_REGION_WEIGHTS) {
    om_aipp_params p;
    memcpy(&p, m->weights + par->offset, sizeof p);
    info->mode = OMRT_AIPP_STATIC;
    to_config(&p, &info->config);
  } else {
    info->mode = OMRT_AIPP_DYNAMIC;
    info->params_input = (int)par->index;
  }
  return OMRT_OK;
}

uint64_t rt_aipp_params_bytes(const omrt_model *m, int input) {
  const om_task *task =
      input >= 0 && (uint32_t)input < m->def->ninputs ? largest_task(m, (uint32_t)input) : NULL;
  const om_tensor *par = task ? &m->tensors[task->tensors[OM_AIPP_T_PARAMS]] : NULL;
  return par && par->region == OM_REGION_INPUT ? par->bytes : 0;
}

omrt_status rt_aipp_pack(const omrt_model *m, int input, const omrt_aipp *cfgs, uint64_t ncfgs, void *buf,
                         size_t bytes, const char *fn, int *params_input) {
  if (!m || !cfgs) return rt_error(OMRT_ERR_ARG, "%s: model or cfg is NULL", fn);
  const uint64_t need = rt_aipp_params_bytes(m, input), nimg = need / OM_AIPP_PARAMS_BYTES;
  if (!need) return rt_error(OMRT_ERR_ARG, "%s: input %d has no dynamic AIPP", fn, input);
  if (ncfgs != 1 && ncfgs != nimg)
    return rt_error(OMRT_ERR_ARG,
                    "%s: %llu parameter sets for input %d; it takes 1 (every image) or %llu (one an image%s)",
                    fn, (unsigned long long)ncfgs, input, (unsigned long long)nimg,
                    m->ngears > 1 ? ", the largest gear's batch" : "");
  if (!buf || bytes < need)
    return rt_error(OMRT_ERR_ARG, "%s: buf is NULL or has %zu bytes; input %d's parameters need %llu", fn,
                    bytes, input, (unsigned long long)need);
  uint8_t *recs = buf;
  for (uint64_t i = 0; i < nimg; i++) {
    om_aipp_params p;
    from_config(&cfgs[ncfgs == 1 ? 0 : i], &p);
    memcpy(recs + i * OM_AIPP_PARAMS_BYTES, &p, sizeof p);
  }
  const om_task *task = largest_task(m, (uint32_t)input);
  char msg[300];
  /* The largest gear's message when no gear takes them; image size gears
   * differ in H and W, batch gears read a prefix of the largest's records. */
  int bad = validate(m, task, recs, need, msg, sizeof msg);
  for (uint32_t gi = 0; bad && m->gear_kind == OM_GEAR_IMAGE_SIZE && gi < m->ngears; gi++) {
    const om_task *t = rt_aipp_task(m, gi, (uint32_t)input);
    char other[300];
    bad =
        !validate(m, t, recs, m->tensors[t->tensors[OM_AIPP_T_PARAMS]].bytes, other, sizeof other) ? 0 : bad;
  }
  if (bad)
    return rt_error(OMRT_ERR_ARG, "%s: input %d: %s%s", fn, input, msg,
                    m->gear_kind == OM_GEAR_IMAGE_SIZE ? " (in any gear)" : "");
  *params_input = (int)m->tensors[task->tensors[OM_AIPP_T_PARAMS]].index;
  return OMRT_OK;
}

omrt_status omrt_aipp_pack(const omrt_model *m, int input, const omrt_aipp *cfg, void *buf, size_t bytes) {
  int params_input;
  return rt_aipp_pack(m, input, cfg, 1, buf, bytes, "omrt_aipp_pack", &params_input);
}

omrt_status omrt_aipp_pack_images(const omrt_model *m, int input, const omrt_aipp *cfgs, int ncfgs, void *buf,
                                  size_t bytes) {
  int params_input;
  if (ncfgs < 1) return rt_error(OMRT_ERR_ARG, "omrt_aipp_pack_images: ncfgs %d < 1", ncfgs);
  return rt_aipp_pack(m, input, cfgs, (uint64_t)ncfgs, buf, bytes, "omrt_aipp_pack_images", &params_input);
}

omrt_status rt_aipp_check_run(const omrt_model *m, const rt_gear *g, const void *const *inputs) {
  for (uint32_t t = 0; t < g->ntasks; t++) {
    const om_task *task = &g->tasks[t];
    if (task->kind != OM_TASK_AIPP) continue;
    const om_tensor *par = &m->tensors[task->tensors[OM_AIPP_T_PARAMS]];
    if (par->region != OM_REGION_INPUT) continue;
    const om_tensor *src = &m->tensors[task->tensors[OM_AIPP_T_SRC]];
    char msg[300];
    if (validate(m, task, inputs[par->index], par->bytes, msg, sizeof msg))
      return rt_error(OMRT_ERR_ARG, "omrt_execute: input %u '%s' (dynamic AIPP parameters of input %u): %s",
                      par->index, rt_string(m, par->name), src->index, msg);
  }
  return OMRT_OK;
}
