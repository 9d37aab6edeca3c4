/* test_unique.c - ONNX Unique end to end (common/unique.h, ir/count.c, the
 * UNIQUE task): its y, indices and counts are counted outputs, its
 * inverse_indices dense.
 *
 * Each case is a one-node model (a dtype, dims, an axis or none, sorted or
 * not) compiled in both precision modes and run through libomrt on random
 * inputs drawn from a few values, so that items repeat (and all equal, and
 * a spread of values). The runtime's compacted outputs, their actual dims and the
 * reference evaluator's outputs (at the bound, zeros past the count) are
 * checked against a brute-force model written here: items grouped by a
 * linear search in first-occurrence order, then ordered by insertion
 * (O(L^2) item comparisons, the order of numpy.unique: lexicographic over
 * the item's elements in C order, -0.0 equal to 0.0, NaN equal to NaN and
 * above every number). A model naming only y gets the other outputs too.
 * Refused at compile time in one line naming the node: a Unique over 2^32
 * elements, an axis out of range.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elem.h"
#include "driver/compile.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "passes/pass.h"
#include "support.h"

enum { MAXN = 64 };

typedef struct ucase {
  int dt; /* ONNX dtype number (= common/types.h's) */
  int rank;
  int64_t dims[3];
  int has_axis;
  int64_t axis; /* as written in the model (may be negative) */
  int sorted;
  int only_y; /* the node names only output 0 */
} ucase;

/* The oracle's result for one input. */
typedef struct expect {
  int64_t groups;
  int64_t indices[MAXN], inverse[MAXN], counts[MAXN];
} expect;

typedef struct geom {
  int64_t outer, len, inner, total;
} geom;

static geom geom_of(const ucase *c) {
  geom g = {1, 1, 1, 1};
  for (int i = 0; i < c->rank; i++)
    g.total *= c->dims[i];
  if (!c->has_axis) {
    g.len = g.total;
    return g;
  }
  int a = (int)(c->axis < 0 ? c->axis + c->rank : c->axis);
  for (int i = 0; i < c->rank; i++)
    if (i < a)
      g.outer *= c->dims[i];
    else if (i == a)
      g.len = c->dims[i];
    else
      g.inner *= c->dims[i];
  return g;
}

static int cmp_num(double p, double q) {
  if (isnan(p) || isnan(q)) return (isnan(p) != 0) - (isnan(q) != 0);
  return (p > q) - (p < q);
}

static int cmp_item(const double *x, const geom *g, int64_t a, int64_t b) {
  for (int64_t o = 0; o < g->outer; o++)
    for (int64_t j = 0; j < g->inner; j++) {
      int c = cmp_num(x[(o * g->len + a) * g->inner + j], x[(o * g->len + b) * g->inner + j]);
      if (c) return c;
    }
  return 0;
}

static void oracle(const double *x, const geom *g, int sorted, expect *e) {
  int64_t group_of_first[MAXN];
  e->groups = 0;
  for (int64_t i = 0; i < g->len; i++) { /* groups in first-occurrence order */
    int64_t k = 0;
    while (k < e->groups && cmp_item(x, g, e->indices[k], i) != 0)
      k++;
    if (k == e->groups) e->indices[e->groups] = i, e->counts[e->groups++] = 0;
    e->inverse[i] = k, e->counts[k]++;
  }
  for (int64_t k = 0; k < e->groups; k++)
    group_of_first[k] = k;
  if (sorted) /* insertion sort of the groups by their first item */
    for (int64_t k = 1; k < e->groups; k++)
      for (int64_t m = k; m > 0 && cmp_item(x, g, e->indices[m - 1], e->indices[m]) > 0; m--) {
        int64_t t = e->indices[m], u = e->counts[m], v = group_of_first[m];
        e->indices[m] = e->indices[m - 1], e->counts[m] = e->counts[m - 1];
        group_of_first[m] = group_of_first[m - 1];
        e->indices[m - 1] = t, e->counts[m - 1] = u, group_of_first[m - 1] = v;
      }
  int64_t rank_of[MAXN];
  for (int64_t k = 0; k < e->groups; k++)
    rank_of[group_of_first[k]] = k;
  for (int64_t i = 0; i < g->len; i++)
    e->inverse[i] = rank_of[e->inverse[i]];
}

static void model(mb *m, const ucase *c) {
  mb_init(m, 11);
  mb_input(m, "x", c->dt, c->rank, c->dims, NULL);
  Onnx__NodeProto *n = mb_node(m, "Unique", "unique", "x", c->only_y ? "y" : "y,indices,inverse,counts");
  if (c->has_axis) attr_int(m, n, "axis", c->axis);
  attr_int(m, n, "sorted", c->sorted);
  mb_output(m, "y");
  if (!c->only_y) {
    mb_output(m, "indices");
    mb_output(m, "inverse");
    mb_output(m, "counts");
  }
}

/* Random x: values from a few (kind 0), one value (1), a spread of
 * values (2); f32 inputs also get -0.0 beside 0.0 and NaNs. */
static void fill(const ucase *c, const geom *g, int kind, unsigned *seed, void *x, double *xv) {
  for (int64_t i = 0; i < g->total; i++) {
    *seed = *seed * 1103515245u + 12345u;
    int r = (int)((*seed >> 16) % 4);
    double v = kind == 1 ? 2 : kind == 2 ? (double)((i * 7) % g->total) - 5 : r;
    if (c->dt == DT_FLOAT32 && kind == 0 && r == 3) v = (*seed >> 20) & 1 ? NAN : -0.0;
    elem_put(x, c->dt, (size_t)i, v);
    xv[i] = elem_get(x, c->dt, (size_t)i);
  }
}

