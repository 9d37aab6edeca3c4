/* kernels_aipp.c - AIPP: raw camera/decoder pixels into the model's first
 * layer (om_format.h states the task and the arithmetic exactly), and the
 * one validation of an om_aipp_params record against its task, which the
 * loader runs on a static record, omrt_execute on a dynamic one before any
 * task runs, and omrt_aipp_pack on what an application sets.
 *
 * The kernel walks output rows (n, h): a row is padding, or a run of source
 * pixels between padding columns. Each pixel's channels are read as
 * integers, swapped, colour converted in 32-bit integers with the >> 8 and
 * the clamp, then normalised in f32 and rounded once to y's dtype. The
 * record is copied out of the params tensor first (a dynamic record sits
 * in the caller's input buffer, at any alignment).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/kernels.h"

const char *rt_aipp_format_name(uint32_t f) {
  switch (f) {
  case OM_AIPP_YUV420SP_U8: return "YUV420SP_U8";
  case OM_AIPP_XRGB8888_U8: return "XRGB8888_U8";
  case OM_AIPP_RGB888_U8: return "RGB888_U8";
  case OM_AIPP_YUV400_U8: return "YUV400_U8";
  default: return "?";
  }
}

int rt_aipp_validate(const om_aipp_params *p, const int64_t ydims[4], uint64_t src_bytes, char *msg,
                     size_t len) {
#define BAD(...) return snprintf(msg, len, __VA_ARGS__), 1
  const int64_t n = ydims[0], c = ydims[1], h = ydims[2], w = ydims[3];
  if (p->input_format < OM_AIPP_YUV420SP_U8 || p->input_format > OM_AIPP_YUV400_U8)
    BAD("input_format %u is not an AIPP format", p->input_format);
  if (p->src_w < 1 || p->src_h < 1 || p->src_w > OM_AIPP_MAX_SIDE || p->src_h > OM_AIPP_MAX_SIDE)
    BAD("src_image_size %dx%d outside 1..%d", p->src_w, p->src_h, OM_AIPP_MAX_SIDE);
  if (p->csc > 1 || p->rbuv_swap > 1 || p->ax_swap > 1 || p->crop > 1 || p->padding > 1)
    BAD("a switch is not 0 or 1");
  for (int i = 0; i < 3; i++)
    if (p->reserved0[i]) BAD("reserved bytes are not zero");
  for (int i = 0; i < 7; i++)
    if (p->reserved[i]) BAD("reserved words are not zero");
  int yuv = p->input_format == OM_AIPP_YUV420SP_U8, gray = p->input_format == OM_AIPP_YUV400_U8;
  if (gray && (p->csc || p->rbuv_swap)) BAD("YUV400_U8 takes no csc and no rbuv_swap");
  if (p->ax_swap && p->input_format != OM_AIPP_XRGB8888_U8) BAD("ax_swap_switch needs XRGB8888_U8");
  if (c != (gray ? 1 : 3))
    BAD("%s gives %d channel%s; the model input has %lld", rt_aipp_format_name(p->input_format), gray ? 1 : 3,
        gray ? "" : "s", (long long)c);
  if (!p->crop && (p->crop_x || p->crop_y || p->crop_w != p->src_w || p->crop_h != p->src_h))
    BAD("crop is off but the crop window is not the whole image");
  if (p->crop_x < 0 || p->crop_y < 0 || p->crop_w < 1 || p->crop_h < 1 || p->crop_x > p->src_w - p->crop_w ||
      p->crop_y > p->src_h - p->crop_h)
    BAD("crop %dx%d at (%d, %d) is not inside the %dx%d image", p->crop_w, p->crop_h, p->crop_x, p->crop_y,
        p->src_w, p->src_h);
  if (yuv && ((p->src_w | p->src_h | p->crop_x | p->crop_y) & 1))
    BAD("YUV420SP_U8 needs an even image size and crop start (%dx%d at (%d, %d))", p->src_w, p->src_h,
        p->crop_x, p->crop_y);
  if (p->pad_left < 0 || p->pad_right < 0 || p->pad_top < 0 || p->pad_bottom < 0 ||
      p->pad_left > OM_AIPP_MAX_SIDE || p->pad_right > OM_AIPP_MAX_SIDE || p->pad_top > OM_AIPP_MAX_SIDE ||
      p->pad_bottom > OM_AIPP_MAX_SIDE)
    BAD("a padding size is outside 0..%d", OM_AIPP_MAX_SIDE);
  if (!p->padding && (p->pad_left || p->pad_right || p->pad_top || p->pad_bottom))
    BAD("padding is off but a padding size is not 0");
  if ((int64_t)p->crop_w + p->pad_left + p->pad_right != w ||
      (int64_t)p->crop_h + p->pad_top + p->pad_bottom != h)
    BAD("the image after crop and padding is %lldx%lld (WxH); the model input is %lldx%lld",
        (long long)p->crop_w + p->pad_left + p->pad_right, (long long)p->crop_h + p->pad_top + p->pad_bottom,
        (long long)w, (long long)h);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++)
      if (p->matrix[i][j] < -32768 || p->matrix[i][j] > 32767)
        BAD("matrix_r%dc%d = %d outside -32768..32767", i, j, p->matrix[i][j]);
    if (p->input_bias[i] < 0 || p->input_bias[i] > 255)
      BAD("input_bias_%d = %d outside 0..255", i, p->input_bias[i]);
    if (p->output_bias[i] < 0 || p->output_bias[i] > 255)
      BAD("output_bias_%d = %d outside 0..255", i, p->output_bias[i]);
  }
  for (int i = 0; i < 4; i++) {
    if (p->mean[i] < -32768 || p->mean[i] > 32767)
      BAD("mean_chn_%d = %d outside -32768..32767", i, p->mean[i]);
    if (!isfinite(p->min[i]) || !isfinite(p->var_reci[i]))
      BAD("min_chn_%d or var_reci_chn_%d is not finite", i, i);
  }
  if (!isfinite(p->pad_value)) BAD("padding_value is not finite");
  uint64_t img = om_aipp_image_bytes(p->input_format, (uint64_t)p->src_w, (uint64_t)p->src_h);
  if ((uint64_t)n * img > src_bytes)
    BAD("%lld %s image%s of %dx%d need %llu bytes; the input holds %llu", (long long)n,
        rt_aipp_format_name(p->input_format), n == 1 ? "" : "s", p->src_w, p->src_h,
        (unsigned long long)((uint64_t)n * img), (unsigned long long)src_bytes);
  return 0;
#undef BAD
}

int rt_aipp_validate_records(const uint8_t *recs, uint64_t bytes, const int64_t ydims[4], uint64_t src_bytes,
                             int image_size_gears, char *msg, size_t len) {
  const uint64_t n = (uint64_t)ydims[0], nrec = bytes / OM_AIPP_PARAMS_BYTES;
  if (bytes % OM_AIPP_PARAMS_BYTES || (nrec != 1 && nrec < n))
    return snprintf(msg, len, "%llu bytes of parameters: one record of %d bytes, or one per image (%llu)",
                    (unsigned long long)bytes, OM_AIPP_PARAMS_BYTES, (unsigned long long)n),
           1;
  om_aipp_params first, p;
  memcpy(&first, recs, sizeof first);
  for (uint64_t i = 0; i < (nrec == 1 ? 1 : n); i++) {
    memcpy(&p, recs + i * OM_AIPP_PARAMS_BYTES, sizeof p);
    const char *img = nrec == 1 ? "" : "image ";
    char at[32] = "";
    if (nrec > 1) snprintf(at, sizeof at, "%llu: ", (unsigned long long)i);
    if (image_size_gears && (p.crop || p.padding))
      return snprintf(
                 msg, len,
                 "%s%s%s is on; with image size gears dynamic AIPP takes no crop or padding (ATC's rule)",
                 img, at, p.crop ? "crop" : "padding"),
             1;
    int l = snprintf(msg, len, "%s%s", img, at);
    if (rt_aipp_validate(&p, ydims, src_bytes, msg + l, len - (size_t)l)) return 1;
    if (!om_aipp_same_images(&p, &first))
      return snprintf(msg, len,
                      "image %llu's format, image size, swaps or csc differ from image 0's; the images of a "
                      "batch share them (only crop, padding, mean, min and var_reci go per image)",
                      (unsigned long long)i),
             1;
  }
  msg[0] = 0;
  return 0;
}

omrt_status rt_aipp_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "AIPP"};
  const om_tensor *src = NULL, *par = NULL, *y = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_AIPP_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_AIPP_T_SRC, "src", &src)) ||
      (s = rt_chk_nd_tensor(&c, OM_AIPP_T_PARAMS, "params", &par)) ||
      (s = rt_chk_tensor(&c, OM_AIPP_T_Y, "y", 0, RT_LAYOUTS_ND_NC1HWC0, 4, 0, &y)))
    return s;
  for (int k = 0; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k]) return rt_chk_fail(&c, "params[%d] = %d, expected 0", k, task->params[k]);
  if (src->dtype != DT_UINT8 || src->region != OM_REGION_INPUT)
    return rt_chk_fail(&c, "src: dtype %u in region %s, expected uint8 in INPUT", src->dtype,
                       rt_region_name(src->region));
  if (par->dtype != DT_UINT8 ||
      (par->bytes != OM_AIPP_PARAMS_BYTES && par->bytes != OM_AIPP_PARAMS_BYTES * (uint64_t)y->dims[0]) ||
      (par->region != OM_REGION_WEIGHTS && par->region != OM_REGION_INPUT))
    return rt_chk_fail(&c,
                       "params: dtype %u, %llu bytes in region %s, expected uint8 in WEIGHTS or INPUT, one "
                       "%d-byte record or one per image",
                       par->dtype, (unsigned long long)par->bytes, rt_region_name(par->region),
                       OM_AIPP_PARAMS_BYTES);
  if (y->dims[1] > 4 || y->dims[0] < 1 || y->dims[2] < 1 || y->dims[3] < 1)
    return rt_chk_fail(&c, "y dims [%lld, %lld, %lld, %lld]: at most 4 channels, no empty dim",
                       (long long)y->dims[0], (long long)y->dims[1], (long long)y->dims[2],
                       (long long)y->dims[3]);
  char msg[300];
  if (par->region == OM_REGION_WEIGHTS &&
      rt_aipp_validate_records(m->weights + par->offset, par->bytes, y->dims, src->bytes, 0, msg, sizeof msg))
    return rt_chk_fail(&c, "params: %s", msg);
  return rt_chk_block_dim(&c, (uint64_t)y->dims[0] * (uint64_t)y->dims[2], "y rows");
}

static void store(void *y, int f16, size_t at, float v) {
  if (f16)
    ((uint16_t *)y)[at] = rt_f2h(v);
  else
    ((float *)y)[at] = v;
}

void rt_aipp_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)core;
  const om_tensor *yt = args->desc[OM_AIPP_T_Y];
  const uint8_t *src = args->data[OM_AIPP_T_SRC];
  void *y = args->data[OM_AIPP_T_Y];
  const uint8_t *recs = args->data[OM_AIPP_T_PARAMS];
  const uint64_t rec_bytes = args->desc[OM_AIPP_T_PARAMS]->bytes;
  om_aipp_params p;
  memcpy(&p, recs, sizeof p); /* image 0's: what the images share */
  const int64_t C = yt->dims[1], H = yt->dims[2], W = yt->dims[3];
  const int f16 = yt->dtype == DT_FLOAT16, c5 = yt->layout == LAYOUT_NC1HWC0;
  const uint64_t img_bytes = om_aipp_image_bytes(p.input_format, (uint64_t)p.src_w, (uint64_t)p.src_h);
  int64_t have = 0; /* the image whose record p holds */
  /* Element (c, w) of row (n, h): ND [N][C][H][W]; NC1HWC0 [N][1][H][W][16] (C <= 4). */
  const size_t cstride = c5 ? 1 : (size_t)(H * W), wstride = c5 ? 16 : 1;
  uint64_t lo, hi;
  rt_block_range((uint64_t)yt->dims[0] * (uint64_t)H, task->block_dim, block, &lo, &hi);
  for (uint64_t r = lo; r < hi; r++) {
    const int64_t n = (int64_t)(r / (uint64_t)H), h = (int64_t)(r % (uint64_t)H);
    if (n != have)
      memcpy(&p, recs + om_aipp_record(rec_bytes, (uint64_t)n) * OM_AIPP_PARAMS_BYTES, sizeof p), have = n;
    const size_t row =
        c5 ? (size_t)(n * H + h) * (size_t)W * 16 : (size_t)n * (size_t)(C * H * W) + (size_t)(h * W);
    if (c5) /* the lanes past C are 0 (+0.0 is all-zero bits in f16 and f32) */
      memset((uint8_t *)y + row * (f16 ? 2 : 4), 0, (size_t)W * 16 * (f16 ? 2 : 4));
    const int pad_row = h < p.pad_top || h >= H - p.pad_bottom;
    const uint8_t *img = src + (size_t)n * img_bytes;
    for (int64_t w = 0; w < W; w++) {
      const size_t at = row + (size_t)w * wstride;
      if (pad_row || w < p.pad_left || w >= W - p.pad_right) {
        for (int64_t c = 0; c < C; c++)
          store(y, f16, at + (size_t)c * cstride, p.pad_value);
        continue;
      }
      int32_t q[3];
      om_aipp_pixel(&p, img, p.crop_x + (int32_t)(w - p.pad_left), p.crop_y + (int32_t)(h - p.pad_top), q);
      for (int64_t c = 0; c < C; c++) {
        float v = ((float)(q[c] - p.mean[c]) - p.min[c]) * p.var_reci[c];
        store(y, f16, at + (size_t)c * cstride, v);
      }
    }
  }
}
