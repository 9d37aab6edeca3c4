/* kernels_dynquant.c - DYNQUANT, ONNX's DynamicQuantizeLinear as one task
 * (contract in om_tasks_vector.h): one pass over x for its range, then
 * one that quantizes it, instead of two whole-tensor reductions and two
 * vector programs.
 *
 * The arithmetic is common/quant.h's (q_dynamic_params, q_quantize), the
 * reference evaluator's, so the bits are the graph's. The SSE2 loops (the
 * x86-64 baseline) do the same f32 operations: the range in lanes with a
 * NaN noted on the side (any NaN makes lo and hi NaN; the lanes may differ
 * from the scalar loop only in the sign of a zero extremum, which
 * q_dynamic_params drops); the quantization divides (divps: one rounding,
 * as x / scale), maps a NaN quotient to 0, clamps to [-512, 512] (past
 * that every zero point saturates the same way, as q_quantize's 2^24
 * does), rounds half to even by adding and subtracting 1.5 * 2^23, adds
 * the zero point in int32 and saturates to [0, 255] by packing. Other
 * targets, and OMRT_PORTABLE=1, take the portable loops.
 *
 * An f16 x (a float16 producer's value under force_fp16) is converted to
 * f32 a chunk at a time, exactly, instead of by a TRANSDATA task before.
 *
 * Blocks: every block reads all of x for the range (they need not meet),
 * quantizes its own runs of 64 elements, and block 0 writes scale and zp.
 */
#include "common/quant.h"
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define DYNQUANT_SSE2 1
#else
#define DYNQUANT_SSE2 0
#endif

enum { RUN = 64, CHUNK = 1024 }; /* elements per block unit; per f16 -> f32 conversion */

#if DYNQUANT_SSE2
static void range_sse2(const float *x, uint64_t n, float *lo_out, float *hi_out) {
  __m128 l0 = _mm_setzero_ps(), l1 = l0, h0 = l0, h1 = l0, un = l0;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
    un = _mm_or_ps(un, _mm_cmpunord_ps(a, b));
    l0 = _mm_min_ps(l0, a), l1 = _mm_min_ps(l1, b);
    h0 = _mm_max_ps(h0, a), h1 = _mm_max_ps(h1, b);
  }
  float lane[8];
  _mm_storeu_ps(lane, _mm_min_ps(l0, l1));
  float lo = q_extreme(x + i, (int64_t)(n - i), q_extreme(lane, 4, 0, 0), 0);
  _mm_storeu_ps(lane, _mm_max_ps(h0, h1));
  float hi = q_extreme(x + i, (int64_t)(n - i), q_extreme(lane, 4, 0, 1), 1);
  if (_mm_movemask_ps(un)) lo = hi = NAN;
  *lo_out = lo, *hi_out = hi;
}

static void quantize_sse2(const float *x, uint64_t n, float scale, int32_t zp, uint8_t *y) {
  const __m128 s = _mm_set1_ps(scale), lim = _mm_set1_ps(512.0f), nlim = _mm_set1_ps(-512.0f),
               magic = _mm_set1_ps(12582912.0f);
  const __m128i z = _mm_set1_epi32(zp);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i q[4];
    for (int j = 0; j < 4; j++) {
      __m128 v = _mm_div_ps(_mm_loadu_ps(x + i + 4 * j), s);
      v = _mm_and_ps(v, _mm_cmpord_ps(v, v));
      v = _mm_min_ps(_mm_max_ps(v, nlim), lim);
      v = _mm_sub_ps(_mm_add_ps(v, magic), magic);
      q[j] = _mm_add_epi32(_mm_cvtps_epi32(v), z);
    }
    const __m128i w = _mm_packus_epi16(_mm_packs_epi32(q[0], q[1]), _mm_packs_epi32(q[2], q[3]));
    _mm_storeu_si128((__m128i *)(y + i), w);
  }
  for (; i < n; i++)
    y[i] = (uint8_t)q_quantize(x[i], scale, zp, 0, 255);
}
#endif

void rt_dynquant_range(const float *x, uint64_t n, int simd, float *lo_out, float *hi_out) {
#if DYNQUANT_SSE2
  if (simd) {
    range_sse2(x, n, lo_out, hi_out);
    return;
  }
#endif
  (void)simd;
  *lo_out = q_extreme(x, (int64_t)n, 0, 0);
  *hi_out = q_extreme(x, (int64_t)n, 0, 1);
}

