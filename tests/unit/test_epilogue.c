/* test_epilogue.c - Conv and MatMul epilogue programs (passes/epilogue.c,
 * runtime/epilogue.c) end to end: small graphs whose Conv or MatMul is
 * followed by elementwise work go through every pass twice, fused (the
 * default) and op by op (no_vector_fusion: the chain stays a separate VPROG
 * task), and
 * run through libomrt with the same executor: the interpreter, the JIT
 * (OMRT_JIT=1) or the portable kernels (OMRT_PORTABLE=1); ctest runs all
 * three. The epilogue runs exactly the program the VPROG task ran, on the
 * conv's result stored in the same dtype, so the two builds must agree bit
 * for bit; both must also agree with the reference evaluator (cosine >=
 * 0.9999 under force_fp16, 0.999999 under must_keep_origin_dtype: the
 * convolutions sum in f32, Winograd's transforms included).
 * Each case states how many Convs or MatMuls must carry an epilogue, so the
 * fusion decision is checked too: the direct, Winograd, grouped and
 * depthwise kernels, C not a multiple of 16 (padding lanes), extra program
 * inputs (a constant and a run-time [N,C,1,1] value produced after the
 * Conv), and a Conv whose output has two readers (not absorbed). MatMuls:
 * GELU's erf chain with 1/4 for 1/2 (no GELU: a program) after a bias Add,
 * over tiles of a folded batch, and the real GELU there, which becomes the
 * MatMul's act (no program; passes/fuse.c); Tanh and HardSwish with N not a
 * multiple of 16 (the last n block written back from L0C) and several
 * tiles per row; a run-time gate as an extra input; a Gemm (transB) with a
 * residual and the program after it; two readers (not absorbed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "ir/eval.h"
#include "omrt.h"
#include "passes/pass.h"
#include "support.h"
#include "vprog_pkg.h"

typedef struct ecase {
  const char *name;
  const char *ir;
  int winograd;  /* pass_ctx.winograd */
  int epilogues; /* Convs with an epilogue after the fused build */
} ecase;

#define HDR "graph t opset 17\n"
/* The chain's result feeds a 1x1 max pool (an exact copy), as in a network:
 * a chain writing the f32 graph output itself has another dtype than the
 * f16 Conv under force_fp16 and stays a VPROG task. */
#define SINK "%o : ?[?] = MaxPool(%y) {kernel_shape=[1,1]}  # sink\noutput %o\n"
#define SILU "%s : ?[?] = Sigmoid(%c)  # sig\n%y : ?[?] = Mul(%c, %s)  # silu\n" SINK
/* The same for MatMuls (ND): an exact copy through a Transpose. */
#define MSINK "%o : ?[?] = Transpose(%y)  # sink\noutput %o\n"
#define MSILU "%s : ?[?] = Sigmoid(%c)  # sig\n%y : ?[?] = Mul(%c, %s)  # silu\n" MSINK

