/* onnx_decomp_einsum.c - Einsum as Transpose / Unsqueeze / Squeeze / MatMul /
 * Mul / ReduceSum (onnx_decomp.h).
 *
 * The equation "t1,t2,...->out" names each input dim with a letter; "..."
 * stands for the dims not named (the input's rank must then be known at
 * import) and is given generated labels, right-aligned across the inputs.
 * Without "->" the output is every label written exactly once, in alphabetical
 * order, after the ellipsis labels (numpy's implicit mode).
 *
 * A label repeated within an input's term ("ii->i", "...ii->...i") takes
 * that input's diagonal first: the two axes are moved last (Transpose),
 * merged into one of n*n (Reshape) and read with a step of n + 1 (Slice),
 * which leaves the label once, last; three or more uses repeat this. The
 * output term may not repeat a label (ONNX's rule).
 *
 * Then labels an input has alone and the output lacks are summed
 * (ReduceSum), and:
 *   two inputs with exactly one contracted label k (in both, not in the
 *     output): a MatMul. Labels in both inputs and the output are batch dims;
 *     labels of one input only become that input's batch dims too, with a
 *     size-1 dim (Unsqueeze) in the other, except the last of each, which is
 *     the product's M (first input) or N (second); a missing M or N is a
 *     size-1 dim squeezed afterwards. The result is transposed to the output
 *     order. The MatMul is the cube's for f32 and f16, a broadcast Mul and
 *     ReduceSum for other dtypes (dc_matmul).
 *   anything else (one input, three or more, several contracted labels, an
 *     outer product): every input is transposed into one common label order
 *     (the output's labels, then the summed ones) with size-1 dims for the
 *     labels it lacks, multiplied (broadcasting), and the summed labels are
 *     reduced (ReduceSum, keepdims 0).
 * Dims of one label must agree (or broadcast, size 1) across inputs.
 */
#include <string.h>

#include "frontend/onnx_decomp.h"

enum { MAX_TERMS = 8, MAX_LABELS = 52 + MAX_RANK }; /* a-z, A-Z, ellipsis labels */

typedef struct term {
  int n;
  int lab[MAX_RANK]; /* label ids: 0..51 letters, 52.. ellipsis dims */
} term;

typedef struct eq {
  int nin;
  term in[MAX_TERMS], out;
  char text[256];
} eq;

static int letter_id(char c) {
  return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* One term of s[0..len): letters and at most one "..." (rank: the input's rank
 * at import, -1 when unknown or the output term). ell: ellipsis dims in
 * force (set by the inputs, the largest). Returns 0 or -1 (*err set). */
static int parse_term(const char *s, size_t len, int rank, int *ell, term *t, const char **err) {
  int letters = 0, dots = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      if (dots || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
        return *err = "a '.' that is not part of one '...'", -1;
      dots = 1, i += 2;
      continue;
    }
    if (letter_id(s[i]) < 0) return *err = "a character that is not a letter, ',', '...' or '->'", -1;
    letters++;
  }
  int e = 0;
  if (dots) {
    if (rank >= 0) {
      e = rank - letters;
      if (e < 0) return *err = "a term with more labels than its input has dims", -1;
      if (e > *ell) *ell = e;
    } else {
      e = *ell;
    }
  }
  if (letters + e > MAX_RANK) return *err = "a term of more than 8 dims", -1;
  t->n = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      for (int k = 0; k < e; k++)
        t->lab[t->n++] = 52 + (MAX_RANK - e) + k; /* right-aligned */
      i += 2;
      continue;
    }
    t->lab[t->n++] = letter_id(s[i]);
  }
  if (!dots && rank >= 0 && t->n != rank)
    return *err = "a term whose label count differs from its input's rank", -1;
  return 0;
}

/* The first two positions of a label repeated in t (*a < *c), or 0. */
static int repeated(const term *t, int *a, int *c) {
  for (*a = 0; *a < t->n; (*a)++)
    for (*c = *a + 1; *c < t->n; (*c)++)
      if (t->lab[*a] == t->lab[*c]) return 1;
  return 0;
}

