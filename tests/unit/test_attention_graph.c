/* test_attention_graph.c - the property test of attention fusion: random
 * attention graphs compiled twice by the atc library, with the attention
 * pass (one ATTENTION task) and with AttentionFusionPass off (the MATMUL,
 * vector program and SOFTMAX tasks it replaces), run by libomrt on the
 * same inputs; the outputs must agree.
 *
 * ATTN_GRAPHS (default 2000) cases, ATTN_GRAPH_SEED the seed. Each draws:
 * batch 1..3 and heads 1..4; Sq and Skv 1..80 (mostly not multiples of
 * 16), or one case in six Sq 1..20 and Skv 200..700 (several key blocks);
 * D and Dv 16..128; force_fp16 or must_keep_origin_dtype; and either
 * the chain PyTorch exports (MatMul(q, k^T), the scale on q or on the
 * scores as a Mul or a Div, k transposed by the graph or given as k^T,
 * zero to two of: a key-padding mask [B,1,1,Skv] and a full mask
 * [B,1,Sq,Skv], both graph inputs of 0 and -inf, a constant causal mask,
 * a constant per-head position bias [H,Sq,Skv]; Softmax; MatMul with v) or
 * ONNX's Attention op (opset 23, which the frontend decomposes: scale,
 * attn_mask, is_causal, and its zeroing of rows whose every key is
 * masked), or one case in five torch.nn.MultiheadAttention's head split
 * and merge around the chain: q, k and v Sliced out of a computed [S, B,
 * 3E] in-projection (Neg of the input), Reshaped to [S, B*H, D] and
 * Transposed to heads (k straight to [B*H, D, S]), the result Transposed
 * back and Reshaped to [S, B, E]: the fused build must then read and write
 * them through operand views, with no STRIDED_COPY left when B = 1 (with
 * B > 1 the Slices stay copies: B and H interleave in the projection).
 * Rows with no visible key give NaN (or 0 under the ONNX op) in
 * both builds. In the MultiheadAttention cases a task hook also takes
 * the tensor named "ctx" (the attention's own result, before the merge)
 * as omrt_task_tensor_to_f32 gives it (a layer dump's values): the fused
 * ATTENTION writes it through its y view, and must still present it as
 * ctx in ctx's own order, as the unfused MatMul does. Tolerance: 2e-4 (f32) or 2e-2 (f16: the unfused graph
 * rounds its scores to f16) of the output's largest magnitude; NaN must
 * match NaN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "runtime/rt.h"
#include "support.h"

static uint32_t rng = 31337;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}
static int irand(int n) { return (int)(next() % (uint32_t)n); }
static float frand(void) { return (float)(next() & 0xffffff) / 8388608.0f - 1.0f; }

typedef struct gcase {
  int onnx_op, fp16;
  int64_t b, h, sq, skv, d, dv;
  int scale_kind;        /* torch chain: 0 Mul on q, 1 Div on the scores, 2 Mul on the scores */
  int k_given_t;         /* torch chain: k is a [B,H,D,Skv] input */
  int pad, full, causal; /* masks: key padding input, full input, constant causal */
  int pos;               /* constant position bias [H,Sq,Skv] */
  int mha;               /* q, k, v split from a computed in-projection, y merged (Sq = Skv, D = Dv) */
  float scale;
} gcase;

static void draw(gcase *c) {
  memset(c, 0, sizeof *c);
  c->onnx_op = irand(4) == 0, c->fp16 = irand(2);
  c->b = 1 + irand(3), c->h = 1 + irand(4);
  c->sq = 1 + irand(irand(3) ? 40 : 80), c->skv = 1 + irand(irand(3) ? 40 : 80);
  if (irand(6) == 0) /* more keys than one block holds: the online softmax's rescaling */
    c->sq = 1 + irand(20), c->skv = 200 + irand(500);
  c->d = 16 + irand(113), c->dv = 16 + irand(113);
  c->scale_kind = irand(3), c->k_given_t = !c->onnx_op && irand(3) == 0;
  c->pad = irand(3) == 0, c->full = irand(4) == 0, c->causal = irand(3) == 0;
  c->pos = !c->onnx_op && irand(4) == 0;
  if (c->pad + c->full + c->pos > 2) c->pos = 0;
  if (c->onnx_op && c->pad && c->full) c->pad = 0; /* one attn_mask */
  c->scale = (float)(1 / sqrt((double)c->d)) * (irand(3) ? 1.0f : 1.7f);
  if (!c->onnx_op && irand(5) == 0) {
    c->mha = 1, c->skv = c->sq, c->dv = c->d, c->b = 1 + (irand(3) == 0);
    c->scale_kind = 0, c->k_given_t = 0, c->pad = c->full = c->pos = 0;
  }
}