static const ecase cases[] = {
    {"direct_silu_c20",
     HDR "input %x : f32[1,20,9,9]\nconst %w : f32[20,20,3,3] = rand(1)\nconst %b : f32[20] = rand(2)\n"
         "%c : ?[?] = Conv(%x, %w, %b) {pads=[1,1,1,1], strides=[2,2]}  # conv\n" SILU,
     0, 1},
    {"winograd_silu",
     HDR "input %x : f32[1,32,20,20]\nconst %w : f32[40,32,3,3] = rand(3)\n"
         "%c : ?[?] = Conv(%x, %w) {pads=[1,1,1,1]}  # conv\n" SILU,
     1, 1},
    {"winograd_dilated_silu", /* its tiles' pixels lie 2 apart (each phase of the output its own tiles) */
     HDR "input %x : f32[1,32,24,24]\nconst %w : f32[40,32,3,3] = rand(3)\n"
         "%c : ?[?] = Conv(%x, %w) {pads=[2,2,2,2], dilations=[2,2]}  # conv\n" SILU,
     1, 1},
    {"grouped_silu",
     HDR "input %x : f32[1,32,10,10]\nconst %w : f32[48,8,3,3] = rand(4)\n"
         "%c : ?[?] = Conv(%x, %w) {pads=[1,1,1,1], group=4}  # conv\n" SILU,
     0, 1},
    {"depthwise_hardswish",
     HDR "input %x : f32[2,24,11,11]\nconst %w : f32[24,1,3,3] = rand(5)\n"
         "%c : ?[?] = Conv(%x, %w) {pads=[1,1,1,1], group=24}  # dw\n"
         "%y : ?[?] = HardSwish(%c)  # hswish\n" SINK,
     0, 1},
    {"extra_inputs",
     HDR "input %x : f32[1,20,8,8]\ninput %g : f32[1,20,1,1]\nconst %w : f32[20,20,1,1] = rand(6)\n"
         "const %k : f32[20,1,1] = rand(7)\n"
         "%c : ?[?] = Conv(%x, %w)  # conv\n%a : ?[?] = Mul(%c, %k)  # scale\n"
         "%s : ?[?] = Sigmoid(%g)  # gate\n%y : ?[?] = Mul(%a, %s)  # excite\n" SINK,
     0, 1},
    {"two_readers",
     HDR "input %x : f32[1,16,6,6]\nconst %w : f32[16,16,1,1] = rand(8)\n"
         "%c : ?[?] = Conv(%x, %w)  # conv\n%p : ?[?] = GlobalAveragePool(%c)  # gap\noutput %p\n" SILU,
     0, 0},
    {"matmul_erf_quarter_fold",
     HDR "input %x : f32[40,1,64]\nconst %w : f32[64,96] = rand(9)\nconst %b : f32[96] = rand(10)\n"
         "const %r2 : f32[] = [1.41421354]\nconst %one : f32[] = [1]\nconst %half : f32[] = [0.25]\n"
         "%m : ?[?] = MatMul(%x, %w)  # mm\n%c : ?[?] = Add(%b, %m)  # bias\n"
         "%d : ?[?] = Div(%c, %r2)  # div\n%e : ?[?] = Erf(%d)  # erf\n%p : ?[?] = Add(%e, %one)  # add1\n"
         "%q : ?[?] = Mul(%c, %p)  # mul\n%y : ?[?] = Mul(%q, %half)  # gelu\n" MSINK,
     0, 1},
    {"matmul_gelu_act",
     HDR "input %x : f32[40,1,64]\nconst %w : f32[64,96] = rand(9)\nconst %b : f32[96] = rand(10)\n"
         "const %r2 : f32[] = [1.41421354]\nconst %one : f32[] = [1]\nconst %half : f32[] = [0.5]\n"
         "%m : ?[?] = MatMul(%x, %w)  # mm\n%c : ?[?] = Add(%b, %m)  # bias\n"
         "%d : ?[?] = Div(%c, %r2)  # div\n%e : ?[?] = Erf(%d)  # erf\n%p : ?[?] = Add(%e, %one)  # add1\n"
         "%q : ?[?] = Mul(%c, %p)  # mul\n%y : ?[?] = Mul(%q, %half)  # gelu\n" MSINK,
     0, 0},
    {"matmul_tanh_n50",
     HDR "input %x : f32[2,37,33]\nconst %w : f32[33,50] = rand(11)\n"
         "%c : ?[?] = MatMul(%x, %w)  # mm\n%y : ?[?] = Tanh(%c)  # tanh\n" MSINK,
     0, 1},
    {"matmul_hardswish_wide",
     HDR
     "input %x : f32[3,70]\nconst %w : f32[70,300] = rand(12)\n"
     "%c : ?[?] = MatMul(%x, %w)  # mm\n%s : ?[?] = HardSigmoid(%c) {alpha=0.16666667, beta=0.5}  # hsig\n"
     "%y : ?[?] = Mul(%c, %s)  # hswish\n" MSINK,
     0, 1},
    {"matmul_gate_input",
     HDR "input %x : f32[20,48]\ninput %g : f32[40]\nconst %w : f32[48,40] = rand(13)\n"
         "%c : ?[?] = MatMul(%x, %w)  # mm\n%s : ?[?] = Sigmoid(%g)  # gate\n"
         "%y : ?[?] = Mul(%c, %s)  # gated\n" MSINK,
     0, 1},
    {"gemm_residual_then_program",
     HDR "input %x : f32[24,32]\ninput %r : f32[24,20]\nconst %w : f32[20,32] = rand(14)\n"
         "const %b : f32[20] = rand(15)\n"
         "%g : ?[?] = Gemm(%x, %w, %b) {transB=1}  # gemm\n%a : ?[?] = Add(%g, %r)  # residual\n"
         "%t : ?[?] = Tanh(%a)  # tanh\n%y : ?[?] = Mul(%t, %a)  # mul\n" MSINK,
     0, 1},
    {"matmul_two_readers",
     HDR "input %x : f32[8,16]\nconst %w : f32[16,24] = rand(16)\n"
         "%c : ?[?] = MatMul(%x, %w)  # mm\n%n : ?[?] = Neg(%c)  # neg\n"
         "%m : ?[?] = Transpose(%n) {perm=[1,0]}  # msink2\noutput %m\n" MSILU,
     0, 0},
};

