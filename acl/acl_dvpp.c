/* acl_dvpp.c - AscendCL's media processing (acl/ops/acl_dvpp.h) in
 * software: device memory for pictures, the description objects (single and
 * batched), channels, JPEG decode (dvpp_jpeg.c), JPEG encode (dvpp_jpege.c),
 * PNG decode (dvpp_png.c) and VPC (dvpp_vpc.c) run as tasks on the caller's
 * stream.
 *
 * A processing call checks everything it can at once (AscendCL's code and a
 * message naming the argument and field): the channel, the input's header
 * or description against the documented limits of the Ascend 310 (PNGD:
 * 310P), the output description's format, buffer and size. It then sets the
 * output description's width, height and strides and queues the task; the
 * task sets the description's ret code (0, or 1 on failure) when the stream
 * runs it, and a failure (a corrupt entropy-coded segment or deflate stream,
 * a JPEG larger than its buffer) is the stream's error at
 * aclrtSynchronizeStream. The data and descriptions must stay alive until
 * then, as on the chip. VPC (resize, crop, crop and paste, and their batch
 * forms) checks the documented rules for every region before queueing one
 * task that runs dvpp_vpc.c's scaler on each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"
#include "acl/dvpp_jpeg.h"
#include "acl/dvpp_jpege.h"
#include "acl/dvpp_png.h"
#include "acl/dvpp_vpc.h"
#include "acl/ops/acl_dvpp.h"

struct acldvppChannelDesc {
  int created; /* acldvppCreateChannel succeeded, acldvppDestroyChannel not yet called */
};

struct acldvppPicDesc {
  void *data;
  uint32_t size, width, height, width_stride, height_stride, ret_code;
  acldvppPixelFormat format;
};

struct acldvppRoiConfig {
  uint32_t left, right, top, bottom;
};

struct acldvppResizeConfig {
  int unused;
};

struct acldvppJpegeConfig {
  uint32_t level;
};

aclError acldvppMalloc(void **devPtr, size_t size) {
  return acl_malloc_device("acldvppMalloc", devPtr, size, ACL_MEM_MALLOC_HUGE_FIRST);
}

aclError acldvppFree(void *devPtr) { return acl_free_device("acldvppFree", devPtr); }

/* A zeroed object of n bytes named by `call`; NULL (message recorded) when out of memory. */
static void *object(const char *call, size_t n) {
  void *p = calloc(1, n);
  if (!p) acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  return p;
}

static aclError destroy(const char *call, void *p) {
  if (!p) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the object is NULL", call);
  free(p);
  return ACL_SUCCESS;
}

acldvppChannelDesc *acldvppCreateChannelDesc(void) {
  return object("acldvppCreateChannelDesc", sizeof(acldvppChannelDesc));
}
aclError acldvppDestroyChannelDesc(acldvppChannelDesc *channelDesc) {
  return destroy("acldvppDestroyChannelDesc", channelDesc);
}
aclError acldvppCreateChannel(acldvppChannelDesc *channelDesc) {
  const char *call = "acldvppCreateChannel";
  aclError e = acl_enter(call);
  if (e) return e;
  if (!channelDesc) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: channelDesc is NULL", call));
  if (!acl_current())
    return acl_leave_with(
        acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context (call aclrtSetDevice)", call));
  if (channelDesc->created)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the channel is created already", call));
  channelDesc->created = 1;
  return acl_leave_with(ACL_SUCCESS);
}
aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc) {
  const char *call = "acldvppDestroyChannel";
  aclError e = acl_enter(call);
  if (e) return e;
  if (!channelDesc) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: channelDesc is NULL", call));
  if (!channelDesc->created)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the channel was not created", call));
  channelDesc->created = 0;
  return acl_leave_with(ACL_SUCCESS);
}

acldvppPicDesc *acldvppCreatePicDesc(void) { return object("acldvppCreatePicDesc", sizeof(acldvppPicDesc)); }
aclError acldvppDestroyPicDesc(acldvppPicDesc *picDesc) { return destroy("acldvppDestroyPicDesc", picDesc); }