typedef struct inputs {
  int n;
  const char *names[6];
  float *data[6];
  size_t count[6];
} inputs;

static float *values(size_t n, float scale) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = frand() * scale;
  return v;
}

static void add_input(mb *m, inputs *in, const char *name, int rank, const int64_t *dims, float *data) {
  mb_input(m, name, 1, rank, dims, NULL);
  size_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  in->names[in->n] = name, in->data[in->n] = data, in->count[in->n] = n;
  in->n++;
}

/* A mask of 0 and -inf: each row (of `row` keys) sees a random prefix,
 * sometimes none. */
static float *mask_values(size_t n, int64_t row) {
  float *v = calloc(n, sizeof *v);
  for (size_t r = 0; r < n / (size_t)row; r++) {
    int64_t len = irand(6) == 0 ? 0 : 1 + irand((int)row);
    for (int64_t j = len; j < row; j++)
      v[r * (size_t)row + (size_t)j] = -INFINITY;
  }
  return v;
}

/* torch.nn.MultiheadAttention's head split of Neg(x) [S, B, 3E] into q,
 * k^T and v, and its merge of y into y_merged [S, B, E], around the chain. */
static void build_mha(const gcase *c, mb *m, inputs *in) {
  const int64_t e = c->h * c->d, xd[3] = {c->sq, c->b, 3 * e}, hd[3] = {c->sq, c->b * c->h, c->d};
  const int64_t md[3] = {c->sq, c->b, e}, three[1] = {3}, one[1] = {1};
  add_input(m, in, "x", 3, xd, values((size_t)(c->sq * c->b * 3 * e), 2.0f));
  mb_node(m, "Neg", "in_proj", "x", "proj");
  mb_init_raw(m, "heads", 7, 1, three, hd, sizeof hd);
  mb_init_raw(m, "merged", 7, 1, three, md, sizeof md);
  static const char *const part[3] = {"q", "k", "v"};
  for (int t = 0; t < 3; t++) {
    char name[32], ins[160], a[16], b[16];
    int64_t lo = t * e, hi = (t + 1) * e, axis = 2;
    snprintf(a, sizeof a, "%s_lo", part[t]), snprintf(b, sizeof b, "%s_hi", part[t]);
    mb_init_raw(m, a, 7, 1, one, &lo, sizeof lo);
    mb_init_raw(m, b, 7, 1, one, &hi, sizeof hi);
    snprintf(name, sizeof name, "%s_axis", part[t]);
    mb_init_raw(m, name, 7, 1, one, &axis, sizeof axis);
    snprintf(ins, sizeof ins, "proj,%s,%s,%s", a, b, name);
    snprintf(name, sizeof name, "%s0", part[t]);
    mb_node(m, "Slice", name, ins, name);
    snprintf(ins, sizeof ins, "%s0,heads", part[t]);
    snprintf(name, sizeof name, "%s1", part[t]);
    mb_node(m, "Reshape", name, ins, name);
    snprintf(ins, sizeof ins, "%s1", part[t]);
    snprintf(name, sizeof name, "%s_heads", part[t]);
    Onnx__NodeProto *tr = mb_node(m, "Transpose", name, ins, part[t]); /* k: k^T [B*H, D, S] */
    int64_t perm[3] = {1, t == 1 ? 2 : 0, t == 1 ? 0 : 2};
    attr_ints(m, tr, "perm", 3, perm);
  }
}

