/* kernels_wino_avx512.c - the Winograd F(4x4,3x3) CONV2D tile on AVX-512
 * hosts: wino_x86.inc (the tile, written once for both vector widths) on
 * 16-lane ZMM vectors, a whole channel block each, with the GEMMs two output
 * channel blocks at a time (the ZMM micro-kernel's pairs).
 *
 * Compiled for plain x86-64: every function carries the AVX512 target
 * attribute (x86_simd.h) and is only reached through rt_cpu() (cpu.c) when
 * paths.avx512 is set.
 */
#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)

#define VF_LANES 16
#include "runtime/x86_vf.h"

#define WINO_TILE rt_wino_fz_tile_avx512
#define WINO_PAIRS 1
#include "runtime/wino_x86.inc"

#endif
