/* kernels_qeltwise.c - QELTWISE, the int8 elementwise op (contract in
 * om_tasks.h): the block split, the load-time check, the portable run and
 * the x86 runs (AVX2, AVX-512F), chosen by rt_cpu()'s qeltwise.
 *
 * A block is a range of 16-byte runs of a, b and y (NC1HWC0 pixels of one
 * channel block, or 16 elements of an ND tensor); each run function walks
 * its bytes in order: u = x ^ mask (i8 read as u8 + 128, the zero point
 * moved by 128 with it, so u - zp is the same integer), then
 * common/quant.h's q_eltwise: (u - zp) converted to f32 and scaled, added
 * or multiplied, divided by y's scale, rounded half to even (a NaN counts
 * 0), clamped to [-2^24, 2^24], plus y's zero point, clamped to [lo, hi].
 * The SIMD runs do those f32 operations lane by lane in that order
 * (IEEE division and rounding: the same bits), and the scalar q_eltwise
 * for the tail. The block then writes 0 into the padding lanes of the last
 * channel block of an NC1HWC0 y.
 */
#include "runtime/kernels_qeltwise.h"

#include <string.h>

#include "common/quant.h"

static float f32_param(int32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

void rt_qelt_init(const om_task *task, const rt_args *args, rt_qelt *q) {
  const int32_t *p = task->params;
  const int as = args->desc[OM_QELTWISE_T_A]->dtype == DT_INT8,
            bs = args->desc[OM_QELTWISE_T_B]->dtype == DT_INT8;
  *q = (rt_qelt){.a = args->data[OM_QELTWISE_T_A],
                 .b = args->data[OM_QELTWISE_T_B],
                 .y = args->data[OM_QELTWISE_T_Y],
                 .amask = as ? 0x80 : 0,
                 .bmask = bs ? 0x80 : 0,
                 .azp = p[OM_QELTWISE_P_A_ZP] + (as ? 128 : 0),
                 .bzp = p[OM_QELTWISE_P_B_ZP] + (bs ? 128 : 0),
                 .as = f32_param(p[OM_QELTWISE_P_A_SCALE]),
                 .bs = f32_param(p[OM_QELTWISE_P_B_SCALE]),
                 .ys = f32_param(p[OM_QELTWISE_P_Y_SCALE]),
                 .yzp = p[OM_QELTWISE_P_Y_ZP],
                 .lo = p[OM_QELTWISE_P_LO],
                 .hi = p[OM_QELTWISE_P_HI],
                 .mul = p[OM_QELTWISE_P_OP] == 1};
}

void rt_qelt_c(const rt_qelt *q, size_t i0, size_t n) {
  for (size_t i = i0; i < i0 + n; i++)
    q->y[i] = (uint8_t)q_eltwise(q->a[i] ^ q->amask, q->azp, q->as, q->b[i] ^ q->bmask, q->bzp, q->bs, q->mul,
                                 q->ys, q->yzp, q->lo, q->hi);
}

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define T_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

T_AVX2 void rt_qelt_avx2(const rt_qelt *q, size_t i0, size_t n) {
  const __m128i am = _mm_set1_epi8((char)q->amask), bm = _mm_set1_epi8((char)q->bmask);
  const __m256i azp = _mm256_set1_epi32(q->azp), bzp = _mm256_set1_epi32(q->bzp),
                yzp = _mm256_set1_epi32(q->yzp), lo = _mm256_set1_epi32(q->lo), hi = _mm256_set1_epi32(q->hi);
  const __m256 as = _mm256_set1_ps(q->as), bs = _mm256_set1_ps(q->bs), ys = _mm256_set1_ps(q->ys);
  const __m256 fmin = _mm256_set1_ps(-16777216.0f), fmax = _mm256_set1_ps(16777216.0f);
  /* the low byte of each 32-bit lane, both 128-bit halves' in their low dword */
  const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                                        12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  size_t i = i0;
  for (; i + 8 <= i0 + n; i += 8) {
    const __m256i ua = _mm256_cvtepu8_epi32(_mm_xor_si128(_mm_loadl_epi64((const __m128i *)(q->a + i)), am));
    const __m256i ub = _mm256_cvtepu8_epi32(_mm_xor_si128(_mm_loadl_epi64((const __m128i *)(q->b + i)), bm));
    const __m256 va = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(ua, azp)), as);
    const __m256 vb = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(ub, bzp)), bs);
    __m256 t = _mm256_div_ps(q->mul ? _mm256_mul_ps(va, vb) : _mm256_add_ps(va, vb), ys);
    t = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_ORD_Q)); /* NaN -> 0, as q_quantize */
    t = _mm256_min_ps(_mm256_max_ps(t, fmin), fmax);
    __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(t), yzp);
    v = _mm256_shuffle_epi8(_mm256_min_epi32(_mm256_max_epi32(v, lo), hi), pick);
    const __m128i bytes = _mm_unpacklo_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)(q->y + i), bytes);
  }
  rt_qelt_c(q, i, i0 + n - i);
}

