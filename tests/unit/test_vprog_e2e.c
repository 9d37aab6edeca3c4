/* test_vprog_e2e.c - vector programs end to end: small graphs, one per op
 * family, go through every pass of passes/pipeline.c (vectorize turns them
 * into VPROG tasks), into an om in memory, through libomrt's program
 * interpreter, and are compared with the reference evaluator (ir/eval.h) run
 * on the graph before the passes, on random inputs:
 *
 *   must_keep_origin_dtype  integers and bools exact; floats within
 *                           1e-5 * |ref| + 1e-6 (the programs compute in f32
 *                           per instruction, the reference in double)
 *   force_fp16              integers and bools exact (programs with only
 *                           integer/bool outputs do not lower); floats by
 *                           cosine similarity >= 0.999 per output
 *
 * Each case gives the range its float inputs are drawn from (a domain where
 * the op is defined and well conditioned, e.g. Acosh on [1.1, 3)) and its
 * integer inputs from (shift counts in [0, 7]). NaN/inf positions must agree.
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

typedef struct vcase {
  const char *name;
  const char *ir;
  double lo, hi; /* float inputs: uniform in [lo, hi); integers: uniform in [lo, hi] */
} vcase;

#define HDR "graph t opset 20\n"
#define UNARY(op, attrs, lo, hi)                                                                             \
  { op, HDR "input %x : f32[2,3,17]\n%y : ?[?] = " op "(%x) " attrs "  # n\noutput %y\n", lo, hi }