/* The setters: the field `f` of a non-NULL description. */
#define PIC_SET(name, type, f)                                                                               \
  aclError name(acldvppPicDesc *picDesc, type v) {                                                           \
    if (!picDesc) return acl_fail(ACL_ERROR_INVALID_PARAM, #name ": picDesc is NULL");                       \
    picDesc->f = v;                                                                                          \
    return ACL_SUCCESS;                                                                                      \
  }
PIC_SET(acldvppSetPicDescData, void *, data)
PIC_SET(acldvppSetPicDescSize, uint32_t, size)
PIC_SET(acldvppSetPicDescFormat, acldvppPixelFormat, format)
PIC_SET(acldvppSetPicDescWidth, uint32_t, width)
PIC_SET(acldvppSetPicDescHeight, uint32_t, height)
PIC_SET(acldvppSetPicDescWidthStride, uint32_t, width_stride)
PIC_SET(acldvppSetPicDescHeightStride, uint32_t, height_stride)
PIC_SET(acldvppSetPicDescRetCode, uint32_t, ret_code)

void *acldvppGetPicDescData(const acldvppPicDesc *picDesc) { return picDesc ? picDesc->data : NULL; }
uint32_t acldvppGetPicDescSize(const acldvppPicDesc *picDesc) { return picDesc ? picDesc->size : 0; }
acldvppPixelFormat acldvppGetPicDescFormat(const acldvppPicDesc *picDesc) {
  return picDesc ? picDesc->format : PIXEL_FORMAT_YUV_400;
}
uint32_t acldvppGetPicDescWidth(const acldvppPicDesc *picDesc) { return picDesc ? picDesc->width : 0; }
uint32_t acldvppGetPicDescHeight(const acldvppPicDesc *picDesc) { return picDesc ? picDesc->height : 0; }
uint32_t acldvppGetPicDescWidthStride(const acldvppPicDesc *picDesc) {
  return picDesc ? picDesc->width_stride : 0;
}
uint32_t acldvppGetPicDescHeightStride(const acldvppPicDesc *picDesc) {
  return picDesc ? picDesc->height_stride : 0;
}
uint32_t acldvppGetPicDescRetCode(const acldvppPicDesc *picDesc) { return picDesc ? picDesc->ret_code : 0; }

acldvppRoiConfig *acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top, uint32_t bottom) {
  acldvppRoiConfig *c = object("acldvppCreateRoiConfig", sizeof *c);
  if (c) *c = (acldvppRoiConfig){left, right, top, bottom};
  return c;
}
aclError acldvppDestroyRoiConfig(acldvppRoiConfig *roiConfig) {
  return destroy("acldvppDestroyRoiConfig", roiConfig);
}
aclError acldvppSetRoiConfig(acldvppRoiConfig *config, uint32_t left, uint32_t right, uint32_t top,
                             uint32_t bottom) {
  if (!config) return acl_fail(ACL_ERROR_INVALID_PARAM, "acldvppSetRoiConfig: config is NULL");
  *config = (acldvppRoiConfig){left, right, top, bottom};
  return ACL_SUCCESS;
}

acldvppResizeConfig *acldvppCreateResizeConfig(void) {
  return object("acldvppCreateResizeConfig", sizeof(acldvppResizeConfig));
}
aclError acldvppDestroyResizeConfig(acldvppResizeConfig *resizeConfig) {
  return destroy("acldvppDestroyResizeConfig", resizeConfig);
}
acldvppJpegeConfig *acldvppCreateJpegeConfig(void) {
  return object("acldvppCreateJpegeConfig", sizeof(acldvppJpegeConfig));
}
aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig *jpegeConfig) {
  return destroy("acldvppDestroyJpegeConfig", jpegeConfig);
}

/* --- JPEG decode (JPEGD) */

/* The documented JPEGD limits of the Ascend 310: input 32x32 to 8192x8192;
 * YUV420SP output with the width stride the width rounded up to 128, the
 * height stride the height rounded up to 16, and odd sizes rounded down to
 * even in the description (the decoded column / row is still written). */
enum { JPEGD_MIN = 32, JPEGD_MAX = 8192, JPEGD_WALIGN = 128, JPEGD_HALIGN = 16 };

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* The header of the JPEG at data: its info, or the error (recorded). */
static aclError jpeg_header(const char *call, const void *data, uint32_t size, dvpp_jpeg_info *info) {
  char err[256];
  if (!data) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: data is NULL", call);
  int r = dvpp_jpeg_info_read(data, size, info, err, sizeof err);
  if (r)
    return acl_fail(r == -2 ? ACL_ERROR_FEATURE_UNSUPPORTED : ACL_ERROR_INVALID_PARAM, "%s: %s", call, err);
  return ACL_SUCCESS;
}

static aclError jpegd_limits(const char *call, const dvpp_jpeg_info *info) {
  if (info->width < JPEGD_MIN || info->height < JPEGD_MIN || info->width > JPEGD_MAX ||
      info->height > JPEGD_MAX)
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: a %ux%u JPEG: JPEGD decodes %dx%d to %dx%d", call,
                    info->width, info->height, JPEGD_MIN, JPEGD_MIN, JPEGD_MAX, JPEGD_MAX);
  return ACL_SUCCESS;
}

static aclError jpegd_format(const char *call, acldvppPixelFormat f) {
  if (f != PIXEL_FORMAT_YUV_SEMIPLANAR_420 && f != PIXEL_FORMAT_YVU_SEMIPLANAR_420)
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                    "%s: output format %d: JPEGD outputs PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or "
                    "PIXEL_FORMAT_YVU_SEMIPLANAR_420 (2)",
                    call, (int)f);
  return ACL_SUCCESS;
}

aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width, uint32_t *height,
                                 int32_t *components) {
  dvpp_jpeg_info info;
  aclError e = jpeg_header("acldvppJpegGetImageInfo", data, size, &info);
  if (e) return e;
  if (width) *width = info.width;
  if (height) *height = info.height;
  if (components) *components = info.ncomp;
  return ACL_SUCCESS;
}

aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize, acldvppPixelFormat outputPixelFormat,
                                   uint32_t *decSize) {
  const char *call = "acldvppJpegPredictDecSize";
  dvpp_jpeg_info info;
  aclError e;
  if (!decSize) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: decSize is NULL", call);
  if ((e = jpeg_header(call, data, dataSize, &info)) || (e = jpegd_limits(call, &info)) ||
      (e = jpegd_format(call, outputPixelFormat)))
    return e;
  *decSize = align_up(info.width, JPEGD_WALIGN) * align_up(info.height, JPEGD_HALIGN) * 3 / 2;
  return ACL_SUCCESS;
}

typedef struct jpegd_job {
  const uint8_t *data;
  uint32_t size;
  acldvppPicDesc *out; /* its ret code is set when the task has run */
  dvpp_jpeg_nv12 nv12;
} jpegd_job;

