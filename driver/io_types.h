/* io_types.h - atc's flags for the dtypes and layouts of the model's inputs
 * and outputs (driver/io_types.c). */
#ifndef DRIVER_IO_TYPES_H
#define DRIVER_IO_TYPES_H

#include <stdint.h>

#include "common/arena.h"
#include "common/status.h"
#include "ir/ir.h"

typedef struct atc_io_flags {                  /* each NULL when not given; borrowed */
  const char *input_fp16_nodes, *input_adjust; /* --input_fp16_nodes, --is_input_adjust_hw_layout */
  const char *output_type, *output_adjust;     /* --output_type, --is_output_adjust_hw_layout */
  const char *out_nodes; /* --out_nodes (the outputs --is_output_adjust_hw_layout counts) */
} atc_io_flags;

/* Applies the flags to g (imported, --out_nodes applied): UINT8 outputs get
 * a Cast; *dtype_out and *nc1hwc0_out (in arena a, one entry per graph input
 * then output) become pass_ctx.io_dtype and io_nc1hwc0. Errors name the
 * flag and the value. */
status atc_io_types(ir_graph *g, const atc_io_flags *flags, arena *a, int **dtype_out, uint8_t **nc1hwc0_out,
                    diag *d);

#endif
