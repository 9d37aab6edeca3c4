/* winograd.h - the tiling pass's Winograd F(4x4,3x3) choice for cube Convs
 * (lower/winograd.c). */
#ifndef LOWER_WINOGRAD_H
#define LOWER_WINOGRAD_H

#include "common/status.h"
#include "ir/ir.h"
#include "socs/soc.h"

/* When Conv n (FRACTAL_Z weights, after layout) is eligible for
 * OM_CONV_WINO_F43_FZ and some tiling of it fits the SoC and costs less
 * than the direct convolution on its AI cores, sets its
 * attributes algorithm=2, tile_m (Winograd tiles), tile_n, tile_k (input
 * channel blocks per weight-transform chunk) and block_dim, and sets
 * *chosen_out = 1; the weights are left as they are. Otherwise changes
 * nothing and sets *chosen_out = 0. */
status wino_tile_conv(ir_graph *g, const soc_info *soc, ir_node *n, int *chosen_out, diag *d);

#endif