static aclError jpegd_run(void *arg, char *msg, size_t n) {
  jpegd_job *j = arg;
  char err[256];
  int r = dvpp_jpeg_decode(j->data, j->size, &j->nv12, err, sizeof err);
  j->out->ret_code = r ? 1 : 0;
  if (!r) return ACL_SUCCESS;
  snprintf(msg, n, "acldvppJpegDecodeAsync: %s", err);
  return ACL_ERROR_FAILURE;
}

/* Queues work(job) on stream (under the lock), taking job. */
static aclError queue(const char *call, aclrtStream stream, aclError (*work)(void *, char *, size_t),
                      void *job) {
  acl_stream *s = NULL;
  aclError e = acl_resolve_stream(call, stream, &s);
  acl_op *op = e ? NULL : calloc(1, sizeof *op);
  if (!e && !op) e = acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (e) {
    free(job);
    return e;
  }
  *op = (acl_op){.kind = ACL_OP_DVPP, .work = work, .job = job};
  acl_stream_push(s, op);
  return ACL_SUCCESS;
}

/* The channel a processing call names: created (under the lock). */
static aclError check_channel(const char *call, const acldvppChannelDesc *ch) {
  if (!ch) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: channelDesc is NULL", call);
  if (!ch->created)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: channelDesc: the channel was not created (acldvppCreateChannel)", call);
  return ACL_SUCCESS;
}

/* `bytes` at p are device memory (acldvppMalloc), under the lock; `what` names the field. */
static aclError check_device(const char *call, const char *what, const void *p, size_t bytes) {
  const void *base;
  size_t size;
  int r = p ? acl_device_range(p, bytes, &base, &size) : 0;
  if (r == 1) return ACL_SUCCESS;
  if (r < 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s: %zu bytes at %p run past its acldvppMalloc buffer (%zu bytes at %p)", call, what,
                    bytes, p, size, base);
  return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %p is not device memory (acldvppMalloc)", call, what, p);
}

aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
                                acldvppPicDesc *outputDesc, aclrtStream stream) {
  const char *call = "acldvppJpegDecodeAsync";
  aclError e = acl_enter(call);
  if (e) return e;
  dvpp_jpeg_info info;
  if ((e = check_channel(call, channelDesc))) return acl_leave_with(e);
  if (!outputDesc) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: outputDesc is NULL", call));
  if ((e = check_device(call, "data", data, size)) || (e = jpeg_header(call, data, size, &info)) ||
      (e = jpegd_limits(call, &info)) || (e = jpegd_format(call, outputDesc->format)))
    return acl_leave_with(e);
  uint32_t ws = align_up(info.width, JPEGD_WALIGN), hs = align_up(info.height, JPEGD_HALIGN);
  uint32_t need = ws * hs * 3 / 2;
  if (outputDesc->size < need)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM,
                 "%s: outputDesc size %u: a %ux%u JPEG decodes to %u bytes (width stride %u x "
                 "height stride %u x 3 / 2; acldvppJpegPredictDecSize)",
                 call, outputDesc->size, info.width, info.height, need, ws, hs));
  if ((e = check_device(call, "outputDesc data", outputDesc->data, need))) return acl_leave_with(e);
  jpegd_job *j = malloc(sizeof *j);
  if (!j) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  uint8_t *y = outputDesc->data;
  *j = (jpegd_job){data,
                   size,
                   outputDesc,
                   {y, y + (size_t)ws * hs, ws, ws, outputDesc->format == PIXEL_FORMAT_YVU_SEMIPLANAR_420}};
  outputDesc->width = info.width & ~1u;
  outputDesc->height = info.height & ~1u;
  outputDesc->width_stride = ws;
  outputDesc->height_stride = hs;
  outputDesc->size = need;
  return acl_leave_with(queue(call, stream, jpegd_run, j));
}

/* --- PNG decode (PNGD, Ascend 310P only) */

/* The documented PNGD rules: the SoCs that have it (socs/<name>.yaml dvpp.pngd
 * says the same; tests/unit/test_soc.c checks the files), pictures 32x32 to
 * 4096x4096, grey / RGB / grey + alpha / RGBA sources; output RGB888 (any
 * source) or RGBA8888 (sources with alpha), PIXEL_FORMAT_UNKNOWN for the
 * source's own (RGB888 without alpha, RGBA8888 with); width stride the width
 * rounded up to 128 times the bytes per pixel, height stride the height
 * rounded up to 16, size their product. */
enum { PNGD_MIN = 32, PNGD_MAX = 4096, PNGD_WALIGN = 128, PNGD_HALIGN = 16 };

/* Whether the SoC has PNGD (aclrtGetSocName: the last model loaded's,
 * Ascend310 before any); called without the lock. */
static aclError pngd_soc(const char *call) {
  const char *soc = aclrtGetSocName();
  if (soc && !strncmp(soc, "Ascend310P", 10)) return ACL_SUCCESS;
  return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                  "%s: the %s has no PNG decoder (PNGD is an Ascend 310P feature; socs/%s.yaml dvpp.pngd)",
                  call, soc ? soc : "(unknown SoC)", soc ? soc : "*");
}

/* The PNG at data: its info (limits checked), or the error (recorded). */
static aclError png_header(const char *call, const void *data, uint32_t size, dvpp_png_info *info) {
  char err[256];
  if (!data) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: data is NULL", call);
  int r = dvpp_png_info_read(data, size, info, err, sizeof err);
  if (r)
    return acl_fail(r == -2 ? ACL_ERROR_FEATURE_UNSUPPORTED : ACL_ERROR_INVALID_PARAM, "%s: %s", call, err);
  if (info->width < PNGD_MIN || info->height < PNGD_MIN || info->width > PNGD_MAX || info->height > PNGD_MAX)
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: a %ux%u PNG: PNGD decodes %dx%d to %dx%d", call,
                    info->width, info->height, PNGD_MIN, PNGD_MIN, PNGD_MAX, PNGD_MAX);
  return ACL_SUCCESS;
}

