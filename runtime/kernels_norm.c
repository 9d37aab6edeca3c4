/* kernels_norm.c - the vector unit's row normalizations: SOFTMAX (and
 * log-softmax) and LAYERNORM (contracts in om_format.h), and the row
 * instructions the kernels share (rt_vmax, rt_vexp_sum, rt_vsum,
 * rt_vsum_sqdev, rt_vload, rt_vstore in kernels.h).
 *
 * A row is staged in the UB as f32 (f16 widened on the way in), reduced
 * and rewritten there, and stored in the output's dtype: one read and one
 * write of memory per element when the row fits the UB, which it does for
 * every row a transformer normalizes (the UB holds 32K f32 per half).
 * Longer rows are streamed through the UB in chunks, one pass per
 * statistic. Reductions accumulate in f32 lanes (8 or 16 partial sums,
 * added up at the end), exp is the vector unit's om_vexp (common/vmath.h).
 *
 * LAYERNORM stages scale and bias once per block and each row once: the
 * residual is added as the row comes in (rounded to x's dtype, as the Add
 * it replaces stored it), mean and variance are two passes over the UB
 * copy (the variance from the squared deviations, not E[x^2] - E[x]^2,
 * which cancels), and the affine pass writes the row back. On AVX-512
 * hosts rt_layernorm_avx512 (kernels_vector_x86.c) runs the same
 * arithmetic with the passes fused.
 *
 * SOFTMAX along an axis that is not the last one normalizes `inner`
 * interleaved vectors: a run of up to 256 of them is staged as a
 * [len][lanes] block and reduced lane-wise, so every memory access stays
 * contiguous.
 *
 * The row instructions dispatch to rt_cpu()'s x86 builds
 * (kernels_vector_x86.c) when the host has AVX2, FMA and F16C; the
 * portable loops here compute the same values up to f32 summation order.
 */
#include <math.h>

#include "common/vmath.h"
#include "runtime/kernels.h"

/* --- the row instructions */

enum { LANES = 8 };   /* partial sums of the portable loops */
enum { CHUNK = 256 }; /* elements a stack buffer converts at a time */

float rt_vmax(const float *x, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->vmax) return cpu->vmax(x, n);
  float m[LANES];
  for (int j = 0; j < LANES; j++)
    m[j] = -INFINITY;
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++)
      m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  for (; i < n; i++)
    m[0] = x[i] > m[0] ? x[i] : m[0];
  for (int j = 1; j < LANES; j++)
    m[0] = m[j] > m[0] ? m[j] : m[0];
  return m[0];
}

float rt_vsum(const float *x, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->vsum) return cpu->vsum(x, n);
  float s[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++)
      s[j] += x[i + j];
  for (; i < n; i++)
    s[0] += x[i];
  for (int j = 1; j < LANES; j++)
    s[0] += s[j];
  return s[0];
}

float rt_vexp_sum(float *x, float sub, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->vexp_sum) return cpu->vexp_sum(x, sub, n);
  for (size_t i = 0; i < n; i++)
    x[i] = om_vexp(x[i] - sub);
  return rt_vsum(x, n);
}

float rt_vsum_sqdev(const float *x, float mean, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->vsum_sqdev) return cpu->vsum_sqdev(x, mean, n);
  float s[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) {
      float d = x[i + j] - mean;
      s[j] += d * d;
    }
  for (; i < n; i++) {
    float d = x[i] - mean;
    s[0] += d * d;
  }
  for (int j = 1; j < LANES; j++)
    s[0] += s[j];
  return s[0];
}

void rt_vload(float *dst, const void *src, int dt, size_t i0, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (dt == DT_FLOAT32)
    memcpy(dst, (const float *)src + i0, n * sizeof *dst);
  else if (!cpu->convert || !cpu->convert(dst, DT_FLOAT32, 0, src, dt, i0, n))
    rt_load_f32(dst, src, dt, i0, n);
}

void rt_vstore(void *dst, int dt, size_t i0, const float *src, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (dt == DT_FLOAT32)
    memcpy((float *)dst + i0, src, n * sizeof *src);
  else if (!cpu->convert || !cpu->convert(dst, dt, i0, src, DT_FLOAT32, 0, n))
    rt_store_f32(dst, dt, i0, src, n);
}