void rt_dynquant_quantize(const float *x, uint64_t n, float scale, int32_t zp, int simd, uint8_t *y) {
#if DYNQUANT_SSE2
  if (simd) {
    quantize_sse2(x, n, scale, zp, y);
    return;
  }
#endif
  (void)simd;
  for (uint64_t i = 0; i < n; i++)
    y[i] = (uint8_t)q_quantize(x[i], scale, zp, 0, 255);
}

/* x[i0 .. i0 + n) as f32: in place for f32 x, else converted into buf
 * (f16 to f32 is exact). */
static const float *chunk_f32(const void *x, int dt, uint64_t i0, uint64_t n, float *buf) {
  if (dt == DT_FLOAT32) return (const float *)x + i0;
  const rt_cpu_paths *cpu = rt_cpu();
  if (cpu->h2f)
    cpu->h2f(buf, (const uint16_t *)x + i0, (uint32_t)n);
  else
    rt_load_f32(buf, x, dt, (size_t)i0, (size_t)n);
  return buf;
}

void rt_dynquant_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const void *x = args->data[OM_DYNQUANT_T_X];
  const int dt = (int)args->desc[OM_DYNQUANT_T_X]->dtype, simd = rt_cpu()->baseline;
  const uint64_t n = rt_elements(args->desc[OM_DYNQUANT_T_X]);
  float buf[CHUNK], lo = 0, hi = 0, l, h, scale;
  for (uint64_t i = 0; i < n; i += CHUNK) {
    const uint64_t m = n - i < CHUNK ? n - i : CHUNK;
    rt_dynquant_range(chunk_f32(x, dt, i, m, buf), m, simd, &l, &h);
    lo = q_extreme(&l, 1, lo, 0), hi = q_extreme(&h, 1, hi, 1);
  }
  int32_t zp;
  q_dynamic_params(lo, hi, &scale, &zp);
  uint64_t r0, r1;
  rt_block_range((n + RUN - 1) / RUN, task->block_dim, block, &r0, &r1);
  const uint64_t e1 = r1 * RUN < n ? r1 * RUN : n;
  uint8_t *y = args->data[OM_DYNQUANT_T_Y];
  for (uint64_t i = r0 * RUN; i < e1; i += CHUNK) {
    const uint64_t m = e1 - i < CHUNK ? e1 - i : CHUNK;
    rt_dynquant_quantize(chunk_f32(x, dt, i, m, buf), m, scale, zp, simd, y + i);
  }
  if (block == 0) {
    *(float *)args->data[OM_DYNQUANT_T_SCALE] = scale;
    *(uint8_t *)args->data[OM_DYNQUANT_T_ZP] = (uint8_t)zp;
  }
}

omrt_status rt_dynquant_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "DYNQUANT"};
  const om_tensor *x, *y, *s, *z;
  omrt_status st;
  if ((st = rt_chk_ntensors(&c, OM_DYNQUANT_NTENSORS)) ||
      (st = rt_chk_tensor_of(&c, OM_DYNQUANT_T_X, "x", 0, LAYOUT_ND, -1,
                             RT_DT(DT_FLOAT32) | RT_DT(DT_FLOAT16), &x)) ||
      (st = rt_chk_tensor_of(&c, OM_DYNQUANT_T_Y, "y", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &y)) ||
      (st = rt_chk_tensor_of(&c, OM_DYNQUANT_T_SCALE, "scale", 0, LAYOUT_ND, -1, RT_DT(DT_FLOAT32), &s)) ||
      (st = rt_chk_tensor_of(&c, OM_DYNQUANT_T_ZP, "zp", 0, LAYOUT_ND, -1, RT_DT(DT_UINT8), &z)) ||
      (st = rt_chk_same_dims(&c, "x", x, "y", y)))
    return st;
  if (rt_elements(s) != 1 || rt_elements(z) != 1)
    return rt_chk_fail(&c, "scale and zp have %llu and %llu elements, expected 1 each",
                       (unsigned long long)rt_elements(s), (unsigned long long)rt_elements(z));
  return rt_chk_block_dim(&c, (rt_elements(x) + RUN - 1) / RUN, "runs of 64 elements");
}