/* The output format for `f` (PIXEL_FORMAT_UNKNOWN: the source's) and its bytes per pixel. */
static aclError pngd_format(const char *call, acldvppPixelFormat f, const dvpp_png_info *info,
                            acldvppPixelFormat *out, int *channels) {
  int alpha = info->channels == 2 || info->channels == 4;
  if (f == PIXEL_FORMAT_UNKNOWN) f = alpha ? PIXEL_FORMAT_RGBA_8888 : PIXEL_FORMAT_RGB_888;
  if (f != PIXEL_FORMAT_RGB_888 && f != PIXEL_FORMAT_RGBA_8888)
    return acl_fail(
        ACL_ERROR_FEATURE_UNSUPPORTED,
        "%s: output format %d: PNGD outputs PIXEL_FORMAT_RGB_888 (12), PIXEL_FORMAT_RGBA_8888 (16) or "
        "the source's (PIXEL_FORMAT_UNKNOWN)",
        call, (int)f);
  if (f == PIXEL_FORMAT_RGBA_8888 && !alpha)
    return acl_fail(
        ACL_ERROR_FEATURE_UNSUPPORTED,
        "%s: output format PIXEL_FORMAT_RGBA_8888 (16) for a %s PNG without alpha: PNGD writes it "
        "as PIXEL_FORMAT_RGB_888 (12)",
        call, info->channels == 1 ? "grey" : "RGB");
  *out = f;
  *channels = f == PIXEL_FORMAT_RGBA_8888 ? 4 : 3;
  return ACL_SUCCESS;
}

aclError acldvppPngGetImageInfo(const void *data, uint32_t dataSize, uint32_t *width, uint32_t *height,
                                int32_t *components) {
  const char *call = "acldvppPngGetImageInfo";
  dvpp_png_info info;
  aclError e;
  if ((e = pngd_soc(call)) || (e = png_header(call, data, dataSize, &info))) return e;
  if (width) *width = info.width;
  if (height) *height = info.height;
  if (components) *components = info.channels;
  return ACL_SUCCESS;
}

aclError acldvppPngPredictDecSize(const void *data, uint32_t dataSize, acldvppPixelFormat outputPixelFormat,
                                  uint32_t *decSize) {
  const char *call = "acldvppPngPredictDecSize";
  dvpp_png_info info;
  acldvppPixelFormat f = PIXEL_FORMAT_UNKNOWN;
  int c = 3;
  aclError e;
  if (!decSize) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: decSize is NULL", call);
  if ((e = pngd_soc(call)) || (e = png_header(call, data, dataSize, &info)) ||
      (e = pngd_format(call, outputPixelFormat, &info, &f, &c)))
    return e;
  *decSize = align_up(info.width, PNGD_WALIGN) * (uint32_t)c * align_up(info.height, PNGD_HALIGN);
  return ACL_SUCCESS;
}

typedef struct pngd_job {
  const uint8_t *data;
  uint32_t size;
  acldvppPicDesc *out; /* its ret code is set when the task has run */
  dvpp_png_out png;
} pngd_job;

static aclError pngd_run(void *arg, char *msg, size_t n) {
  pngd_job *j = arg;
  char err[256];
  int r = dvpp_png_decode(j->data, j->size, &j->png, err, sizeof err);
  j->out->ret_code = r ? 1 : 0;
  if (!r) return ACL_SUCCESS;
  snprintf(msg, n, "acldvppPngDecodeAsync: %s", err);
  return ACL_ERROR_FAILURE;
}

aclError acldvppPngDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
                               acldvppPicDesc *outputDesc, aclrtStream stream) {
  const char *call = "acldvppPngDecodeAsync";
  aclError e = pngd_soc(call);
  if (e) return e;
  if ((e = acl_enter(call))) return e;
  dvpp_png_info info;
  acldvppPixelFormat f = PIXEL_FORMAT_UNKNOWN;
  int c = 3;
  if ((e = check_channel(call, channelDesc))) return acl_leave_with(e);
  if (!outputDesc) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: outputDesc is NULL", call));
  if ((e = check_device(call, "data", data, size)) || (e = png_header(call, data, size, &info)) ||
      (e = pngd_format(call, outputDesc->format, &info, &f, &c)))
    return acl_leave_with(e);
  uint32_t ws = align_up(info.width, PNGD_WALIGN) * (uint32_t)c, hs = align_up(info.height, PNGD_HALIGN);
  uint32_t need = ws * hs;
  if (outputDesc->size < need)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM,
                 "%s: outputDesc size %u: a %ux%u PNG decodes to %u bytes (width stride %u x "
                 "height stride %u; acldvppPngPredictDecSize)",
                 call, outputDesc->size, info.width, info.height, need, ws, hs));
  if ((e = check_device(call, "outputDesc data", outputDesc->data, need))) return acl_leave_with(e);
  pngd_job *j = malloc(sizeof *j);
  if (!j) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *j = (pngd_job){data, size, outputDesc, {outputDesc->data, ws, c}};
  outputDesc->format = f;
  outputDesc->width = info.width;
  outputDesc->height = info.height;
  outputDesc->width_stride = ws;
  outputDesc->height_stride = hs;
  outputDesc->size = need;
  return acl_leave_with(queue(call, stream, pngd_run, j));
}

