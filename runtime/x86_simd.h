/* x86_simd.h - what the x86 kernel files share (kernels_*_x86.c,
 * kernels_*_avx512.c, and through x86_vf.h the *_x86.inc bodies): the
 * target attributes their functions carry and the 8-lane (AVX2 + FMA +
 * F16C) and 16-lane (AVX-512F) load / store of an f16 or f32 array.
 * Include only inside `#if defined(__x86_64__) && defined(__GNUC__)`;
 * callers reach AVX2 functions only when the host has AVX2, FMA and F16C,
 * and AVX512 ones only when rt_cpu()->avx512 also says so (cpu.c). */
#ifndef RUNTIME_X86_SIMD_H
#define RUNTIME_X86_SIMD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) static inline

/* 8 lanes of an f16 (f16 != 0) or f32 array from element `at`, as f32. */
AVX2_INLINE __m256 ld8h(const void *p, int f16, size_t at) {
  return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + at)))
             : _mm256_loadu_ps((const float *)p + at);
}

/* Stores 8 f32 lanes at element `at`, as f16 rounded to nearest even or f32. */
AVX2_INLINE void st8h(void *p, int f16, size_t at, __m256 v) {
  if (f16)
    _mm_storeu_si128((__m128i *)((uint16_t *)p + at), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm256_storeu_ps((float *)p + at, v);
}

/* AVX-512F (with DQ for the 256-bit halves of a ZMM register): the wide
 * micro-kernels, whose 16 lanes are one NC1HWC0 channel block. */
#define AVX512 __attribute__((target("avx512f,avx512dq,avx2,fma,f16c")))
#define AVX512_INLINE __attribute__((target("avx512f,avx512dq,avx2,fma,f16c"), always_inline)) static inline

/* 16 lanes of an f16 (f16 != 0) or f32 array from element `at`, as f32. */
AVX512_INLINE __m512 ld16h(const void *p, int f16, size_t at) {
  return f16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + at)))
             : _mm512_loadu_ps((const float *)p + at);
}

/* Stores 16 f32 lanes at element `at`, as f16 rounded to nearest even or f32. */
AVX512_INLINE void st16h(void *p, int f16, size_t at, __m512 v) {
  if (f16)
    _mm256_storeu_si256((__m256i *)((uint16_t *)p + at), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  else
    _mm512_storeu_ps((float *)p + at, v);
}

/* Rows of the 6-row micro-kernels' group that covers the next `left` rows
 * of a tile (kernels_cube_x86.c). A group of R rows
 * keeps 2R FMA chains; below 4 rows there are too few to cover the FMA
 * latency, so a group of 1 to 3 rows takes as long as one of 4. Six at a
 * time, except that a tile never ends on such a group when it has more
 * rows: 7 = 4+3, 8 = 4+4, 9 = 5+4, 13 = 5+4+4 (49 rows cost 49 row-steps,
 * not 8x6 + 4). */
static inline int mk_group_rows(int64_t left) {
  if (left <= 6) return (int)left;
  if (left >= 14 || left % 6 == 0 || left % 6 >= 4) return 6;
  return left == 9 || left == 13 ? 5 : 4;
}

#endif
