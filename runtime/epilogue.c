/* epilogue.c - the epilogue program of CONV2D and DWCONV tasks.
 *
 * A conv task may carry a vector program (common/vprog.h) that runs on its
 * output while the tile is still hot, instead of a separate VPROG task that
 * reads the whole output back from memory (om_format.h, CONV2D params[21],
 * [22]). The program is the same form as a VPROG task's and is verified and
 * planned by the same code (runtime/vprog_plan.c, rt_vprog_build), on a VPROG
 * task record made from the conv's: tensors [y, extra inputs (slots 5..),
 * y], params[0] = the program's offset. So the program reads the conv's
 * result (stored in y's dtype, after bias, residual and act) as input 0,
 * the extras broadcast as VPROG inputs do (NC1HWC0, over N, H and W), and
 * it writes y in place. The plan lives in task_aux, where a vprog compiler
 * (the JIT) finds it through rt_task_vplan and gives it native code.
 *
 * Execution: after the kernel has written one tile of y (CONV2D: tile_m
 * pixels x tile_n channel blocks, or the pixels of tile_m Winograd 4x4
 * tiles; DWCONV: one (image, channel block) plane), the plan runs over
 * exactly those elements, contiguous runs per channel block of NC1HWC0.
 * The tiles partition y, so every element goes through the program once.
 * UB is free between tiles: the kernels stage nothing there across them.
 */
#include "runtime/epilogue.h"

#include <stdlib.h>

enum { EPI_FLAG = 21, EPI_OFFSET = 22, X_SCALE = 18 };

uint32_t rt_epi_first_slot(const om_task *task) {
  return 5 + (task->kind == OM_TASK_CONV2D && task->params[X_SCALE] == 1);
}

uint32_t rt_epi_ntensors(const om_task *task) {
  const uint32_t first = rt_epi_first_slot(task);
  if (task->params[EPI_FLAG] == 1 && task->ntensors >= first && task->ntensors <= OM_TASK_MAX_TENSORS)
    return task->ntensors;
  return first;
}

/* Verifies the epilogue of task i and builds its plan (*plan_out; NULL
 * without one). */
static omrt_status epi_build(const omrt_model *m, uint32_t i, const om_task *task, const char *kind,
                             rt_vplan **plan_out) {
  rt_chk c = {m, i, task, kind};
  int32_t flag = task->params[EPI_FLAG], off = task->params[EPI_OFFSET];
  *plan_out = NULL;
  if (flag == 0) {
    if (off != 0) return rt_chk_fail(&c, "params[22] = %d without an epilogue (params[21] = 0)", (int)off);
    return OMRT_OK;
  }
  if (flag != 1) return rt_chk_fail(&c, "params[21] epilogue = %d, expected 0 or 1", (int)flag);
  if (off < 0) return rt_chk_fail(&c, "params[22] epilogue offset = %d is negative", (int)off);
  const uint32_t first = rt_epi_first_slot(task), extra = task->ntensors - first; /* rt_epi_ntensors held */
  om_task v = {.kind = OM_TASK_VPROG, .name = task->name, .block_dim = 1, .ntensors = extra + 2};
  v.tensors[0] = task->tensors[4];
  for (uint32_t j = 0; j < extra; j++)
    v.tensors[1 + j] = task->tensors[first + j];
  v.tensors[extra + 1] = task->tensors[4];
  v.params[0] = off;
  return rt_vprog_build(m, i, &v, task->kind == OM_TASK_CONV2D ? "CONV2D epilogue" : "DWCONV epilogue",
                        plan_out);
}

static omrt_status epi_check(const omrt_model *m, uint32_t i, const om_task *task, const char *kind) {
  rt_vplan *p;
  omrt_status s = epi_build(m, i, task, kind, &p);
  free(p);
  return s;
}

omrt_status rt_conv2d_epi_check(const omrt_model *m, uint32_t i, const om_task *task) {
  omrt_status s = rt_conv2d_check(m, i, task);
  return s ? s : epi_check(m, i, task, "CONV2D");
}

omrt_status rt_dwconv_epi_check(const omrt_model *m, uint32_t i, const om_task *task) {
  omrt_status s = rt_dwconv_check(m, i, task);
  return s ? s : epi_check(m, i, task, "DWCONV");
}

omrt_status rt_epi_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out) {
  rt_vplan *p;
  omrt_status s = epi_build(m, i, task, task->kind == OM_TASK_CONV2D ? "CONV2D" : "DWCONV", &p);
  *aux_out = p;
  return s;
}

void rt_epi_pixels(const rt_vplan *p, const rt_args *args, uint32_t first, int64_t img, int64_t p0,
                   int64_t p1, int64_t nb0, int64_t nb1, rt_core *core) {
  const om_tensor *y = args->desc[4];
  const int64_t hw = y->dims[2] * y->dims[3], c1 = rt_ceil_div(y->dims[1], C0);
  void *data[VPROG_MAX_IO];
  data[0] = args->data[4];
  for (uint32_t j = 1; j < p->ninputs; j++)
    data[j] = args->data[first + j - 1];
  data[p->ninputs] = args->data[4];
  for (int64_t nb = nb0; nb < nb1; nb++) {
    uint64_t e = (uint64_t)(((img * c1 + nb) * hw + p0) * C0);
    rt_vplan_exec(p, data, e, e + (uint64_t)(p1 - p0) * C0, core->ub);
  }
}

void rt_epi_conv_tile(const rt_vplan *p, const rt_args *args, uint32_t first, const rt_conv_geom *g,
                      int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  int64_t nb0 = nt * g->tn, nb1 = nb0 + g->tn < g->c1out ? nb0 + g->tn : g->c1out;
  if (g->algo == OM_CONV_DIRECT) {
    int64_t p0 = mt * g->tm, p1 = p0 + g->tm < g->ho * g->wo ? p0 + g->tm : g->ho * g->wo;
    rt_epi_pixels(p, args, first, img, p0, p1, nb0, nb1, core);
    return;
  }
  /* Winograd: tiles [t0, t1) of the TH x TW grid, row-major; a run of them
   * in one tile row covers 4 pixel rows x a column range. */
  int64_t t0 = mt * g->tm, t1 = t0 + g->tm < g->wth * g->wtw ? t0 + g->tm : g->wth * g->wtw;
  for (int64_t t = t0; t < t1;) {
    int64_t th = t / g->wtw, tw0 = t % g->wtw, tw1 = tw0 + (t1 - t) < g->wtw ? tw0 + (t1 - t) : g->wtw;
    int64_t c0 = 4 * tw0, c1 = 4 * tw1 < g->wo ? 4 * tw1 : g->wo;
    for (int64_t r = 4 * th; r < 4 * th + 4 && r < g->ho; r++)
      rt_epi_pixels(p, args, first, img, r * g->wo + c0, r * g->wo + c1, nb0, nb1, core);
    t += tw1 - tw0;
  }
}
