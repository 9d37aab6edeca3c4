/* conv_group.h - FRACTAL_Z_G, the layout of grouped convolution weights on
 * the cube, shared by the compiler (constant weights, passes/layout.c) and
 * the runtime (CONV2D whose OM_CONV_P_GROUPS > 1, and WPACK at run time).
 *
 * Logical dims [G, Og, Ig, KH, KW]: G groups of Og output and Ig input
 * channels (ONNX's [Cout, Cin/G, KH, KW] with Cout = G*Og split), Cin = G*Ig.
 * Output channel block nb (channels [16nb, 16nb+16) of Cout, C1out blocks)
 * meets the groups g_lo..g_hi of its channels, whose inputs are channels
 * [g_lo*Ig, (g_hi+1)*Ig), i.e. the input channel blocks
 *   [c1_lo(nb), c1_hi(nb)) = [g_lo*Ig / 16, ceil((g_hi+1)*Ig / 16)).
 * Only those blocks are stored and multiplied: a block's K is
 * kb = c1_hi - c1_lo input blocks x KH*KW taps instead of all C1in of them.
 * A run is a maximal range of consecutive output blocks with the same
 * [c1_lo, c1_hi). Each run is stored, runs in order, as the FRACTAL_Z
 * weights of the dense convolution from its kb input blocks to its L output
 * blocks: fractal (kk, j), kk = (c1 - c1_lo)*KH*KW + kh*KW + kw in [0,
 * kb*KH*KW), j in [0, L), at run_base + kk*L + j, each fractal [16 ci][16
 * co] (ci, co modulo 16), as FRACTAL_Z's (types.h). Entries whose input channel is outside the output
 * channel's group, or past Cout / Cin, are zero. Group width 8 (RegNetY)
 * thus has runs of one block with kb = 1: 16x16 fractals, half of each zero.
 */
#ifndef COMMON_CONV_GROUP_H
#define COMMON_CONV_GROUP_H

#include <stdint.h>

#include "types.h"

typedef struct convg_geom {
  int64_t g, og, ig, kh, kw; /* the logical dims */
  int64_t cout, cin, c1out, c1in, taps;
} convg_geom;

/* One run of output blocks. */
typedef struct convg_run {
  int64_t nb0, len;     /* output blocks [nb0, nb0 + len) */
  int64_t c1_lo, c1_hi; /* input blocks [c1_lo, c1_hi) */
  uint64_t base;        /* first fractal of the run */
} convg_run;

/* Fills *g from dims[5]; -1 when a dim is < 1 or the sizes overflow. */
int convg_init(const int64_t *dims, convg_geom *g);
/* Input block range of output block nb (0 <= nb < c1out). */
void convg_block_range(const convg_geom *g, int64_t nb, int64_t *c1_lo, int64_t *c1_hi);
/* The run holding output block nb (0 <= nb < c1out): the runs walked from
 * block 0, O(nb). */
void convg_run_of(const convg_geom *g, int64_t nb, convg_run *r);
/* The run after *r (r->nb0 + r->len < c1out; from the empty run {0}: the
 * first), into *r: O(its length). */
void convg_run_next(const convg_geom *g, convg_run *r);
/* Total fractals (the physical element count is this x 256); -1 on overflow. */
int convg_fractals(const convg_geom *g, uint64_t *count_out);
/* Largest kb * taps over the blocks: the deepest K a tile reduces. */
int64_t convg_max_k(const convg_geom *g);
/* Writes the FRACTAL_Z_G entries of output channel rows [co_lo, co_hi)
 * (padding rows up to c1out*16 included, written as zero) into dst (dtype
 * ddt) from ONNX weights src [Cout, Ig, KH, KW] (dtype sdt); dtypes f16 or
 * f32. Rows are disjoint in dst, so ranges can be written in parallel. With
 * G = 1 this is FRACTAL_Z ([Cout, Cin, KH, KW]) exactly: one run. */
void convg_pack_rows(const convg_geom *g, const void *src, int sdt, void *dst, int ddt, int64_t co_lo,
                     int64_t co_hi);

#endif
