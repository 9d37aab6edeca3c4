/* epilogue.h - the optional epilogue program of CONV2D, DWCONV and MATMUL
 * tasks (om_format.h: epilogue = 1, epilogue_offset = its offset in VPROGS,
 * extra program inputs in the tensor slots after the fixed ones and a
 * CONV2D's x_scale).
 * runtime/epilogue.c.
 */
#ifndef RUNTIME_EPILOGUE_H
#define RUNTIME_EPILOGUE_H

#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

/* The slot of the epilogue's first extra input: OM_CONV_NTENSORS, or one
 * more after a CONV2D's x_scale (x_scale = 1); MATMUL: OM_MATMUL_NTENSORS. */
uint32_t rt_epi_first_slot(const om_task *task);
/* The tensor count a CONV2D / DWCONV / MATMUL task with an epilogue must
 * have: rt_epi_first_slot + its extra inputs (at most 8; the program check
 * pins it down); without one, rt_epi_first_slot. */
uint32_t rt_epi_ntensors(const om_task *task);

/* Kernel-table hooks: the kind's own check, then the epilogue's (the
 * vector-program verifier of runtime/vprog_plan.c); prepare builds the plan
 * (task_aux; NULL without an epilogue). */
omrt_status rt_conv2d_epi_check(const omrt_model *m, uint32_t i, const om_task *task);
omrt_status rt_dwconv_epi_check(const omrt_model *m, uint32_t i, const om_task *task);
omrt_status rt_matmul_epi_check(const omrt_model *m, uint32_t i, const om_task *task);
omrt_status rt_epi_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out);

/* Runs plan p (args->aux, task's epilogue) in place over the output
 * pixels [p0, p1) (of Ho*Wo) of image img, channel blocks [nb0, nb1) of
 * an NC1HWC0 y, in the core's UB. */
void rt_epi_pixels(const rt_vplan *p, const om_task *task, const rt_args *args, int64_t img, int64_t p0,
                   int64_t p1, int64_t nb0, int64_t nb1, rt_core *core);
/* The same over the output of one CONV2D tile (img, mt, nt) as g numbers
 * them (direct: tile_m pixels; Winograd: tile_m 4x4 tiles, row by row). */
void rt_epi_conv_tile(const rt_vplan *p, const om_task *task, const rt_args *args, const rt_conv_geom *g,
                      int64_t img, int64_t mt, int64_t nt, rt_core *core);
/* The same over `rows` runs of `cols` elements of an ND y, the first at
 * element e0, each ld after the previous (a MATMUL tile). */
void rt_epi_rows(const rt_vplan *p, const om_task *task, const rt_args *args, uint64_t e0, uint64_t rows,
                 uint64_t cols, uint64_t ld, rt_core *core);

#endif
