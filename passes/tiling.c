/* tiling.c - tiles for the cube, blocks for every task, per the SoC.
 *
 * Needs: layout has run (Conv weights FRACTAL_Z or, for depthwise, NC1HWC0;
 * activations in their final layouts and dtypes); ctx->soc.
 * Changes: sets node attributes block_dim on every node that can become a
 * task, and tile_m, tile_n, tile_k on each cube Conv and MatMul (and fold
 * on a MatMul whose batches fold into rows); algorithm=2 on the Convs that
 * run as Winograd (their FRACTAL_Z weights unchanged).
 * Leaves true: each Conv's tiles satisfy the guarantees of OM_TASK_CONV2D
 * in common/om_format.h for the SoC's capacities (L0C, and L0A and L0B as
 * the software NPU stages them; for algorithm 2 the Winograd ones, L1, L0C
 * and UB), each MatMul's those of OM_TASK_MATMUL, and every block_dim is in
 * 1..65535 and at most the number of units its task kind's block split
 * rule divides (so no block is empty).
 * The tiles are decided here, once: libomrt checks them at load and runs
 * them as they are.
 *
 * Cube tiling. For one image the conv is a GEMM of M = Ho*Wo output pixels,
 * N = C1out channel blocks and K = C1in*KH*KW reduction fractals, tile_m in
 * pixels (16 of them make one fractal row block) and tile_n, tile_k in
 * fractals. tile_m and tile_n are scored as the chip would load them
 * (esize = dtype size of x): the most K that fits tile_m * k*16 * esize <=
 * L0A and k*16 * tile_n*16 * esize <= L0B per L0 load, tile_m * tile_n*16
 * * 4 <= L0C. Every (tile_m, tile_n) that fits with k >= 1 is scored with a
 * small cost model: a tile's cube fractal products (padded rows included,
 * so tiles that divide M badly pay for it) + the bytes it moves into L0
 * and out of L0C at 64 bytes a cycle + a fixed 32 cycles per L0 load;
 * tiles are spread over the AI cores, so the score is ceil(tiles /
 * ai_cores) * tile cost. Ties go to the larger tile (more reuse).
 * tile_k is then the K chunk of libomrt's cube kernels (conv_chunk): they
 * read the weights in place, a pass of up to PASS_NBLOCKS output channel
 * blocks at a time for every group of pixel rows staged in L0A, so a
 * chunk is the whole K when it fits, else as many fractals as a pass's
 * weights (in their dtype) fit the staged L0B bytes, within om_format.h's
 * guarantees (a chunk's rows of 16 pixels in the staged L0A, its fractals
 * of one n block in the staged L0B) and OM_CONV_MAX_TILE_K. A tile of one
 * pixel (a fully connected layer) streams its weights once, so only the
 * guarantees bound its chunk; a stem (at most 4 input channels) takes its
 * whole K in one chunk when all its weights fit the staged L0B as f32 (the
 * kernels read its input as packed rows against them). The chunk changes how often partial sums
 * go through L0C, not the sums: every kernel adds K in order.
 * block_dim = tiles (at most 65535): one tile per block, so the
 * runtime's split (each thread a run of consecutive blocks, as even in
 * count as the tiles allow) balances the tiles for any thread count; blocks
 * of several tiles could not (14 tiles in 8 blocks on 2 threads: 8 and 6).
 *
 * MatMul (the MATMUL task): fold = how many of y's batch dims join M in
 * one row axis (the most common/matmul_geom.h allows: a batch of one-row
 * products by one B is one matrix product), and tile_m, tile_n, tile_k in
 * elements (multiples of 16) of the rows, N and K, bounded by the
 * chip's three inequalities (tile_m * tile_k * esize <= L0A, tile_k *
 * tile_n * esize <= L0B, tile_m * tile_n * 4 <= L0C; the kernels stage
 * the blocks as f32 in OM_L0_STAGING times those) and scored by the x86 cube
 * micro-kernel's costs (tile_matmul) over batch * ceil(rows / tile_m) *
 * ceil(N / tile_n) tiles; tile_k is the K chunk the kernel runs;
 * block_dim = tiles (<= 65535).
 *
 * QConv (the QCONV2D task): rule_qconv below.
 *
 * Attention (the ATTENTION task): tile_q query rows and tile_kv keys per
 * block within om_format.h's guarantees, and block_dim = the tiles
 * (lower/attention.c chooses them).
 *
 * Grouped convolutions (FRACTAL_Z_G weights) count K as the deepest output
 * block's: its groups' input blocks x KH x KW (common/conv_group.h).
 * 3-D convolutions (CONV3D) tile the same GEMM per (n, od) output image with
 * K = C1in*KD*KH*KW fractals.
 *
 * Winograd: 3x3 stride-1 convolutions whose Winograd tiling costs less than
 * the direct one run as F(4x4,3x3) instead (attribute algorithm=2, OM_CONV_WINO_F43_FZ, tile_m
 * counting 4x4 tiles): winograd.c decides and tiles them. On by default
 * except under must_keep_origin_dtype; atc --op_select_implmode picks.
 *
 * The rule is the node's task kind (ops.def's task column): block_rules
 * set the cube kinds' tiles (and VPROG's blocks) themselves, unit_rules
 * count what a vector kind's blocks split.
 * Vector tasks: block_dim = min(units, ai_cores, ceil(elements / 4096)) where
 * units is what the kind's rule splits (TRANSDATA: the outer physical rows of
 * dst, N*C1*H, N*D*C1*H, N*C*H or N*C*D*H, or its elements when the layout
 * stays; POOL/DWCONV: N*C1 (3-D POOL N*Do*C1); POOL_ND: y elements; RESIZE: y rows; COPY_SLICE: the product
 * of the dims before the axis; SOFTMAX: the rows before the axis; LAYERNORM: the rows; RECURRENCE: batch
 * rows, one per core at most; REDUCE: y elements, with elements counted on x; TOPK, CUMSUM: the lines along
 * the axis, elements counted on x; Split: the smallest output's elements; NONZERO, NMS, UNIQUE, TFIDF: 1;
 * QELTWISE, QLUT: runs of 16 physical elements), so small tensors are not split into blocks that cost more to
 * dispatch than to run.
 *
 * Vector programs (VPROG) split the outputs' physical elements into
 * 256-element tiles: block_dim = min(tiles, 4 * ai_cores, ceil(elements /
 * 4096)): a few blocks per core, so a preempted worker delays little, and
 * never fewer than 4096 elements a block, so dispatch stays cheap.
 */
