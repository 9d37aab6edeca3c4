/* view.c - the strided view of each data-movement op (see view.h).
 *
 * One function per op, each a transcription of the ONNX definition into
 * (offset, dims, strides) over the input's C-order strides:
 *   Transpose      view dims = input dims permuted, strides permuted alike.
 *   Slice          per axis the clamped start and the step (ONNX's rules,
 *                  negative steps included); offset = sum start * stride.
 *   Split          output k: the slice [sum split[0..k), + split[k]) along
 *                  the axis.
 *   Expand         numpy broadcasting of the input to the shape; a
 *                  broadcast dim reads with stride 0.
 *   Tile           each repeated dim d becomes two view dims (repeats, stride
 *                  0) and (d, its stride), so rank + (dims repeated) <= 8.
 *   DepthToSpace   y[n, c, h*b + i, w*b + j] = x[n, ch, h, w] with ch =
 *                  (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD): a rank-6
 *                  view [N, C', H, b, W, b].
 *   SpaceToDepth   y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j]:
 *                  a rank-6 view [N, b, b, C, H', W'].
 * Products are checked against overflow only as far as the callers need:
 * every dims value here is bounded by the input's (known, sized) dims or by
 * the output's element count, which shape inference checks for size.
 */
#include "ir/view.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int bad(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
  return -1;
}

int ir_view_op(ir_op op) {
  return op == IR_OP_TRANSPOSE || op == IR_OP_SLICE || op == IR_OP_SPLIT || op == IR_OP_EXPAND ||
         op == IR_OP_TILE || op == IR_OP_DEPTHTOSPACE || op == IR_OP_SPACETODEPTH;
}

static void push(ir_view *v, int64_t dim, int64_t stride) {
  v->dims[v->rank] = dim;
  v->strides[v->rank++] = stride;
}

static int view_transpose(const ir_node *n, int rank, const int64_t *dims, const int64_t *str, ir_view *v,
                          char *err, size_t es) {
  int64_t perm[MAX_RANK + 1];
  int count = ir_attr_ints(n, "perm", perm, MAX_RANK + 1);
  if (count < 0)
    for (int d = 0; d < rank; d++)
      perm[d] = rank - 1 - d;
  else if (count != rank)
    return bad(err, es, "perm has %d entries for an input of rank %d", count, rank);
  unsigned seen = 0;
  for (int d = 0; d < rank; d++) {
    int64_t p = perm[d];
    if (p < 0 || p >= rank || (seen >> p) & 1u)
      return bad(err, es, "perm is not a permutation of 0..%d", rank - 1);
    seen |= 1u << p;
    push(v, dims[p], str[p]);
  }
  return 0;
}

