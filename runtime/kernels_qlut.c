/* kernels_qlut.c - QLUT, an int8 -> int8 function as a 256-entry table
 * (contract in om_tasks.h): the block split, the load-time check, the
 * portable run and the x86 runs (AVX2, AVX-512 VBMI), chosen by rt_cpu()'s
 * qlut.
 *
 * A block is a range of 16-byte runs of x and y (NC1HWC0 pixels of one
 * channel block, or 16 elements of an ND tensor); the run function maps
 * its bytes through the table. AVX2 splits each index byte into its high
 * and low nibble: vpshufb looks the low nibble up in each 16-byte row of the
 * table, and the row the high nibble names is kept. AVX-512 VBMI's
 * vpermi2b looks 7-bit indices up in 128 bytes (two registers), once for
 * each half of the table, and bit 7 picks the half. The block then writes
 * 0 into the padding lanes of the last channel block of an NC1HWC0 y.
 */
#include "runtime/kernels_qlut.h"

#include "runtime/kernels.h"

void rt_qlut_c(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    y[i] = table[x[i]];
}

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define T_AVX2 __attribute__((target("avx2")))
#define T_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

T_AVX2 void rt_qlut_avx2(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n) {
  __m256i rows[16];
  for (int k = 0; k < 16; k++)
    rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(table + 16 * k)));
  const __m256i nib = _mm256_set1_epi8(0x0f);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
    const __m256i lo = _mm256_and_si256(v, nib), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
    __m256i r = _mm256_setzero_si256();
    for (int k = 0; k < 16; k++) {
      const __m256i hit = _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)k));
      r = _mm256_or_si256(r, _mm256_and_si256(hit, _mm256_shuffle_epi8(rows[k], lo)));
    }
    _mm256_storeu_si256((__m256i *)(y + i), r);
  }
  rt_qlut_c(table, x + i, y + i, n - i);
}

T_VBMI void rt_qlut_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64),
                t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_loadu_si512(x + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, v, t1), high = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
  }
  rt_qlut_c(table, x + i, y + i, n - i);
}

#endif

void rt_qlut_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *y = args->desc[OM_QLUT_T_Y];
  uint8_t *yd = args->data[OM_QLUT_T_Y];
  const uint64_t phys = rt_physical_elements(y);
  uint64_t lo, hi;
  rt_block_range((phys + C0 - 1) / C0, task->block_dim, block, &lo, &hi);
  const uint64_t e0 = lo * C0, e1 = hi * C0 < phys ? hi * C0 : phys;
  if (e1 <= e0) return;
  const rt_qlut_fn fn = rt_cpu()->qlut ? rt_cpu()->qlut : rt_qlut_c;
  fn(args->data[OM_QLUT_T_TABLE], (const uint8_t *)args->data[OM_QLUT_T_X] + e0, yd + e0, (size_t)(e1 - e0));
  rt_zero_pad_lanes_u8(y, yd, lo, hi);
}

omrt_status rt_qlut_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "QLUT"};
  const om_tensor *x, *t, *y;
  const uint32_t i8 = RT_DT(DT_UINT8) | RT_DT(DT_INT8);
  omrt_status st;
  if ((st = rt_chk_ntensors(&c, OM_QLUT_NTENSORS)) ||
      (st = rt_chk_tensor_of(&c, OM_QLUT_T_X, "x", 0, RT_LAYOUTS_ND_NC1HWC0, -1, i8, &x)) ||
      (st = rt_chk_tensor_of(&c, OM_QLUT_T_TABLE, "table", 0, LAYOUT_ND, 1, i8, &t)) ||
      (st = rt_chk_tensor_of(&c, OM_QLUT_T_Y, "y", 0, RT_LAYOUTS_ND_NC1HWC0, -1, i8, &y)) ||
      (st = rt_chk_same_dims(&c, "x", x, "y", y)))
    return st;
  if (t->dims[0] != 256 || t->dtype != y->dtype)
    return rt_chk_fail(&c, "table has %lld elements of dtype %u, expected 256 of y's dtype %u",
                       (long long)t->dims[0], (unsigned)t->dtype, (unsigned)y->dtype);
  if (x->layout != y->layout) return rt_chk_fail(&c, "x and y must share one layout");
  return rt_chk_block_dim(&c, (rt_physical_elements(y) + C0 - 1) / C0, "runs of 16 elements");
}
