/* acl_dvpp.c - AscendCL's media processing (acl/ops/acl_dvpp.h) in
 * software: device memory for pictures, the description objects, channels,
 * and JPEG decode (dvpp_jpeg.c) run as tasks on the caller's stream.
 *
 * A processing call checks everything it can at once (AscendCL's code and a
 * message naming the argument and field): the channel, the input's header
 * and the documented JPEGD limits of the Ascend 310, the output
 * description's format, buffer and size. It then sets the output
 * description's width, height and strides and queues the task; the task
 * sets the description's ret code (0, or 1 on failure) when the stream runs
 * it, and a failure (a corrupt entropy-coded segment) is the stream's error
 * at aclrtSynchronizeStream. The data and descriptions must stay alive until
 * then, as on the chip. Encoding (acldvppJpegEncodeAsync) and VPC return
 * ACL_ERROR_FEATURE_UNSUPPORTED.
 */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl_internal.h"
#include "acl/dvpp_jpeg.h"
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

static aclError unsupported(const char *call) {
  return acl_unsupported(call,
                         "media processing (DVPP) is not provided by the software NPU: decode and resize "
                         "on the host, or give the model raw pixels with AIPP");
}

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

aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc, const void *data,
                                uint32_t *size, acldvppJpegeConfig *config, aclrtStream stream) {
  return unsupported("acldvppJpegEncodeAsync");
}
aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                               acldvppPicDesc *outputDesc, acldvppResizeConfig *resizeConfig,
                               aclrtStream stream) {
  return unsupported("acldvppVpcResizeAsync");
}
aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                             acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea, aclrtStream stream) {
  return unsupported("acldvppVpcCropAsync");
}
aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                     acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                     acldvppRoiConfig *pasteArea, aclrtStream stream) {
  return unsupported("acldvppVpcCropAndPasteAsync");
}