#include "common/conv_group.h"
#include "common/matmul_geom.h"
#include "ir/view.h"
#include "lower/attention.h"
#include "lower/conv_weights.h"
#include "pass.h"
#include "lower/winograd.h"

enum { MAX_BLOCKS = 65535, MIN_BLOCK_ELEMS = 4096, LOAD_CYCLES = 32, BYTES_PER_CYCLE = 64 };
/* Output channel blocks of one pass of libomrt's x86 cube micro-kernel
 * over a K chunk (runtime/kernels_cube_x86.c, MAX_NB). */
enum { PASS_NBLOCKS = 16 };
enum { VPROG_TILE_ELEMS = 256 };

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static status set_attr(ir_graph *g, ir_node *n, const char *name, int64_t v, diag *d) {
  if (ir_attr_set_int(g, n, name, v)) return ir_node_error(d, ST_ERR_NOMEM, n, "out of memory");
  return ST_OK;
}

static status too_big(const ir_node *n, diag *d, const char *what) {
  return ir_node_error(d, ST_ERR_LIMIT, n, "%s", what);
}

/* Physical elements of v (layout padding included). */
static uint64_t phys_elems(const ir_value *v) {
  uint64_t count = 0;
  layout_elements(v->layout, v->rank, v->dims, &count);
  return count;
}

static uint64_t vector_blocks(const pass_ctx *ctx, uint64_t units, uint64_t elems) {
  uint64_t bd = min_u64(units, (uint64_t)ctx->soc->ai_cores);
  bd = min_u64(bd, ceil_div(elems, MIN_BLOCK_ELEMS));
  bd = min_u64(bd, MAX_BLOCKS);
  return bd ? bd : 1;
}

typedef struct conv_tiles {
  uint64_t m, n, k, blocks;
} conv_tiles;

/* The K chunk in fractals of a direct conv tile of tn n blocks and kf
 * fractals of K (the header says why): cin input channels, taps = KH*KW,
 * weights of w_esize bytes; 0 when not even one fractal fits. */
static uint64_t conv_chunk(const soc_info *soc, uint64_t kf, uint64_t tn, uint64_t cin, uint64_t taps,
                           uint64_t w_esize, int one_pixel) {
  const uint64_t a = (uint64_t)OM_L0_STAGING * soc->l0a_bytes, b = (uint64_t)OM_L0_STAGING * soc->l0b_bytes;
  /* om_format.h's guarantees: a chunk's 16 rows in L0A, its fractals of one n block in L0B, f32 */
  const uint64_t k = min_u64(min_u64(a, b) / (C0 * C0 * 4), OM_CONV_MAX_TILE_K);
  if (one_pixel) return min_u64(k, kf);
  /* a stem (<= 4 channels) reads packed input rows against all its weights, staged whole as f32 */
  if (cin <= 4 && kf <= k && cin * taps * tn * C0 * 4 <= b) return kf;
  return min_u64(min_u64(k, kf), b / (w_esize * C0 * C0 * min_u64(tn, PASS_NBLOCKS)));
}

