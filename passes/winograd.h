/* winograd.h - the tiling pass's Winograd F(4x4,3x3) choice for cube Convs
 * (passes/winograd.c). */
#ifndef PASSES_WINOGRAD_H
#define PASSES_WINOGRAD_H

#include "pass.h"

/* When Conv n (FRACTAL_Z weights, after layout) is eligible for
 * OM_CONV_WINO_F43 and some tiling of it fits the SoC, rewrites its weights
 * into WINO_F43, sets its attributes algorithm=1, tile_m (Winograd tiles),
 * tile_n, tile_k (= C1in) and block_dim, and sets *chosen_out = 1. Otherwise
 * changes nothing and sets *chosen_out = 0. */
status wino_tile_conv(ir_graph *g, const pass_ctx *ctx, ir_node *n, int *chosen_out, diag *d);

#endif
