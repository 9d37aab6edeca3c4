/* kernels_recurrence.c - RECURRENCE (contract in om_tasks.h): one
 * direction of an LSTM, GRU or RNN over every time step in one task.
 *
 * A block owns batch rows and runs every step of each: the state (h, c)
 * and the gate accumulators stay in the UB as f32 from the first step to
 * the last, and R^T streams from WEIGHTS once per step through rt_gemv
 * (rt_cpu()'s x86 build: the weight rows read in place, f16 converted in
 * registers, one FMA per lane). Per step the accumulators start from the
 * step's precomputed input projection xw[t] plus the recurrent bias (staged
 * once), take h R^T, and the gate activations run as the vector unit's
 * SIGMOID lanes over whole gate blocks (tanh(x) = 2 sig(2x) - 1), so a step
 * costs one pass over R^T and a few passes over G*H floats, where the
 * unrolled graph it replaces ran a dozen tasks. Each step's h goes to y in
 * y's dtype and comes back rounded, as the next step's cube operand.
 */
#include <stdio.h>

#include "common/vmath.h"
#include "runtime/kernels.h"

/* y[0..n) += sum_i x[i] * w[i * ldw + j] over i < k (w f16 when wf16):
 * the vector unit's view of the cube's h R^T on one row. */
void rt_gemv(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->gemv) {
    cpu->gemv(x, k, w, wf16, ldw, n, y);
    return;
  }
  for (size_t i = 0; i < k; i++) {
    const float xi = x[i];
    if (wf16) {
      const uint16_t *r = (const uint16_t *)w + i * ldw;
      for (size_t j = 0; j < n; j++)
        y[j] += xi * rt_h2f(r[j]);
    } else {
      const float *r = (const float *)w + i * ldw;
      for (size_t j = 0; j < n; j++)
        y[j] += xi * r[j];
    }
  }
}

