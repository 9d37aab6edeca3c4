/* kernels_mm_act_x86.c - MATMUL's epilogue from L0C for the transcendental
 * activations (GELU, GELU_TANH, SILU) on AVX2 hosts: mm_act_x86.inc on
 * 8-lane vectors.
 *
 * Compiled for plain x86-64: every function carries its target attribute
 * (x86_simd.h) and is only reached through rt_cpu() (cpu.c) when the host
 * has the features.
 */
#include "runtime/kernels_matmul.h"

#if defined(__x86_64__) && defined(__GNUC__)

#define VF_LANES 8
#include "runtime/x86_vf.h"

#define MM_ACT_EPILOGUE rt_mm_act_epilogue_x86
#include "runtime/mm_act_x86.inc"

#endif