/* --- JPEG encode (JPEGE) */

/* The documented JPEGE rules of the Ascend 310: pictures 32x32 to
 * 8192x8192 of even width; YUV420SP (NV12 / NV21) of even height, width
 * stride a multiple of 16, height stride the height or the height rounded up
 * to 16, width stride x height stride x 3 / 2 bytes; YUV422 packed (YUYV,
 * UYVY, YVYU, VYUY) with width stride twice the width rounded up to 16,
 * height stride the height (or 0), width stride x height bytes. Levels
 * 0..100: 1..100 is the IJG quality (Huawei publishes no mapping), 0 encodes
 * as 100 ("level 0 is similar to level 100"). */
enum { JPEGE_MIN = 32, JPEGE_MAX = 8192, JPEGE_WALIGN = 16, JPEGE_HALIGN = 16, JPEGE_MAX_LEVEL = 100 };

aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig *jpegeConfig, uint32_t level) {
  const char *call = "acldvppSetJpegeConfigLevel";
  if (!jpegeConfig) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: jpegeConfig is NULL", call);
  if (level > JPEGE_MAX_LEVEL)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: level %u: 0 to %d", call, level, JPEGE_MAX_LEVEL);
  jpegeConfig->level = level;
  return ACL_SUCCESS;
}

uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig *jpegeConfig) {
  return jpegeConfig ? jpegeConfig->level : 0;
}

/* The JPEGE input `d` (checked against the rules above) as the encoder's
 * input; *bytes is the buffer it reads. */
static aclError jpege_pic(const char *call, const acldvppPicDesc *d, dvpp_jpege_in *in, size_t *bytes) {
  if (!d) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc is NULL", call);
  static const struct {
    acldvppPixelFormat f;
    dvpp_jpege_layout l;
  } formats[] = {
      {PIXEL_FORMAT_YUV_SEMIPLANAR_420, DVPP_JPEGE_NV12}, {PIXEL_FORMAT_YVU_SEMIPLANAR_420, DVPP_JPEGE_NV21},
      {PIXEL_FORMAT_YUYV_PACKED_422, DVPP_JPEGE_YUYV},    {PIXEL_FORMAT_UYVY_PACKED_422, DVPP_JPEGE_UYVY},
      {PIXEL_FORMAT_YVYU_PACKED_422, DVPP_JPEGE_YVYU},    {PIXEL_FORMAT_VYUY_PACKED_422, DVPP_JPEGE_VYUY}};
  size_t k = 0;
  while (k < sizeof formats / sizeof formats[0] && formats[k].f != d->format)
    k++;
  if (k == sizeof formats / sizeof formats[0])
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                    "%s: inputDesc format %d: JPEGE encodes YUV420SP (1 NV12, 2 NV21) and YUV422 packed (7 "
                    "YUYV, 8 UYVY, 9 YVYU, 10 VYUY)",
                    call, (int)d->format);
  int packed = d->format >= PIXEL_FORMAT_YUYV_PACKED_422;
  uint32_t w = d->width, h = d->height;
  if (w < JPEGE_MIN || h < JPEGE_MIN || w > JPEGE_MAX || h > JPEGE_MAX)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc width x height %ux%u: %dx%d to %dx%d", call, w, h,
                    JPEGE_MIN, JPEGE_MIN, JPEGE_MAX, JPEGE_MAX);
  if (w % 2 || (!packed && h % 2))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc width x height %ux%u: %s", call, w, h,
                    packed ? "YUV422 packed widths are even" : "YUV420SP sizes are even");
  uint32_t ws = d->width_stride, hs = d->height_stride;
  if (packed) {
    if (ws != align_up(2 * w, JPEGE_WALIGN))
      return acl_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: inputDesc widthStride %u: twice the width %u rounded up to %d (%u)", call, ws, w,
                      JPEGE_WALIGN, align_up(2 * w, JPEGE_WALIGN));
    if (hs != 0 && hs != h)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc heightStride %u: the height %u (or 0)", call,
                      hs, h);
    hs = h;
  } else {
    if (ws % JPEGE_WALIGN || ws < w || ws > 2 * JPEGE_MAX)
      return acl_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: inputDesc widthStride %u: a multiple of %d, at least the width %u", call, ws,
                      JPEGE_WALIGN, w);
    if (hs != h && hs != align_up(h, JPEGE_HALIGN))
      return acl_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: inputDesc heightStride %u: the height %u or the height rounded up to %d (%u)",
                      call, hs, h, JPEGE_HALIGN, align_up(h, JPEGE_HALIGN));
  }
  size_t need = packed ? (size_t)ws * hs : (size_t)ws * hs * 3 / 2;
  if (d->size < need)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: inputDesc size %u: widthStride %u x heightStride %u%s is %zu", call, d->size, ws, hs,
                    packed ? "" : " x 3 / 2", need);
  const uint8_t *y = d->data;
  *in = (dvpp_jpege_in){y, packed ? NULL : y + (size_t)ws * hs, ws, w, h, formats[k].l};
  *bytes = need;
  return ACL_SUCCESS;
}

aclError acldvppJpegPredictEncSize(const acldvppPicDesc *inputDesc, const acldvppJpegeConfig *config,
                                   uint32_t *size) {
  const char *call = "acldvppJpegPredictEncSize";
  dvpp_jpege_in in = {0};
  size_t bytes = 0;
  if (!size) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: size is NULL", call);
  if (!config) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: config is NULL", call);
  aclError e = jpege_pic(call, inputDesc, &in, &bytes);
  if (e) return e;
  *size = (uint32_t)dvpp_jpege_bound(in.width, in.height, in.layout); /* at most ~873 MB for 8192x8192 */
  return ACL_SUCCESS;
}