static void sigmoid(float *x, size_t n) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->sigmoid) {
    cpu->sigmoid(x, x, (uint32_t)n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    x[i] = om_vsigmoid(x[i]);
}

/* x = tanh(x) = 2 sig(2x) - 1. */
static void tanh_lanes(float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    x[i] = 2.0f * x[i];
  sigmoid(x, n);
  for (size_t i = 0; i < n; i++)
    x[i] = 2.0f * x[i] - 1.0f;
}

/* The UB's f32 runs, (2G + 3) * H floats. */
typedef struct rec_ub {
  float *acc; /* [G*H] gate accumulators */
  float *rb;  /* [G*H] the recurrent bias (0 when absent) */
  float *h;   /* [H] the state, rounded to y's dtype */
  float *c;   /* [H] an LSTM's cell state; a GRU's and RNN's scratch */
  float *tmp; /* [H] tanh(c), r h, or h rt_h */
} rec_ub;

void rt_recurrence_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  const om_tensor *xw = args->desc[OM_RECURRENCE_T_XW], *rt = args->desc[OM_RECURRENCE_T_RT];
  const int cell = task->params[OM_RECURRENCE_P_CELL], rev = task->params[OM_RECURRENCE_P_REVERSE] != 0;
  const int lbr = task->params[OM_RECURRENCE_P_LINEAR_BEFORE_RESET] != 0;
  const size_t T = (size_t)xw->dims[0], B = (size_t)xw->dims[1], H = (size_t)rt->dims[0];
  const size_t G = cell == OM_RECURRENCE_LSTM ? 4 : cell == OM_RECURRENCE_GRU ? 3 : 1, GH = G * H;
  const int dt = (int)xw->dtype, wf16 = rt->dtype == DT_FLOAT16;
  const void *w = args->data[OM_RECURRENCE_T_RT];
  void *y = args->data[OM_RECURRENCE_T_Y];
  float *ub = (float *)core->ub;
  rec_ub u = {ub, ub + GH, ub + 2 * GH, ub + 2 * GH + H, ub + 2 * GH + 2 * H};
  memset(u.rb, 0, sizeof(float) * GH);
  if (args->data[OM_RECURRENCE_T_RB]) rt_vload(u.rb, args->data[OM_RECURRENCE_T_RB], dt, 0, GH);
  uint64_t lo, hi;
  rt_block_range(B, task->block_dim, block, &lo, &hi);
  for (size_t b = (size_t)lo; b < (size_t)hi; b++) {
    memset(u.h, 0, sizeof(float) * H);
    memset(u.c, 0, sizeof(float) * H);
    if (args->data[OM_RECURRENCE_T_H0]) rt_vload(u.h, args->data[OM_RECURRENCE_T_H0], dt, b * H, H);
    if (args->data[OM_RECURRENCE_T_C0]) rt_vload(u.c, args->data[OM_RECURRENCE_T_C0], dt, b * H, H);
    for (size_t k = 0; k < T; k++) {
      const size_t t = rev ? T - 1 - k : k, row = (t * B + b);
      rt_vload(u.acc, args->data[OM_RECURRENCE_T_XW], dt, row * GH, GH);
      /* a GRU with linear_before_reset adds rb_h to h rt_h, inside r's product */
      const size_t nb = cell == OM_RECURRENCE_GRU && lbr ? 2 * H : GH;
      for (size_t j = 0; j < nb; j++)
        u.acc[j] += u.rb[j];
      float *hn = u.tmp; /* the new h, before its rounding */
      if (cell == OM_RECURRENCE_LSTM) {
        rt_gemv(u.h, H, w, wf16, GH, GH, u.acc);
        sigmoid(u.acc, 3 * H); /* i, o, f */
        float *gi = u.acc, *go = u.acc + H, *gf = u.acc + 2 * H, *gc = u.acc + 3 * H;
        tanh_lanes(gc, H);
        for (size_t j = 0; j < H; j++)
          u.c[j] = gf[j] * u.c[j] + gi[j] * gc[j], hn[j] = u.c[j];
        tanh_lanes(hn, H);
        for (size_t j = 0; j < H; j++)
          hn[j] *= go[j];
      } else if (cell == OM_RECURRENCE_GRU) {
        float *z = u.acc, *r = u.acc + H, *gh = u.acc + 2 * H;
        rt_gemv(u.h, H, w, wf16, GH, 2 * H, u.acc);
        sigmoid(u.acc, 2 * H);
        if (lbr) { /* gh += r (h rt_h + rb_h) */
          memcpy(u.c, u.rb + 2 * H, sizeof(float) * H);
          rt_gemv(u.h, H, (const uint8_t *)w + 2 * H * dtype_size(rt->dtype), wf16, GH, H, u.c);
          for (size_t j = 0; j < H; j++)
            gh[j] += r[j] * u.c[j];
        } else { /* gh += (r h) rt_h, r h rounded to the cube's operand dtype */
          for (size_t j = 0; j < H; j++)
            u.c[j] = r[j] * u.h[j];
          if (dt == DT_FLOAT16)
            for (size_t j = 0; j < H; j++)
              u.c[j] = rt_h2f(rt_f2h(u.c[j]));
          rt_gemv(u.c, H, (const uint8_t *)w + 2 * H * dtype_size(rt->dtype), wf16, GH, H, gh);
        }
        tanh_lanes(gh, H);
        for (size_t j = 0; j < H; j++)
          hn[j] = (1.0f - z[j]) * gh[j] + z[j] * u.h[j];
      } else {
        rt_gemv(u.h, H, w, wf16, GH, GH, u.acc);
        tanh_lanes(u.acc, H);
        hn = u.acc;
      }
      rt_vstore(y, dt, row * H, hn, H);
      rt_vload(u.h, y, dt, row * H, H);
    }
    rt_vstore(args->data[OM_RECURRENCE_T_Y_H], dt, b * H, u.h, H);
    if (args->data[OM_RECURRENCE_T_Y_C]) rt_vstore(args->data[OM_RECURRENCE_T_Y_C], dt, b * H, u.c, H);
  }
}