static status tile_conv(const pass_ctx *ctx, const ir_node *n, conv_tiles *out, diag *d) {
  const soc_info *soc = ctx->soc;
  const ir_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  uint64_t es = dtype_size(w->dtype); /* the staged dtype (an ND stem input is staged as w's) */
  const int o = y->rank == 5;         /* 3-D: the images are the (n, od) slices of y */
  uint64_t images = (uint64_t)y->dims[0] * (o ? (uint64_t)y->dims[2] : 1),
           pixels = (uint64_t)y->dims[2 + o] * (uint64_t)y->dims[3 + o];
  uint64_t n1 = ceil_div((uint64_t)y->dims[1], C0);
  uint64_t kf = ceil_div((uint64_t)x->dims[1], C0) * (uint64_t)w->dims[2] * (uint64_t)w->dims[3] *
                (o ? (uint64_t)w->dims[4] : 1);
  convg_geom geo; /* grouped: an output block reduces over its groups' input blocks only */
  if (w->layout == LAYOUT_FRACTAL_Z_G && !convg_init(w->dims, &geo)) kf = (uint64_t)convg_max_k(&geo);
  uint64_t cores = (uint64_t)soc->ai_cores, frac = C0 * C0 * es;
  uint64_t best_cost = UINT64_MAX;
  *out = (conv_tiles){0, 0, 0, 0};
  if (pixels == 0 || images == 0) return too_big(n, d, "empty output");
  uint64_t m_max = min_u64(ceil_div(pixels, C0) * C0, soc->l0a_bytes / (C0 * es));
  for (uint64_t tm = C0; tm <= m_max; tm += C0) {
    for (uint64_t tn = 1; tn <= n1; tn++) {
      if (tm * tn * C0 * 4 > soc->l0c_bytes || tn * frac > soc->l0b_bytes) break;
      uint64_t tk = min_u64(kf, min_u64(soc->l0a_bytes / (tm * C0 * es), soc->l0b_bytes / (tn * frac)));
      uint64_t tiles = images * ceil_div(pixels, tm) * ceil_div(n1, tn);
      uint64_t cube = tm / C0 * tn * kf;
      uint64_t bytes = (tm * kf * C0 + kf * C0 * C0 * tn) * es + tm * tn * C0 * 4;
      uint64_t cost = cube + bytes / BYTES_PER_CYCLE + LOAD_CYCLES * ceil_div(kf, tk);
      uint64_t total = ceil_div(tiles, cores) * cost;
      if (total < best_cost || (total == best_cost && tm * tn > out->m * out->n)) {
        best_cost = total;
        *out = (conv_tiles){tm, tn, tk, min_u64(tiles, MAX_BLOCKS)};
      }
    }
  }
  if (out->m == 0) return too_big(n, d, "no cube tile fits the SoC's L0 buffers");
  out->k = conv_chunk(soc, kf, out->n, (uint64_t)x->dims[1],
                      (uint64_t)w->dims[w->rank - 2] * (uint64_t)w->dims[w->rank - 1], dtype_size(w->dtype),
                      pixels == 1);
  if (out->k == 0) return too_big(n, d, "no K chunk of the cube fits the SoC's L0 buffers");
  return ST_OK;
}

/* MatMul (the MATMUL task; or a QMatMul with a run-time w, which has no
 * c): its geometry (common/matmul_geom.h) from the laid-out operands and
 * their views (permA, permB, transA, transB). */
static void matmul_geom(const ir_node *n, mm_geom *g) {
  const ir_value *a = n->in[0], *b = n->in[1], *y = n->out[0];
  const ir_value *c = n->op == IR_OP_MATMUL && n->nin > 3 ? n->in[3] : NULL;
  int perm[2][MAX_RANK];
  for (int j = 0; j < 2; j++) {
    int64_t p[MAX_RANK + 1];
    int count = ir_attr_ints(n, j ? "permB" : "permA", p, MAX_RANK + 1);
    for (int d = 0; d < n->in[j]->rank; d++)
      perm[j][d] = count == n->in[j]->rank ? (int)p[d] : d; /* shape inference checked it */
  }
  const mm_operand oa = {a->rank, a->dims, perm[0], ir_attr_int(n, "transA", 0) != 0},
                   ob = {b->rank, b->dims, perm[1], ir_attr_int(n, "transB", 0) != 0};
  mm_geom_init(&oa, &ob, b->layout == LAYOUT_FRACTAL_NZ, c ? c->rank : -1, c ? c->dims : NULL, y->rank,
               y->dims, g);
}

/* MATMUL tiles in elements (multiples of 16) of the row axis (M times the
 * folded batch dims: the largest fold, mm_max_fold), N and K, within
 * om_format.h's L0A/L0B/L0C inequalities; tile_k is the K chunk, the most
 * that fits. The score models the x86 tile (runtime/kernels_matmul_x86.c)
 * in FMA steps of one row x 16 columns (mm_cost):
 *   - the products: each tile's rows x its columns rounded up to 16 x K;
 *   - per k step of each micro-kernel call, K_STEP for the loop and the B
 *     loads: a call is a group of up to 12 rows (a tile's rows split
 *     evenly) x a pair of n blocks;
 *   - CALL_STEPS per call and K chunk: starting the call's B streams, the
 *     sums' round trip through L0C, the write-back. A tile runs the whole
 *     K as one chunk when nothing is staged per chunk: B FRACTAL_NZ, and
 *     A read in place (f32, K contiguous, alpha 1) or staged whole in L1
 *     (the tile's rows x K16 floats fit the SoC's L1);
 *   - staging A as f32 (a row of K per 8 lanes): once per row of tiles a
 *     core runs when it is staged whole in L1 (the run loop goes along N
 *     first, so a core's tiles on the same rows share it), else per tile;
 *   - staging a run-time (ND) B: its K x tile_n panels per tile;
 *   - B_STREAM per k row and n block of every tile: reading B's panels
 *     from memory, once per m tile (small m tiles read B more often).
 * The score is the cost of the busiest AI core's tiles: the runtime gives
 * each core a run of consecutive tiles (as even in count as they allow)
 * in the run loop's order, and the last m and n tiles may be short
 * (mm_core_cost). Ties go to the larger tile. */