static int view_slice(const ir_node *n, int rank, const int64_t *dims, const int64_t *str, ir_view *v,
                      char *err, size_t es) {
  int64_t starts[MAX_RANK + 1], ends[MAX_RANK + 1], axes[MAX_RANK + 1], steps[MAX_RANK + 1];
  int ns = ir_attr_ints(n, "starts", starts, MAX_RANK + 1), ne = ir_attr_ints(n, "ends", ends, MAX_RANK + 1);
  int na = ir_attr_ints(n, "axes", axes, MAX_RANK + 1), nt = ir_attr_ints(n, "steps", steps, MAX_RANK + 1);
  if (ns < 0 || ns != ne || ns > rank)
    return bad(err, es, "starts and ends must have the same count, at most the rank %d", rank);
  if ((na >= 0 && na != ns) || (nt >= 0 && nt != ns))
    return bad(err, es, "axes and steps must have as many entries as starts");
  int64_t start[MAX_RANK], step[MAX_RANK];
  unsigned seen = 0;
  for (int d = 0; d < rank; d++)
    start[d] = 0, step[d] = 1, v->dims[d] = dims[d];
  for (int i = 0; i < ns; i++) {
    int64_t a = na >= 0 ? axes[i] : i;
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || (seen >> a) & 1u) return bad(err, es, "axes[%d] out of range or repeated", i);
    seen |= 1u << a;
    /* Any int64 the model gives: b and e are clamped into [-1, D] before
     * any arithmetic that could overflow, |s| is taken unsigned (s may be
     * INT64_MIN), and a dim of at most one element takes step 1, so the
     * stride below is a step of at most D times a stride within x. */
    int64_t D = dims[a], s = nt >= 0 ? steps[i] : 1, b = starts[i], e = ends[i];
    if (s == 0) return bad(err, es, "steps[%d] is 0", i);
    if (b < 0) b = b < -D ? -1 : b + D;
    if (e < 0) e = e < -D ? -1 : e + D;
    uint64_t mag = s > 0 ? (uint64_t)s : (uint64_t)0 - (uint64_t)s;
    int64_t size;
    if (s > 0) {
      b = b < 0 ? 0 : b > D ? D : b;
      e = e < 0 ? 0 : e > D ? D : e;
      size = e > b ? (int64_t)((uint64_t)(e - b - 1) / mag) + 1 : 0;
    } else {
      b = b < 0 ? 0 : b > D - 1 ? D - 1 : b;
      e = e < -1 ? -1 : e > D - 1 ? D - 1 : e;
      size = b > e ? (int64_t)((uint64_t)(b - e - 1) / mag) + 1 : 0;
    }
    start[a] = size ? b : 0, step[a] = size > 1 ? s : 1, v->dims[a] = size;
  }
  v->rank = rank;
  for (int d = 0; d < rank; d++) {
    v->offset += start[d] * str[d];
    v->strides[d] = step[d] * str[d];
  }
  return 0;
}

static int view_expand(const ir_node *n, int rank, const int64_t *dims, const int64_t *str, ir_view *v,
                       char *err, size_t es) {
  int64_t shape[MAX_RANK + 1];
  int ns = ir_attr_ints(n, "shape", shape, MAX_RANK + 1);
  if (ns < 0 || ns > MAX_RANK) return bad(err, es, "shape must have at most %d entries", MAX_RANK);
  int out = ns > rank ? ns : rank;
  for (int k = 0; k < out; k++) {
    int xi = k - (out - rank), si = k - (out - ns);
    int64_t a = xi >= 0 ? dims[xi] : 1, b = si >= 0 ? shape[si] : 1;
    if (a != b && a != 1 && b != 1)
      return bad(err, es, "input dim %d (%lld) does not broadcast to shape dim %d (%lld)", xi, (long long)a,
                 si, (long long)b);
    if (b < 0) return bad(err, es, "shape[%d] = %lld is negative", si, (long long)b);
    push(v, a == 1 ? b : a, a == 1 || xi < 0 ? 0 : str[xi]);
  }
  return 0;
}

static int view_tile(const ir_node *n, int rank, const int64_t *dims, const int64_t *str, ir_view *v,
                     char *err, size_t es) {
  int64_t reps[MAX_RANK + 1];
  int nr = ir_attr_ints(n, "repeats", reps, MAX_RANK + 1);
  if (nr != rank) return bad(err, es, "repeats has %d entries for an input of rank %d", nr, rank);
  for (int d = 0; d < rank; d++) {
    if (reps[d] < 0) return bad(err, es, "repeats[%d] = %lld is negative", d, (long long)reps[d]);
    if (reps[d] != 1) {
      if (v->rank == MAX_RANK) return bad(err, es, "rank plus repeated dims exceeds %d", MAX_RANK);
      push(v, reps[d], 0);
    }
    if (v->rank == MAX_RANK) return bad(err, es, "rank plus repeated dims exceeds %d", MAX_RANK);
    push(v, dims[d], str[d]);
    if (__builtin_mul_overflow(dims[d], reps[d], &v->out_dims[d]))
      return bad(err, es, "dim %d times repeats %lld overflows", d, (long long)reps[d]);
  }
  v->out_rank = rank;
  return 0;
}