typedef struct jpege_job {
  dvpp_jpege_in in;
  uint8_t *out;
  uint32_t *size; /* the caller's: the buffer's bytes in, the file's out */
  uint32_t cap;
  int quality;
} jpege_job;

static aclError jpege_run(void *arg, char *msg, size_t n) {
  jpege_job *j = arg;
  size_t len = 0;
  if (dvpp_jpege_encode(&j->in, j->quality, j->out, j->cap, &len)) {
    snprintf(
        msg, n,
        "acldvppJpegEncodeAsync: the JPEG does not fit in size %u bytes (acldvppJpegPredictEncSize gives a "
        "size that always fits)",
        j->cap);
    return ACL_ERROR_FAILURE;
  }
  *j->size = (uint32_t)len;
  return ACL_SUCCESS;
}

aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc, const void *data,
                                uint32_t *size, acldvppJpegeConfig *config, aclrtStream stream) {
  const char *call = "acldvppJpegEncodeAsync";
  aclError e = acl_enter(call);
  if (e) return e;
  jpege_job j = {0};
  size_t in_bytes = 0;
  if ((e = check_channel(call, channelDesc)) || (e = jpege_pic(call, inputDesc, &j.in, &in_bytes)) ||
      (e = check_device(call, "inputDesc data", inputDesc->data, in_bytes)))
    return acl_leave_with(e);
  if (!config) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: config is NULL", call));
  if (!size || !*size)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: size is %s (the output buffer's bytes)",
                                   call, size ? "0" : "NULL"));
  if ((e = check_device(call, "data", data, *size))) return acl_leave_with(e);
  const uint8_t *ib = inputDesc->data, *ob = data;
  if (ib < ob + *size && ob < ib + in_bytes)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc data and data overlap", call));
  j.out = (uint8_t *)data;
  j.size = size;
  j.cap = *size;
  j.quality = config->level ? (int)config->level : JPEGE_MAX_LEVEL;
  jpege_job *q = malloc(sizeof *q);
  if (!q) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *q = j;
  return acl_leave_with(queue(call, stream, jpege_run, q));
}
/* --- VPC: resize, crop, crop and paste */

/* The documented VPC rules of the Ascend 310 for YUV420SP pictures: input
 * 10x6 to 8192x8192, output 10x6 to 4096x4096, even sizes; width stride a
 * multiple of 16, height stride of 2, buffer width stride x height stride x
 * 3 / 2; regions (left, right, top, bottom, inclusive) with left and top
 * even, right and bottom odd, at least 10x6; a paste region's left a
 * multiple of 16; each side scaled by 1/32 to 16. */
enum {
  VPC_MIN_W = 10,
  VPC_MIN_H = 6,
  VPC_IN_MAX = 8192,
  VPC_OUT_MAX = 4096,
  VPC_WALIGN = 16,
  VPC_HALIGN = 2
};

/* A VPC picture description (`which`: "inputDesc" / "outputDesc"), under the lock. */
static aclError vpc_pic(const char *call, const char *which, const acldvppPicDesc *d, uint32_t max,
                        dvpp_vpc_pic *pic) {
  if (!d) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, which);
  if (d->format != PIXEL_FORMAT_YUV_SEMIPLANAR_420 && d->format != PIXEL_FORMAT_YVU_SEMIPLANAR_420)
    return acl_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                    "%s: %s format %d: VPC here takes and writes PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1) or "
                    "PIXEL_FORMAT_YVU_SEMIPLANAR_420 (2)",
                    call, which, (int)d->format);
  if (d->width < VPC_MIN_W || d->height < VPC_MIN_H || d->width > max || d->height > max)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s width x height %ux%u: %dx%d to %ux%u", call, which,
                    d->width, d->height, VPC_MIN_W, VPC_MIN_H, max, max);
  if (d->width % 2 || d->height % 2)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s width x height %ux%u: YUV420SP sizes are even", call,
                    which, d->width, d->height);
  if (d->width_stride % VPC_WALIGN || d->width_stride < d->width)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s widthStride %u: a multiple of %d, at least the width %u",
                    call, which, d->width_stride, VPC_WALIGN, d->width);
  if (d->height_stride % VPC_HALIGN || d->height_stride < d->height || d->height_stride > 2 * VPC_IN_MAX)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s heightStride %u: a multiple of %d, at least the height %u", call, which,
                    d->height_stride, VPC_HALIGN, d->height);
  size_t need = (size_t)d->width_stride * d->height_stride * 3 / 2;
  if (d->size < need)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s size %u: widthStride %u x heightStride %u x 3 / 2 is %zu", call, which, d->size,
                    d->width_stride, d->height_stride, need);
  char what[64];
  snprintf(what, sizeof what, "%s data", which);
  aclError e = check_device(call, what, d->data, need);
  if (e) return e;
  uint8_t *y = d->data;
  *pic = (dvpp_vpc_pic){y, y + (size_t)d->width_stride * d->height_stride, d->width_stride,
                        d->format == PIXEL_FORMAT_YVU_SEMIPLANAR_420};
  return ACL_SUCCESS;
}

