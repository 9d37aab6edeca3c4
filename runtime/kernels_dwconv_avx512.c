/* kernels_dwconv_avx512.c - DWCONV on AVX-512 hosts: dwconv_x86.inc (the
 * kernel, written once for both vector widths) on 16-lane ZMM vectors, a
 * whole channel block per register.
 *
 * Compiled for plain x86-64: every function carries the AVX512 target
 * attribute (x86_simd.h) and is only reached through rt_cpu() (cpu.c) when
 * paths.avx512 is set.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#define VF_LANES 16
#include "runtime/x86_vf.h"

#define DW_ENTRY rt_dwconv_avx512
#include "runtime/dwconv_x86.inc"

#endif