/* --- SOFTMAX */

typedef struct sm_io {
  const void *x;
  void *y;
  int xt, yt, is_log;
  float *buf, *tmp; /* UB halves of cap floats each */
  size_t cap;
} sm_io;

static void scale_run(float *x, float s, size_t n) {
  for (size_t i = 0; i < n; i++)
    x[i] *= s;
}

/* One contiguous vector x[base .. base+len). */
static void softmax_row(const sm_io *io, size_t base, size_t len) {
  float *b = io->buf, *t = io->tmp;
  if (len <= io->cap) { /* resident: one read, one write */
    rt_vload(b, io->x, io->xt, base, len);
    float m = rt_vmax(b, len), s;
    if (!io->is_log) {
      s = rt_vexp_sum(b, m, len);
      scale_run(b, 1.0f / s, len);
    } else {
      memcpy(t, b, len * sizeof *t);
      s = rt_vexp_sum(t, m, len);
      float off = m + logf(s);
      for (size_t i = 0; i < len; i++)
        b[i] -= off;
    }
    rt_vstore(io->y, io->yt, base, b, len);
    return;
  }
  float m = -INFINITY, s = 0.0f;
  for (size_t i = 0; i < len; i += io->cap) {
    size_t k = len - i < io->cap ? len - i : io->cap;
    rt_vload(b, io->x, io->xt, base + i, k);
    float mk = rt_vmax(b, k);
    m = mk > m ? mk : m;
  }
  for (size_t i = 0; i < len; i += io->cap) {
    size_t k = len - i < io->cap ? len - i : io->cap;
    rt_vload(b, io->x, io->xt, base + i, k);
    s += rt_vexp_sum(b, m, k);
  }
  float inv = 1.0f / s, off = m + logf(s);
  for (size_t i = 0; i < len; i += io->cap) {
    size_t k = len - i < io->cap ? len - i : io->cap;
    rt_vload(b, io->x, io->xt, base + i, k);
    if (io->is_log) {
      for (size_t j = 0; j < k; j++)
        b[j] -= off;
    } else {
      rt_vexp_sum(b, m, k);
      scale_run(b, inv, k);
    }
    rt_vstore(io->y, io->yt, base + i, b, k);
  }
}

enum { SM_MAX_LANES = 256 };

/* Vectors i0 .. i0+lanes-1 of the [len][inner] slab at `slab`, staged as a
 * [len][lanes] block (len * lanes <= cap). */
static void softmax_lanes(const sm_io *io, size_t slab, size_t len, size_t inner, size_t i0, size_t lanes) {
  float *b = io->buf, *t = io->tmp, mx[SM_MAX_LANES], s[SM_MAX_LANES];
  for (size_t k = 0; k < len; k++)
    rt_vload(b + k * lanes, io->x, io->xt, slab + k * inner + i0, lanes);
  for (size_t j = 0; j < lanes; j++)
    mx[j] = -INFINITY, s[j] = 0.0f;
  for (size_t k = 0; k < len; k++)
    for (size_t j = 0; j < lanes; j++)
      mx[j] = b[k * lanes + j] > mx[j] ? b[k * lanes + j] : mx[j];
  for (size_t k = 0; k < len; k++)
    for (size_t j = 0; j < lanes; j++)
      b[k * lanes + j] -= mx[j];
  memcpy(t, b, len * lanes * sizeof *t);
  rt_vexp_sum(t, 0.0f, len * lanes);
  for (size_t k = 0; k < len; k++)
    for (size_t j = 0; j < lanes; j++)
      s[j] += t[k * lanes + j];
  for (size_t j = 0; j < lanes; j++)
    s[j] = io->is_log ? logf(s[j]) : 1.0f / s[j];
  for (size_t k = 0; k < len; k++) {
    float *row = io->is_log ? b + k * lanes : t + k * lanes;
    for (size_t j = 0; j < lanes; j++)
      row[j] = io->is_log ? row[j] - s[j] : row[j] * s[j];
    rt_vstore(io->y, io->yt, slab + k * inner + i0, row, lanes);
  }
}

