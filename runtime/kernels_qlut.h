/* kernels_qlut.h - QLUT (om_tasks.h), an int8 -> int8 elementwise function
 * as a 256-entry table: the portable and x86 paths (kernels_qlut.c), which
 * the tests call one by one.
 *
 * A run function writes y[i] = table[x[i]] for i in [0, n). Every path
 * reads the same table entry for each byte, so their bytes are identical.
 */
#ifndef RUNTIME_KERNELS_QLUT_H
#define RUNTIME_KERNELS_QLUT_H

#include <stddef.h>
#include <stdint.h>

typedef void (*rt_qlut_fn)(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n);

/* The portable run. table: 256 bytes; x, y: n bytes each (y may be x). */
void rt_qlut_c(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n);
#if defined(__x86_64__) && defined(__GNUC__)
/* AVX2 (16 vpshufb lookups per 32 bytes) and AVX-512 VBMI (two vpermi2b per
 * 64 bytes); callable only where rt_cpu() says the CPU has them. */
void rt_qlut_avx2(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n);
void rt_qlut_vbmi(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n);
#endif

#endif
