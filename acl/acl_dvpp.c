/* acl_dvpp.c - AscendCL's media processing (acl/ops/acl_dvpp.h): device
 * memory for pictures and the description objects work; channels and every
 * processing call return ACL_ERROR_FEATURE_UNSUPPORTED (the software NPU
 * has no media engine), after the checks a misuse gets anyway.
 */
#include <stdlib.h>

#include "acl/acl_internal.h"
#include "acl/ops/acl_dvpp.h"

struct acldvppChannelDesc {
  int unused;
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
  if (!channelDesc) return acl_fail(ACL_ERROR_INVALID_PARAM, "acldvppCreateChannel: channelDesc is NULL");
  return unsupported("acldvppCreateChannel");
}
aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc) {
  (void)channelDesc;
  return unsupported("acldvppDestroyChannel");
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

aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width, uint32_t *height,
                                 int32_t *components) {
  return unsupported("acldvppJpegGetImageInfo");
}
aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize, acldvppPixelFormat outputPixelFormat,
                                   uint32_t *decSize) {
  return unsupported("acldvppJpegPredictDecSize");
}
aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
                                acldvppPicDesc *outputDesc, aclrtStream stream) {
  return unsupported("acldvppJpegDecodeAsync");
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