static int view_space(const ir_node *n, int rank, const int64_t *dims, ir_view *v, char *err, size_t es) {
  int64_t b = ir_attr_int(n, "blocksize", 0);
  if (rank != 4) return bad(err, es, "input must have rank 4, it has %d", rank);
  if (b < 1 || b > 4096) return bad(err, es, "blocksize %lld out of range", (long long)b);
  int64_t N = dims[0], C = dims[1], H = dims[2], W = dims[3];
  if (n->op == IR_OP_DEPTHTOSPACE) {
    if (C % (b * b))
      return bad(err, es, "channels %lld are not a multiple of blocksize^2 = %lld", (long long)C,
                 (long long)(b * b));
    int64_t Cq = C / (b * b), hw = H * W;
    const char *mode = ir_attr_string(n, "mode", "DCR");
    int crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR")) return bad(err, es, "mode '%s' must be DCR or CRD", mode);
    push(v, N, C * hw);
    push(v, Cq, crd ? b * b * hw : hw);
    push(v, H, W);
    push(v, b, crd ? b * hw : b * Cq * hw);
    push(v, W, 1);
    push(v, b, crd ? hw : Cq * hw);
    int64_t od[4] = {N, Cq, H * b, W * b};
    memcpy(v->out_dims, od, sizeof od);
  } else {
    if (H % b || W % b)
      return bad(err, es, "spatial dims %lldx%lld are not multiples of blocksize %lld", (long long)H,
                 (long long)W, (long long)b);
    push(v, N, C * H * W);
    push(v, b, W);
    push(v, b, 1);
    push(v, C, H * W);
    push(v, H / b, b * W);
    push(v, W / b, b);
    int64_t od[4] = {N, C * b * b, H / b, W / b};
    memcpy(v->out_dims, od, sizeof od);
  }
  v->out_rank = 4;
  return 0;
}

/* Output k of Split: the slice [start, start + split[k]) along the axis. */
static int view_split(const ir_node *n, int k, int rank, const int64_t *dims, const int64_t *str, ir_view *v,
                      char *err, size_t es) {
  int64_t split[IR_SPLIT_MAX_OUTPUTS + 1], axis = ir_attr_int(n, "axis", 0);
  int ns = ir_attr_ints(n, "split", split, IR_SPLIT_MAX_OUTPUTS + 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return bad(err, es, "axis %lld out of range for rank %d", (long long)ir_attr_int(n, "axis", 0), rank);
  if (ns != n->nout || k < 0 || k >= ns)
    return bad(err, es, "split has %d sizes for %d outputs", ns, n->nout);
  int64_t start = 0, total = 0;
  for (int i = 0; i < ns; i++) {
    if (split[i] < 0) return bad(err, es, "split[%d] = %lld is negative", i, (long long)split[i]);
    if (i < k) start += split[i];
    total += split[i];
  }
  if (total != dims[axis])
    return bad(err, es, "split sizes add up to %lld, the axis has %lld", (long long)total,
               (long long)dims[axis]);
  v->rank = rank;
  for (int d = 0; d < rank; d++)
    v->dims[d] = d == axis ? split[k] : dims[d], v->strides[d] = str[d];
  v->offset = start * str[axis];
  return 0;
}

int ir_view_build(const ir_node *n, int out, int rank, const int64_t *dims, ir_view *v, char *err,
                  size_t es) {
  memset(v, 0, sizeof *v);
  if (rank < 0 || rank > MAX_RANK) return bad(err, es, "input rank %d out of range", rank);
  int64_t str[MAX_RANK];
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) { /* an empty input's other dims are unbounded */
    str[d] = s;
    if (__builtin_mul_overflow(s, dims[d], &s))
      return bad(err, es, "input dims multiply past 2^63 at dim %d", d);
  }
  int rc;
  switch (n->op) {
  case IR_OP_TRANSPOSE: rc = view_transpose(n, rank, dims, str, v, err, es); break;
  case IR_OP_SLICE: rc = view_slice(n, rank, dims, str, v, err, es); break;
  case IR_OP_EXPAND: rc = view_expand(n, rank, dims, str, v, err, es); break;
  case IR_OP_TILE: rc = view_tile(n, rank, dims, str, v, err, es); break;
  case IR_OP_SPLIT: rc = view_split(n, out, rank, dims, str, v, err, es); break;
  case IR_OP_DEPTHTOSPACE:
  case IR_OP_SPACETODEPTH: rc = view_space(n, rank, dims, v, err, es); break;
  default: return bad(err, es, "not a view op");
  }
  if (rc) return rc;
  if (n->op == IR_OP_TRANSPOSE || n->op == IR_OP_SLICE || n->op == IR_OP_EXPAND || n->op == IR_OP_SPLIT) {
    v->out_rank = v->rank; /* the output is the view itself */
    memcpy(v->out_dims, v->dims, sizeof v->dims);
  }
  return 0;
}