enum { MM_GROUP = 12, K_STEP = 1, CALL_STEPS = 256, B_STREAM = 2 };

/* What mm_cost needs of a MatMul besides the tile. */
typedef struct mm_costs {
  uint64_t K, k16;
  int bnz, a_in_place;
  uint64_t l1_bytes;
} mm_costs;

/* The cost of one tile of rows x nb n blocks, K in chunks of tk, without
 * staging A in L1; *a_l1: its A rows are staged whole in L1. */
static uint64_t mm_cost(const mm_costs *c, uint64_t rows, uint64_t nb, uint64_t tk, int *a_l1) {
  const uint64_t lda_l1 = c->k16 % (2 * C0) ? c->k16 : c->k16 + C0; /* floats a staged row (the kernel's) */
  *a_l1 = !c->a_in_place && rows * lda_l1 * sizeof(float) <= c->l1_bytes;
  const uint64_t chunks = c->bnz && (c->a_in_place || *a_l1) ? 1 : ceil_div(c->K, tk);
  const uint64_t calls = ceil_div(rows, MM_GROUP) * ceil_div(nb, 2);
  return rows * nb * c->K + K_STEP * calls * c->K + CALL_STEPS * calls * chunks +
         (c->bnz ? B_STREAM * c->K * nb : c->K * nb) + (c->a_in_place || *a_l1 ? 0 : rows * c->K / 8);
}

/* Tiles [0, x) of the run order (batch, m tile, n tile) that are the last
 * n tile of their row (f[0]), in the last m tile (f[1]), or both (f[2]). */
static void mm_last_counts(uint64_t x, uint64_t mtiles, uint64_t ntiles, uint64_t f[3]) {
  const uint64_t rows = x / ntiles, part = x % ntiles; /* whole rows of n tiles, then part of one */
  f[0] = rows;
  f[1] = rows / mtiles * ntiles + (rows % mtiles == mtiles - 1 ? part : 0);
  f[2] = rows / mtiles;
}

/* The cost of tiles [lo, hi) of the run order from a tile's cost by class
 * (cost[last m][last n]) and that of staging one row of tiles' A (a_stage),
 * paid for every row of tiles the run enters. */
static uint64_t mm_core_cost(uint64_t lo, uint64_t hi, uint64_t mtiles, uint64_t ntiles,
                             const uint64_t cost[2][2], uint64_t a_stage) {
  if (lo >= hi) return 0;
  uint64_t a[3], b[3];
  mm_last_counts(lo, mtiles, ntiles, a);
  mm_last_counts(hi, mtiles, ntiles, b);
  const uint64_t both = b[2] - a[2], last_n = b[0] - a[0] - both, last_m = b[1] - a[1] - both;
  const uint64_t neither = hi - lo - both - last_n - last_m;
  return neither * cost[0][0] + last_n * cost[0][1] + last_m * cost[1][0] + both * cost[1][1] +
         ((hi - 1) / ntiles - lo / ntiles + 1) * a_stage;
}

static status tile_matmul(const pass_ctx *ctx, const ir_node *n, conv_tiles *out, int *fold_out, diag *d) {
  const soc_info *soc = ctx->soc;
  mm_geom g;
  matmul_geom(n, &g);
  const int fold = mm_max_fold(&g);
  uint64_t es = dtype_size(n->in[0]->dtype), batch = 1, rows = (uint64_t)g.m, N = (uint64_t)g.n;
  const uint64_t K = (uint64_t)g.k;
  for (int i = 0; i < g.nbd; i++)
    if (i < g.nbd - fold)
      batch *= (uint64_t)g.bdims[i];
    else
      rows *= (uint64_t)g.bdims[i];
  *out = (conv_tiles){0, 0, 0, 0};
  *fold_out = fold;
  if (rows == 0 || N == 0 || K == 0 || batch == 0) return too_big(n, d, "empty matrix product");
  const mm_costs mc = {K, ceil_div(K, C0) * C0, n->in[1]->layout == LAYOUT_FRACTAL_NZ,
                       n->in[0]->dtype == DT_FLOAT32 && g.a_sk == 1 && ir_attr_float(n, "alpha", 1.0) == 1.0,
                       soc->l1_bytes};
  uint64_t cores = (uint64_t)soc->ai_cores, best_cost = UINT64_MAX;
  uint64_t m_max = min_u64(min_u64(ceil_div(rows, C0) * C0, soc->l0a_bytes / (C0 * es)), 65536);
  uint64_t n_max = min_u64(min_u64(ceil_div(N, C0) * C0, soc->l0b_bytes / (C0 * es)), 65536);
  for (uint64_t tm = C0; tm <= m_max; tm += C0) {
    for (uint64_t tn = C0; tn <= n_max; tn += C0) {
      if (tm * tn * 4 > soc->l0c_bytes) break;
      uint64_t tk =
          min_u64(min_u64(mc.k16, soc->l0a_bytes / (tm * es)), soc->l0b_bytes / (tn * es)) / C0 * C0;
      if (tk < C0) break;
      tk = min_u64(tk, 65536);
      const uint64_t mtiles = ceil_div(rows, tm), ntiles = ceil_div(N, tn), tiles = batch * mtiles * ntiles;
      /* a tile's cost by class: full, or the last m tile's rows, or the last n tile's blocks */
      const uint64_t rt = min_u64(tm, rows), m_last = rows - (mtiles - 1) * tm, nb = tn / C0,
                     nb_last = ceil_div(N - (ntiles - 1) * tn, C0);
      int a_l1, unused;
      const uint64_t cost[2][2] = {
          {mm_cost(&mc, rt, nb, tk, &a_l1), mm_cost(&mc, rt, nb_last, tk, &unused)},
          {mm_cost(&mc, m_last, nb, tk, &unused), mm_cost(&mc, m_last, nb_last, tk, &unused)}};
      uint64_t total = 0;
      for (uint64_t c = 0; c < cores; c++) {
        const uint64_t busy = mm_core_cost(tiles * c / cores, tiles * (c + 1) / cores, mtiles, ntiles, cost,
                                           a_l1 ? rt * K / 8 : 0);
        total = busy > total ? busy : total;
      }
      if (total < best_cost || (total == best_cost && tm * tn > out->m * out->n)) {
        best_cost = total;
        *out = (conv_tiles){tm, tn, tk, min_u64(tiles, MAX_BLOCKS)};
      }
    }
  }
  if (out->m == 0) return too_big(n, d, "no matrix tile fits the SoC's L0 buffers");
  return ST_OK;
}

