/* kernels_reduce.c - the REDUCE task kind (contract in om_format.h): sums,
 * means, extrema, products, norms, log-sums and arg-extrema over any set of
 * axes of an ND tensor.
 *
 * The kernel first canonicalises x's dims: dims of extent 1 are dropped and
 * neighbours that are both reduced or both kept merge into one run, so a
 * reduction over [N, C, H, W] axes {2, 3} becomes [outer = N*C kept,
 * inner = H*W reduced], and any axes set becomes at most MAX_RANK runs that
 * alternate kept / reduced. A y element (the block unit) is a position in
 * the kept runs, C order, which is y's own C order whether or not y keeps
 * the reduced dims as 1s. Its reduced elements are visited with an odometer
 * over the reduced runs (one strided loop when there is a single reduced
 * run, the common case). f16 and f32 load as f32 and accumulate in f32, f64
 * in f64 (LOGSUMEXP takes the maximum first, then sums exp(x - max)); sums
 * add PAIR_BLOCK terms in sequence and the block sums pairwise, so that the
 * rounding error of a mean over half a million elements (GroupNorm's
 * statistics over C x T) stays near f32's epsilon instead of growing with
 * the count (reduce_run: the same sums over a contiguous reduced run, read
 * a block at a time); integers of every width accumulate in uint64 (wrapping, as the contract
 * says) and are stored truncated to y's dtype; extrema compare as the
 * dtype's numbers (u64 unsigned). Arg-extrema compare floats in f64 and
 * integers in 64 bits and
 * keep the first (or, with select_last_index, the last) extreme position
 * along the one reduced axis. Nothing is staged in the buffers, nothing is
 * allocated.
 */
#include "runtime/kernels.h"

#include <math.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime/elem.h"

/* The canonical form: runs of dims, each kept or reduced, C order. */
typedef struct red_geom {
  int nkept, nred;
  int64_t kept[MAX_RANK], kept_stride[MAX_RANK]; /* extents, x strides (elements) */
  int64_t red[MAX_RANK], red_stride[MAX_RANK];
  uint64_t count; /* reduced elements per y element */
} red_geom;

static void red_geom_build(const om_tensor *x, uint32_t mask, red_geom *g) {
  int64_t ext[MAX_RANK], str[MAX_RANK];
  int is_red[MAX_RANK], n = 0;
  int64_t stride = 1;
  for (int d = (int)x->rank - 1; d >= 0; d--) { /* innermost first */
    int64_t e = x->dims[d];
    int r = (int)((mask >> d) & 1u);
    if (e != 1) {
      if (n > 0 && is_red[n - 1] == r && str[n - 1] * ext[n - 1] == stride) {
        ext[n - 1] *= e;
      } else {
        ext[n] = e, str[n] = stride, is_red[n] = r;
        n++;
      }
    }
    stride *= e;
  }
  g->nkept = g->nred = 0;
  g->count = 1;
  for (int i = n - 1; i >= 0; i--) { /* back to C order */
    if (is_red[i]) {
      g->red[g->nred] = ext[i], g->red_stride[g->nred++] = str[i];
      g->count *= (uint64_t)ext[i];
    } else {
      g->kept[g->nkept] = ext[i], g->kept_stride[g->nkept++] = str[i];
    }
  }
}

/* x offset of y element `o` (the first of its reduced elements). */
static int64_t red_base(const red_geom *g, uint64_t o) {
  int64_t at = 0;
  for (int i = g->nkept - 1; i >= 0; i--) {
    at += (int64_t)(o % (uint64_t)g->kept[i]) * g->kept_stride[i];
    o /= (uint64_t)g->kept[i];
  }
  return at;
}

/* Offsets of the reduced elements of one y element, in C order. */
typedef struct red_iter {
  const red_geom *g;
  int64_t idx[MAX_RANK];
  int64_t at;
} red_iter;

static void red_iter_start(red_iter *it, const red_geom *g, int64_t base) {
  it->g = g;
  it->at = base;
  memset(it->idx, 0, sizeof it->idx);
}

static void red_iter_next(red_iter *it) {
  const red_geom *g = it->g;
  for (int i = g->nred - 1; i >= 0; i--) {
    it->at += g->red_stride[i];
    if (++it->idx[i] < g->red[i]) return;
    it->at -= g->red_stride[i] * g->red[i];
    it->idx[i] = 0;
  }
}