/* The Reshape family's regrouping of v's dims into dims[rank] (see
 * ir_view_follow). */
static int regroup(const ir_view *v, int rank, const int64_t *dims, ir_view *o) {
  int64_t od[MAX_RANK], os[MAX_RANK]; /* v without its dims of 1 */
  int on = 0;
  for (int d = 0; d < v->rank; d++)
    if (v->dims[d] != 1) od[on] = v->dims[d], os[on++] = v->strides[d];
  o->rank = rank;
  for (int d = 0; d < rank; d++)
    o->dims[d] = dims[d], o->strides[d] = 0;
  int oi = 0, ni = 0;
  while (ni < rank) {
    if (dims[ni] == 1) { /* a dim of 1 is never stepped */
      ni++;
      continue;
    }
    if (oi == on) return -1;
    int64_t np = dims[ni], op = od[oi];
    int oj = oi + 1, nj = ni + 1;
    while (np != op) {
      if (np < op) {
        if (nj == rank || __builtin_mul_overflow(np, dims[nj], &np)) return -1;
        nj++;
      } else {
        if (oj == on || __builtin_mul_overflow(op, od[oj], &op)) return -1;
        oj++;
      }
    }
    for (int i = oi; i + 1 < oj; i++) /* the merged input dims step evenly */
      if (os[i] != os[i + 1] * od[i + 1]) return -1;
    int64_t st = os[oj - 1];
    for (int i = nj - 1; i >= ni; i--) {
      o->strides[i] = dims[i] == 1 ? 0 : st;
      st *= dims[i];
    }
    oi = oj, ni = nj;
  }
  return oi == on ? 0 : -1;
}

int ir_view_follow(const ir_node *n, int k, const ir_view *v, ir_view *out_v) {
  memset(out_v, 0, sizeof *out_v);
  if (k < 0 || k >= n->nout || !n->out[k]) return -1;
  const ir_value *y = n->out[k];
  for (int d = 0; d < v->rank; d++)
    if (v->dims[d] == 0) return -1;
  for (int d = 0; d < y->rank; d++)
    if (y->dims[d] == 0) return -1;
  out_v->offset = v->offset;
  switch (n->op) {
  case IR_OP_RESHAPE:
  case IR_OP_FLATTEN:
  case IR_OP_SQUEEZE:
  case IR_OP_UNSQUEEZE:
  case IR_OP_IDENTITY:
    if (regroup(v, y->rank, y->dims, out_v)) return -1;
    break;
  case IR_OP_TRANSPOSE:
  case IR_OP_SLICE:
  case IR_OP_SPLIT: {
    ir_view c; /* the op's view of a C-order input: each dim d moves along input dim a[d] */
    char err[128];
    int64_t cs[MAX_RANK], s = 1, perm[MAX_RANK + 1];
    if (ir_view_build(n, k, v->rank, v->dims, &c, err, sizeof err) || c.rank != y->rank) return -1;
    for (int d = v->rank - 1; d >= 0; d--)
      cs[d] = s, s *= v->dims[d];
    if (n->op == IR_OP_TRANSPOSE && ir_attr_ints(n, "perm", perm, MAX_RANK + 1) < 0)
      for (int d = 0; d < v->rank; d++)
        perm[d] = v->rank - 1 - d;
    out_v->rank = c.rank;
    for (int d = 0; d < c.rank; d++) {
      const int a = n->op == IR_OP_TRANSPOSE ? (int)perm[d] : d;
      const int64_t step = c.strides[d] / cs[a],
                    start = n->op == IR_OP_TRANSPOSE ? 0 : c.offset / cs[a] % v->dims[a];
      out_v->dims[d] = c.dims[d];
      out_v->strides[d] = c.dims[d] == 1 ? 0 : step * v->strides[a];
      out_v->offset += start * v->strides[a];
    }
    break;
  }
  default: return -1;
  }
  out_v->out_rank = out_v->rank;
  memcpy(out_v->out_dims, out_v->dims, sizeof out_v->dims);
  return 0;
}

