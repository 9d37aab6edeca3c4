/* cpu.c - which kernel paths this host runs, decided once per process.
 *
 * The runtime is built for plain x86-64 (no global -mavx2): the fast kernels
 * (kernels_*_x86.c, kernels_*_avx512.c) are compiled per function with
 * __attribute__((target("avx2,fma,f16c"))) (or the AVX512 target) and only
 * called when the CPU has all three extensions (and AVX-512F and DQ).
 * rt_cpu() detects them on first use (rt_cpu_detect: pthread_once, so any
 * thread may call it; omrt_context_new calls it so the choice is made
 * before the first execute) and fills a table of function pointers that the
 * kernels call through; after that rt_cpu, inline in kernels.h, only loads
 * the pointer rt_cpu_detect published. OMRT_PORTABLE=1 in the environment forces the
 * portable C path whatever the CPU has (tests run both). Non-x86 builds only
 * ever have the portable path.
 * On hosts with AVX-512F and DQ (and an OS that saves the ZMM state), the
 * x86 cube tiles also run their 512-bit micro-kernels (paths.avx512); the
 * CPUs that have them (Zen 4/5, Xeon since Skylake-SP) execute twice the
 * flops per cycle that way, or the same with fewer instructions.
 * OMRT_AVX512=0 keeps the 256-bit ones (tests run the x86 kernels both ways).
 * The int8 convolution (QCONV2D) runs vpdpbusd where the CPU also has
 * AVX-512 BW and VNNI, else the AVX2 tile; the int8 elementwise op
 * (QELTWISE) 16 lanes with AVX-512F, else 8; the int8 table lookup (QLUT)
 * vpermi2b where the CPU has AVX-512 VBMI, else AVX2's vpshufb.
 */
#include <pthread.h>
#include <stdlib.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "runtime/kernels.h"
#include "runtime/kernels_matmul.h"
#include "runtime/kernels_qconv.h"
#include "runtime/kernels_qdw.h"
#include "runtime/kernels_qeltwise.h"
#include "runtime/kernels_qlut.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2, FMA and F16C usable: the CPU has them (CPUID leaves 1 and 7) and the
 * OS saves the YMM registers (OSXSAVE, then XCR0 bits 1 and 2). CPUID is read
 * directly because compilers differ in which names __builtin_cpu_supports
 * knows (clang 14 has no "f16c"). */
static int has_avx2_fma_f16c(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
  if (!(fma && osxsave && avx && f16c)) return 0;
  unsigned xcr0_lo, xcr0_hi;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6) != 6) return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return (b >> 5) & 1; /* AVX2 */
}

/* AVX-512F and DQ usable: CPUID leaf 7 EBX bits 16 and 17, and XCR0 saving
 * the opmask and both halves of the 32 ZMM registers (bits 5, 6, 7). */
static int has_avx512f_dq(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || ((b >> 16) & 3) != 3) return 0;
  unsigned xcr0_lo, xcr0_hi;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 0xe6) == 0xe6;
}

/* AVX-512 BW and VNNI (CPUID leaf 7: EBX bit 30, ECX bit 11), on top of
 * has_avx512f_dq: vpdpbusd for QCONV2D. */
static int has_avx512_vnni(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return ((b >> 30) & 1) && ((c >> 11) & 1);
}

/* AVX-512 BW and VL (CPUID leaf 7: EBX bits 30, 31), on top of
 * has_avx512f_dq: 16-bit masked moves on YMM registers for COPY_SLICE. */
static int has_avx512_bw_vl(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return ((b >> 30) & 3) == 3;
}

/* AVX-512 BW and VBMI (CPUID leaf 7: EBX bit 30, ECX bit 1), on top of
 * has_avx512f_dq: vpermi2b for QLUT. */
static int has_avx512_vbmi(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return ((b >> 30) & 1) && ((c >> 1) & 1);
}
#endif

/* An environment switch: -1 unset or empty, 0 when it is "0", else 1. */
static int env_switch(const char *name) {
  const char *v = getenv(name);
  if (!v || !v[0]) return -1;
  return !(v[0] == '0' && v[1] == 0);
}

static rt_cpu_paths paths;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void detect(void) {
  paths = (rt_cpu_paths){.name = "portable"};
  if (env_switch("OMRT_PORTABLE") == 1) {
    paths.name = "portable (OMRT_PORTABLE)";
    return;
  }
  paths.baseline = 1;
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx2_fma_f16c()) {
    paths.name = "avx2+fma+f16c";
    paths.conv_tile = rt_conv_tile_x86;
    paths.dwconv = rt_dwconv_x86;
    paths.pool = rt_pool_x86;
    paths.transdata = rt_transdata_x86;
    paths.convert = rt_convert_x86;
    paths.wino_fz_tile = rt_wino_fz_tile_x86;
    paths.matmul_tile = rt_matmul_tile_x86;
    paths.exp = rt_exp_x86;
    paths.sigmoid = rt_sigmoid_x86;
    paths.erf = rt_erf_x86;
    paths.mm_act_epilogue = rt_mm_act_epilogue_x86;
    paths.fma = rt_fma_x86;
    paths.vmax = rt_vmax_x86;
    paths.vsum = rt_vsum_x86;
    paths.vexp_sum = rt_vexp_sum_x86;
    paths.vsum_sqdev = rt_vsum_sqdev_x86;
    paths.gemm16 = rt_gemm16_acc_x86;
    paths.h2f = rt_h2f_x86;
    paths.f2h = rt_f2h_x86;
    paths.round16 = rt_round16_x86;
    paths.gemv = rt_gemv_x86;
    paths.qconv_tile = rt_qconv_tile_avx2;
    paths.qeltwise = rt_qelt_avx2;
    paths.qlut = rt_qlut_avx2;
    if (has_avx512f_dq() && env_switch("OMRT_AVX512") != 0) {
      paths.name = "avx512f+avx2+fma+f16c";
      paths.avx512 = 1;
      paths.wino_fz_tile = rt_wino_fz_tile_avx512;
      paths.dwconv = rt_dwconv_avx512;
      paths.vexp_sum = rt_vexp_sum_avx512;
      paths.vexp_sum_r16 = rt_vexp_sum_r16_avx512;
      paths.layernorm = rt_layernorm_avx512;
      paths.attn_scale_max = rt_attn_scale_max_avx512;
      paths.attn_stage_k = rt_attn_stage_k_avx512;
      paths.mm_act_epilogue = rt_mm_act_epilogue_avx512;
      paths.round16 = rt_round16_avx512;
      paths.gemv = rt_gemv_avx512;
      paths.qeltwise = rt_qelt_avx512;
      if (has_avx512_vbmi()) paths.qlut = rt_qlut_vbmi;
      if (has_avx512_bw_vl()) paths.copy_lanes16 = rt_copy_lanes16_avx512bw;
      if (has_avx512_vnni()) {
        paths.name = "avx512f+vnni+avx2+fma+f16c";
        paths.qconv_tile = rt_qconv_tile_vnni;
        paths.qconv_dw_tile = rt_qconv_dw_tile_vnni;
      }
    }
  }
#endif
}

const rt_cpu_paths *_Atomic rt_cpu_detected;

const rt_cpu_paths *rt_cpu_detect(void) {
  pthread_once(&once, detect);
  atomic_store_explicit(&rt_cpu_detected, &paths, memory_order_release);
  return &paths;
}