static int is_float_dt(uint32_t dt) { return dt == DT_FLOAT16 || dt == DT_FLOAT32; }

/* Pairwise summation: terms are added PAIR_BLOCK at a time in sequence; the
 * block sums go through a binary counter of partial sums (part[], at most
 * one per power of two blocks), so each term passes through O(log n)
 * additions. PAIR_PUSH adds block sum s; PAIR_TOTAL folds the partials into
 * s, the last (partial) block's sum. */
enum { PAIR_BLOCK = 64, PAIR_DEPTH = 64 };
#define PAIR_PUSH(part, depth, blocks, s)                                                                    \
  do {                                                                                                       \
    for (uint64_t c_ = (blocks)++; c_ & 1u; c_ >>= 1)                                                        \
      (s) += (part)[--(depth)];                                                                              \
    (part)[(depth)++] = (s);                                                                                 \
  } while (0)
#define PAIR_TOTAL(part, depth, s)                                                                           \
  do {                                                                                                       \
    while ((depth) > 0)                                                                                      \
      (s) += (part)[--(depth)];                                                                              \
  } while (0)

/* The float reduction in accumulator type T with math functions EXP, LOG,
 * SQRT, FABS; GET reads one x element as T. */
#define REDUCE_FLOAT(name, T, GET, EXP, LOG, SQRT, FABS)                                                     \
  static T name(int op, const red_geom *g, const void *xd, int xt, int64_t base) {                           \
    red_iter it;                                                                                             \
    uint64_t n = g->count;                                                                                   \
    if (op == OM_REDUCE_LOGSUMEXP) {                                                                         \
      T mx = -INFINITY, sum = 0;                                                                             \
      red_iter_start(&it, g, base);                                                                          \
      for (uint64_t k = 0; k < n; k++, red_iter_next(&it)) {                                                 \
        T v = GET(xd, xt, (size_t)it.at);                                                                    \
        mx = v > mx ? v : mx;                                                                                \
      }                                                                                                      \
      if (isinf(mx)) return mx; /* empty (-inf), or an infinite element */                                   \
      red_iter_start(&it, g, base);                                                                          \
      for (uint64_t k = 0; k < n; k++, red_iter_next(&it))                                                   \
        sum += EXP(GET(xd, xt, (size_t)it.at) - mx);                                                         \
      return mx + LOG(sum);                                                                                  \
    }                                                                                                        \
    T acc = op == OM_REDUCE_PROD ? 1 : op == OM_REDUCE_MAX ? -INFINITY : op == OM_REDUCE_MIN ? INFINITY : 0; \
    T part[PAIR_DEPTH];                                                                                      \
    int depth = 0, in_block = 0;                                                                             \
    uint64_t blocks = 0;                                                                                     \
    red_iter_start(&it, g, base);                                                                            \
    for (uint64_t k = 0; k < n; k++, red_iter_next(&it)) {                                                   \
      T v = GET(xd, xt, (size_t)it.at);                                                                      \
      switch (op) {                                                                                          \
      case OM_REDUCE_MAX: acc = v > acc || isnan(v) ? v : acc; continue;                                     \
      case OM_REDUCE_MIN: acc = v < acc || isnan(v) ? v : acc; continue;                                     \
      case OM_REDUCE_PROD: acc *= v; continue;                                                               \
      case OM_REDUCE_L1: acc += FABS(v); break;                                                              \
      case OM_REDUCE_L2:                                                                                     \
      case OM_REDUCE_SUMSQUARE: acc += v * v; break;                                                         \
      default: acc += v; break; /* SUM, MEAN, LOGSUM */                                                      \
      }                                                                                                      \
      if (++in_block == PAIR_BLOCK) { /* a sum: the block goes to the partials */                            \
        PAIR_PUSH(part, depth, blocks, acc);                                                                 \
        acc = 0, in_block = 0;                                                                               \
      }                                                                                                      \
    }                                                                                                        \
    PAIR_TOTAL(part, depth, acc);                                                                            \
    switch (op) {                                                                                            \
    case OM_REDUCE_MEAN: return acc / (T)n; /* 0/0 = NaN for no elements */                                  \
    case OM_REDUCE_L2: return SQRT(acc);                                                                     \
    case OM_REDUCE_LOGSUM: return LOG(acc);                                                                  \
    default: return acc;                                                                                     \
    }                                                                                                        \
  }