int ir_view_unfollow(const ir_node *n, const ir_view *y, ir_view *x) {
  memset(x, 0, sizeof *x);
  const ir_value *in = n->nin > 0 ? n->in[0] : NULL;
  if (!in || in->rank > MAX_RANK || (n->op == IR_OP_TRANSPOSE && in->rank != y->rank)) return -1;
  for (int d = 0; d < in->rank; d++)
    if (in->dims[d] == 0) return -1;
  x->offset = y->offset;
  if (n->op == IR_OP_TRANSPOSE) { /* input dim perm[d] is output dim d */
    int64_t perm[MAX_RANK + 1];
    int count = ir_attr_ints(n, "perm", perm, MAX_RANK + 1);
    if (count < 0)
      for (int d = 0; d < y->rank; d++)
        perm[d] = y->rank - 1 - d;
    else if (count != y->rank)
      return -1;
    x->rank = y->rank;
    for (int d = 0; d < y->rank; d++) {
      if (perm[d] < 0 || perm[d] >= y->rank) return -1;
      x->dims[perm[d]] = y->dims[d], x->strides[perm[d]] = y->strides[d];
    }
    for (int d = 0; d < x->rank; d++)
      if (x->dims[d] != in->dims[d]) return -1;
  } else if (n->op == IR_OP_RESHAPE || n->op == IR_OP_FLATTEN || n->op == IR_OP_SQUEEZE ||
             n->op == IR_OP_UNSQUEEZE || n->op == IR_OP_IDENTITY) {
    if (regroup(y, in->rank, in->dims, x)) return -1;
  } else {
    return -1;
  }
  x->out_rank = x->rank;
  memcpy(x->out_dims, x->dims, sizeof x->dims);
  return 0;
}

const char *const ir_attn_view_attr[4] = {"q_view", "k_view", "v_view", "y_view"};

int ir_attn_operand(const ir_node *n, int t, ir_view *v) {
  memset(v, 0, sizeof *v);
  const ir_value *x = t < 3 ? (t < n->nin ? n->in[t] : NULL) : n->out[0];
  int64_t a[2 * MAX_RANK + 2];
  const int count = ir_attr_ints(n, ir_attn_view_attr[t], a, 2 * MAX_RANK + 2);
  if (count < 0) {
    if (!x || x->rank < 0 || x->rank > MAX_RANK) return -1;
    int64_t s = 1;
    v->rank = x->rank;
    for (int d = x->rank - 1; d >= 0; d--)
      v->dims[d] = x->dims[d], v->strides[d] = s, s *= x->dims[d];
  } else {
    if (count % 2 == 0 || count > 2 * MAX_RANK + 1 || a[0] < 0) return -1;
    v->rank = (count - 1) / 2, v->offset = a[0];
    for (int d = 0; d < v->rank; d++) {
      v->dims[d] = a[1 + d], v->strides[d] = a[1 + v->rank + d];
      if (v->dims[d] < 0) return -1;
    }
  }
  v->out_rank = v->rank;
  memcpy(v->out_dims, v->dims, sizeof v->dims);
  return 0;
}
