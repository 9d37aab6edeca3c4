/* kernels_qeltwise.h - QELTWISE (om_tasks.h), the int8 elementwise op of
 * a QDQ model's residual adds: what its portable and x86 paths
 * (kernels_qeltwise.c) share, and what the tests call to run each path.
 *
 * A run function computes y[i] for the n bytes from i0 with
 * common/quant.h's q_eltwise. Every path does the same f32 operations in
 * the same order, so their bytes are identical.
 */
#ifndef RUNTIME_KERNELS_QELTWISE_H
#define RUNTIME_KERNELS_QELTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"

typedef struct rt_qelt {
  const uint8_t *a, *b; /* u8 or i8 bytes, y's layout */
  uint8_t *y;
  uint8_t amask, bmask; /* 0x80 for i8 (read as u = x ^ 0x80 = x + 128), else 0 */
  int32_t azp, bzp;     /* the zero points as u reads them (+ 128 for i8) */
  float as, bs, ys;     /* scales */
  int32_t yzp, lo, hi;  /* y's zero point and clamp, in y's dtype */
  int mul;              /* 0 add, 1 mul */
} rt_qelt;

typedef void (*rt_qelt_fn)(const rt_qelt *q, size_t i0, size_t n);

/* Fills *q from a task checked at load (rt_qeltwise_check) and its data. */
void rt_qelt_init(const om_task *task, const rt_args *args, rt_qelt *q);
/* The portable run. */
void rt_qelt_c(const rt_qelt *q, size_t i0, size_t n);
#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2 (8 lanes) and AVX-512F (16 lanes) runs; callable only where rt_cpu()
 * says the CPU has them. */
void rt_qelt_avx2(const rt_qelt *q, size_t i0, size_t n);
void rt_qelt_avx512(const rt_qelt *q, size_t i0, size_t n);
#endif

#endif
