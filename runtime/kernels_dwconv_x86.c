/* kernels_dwconv_x86.c - DWCONV on AVX2 + FMA + F16C hosts: dwconv_x86.inc
 * (the kernel, written once for both vector widths) on 8-lane YMM vectors,
 * a channel block's 16 lanes as two halves.
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three
 * and not AVX-512 (kernels_dwconv_avx512.c).
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#define VF_LANES 8
#include "runtime/x86_vf.h"

#define DW_ENTRY rt_dwconv_x86
#include "runtime/dwconv_x86.inc"

#endif