/* y [outer, G, inner] compacted against x's items at e's indices, and the
 * evaluator's ref (NULL: none) at [outer, L, inner], zero past G. */
static int check_y(const ucase *c, const geom *g, const expect *e, const uint8_t *x, const uint8_t *y,
                   const uint8_t *ref) {
  const size_t es = dtype_size(c->dt);
  int bad = 0;
  for (int64_t q = 0; q < g->outer; q++)
    for (int64_t k = 0; k < g->len; k++)
      for (int64_t j = 0; j < g->inner; j++) {
        const uint8_t *r = ref ? ref + (size_t)((q * g->len + k) * g->inner + j) * es : NULL;
        if (k >= e->groups) {
          for (size_t b = 0; r && b < es; b++)
            bad += r[b] != 0;
          continue;
        }
        const uint8_t *want = x + (size_t)((q * g->len + e->indices[k]) * g->inner + j) * es;
        bad += memcmp(y + (size_t)((q * e->groups + k) * g->inner + j) * es, want, es) != 0;
        bad += r && memcmp(r, want, es) != 0;
      }
  return bad;
}

/* Nine inputs through ctx and the evaluator (ir, NULL: none). */
static void run_trials(const ucase *c, omrt_context *ctx, ir_graph *ir) {
  const geom g = geom_of(c);
  const int nout = c->only_y ? 1 : 4;
  const int y_axis = c->has_axis ? (int)(c->axis < 0 ? c->axis + c->rank : c->axis) : 0;
  unsigned seed = 5u + (unsigned)c->dt;
  for (int t = 0; t < 9; t++) {
    static uint8_t x[MAXN * 8], y[MAXN * 8];
    static int64_t outs[3][MAXN];
    double xv[MAXN];
    fill(c, &g, t % 3, &seed, x, xv);
    expect e;
    oracle(xv, &g, c->sorted, &e);
    const void *in[1] = {x};
    void *out[4] = {y, outs[0], outs[1], outs[2]};
    CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK);
    arena a;
    arena_init(&a, 0);
    void *ref[4] = {NULL, NULL, NULL, NULL};
    int have_ref = ir && mb_eval(ir, in, ref, &a) == 0;
    CHECK(have_ref);
    const int64_t *want[3] = {e.indices, e.inverse, e.counts};
    for (int o = 0; o < nout; o++) {
      omrt_tensor_desc d;
      CHECK_EQ_INT(omrt_context_output_dims(ctx, o, &d), OMRT_OK);
      const int64_t n = o == 2 ? g.len : e.groups; /* inverse_indices is dense */
      CHECK_EQ_INT(d.count_axis, o == 2 ? -1 : o == 0 ? y_axis : 0);
      CHECK_EQ_INT(d.dims[o == 0 ? y_axis : 0], n);
      int bad = 0;
      if (o == 0) {
        bad = check_y(c, &g, &e, x, y, have_ref ? ref[0] : NULL);
      } else {
        for (int64_t k = 0; k < g.len; k++) {
          int64_t w = k < n ? want[o - 1][k] : 0;
          bad += k < n && outs[o - 1][k] != w;
          bad += have_ref && ((const int64_t *)ref[o])[k] != w;
        }
      }
      CHECKF(bad == 0, "  dtype %d case input %d, output %d: %d entries differ (G %lld)", c->dt, t, o, bad,
             (long long)e.groups);
    }
    arena_free(&a);
  }
}

static void run_case(const ucase *c, om_precision p) {
  mb m;
  model(&m, c);
  ir_graph *ir = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  if (mb_run_open(&m, "unique.onnx", p, &r) && ir) run_trials(c, r.ctx, ir);
  mb_run_close(&r);
  ir_graph_free(ir);
}

static void test_refused(void) {
  mb m;
  mb_init(&m, 11); /* 2^32 elements: the bound does not fit */
  mb_input(&m, "x", 9, 2, (int64_t[]){65536, 65536}, NULL);
  mb_node(&m, "Unique", "big_unique", "x", "y");
  mb_output(&m, "y");
  mb_expect_refused(&m, "'big_unique' (Unique)", "4294967296");

  mb_init(&m, 11);
  mb_input(&m, "x", 1, 2, (int64_t[]){3, 4}, NULL);
  attr_int(&m, mb_node(&m, "Unique", "bad_axis", "x", "y"), "axis", 2);
  mb_output(&m, "y");
  mb_expect_refused(&m, "'bad_axis' (Unique)", "axis 2");
}

int main(void) {
  static const ucase cases[] = {
      {DT_FLOAT32, 1, {12}, 0, 0, 1, 0},       {DT_FLOAT32, 1, {12}, 0, 0, 0, 0},
      {DT_FLOAT32, 2, {3, 4}, 0, 0, 1, 0},     {DT_FLOAT32, 3, {2, 6, 3}, 1, 1, 1, 0},
      {DT_FLOAT32, 3, {2, 6, 3}, 1, -2, 0, 0}, {DT_INT64, 2, {5, 4}, 1, 0, 1, 0},
      {DT_INT32, 2, {4, 7}, 1, -1, 0, 0},      {DT_UINT8, 1, {20}, 0, 0, 1, 0},
      {DT_FLOAT16, 2, {6, 2}, 1, 0, 1, 0},     {DT_FLOAT32, 2, {4, 5}, 0, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    run_case(&cases[i], OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE);
    run_case(&cases[i], OM_PRECISION_FORCE_FP16);
  }
  test_refused();
  return test_summary("unique");
}