/* One vector strided by `inner`, element by element (a vector longer than
 * the UB holds even one lane of). */
static void softmax_strided(const sm_io *io, size_t base, size_t len, size_t st) {
  float mx = -INFINITY, part[LANES] = {0}, sum = 0.0f;
  for (size_t k = 0; k < len; k++) {
    float v = rt_get(io->x, io->xt, base + k * st);
    mx = v > mx ? v : mx;
  }
  for (size_t k = 0; k < len; k++)
    part[k % LANES] += om_vexp(rt_get(io->x, io->xt, base + k * st) - mx);
  for (int j = 0; j < LANES; j++)
    sum += part[j];
  float off = mx + logf(sum), inv = 1.0f / sum;
  for (size_t k = 0; k < len; k++) {
    float v = rt_get(io->x, io->xt, base + k * st);
    rt_put(io->y, io->yt, base + k * st, io->is_log ? v - off : om_vexp(v - mx) * inv);
  }
}

void rt_softmax_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *x = args->desc[OM_SOFTMAX_T_X], *y = args->desc[OM_SOFTMAX_T_Y];
  if (rt_elements(x) == 0) return; /* a 0 dim: no rows, however many the other dims count */
  const int coerce = task->params[OM_SOFTMAX_P_COERCE_2D] != 0;
  const uint32_t axis = (uint32_t)task->params[OM_SOFTMAX_P_AXIS];
  uint64_t outer = 1, len = 1, inner = 1;
  for (uint32_t d = 0; d < x->rank; d++) {
    uint64_t v = (uint64_t)x->dims[d];
    if (d < axis)
      outer *= v;
    else if (d == axis || coerce)
      len *= v;
    else
      inner *= v;
  }
  const size_t cap = core->ub_bytes / 2 / sizeof(float);
  sm_io io = {
      args->data[OM_SOFTMAX_T_X],          args->data[OM_SOFTMAX_T_Y], (int)x->dtype,           (int)y->dtype,
      task->params[OM_SOFTMAX_P_LOG] != 0, (float *)core->ub,          (float *)core->ub + cap, cap};
  uint64_t lo, hi;
  rt_block_range(outer * inner, task->block_dim, block, &lo, &hi);
  if (inner == 1) {
    for (uint64_t vec = lo; vec < hi; vec++)
      softmax_row(&io, (size_t)(vec * len), (size_t)len);
    return;
  }
  const uint64_t fit = len ? cap / len : SM_MAX_LANES;
  for (uint64_t vec = lo; vec < hi;) {
    uint64_t o = vec / inner, i0 = vec % inner, lanes = inner - i0;
    if (lanes > hi - vec) lanes = hi - vec;
    if (lanes > SM_MAX_LANES) lanes = SM_MAX_LANES;
    if (lanes > fit) lanes = fit;
    if (lanes == 0) {
      softmax_strided(&io, (size_t)(o * len * inner + i0), (size_t)len, (size_t)inner);
      vec++;
    } else {
      softmax_lanes(&io, (size_t)(o * len * inner), (size_t)len, (size_t)inner, (size_t)i0, (size_t)lanes);
      vec += lanes;
    }
  }
}

omrt_status rt_softmax_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "SOFTMAX"};
  const om_tensor *x, *y;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_SOFTMAX_NTENSORS)) ||
      (s = rt_chk_tensor(&c, OM_SOFTMAX_T_X, "x", 0, LAYOUT_ND, -1, 0, &x)) ||
      (s = rt_chk_tensor(&c, OM_SOFTMAX_T_Y, "y", 0, LAYOUT_ND, -1, 0, &y)) ||
      (s = rt_chk_same_dims(&c, "x", x, "y", y)))
    return s;
  const int32_t axis = task->params[OM_SOFTMAX_P_AXIS], coerce = task->params[OM_SOFTMAX_P_COERCE_2D],
                is_log = task->params[OM_SOFTMAX_P_LOG];
  if (axis < 0 || (uint32_t)axis >= x->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d, rank %u", OM_SOFTMAX_P_AXIS, axis, x->rank);
  if ((uint32_t)coerce > 1 || (uint32_t)is_log > 1)
    return rt_chk_fail(&c, "params coerce_2d = %d, log = %d, expected 0 or 1", coerce, is_log);
  uint64_t vectors = 1;
  for (int32_t d = 0; d < (int32_t)x->rank; d++)
    if (d < axis || (d > axis && !coerce)) vectors *= (uint64_t)x->dims[d];
  return rt_chk_block_dim(&c, vectors, "vectors");
}

