/* kernels_pad.c - the PAD task kind (contract in om_format.h): constant,
 * reflect, edge and wrap padding, and cropping with negative pads, over ND
 * tensors of any rank and dtype.
 *
 * y elements are the block unit. Every y coordinate minus its dim's
 * pad_begin is mapped into x by the mode (pad_src); where a coordinate
 * falls outside x in constant mode the constant's bytes are written.
 * The kernel works a row at a time (pad_geom: unpadded dims merged into
 * their outer neighbour, so rows are as long as they can be): the part of
 * a row inside x is one copy, the rest runs of the constant or elements
 * picked by pad_src; only the outer coordinates go through the mapping,
 * once per row. Zero-insertion (ConvTranspose's lowering) and the pads
 * around images run at memory speed instead of a divide per dim per
 * element. The
 * constant arrives in params as the bytes of y's dtype (8 at most), so the
 * kernel never converts it. Equal dtypes copy bytes; f16 <-> f32 converts.
 * The load-time check rejects a reflect over fewer than 2 elements and an
 * edge or wrap over none wherever padding reaches them.
 */
#include "runtime/kernels.h"

/* Source index along a dim of extent D for y coordinate c - pad_begin = i;
 * -1 when it is outside x in constant mode. */
static int64_t pad_src(int mode, int64_t i, int64_t D) {
  if (i >= 0 && i < D) return i;
  switch (mode) {
  case 1: { /* reflect: period 2(D - 1), edges not repeated */
    int64_t p = 2 * (D - 1), r = i % p;
    r = r < 0 ? r + p : r;
    return r < D ? r : p - r;
  }
  case 2: return i < 0 ? 0 : D - 1;
  case 3: {
    int64_t r = i % D;
    return r < 0 ? r + D : r;
  }
  default: return -1;
  }
}

/* y's dims with their begins and x's extents, merged: an unpadded dim (x
 * extent = y extent, begin 0) joins its outer neighbour when that one is
 * unpadded too, or in constant mode whatever its padding (the merged begin
 * is begin * the inner extent; reflect, edge and wrap need the outer
 * coordinate on its own). A zero-insertion [N, C, L, 1] -> [N, C, L, 8]
 * becomes rows of 8 under one outer dim, a Pad of W alone rows of W. */
typedef struct pad_geom {
  int rank;
  int64_t x[MAX_RANK], y[MAX_RANK], begin[MAX_RANK];
} pad_geom;

static void pad_geom_build(const om_tensor *x, const om_tensor *y, const int32_t *begin, int mode,
                           pad_geom *g) {
  g->rank = 0;
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t X = x->dims[d], Y = y->dims[d], b = begin[d];
    int unpadded = X == Y && b == 0;
    if (g->rank > 0 && unpadded) {
      int k = g->rank - 1, outer_unpadded = g->x[k] == g->y[k] && g->begin[k] == 0;
      if (outer_unpadded || mode == 0) {
        g->x[k] *= X, g->y[k] *= Y, g->begin[k] *= Y;
        continue;
      }
    }
    g->x[g->rank] = X, g->y[g->rank] = Y, g->begin[g->rank] = b;
    g->rank++;
  }
  if (g->rank == 0) g->x[0] = g->y[0] = 1, g->begin[0] = 0, g->rank = 1; /* a scalar */
}

/* n elements of `size` bytes, each the constant's bytes. */
static void pad_fill(uint8_t *dst, const uint8_t *value, size_t size, uint64_t n) {
  uint16_t v2;
  uint32_t v4;
  uint64_t v8;
  switch (size) {
  case 2:
    memcpy(&v2, value, 2);
    for (uint64_t k = 0; k < n; k++)
      memcpy(dst + 2 * k, &v2, 2);
    break;
  case 4:
    memcpy(&v4, value, 4);
    for (uint64_t k = 0; k < n; k++)
      memcpy(dst + 4 * k, &v4, 4);
    break;
  case 8:
    memcpy(&v8, value, 8);
    for (uint64_t k = 0; k < n; k++)
      memcpy(dst + 8 * k, &v8, 8);
    break;
  default: memset(dst, value[0], n); break;
  }
}

/* One y row being written: x's row (xrow: its first element), the inner
 * dim's x extent and begin, the dtypes. */
typedef struct pad_row {
  const uint8_t *xd;
  uint8_t *yd;
  uint64_t xrow;
  int64_t xw, begin;
  int xt, yt, mode;
  size_t xs, ys;
  const uint8_t *value;
} pad_row;

/* y columns [k0, k1) of the row starting at y element `at`: all read x
 * columns k - begin (inside x when `inside`, else through pad_src). */
static void pad_cols(const pad_row *r, uint64_t at, int64_t k0, int64_t k1, int inside) {
  uint8_t *to = r->yd + at * r->ys;
  if (k0 >= k1) return;
  if (!inside && r->mode == 0) {
    pad_fill(to, r->value, r->ys, (uint64_t)(k1 - k0));
    return;
  }
  if (inside && r->xs == r->ys) {
    memmove(to, r->xd + (r->xrow + (uint64_t)(k0 - r->begin)) * r->xs, (size_t)(k1 - k0) * r->xs);
    return;
  }
  for (int64_t k = k0; k < k1; k++) {
    uint64_t src = r->xrow + (uint64_t)(inside ? k - r->begin : pad_src(r->mode, k - r->begin, r->xw));
    if (r->xs == r->ys)
      memcpy(to + (uint64_t)(k - k0) * r->ys, r->xd + src * r->xs, r->ys);
    else
      rt_put(to, r->yt, (size_t)(k - k0), rt_get(r->xd, r->xt, (size_t)src));
  }
}

