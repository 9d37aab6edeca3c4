/* winograd.c - which cube Convs run as Winograd F(4x4,3x3) and their tiles
 * (called by tiling.c).
 *
 * Eligible: a group-1 Conv with constant FRACTAL_Z weights, a 3x3 kernel,
 * strides 1, at least 16 input channels (Winograd
 * multiplies 36/16 x the padded channels per output, direct 9 x the real
 * ones, so fewer channels gain little or lose), whose best Winograd tiling
 * (below) costs less than the direct convolution's 9 x Ho x Wo multiply-
 * accumulates per input and output channel. Small outputs decide it: a 7x7
 * or 8x8 output (4 tiles of 4x4) gains, a 6x6 one does not.
 * A dilated kernel (a backbone run at output stride 8 or 16: DeepLab's
 * layer3 and layer4, dilations 2 and 4) is an undilated one on each phase
 * of its output (wino_f43_tiles): eligible when its phases take no more
 * 4x4 tiles than the undilated grid would in each dim (32 rows at
 * dilation 2 or 4: 8 either way), so that no tile is mostly dropped
 * pixels; ASPP's rates 12 and 24 on a 32x32 map (12 and 24 tiles for 8)
 * stay direct, where the tile skips the taps that read padding.
 * Both precisions qualify: the transforms and the GEMMs run in f32, so under
 * force_fp16 the only fp16 roundings are those of the stored activations
 * and weights, as on the direct path.
 *
 * Algorithm OM_CONV_WINO_F43_FZ (om_format.h): the weights stay FRACTAL_Z
 * in the compute dtype, exactly as the direct path stores them (the om is
 * no larger than without Winograd), and each task tile transforms the
 * weights it uses, u = G g G^T in f32 (runtime/kernels_wino.c computes it
 * as G' g G'^T, G' with integer rows), one output channel block and tile_k
 * input channel blocks at a time into UB. A weight is transformed once per
 * M tile of the image, so the tiling prefers few M tiles.
 * (Weights transformed at compile time, f32, 16 bytes per original weight,
 * were measured on ResNet-50 not to be faster, and doubled the om: that
 * algorithm is retired, om_format.h.)
 *
 * Tiles: tile_m Winograd tiles x tile_n output channel blocks, tile_k input
 * channel blocks per weight-transform chunk: the most whose U of two
 * output channel blocks fits UB (libomrt's AVX-512 kernel transforms and
 * multiplies n blocks in pairs; the others run the same chunks one block
 * at a time), or of one block when two do not fit; every (tile_m, tile_n) that
 * fits the capacities is scored like the direct tiling: ceil(tiles /
 * ai_cores) x the cost of one tile, counted in multiply-accumulates: the 36
 * GEMMs (rows rounded up to the 6-row micro-kernel), the input transform
 * (about 2 MAC-equivalents per transformed value, done once per task tile,
 * so splitting output channels repeats it), the weight transform (about
 * WINO_WT_COST per input x output channel pair it transforms: measured on
 * AVX2 (Zen 4), 512 channels, reading a pair's 9 fp16 weights and computing
 * its 36 transformed values takes as long as ~150 multiply-accumulates of
 * the GEMMs) and the output transform. Ties go to the larger tile.
 */
#include "lower/winograd.h"

#include "common/om_format.h"

enum { WINO_MAX_BLOCKS = 65535, WINO_WT_COST = 150 };

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int eligible(const ir_graph *g, const ir_node *n) {
  const ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (w->layout != LAYOUT_FRACTAL_Z || !w->data || w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3)
    return 0;
  if ((x->dtype != DT_FLOAT16 && x->dtype != DT_FLOAT32) || x->dims[1] < C0) return 0;
  if (ir_attr_int(n, "group", 1) != 1) return 0;
  int64_t s[2] = {1, 1}, dl[2] = {1, 1};
  ir_attr_ints(n, "strides", s, 2);
  ir_attr_ints(n, "dilations", dl, 2);
  if (s[0] != 1 || s[1] != 1 || y->dims[2] < 1 || y->dims[3] < 1) return 0;
  for (int j = 0; j < 2; j++)
    if (dl[j] < 1 || wino_f43_tiles(y->dims[2 + j], dl[j]) > wino_f43_tiles(y->dims[2 + j], 1)) return 0;
  return 1;
}