/* The model for case c into m; its graph inputs and their values into in. */
static void build(const gcase *c, mb *m, inputs *in) {
  mb_init(m, c->onnx_op ? 23 : 17);
  memset(in, 0, sizeof *in);
  if (c->mha) build_mha(c, m, in);
  int64_t qd[4] = {c->b, c->h, c->sq, c->d}, kd[4] = {c->b, c->h, c->skv, c->d};
  int64_t ktd[4] = {c->b, c->h, c->d, c->skv}, vd[4] = {c->b, c->h, c->skv, c->dv};
  int64_t padd[4] = {c->b, 1, 1, c->skv}, fulld[4] = {c->b, 1, c->sq, c->skv};
  if (!c->mha) {
    add_input(m, in, "q", 4, qd, values((size_t)(c->b * c->h * c->sq * c->d), 2.0f));
    add_input(m, in, "k", 4, c->k_given_t ? ktd : kd, values((size_t)(c->b * c->h * c->skv * c->d), 2.0f));
    add_input(m, in, "v", 4, vd, values((size_t)(c->b * c->h * c->skv * c->dv), 1.0f));
  }
  if (c->onnx_op) {
    int mask = c->pad || c->full;
    if (mask)
      add_input(m, in, "mask", 4, c->pad ? padd : fulld,
                mask_values((size_t)(c->b * (c->pad ? 1 : c->sq) * c->skv), c->skv));
    Onnx__NodeProto *n = mb_node(m, "Attention", "attn", mask ? "q,k,v,mask" : "q,k,v", "y");
    attr_float(m, n, "scale", c->scale);
    if (c->causal) attr_int(m, n, "is_causal", 1);
    mb_output(m, "y");
    return;
  }
  const char *s = "s";
  float sc = c->scale_kind == 1 ? 1 / c->scale : c->scale;
  int64_t none[1] = {0};
  mb_init_raw(m, "c", 1, 0, none, &sc, sizeof sc);
  const char *qin = "q";
  if (c->scale_kind == 0) mb_node(m, "Mul", "q_scale", "q,c", "qs"), qin = "qs";
  char ins[64];
  if (c->k_given_t || c->mha) {
    snprintf(ins, sizeof ins, "%s,k", qin);
  } else {
    Onnx__NodeProto *t = mb_node(m, "Transpose", "k_t", "k", "kt");
    int64_t perm[4] = {0, 1, 3, 2};
    attr_ints(m, t, "perm", 4, perm);
    snprintf(ins, sizeof ins, "%s,kt", qin);
  }
  mb_node(m, "MatMul", "scores", ins, "s0");
  s = "s0";
  if (c->scale_kind) mb_node(m, c->scale_kind == 1 ? "Div" : "Mul", "scale", "s0,c", "s1"), s = "s1";
  static const char *const masked[] = {"s2", "s3", "s4", "s5"};
  int k = 0;
  if (c->pad) {
    add_input(m, in, "pad", 4, padd, mask_values((size_t)(c->b * c->skv), c->skv));
    snprintf(ins, sizeof ins, "%s,pad", s);
    mb_node(m, "Add", "pad_mask", ins, masked[k]), s = masked[k++];
  }
  if (c->full) {
    add_input(m, in, "full", 4, fulld, mask_values((size_t)(c->b * c->sq * c->skv), c->skv));
    snprintf(ins, sizeof ins, "%s,full", s);
    mb_node(m, "Add", "full_mask", ins, masked[k]), s = masked[k++];
  }
  if (c->causal) {
    int64_t cd[2] = {c->sq, c->skv};
    float *cm = malloc((size_t)(c->sq * c->skv) * sizeof *cm);
    int64_t off = irand((int)c->skv + 1) - 1;
    for (int64_t i = 0; i < c->sq; i++)
      for (int64_t j = 0; j < c->skv; j++)
        cm[i * c->skv + j] = j <= i + off ? 0.0f : -INFINITY;
    mb_init_raw(m, "causal", 1, 2, cd, cm, (size_t)(c->sq * c->skv) * sizeof *cm);
    free(cm);
    snprintf(ins, sizeof ins, "%s,causal", s);
    mb_node(m, "Add", "causal_mask", ins, masked[k]), s = masked[k++];
  }
  if (c->pos) {
    int64_t pd[3] = {c->h, c->sq, c->skv};
    float *pb = values((size_t)(c->h * c->sq * c->skv), 1.0f);
    mb_init_raw(m, "pos", 1, 3, pd, pb, (size_t)(c->h * c->sq * c->skv) * sizeof *pb);
    free(pb);
    snprintf(ins, sizeof ins, "pos,%s", s);
    mb_node(m, "Add", "pos_bias", ins, masked[k]), s = masked[k++];
  }
  Onnx__NodeProto *sm = mb_node(m, "Softmax", "probs", s, "p");
  attr_int(m, sm, "axis", -1);
  if (!c->mha) {
    mb_node(m, "MatMul", "context", "p,v", "y");
    mb_output(m, "y");
    return;
  }
  mb_node(m, "MatMul", "context", "p,v", "ctx");
  Onnx__NodeProto *t = mb_node(m, "Transpose", "merge_heads", "ctx", "ctx_t");
  int64_t perm[3] = {1, 0, 2};
  attr_ints(m, t, "perm", 3, perm);
  mb_node(m, "Reshape", "merge", "ctx_t,merged", "ctx_m");
  mb_node(m, "Neg", "out_proj", "ctx_m", "y");
  mb_output(m, "y");
}

