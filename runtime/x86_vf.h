/* x86_vf.h - `vf`, one native x86 float vector of VF_LANES lanes, for the
 * kernels written once and compiled at both widths: 8 lanes (YMM: AVX2 +
 * FMA + F16C) and 16 lanes (ZMM: AVX-512F + DQ, a whole NC1HWC0 channel
 * block). A kernel body (e.g. wino_x86.inc) handles a channel block as
 * VF_BLOCK = 16 / VF_LANES vectors; a translation unit defines VF_LANES,
 * includes this header and then the body, once (kernels_wino_x86.c,
 * kernels_wino_avx512.c). Functions built with VF_TARGET are reached only
 * when the host has the features (cpu.c). */
#ifndef RUNTIME_X86_VF_H
#define RUNTIME_X86_VF_H

#include "runtime/x86_simd.h"

#if VF_LANES == 16
#define VF_TARGET AVX512
#define VF_INLINE AVX512_INLINE
#define VF_PS(op) _mm512_##op##_ps /* the intrinsic of this width */
typedef __m512 vf;
/* Lanes of an f16 (f16 != 0) or f32 array from element `at`, as f32; and the store, f16 rounded to nearest
 * even. */
VF_INLINE vf vf_ldh(const void *p, int f16, size_t at) { return ld16h(p, f16, at); }
VF_INLINE void vf_sth(void *p, int f16, size_t at, vf v) { st16h(p, f16, at, v); }
#elif VF_LANES == 8
#define VF_TARGET AVX2
#define VF_INLINE AVX2_INLINE
#define VF_PS(op) _mm256_##op##_ps
typedef __m256 vf;
VF_INLINE vf vf_ldh(const void *p, int f16, size_t at) { return ld8h(p, f16, at); }
VF_INLINE void vf_sth(void *p, int f16, size_t at, vf v) { st8h(p, f16, at, v); }
#else
#error "define VF_LANES as 8 or 16 before including runtime/x86_vf.h"
#endif

VF_INLINE vf vf_zero(void) { return VF_PS(setzero)(); }
VF_INLINE vf vf_set1(float x) { return VF_PS(set1)(x); }
VF_INLINE vf vf_add(vf a, vf b) { return VF_PS(add)(a, b); }
VF_INLINE vf vf_sub(vf a, vf b) { return VF_PS(sub)(a, b); }
VF_INLINE vf vf_mul(vf a, vf b) { return VF_PS(mul)(a, b); }
VF_INLINE vf vf_fmadd(vf a, vf b, vf c) { return VF_PS(fmadd)(a, b, c); }   /* a*b + c */
VF_INLINE vf vf_fnmadd(vf a, vf b, vf c) { return VF_PS(fnmadd)(a, b, c); } /* c - a*b */
VF_INLINE vf vf_max(vf a, vf b) { return VF_PS(max)(a, b); }
VF_INLINE vf vf_min(vf a, vf b) { return VF_PS(min)(a, b); }
VF_INLINE vf vf_and(vf a, vf b) { return VF_PS(and)(a, b); }
VF_INLINE vf vf_ld(const float *p) { return VF_PS(loadu)(p); }
VF_INLINE void vf_st(float *p, vf v) { VF_PS(storeu)(p, v); }

enum { VF_BLOCK = 16 / VF_LANES }; /* vectors per 16-lane channel block */

#endif