typedef struct wino_tiles {
  uint64_t m, n, k, blocks;
  uint64_t cost; /* multiply-accumulate equivalents on the busiest core */
} wino_tiles;

/* The cheapest (tile_m, tile_n) within the capacities, tile_k the most
 * input channel blocks that fit UB; m = 0 when none. */
static wino_tiles choose(const soc_info *soc, const ir_node *n) {
  const ir_value *x = n->in[0], *y = n->out[0];
  const uint64_t c1 = ceil_div((uint64_t)x->dims[1], C0), k = c1 * C0;
  const uint64_t n1 = ceil_div((uint64_t)y->dims[1], C0), images = (uint64_t)y->dims[0];
  int64_t dl[2] = {1, 1};
  ir_attr_ints(n, "dilations", dl, 2);
  const uint64_t wt = (uint64_t)(wino_f43_tiles(y->dims[2], dl[0]) * wino_f43_tiles(y->dims[3], dl[1]));
  const uint64_t pts = WINO_F43_POINTS, cores = (uint64_t)soc->ai_cores;
  wino_tiles best = {0, 0, 0, 0, 0};
  const uint64_t ub_rows = soc->ub_bytes / (pts * C0 * 4); /* rows of 16 f32 per position in UB */
  if (ub_rows < C0 + 1) return best;
  /* U of an input x output channel block is 16 rows per position; one block also needs a tile's products */
  const uint64_t ub_blocks = ub_rows / (2 * C0) ? ub_rows / (2 * C0) : (ub_rows - 1) / C0;
  const uint64_t tk = ub_blocks < c1 ? ub_blocks : c1;
  uint64_t best_cost = UINT64_MAX;
  for (uint64_t tm = 1; tm <= wt; tm++) {
    if (pts * tm * k * 4 > soc->l1_bytes || pts * tm * C0 * 4 > soc->l0c_bytes) break;
    for (uint64_t tn = 1; tn <= n1; tn++) {
      uint64_t tiles = images * ceil_div(wt, tm) * ceil_div(n1, tn);
      uint64_t gemm = pts * ceil_div(tm, 6) * 6 * k * tn * C0;
      uint64_t in_tf = 2 * pts * tm * k, w_tf = WINO_WT_COST * k * tn * C0, out_tf = 2 * pts * tm * tn * C0;
      uint64_t total = ceil_div(tiles, cores) * (gemm + in_tf + w_tf + out_tf);
      if (total < best_cost || (total == best_cost && tm * tn > best.m * best.n)) {
        best_cost = total;
        best = (wino_tiles){tm, tn, tk, tiles < WINO_MAX_BLOCKS ? tiles : WINO_MAX_BLOCKS, total};
      }
    }
  }
  return best;
}

status wino_tile_conv(ir_graph *g, const soc_info *soc, ir_node *n, int *chosen_out, diag *d) {
  *chosen_out = 0;
  if (!eligible(g, n)) return ST_OK;
  wino_tiles t = choose(soc, n);
  const ir_value *x = n->in[0], *y = n->out[0];
  const uint64_t pairs = ceil_div((uint64_t)x->dims[1], C0) * C0 * ceil_div((uint64_t)y->dims[1], C0) * C0;
  const uint64_t direct = (uint64_t)y->dims[0] * (uint64_t)(y->dims[2] * y->dims[3]) * 9 * pairs;
  if (t.m == 0 || t.cost >= ceil_div(direct, (uint64_t)soc->ai_cores)) return ST_OK;
  if (ir_attr_set_int(g, n, "algorithm", OM_CONV_WINO_F43_FZ) ||
      ir_attr_set_int(g, n, "tile_m", (int64_t)t.m) || ir_attr_set_int(g, n, "tile_n", (int64_t)t.n) ||
      ir_attr_set_int(g, n, "tile_k", (int64_t)t.k) || ir_attr_set_int(g, n, "block_dim", (int64_t)t.blocks))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  *chosen_out = 1;
  return ST_OK;
}