REDUCE_FLOAT(reduce_float, float, rt_get, expf, logf, sqrtf, fabsf)
REDUCE_FLOAT(reduce_double, double, elem_get, exp, log, sqrt, fabs)

/* Sums of RUN_LANES whole pair blocks at v[j * PAIR_BLOCK ..] into s[j],
 * each block added in sequence from 0 as reduce_float does (term: 0 the
 * element, 1 its absolute value, 2 its square): the blocks are independent
 * chains, so they run side by side instead of one add waiting for the
 * last, and every block sum has the same bits. */
enum { RUN_LANES = 8 };
#define BLOCK_SUMS(T)                                                                                        \
  for (int i = 0; i < PAIR_BLOCK; i++)                                                                       \
    for (int j = 0; j < RUN_LANES; j++) {                                                                    \
      float t = v[j * PAIR_BLOCK + i];                                                                       \
      s[j] += T;                                                                                             \
    }
static void block_sums(const float *v, int term, float *s) {
  for (int j = 0; j < RUN_LANES; j++)
    s[j] = 0;
  switch (term) {
  case 0: BLOCK_SUMS(t) break;
  case 1: BLOCK_SUMS(fabsf(t)) break;
  default: BLOCK_SUMS(t * t) break;
  }
}
#undef BLOCK_SUMS

/* The scalar extremum loop, acc = v > acc || isnan(v) ? v : acc (MAX;
 * < for MIN): the last NaN wins, and among equal values the first. */
static float extreme_seq(const float *v, size_t m, float acc, int max) {
  for (size_t i = 0; i < m; i++)
    acc = (max ? v[i] > acc : v[i] < acc) || isnan(v[i]) ? v[i] : acc;
  return acc;
}

/* extreme_seq's result, 8 lanes at a time with SSE2 (x86-64's baseline):
 * without a NaN the largest (smallest) value is one number, so the lanes
 * agree with the scalar loop whenever it is not a zero, whose sign the
 * first zero seen decides (a ReLU output's minimum: found by a scan that
 * stops there). A NaN in v or acc takes extreme_seq (as does every other
 * target). */
static float run_extreme(const float *v, size_t m, float acc, int max) {
#if defined(__x86_64__) && defined(__SSE2__)
  __m128 a0 = _mm_set1_ps(acc), a1 = a0, un = _mm_cmpunord_ps(a0, a0);
  size_t i = 0;
  for (; i + 8 <= m; i += 8) {
    __m128 t0 = _mm_loadu_ps(v + i), t1 = _mm_loadu_ps(v + i + 4);
    un = _mm_or_ps(un, _mm_cmpunord_ps(t0, t1));
    a0 = max ? _mm_max_ps(a0, t0) : _mm_min_ps(a0, t0);
    a1 = max ? _mm_max_ps(a1, t1) : _mm_min_ps(a1, t1);
  }
  float lane[8];
  _mm_storeu_ps(lane, a0);
  _mm_storeu_ps(lane + 4, a1);
  float r = extreme_seq(v + i, m - i, extreme_seq(lane, 8, acc, max), max);
  int nan = _mm_movemask_ps(un) != 0;
  for (; i < m; i++)
    nan |= isnan(v[i]);
  if (nan) return extreme_seq(v, m, acc, max);
  if (r != 0 || acc == 0) return r == 0 ? acc : r;
  size_t z = 0; /* a zero extremum: the first zero seen, acc's when it is one */
  while (v[z] != 0)
    z++;
  return v[z];
#else
  return extreme_seq(v, m, acc, max);
#endif
}

/* reduce_float over one contiguous run of n f16 or f32 elements at x[base..]
 * (a single reduced run of stride 1: a mean over H*W, or over all of
 * GroupNorm's C x T): the same operations in the same order per pair block,
 * so the same bits, with the elements loaded as f32 (rt_load_f32, a loop
 * that vectorizes), each op's loop free of the iterator and the per-element
 * dtype and op dispatch, and the sums' whole blocks taken RUN_LANES at a
 * time (block_sums). LOGSUMEXP keeps the general path. */