/* --- LAYERNORM */

void rt_layernorm_rows(const rt_ln_rows *a, uint64_t lo, uint64_t hi, float *row) {
  const rt_cpu_paths *cpu = rt_cpu();
  const size_t D = a->d;
  float tmp[CHUNK];
  for (uint64_t r = lo; r < hi; r++) {
    const size_t base = (size_t)(r * D);
    rt_vload(row, a->x, a->xt, base, D);
    if (a->res) { /* s = x + residual, rounded to x's dtype as the Add stored it */
      for (size_t i = 0; i < D; i += CHUNK) {
        size_t k = D - i < CHUNK ? D - i : CHUNK;
        rt_vload(tmp, a->res, a->rt, base + i, k);
        for (size_t j = 0; j < k; j++)
          row[i + j] += tmp[j];
        if (a->xt == DT_FLOAT16) {
          if (cpu->round16)
            cpu->round16(row + i, (uint32_t)k);
          else
            for (size_t j = 0; j < k; j++)
              row[i + j] = rt_h2f(rt_f2h(row[i + j]));
        }
      }
      if (a->sum) rt_vstore(a->sum, a->st, base, row, D);
    }
    const float mean = a->rms ? 0.0f : rt_vsum(row, D) / (float)D;
    const float inv = 1.0f / sqrtf(rt_vsum_sqdev(row, mean, D) / (float)D + a->eps);
    const float *scale = a->scale, *bias = a->bias;
    if (scale && bias)
      for (size_t i = 0; i < D; i++)
        row[i] = (row[i] - mean) * inv * scale[i] + bias[i];
    else if (scale)
      for (size_t i = 0; i < D; i++)
        row[i] = (row[i] - mean) * inv * scale[i];
    else
      for (size_t i = 0; i < D; i++)
        row[i] = (row[i] - mean) * inv + (bias ? bias[i] : 0.0f);
    rt_vstore(a->y, a->yt, base, row, D);
  }
}

void rt_layernorm_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *x = args->desc[OM_LAYERNORM_T_X], *y = args->desc[OM_LAYERNORM_T_Y];
  const om_tensor *sc = args->desc[OM_LAYERNORM_T_SCALE], *bi = args->desc[OM_LAYERNORM_T_BIAS];
  const om_tensor *res = args->desc[OM_LAYERNORM_T_RESIDUAL], *sum = args->desc[OM_LAYERNORM_T_SUM];
  const uint32_t axis = (uint32_t)task->params[OM_LAYERNORM_P_AXIS];
  const float eps = rt_param_f32(task->params[OM_LAYERNORM_P_EPSILON]);
  const int rms = task->params[OM_LAYERNORM_P_RMS] != 0, xt = (int)x->dtype;
  if (rt_elements(x) == 0) return; /* a 0 dim: no rows, however many the other dims count */
  uint64_t rows = 1, d = 1;
  for (uint32_t k = 0; k < x->rank; k++)
    *(k < axis ? &rows : &d) *= (uint64_t)x->dims[k];
  const size_t D = (size_t)d;
  float *row = (float *)core->ub, *scale = row + D, *bias = scale + D;
  uint64_t lo, hi;
  rt_block_range(rows, task->block_dim, block, &lo, &hi);
  if (lo == hi) return;
  if (sc) rt_vload(scale, args->data[OM_LAYERNORM_T_SCALE], (int)sc->dtype, 0, D);
  if (bi) rt_vload(bias, args->data[OM_LAYERNORM_T_BIAS], (int)bi->dtype, 0, D);
  const rt_ln_rows a = {.x = args->data[OM_LAYERNORM_T_X],
                        .res = res ? args->data[OM_LAYERNORM_T_RESIDUAL] : NULL,
                        .sum = res && sum ? args->data[OM_LAYERNORM_T_SUM] : NULL,
                        .y = args->data[OM_LAYERNORM_T_Y],
                        .xt = xt,
                        .rt = res ? (int)res->dtype : 0,
                        .st = sum ? (int)sum->dtype : 0,
                        .yt = (int)y->dtype,
                        .scale = sc ? scale : NULL,
                        .bias = bi ? bias : NULL,
                        .eps = eps,
                        .rms = rms,
                        .d = D};
  const rt_cpu_paths *cpu = rt_cpu();
  if (!cpu->layernorm || !cpu->layernorm(&a, lo, hi, row)) rt_layernorm_rows(&a, lo, hi, row);
}