/* --- one rule per task kind (ops.def's task column) ------------------------
 *
 * A block rule sets the node's block_dim (and a cube kind's tiles) itself.
 * A units rule returns the units its kind's blocks split (om_format.h) and
 * sets *elems to the elements the task touches (preset to y's physical
 * elements), from which vector_blocks takes block_dim. */
typedef status (*block_rule)(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d);
typedef uint64_t (*units_rule)(const ir_node *n, uint64_t *elems);

static status set_tiles(ir_graph *g, ir_node *n, const conv_tiles *t, diag *d) {
  status st = set_attr(g, n, "tile_m", (int64_t)t->m, d);
  if (st == ST_OK) st = set_attr(g, n, "tile_n", (int64_t)t->n, d);
  if (st == ST_OK) st = set_attr(g, n, "tile_k", (int64_t)t->k, d);
  return st != ST_OK ? st : set_attr(g, n, "block_dim", (int64_t)t->blocks, d);
}

/* Depthwise Convs (NC1HWC0 weights) are DWCONV tasks: N*C1 planes. */
static uint64_t units_dwconv(const ir_node *n, uint64_t *elems) {
  const ir_value *y = n->out[0];
  (void)elems;
  return (uint64_t)y->dims[0] * ceil_div((uint64_t)y->dims[1], C0);
}

static status rule_conv2d(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  if (n->in[1]->layout == LAYOUT_NC1HWC0) {
    uint64_t elems = phys_elems(n->out[0]), units = units_dwconv(n, &elems);
    return set_attr(g, n, "block_dim", (int64_t)vector_blocks(ctx, units, elems), d);
  }
  int wino = 0; /* ctx->winograd (atc --op_select_implmode); 2-D only */
  status st = ctx->winograd && n->out[0]->rank == 4 ? wino_tile_conv(g, ctx->soc, n, &wino, d) : ST_OK;
  if (st != ST_OK || wino) return st;
  conv_tiles t;
  st = tile_conv(ctx, n, &t, d);
  return st != ST_OK ? st : set_tiles(g, n, &t, d);
}

static status rule_matmul(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  conv_tiles t;
  int fold = 0;
  status st = tile_matmul(ctx, n, &t, &fold, d);
  if (st == ST_OK && fold) st = set_attr(g, n, "fold", fold, d);
  return st != ST_OK ? st : set_tiles(g, n, &t, d);
}

/* ATTENTION: tile_q, tile_kv and block_dim from lower/attention.c. */
static status rule_attention(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  ir_view q, v, y; /* the operands as the node reads them (views or values) */
  if (ir_attn_operand(n, 0, &q) || ir_attn_operand(n, 2, &v) || ir_attn_operand(n, 3, &y))
    return ir_node_error(d, ST_ERR_INVALID, n, "malformed operand view");
  uint64_t batch = 1;
  for (int i = 0; i < y.rank - 2; i++)
    batch *= (uint64_t)y.dims[i];
  attn_tiles t;
  if (attn_tile(ctx->soc, batch, q.dims[q.rank - 2], v.dims[v.rank - 2], q.dims[q.rank - 1],
                v.dims[v.rank - 1], dtype_size(n->in[0]->dtype), &t))
    return too_big(n, d, "no attention tile fits the SoC's buffers");
  status st = set_attr(g, n, "tile_q", t.q, d);
  if (st == ST_OK) st = set_attr(g, n, "tile_kv", t.kv, d);
  return st != ST_OK ? st : set_attr(g, n, "block_dim", (int64_t)t.blocks, d);
}

/* RECURRENCE: batch rows over the cores; the gate accumulators, the
 * recurrent bias and the state, (2G + 3) * H floats, in the UB. */