static float reduce_run(int op, const void *xd, int xt, int64_t base, uint64_t n) {
  float acc = op == OM_REDUCE_PROD ? 1 : op == OM_REDUCE_MAX ? -INFINITY : op == OM_REDUCE_MIN ? INFINITY : 0;
  float part[PAIR_DEPTH], v[PAIR_BLOCK * RUN_LANES], sums[RUN_LANES];
  int depth = 0;
  uint64_t blocks = 0, k = 0;
  const int sum = op != OM_REDUCE_MAX && op != OM_REDUCE_MIN && op != OM_REDUCE_PROD;
  const int term = op == OM_REDUCE_L1 ? 1 : op == OM_REDUCE_L2 || op == OM_REDUCE_SUMSQUARE ? 2 : 0;
  for (; sum && n - k >= PAIR_BLOCK * RUN_LANES; k += PAIR_BLOCK * RUN_LANES) {
    rt_load_f32(v, xd, xt, (size_t)base + (size_t)k, PAIR_BLOCK * RUN_LANES);
    block_sums(v, term, sums);
    for (int j = 0; j < RUN_LANES; j++) {
      float b = sums[j];
      PAIR_PUSH(part, depth, blocks, b);
    }
  }
  /* An extremum has no pairwise blocks: run_extreme over the largest chunks
   * the buffer holds (its result is extreme_seq's whatever the chunking). */
  if (op == OM_REDUCE_MAX || op == OM_REDUCE_MIN) {
    for (; k < n; k += PAIR_BLOCK * RUN_LANES) {
      size_t m = n - k < PAIR_BLOCK * RUN_LANES ? (size_t)(n - k) : PAIR_BLOCK * RUN_LANES;
      rt_load_f32(v, xd, xt, (size_t)base + (size_t)k, m);
      acc = run_extreme(v, m, acc, op == OM_REDUCE_MAX);
    }
    return acc;
  }
  for (; k < n; k += PAIR_BLOCK) {
    size_t m = n - k < PAIR_BLOCK ? (size_t)(n - k) : PAIR_BLOCK;
    rt_load_f32(v, xd, xt, (size_t)base + (size_t)k, m);
    switch (op) {
    case OM_REDUCE_PROD:
      for (size_t i = 0; i < m; i++)
        acc *= v[i];
      continue;
    case OM_REDUCE_L1:
      for (size_t i = 0; i < m; i++)
        acc += fabsf(v[i]);
      break;
    case OM_REDUCE_L2:
    case OM_REDUCE_SUMSQUARE:
      for (size_t i = 0; i < m; i++)
        acc += v[i] * v[i];
      break;
    default: /* SUM, MEAN, LOGSUM */
      for (size_t i = 0; i < m; i++)
        acc += v[i];
      break;
    }
    if (m == PAIR_BLOCK) { /* a sum: the block goes to the partials */
      PAIR_PUSH(part, depth, blocks, acc);
      acc = 0;
    }
  }
  PAIR_TOTAL(part, depth, acc);
  switch (op) {
  case OM_REDUCE_MEAN: return acc / (float)n; /* 0/0 = NaN for no elements */
  case OM_REDUCE_L2: return sqrtf(acc);
  case OM_REDUCE_LOGSUM: return logf(acc);
  default: return acc;
  }
}

/* Integers are held as int64 (elem_get_int: sign- or zero-extended); u64 values
 * above INT64_MAX compare correctly after flipping the top bit. */
static int64_t ord_key(uint32_t dt, int64_t v) {
  return dt == DT_UINT64 ? (int64_t)((uint64_t)v ^ (1ull << 63)) : v;
}

static int64_t int_lowest(uint32_t dt) {
  switch (dt) {
  case DT_INT64: return INT64_MIN;
  case DT_INT32: return INT32_MIN;
  case DT_INT16: return INT16_MIN;
  case DT_INT8: return INT8_MIN;
  default: return 0; /* unsigned, bool */
  }
}

