/* winograd.c - which cube Convs run as Winograd F(4x4,3x3), their tiles, and
 * their weights transformed at compile time (called by tiling.c).
 *
 * Eligible: a group-1 Conv with constant FRACTAL_Z weights read by no other
 * node, a 3x3 kernel, strides 1 and dilations 1, at least 16 input channels
 * (Winograd multiplies 36/16 x the padded channels per output, direct 9 x
 * the real ones, so fewer channels gain little or lose), and at least
 * WINO_MIN_TILES 4x4 output tiles per image (TH * TW, TH = ceil(Ho/4),
 * TW = ceil(Wo/4)). Below that the GEMM of each of the 36 transformed
 * positions has too few rows to reuse its weights (4x the direct
 * weights, read once per task tile): on ResNet-50 the 7x7 layers are
 * measured slower as Winograd than direct, the 14x14 ones (16 tiles) faster.
 * Both precisions qualify: the transforms run in f32 and the transformed
 * weights are f32 (below), so under force_fp16 the only fp16 roundings left
 * are those of the stored activations, as on the direct path.
 *
 * Tiles (om_format.h, CONV2D algorithm 1): tile_m Winograd tiles x tile_n
 * output channel blocks, the whole K (C1in) at once, every (tile_m, tile_n)
 * that fits the capacities scored like the direct tiling: ceil(tiles /
 * ai_cores) x the cost of one tile, counted in multiply-accumulates: the 36
 * GEMMs (rows rounded up to the 6-row micro-kernel), the input transform
 * (about 2 MAC-equivalents per transformed value, done once per task tile,
 * so splitting output channels repeats it), staging the weights, and the
 * output transform. Ties go to the larger tile.
 *
 * Weights: u[co][ci] = G g[co][ci] G^T computed in double from the FRACTAL_Z
 * values (already rounded to the compute dtype, as the direct path uses
 * them) and stored as WINO_F43 (types.h) in f32 under every precision: the
 * output transform amplifies a rounding of u (A^T has entries up to 8), and
 * fp16 u measured ResNet-50's cosine to the reference 0.99932 against
 * 0.99977 for f32 u, the same as the direct convolution. The price is 16
 * bytes per original weight (a 3x3 conv's 9 fp16 values become 36 f32 ones).
 * The constant is rewritten in place (dtype f32, layout WINO_F43).
 */
#include "winograd.h"

#include <string.h>

#include "common/fp16.h"

enum { WINO_MIN_TILES = 16, WINO_MAX_BLOCKS = 65535 };