static int has(const term *t, int lab) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == lab) return i;
  return -1;
}

/* Parses the equation; inputs' ranks (known or -1) for "...". */
static status parse(dc *b, const char *s, size_t len, eq *q) {
  const char *err = NULL, *arrow = NULL;
  snprintf(q->text, sizeof q->text, "%.*s", (int)(len < 200 ? len : 200), s);
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == '-' && s[i + 1] == '>') arrow = s + i;
  size_t lhs = arrow ? (size_t)(arrow - s) : len;
  int ell = 0;
  q->nin = 0;
  for (size_t at = 0; at <= lhs && !err;) {
    size_t end = at;
    while (end < lhs && s[end] != ',')
      end++;
    if (q->nin == MAX_TERMS) {
      err = "more than 8 inputs";
      break;
    }
    if (q->nin >= b->nd->nin) {
      err = "more terms than inputs";
      break;
    }
    const ir_value *x = dc_in(b, q->nin);
    if (!x) return dc_refuse(b, ST_ERR_INVALID, "equation '%s': input %d is missing", q->text, q->nin);
    if (memchr(s + at, '.', end - at) && x->rank < 0)
      return dc_refuse(b, ST_ERR_UNSUPPORTED,
                       "equation '%s': '...' needs the rank of input %d '%s', unknown at import", q->text,
                       q->nin, x->name);
    parse_term(s + at, end - at, x->rank, &ell, &q->in[q->nin], &err);
    q->nin++;
    at = end + 1;
  }
  if (!err && q->nin != b->nd->nin) err = "fewer terms than inputs";
  if (!err && arrow) {
    int a, c;
    if (!parse_term(arrow + 2, len - lhs - 2, -1, &ell, &q->out, &err) && repeated(&q->out, &a, &c))
      err = "a label repeated in the output";
    for (int i = 0; !err && i < q->out.n; i++) {
      int found = 0;
      for (int t = 0; t < q->nin; t++)
        found |= has(&q->in[t], q->out.lab[i]) >= 0;
      if (!found) err = "an output label that no input has";
    }
  } else if (!err) { /* implicit: ellipsis labels, then labels used once, alphabetically */
    q->out.n = 0;
    for (int lab = 52; lab < MAX_LABELS; lab++)
      for (int t = 0; t < q->nin; t++)
        if (has(&q->in[t], lab) >= 0) {
          q->out.lab[q->out.n++] = lab;
          break;
        }
    static const char order[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (const char *c = order; *c && q->out.n < MAX_RANK; c++) {
      int uses = 0; /* occurrences: "ii" is a trace, as in numpy */
      for (int t = 0; t < q->nin; t++)
        for (int d = 0; d < q->in[t].n; d++)
          uses += q->in[t].lab[d] == letter_id(*c);
      if (uses == 1) q->out.lab[q->out.n++] = letter_id(*c);
    }
  }
  if (err) return dc_refuse(b, ST_ERR_UNSUPPORTED, "equation '%s': %s", q->text, err);
  return ST_OK;
}

/* x (labels t) transposed so that its labels follow `order` (labels of t
 * absent from order are not allowed). Updates t. */
static ir_value *transpose_to(dc *b, ir_value *x, term *t, const term *order) {
  int64_t perm[MAX_RANK];
  term nt = {0};
  for (int i = 0; i < order->n; i++) {
    int at = has(t, order->lab[i]);
    if (at >= 0) perm[nt.n] = at, nt.lab[nt.n++] = order->lab[i];
  }
  int same = 1;
  for (int i = 0; i < nt.n; i++)
    same &= perm[i] == i;
  *t = nt;
  return same ? x : dc_transpose(b, x, nt.n, perm);
}

/* Input i (x, labels t) reduced to its diagonals (see the top of the file).
 * The dims come from the input at import and are carried along here (the
 * values made on the way have none until shape inference). */
