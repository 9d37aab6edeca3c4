/* epilogue.c - the epilogue program of CONV2D, CONV3D, DWCONV and MATMUL tasks.
 *
 * A cube task (or DWCONV) may carry a vector program (common/vprog.h) that
 * runs on its output while the tile is still hot, instead of a separate
 * VPROG task that reads the whole output back from memory (om_format.h,
 * CONV2D epilogue and epilogue_offset; MATMUL's the same). The program is
 * the same form as a VPROG task's and is verified and planned by the same
 * code (runtime/vprog_plan.c, rt_vprog_build), on a VPROG task record made
 * from the task's: tensors [y, extra inputs (the slots after the fixed ones
 * and a CONV2D's x_scale), y], program = the program's offset. So the
 * program reads the task's result (stored in y's dtype, after bias,
 * residual and act) as input 0, the extras broadcast as VPROG inputs do
 * (NC1HWC0 over N, H and W for the convolutions, CONV3D's NDC1HWC0 over
 * N, D, H and W; numpy-style on ND for MATMUL), and it writes y in place.
 * The plan lives in task_aux, where a vprog compiler (the JIT) finds it
 * through rt_task_vplan and gives it native code.
 *
 * Execution: after the kernel has written one tile of y (CONV2D: tile_m
 * pixels x tile_n channel blocks, or the pixels of tile_m Winograd 4x4
 * tiles; DWCONV: one (image, channel block) plane; MATMUL: a tile's rows x
 * columns), the plan runs over exactly those elements, in contiguous runs
 * (per channel block of NC1HWC0, per row of a MATMUL tile narrower than
 * y). The tiles partition y, so every element goes through the program
 * once. UB is free between tiles: the kernels stage nothing there across
 * them.
 */
#include "runtime/epilogue.h"

#include <stdio.h>
#include <stdlib.h>

/* The params naming a task's epilogue, and its y slot. */
static void epi_slots(const om_task *task, int *flag, int *off, uint32_t *y) {
  if (task->kind == OM_TASK_MATMUL) {
    *flag = OM_MATMUL_P_EPILOGUE, *off = OM_MATMUL_P_EPILOGUE_OFFSET, *y = OM_MATMUL_T_Y;
    return;
  }
  *flag = OM_CONV_P_EPILOGUE, *off = OM_CONV_P_EPILOGUE_OFFSET, *y = OM_CONV_T_Y;
}

uint32_t rt_epi_first_slot(const om_task *task) {
  if (task->kind == OM_TASK_MATMUL) return OM_MATMUL_NTENSORS;
  return OM_CONV_NTENSORS + (task->kind == OM_TASK_CONV2D && task->params[OM_CONV_P_X_SCALE] == 1);
}

uint32_t rt_epi_ntensors(const om_task *task) {
  const uint32_t first = rt_epi_first_slot(task);
  int flag, off;
  uint32_t y;
  epi_slots(task, &flag, &off, &y);
  if (task->params[flag] == 1 && task->ntensors >= first && task->ntensors <= OM_TASK_MAX_TENSORS)
    return task->ntensors;
  return first;
}

/* Verifies the epilogue of task i and builds its plan (*plan_out; NULL
 * without one). */
static omrt_status epi_build(const omrt_model *m, uint32_t i, const om_task *task, const char *kind,
                             rt_vplan **plan_out) {
  rt_chk c = {m, i, task, kind};
  int F, O;
  uint32_t Y;
  epi_slots(task, &F, &O, &Y);
  int32_t flag = task->params[F], off = task->params[O];
  *plan_out = NULL;
  if (flag == 0) {
    if (off != 0)
      return rt_chk_fail(&c, "params[%d] = %d without an epilogue (params[%d] = 0)", O, (int)off, F);
    return OMRT_OK;
  }
  if (flag != 1) return rt_chk_fail(&c, "params[%d] epilogue = %d, expected 0 or 1", F, (int)flag);
  if (off < 0) return rt_chk_fail(&c, "params[%d] epilogue offset = %d is negative", O, (int)off);
  const uint32_t first = rt_epi_first_slot(task), extra = task->ntensors - first; /* rt_epi_ntensors held */
  /* the VPROG record: program input 0 is y, then the extras; its one output is y */
  om_task v = {.kind = OM_TASK_VPROG, .name = task->name, .block_dim = 1, .ntensors = extra + 2};
  v.tensors[0] = task->tensors[Y];
  for (uint32_t j = 0; j < extra; j++)
    v.tensors[1 + j] = task->tensors[first + j];
  v.tensors[extra + 1] = task->tensors[Y];
  v.params[OM_VPROG_P_PROGRAM] = off;
  char label[32];
  snprintf(label, sizeof label, "%s epilogue", kind);
  return rt_vprog_build(m, i, &v, label, plan_out);
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

omrt_status rt_conv3d_epi_check(const omrt_model *m, uint32_t i, const om_task *task) {
  omrt_status s = rt_conv3d_check(m, i, task);
  return s ? s : epi_check(m, i, task, "CONV3D");
}

omrt_status rt_dwconv_epi_check(const omrt_model *m, uint32_t i, const om_task *task) {
  omrt_status s = rt_dwconv_check(m, i, task);
  return s ? s : epi_check(m, i, task, "DWCONV");
}

omrt_status rt_matmul_epi_check(const omrt_model *m, uint32_t i, const om_task *task) {
  omrt_status s = rt_matmul_check(m, i, task);
  return s ? s : epi_check(m, i, task, "MATMUL");
}

omrt_status rt_epi_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out) {
  rt_vplan *p;
  omrt_status s = epi_build(m, i, task, rt_kernels[task->kind].name, &p);
  *aux_out = p;
  return s;
}

