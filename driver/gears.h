/* gears.h - atc's shape gears: --dynamic_batch_size, --dynamic_image_size
 * and --dynamic_dims against the -1 dims of --input_shape (driver/gears.c).
 *
 * A gear is one value of the dynamic dims; atc compiles the model once per
 * gear with every -1 replaced by the gear's value, and the om holds every
 * gear's task list over one set of weights (common/om_format.h, GEARS).
 * The rules follow ATC's:
 *   --dynamic_batch_size="1,2,4,8": the -1s are the first dim of inputs;
 *   --dynamic_image_size="224,224;320,320": the -1s are the H and W of rank-4
 *     inputs (dims 2, 3 for NCHW, 1, 2 for NHWC: --input_format), both of
 *     an input at once; a gear is "h,w";
 *   --dynamic_dims="32,32;64,64": a gear gives one value for every -1 of
 *     --input_shape, inputs in order.
 * 2..100 gears, each value 1..2^31-1, no gear twice, one of the three
 * flags at most, and a -1 only with one of them.
 */
#ifndef DRIVER_GEARS_H
#define DRIVER_GEARS_H

#include <stdint.h>

#include "common/om_format.h"
#include "common/status.h"
#include "frontend/onnx_import.h"

typedef struct atc_gears {
  int kind; /* om_gear_kind, or 0: no gears (a static model) */
  int ngears, nvalues;
  int64_t values[OM_MAX_GEARS][OM_GEAR_MAX_VALUES];
} atc_gears;

/* Checks the gear flags (each NULL when not given) against the parsed
 * --input_shape (shapes[0, n), -1 for a dynamic dim) and fills *out.
 * `nhwc`: --input_format=NHWC. Errors name the flag and its value. */
status atc_gears_parse(const char *batch, const char *image_size, const char *dims, int nhwc,
                       const onnx_input_shape *shapes, int n, atc_gears *out, diag *d);

/* The shapes of gear g: shapes[0, n) with every -1 replaced (out[0, n)). */
void atc_gears_shapes(const atc_gears *gears, int g, const onnx_input_shape *shapes, int n, int nhwc,
                      onnx_input_shape *out);

#endif