static ir_value *take_diagonals(dc *b, const eq *q, int i, ir_value *x, term *t) {
  int a, c;
  if (!repeated(t, &a, &c)) return x;
  const char *name = x->name;
  int64_t xd[MAX_RANK];
  for (int d = 0; d < t->n; d++)
    if (x->rank != t->n || (xd[d] = x->dims[d]) < 0)
      return dc_fail(b, ST_ERR_UNSUPPORTED,
                     "equation '%s': the diagonal of input %d '%s' needs its dims, unknown at import",
                     q->text, i, name);
  while (!b->st && repeated(t, &a, &c)) {
    const int64_t n = xd[a];
    if (xd[c] != n)
      return dc_fail(b, ST_ERR_INVALID,
                     "equation '%s': input %d '%s' repeats a label over dims of sizes %lld and %lld", q->text,
                     i, name, (long long)n, (long long)xd[c]);
    int64_t perm[MAX_RANK];
    term nt = {0};
    for (int p = 0; p < t->n; p++)
      if (p != a && p != c) perm[nt.n] = p, xd[nt.n] = xd[p], nt.lab[nt.n++] = t->lab[p];
    perm[nt.n] = a, perm[nt.n + 1] = c;
    xd[nt.n] = n * n;
    const int64_t start = 0, end = n * n, axis = nt.n, step = n + 1;
    x = dc_reshape_to(b, dc_transpose(b, x, t->n, perm), nt.n + 1, xd);
    x = dc_slice_steps(b, x, 1, &start, &end, &axis, &step);
    xd[nt.n] = n;
    nt.lab[nt.n++] = t->lab[a];
    *t = nt;
  }
  return x;
}

/* Sums the labels of input i that no other input and not the output has. */
static ir_value *sum_private(dc *b, const eq *q, int i, ir_value *x, term *t) {
  int64_t axes[MAX_RANK];
  int count = 0;
  term nt = {0};
  for (int d = 0; d < t->n; d++) {
    int lab = t->lab[d], shared = has(&q->out, lab) >= 0;
    for (int o = 0; o < q->nin; o++)
      shared |= o != i && has(&q->in[o], lab) >= 0;
    if (shared)
      nt.lab[nt.n++] = lab;
    else
      axes[count++] = d;
  }
  if (!count) return x;
  *t = nt;
  return dc_reduce(b, "sum", x, count, axes, 0);
}

/* x (labels t, a subsequence of order) unsqueezed to order's rank. */
static ir_value *expand_to(dc *b, ir_value *x, const term *t, const term *order) {
  int64_t axes[MAX_RANK];
  int count = 0;
  for (int i = 0; i < order->n; i++)
    if (has(t, order->lab[i]) < 0) axes[count++] = i;
  return count ? dc_unsqueeze(b, x, count, axes) : x;
}

/* The general path: Mul of every input in one label order, ReduceSum of the
 * summed labels. */
static ir_value *einsum_mul(dc *b, const eq *q, ir_value **x, term *t) {
  term order = q->out;
  int nout = order.n;
  for (int i = 0; i < q->nin; i++)
    for (int d = 0; d < t[i].n; d++)
      if (has(&order, t[i].lab[d]) < 0) {
        if (order.n == MAX_RANK)
          return dc_fail(b, ST_ERR_UNSUPPORTED, "equation '%s': more than 8 labels", q->text);
        order.lab[order.n++] = t[i].lab[d];
      }
  ir_value *acc = NULL;
  for (int i = 0; i < q->nin; i++) {
    term ti = t[i];
    ir_value *v = expand_to(b, transpose_to(b, x[i], &ti, &order), &ti, &order);
    acc = acc ? dc_op2(b, IR_OP_MUL, acc, v) : v;
  }
  if (order.n == nout) return acc;
  int64_t axes[MAX_RANK];
  for (int k = nout; k < order.n; k++)
    axes[k - nout] = k;
  return dc_reduce(b, "sum", acc, order.n - nout, axes, 0);
}