static status rule_recurrence(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  const int64_t cell = ir_attr_int(n, "cell", 0), G = cell == 0 ? 4 : cell == 1 ? 3 : 1;
  const uint64_t H = (uint64_t)n->in[1]->dims[0], B = (uint64_t)n->in[0]->dims[1];
  if ((uint64_t)(2 * G + 3) * H * 4 > ctx->soc->ub_bytes)
    return too_big(n, d, "the recurrence's state does not fit the SoC's UB");
  uint64_t bd = min_u64(B, (uint64_t)ctx->soc->ai_cores);
  return set_attr(g, n, "block_dim", (int64_t)(bd ? bd : 1), d);
}

/* QCONV2D: tiles of QCONV_TILE_M output pixels x QCONV_TILE_N output
 * channel blocks (fewer when the image or the channels are smaller), one
 * tile per block (at most 65535 blocks: larger tiles then). The kernels
 * read x and the packed weights in place, so no buffer bounds the tile;
 * its size is what keeps a tile's inputs (tile_m pixels' windows) and
 * weights (tile_n blocks) in the host's L2 while it runs. */
enum { QCONV_TILE_M = 96, QCONV_TILE_N = 8 };
/* A depthwise QCONV2D (groups = Cin = Cout) reads no other block's inputs
 * and its tile sets up each block's weights once (kernels_qdw_x86.c: up to
 * 7 x 4 x 4 vectors): tiles of one block and QCONV_DW_TILE_M pixels, so
 * that the setup is spread over ~128 groups of 4 pixels, not 24 (a 56 x 56
 * map's layer -16% CPU time, a 14 x 14 5x5 one -14%, against 96 x 8 tiles). */
enum { QCONV_DW_TILE_M = 512 };
/* tile_m pixels (at most max_m) x tile_n output blocks (at most max_n),
 * doubling tile_m until the images' tiles fit in MAX_BLOCKS: QCONV2D's and
 * QMATMUL's tiles. */
static status set_qconv_tiles(ir_graph *g, ir_node *n, uint64_t images, uint64_t m, uint64_t c1,
                              uint64_t max_m, uint64_t max_n, diag *d) {
  uint64_t tm = min_u64(m ? m : 1, max_m), tn = min_u64(c1 ? c1 : 1, max_n);
  uint64_t tiles = images * ceil_div(m, tm) * ceil_div(c1, tn);
  while (tiles > MAX_BLOCKS) {
    tm *= 2;
    tiles = images * ceil_div(m, tm) * ceil_div(c1, tn);
  }
  status st = set_attr(g, n, "tile_m", (int64_t)tm, d);
  if (st == ST_OK) st = set_attr(g, n, "tile_n", (int64_t)tn, d);
  return st != ST_OK ? st : set_attr(g, n, "block_dim", (int64_t)(tiles ? tiles : 1), d);
}

static status rule_qconv(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  (void)ctx;
  const ir_value *y = n->out[0];
  const int nhwc =
      y->layout == LAYOUT_ND; /* [N, Ho, Wo, Cout] (layout.c qconv_nhwc), else [N, Cout, Ho, Wo] */
  const uint64_t m = (uint64_t)(nhwc ? y->dims[1] * y->dims[2] : y->dims[2] * y->dims[3]),
                 c1 = ceil_div((uint64_t)y->dims[nhwc ? 3 : 1], C0);
  const int64_t groups = ir_attr_int(n, "group", 1);
  const int dw = !nhwc && groups > 1 && groups == n->in[0]->dims[1] && groups == y->dims[1];
  return set_qconv_tiles(g, n, (uint64_t)y->dims[0], m, c1, dw ? QCONV_DW_TILE_M : QCONV_TILE_M,
                         dw ? 1 : QCONV_TILE_N, d);
}

/* QMATMUL with a run-time w (om_tasks_cube.h): per batch, tile_n column
 * blocks (at most QCONV_TILE_N, their packing within L1) x tile_m rows (at
 * most QCONV_TILE_M, within L0A when the task copies x's rows, their terms
 * within UB), doubling tile_m while the tiles are more than MAX_BLOCKS. */
static status rule_qmatmul_act(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  mm_geom mg;
  matmul_geom(n, &mg);
  const uint64_t m = (uint64_t)mg.m, c1 = ceil_div((uint64_t)mg.n, C0),
                 k16 = ceil_div((uint64_t)mg.k, C0) * C0, k4 = ceil_div((uint64_t)mg.k, 4) * 4,
                 batch = (uint64_t)ir_value_elements(n->out[0]) / (m * (uint64_t)mg.n);
  const int copy = mg.a_sk != 1 || mg.k % 4;
  const uint64_t tn = min_u64(min_u64(c1, QCONV_TILE_N), ctx->soc->l1_bytes / (k16 * C0)),
                 ub_rows = ctx->soc->ub_bytes > tn * C0 * 8 ? (ctx->soc->ub_bytes - tn * C0 * 8) / 4 : 0;
  uint64_t tm_max = min_u64(copy ? ctx->soc->l0a_bytes / k4 : m, ub_rows),
           tm = min_u64(m, min_u64(QCONV_TILE_M, tm_max));
  if (tn < 1 || tm < 1) return too_big(n, d, "w's packing or x's rows do not fit the SoC's L1 / L0A / UB");
  uint64_t tiles = batch * ceil_div(c1, tn) * ceil_div(m, tm);
  while (tiles > MAX_BLOCKS && tm < min_u64(m, tm_max)) {
    tm = min_u64(tm * 2, min_u64(m, tm_max));
    tiles = batch * ceil_div(c1, tn) * ceil_div(m, tm);
  }
  if (tiles > MAX_BLOCKS) return too_big(n, d, "more tiles than a task's blocks");
  status st = set_attr(g, n, "tile_m", (int64_t)tm, d);
  if (st == ST_OK) st = set_attr(g, n, "tile_n", (int64_t)tn, d);
  return st != ST_OK ? st : set_attr(g, n, "block_dim", (int64_t)tiles, d);
}