omrt_status rt_layernorm_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "LAYERNORM"};
  const om_tensor *x, *sc, *bi, *res, *y, *sum;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_LAYERNORM_NTENSORS)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_X, "x", 0, LAYOUT_ND, -1, 0, &x)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_SCALE, "scale", 1, LAYOUT_ND, -1, 0, &sc)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_BIAS, "bias", 1, LAYOUT_ND, -1, 0, &bi)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_RESIDUAL, "residual", 1, LAYOUT_ND, -1, 0, &res)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_Y, "y", 0, LAYOUT_ND, -1, 0, &y)) ||
      (s = rt_chk_tensor(&c, OM_LAYERNORM_T_SUM, "sum", 1, LAYOUT_ND, -1, 0, &sum)) ||
      (s = rt_chk_same_dims(&c, "x", x, "y", y)) ||
      (res && (s = rt_chk_same_dims(&c, "x", x, "residual", res))) ||
      (sum && (s = rt_chk_same_dims(&c, "x", x, "sum", sum))))
    return s;
  if (sum && !res) return rt_chk_fail(&c, "sum without a residual");
  if ((res && res->dtype != x->dtype) || (sum && sum->dtype != x->dtype))
    return rt_chk_fail(&c, "residual and sum must have x's dtype %u", x->dtype);
  const int32_t axis = task->params[OM_LAYERNORM_P_AXIS], rms = task->params[OM_LAYERNORM_P_RMS];
  const float eps = rt_param_f32(task->params[OM_LAYERNORM_P_EPSILON]);
  if (axis < 0 || (uint32_t)axis >= x->rank)
    return rt_chk_fail(&c, "params[%d] axis = %d, rank %u", OM_LAYERNORM_P_AXIS, axis, x->rank);
  if (!(eps >= 0.0f) || isinf(eps))
    return rt_chk_fail(&c, "params[%d] epsilon = %g, expected finite and >= 0", OM_LAYERNORM_P_EPSILON,
                       (double)eps);
  if ((uint32_t)rms > 1)
    return rt_chk_fail(&c, "params[%d] rms = %d, expected 0 or 1", OM_LAYERNORM_P_RMS, rms);
  for (int k = OM_LAYERNORM_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k] != 0)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, task->params[k]);
  uint64_t rows = 1, d = 1;
  for (int32_t k = 0; k < (int32_t)x->rank; k++)
    *(k < axis ? &rows : &d) *= (uint64_t)x->dims[k];
  if (d == 0) return rt_chk_fail(&c, "the row (x dims from axis %d on) is empty", axis);
  if ((sc && rt_elements(sc) != d) || (bi && rt_elements(bi) != d))
    return rt_chk_fail(&c, "scale (%llu elements) and bias (%llu) must hold one row of %llu",
                       (unsigned long long)(sc ? rt_elements(sc) : d),
                       (unsigned long long)(bi ? rt_elements(bi) : d), (unsigned long long)d);
  if (d > m->def->ub_bytes / 12)
    return rt_chk_fail(&c, "a row of %llu elements: 3 x 4 bytes each exceed the UB's %u bytes",
                       (unsigned long long)d, m->def->ub_bytes);
  return rt_chk_block_dim(&c, rows, "rows");
}