/* The MatMul path (two inputs, one contracted label k). */
static ir_value *einsum_matmul(dc *b, const eq *q, ir_value **x, term *t, int k) {
  term *ta = &t[0], *tb = &t[1];
  term bat = {0}, onlya = {0}, onlyb = {0};
  for (int i = 0; i < q->out.n; i++) {
    int lab = q->out.lab[i], ia = has(ta, lab) >= 0, ib = has(tb, lab) >= 0;
    term *dst = ia && ib ? &bat : ia ? &onlya : &onlyb;
    dst->lab[dst->n++] = lab;
  }
  int m = onlya.n ? onlya.lab[--onlya.n] : -1, n = onlyb.n ? onlyb.lab[--onlyb.n] : -1;
  /* A: [bat, onlya, (1 per onlyb), m|1, k]; B: [bat, (1 per onlya), onlyb, k, n|1] */
  term oa = bat, ob = bat;
  for (int i = 0; i < onlya.n; i++)
    oa.lab[oa.n++] = onlya.lab[i];
  if (m >= 0) oa.lab[oa.n++] = m;
  oa.lab[oa.n++] = k;
  for (int i = 0; i < onlyb.n; i++)
    ob.lab[ob.n++] = onlyb.lab[i];
  ob.lab[ob.n++] = k;
  if (n >= 0) ob.lab[ob.n++] = n;
  if (bat.n + onlya.n + onlyb.n + 2 > MAX_RANK)
    return dc_fail(b, ST_ERR_UNSUPPORTED, "equation '%s': the product needs more than 8 dims", q->text);
  ir_value *a = transpose_to(b, x[0], ta, &oa), *bb = transpose_to(b, x[1], tb, &ob);
  int64_t axes[MAX_RANK];
  int count = 0, at = bat.n + onlya.n;
  for (int i = 0; i < onlyb.n; i++)
    axes[count++] = at + i;
  if (m < 0) axes[count++] = at + onlyb.n;
  if (count) a = dc_unsqueeze(b, a, count, axes);
  count = 0;
  for (int i = 0; i < onlya.n; i++)
    axes[count++] = bat.n + i;
  if (n < 0) axes[count++] = bat.n + onlya.n + onlyb.n + 1;
  if (count) bb = dc_unsqueeze(b, bb, count, axes);
  ir_value *y = dc_matmul(b, a, bb);
  /* y: [bat, onlya, onlyb, m|1, n|1] */
  term ty = bat;
  for (int i = 0; i < onlya.n; i++)
    ty.lab[ty.n++] = onlya.lab[i];
  for (int i = 0; i < onlyb.n; i++)
    ty.lab[ty.n++] = onlyb.lab[i];
  int base = ty.n;
  count = 0;
  if (m >= 0)
    ty.lab[ty.n++] = m;
  else
    axes[count++] = base;
  if (n >= 0)
    ty.lab[ty.n++] = n;
  else
    axes[count++] = base + 1;
  if (count) y = dc_squeeze(b, y, count, axes);
  return transpose_to(b, y, &ty, &q->out);
}

status onnx_decomp_einsum(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const Onnx__AttributeProto *a = onnx_attr(nd, "equation");
  if (!a || !a->s.data) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'equation' is required");
  eq q;
  if (parse(&b, (const char *)a->s.data, a->s.len, &q)) return dc_end(&b);
  ir_value *x[MAX_TERMS];
  term t[MAX_TERMS];
  for (int i = 0; i < q.nin; i++) {
    x[i] = dc_in(&b, i), t[i] = q.in[i];
    dc_dtype(&b, x[i]);
  }
  for (int i = 0; i < q.nin; i++)
    x[i] = sum_private(&b, &q, i, take_diagonals(&b, &q, i, x[i], &t[i]), &t[i]);
  int k = -1, contracted = 0;
  if (q.nin == 2)
    for (int d = 0; d < t[0].n; d++)
      if (has(&t[1], t[0].lab[d]) >= 0 && has(&q.out, t[0].lab[d]) < 0) k = t[0].lab[d], contracted++;
  ir_value *y = q.nin == 2 && contracted == 1 ? einsum_matmul(&b, &q, x, t, k) : einsum_mul(&b, &q, x, t);
  dc_output(&b, 0, y);
  return dc_end(&b);
}