/* QMATMUL: QCONV2D's tiles over x's rows (the 1x1 convolution's pixels). */
static status rule_qmatmul(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  if (!n->in[1]->data) return rule_qmatmul_act(g, ctx, n, d);
  const ir_value *y = n->out[0];
  const uint64_t cols = (uint64_t)y->dims[y->rank - 1];
  return set_qconv_tiles(g, n, 1, (uint64_t)ir_value_elements(y) / (cols ? cols : 1), ceil_div(cols, C0),
                         QCONV_TILE_M, QCONV_TILE_N, d);
}

/* VPROG: 256-element tiles of the outputs' physical elements, a few blocks
 * per core and never fewer than 4096 elements a block (the header). */
static status rule_vprog(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  uint64_t elems = phys_elems(n->out[0]);
  uint64_t bd = min_u64(ceil_div(elems, VPROG_TILE_ELEMS), 4 * (uint64_t)ctx->soc->ai_cores);
  bd = min_u64(min_u64(bd, ceil_div(elems, MIN_BLOCK_ELEMS)), MAX_BLOCKS);
  return set_attr(g, n, "block_dim", (int64_t)(bd ? bd : 1), d);
}

/* POOL: N*C1 planes, the work counted on x; POOL_ND (a pool on ND
 * tensors): y elements. */
static uint64_t units_pool_nd(const ir_node *n, uint64_t *elems) {
  uint64_t x = phys_elems(n->in[0]);
  if (x > *elems) *elems = x;
  return phys_elems(n->out[0]);
}

static uint64_t units_pool(const ir_node *n, uint64_t *elems) {
  if (n->in[0]->layout == LAYOUT_ND) return units_pool_nd(n, elems);
  *elems = phys_elems(n->in[0]);
  const ir_value *y = n->out[0]; /* N*C1 planes, N*Do*C1 in 3-D */
  return units_dwconv(n, elems) * (y->rank == 5 ? (uint64_t)y->dims[2] : 1);
}

/* RESIZE: y rows. */
static uint64_t units_resize(const ir_node *n, uint64_t *elems) {
  const ir_value *y = n->out[0];
  return y->rank > 0 && y->dims[y->rank - 1] > 0 ? *elems / (uint64_t)y->dims[y->rank - 1] : 1;
}

/* COPY_SLICE (one per Concat input, each split the same): the dims before the axis. */
static uint64_t units_copy_slice(const ir_node *n, uint64_t *elems) {
  const ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  uint64_t units = 1;
  (void)elems;
  if (axis < 0) axis += y->rank;
  for (int i = 0; i < axis; i++)
    units *= (uint64_t)y->dims[i];
  return units;
}

/* STRIDED_COPY, one per output (Split has several), each split into the
 * same blocks: the smallest output's elements. */
static uint64_t units_strided(const ir_node *n, uint64_t *elems) {
  uint64_t units = *elems;
  for (int k = 1; k < n->nout; k++)
    units = min_u64(units, phys_elems(n->out[k]));
  return units;
}

/* TOPK, CUMSUM: the lines along the axis, the work counted on x. */
static uint64_t units_lines(const ir_node *n, uint64_t *elems) {
  int64_t axis = ir_attr_int(n, "axis", 0);
  uint64_t units = 1;
  for (int i = 0; i < n->in[0]->rank; i++)
    if (i != axis) units *= (uint64_t)n->in[0]->dims[i];
  *elems = phys_elems(n->in[0]);
  return units;
}

/* REDUCE: y elements, the work counted on x. */
static uint64_t units_reduce(const ir_node *n, uint64_t *elems) {
  *elems = phys_elems(n->in[0]);
  return phys_elems(n->out[0]);
}