static const double wino_g[6][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int eligible(const ir_graph *g, const ir_node *n) {
  const ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (w->layout != LAYOUT_FRACTAL_Z || !w->data || w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3)
    return 0;
  if ((x->dtype != DT_FLOAT16 && x->dtype != DT_FLOAT32) || x->dims[1] < C0) return 0;
  if (ir_attr_int(n, "group", 1) != 1 || ir_value_use_count(g, w) != 1) return 0;
  int64_t s[2] = {1, 1}, dl[2] = {1, 1};
  ir_attr_ints(n, "strides", s, 2);
  ir_attr_ints(n, "dilations", dl, 2);
  if (s[0] != 1 || s[1] != 1 || dl[0] != 1 || dl[1] != 1) return 0;
  uint64_t tiles = ceil_div((uint64_t)y->dims[2], 4) * ceil_div((uint64_t)y->dims[3], 4);
  return tiles >= WINO_MIN_TILES;
}

typedef struct wino_tiles {
  uint64_t m, n, blocks;
} wino_tiles;

/* The cheapest (tile_m, tile_n) within the capacities; m = 0 when none. */
static wino_tiles choose(const soc_info *soc, const ir_node *n) {
  const ir_value *x = n->in[0], *y = n->out[0];
  const uint64_t c1 = ceil_div((uint64_t)x->dims[1], C0), k = c1 * C0;
  const uint64_t n1 = ceil_div((uint64_t)y->dims[1], C0), images = (uint64_t)y->dims[0];
  const uint64_t wt = ceil_div((uint64_t)y->dims[2], 4) * ceil_div((uint64_t)y->dims[3], 4);
  const uint64_t pts = WINO_F43_POINTS, cores = (uint64_t)soc->ai_cores;
  wino_tiles best = {0, 0, 0};
  if (k * C0 * 4 > soc->l0b_bytes || pts * C0 * 4 > soc->ub_bytes) return best;
  uint64_t best_cost = UINT64_MAX;
  for (uint64_t tm = 1; tm <= wt; tm++) {
    if (pts * tm * k * 4 > soc->l1_bytes || tm * k * 4 > soc->l0a_bytes || pts * tm * C0 * 4 > soc->l0c_bytes)
      break;
    for (uint64_t tn = 1; tn <= n1; tn++) {
      uint64_t tiles = images * ceil_div(wt, tm) * ceil_div(n1, tn);
      uint64_t gemm = pts * ceil_div(tm, 6) * 6 * k * tn * C0;
      uint64_t in_tf = 2 * pts * tm * k, w_stage = pts * k * tn * C0 / 4, out_tf = 2 * pts * tm * tn * C0;
      uint64_t total = ceil_div(tiles, cores) * (gemm + in_tf + w_stage + out_tf);
      if (total < best_cost || (total == best_cost && tm * tn > best.m * best.n)) {
        best_cost = total;
        best = (wino_tiles){tm, tn, tiles < WINO_MAX_BLOCKS ? tiles : WINO_MAX_BLOCKS};
      }
    }
  }
  return best;
}

static double load_w(const void *data, int dt, uint64_t i) {
  return dt == DT_FLOAT16 ? half_to_float(((const uint16_t *)data)[i]) : ((const float *)data)[i];
}

/* FRACTAL_Z [Cout, Cin, 3, 3] (f16 or f32) -> WINO_F43 f32, into the graph
 * arena. */
static void *transform_weights(ir_graph *g, const ir_value *w) {
  const uint64_t cout = (uint64_t)w->dims[0], cin = (uint64_t)w->dims[1];
  const uint64_t n1 = ceil_div(cout, C0), c1 = ceil_div(cin, C0), k = c1 * C0;
  const int dt = (int)w->dtype;
  uint64_t count;
  if (layout_elements(LAYOUT_WINO_F43, 4, w->dims, &count)) return NULL;
  float *out = arena_array(&g->arena, (size_t)count, sizeof(float));
  if (!out) return NULL;
  memset(out, 0, (size_t)count * sizeof(float));
  for (uint64_t co = 0; co < cout; co++)
    for (uint64_t ci = 0; ci < cin; ci++) {
      double gk[3][3], t[6][3];
      for (uint64_t kh = 0; kh < 3; kh++)
        for (uint64_t kw = 0; kw < 3; kw++) { /* types.h's FRACTAL_Z index */
          uint64_t frac = (ci / C0 * 3 + kh) * 3 + kw;
          gk[kh][kw] = load_w(w->data, dt, ((frac * n1 + co / C0) * C0 + co % C0) * C0 + ci % C0);
        }
      for (int i = 0; i < 6; i++)
        for (int b = 0; b < 3; b++)
          t[i][b] = wino_g[i][0] * gk[0][b] + wino_g[i][1] * gk[1][b] + wino_g[i][2] * gk[2][b];
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
          uint64_t at = (((uint64_t)(i * 6 + j) * n1 + co / C0) * k + ci) * C0 + co % C0;
          out[at] = (float)(t[i][0] * wino_g[j][0] + t[i][1] * wino_g[j][1] + t[i][2] * wino_g[j][2]);
        }
    }
  return out;
}

status wino_tile_conv(ir_graph *g, const pass_ctx *ctx, ir_node *n, int *chosen_out, diag *d) {
  *chosen_out = 0;
  if (!ctx->winograd || !eligible(g, n)) return ST_OK;
  wino_tiles t = choose(ctx->soc, n);
  if (t.m == 0) return ST_OK;
  ir_value *w = n->in[1];
  void *data = transform_weights(g, w);
  if (!data) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory transforming Winograd weights");
  w->data = data;
  w->layout = LAYOUT_WINO_F43;
  w->dtype = DT_FLOAT32;
  const int64_t c1 = (int64_t)ceil_div((uint64_t)n->in[0]->dims[1], C0);
  if (ir_attr_set_int(g, n, "algorithm", OM_CONV_WINO_F43) || ir_attr_set_int(g, n, "tile_m", (int64_t)t.m) ||
      ir_attr_set_int(g, n, "tile_n", (int64_t)t.n) || ir_attr_set_int(g, n, "tile_k", c1) ||
      ir_attr_set_int(g, n, "block_dim", (int64_t)t.blocks))
    return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  *chosen_out = 1;
  return ST_OK;
}