static int64_t int_highest(uint32_t dt) {
  switch (dt) {
  case DT_INT64: return INT64_MAX;
  case DT_INT32: return INT32_MAX;
  case DT_INT16: return INT16_MAX;
  case DT_INT8: return INT8_MAX;
  case DT_UINT64: return -1; /* all ones */
  case DT_UINT32: return UINT32_MAX;
  case DT_UINT16: return UINT16_MAX;
  case DT_BOOL: return 1;
  default: return UINT8_MAX;
  }
}

static int64_t reduce_int(int op, const red_geom *g, const void *xd, uint32_t xt, int64_t base) {
  red_iter it;
  uint64_t acc = op == OM_REDUCE_PROD ? 1u : 0u;
  int64_t ext = op == OM_REDUCE_MAX ? int_lowest(xt) : int_highest(xt);
  int uns = rt_dtype_is_unsigned((int)xt);
  red_iter_start(&it, g, base);
  for (uint64_t k = 0; k < g->count; k++, red_iter_next(&it)) {
    int64_t v = elem_get_int(xd, (int)xt, (size_t)it.at);
    switch (op) {
    case OM_REDUCE_MAX: ext = ord_key(xt, v) > ord_key(xt, ext) ? v : ext; break;
    case OM_REDUCE_MIN: ext = ord_key(xt, v) < ord_key(xt, ext) ? v : ext; break;
    case OM_REDUCE_PROD: acc *= (uint64_t)v; break;
    case OM_REDUCE_L1: acc += v < 0 && !uns ? 0u - (uint64_t)v : (uint64_t)v; break;
    case OM_REDUCE_SUMSQUARE: acc += (uint64_t)v * (uint64_t)v; break;
    default: acc += (uint64_t)v; break; /* SUM */
    }
  }
  return op == OM_REDUCE_MAX || op == OM_REDUCE_MIN ? ext : (int64_t)acc;
}

/* Position along the reduced axis of the first (last) extreme element. */
static int64_t reduce_arg(int op, int last, const red_geom *g, const void *xd, uint32_t xt, int64_t base) {
  int64_t best = 0, stride = g->nred ? g->red_stride[0] : 1;
  int is_max = op == OM_REDUCE_ARGMAX;
  if (elem_is_float((int)xt)) { /* f16 and f32 compare exactly in double too */
    double bv = elem_get(xd, (int)xt, (size_t)base);
    for (int64_t k = 1; k < (int64_t)g->count; k++) {
      double v = elem_get(xd, (int)xt, (size_t)(base + k * stride));
      if (is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv))) bv = v, best = k;
    }
  } else {
    int64_t bv = ord_key(xt, elem_get_int(xd, (int)xt, (size_t)base));
    for (int64_t k = 1; k < (int64_t)g->count; k++) {
      int64_t v = ord_key(xt, elem_get_int(xd, (int)xt, (size_t)(base + k * stride)));
      if (is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv))) bv = v, best = k;
    }
  }
  return best;
}

void rt_reduce_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *x = args->desc[OM_REDUCE_T_X], *y = args->desc[OM_REDUCE_T_Y];
  const void *xd = args->data[OM_REDUCE_T_X];
  void *yd = args->data[OM_REDUCE_T_Y];
  const int op = task->params[OM_REDUCE_P_OP], last = task->params[OM_REDUCE_P_SELECT_LAST_INDEX] != 0;
  red_geom g;
  red_geom_build(x, (uint32_t)task->params[OM_REDUCE_P_AXES], &g);
  const int contiguous = g.nred == 1 && g.red_stride[0] == 1 && op != OM_REDUCE_LOGSUMEXP;
  uint64_t lo, hi;
  rt_block_range(rt_elements(y), task->block_dim, block, &lo, &hi);
  for (uint64_t o = lo; o < hi; o++) {
    int64_t base = red_base(&g, o);
    if (op == OM_REDUCE_ARGMAX || op == OM_REDUCE_ARGMIN)
      ((int64_t *)yd)[o] = reduce_arg(op, last, &g, xd, x->dtype, base);
    else if (x->dtype == DT_DOUBLE)
      ((double *)yd)[o] = reduce_double(op, &g, xd, (int)x->dtype, base);
    else if (is_float_dt(x->dtype) && contiguous)
      rt_put(yd, (int)y->dtype, (size_t)o, reduce_run(op, xd, (int)x->dtype, base, g.count));
    else if (is_float_dt(x->dtype))
      rt_put(yd, (int)y->dtype, (size_t)o, reduce_float(op, &g, xd, (int)x->dtype, base));
    else
      elem_put_int(yd, (int)y->dtype, (size_t)o, reduce_int(op, &g, xd, x->dtype, base));
  }
}

