/* om_aipp.h - the AIPP task kind (atc's --insert_op_conf image
 * preprocessing): its slots, its 192-byte parameter record and the
 * per-pixel steps both the runtime and the reference evaluator use. Part of
 * the om format: include om_format.h. */
#ifndef COMMON_OM_AIPP_H
#define COMMON_OM_AIPP_H

#include "om_task_kind.h"

/* AIPP (vector unit): the image preprocessing of atc's --insert_op_conf,
 *   the model's first task on an image input: raw uint8 pixels as a camera
 *   or decoder delivers them in, the model's first layer's input out.
 *   tensors: src ND uint8 (the model input: the raw images, one after
 *   another), params ND uint8 of 1 or N om_aipp_params records
 *   (OM_AIPP_PARAMS_BYTES each: in WEIGHTS for static AIPP, a model input
 *   for dynamic AIPP, set by the application per run), y [N, C, H, W] f16
 *   or f32, NC1HWC0 or ND. params: none (the records say everything).
 *   One record serves every image; N records: record n serves image n
 *   (om_aipp_record), and they agree on what the images share (the calls
 *   of AscendCL without a batchIndex: format, image size, swaps, csc;
 *   om_aipp_same_images): per image go the crop, padding, mean, min and
 *   var_reci.
 *   Per image n (src bytes [n*S, (n+1)*S), S = om_aipp_image_bytes of the
 *   record's format and size) and output pixel (h, w), by image n's record:
 *   when (h, w) lies in
 *   the padding (h < pad_top, h >= H - pad_bottom, w < pad_left, w >= W -
 *   pad_right), every channel is pad_value. Otherwise the source pixel is
 *   (crop_y + h - pad_top, crop_x + w - pad_left) (crop off: crop_x =
 *   crop_y = 0), and in the order the hardware applies them:
 *   1. read its channels p[0..2] (YUV400: p[0] only) as integers 0..255:
 *      YUV420SP_U8 (NV12): Y plane of src_w*src_h bytes, then src_h/2 rows
 *      of src_w/2 interleaved (U, V) pairs: p = (Y, U, V); XRGB8888_U8: 4
 *      bytes a pixel (X, R, G, B), or (R, G, B, X) with ax_swap: p = (R,
 *      G, B); RGB888_U8: 3 bytes a pixel: p = (R, G, B); YUV400_U8: one
 *      byte: p = (Y).
 *   2. swap: rbuv_swap exchanges p[1] and p[2] of YUV420SP (NV21: V
 *      before U) and p[0] and p[2] of the RGB formats (BGR).
 *   3. csc (3 channels): q[i] = clamp(((sum_j matrix[i][j] * (p[j] -
 *      input_bias[j])) >> 8) + output_bias[i], 0, 255) in 32-bit integers,
 *      >> an arithmetic shift (floor); else q = p.
 *   4. channel c of y = ((float)(q[c] - mean[c]) - min[c]) * var_reci[c],
 *      in f32 (each operation rounded to f32), then rounded once to y's
 *      dtype (f16: to nearest even).
 *   The image is src_w x src_h; crop_x + crop_w <= src_w, crop_y + crop_h
 *   <= src_h; crop_w + pad_left + pad_right = W, crop_h + pad_top +
 *   pad_bottom = H (crop off: crop_w = src_w, crop_h = src_h); C = 3 (1
 *   for YUV400, which has no csc); YUV420SP has even src_w, src_h, crop_x
 *   and crop_y. The loader checks static records; omrt_execute checks
 *   dynamic ones before it runs any task, and the images must fit src:
 *   N * S <= src bytes. NC1HWC0 lanes past C are written 0. Block unit:
 *   output rows, N*H. */
enum { OM_AIPP_T_SRC = 0, OM_AIPP_T_PARAMS = 1, OM_AIPP_T_Y = 2, OM_AIPP_NTENSORS = 3 };
enum { OM_AIPP_WRITES = OM_SLOT(OM_AIPP_T_Y) };
enum { OM_AIPP_NPARAMS = 0 };

typedef enum om_aipp_format {
  OM_AIPP_YUV420SP_U8 = 1,
  OM_AIPP_XRGB8888_U8 = 2,
  OM_AIPP_RGB888_U8 = 3,
  OM_AIPP_YUV400_U8 = 4,
} om_aipp_format;

