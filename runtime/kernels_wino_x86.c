/* kernels_wino_x86.c - the Winograd F(4x4,3x3) CONV2D tile on AVX2 + FMA +
 * F16C hosts: wino_x86.inc (the tile, written once for both vector widths)
 * on 8-lane YMM vectors, one output channel block at a time.
 *
 * Compiled for plain x86-64: every function carries target("avx2,fma,f16c")
 * and is only reached through rt_cpu() (cpu.c) when the CPU has all three
 * and not AVX-512 (kernels_wino_avx512.c).
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#define VF_LANES 8
#include "runtime/x86_vf.h"

#define WINO_TILE rt_wino_fz_tile_x86
#define WINO_PAIRS 0
#include "runtime/wino_x86.inc"

#endif