T_AVX512 void rt_qelt_avx512(const rt_qelt *q, size_t i0, size_t n) {
  const __m128i am = _mm_set1_epi8((char)q->amask), bm = _mm_set1_epi8((char)q->bmask);
  const __m512i azp = _mm512_set1_epi32(q->azp), bzp = _mm512_set1_epi32(q->bzp),
                yzp = _mm512_set1_epi32(q->yzp), lo = _mm512_set1_epi32(q->lo), hi = _mm512_set1_epi32(q->hi);
  const __m512 as = _mm512_set1_ps(q->as), bs = _mm512_set1_ps(q->bs), ys = _mm512_set1_ps(q->ys);
  const __m512 fmin = _mm512_set1_ps(-16777216.0f), fmax = _mm512_set1_ps(16777216.0f);
  size_t i = i0;
  for (; i + 16 <= i0 + n; i += 16) {
    const __m512i ua = _mm512_cvtepu8_epi32(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(q->a + i)), am));
    const __m512i ub = _mm512_cvtepu8_epi32(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(q->b + i)), bm));
    const __m512 va = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ua, azp)), as);
    const __m512 vb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ub, bzp)), bs);
    __m512 t = _mm512_div_ps(q->mul ? _mm512_mul_ps(va, vb) : _mm512_add_ps(va, vb), ys);
    t = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t); /* NaN -> 0, as q_quantize */
    t = _mm512_min_ps(_mm512_max_ps(t, fmin), fmax);
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(t), yzp);
    v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    _mm_storeu_si128((__m128i *)(q->y + i), _mm512_cvtepi32_epi8(v));
  }
  rt_qelt_c(q, i, i0 + n - i);
}

#endif

void rt_qeltwise_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  rt_qelt q;
  rt_qelt_init(task, args, &q);
  const om_tensor *y = args->desc[OM_QELTWISE_T_Y];
  const uint64_t phys = rt_physical_elements(y);
  uint64_t lo, hi;
  rt_block_range((phys + C0 - 1) / C0, task->block_dim, block, &lo, &hi);
  const uint64_t e0 = lo * C0, e1 = hi * C0 < phys ? hi * C0 : phys;
  if (e1 <= e0) return;
  const rt_qelt_fn fn = rt_cpu()->qeltwise ? rt_cpu()->qeltwise : rt_qelt_c;
  fn(&q, (size_t)e0, (size_t)(e1 - e0));
  rt_zero_pad_lanes_u8(y, q.y, lo, hi);
}

omrt_status rt_qeltwise_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "QELTWISE"};
  const om_tensor *a, *b, *y;
  const uint32_t i8 = RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  omrt_status st;
  if ((st = rt_chk_ntensors(&c, OM_QELTWISE_NTENSORS)) ||
      (st = rt_chk_tensor_of(&c, OM_QELTWISE_T_A, "a", 0, RT_LAYOUTS_ND_NC1HWC0, -1, i8, &a)) ||
      (st = rt_chk_tensor_of(&c, OM_QELTWISE_T_B, "b", 0, RT_LAYOUTS_ND_NC1HWC0, -1, i8, &b)) ||
      (st = rt_chk_tensor_of(&c, OM_QELTWISE_T_Y, "y", 0, RT_LAYOUTS_ND_NC1HWC0, -1, i8, &y)) ||
      (st = rt_chk_same_dims(&c, "a", a, "y", y)) || (st = rt_chk_same_dims(&c, "b", b, "y", y)))
    return st;
  if (a->layout != y->layout || b->layout != y->layout)
    return rt_chk_fail(&c, "a, b and y must share one layout");
  const int32_t *p = task->params;
  if (p[OM_QELTWISE_P_OP] != 0 && p[OM_QELTWISE_P_OP] != 1)
    return rt_chk_fail(&c, "params[%d] op = %d (0 add, 1 mul)", OM_QELTWISE_P_OP, p[OM_QELTWISE_P_OP]);
  static const char *const sname[3] = {"a_scale", "b_scale", "y_scale"};
  for (int k = 0; k < 3; k++) {
    const float s = f32_param(p[OM_QELTWISE_P_A_SCALE + k]);
    if (!(s > 0.0f) || s > 3.4028235e38f)
      return rt_chk_fail(&c, "params[%d] %s = %g is not a finite scale > 0", OM_QELTWISE_P_A_SCALE + k,
                         sname[k], (double)s);
  }
  int32_t alo, ahi, blo, bhi, ylo, yhi;
  q_range((int)a->dtype, &alo, &ahi), q_range((int)b->dtype, &blo, &bhi), q_range((int)y->dtype, &ylo, &yhi);
  const int32_t azp = p[OM_QELTWISE_P_A_ZP], bzp = p[OM_QELTWISE_P_B_ZP], yzp = p[OM_QELTWISE_P_Y_ZP],
                lo = p[OM_QELTWISE_P_LO], hi = p[OM_QELTWISE_P_HI];
  if (azp < alo || azp > ahi || bzp < blo || bzp > bhi || yzp < ylo || yzp > yhi || lo < ylo || hi > yhi ||
      lo > hi)
    return rt_chk_fail(&c, "a_zp %d, b_zp %d, y_zp %d, lo %d, hi %d out of their dtypes' ranges (lo <= hi)",
                       azp, bzp, yzp, lo, hi);
  return rt_chk_block_dim(&c, (rt_physical_elements(y) + C0 - 1) / C0, "runs of 16 elements");
}