typedef struct om_aipp_params {                                 /* 192 bytes: AIPP's record */
  uint32_t input_format;                                        /* om_aipp_format */
  int32_t src_w, src_h;                                         /* pixels, >= 1 */
  uint8_t csc, rbuv_swap, ax_swap, crop, padding, reserved0[3]; /* switches, 0|1 */
  int32_t crop_x, crop_y, crop_w, crop_h;                       /* pixels */
  int32_t pad_left, pad_right, pad_top, pad_bottom;             /* pixels, >= 0 */
  int32_t matrix[3][3];                                         /* csc, -32768..32767 */
  int32_t input_bias[3];                                        /* csc, 0..255 */
  int32_t output_bias[3];                                       /* csc, 0..255 */
  int32_t mean[4];                                              /* -32768..32767; [3] unused */
  float min[4], var_reci[4];                                    /* finite; [3] unused */
  float pad_value;                                              /* finite */
  uint32_t reserved[7];                                         /* zero */
} om_aipp_params;
enum { OM_AIPP_PARAMS_BYTES = 192, OM_AIPP_MAX_SIDE = 8192 };

/* The record of image n in a params tensor of `bytes` bytes (1 or N
 * records). */
static inline uint64_t om_aipp_record(uint64_t bytes, uint64_t n) {
  return bytes > OM_AIPP_PARAMS_BYTES ? n : 0;
}

/* 1 when a and b agree on the fields every image of a batch shares. */
static inline int om_aipp_same_images(const om_aipp_params *a, const om_aipp_params *b) {
  int same = a->input_format == b->input_format && a->src_w == b->src_w && a->src_h == b->src_h &&
             a->csc == b->csc && a->rbuv_swap == b->rbuv_swap && a->ax_swap == b->ax_swap;
  for (int i = 0; i < 3; i++) {
    same &= a->input_bias[i] == b->input_bias[i] && a->output_bias[i] == b->output_bias[i];
    for (int j = 0; j < 3; j++)
      same &= a->matrix[i][j] == b->matrix[i][j];
  }
  return same;
}

/* Bytes of one image of `format`, w x h pixels (0 for a bad format). */
static inline uint64_t om_aipp_image_bytes(uint32_t format, uint64_t w, uint64_t h) {
  switch (format) {
  case OM_AIPP_YUV420SP_U8: return w * h * 3 / 2;
  case OM_AIPP_XRGB8888_U8: return w * h * 4;
  case OM_AIPP_RGB888_U8: return w * h * 3;
  case OM_AIPP_YUV400_U8: return w * h;
  default: return 0;
  }
}

/* Steps 1-3 above for one output pixel: the channels of source pixel
 * (x, y) of image `img` (om_aipp_image_bytes of p's format and size),
 * read, swapped and, with csc on, converted, into q[0..2] (0..255; YUV400
 * leaves q[1] = q[2] = 0). The one transcription of those steps: the
 * evaluator and the kernels call it. */
static inline void om_aipp_pixel(const om_aipp_params *p, const uint8_t *img, int32_t x, int32_t y,
                                 int32_t q[3]) {
  const uint64_t w = (uint64_t)p->src_w, h = (uint64_t)p->src_h, at = (uint64_t)y * w + (uint64_t)x;
  if (p->input_format == OM_AIPP_YUV420SP_U8) {
    const uint8_t *uv = img + w * h + (uint64_t)(y / 2) * w + (uint64_t)(x / 2) * 2;
    q[0] = img[at], q[1] = uv[p->rbuv_swap ? 1 : 0], q[2] = uv[p->rbuv_swap ? 0 : 1];
  } else if (p->input_format == OM_AIPP_XRGB8888_U8 || p->input_format == OM_AIPP_RGB888_U8) {
    const int bpp = p->input_format == OM_AIPP_RGB888_U8 ? 3 : 4;
    const uint8_t *px = img + at * (uint64_t)bpp + (bpp == 4 && !p->ax_swap);
    q[0] = px[p->rbuv_swap ? 2 : 0], q[1] = px[1], q[2] = px[p->rbuv_swap ? 0 : 2];
  } else { /* YUV400 */
    q[0] = img[at], q[1] = q[2] = 0;
  }
  if (!p->csc) return;
  int32_t o[3];
  for (int i = 0; i < 3; i++) {
    int32_t acc = 0;
    for (int j = 0; j < 3; j++)
      acc += p->matrix[i][j] * (q[j] - p->input_bias[j]);
    acc = (acc >> 8) + p->output_bias[i];
    o[i] = acc < 0 ? 0 : acc > 255 ? 255 : acc;
  }
  q[0] = o[0], q[1] = o[1], q[2] = o[2];
}

#endif