static const soc_info test_soc = {.name = "Ascend310",
                                  .ai_cores = 2,
                                  .cube_m = 16,
                                  .cube_n = 16,
                                  .cube_k = 16,
                                  .l1_bytes = 1 << 20,
                                  .l0a_bytes = 65536,
                                  .l0b_bytes = 65536,
                                  .l0c_bytes = 262144,
                                  .ub_bytes = 262144,
                                  .vector_bytes = 256,
                                  .clock_mhz = 1000};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) * 0x1p-53;
}

typedef struct built {
  void *om;
  size_t size;
  int epilogues, wino, vprogs;
} built;

/* Runs every pass on case c's graph; the om into *b. */
static int build(const ecase *c, om_precision p, int fused, built *b, diag *d) {
  ir_graph *g = NULL;
  memset(b, 0, sizeof *b);
  if (ir_parse(c->ir, c->name, &g, d) != ST_OK) return 0;
  pass_ctx ctx = {.soc = &test_soc,
                  .precision = p,
                  .winograd = c->winograd,
                  .fusion_off =
                      fused ? 0 : FUSION_VECTOR_PROGRAM | FUSION_CONV_EPILOGUE | FUSION_MATMUL_EPILOGUE,
                  .model_name = c->name,
                  .cmdline = "test"};
  int ok = 1;
  for (int i = 0; ok && i < pass_pipeline_count; i++)
    if (pass_pipeline[i].run(g, &ctx, d) != ST_OK || ir_verify(g, d) != ST_OK) {
      diag_prefix(d, "%s", pass_pipeline[i].name);
      ok = 0;
    }
  for (int i = 0; ok && i < g->nnodes; i++) {
    const ir_node *n = g->nodes[i];
    b->epilogues += (n->op == IR_OP_CONV || n->op == IR_OP_MATMUL) && ir_attr_find(n, "epi_prog") != NULL;
    b->wino += n->op == IR_OP_CONV && ir_attr_int(n, "algorithm", 0) != OM_CONV_DIRECT;
    b->vprogs += n->op == IR_OP_VECPROG;
  }
  if (ok && om_writer_to_memory(ctx.writer, &b->om, &b->size, d) != ST_OK) ok = 0;
  om_writer_free(ctx.writer);
  ir_graph_free(g);
  return ok;
}

