/* test_qpool.c - POOL's max pooling on u8 and i8 NC1HWC0 (the int8 stem
 * pool of a quantized model, runtime/kernels_qpool.c) against a direct
 * NCHW reference: random bytes over odd channel counts, strides, asymmetric
 * pads and ceil-mode windows that end past the padding; the output bytes
 * must be identical (padding lanes included: the max of padding lanes).
 * Rows wider than the kernel's column buffer (256 pixels) go in pieces:
 * windows across a piece's edge and a window wider than a piece.
 * Also the load-time check's refusals of int8 average pooling and of a y
 * of another dtype.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase.h"

static uint32_t rng = 777;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

enum { X = OM_POOL_T_X, Y = OM_POOL_T_Y };

typedef struct pcase {
  int64_t n, c, h, w, ho, wo;
  int kh, kw, sh, sw, pt, pl, pb, pr, dt;
} pcase;

static int32_t val(int dt, uint8_t b) { return dt == DT_INT8 ? (int32_t)(int8_t)b : (int32_t)b; }

static void run_case(const pcase *p) {
  kcase c;
  const int64_t xd[4] = {p->n, p->c, p->h, p->w}, yd[4] = {p->n, p->c, p->ho, p->wo};
  const int64_t c1 = (p->c + 15) / 16;
  kc_setup(&c, OM_TASK_POOL, (uint32_t)(p->n * c1 < 3 ? p->n * c1 : 3), OM_POOL_NTENSORS);
  kc_set_layout(&c, X, p->dt, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&c, Y, p->dt, LAYOUT_NC1HWC0, 4, yd);
  uint8_t *x = c.data[X], *y = c.data[Y];
  for (uint64_t i = 0; i < c.t[X].bytes; i++)
    x[i] = (uint8_t)next();
  int32_t *q = c.task.params;
  q[OM_POOL_P_KH] = p->kh, q[OM_POOL_P_KW] = p->kw, q[OM_POOL_P_STRIDE_H] = p->sh,
  q[OM_POOL_P_STRIDE_W] = p->sw;
  q[OM_POOL_P_PAD_TOP] = p->pt, q[OM_POOL_P_PAD_LEFT] = p->pl, q[OM_POOL_P_PAD_BOTTOM] = p->pb,
  q[OM_POOL_P_PAD_RIGHT] = p->pr;
  omrt_status s = kc_check(&c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) {
    test_note("  %s", omrt_last_error());
    kc_free(&c);
    return;
  }
  kc_run_blocks(&c, kc_core());
  size_t bad = 0;
  for (int64_t plane = 0; plane < p->n * c1; plane++)
    for (int64_t oh = 0; oh < p->ho; oh++)
      for (int64_t ow = 0; ow < p->wo; ow++)
        for (int l = 0; l < 16; l++) {
          int32_t want = -1000;
          for (int64_t ih = oh * p->sh - p->pt; ih < oh * p->sh - p->pt + p->kh; ih++)
            for (int64_t iw = ow * p->sw - p->pl; iw < ow * p->sw - p->pl + p->kw; iw++) {
              if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
              int32_t v = val(p->dt, x[((plane * p->h + ih) * p->w + iw) * 16 + l]);
              want = v > want ? v : want;
            }
          bad += val(p->dt, y[((plane * p->ho + oh) * p->wo + ow) * 16 + l]) != want;
        }
  CHECK(bad == 0);
  if (bad)
    test_note("  %s %lldx%lldx%lldx%lld k %dx%d s %d,%d: %zu bytes differ", dtype_name(p->dt),
              (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, p->kh, p->kw, p->sh, p->sw,
              bad);
  kc_free(&c);
}

static void test_rejects(void) {
  kcase c;
  const int64_t xd[4] = {1, 16, 4, 4}, yd[4] = {1, 16, 2, 2};
  kc_setup(&c, OM_TASK_POOL, 1, OM_POOL_NTENSORS);
  kc_set_layout(&c, X, DT_UINT8, LAYOUT_NC1HWC0, 4, xd);
  kc_set_layout(&c, Y, DT_UINT8, LAYOUT_NC1HWC0, 4, yd);
  int32_t *q = c.task.params;
  q[OM_POOL_P_KH] = q[OM_POOL_P_KW] = q[OM_POOL_P_STRIDE_H] = q[OM_POOL_P_STRIDE_W] = 2;
  CHECK_EQ_INT(kc_check(&c), OMRT_OK);
  q[OM_POOL_P_MODE] = 1;
  expect_reject(&c, "u8 average pooling", "u8/i8 pooling is max");
  q[OM_POOL_P_MODE] = 0;
  kc_set_layout(&c, Y, DT_INT8, LAYOUT_NC1HWC0, 4, yd);
  expect_reject(&c, "i8 y of u8 x", "u8/i8 pooling is max");
  kc_set_layout(&c, Y, DT_FLOAT32, LAYOUT_NC1HWC0, 4, yd);
  expect_reject(&c, "f32 y of u8 x", "u8/i8 pooling is max");
  kc_free(&c);
}

int main(void) {
  const int U8 = DT_UINT8, I8 = DT_INT8;
  const pcase cases[] = {
      /* n  c   h   w  ho  wo kh kw sh sw pt pl pb pr dt */
      {1, 64, 12, 12, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, U8},   /* ResNet's stem pool */
      {2, 20, 9, 7, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1, I8},     /* odd C, i8 */
      {1, 5, 8, 9, 4, 5, 2, 3, 2, 2, 0, 1, 0, 1, I8},      /* asymmetric window and pads */
      {1, 16, 7, 7, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, U8},     /* ceil mode: the last window past the input */
      {1, 33, 5, 5, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, U8},     /* stride 1 */
      {1, 16, 3, 600, 1, 200, 3, 5, 1, 3, 0, 2, 0, 1, I8}, /* rows of 3 pieces, windows across their edges */
      {1, 16, 2, 610, 1, 3, 2, 300, 1, 150, 0, 0, 0, 0, U8}, /* a window wider than a piece */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(&cases[i]);
  test_rejects();
  return test_summary("test_qpool");
}