/* SOFTMAX: the rows before the axis. */
static uint64_t units_softmax(const ir_node *n, uint64_t *elems) {
  const ir_value *y = n->out[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  uint64_t units = 1;
  (void)elems;
  for (int i = 0; i < axis && i < y->rank; i++)
    units *= (uint64_t)y->dims[i];
  return units;
}

/* LAYERNORM: the rows, the dims before the axis. */
static uint64_t units_layernorm(const ir_node *n, uint64_t *elems) {
  const ir_value *x = n->in[0];
  int64_t axis = ir_attr_int(n, "axis", 0);
  uint64_t units = 1;
  (void)elems;
  for (int i = 0; i < axis && i < x->rank; i++)
    units *= (uint64_t)x->dims[i];
  return units;
}

/* AIPP: output rows, N*H. */
static uint64_t units_aipp(const ir_node *n, uint64_t *elems) {
  (void)elems;
  return (uint64_t)n->out[0]->dims[0] * (uint64_t)n->out[0]->dims[2];
}

/* QELTWISE, QLUT: runs of 16 physical elements of y. */
static uint64_t units_qeltwise(const ir_node *n, uint64_t *elems) {
  (void)n;
  return ceil_div(*elems, C0);
}

/* DYNQUANT: runs of 2^16 elements of x. Every block reads all of x for its
 * range (om_tasks_vector.h), so a smaller tensor is one block: a second one
 * would repeat that read to save less than it costs. */
static uint64_t units_dynquant(const ir_node *n, uint64_t *elems) {
  (void)n;
  return ceil_div(*elems, (uint64_t)1 << 16);
}

/* One block: the counted producers (NONZERO, NMS, UNIQUE), whose output
 * positions depend on every element before them, and TFIDF's small scans. */
static uint64_t units_one(const ir_node *n, uint64_t *elems) {
  (void)n, (void)elems;
  return 1;
}

/* y elements: GATHER, PAD, SCATTER, ONEHOT. */
static uint64_t units_elements(const ir_node *n, uint64_t *elems) {
  (void)n;
  return *elems;
}

/* TRANSDATA (and the Reshape family's copies): dst rows when the layout
 * changes (channels_last: N*H rows of an NHWC dst), elements when it stays;
 * WPACK (packed conv weights): padded output channel rows. */
static uint64_t units_transdata(const ir_node *n, uint64_t *elems) {
  const ir_value *y = n->out[0];
  if (convw_is_pack(n)) return convw_pack_units(n);
  if (ir_attr_int(n, "channels_last", 0)) /* NHWC dst: rows (n, h); NC1HWC0 dst: as below */
    return y->layout == LAYOUT_NC1HWC0
               ? (uint64_t)y->dims[0] * ceil_div((uint64_t)y->dims[1], C0) * (uint64_t)y->dims[2]
               : (uint64_t)y->dims[0] * (uint64_t)y->dims[1];
  if (n->in[0]->layout == y->layout) return *elems;
  uint64_t rows = 1; /* every dim but W, C as channel blocks on the 5HD side */
  for (int i = 0; i + 1 < y->rank; i++)
    rows *= i == 1 && y->layout != LAYOUT_ND ? ceil_div((uint64_t)y->dims[1], C0) : (uint64_t)y->dims[i];
  return rows;
}

static const block_rule block_rules[OM_TASK_KIND_COUNT] = {
    [OM_TASK_CONV2D] = rule_conv2d,         [OM_TASK_MATMUL] = rule_matmul,
    [OM_TASK_ATTENTION] = rule_attention,   [OM_TASK_VPROG] = rule_vprog,
    [OM_TASK_QCONV2D] = rule_qconv,         [OM_TASK_QMATMUL] = rule_qmatmul,
    [OM_TASK_RECURRENCE] = rule_recurrence,
};

static const units_rule unit_rules[OM_TASK_KIND_COUNT] = {
    [OM_TASK_TRANSDATA] = units_transdata,
    [OM_TASK_POOL] = units_pool,
    [OM_TASK_POOL_ND] = units_pool_nd,
    [OM_TASK_RESIZE] = units_resize,
    [OM_TASK_COPY_SLICE] = units_copy_slice,
    [OM_TASK_STRIDED_COPY] = units_strided,
    [OM_TASK_TOPK] = units_lines,
    [OM_TASK_CUMSUM] = units_lines,
    [OM_TASK_REDUCE] = units_reduce,
    [OM_TASK_SOFTMAX] = units_softmax,
    [OM_TASK_LAYERNORM] = units_layernorm,
    [OM_TASK_GATHER] = units_elements,
    [OM_TASK_PAD] = units_elements,
    [OM_TASK_SCATTER] = units_elements,
    [OM_TASK_ONEHOT] = units_elements,
    [OM_TASK_AIPP] = units_aipp,
    [OM_TASK_NONZERO] = units_one,
    [OM_TASK_NMS] = units_one,
    [OM_TASK_UNIQUE] = units_one,
    [OM_TASK_TFIDF] = units_one,
    [OM_TASK_QELTWISE] = units_qeltwise,
    [OM_TASK_QLUT] = units_qeltwise,
    [OM_TASK_DYNQUANT] = units_dynquant,
};

int pass_tiling_has_rule(om_task_kind kind) {
  return kind > 0 && kind < OM_TASK_KIND_COUNT && (block_rules[kind] || unit_rules[kind]);
}

static status tile_node(ir_graph *g, const pass_ctx *ctx, ir_node *n, diag *d) {
  om_task_kind kind = ir_ops[n->op].task;
  if (!pass_tiling_has_rule(kind))
    return ir_node_error(d, ST_ERR_INVALID, n, "no tiling rule for task kind %d (ops.def)", (int)kind);
  if (block_rules[kind]) return block_rules[kind](g, ctx, n, d);
  uint64_t elems = phys_elems(n->out[0]), units = unit_rules[kind](n, &elems);
  return set_attr(g, n, "block_dim", (int64_t)vector_blocks(ctx, units, elems), d);
}

status pass_tiling(ir_graph *g, pass_ctx *ctx, diag *d) {
  if (!ctx->soc) return diag_set(d, ST_ERR_INVALID, "tiling: no SoC description");
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i]->dead) continue;
    status st = tile_node(g, ctx, g->nodes[i], d);
    if (st != ST_OK) return st;
  }
  return ST_OK;
}