/* Loads om with the tests' vprog compiler and runs it once. */
static int run(const built *b, const void *const *in, void **out, int nout, arena *a) {
  omrt_load_options lo = {.threads = 2, .vprog_compiler = test_vprog_compiler()};
  omrt_model *m = NULL;
  omrt_context *rt = NULL;
  int ok = omrt_model_load_memory(b->om, b->size, &lo, &m) == OMRT_OK && omrt_context_new(m, &rt) == OMRT_OK;
  for (int i = 0; ok && i < nout; i++) {
    omrt_tensor_desc od;
    omrt_model_output(m, i, &od);
    out[i] = arena_alloc(a, od.bytes + 1);
    memset(out[i], 0xA5, od.bytes); /* so stale bytes cannot pass */
  }
  if (ok) ok = omrt_execute(rt, in, out) == OMRT_OK;
  if (!ok) test_note("run: %s", omrt_last_error());
  omrt_context_free(rt);
  omrt_model_free(m);
  return ok;
}

static void run_case(const ecase *c, om_precision p) {
  diag d;
  diag_init(&d);
  arena a;
  arena_init(&a, 0);
  ir_graph *ref = NULL;
  pass_ctx rctx = {.soc = &test_soc, .precision = p};
  built f = {0}, u = {0};
  int ok = ir_parse(c->ir, c->name, &ref, &d) == ST_OK && pass_shape_infer(ref, &rctx, &d) == ST_OK &&
           build(c, p, 1, &f, &d) && build(c, p, 0, &u, &d);
  if (!ok) test_note("%s (precision %d): %s", c->name, (int)p, d.msg);
  const void *in[8];
  void *want[8], *got_f[8], *got_u[8];
  for (int i = 0; ok && i < ref->ninputs; i++) {
    const ir_value *v = ref->inputs[i];
    float *buf = arena_array(&a, (size_t)ir_value_elements(v), sizeof *buf);
    for (int64_t k = 0; k < ir_value_elements(v); k++)
      buf[k] = (float)(uniform() * 4 - 2);
    in[i] = buf;
  }
  if (ok && ir_eval_graph(ref, in, want, &a, &d) != ST_OK) {
    test_note("%s: reference: %s", c->name, d.msg);
    ok = 0;
  }
  if (ok && (f.epilogues != c->epilogues || u.epilogues != 0 || (c->winograd && !f.wino))) {
    test_note("%s (precision %d): %d epilogues fused (want %d), %d op by op (want 0), %d Winograd convs",
              c->name, (int)p, f.epilogues, c->epilogues, u.epilogues, f.wino);
    ok = 0;
  }
  if (ok && c->epilogues && f.vprogs >= u.vprogs) {
    test_note("%s: the fused build has %d VPROG nodes, the op-by-op one %d", c->name, f.vprogs, u.vprogs);
    ok = 0;
  }
  ok = ok && run(&f, in, got_f, ref->noutputs, &a) && run(&u, in, got_u, ref->noutputs, &a);
  for (int i = 0; ok && i < ref->noutputs; i++) {
    const ir_value *v = ref->outputs[i];
    int64_t n = ir_value_elements(v);
    double dot = 0, n1 = 0, n2 = 0;
    for (int64_t k = 0; ok && k < n; k++) {
      float x = ((const float *)got_f[i])[k], y = ((const float *)got_u[i])[k];
      if (memcmp(&x, &y, sizeof x)) {
        test_note("%s (precision %d) '%s'[%lld]: fused %.9g, op by op %.9g", c->name, (int)p, v->name,
                  (long long)k, x, y);
        ok = 0;
      }
      double r = elem_get(want[i], v->dtype, k);
      dot += x * r, n1 += (double)x * x, n2 += r * r;
    }
    double cosine = dot / (sqrt(n1) * sqrt(n2) + 1e-300);
    if (ok && cosine < (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE ? 0.999999 : 0.9999)) {
      test_note("%s (precision %d) '%s': cosine %.9f vs the reference", c->name, (int)p, v->name, cosine);
      ok = 0;
    }
  }
  CHECK(ok);
  if (!ok) test_note("  failed: %s, precision %d", c->name, (int)p);
  free(f.om);
  free(u.om);
  ir_graph_free(ref);
  arena_free(&a);
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_case(&cases[i], OM_PRECISION_FORCE_FP16);
    run_case(&cases[i], OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
  }
  return test_summary("test_epilogue");
}