static const vcase cases[] = {
    UNARY("Abs", "", -4, 4),
    UNARY("Neg", "", -4, 4),
    UNARY("Exp", "", -4, 4),
    UNARY("Log", "", 0.05, 8),
    UNARY("Sqrt", "", 0, 8),
    UNARY("Reciprocal", "", 0.2, 5),
    UNARY("Floor", "", -4, 4),
    UNARY("Ceil", "", -4, 4),
    UNARY("Round", "", -4, 4),
    UNARY("Sign", "", -4, 4),
    UNARY("Sin", "", -3, 3),
    UNARY("Cos", "", -3, 3),
    UNARY("Tan", "", -1, 1),
    UNARY("Asin", "", -0.9, 0.9),
    UNARY("Acos", "", -0.9, 0.9),
    UNARY("Atan", "", -4, 4),
    UNARY("Sinh", "", -3, 3),
    UNARY("Cosh", "", -3, 3),
    UNARY("Asinh", "", -4, 4),
    UNARY("Acosh", "", 1.1, 3),
    UNARY("Atanh", "", -0.9, 0.9),
    UNARY("Erf", "", -2, 2),
    UNARY("Tanh", "", -3, 3),
    UNARY("Sigmoid", "", -6, 6),
    UNARY("Relu", "", -2, 2),
    UNARY("Clip", "{min=-0.5, max=0.75}", -2, 2),
    UNARY("Clip", "{max=0.75}", -2, 2),
    UNARY("HardSigmoid", "{alpha=0.2, beta=0.5}", -4, 4),
    UNARY("HardSwish", "", -4, 4),
    UNARY("LeakyRelu", "{alpha=0.1}", -2, 2),
    UNARY("Elu", "{alpha=0.7}", -2, 2),
    UNARY("Selu", "{alpha=1.67326319, gamma=1.05070102}", -2, 2),
    UNARY("Celu", "{alpha=1.5}", -2, 2),
    UNARY("ThresholdedRelu", "{alpha=0.3}", -2, 2),
    UNARY("Softplus", "", -5, 5),
    UNARY("Softsign", "", -4, 4),
    UNARY("Mish", "", -4, 4),
    UNARY("Gelu", "{approximate=\"none\"}", -3, 3),
    UNARY("Gelu", "{approximate=\"tanh\"}", -3, 3),
    UNARY("Identity", "", -2, 2),
    UNARY("IsNaN", "", -2, 2),
    UNARY("IsInf", "{detect_positive=1, detect_negative=0}", -2, 2),
    {"binary float",
     HDR "input %a : f32[2,3,5]\ninput %b : f32[3,1]\n"
         "%s : ?[?] = Add(%a, %b)  # add\n%d : ?[?] = Sub(%a, %b)  # sub\n"
         "%m : ?[?] = Mul(%s, %d)  # mul\n%q : ?[?] = Div(%m, %b)  # div\n"
         "%x : ?[?] = Max(%a, %b, %q)  # max\n%n : ?[?] = Min(%a, %b)  # min\n"
         "output %x, %n\n",
     0.5, 2},
    {"variadic",
     HDR "input %a : f32[4,6]\ninput %b : f32[6]\ninput %c : f32[4,1]\n"
         "%s : ?[?] = Sum(%a, %b, %c)  # sum\n%m : ?[?] = Mean(%a, %b, %c)  # mean\n"
         "output %s, %m\n",
     -2, 2},
    {"clip run-time bounds",
     HDR "input %x : f32[3,7]\ninput %lo : f32[]\ninput %hi : f32[]\n"
         "%y : ?[?] = Clip(%x, %lo, %hi)  # clip\noutput %y\n",
     -1, 1},
    {"pow mod",
     HDR "input %a : f32[3,8]\ninput %b : f32[8]\n"
         "%p : ?[?] = Pow(%a, %b)  # pow\nconst %k : f32[] = [0.7]\n"
         "%r : ?[?] = Mod(%p, %k) {fmod=1}  # fmod\noutput %p, %r\n",
     0.2, 2},
    {"prelu",
     HDR "input %x : f32[2,3,4,4]\nconst %s : f32[3,1,1] = [0.1, 0.2, -0.3]\n"
         "%y : ?[?] = PRelu(%x, %s)  # prelu\noutput %y\n",
     -2, 2},
    {"compares",
     HDR "input %a : f32[4,5]\ninput %b : f32[5]\n"
         "%l : ?[?] = Less(%a, %b)  # lt\n%le : ?[?] = LessOrEqual(%a, %b)  # le\n"
         "%g : ?[?] = Greater(%a, %b)  # gt\n%ge : ?[?] = GreaterOrEqual(%a, %b)  # ge\n"
         "%e : ?[?] = Equal(%l, %g)  # eq\noutput %l, %le, %ge, %e\n",
     -1, 1},
    {"where",
     HDR "input %a : f32[4,5]\ninput %b : f32[5]\nconst %z : f32[] = [0.0]\n"
         "%c : ?[?] = Greater(%a, %z)  # pos\n%y : ?[?] = Where(%c, %a, %b)  # where\n"
         "output %y\n",
     -1, 1},
    {"int32",
     HDR "input %a : i32[3,7]\ninput %b : i32[7]\n"
         "%s : ?[?] = Add(%a, %b)  # add\n%d : ?[?] = Sub(%s, %b)  # sub\n"
         "%m : ?[?] = Mul(%d, %a)  # mul\n%x : ?[?] = Max(%m, %b)  # max\n"
         "%n : ?[?] = Neg(%x)  # neg\n%ab : ?[?] = Abs(%n)  # abs\n%sg : ?[?] = Sign(%n)  # sign\n"
         "output %ab, %sg\n",
     -50, 50},
    {"int64 div mod",
     HDR "input %a : i64[9]\nconst %k : i64[] = [7]\nconst %j : i64[] = [-3]\n"
         "%q : ?[?] = Div(%a, %k)  # div\n%r : ?[?] = Mod(%a, %j) {fmod=0}  # mod\n"
         "%f : ?[?] = Mod(%a, %k) {fmod=1}  # fmod\n%c : ?[?] = Clip(%a) {min=-20.0, max=30.0}  # clip\n"
         "%re : ?[?] = Relu(%a)  # relu\noutput %q, %r, %f, %c, %re\n",
     -100, 100},
    {"bits u8",
     HDR "input %a : u8[2,6]\ninput %n : u8[6]\n"
         "%l : ?[?] = BitShift(%a, %n) {direction=\"LEFT\"}  # shl\n"
         "%r : ?[?] = BitShift(%a, %n) {direction=\"RIGHT\"}  # shr\n"
         "%x : ?[?] = BitwiseXor(%l, %r)  # xor\n%o : ?[?] = BitwiseOr(%x, %n)  # or\n"
         "%an : ?[?] = BitwiseAnd(%o, %a)  # and\n%nt : ?[?] = BitwiseNot(%an)  # not\n"
         "output %l, %r, %nt\n",
     0, 7},
    {"bool logic",
     HDR "input %a : bool[3,4]\ninput %b : bool[4]\n"
         "%x : ?[?] = And(%a, %b)  # and\n%o : ?[?] = Or(%a, %b)  # or\n"
         "%e : ?[?] = Xor(%x, %o)  # xor\n%n : ?[?] = Not(%e)  # not\noutput %n, %o\n",
     0, 1},
    {"where i64",
     HDR "input %c : bool[2,3]\ninput %a : i64[2,3]\ninput %b : i64[3]\n"
         "%y : ?[?] = Where(%c, %a, %b)  # where\noutput %y\n",
     -9, 9},
    {"cast from f32",
     HDR "input %x : f32[2,9]\n"
         "%h : ?[?] = Cast(%x) {to=10}  # to_f16\n%l : ?[?] = Cast(%x) {to=7}  # to_i64\n"
         "%i : ?[?] = Cast(%x) {to=6}  # to_i32\n%b : ?[?] = Cast(%x) {to=3}  # to_i8\n"
         "%t : ?[?] = Cast(%x) {to=9}  # to_bool\noutput %h, %l, %i, %b, %t\n",
     -100, 100},
    {"cast to f32",
     HDR "input %a : i64[5]\ninput %u : u8[5]\ninput %b : bool[5]\ninput %h : f16[5]\n"
         "%fa : ?[?] = Cast(%a) {to=1}  # a\n%fu : ?[?] = Cast(%u) {to=1}  # u\n"
         "%fb : ?[?] = Cast(%b) {to=1}  # b\n%fh : ?[?] = Cast(%h) {to=1}  # h\n"
         "%iu : ?[?] = Cast(%u) {to=6}  # u_i32\n%s : ?[?] = Sum(%fa, %fu, %fb, %fh)  # sum\n"
         "output %s, %iu\n",
     0, 100},
    {"broadcast nchw",
     HDR "input %x : f32[2,3,4,5]\ninput %g : f32[2,3,1,1]\n"
         "const %w : f32[3,1,1] = [0.5, -1.0, 2.0]\nconst %v : f32[5] = [1.0, 2.0, 3.0, 4.0, 5.0]\n"
         "%a : ?[?] = Mul(%x, %w)  # scale\n%b : ?[?] = Add(%a, %g)  # shift\n"
         "%c : ?[?] = Sub(%b, %v)  # w\noutput %c\n",
     -1, 1},
    {"conv hswish se",
     HDR "input %x : f32[1,20,6,6]\nconst %w : f32[20,20,3,3] = rand(3)\n"
         "const %k : f32[20,1,1] = rand(4)\n"
         "%c : ?[?] = Conv(%x, %w) {pads=[1,1,1,1]}  # conv\n"
         "%h : ?[?] = HardSwish(%c)  # hswish\n%g : ?[?] = GlobalAveragePool(%h)  # gap\n"
         "%s : ?[?] = Sigmoid(%g)  # gate\n%e : ?[?] = Mul(%h, %s)  # excite\n"
         "%y : ?[?] = Mul(%e, %k)  # scale\noutput %y\n",
     -1, 1},
    {"conv silu tree",
     HDR "input %x : f32[1,8,5,5]\nconst %w : f32[8,8,1,1] = rand(5)\n"
         "%c : ?[?] = Conv(%x, %w)  # conv\n%s : ?[?] = Sigmoid(%c)  # sig\n"
         "%y : ?[?] = Mul(%c, %s)  # silu\n%r : ?[?] = Relu(%y)  # relu\n"
         "%t : ?[?] = Tanh(%y)  # tanh\noutput %r, %t\n",
     -1, 1},
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

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double uniform(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) * 0x1p-53;
}