/* A task hook keeping the task output that holds the ONNX tensor "ctx",
 * as float32 in its logical order. */
typedef struct ctx_dump {
  float *v; /* malloc'd */
  size_t n;
} ctx_dump;

static int take_ctx(void *user, const omrt_task_info *info) {
  ctx_dump *cd = user;
  for (int k = 0; k < info->noutputs; k++) {
    const omrt_task_tensor *o = &info->outputs[k];
    if (!o->onnx_name || strcmp(o->onnx_name, "ctx") != 0 || cd->v) continue;
    size_t n = 1;
    for (int r = 0; r < o->rank; r++)
      n *= (size_t)o->dims[r];
    cd->v = malloc(n * sizeof *cd->v), cd->n = n;
    if (omrt_task_tensor_to_f32(o, cd->v, n) != OMRT_OK) free(cd->v), cd->v = NULL;
  }
  return 0;
}

/* Compiles and runs; the output (malloc'd), the ATTENTION and STRIDED_COPY
 * task counts, "ctx" as the hook saw it (*ctx_out). */
static float *compile_run(const uint8_t *onnx, size_t len, const gcase *c, unsigned off, const inputs *in,
                          int *attn_tasks, int *copies, size_t *n_out, ctx_dump *ctx_out) {
  atc_options opt = {.model_path = "attention.onnx",
                     .model_data = onnx,
                     .model_size = len,
                     .soc_version = "Ascend310",
                     .precision = c->fp16 ? OM_PRECISION_FORCE_FP16 : OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE,
                     .fusion_off = off};
  atc_result res;
  diag d;
  diag_init(&d);
  if (atc_compile(&opt, &res, &d) != ST_OK) {
    test_note("  compile: %s", d.msg);
    return NULL;
  }
  size_t bytes = (size_t)res.om_bytes;
  void *om = aligned_alloc(64, (bytes + 63) / 64 * 64);
  memcpy(om, res.om_data, bytes);
  free(res.om_data);
  omrt_load_options lo = {.threads = 1};
  omrt_model *model = NULL;
  omrt_context *ctx = NULL;
  float *out = NULL;
  if (omrt_model_load_memory(om, bytes, &lo, &model) == OMRT_OK && omrt_context_new(model, &ctx) == OMRT_OK) {
    *attn_tasks = mb_count_tasks(model, OM_TASK_ATTENTION);
    *copies = mb_count_tasks(model, OM_TASK_STRIDED_COPY);
    omrt_tensor_desc dout;
    omrt_model_output(model, 0, &dout);
    *n_out = dout.bytes / sizeof(float);
    out = malloc(dout.bytes);
    const void *ins[6];
    for (int i = 0; i < in->n; i++)
      ins[i] = in->data[i];
    void *outs[1] = {out};
    omrt_context_set_task_hook(ctx, take_ctx, ctx_out);
    if (omrt_execute(ctx, ins, outs) != OMRT_OK) {
      test_note("  execute: %s", omrt_last_error());
      free(out), out = NULL;
    }
  } else {
    test_note("  load: %s", omrt_last_error());
  }
  omrt_context_free(ctx);
  omrt_model_free(model);
  free(om);
  return out;
}