/* Elements [lo, hi) of y a row (innermost canonical dim) at a time: the
 * outer coordinates, kept as an odometer, name the x row (or none: the
 * piece is all constant); along the row the columns before x, inside it
 * (one copy) and after it. */
void rt_pad_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_PAD_T_X], *y = args->desc[OM_PAD_T_Y];
  uint8_t value[8];
  uint32_t lo32 = (uint32_t)task->params[OM_PAD_P_VALUE_LO], hi32 = (uint32_t)task->params[OM_PAD_P_VALUE_HI];
  uint64_t bits = (uint64_t)hi32 << 32 | lo32;
  for (size_t k = 0; k < 8; k++)
    value[k] = (uint8_t)(bits >> (8 * k)); /* little-endian bytes */
  pad_row r = {.xd = args->data[OM_PAD_T_X],
               .yd = args->data[OM_PAD_T_Y],
               .xt = (int)x->dtype,
               .yt = (int)y->dtype,
               .mode = task->params[OM_PAD_P_MODE],
               .xs = dtype_size((int)x->dtype),
               .ys = dtype_size((int)y->dtype),
               .value = value};
  pad_geom g;
  pad_geom_build(x, y, task->params + OM_PAD_P_BEGIN, r.mode, &g);
  const int inner = g.rank - 1;
  const int64_t W = g.y[inner];
  r.xw = g.x[inner], r.begin = g.begin[inner];
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  if (lo >= hi) return;
  int64_t c[MAX_RANK]; /* outer coordinates of the current row */
  uint64_t rest = lo / (uint64_t)W;
  for (int d = inner - 1; d >= 0; d--)
    c[d] = (int64_t)(rest % (uint64_t)g.y[d]), rest /= (uint64_t)g.y[d];
  int64_t col = (int64_t)(lo % (uint64_t)W);
  for (uint64_t i = lo; i < hi;) {
    int64_t end = W - col < (int64_t)(hi - i) ? W : col + (int64_t)(hi - i), row = 0;
    for (int d = 0; d < inner && row >= 0; d++) {
      int64_t src = pad_src(r.mode, c[d] - g.begin[d], g.x[d]);
      row = src < 0 ? -1 : row * g.x[d] + src;
    }
    uint64_t at = i - (uint64_t)col; /* y element of the row's column 0 */
    if (row < 0) {
      pad_fill(r.yd + i * r.ys, value, r.ys, (uint64_t)(end - col));
    } else {
      r.xrow = (uint64_t)row * (uint64_t)r.xw;
      int64_t a = col > r.begin ? col : r.begin, b = end < r.begin + r.xw ? end : r.begin + r.xw;
      if (a >= b) a = b = end; /* no x column in this piece */
      pad_cols(&r, at + (uint64_t)col, col, a, 0);
      pad_cols(&r, at + (uint64_t)a, a, b, 1);
      pad_cols(&r, at + (uint64_t)b, b, end, 0);
    }
    i += (uint64_t)(end - col), col = 0;
    for (int d = inner - 1; d >= 0; d--) { /* next row */
      if (++c[d] < g.y[d]) break;
      c[d] = 0;
    }
  }
}

omrt_status rt_pad_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "PAD"};
  omrt_status s;
  const om_tensor *x, *y;
  if ((s = rt_chk_ntensors(&c, OM_PAD_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_PAD_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_PAD_T_Y, "y", &y)))
    return s;
  if ((s = rt_chk_copy_dtypes(&c, x, y))) return s;
  if (x->rank != y->rank) return rt_chk_fail(&c, "x rank %u != y rank %u", x->rank, y->rank);
  const int32_t *q = task->params;
  const int32_t mode = q[OM_PAD_P_MODE], lo32 = q[OM_PAD_P_VALUE_LO], hi32 = q[OM_PAD_P_VALUE_HI];
  if (mode < 0 || mode > 3)
    return rt_chk_fail(&c, "params[%d] mode = %d, expected 0..3", OM_PAD_P_MODE, mode);
  for (int k = OM_PAD_P_MODE + 1; k < OM_TASK_MAX_PARAMS; k++) {
    int used = (k >= OM_PAD_P_BEGIN && k < OM_PAD_P_BEGIN + (int)x->rank) ||
               (mode == 0 && (k == OM_PAD_P_VALUE_LO || k == OM_PAD_P_VALUE_HI));
    if (!used && q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  }
  const size_t ys = dtype_size((int)y->dtype);
  if (mode == 0 && ys < 8 && hi32 != 0)
    return rt_chk_fail(&c, "params[%d] = %d: the constant has %zu bytes", OM_PAD_P_VALUE_HI, hi32, ys);
  if (mode == 0 && ys < 4 && ((uint32_t)lo32 >> (8 * ys)) != 0)
    return rt_chk_fail(&c, "params[%d] = %d: the constant has %zu bytes", OM_PAD_P_VALUE_LO, lo32, ys);
  if (rt_elements(y) > 0)
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t D = x->dims[d], b = q[OM_PAD_P_BEGIN + d], first = -b,
              last = y->dims[d] - 1 - b; /* x range y reads */
      int outside = first < 0 || last >= D;
      if (mode == 0 || !outside) continue;
      if ((mode == 1 && D < 2) || D < 1)
        return rt_chk_fail(&c, "dim %u: %s padding of an extent-%lld dim", d,
                           mode == 1   ? "reflect"
                           : mode == 2 ? "edge"
                                       : "wrap",
                           (long long)D);
    }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