/* "[d0, d1, ...]" of rank dims into buf. */
static const char *dims_str(char *buf, size_t size, uint32_t rank, const int64_t *dims) {
  size_t at = (size_t)snprintf(buf, size, "[");
  for (uint32_t i = 0; i < rank && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (at < size) snprintf(buf + at, size - at, "]");
  return buf;
}

static omrt_status need_dims(const rt_chk *c, const char *what, const om_tensor *t, uint32_t rank,
                             const int64_t *dims) {
  int ok = t->rank == rank;
  for (uint32_t i = 0; ok && i < rank; i++)
    ok = t->dims[i] == dims[i];
  if (ok) return OMRT_OK;
  char got[96], want[96];
  return rt_chk_fail(c, "%s %s, expected %s", what, dims_str(got, sizeof got, t->rank, t->dims),
                     dims_str(want, sizeof want, rank, dims));
}

omrt_status rt_recurrence_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "RECURRENCE"};
  const om_tensor *xw, *rt, *rb, *h0, *c0, *y, *yh, *yc;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_RECURRENCE_NTENSORS)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_XW, "xw", 0, LAYOUT_ND, 3, 0, &xw)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_RT, "rt", 0, LAYOUT_ND, 2, 0, &rt)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_RB, "rb", 1, LAYOUT_ND, 1, 0, &rb)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_H0, "h0", 1, LAYOUT_ND, 2, 0, &h0)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_C0, "c0", 1, LAYOUT_ND, 2, 0, &c0)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_Y, "y", 0, LAYOUT_ND, 3, 0, &y)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_Y_H, "y_h", 0, LAYOUT_ND, 2, 0, &yh)) ||
      (s = rt_chk_tensor(&c, OM_RECURRENCE_T_Y_C, "y_c", 1, LAYOUT_ND, 2, 0, &yc)))
    return s;
  const int32_t cell = task->params[OM_RECURRENCE_P_CELL], rev = task->params[OM_RECURRENCE_P_REVERSE],
                lbr = task->params[OM_RECURRENCE_P_LINEAR_BEFORE_RESET];
  if (cell < OM_RECURRENCE_LSTM || cell > OM_RECURRENCE_RNN)
    return rt_chk_fail(&c, "params[%d] cell = %d, expected 0..2", OM_RECURRENCE_P_CELL, cell);
  if (rev != 0 && rev != 1)
    return rt_chk_fail(&c, "params[%d] reverse = %d, expected 0 or 1", OM_RECURRENCE_P_REVERSE, rev);
  if (lbr != 0 && (lbr != 1 || cell != OM_RECURRENCE_GRU))
    return rt_chk_fail(&c, "params[%d] linear_before_reset = %d, expected 0 (or 1 for a GRU)",
                       OM_RECURRENCE_P_LINEAR_BEFORE_RESET, lbr);
  for (int k = OM_RECURRENCE_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k]) return rt_chk_fail(&c, "params[%d] = %d, expected 0", k, task->params[k]);
  const om_tensor *all[8] = {xw, rt, rb, h0, c0, y, yh, yc};
  for (int k = 1; k < 8; k++)
    if (all[k] && all[k]->dtype != xw->dtype)
      return rt_chk_fail(&c, "tensors[%d] dtype %u differs from xw's %u", k, all[k]->dtype, xw->dtype);
  const int64_t G = cell == OM_RECURRENCE_LSTM ? 4 : cell == OM_RECURRENCE_GRU ? 3 : 1;
  const int64_t T = xw->dims[0], B = xw->dims[1], H = rt->dims[0];
  if (T < 1 || B < 1 || H < 1) return rt_chk_fail(&c, "xw [T, B, ..] and rt [H, ..] must not be empty");
  const int64_t xd[3] = {T, B, G * H}, rd[2] = {H, G * H}, bd[1] = {G * H}, sd[2] = {B, H}, yd[3] = {T, B, H};
  if ((s = need_dims(&c, "xw", xw, 3, xd)) || (s = need_dims(&c, "rt", rt, 2, rd)) ||
      (rb && (s = need_dims(&c, "rb", rb, 1, bd))) || (h0 && (s = need_dims(&c, "h0", h0, 2, sd))) ||
      (c0 && (s = need_dims(&c, "c0", c0, 2, sd))) || (s = need_dims(&c, "y", y, 3, yd)) ||
      (s = need_dims(&c, "y_h", yh, 2, sd)) || (yc && (s = need_dims(&c, "y_c", yc, 2, sd))))
    return s;
  if ((c0 || yc) && cell != OM_RECURRENCE_LSTM) return rt_chk_fail(&c, "c0 or y_c without an LSTM cell");
  if (!yc && cell == OM_RECURRENCE_LSTM)
    return rt_chk_fail(&c, "tensors[%d] y_c is OM_NONE", OM_RECURRENCE_T_Y_C);
  const uint64_t ub = (uint64_t)(2 * G + 3) * (uint64_t)H * 4;
  if (ub > m->def->ub_bytes)
    return rt_chk_fail(&c, "H = %lld needs %llu UB bytes, the model has %llu", (long long)H,
                       (unsigned long long)ub, (unsigned long long)m->def->ub_bytes);
  return rt_chk_block_dim(&c, (uint64_t)B, "batch rows");
}