/* data[] for the plan of task's epilogue: y, the extras, y. */
static void epi_data(const rt_vplan *p, const om_task *task, const rt_args *args, void **data) {
  int f, o;
  uint32_t y;
  epi_slots(task, &f, &o, &y);
  const uint32_t first = rt_epi_first_slot(task);
  data[0] = args->data[y];
  for (uint32_t j = 1; j < p->ninputs; j++)
    data[j] = args->data[first + j - 1];
  data[p->ninputs] = args->data[y];
}

void rt_epi_pixels(const rt_vplan *p, const om_task *task, const rt_args *args, int64_t img, int64_t p0,
                   int64_t p1, int64_t nb0, int64_t nb1, rt_core *core) {
  const om_tensor *y = args->desc[OM_CONV_T_Y];
  const int r5 = y->rank == 5; /* CONV3D: img is an (n, od) slice */
  const int64_t hw = y->dims[2 + r5] * y->dims[3 + r5], c1 = rt_ceil_div(y->dims[1], C0);
  void *data[VPROG_MAX_IO];
  epi_data(p, task, args, data);
  for (int64_t nb = nb0; nb < nb1; nb++) {
    uint64_t e = (uint64_t)(((img * c1 + nb) * hw + p0) * C0);
    rt_vplan_exec(p, data, e, e + (uint64_t)(p1 - p0) * C0, core->ub);
  }
}

void rt_epi_rows(const rt_vplan *p, const om_task *task, const rt_args *args, uint64_t e0, uint64_t rows,
                 uint64_t cols, uint64_t ld, rt_core *core) {
  void *data[VPROG_MAX_IO];
  epi_data(p, task, args, data);
  if (cols == ld) {
    rt_vplan_exec(p, data, e0, e0 + rows * cols, core->ub);
    return;
  }
  rt_vplan_exec_rows(p, data, e0, rows, cols, ld, core->ub);
}

void rt_epi_conv_tile(const rt_vplan *p, const om_task *task, const rt_args *args, const rt_conv_geom *g,
                      int64_t img, int64_t mt, int64_t nt, rt_core *core) {
  int64_t nb0 = nt * g->tn, nb1 = nb0 + g->tn < g->c1out ? nb0 + g->tn : g->c1out;
  if (g->algo == OM_CONV_DIRECT) {
    int64_t p0 = mt * g->tm, p1 = p0 + g->tm < g->ho * g->wo ? p0 + g->tm : g->ho * g->wo;
    rt_epi_pixels(p, task, args, img, p0, p1, nb0, nb1, core);
    return;
  }
  /* Winograd: tiles [t0, t1) of the TH x TW grid, row-major; a run of them
   * in one tile row covers 4 pixel rows x a column range. A dilated tile's
   * pixels lie dilation apart (rt_wino_origin): pixel by pixel. */
  int64_t t0 = mt * g->tm, t1 = t0 + g->tm < g->wth * g->wtw ? t0 + g->tm : g->wth * g->wtw;
  if (g->p.dh > 1 || g->p.dw > 1) {
    for (int64_t t = t0; t < t1; t++) {
      const int64_t oh0 = rt_wino_origin(t / g->wtw, g->wth, g->p.dh);
      const int64_t ow0 = rt_wino_origin(t % g->wtw, g->wtw, g->p.dw);
      for (int64_t r = oh0; r < oh0 + 4 * g->p.dh && r < g->ho; r += g->p.dh)
        for (int64_t c = ow0; c < ow0 + 4 * g->p.dw && c < g->wo; c += g->p.dw)
          rt_epi_pixels(p, task, args, img, r * g->wo + c, r * g->wo + c + 1, nb0, nb1, core);
    }
    return;
  }
  for (int64_t t = t0; t < t1;) {
    int64_t th = t / g->wtw, tw0 = t % g->wtw, tw1 = tw0 + (t1 - t) < g->wtw ? tw0 + (t1 - t) : g->wtw;
    int64_t c0 = 4 * tw0, c1 = 4 * tw1 < g->wo ? 4 * tw1 : g->wo;
    for (int64_t r = 4 * th; r < 4 * th + 4 && r < g->ho; r++)
      rt_epi_pixels(p, task, args, img, r * g->wo + c0, r * g->wo + c1, nb0, nb1, core);
    t += tw1 - tw0;
  }
}