static void run_case(int index, unsigned attention_bit) {
  gcase c;
  draw(&c);
  mb m;
  inputs in;
  build(&c, &m, &in);
  size_t len;
  uint8_t *onnx = mb_pack(&m, &len);
  int fused_tasks = -1, plain_tasks = -1, copies = -1, plain_copies = -1;
  size_t nf = 0, np = 0;
  ctx_dump fctx = {0}, pctx = {0};
  float *fused = compile_run(onnx, len, &c, 0, &in, &fused_tasks, &copies, &nf, &fctx);
  float *plain = compile_run(onnx, len, &c, attention_bit, &in, &plain_tasks, &plain_copies, &np, &pctx);
  int ok =
      fused && plain && nf == np && fused_tasks == 1 && plain_tasks == 0 && (!c.mha || c.b > 1 || !copies);
  size_t at = 0;
  if (ok) {
    double mx = 0;
    for (size_t i = 0; i < np; i++)
      if (isfinite(plain[i]) && fabs(plain[i]) > mx) mx = fabs(plain[i]);
    double tol = (c.fp16 ? 2e-2 : 2e-4) * (mx > 1e-3 ? mx : 1e-3);
    for (size_t i = 0; i < np && ok; i++)
      if (!(isnan(plain[i]) ? isnan(fused[i]) : fabs((double)fused[i] - plain[i]) <= tol)) ok = 0, at = i;
  }
  int ctx_ok = !c.mha || (fctx.v && pctx.v && fctx.n == pctx.n);
  if (ok && ctx_ok && c.mha) {
    double mx = 0;
    for (size_t i = 0; i < pctx.n; i++)
      if (isfinite(pctx.v[i]) && fabs(pctx.v[i]) > mx) mx = fabs(pctx.v[i]);
    double tol = (c.fp16 ? 2e-2 : 2e-4) * (mx > 1e-3 ? mx : 1e-3);
    for (size_t i = 0; i < pctx.n && ctx_ok; i++)
      if (!(isnan(pctx.v[i]) ? isnan(fctx.v[i]) : fabs((double)fctx.v[i] - pctx.v[i]) <= tol))
        ctx_ok = 0, at = i;
  }
  test_check(ok, __FILE__, __LINE__, "fused and unfused attention agree");
  test_check(ctx_ok, __FILE__, __LINE__, "the attention's own result dumps as ctx, in ctx's order");
  if (!ctx_ok)
    test_note("  case %d: ctx fused %s (%zu), unfused %s (%zu), first difference at %zu", index,
              fctx.v ? "taken" : "missing", fctx.n, pctx.v ? "taken" : "missing", pctx.n, at);
  free(fctx.v), free(pctx.v);
  if (!ok)
    test_note("  case %d: %s b %lld h %lld Sq %lld Skv %lld D %lld Dv %lld %s scale %d kT %d pad %d full %d "
              "causal %d pos %d mha %d: tasks %d/%d, copies %d, y[%zu] fused %g unfused %g",
              index, c.onnx_op ? "Attention op" : "chain", (long long)c.b, (long long)c.h, (long long)c.sq,
              (long long)c.skv, (long long)c.d, (long long)c.dv, c.fp16 ? "fp16" : "fp32", c.scale_kind,
              c.k_given_t, c.pad, c.full, c.causal, c.pos, c.mha, fused_tasks, plain_tasks, copies, at,
              fused && at < nf ? (double)fused[at] : 0.0, plain && at < np ? (double)plain[at] : 0.0);
  free(fused), free(plain), free(onnx);
  for (int i = 0; i < in.n; i++)
    free(in.data[i]);
  mb_free(&m);
}

int main(void) {
  const char *env = getenv("ATTN_GRAPHS"), *seed = getenv("ATTN_GRAPH_SEED");
  int cases = env ? atoi(env) : 2000;
  if (seed) rng = (uint32_t)strtoul(seed, NULL, 10);
  unsigned bit = atc_fusion_rule_bit("AttentionFusionPass");
  CHECK(bit != 0);
  test_note("%d random attention graphs, seed %u", cases, rng);
  for (int i = 0; i < cases; i++)
    run_case(i, bit);
  return test_summary("attention_graph");
}
