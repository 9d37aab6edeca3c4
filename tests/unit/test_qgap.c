/* test_qgap.c - a quantized global average pool (DequantizeLinear ->
 * GlobalAveragePool -> QuantizeLinear, passes/qconv.c fold_gap) compiled and
 * run through libomrt, against the integer definition ONNX Runtime's
 * QLinearGlobalAveragePool computes: acc = sum over H x W of (x_q - x_zp)
 * exactly, y = q_requant(acc, s_x / (s_y * HW), y_zp) (common/quant.h),
 * byte for byte; u8 and i8, a 7 x 7, a 14 x 14, a 90 x 90 window (the
 * sum from a POOL task's f32 mean times HW, rounded: HW * 255 < 2^21) and a
 * 91 x 91 one (past that bound: a REDUCE task), under must_keep_origin_dtype
 * and force_fp16 (the nodes keep f32 under both; the f16 output compared
 * by its step), zero points away from 0,
 * inputs past the quantized range at both ends.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/om_format.h"
#include "common/quant.h"
#include "omrt.h"
#include "onnx_mb.h"

enum { C = 20, MAXHW = 91 * 91 };

static void run_case(int dt, int64_t side, int precision, unsigned seed) {
  const int64_t hw = side * side;
  const float xs = 0.037f, ys = 0.011f;
  const int sgn = dt == DT_INT8;
  const uint8_t xzu = 131, yzu = 7;
  const int8_t xzi = -9, yzi = 5;
  const int32_t xz = sgn ? xzi : xzu, yz = sgn ? yzi : yzu;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", DT_FLOAT32, 4, (int64_t[]){1, C, side, side}, NULL);
  mb_init_raw(&m, "xs", DT_FLOAT32, 0, NULL, &xs, 4);
  mb_init_raw(&m, "ys", DT_FLOAT32, 0, NULL, &ys, 4);
  mb_init_raw(&m, "xz", dt, 0, NULL, sgn ? (const void *)&xzi : (const void *)&xzu, 1);
  mb_init_raw(&m, "yz", dt, 0, NULL, sgn ? (const void *)&yzi : (const void *)&yzu, 1);
  mb_node(&m, "QuantizeLinear", "q_x", "x,xs,xz", "xq");
  mb_node(&m, "DequantizeLinear", "dq_x", "xq,xs,xz", "xf");
  mb_node(&m, "GlobalAveragePool", "gap", "xf", "p");
  mb_node(&m, "QuantizeLinear", "q_p", "p,ys,yz", "pq");
  mb_node(&m, "DequantizeLinear", "dq_p", "pq,ys,yz", "y");
  mb_output(&m, "y");
  static float x[C * MAXHW];
  float got[C];
  for (int64_t i = 0; i < C * hw; i++)
    x[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 8 & 4095) - 2048.0f) * 0.0031f;
  mb_run r;
  const void *in[1] = {x};
  void *out[1] = {got};
  if (!mb_run_open(&m, "qgap.onnx", precision, &r)) {
    CHECK(!"compiles");
    return;
  }
  CHECK_EQ_INT(omrt_execute(r.ctx, in, out), OMRT_OK);
  const int pooled = hw * 255 < (1 << 21);
  CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_REDUCE), pooled ? 0 : 1);
  CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_POOL), pooled ? 1 : 0);
  int32_t lo, hi;
  q_range(dt, &lo, &hi);
  const float mult = xs / (ys * (float)hw);
  int bad = 0;
  for (int c = 0; c < C; c++) {
    int32_t acc = 0;
    for (int64_t i = 0; i < hw; i++)
      acc += q_quantize(x[c * hw + i], xs, xz, lo, hi) - xz;
    const int32_t q = q_requant(acc, mult, yz, lo, hi);
    const float want = q_dequantize(q, yz, ys);
    /* force_fp16 writes the output DequantizeLinear in f16 (within 255 *
     * 2^-11 < 1/2 of a step): its step is compared there */
    const int differs =
        precision == OM_PRECISION_FORCE_FP16 ? (int32_t)lrintf(got[c] / ys) + yz != q : got[c] != want;
    if (differs && bad++ < 4)
      test_note("  %s %lldx%lld: y[%d] = %g, want %g", dtype_name(dt), (long long)side, (long long)side, c,
                got[c], want);
  }
  CHECKF(bad == 0, "  %d channels differ from the integer definition", bad);
  mb_run_close(&r);
}

int main(void) {
  const int keep = OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, fp16 = OM_PRECISION_FORCE_FP16;
  run_case(DT_UINT8, 7, keep, 3);
  run_case(DT_INT8, 7, keep, 4);
  run_case(DT_UINT8, 14, keep, 5);
  run_case(DT_INT8, 14, fp16, 6);
  run_case(DT_UINT8, 90, keep, 7);
  run_case(DT_INT8, 90, fp16, 8);
  run_case(DT_UINT8, 91, keep, 9);
  return test_summary("test_qgap");
}