/* A region of a picture w x h (`which`: "cropArea" / "pasteArea"). */
static aclError vpc_roi(const char *call, const char *which, const acldvppRoiConfig *r, uint32_t w,
                        uint32_t h, uint32_t left_align, dvpp_vpc_rect *out) {
  if (!r) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, which);
  if (r->left % left_align || r->top % 2 || r->right % 2 == 0 || r->bottom % 2 == 0)
    return acl_fail(
        ACL_ERROR_INVALID_PARAM,
        "%s: %s (left %u, right %u, top %u, bottom %u): left a multiple of %u, top even, right and "
        "bottom odd",
        call, which, r->left, r->right, r->top, r->bottom, left_align);
  if (r->right < r->left || r->bottom < r->top || r->right - r->left + 1 < VPC_MIN_W ||
      r->bottom - r->top + 1 < VPC_MIN_H)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s (left %u, right %u, top %u, bottom %u): at least %dx%d",
                    call, which, r->left, r->right, r->top, r->bottom, VPC_MIN_W, VPC_MIN_H);
  if (r->right >= w || r->bottom >= h)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s (right %u, bottom %u) is outside the %ux%u picture",
                    call, which, r->right, r->bottom, w, h);
  *out = (dvpp_vpc_rect){r->left, r->top, r->right - r->left + 1, r->bottom - r->top + 1};
  return ACL_SUCCESS;
}

typedef struct vpc_job {
  dvpp_vpc_pic in, out;
  dvpp_vpc_rect from, to;
  acldvppPicDesc *desc; /* the output's: its ret code */
} vpc_job;

/* Names of the objects one VPC job reads, for messages. */
typedef struct vpc_names {
  const char *in, *out, *crop, *paste;
} vpc_names;

/* One crop (NULL: the whole input) scaled onto paste (NULL: the whole
 * output), checked (under the lock) into *j. */
static aclError vpc_check(const char *call, const vpc_names *nm, acldvppPicDesc *in, acldvppPicDesc *out,
                          const acldvppRoiConfig *crop, const acldvppRoiConfig *paste, int has_crop,
                          int has_paste, vpc_job *j) {
  aclError e;
  j->desc = out;
  if ((e = vpc_pic(call, nm->in, in, VPC_IN_MAX, &j->in)) ||
      (e = vpc_pic(call, nm->out, out, VPC_OUT_MAX, &j->out)))
    return e;
  j->from = (dvpp_vpc_rect){0, 0, in->width, in->height};
  j->to = (dvpp_vpc_rect){0, 0, out->width, out->height};
  if ((has_crop && (e = vpc_roi(call, nm->crop, crop, in->width, in->height, 2, &j->from))) ||
      (has_paste && (e = vpc_roi(call, nm->paste, paste, out->width, out->height, 16, &j->to))))
    return e;
  if ((uint64_t)j->from.w > 32ull * j->to.w || (uint64_t)j->to.w > 16ull * j->from.w ||
      (uint64_t)j->from.h > 32ull * j->to.h || (uint64_t)j->to.h > 16ull * j->from.h)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s to %s: %ux%u to %ux%u: each side scales by 1/32 to 16",
                    call, has_crop ? nm->crop : nm->in, has_paste ? nm->paste : nm->out, j->from.w, j->from.h,
                    j->to.w, j->to.h);
  const uint8_t *ib = in->data, *ob = out->data;
  size_t isz = (size_t)in->width_stride * in->height_stride * 3 / 2,
         osz = (size_t)out->width_stride * out->height_stride * 3 / 2;
  if (ib < ob + osz && ob < ib + isz)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s and %s data overlap", call, nm->in, nm->out);
  return ACL_SUCCESS;
}

/* A list of jobs run in order by one task. */
typedef struct vpc_batch {
  size_t n;
  vpc_job jobs[];
} vpc_batch;

static aclError vpc_run(void *arg, char *msg, size_t n) {
  (void)msg;
  (void)n;
  vpc_batch *b = arg;
  for (size_t i = 0; i < b->n; i++) {
    dvpp_vpc_scale(&b->jobs[i].in, b->jobs[i].from, &b->jobs[i].out, b->jobs[i].to);
    b->jobs[i].desc->ret_code = 0;
  }
  return ACL_SUCCESS;
}

/* The three single-picture VPC calls. */
static aclError vpc(const char *call, acldvppChannelDesc *ch, acldvppPicDesc *in, acldvppPicDesc *out,
                    const acldvppRoiConfig *crop, const acldvppRoiConfig *paste, int has_crop, int has_paste,
                    aclrtStream stream) {
  static const vpc_names nm = {"inputDesc", "outputDesc", "cropArea", "pasteArea"};
  aclError e = acl_enter(call);
  if (e) return e;
  vpc_job j;
  if ((e = check_channel(call, ch)) ||
      (e = vpc_check(call, &nm, in, out, crop, paste, has_crop, has_paste, &j)))
    return acl_leave_with(e);
  vpc_batch *q = malloc(sizeof *q + sizeof j);
  if (!q) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  q->n = 1;
  q->jobs[0] = j;
  return acl_leave_with(queue(call, stream, vpc_run, q));
}

aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                               acldvppPicDesc *outputDesc, acldvppResizeConfig *resizeConfig,
                               aclrtStream stream) {
  if (!resizeConfig) return acl_fail(ACL_ERROR_INVALID_PARAM, "acldvppVpcResizeAsync: resizeConfig is NULL");
  return vpc("acldvppVpcResizeAsync", channelDesc, inputDesc, outputDesc, NULL, NULL, 0, 0, stream);
}
aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                             acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, aclrtStream stream) {
  return vpc("acldvppVpcCropAsync", channelDesc, inputDesc, outputDesc, cropArea, NULL, 1, 0, stream);
}
aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                     acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                     acldvppRoiConfig *pasteArea, aclrtStream stream) {
  return vpc("acldvppVpcCropAndPasteAsync", channelDesc, inputDesc, outputDesc, cropArea, pasteArea, 1, 1,
             stream);
}