/* The dtypes op accepts for x; y's follow from x's (om_format.h). */
static int x_dtype_ok(int op, uint32_t dt) {
  int fl = elem_is_float((int)dt), wide = rt_dtype_is_int((int)dt) && dtype_size((int)dt) > 1;
  int narrow = dt == DT_INT8 || dt == DT_UINT8;
  switch (op) {
  case OM_REDUCE_MAX:
  case OM_REDUCE_MIN: return fl || wide || narrow || dt == DT_BOOL;
  case OM_REDUCE_ARGMAX:
  case OM_REDUCE_ARGMIN: return fl || wide || narrow;
  case OM_REDUCE_SUM:
  case OM_REDUCE_PROD:
  case OM_REDUCE_L1:
  case OM_REDUCE_SUMSQUARE: return fl || wide;
  default: return fl;
  }
}

omrt_status rt_reduce_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "REDUCE"};
  const om_tensor *x = NULL, *y = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_REDUCE_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_REDUCE_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_REDUCE_T_Y, "y", &y)))
    return s;
  const int32_t *q = task->params;
  const int32_t op = q[OM_REDUCE_P_OP], axes = q[OM_REDUCE_P_AXES], last = q[OM_REDUCE_P_SELECT_LAST_INDEX];
  if (op < 0 || op >= OM_REDUCE_OP_COUNT)
    return rt_chk_fail(&c, "params[%d] op = %d unknown", OM_REDUCE_P_OP, op);
  uint32_t mask = (uint32_t)axes;
  if (axes < 0 || mask >= (1u << x->rank))
    return rt_chk_fail(&c, "params[%d] axes = 0x%x names dims beyond x's rank %u", OM_REDUCE_P_AXES, mask,
                       x->rank);
  int is_arg = op == OM_REDUCE_ARGMAX || op == OM_REDUCE_ARGMIN;
  if (last != 0 && (last != 1 || !is_arg))
    return rt_chk_fail(&c, "params[%d] select_last_index = %d, expected 0%s", OM_REDUCE_P_SELECT_LAST_INDEX,
                       last, is_arg ? " or 1" : "");
  for (int k = OM_REDUCE_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (q[k] != 0) return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, q[k]);
  if (!x_dtype_ok(op, x->dtype)) return rt_chk_fail(&c, "x dtype %u is not accepted by op %d", x->dtype, op);
  if (is_arg                  ? y->dtype != DT_INT64
      : is_float_dt(x->dtype) ? !is_float_dt(y->dtype)
                              : y->dtype != x->dtype) /* f64: y f64 */
    return rt_chk_fail(&c, "y dtype %u does not go with x dtype %u for op %d", y->dtype, x->dtype, op);
  int nred = __builtin_popcount(mask);
  if (is_arg) {
    if (nred != 1)
      return rt_chk_fail(&c, "arg-extrema reduce one axis, params[%d] axes = 0x%x", OM_REDUCE_P_AXES, mask);
    if (x->dims[__builtin_ctz(mask)] < 1)
      return rt_chk_fail(&c, "arg-extremum over an empty axis %d", __builtin_ctz(mask));
  }
  /* y: x's dims with the reduced ones all 1, or all left out */
  int keep = y->rank == x->rank;
  if (!keep && y->rank + (uint32_t)nred != x->rank)
    return rt_chk_fail(&c, "y rank %u, expected %u (keepdims) or %u", y->rank, x->rank,
                       x->rank - (uint32_t)nred);
  for (uint32_t d = 0, k = 0; d < x->rank; d++) {
    int red = (int)((mask >> d) & 1u);
    if (red && !keep) continue;
    int64_t want = red ? 1 : x->dims[d];
    if (y->dims[k] != want)
      return rt_chk_fail(&c, "y dims[%u] = %lld, expected %lld (x dims[%u] %s)", k, (long long)y->dims[k],
                         (long long)want, d, red ? "reduced" : "kept");
    k++;
  }
  return rt_chk_block_dim(&c, rt_elements(y), "y elements");
}