static int is_float(int dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT16; }

static ir_graph *parse(const vcase *c, diag *d) {
  ir_graph *g = NULL;
  if (ir_parse(c->ir, c->name, &g, d) != ST_OK) return NULL;
  return g;
}

/* Compares output `i` of case c; returns 1 when it matches. */
static int compare(const vcase *c, om_precision p, const ir_value *v, const void *want, const void *got) {
  int64_t n = ir_value_elements(v);
  if (!is_float(v->dtype)) {
    for (int64_t k = 0; k < n; k++) {
      double r = elem_get(want, v->dtype, k), g = elem_get(got, v->dtype, k);
      if (r != g) {
        test_note("%s (precision %d) output '%s'[%lld]: got %.17g, want %.17g", c->name, (int)p, v->name,
                  (long long)k, g, r);
        return 0;
      }
    }
    return 1;
  }
  double dot = 0, n1 = 0, n2 = 0, worst = 0;
  int64_t bad = -1;
  for (int64_t k = 0; k < n; k++) {
    double r = elem_get(want, v->dtype, k), g = elem_get(got, v->dtype, k);
    if (isnan(r) != isnan(g) || (isinf(r) && r != g)) {
      test_note("%s (precision %d) output '%s'[%lld]: got %g, want %g", c->name, (int)p, v->name,
                (long long)k, g, r);
      return 0;
    }
    if (isnan(r) || isinf(r)) continue;
    double err = fabs(g - r);
    if (p == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE && err > 1e-5 * fabs(r) + 1e-6 && err > worst)
      worst = err, bad = k;
    dot += g * r, n1 += g * g, n2 += r * r;
  }
  if (bad >= 0) {
    test_note("%s (precision %d) output '%s'[%lld]: got %.9g, want %.9g", c->name, (int)p, v->name,
              (long long)bad, elem_get(got, v->dtype, bad), elem_get(want, v->dtype, bad));
    return 0;
  }
  double cosine = n1 == 0 && n2 == 0 ? 1 : dot / (sqrt(n1) * sqrt(n2) + 1e-300);
  if (p != OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE && cosine < 0.999) {
    test_note("%s (precision %d) output '%s': cosine %.6f", c->name, (int)p, v->name, cosine);
    return 0;
  }
  return 1;
}