/* --- batch VPC: many regions of many pictures in one call */

/* The documented limits: at most 256 input pictures (the roiNums array's
 * length) and at most 256 regions in all, one output description each. */
enum { VPC_BATCH_MAX_PICS = 256, VPC_BATCH_MAX_ROIS = 256 };

struct acldvppBatchPicDesc {
  uint32_t n;
  acldvppPicDesc pics[];
};

acldvppBatchPicDesc *acldvppCreateBatchPicDesc(uint32_t batchSize) {
  const char *call = "acldvppCreateBatchPicDesc";
  if (batchSize == 0 || batchSize > VPC_BATCH_MAX_ROIS) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: batchSize %u: 1 to %d", call, batchSize, VPC_BATCH_MAX_ROIS);
    return NULL;
  }
  acldvppBatchPicDesc *b = object(call, sizeof *b + (size_t)batchSize * sizeof(acldvppPicDesc));
  if (b) b->n = batchSize;
  return b;
}

acldvppPicDesc *acldvppGetPicDesc(acldvppBatchPicDesc *batchPicDesc, uint32_t index) {
  const char *call = "acldvppGetPicDesc";
  if (!batchPicDesc) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: batchPicDesc is NULL", call);
    return NULL;
  }
  if (index >= batchPicDesc->n) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: index %u: the batch has %u pictures", call, index,
             batchPicDesc->n);
    return NULL;
  }
  return &batchPicDesc->pics[index];
}

aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc *batchPicDesc) {
  return destroy("acldvppDestroyBatchPicDesc", batchPicDesc);
}

/* Batch crop (pastes NULL: each region onto its whole output) and crop and paste. */
static aclError vpc_batch_call(const char *call, acldvppChannelDesc *ch, acldvppBatchPicDesc *src,
                               const uint32_t *roiNums, uint32_t size, acldvppBatchPicDesc *dst,
                               acldvppRoiConfig *crops[], acldvppRoiConfig *pastes[], int has_paste,
                               aclrtStream stream) {
  aclError e = acl_enter(call);
  if (e) return e;
  if ((e = check_channel(call, ch))) return acl_leave_with(e);
  const char *null = !src                   ? "srcBatchPicDescs"
                     : !dst                 ? "dstBatchPicDescs"
                     : !roiNums             ? "roiNums"
                     : !crops               ? "cropAreas"
                     : has_paste && !pastes ? "pasteAreas"
                                            : NULL;
  if (null) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, null));
  if (size == 0 || size > VPC_BATCH_MAX_PICS || size > src->n)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: size %u: 1 to %d, at most srcBatchPicDescs' %u pictures", call, size,
                                   VPC_BATCH_MAX_PICS, src->n));
  uint64_t total = 0;
  for (uint32_t i = 0; i < size; i++)
    total += roiNums[i];
  if (total == 0 || total > VPC_BATCH_MAX_ROIS || total != dst->n)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM,
                 "%s: roiNums[0] + ... + roiNums[%u] is %llu: 1 to %d, and dstBatchPicDescs' "
                 "batch size %u",
                 call, size - 1, (unsigned long long)total, VPC_BATCH_MAX_ROIS, dst->n));
  vpc_batch *q = malloc(sizeof *q + (size_t)total * sizeof(vpc_job));
  if (!q) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  q->n = (size_t)total;
  size_t k = 0;
  for (uint32_t i = 0; i < size; i++)
    for (uint32_t r = 0; r < roiNums[i]; r++, k++) {
      char names[4][40];
      snprintf(names[0], sizeof names[0], "srcBatchPicDescs[%u]", i);
      snprintf(names[1], sizeof names[1], "dstBatchPicDescs[%zu]", k);
      snprintf(names[2], sizeof names[2], "cropAreas[%zu]", k);
      snprintf(names[3], sizeof names[3], "pasteAreas[%zu]", k);
      vpc_names nm = {names[0], names[1], names[2], names[3]};
      e = vpc_check(call, &nm, &src->pics[i], &dst->pics[k], crops[k], has_paste ? pastes[k] : NULL, 1,
                    has_paste, &q->jobs[k]);
      if (e) {
        free(q);
        return acl_leave_with(e);
      }
    }
  return acl_leave_with(queue(call, stream, vpc_run, q));
}

aclError acldvppVpcBatchCropAsync(acldvppChannelDesc *channelDesc, acldvppBatchPicDesc *srcBatchPicDescs,
                                  uint32_t *roiNums, uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs,
                                  acldvppRoiConfig *cropAreas[], aclrtStream stream) {
  return vpc_batch_call("acldvppVpcBatchCropAsync", channelDesc, srcBatchPicDescs, roiNums, size,
                        dstBatchPicDescs, cropAreas, NULL, 0, stream);
}

aclError acldvppVpcBatchCropAndPasteAsync(acldvppChannelDesc *channelDesc,
                                          acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums,
                                          uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs,
                                          acldvppRoiConfig *cropAreas[], acldvppRoiConfig *pasteAreas[],
                                          aclrtStream stream) {
  return vpc_batch_call("acldvppVpcBatchCropAndPasteAsync", channelDesc, srcBatchPicDescs, roiNums, size,
                        dstBatchPicDescs, cropAreas, pasteAreas, 1, stream);
}
