/* kernels_qdw.h - QCONV2D's depthwise tile on AVX-512 VNNI
 * (kernels_qdw_x86.c): four output pixels of a row a step, their inputs
 * as chunks of 4 pixels turned channel-major. A tile function as
 * kernels_qconv.h's, with the same bytes; it takes any QCONV2D tile and
 * hands what it does not do (not depthwise, a residual, a window of more
 * than 7 rows or whose 4 pixels span more than 16 input columns) to
 * rt_qconv_tile_vnni. Callable only where rt_cpu() says the CPU has
 * AVX-512 VNNI.
 */
#ifndef RUNTIME_KERNELS_QDW_H
#define RUNTIME_KERNELS_QDW_H

#include "runtime/kernels_qconv.h"

#if defined(__x86_64__) && defined(__GNUC__)
void rt_qconv_dw_tile_vnni(const rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                           int64_t nb1);
#endif

#endif
