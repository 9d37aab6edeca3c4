/* conv_weights.h - convolution weights in their cube layouts, for the layout,
 * tiling and emit passes (lower/conv_weights.c).
 *
 * Grouped convolutions (1 < group, not depthwise) read FRACTAL_Z_G weights
 * (common/conv_group.h). Weights computed at run time (the ONNX node tests
 * pass W as a graph input) are packed by a TransData node whose output has
 * the weight layout (FRACTAL_Z, FRACTAL_Z_G, FRACTAL_Z_3D for a 3-D
 * convolution, or NC1HWC0 [1, C, KH, KW] for depthwise): emit turns such a
 * node into a WPACK task (om_format.h).
 */
#ifndef LOWER_CONV_WEIGHTS_H
#define LOWER_CONV_WEIGHTS_H

#include <stdint.h>

#include "common/status.h"
#include "ir/ir.h"

/* Makes Conv n's weights (in[1], ONNX [Cout, Cin/group, KH, KW] or 3-D
 * [Cout, Cin, KD, KH, KW]) a value of
 * layout `lay`, dtype `dt` and logical dims dims[rank]: a constant is
 * converted at compile time (in place when n is its only reader), a
 * computed value gets a packing TransData. */
status convw_make_input(ir_graph *g, ir_node *n, int lay, int dt, int rank, const int64_t *dims, diag *d);

/* Whether TransData node n packs conv weights (emit: WPACK, not TRANSDATA). */
int convw_is_pack(const ir_node *n);

/* WPACK's block unit count for node n: padded output channel rows. */
uint64_t convw_pack_units(const ir_node *n);

#endif