/* Compiles case c under precision p, runs it and checks every output. */
static void run_case(const vcase *c, om_precision p) {
  diag d;
  diag_init(&d);
  ir_graph *ref = parse(c, &d), *g = parse(c, &d);
  arena a;
  arena_init(&a, 0);
  omrt_model *m = NULL;
  omrt_context *ctx_rt = NULL;
  void *om = NULL;
  pass_ctx ctx = {.soc = &test_soc, .precision = p, .model_name = c->name, .cmdline = "test"};
  int ok = ref && g && pass_shape_infer(ref, &ctx, &d) == ST_OK;
  const void *inputs[8];
  void *want[8], *got[8];
  for (int i = 0; ok && i < ref->ninputs; i++) {
    const ir_value *v = ref->inputs[i];
    int64_t n = ir_value_elements(v);
    void *buf = arena_array(&a, (size_t)n + 1, dtype_size(v->dtype));
    for (int64_t k = 0; k < n; k++) {
      double u = uniform();
      double x = is_float(v->dtype) ? c->lo + u * (c->hi - c->lo) : floor(c->lo + u * (c->hi - c->lo + 1));
      elem_put(buf, v->dtype, k, x);
    }
    inputs[i] = buf;
  }
  if (ok && ir_eval_graph(ref, inputs, want, &a, &d) != ST_OK) ok = 0;
  for (int i = 0; ok && i < pass_pipeline_count; i++)
    if (pass_pipeline[i].run(g, &ctx, &d) != ST_OK || ir_verify(g, &d) != ST_OK) {
      diag_prefix(&d, "%s", pass_pipeline[i].name);
      ok = 0;
    }
  size_t size = 0;
  if (ok && om_writer_to_memory(ctx.writer, &om, &size, &d) != ST_OK) ok = 0;
  if (!ok) test_note("%s (precision %d): %s", c->name, (int)p, d.msg);
  if (ok &&
      (omrt_model_load_memory(om, size, NULL, &m) != OMRT_OK || omrt_context_new(m, &ctx_rt) != OMRT_OK)) {
    test_note("%s (precision %d): load: %s", c->name, (int)p, omrt_last_error());
    ok = 0;
  }
  for (int i = 0; ok && i < ref->noutputs; i++) {
    omrt_tensor_desc od;
    omrt_model_output(m, i, &od);
    got[i] = arena_alloc(&a, od.bytes + 1);
    if (od.dtype != (int)ref->outputs[i]->dtype) {
      test_note("%s: output %d has dtype %d, want %d", c->name, i, od.dtype, (int)ref->outputs[i]->dtype);
      ok = 0;
    }
  }
  if (ok && omrt_execute(ctx_rt, inputs, got) != OMRT_OK) {
    test_note("%s (precision %d): execute: %s", c->name, (int)p, omrt_last_error());
    ok = 0;
  }
  for (int i = 0; ok && i < ref->noutputs; i++)
    ok = compare(c, p, ref->outputs[i], want[i], got[i]);
  CHECK(ok);
  if (!ok) test_note("  failed: %s, precision %d", c->name, (int)p);
  omrt_context_free(ctx_rt);
  omrt_model_free(m);
  free(om);
  om_writer_free(ctx.writer);
  arena_free(&a);
  ir_graph_free(ref);
  ir_graph_free(g);
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_case(&cases[i], OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
    run_case(&cases[i], OM_PRECISION_FORCE_FP16);
  }
  return test_summary("test_vprog_e2e");
}
