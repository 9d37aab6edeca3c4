/* acl_dvpp.h - AscendCL's media processing (DVPP: JPEG and PNG decode,
 * JPEG encode, resize, crop on the chip's media engine) as libascendcl
 * provides it: in software, on the caller's streams (libascendcl; see acl.h).
 *
 * acldvppMalloc / acldvppFree give device memory (as aclrtMalloc's: the
 * memory a model's AIPP input reads); the picture, region and resize
 * descriptions are plain objects with their getters and setters; a channel
 * is created and destroyed on its description. JPEG decode (JPEGD):
 * acldvppJpegGetImageInfo, acldvppJpegPredictDecSize and
 * acldvppJpegDecodeAsync take baseline and extended sequential Huffman JPEG,
 * 8-bit, grey or YCbCr, any integer sampling (4:4:4, 4:2:2, 4:2:0, 4:4:0,
 * 4:1:1), restart intervals; EXIF orientation is ignored. Progressive,
 * arithmetic-coded, lossless, 12-bit and CMYK files are refused
 * (ACL_ERROR_FEATURE_UNSUPPORTED, aclGetRecentErrMsg says which). As the
 * Ascend 310's JPEGD: pictures 32x32 to 8192x8192, output YUV420SP (NV12
 * or NV21, the output description's format) with width stride = width
 * rounded up to 128, height stride = height rounded up to 16, size = width
 * stride x height stride x 3 / 2; the call sets the output description's
 * width and height (rounded down to even), strides and size, the task sets
 * its ret code (0, or 1 when the entropy-coded data is corrupt, which
 * aclrtSynchronizeStream then reports). The input and output are device
 * memory.
 *
 * VPC: acldvppVpcResizeAsync (the whole input onto the whole output),
 * acldvppVpcCropAsync (cropArea onto the whole output) and
 * acldvppVpcCropAndPasteAsync (cropArea onto pasteArea, the rest of the
 * output untouched) on YUV420SP pictures (NV12 / NV21, converted when they
 * differ), with the Ascend 310's rules, each refused naming the field:
 * input 10x6 to 8192x8192, output 10x6 to 4096x4096, even sizes, width
 * stride a multiple of 16 and height stride of 2, buffers of width stride x
 * height stride x 3 / 2 bytes of device memory; regions with left and top
 * even, right and bottom odd (inclusive), at least 10x6, inside the picture;
 * a paste region's left a multiple of 16; each side scaled by 1/32 to 16.
 * Scaling is bilinear with half-pixel centres in float, rounded to nearest
 * (the chip's filter is not specified publicly); the resize configuration
 * has no settings. The batch calls (acldvppVpcBatchCropAsync,
 * acldvppVpcBatchCropAndPasteAsync) run the same per region: at most 256
 * input pictures (size) and 256 regions in all (the sum of roiNums, equal to
 * the output batch's size), every region checked before anything is queued
 * and the messages naming the entry (srcBatchPicDescs[i], cropAreas[k] ...).
 *
 * JPEG encode (JPEGE, acl/dvpp_jpege.c): acldvppJpegEncodeAsync writes a
 * baseline JFIF file (Huffman, the T.81 Annex K tables; 4:2:0 from YUV420SP,
 * 4:2:2 from YUV422 packed) with the Ascend 310's JPEGE rules, each refused
 * naming the field: 32x32 to 8192x8192, even width; YUV420SP (NV12 / NV21)
 * of even height, width stride a multiple of 16, height stride the height or
 * the height rounded up to 16, width stride x height stride x 3 / 2 bytes;
 * YUV422 packed (YUYV, UYVY, YVYU, VYUY) with width stride twice the width
 * rounded up to 16, width stride x height bytes. The level (0..100) is the
 * IJG quality scale of the Annex K quantization tables (Huawei does not
 * publish its mapping), 0 as 100 ("level 0 is similar to 100"). *size is the
 * output buffer's bytes when the call is made and the file's when the task
 * has run; a file that does not fit is the stream's error
 * (ACL_ERROR_FAILURE at aclrtSynchronizeStream, nothing past *size written).
 * acldvppJpegPredictEncSize gives a size that always fits (every block at its
 * longest code, every byte stuffed: about 10 bytes a pixel for YUV420SP, 13
 * for YUV422 packed).
 *
 * PNG decode (PNGD, acl/dvpp_png.c): acldvppPngGetImageInfo,
 * acldvppPngPredictDecSize and acldvppPngDecodeAsync exist on the Ascend
 * 310P only (the SoC is aclrtGetSocName's: the last model loaded's, Ascend310
 * before any; elsewhere ACL_ERROR_FEATURE_UNSUPPORTED). They take
 * non-interlaced 8-bit grey, RGB, grey + alpha and RGBA PNG of 32x32 to
 * 4096x4096 and write RGB888 (alpha dropped, grey repeated) or, for sources
 * with alpha, RGBA8888 (PIXEL_FORMAT_UNKNOWN: the source's), with width
 * stride the width rounded up to 128 times 3 or 4, height stride the height
 * rounded up to 16; the call sets the output description's format, size and
 * strides, the task its ret code. Palette, 1/2/4/16-bit and interlaced files
 * are refused (ACL_ERROR_FEATURE_UNSUPPORTED) naming what; a corrupt file
 * (a bad CRC, zlib header, deflate code, Adler-32, filter type) is a clean
 * error naming the problem.
 */
#ifndef INC_EXTERNAL_ACL_OPS_ACL_DVPP_H_
#define INC_EXTERNAL_ACL_OPS_ACL_DVPP_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct acldvppPicDesc acldvppPicDesc;
typedef struct acldvppRoiConfig acldvppRoiConfig;
typedef struct acldvppResizeConfig acldvppResizeConfig;
typedef struct acldvppChannelDesc acldvppChannelDesc;
typedef struct acldvppJpegeConfig acldvppJpegeConfig;
typedef struct acldvppBatchPicDesc acldvppBatchPicDesc;

typedef enum acldvppPixelFormat {
  PIXEL_FORMAT_YUV_400 = 0,
  PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1,
  PIXEL_FORMAT_YVU_SEMIPLANAR_420 = 2,
  PIXEL_FORMAT_YUV_SEMIPLANAR_422 = 3,
  PIXEL_FORMAT_YVU_SEMIPLANAR_422 = 4,
  PIXEL_FORMAT_YUV_SEMIPLANAR_444 = 5,
  PIXEL_FORMAT_YVU_SEMIPLANAR_444 = 6,
  PIXEL_FORMAT_YUYV_PACKED_422 = 7,
  PIXEL_FORMAT_UYVY_PACKED_422 = 8,
  PIXEL_FORMAT_YVYU_PACKED_422 = 9,
  PIXEL_FORMAT_VYUY_PACKED_422 = 10,
  PIXEL_FORMAT_YUV_PACKED_444 = 11,
  PIXEL_FORMAT_RGB_888 = 12,
  PIXEL_FORMAT_BGR_888 = 13,
  PIXEL_FORMAT_ARGB_8888 = 14,
  PIXEL_FORMAT_ABGR_8888 = 15,
  PIXEL_FORMAT_RGBA_8888 = 16,
  PIXEL_FORMAT_BGRA_8888 = 17,
  PIXEL_FORMAT_YUV_SEMI_PLANNER_420_10BIT = 18,
  PIXEL_FORMAT_YVU_SEMI_PLANNER_420_10BIT = 19,
  PIXEL_FORMAT_YVU_PLANAR_420 = 20,
  PIXEL_FORMAT_UNKNOWN = 10000,
} acldvppPixelFormat;

enum acldvppChannelMode {
  DVPP_CHNMODE_VPC = 1,
  DVPP_CHNMODE_JPEGD = 2,
  DVPP_CHNMODE_JPEGE = 4,
  DVPP_CHNMODE_PNGD = 8
};

/* Device memory for pictures (as aclrtMalloc's; aclrtFree frees it too). */
ACL_FUNC_VISIBILITY aclError acldvppMalloc(void **devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError acldvppFree(void *devPtr);

/* Channels: created once on a description, destroyed before it. */
ACL_FUNC_VISIBILITY acldvppChannelDesc *acldvppCreateChannelDesc(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyChannelDesc(acldvppChannelDesc *channelDesc);
ACL_FUNC_VISIBILITY aclError acldvppCreateChannel(acldvppChannelDesc *channelDesc);
ACL_FUNC_VISIBILITY aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc);

/* Picture descriptions: fields default to 0 (format PIXEL_FORMAT_YUV_400);
 * getters return the default for NULL. */
ACL_FUNC_VISIBILITY acldvppPicDesc *acldvppCreatePicDesc(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyPicDesc(acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescData(acldvppPicDesc *picDesc, void *dataDev);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescSize(acldvppPicDesc *picDesc, uint32_t size);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescFormat(acldvppPicDesc *picDesc, acldvppPixelFormat format);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescWidth(acldvppPicDesc *picDesc, uint32_t width);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescHeight(acldvppPicDesc *picDesc, uint32_t height);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescWidthStride(acldvppPicDesc *picDesc, uint32_t widthStride);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescHeightStride(acldvppPicDesc *picDesc, uint32_t heightStride);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescRetCode(acldvppPicDesc *picDesc, uint32_t retCode);
ACL_FUNC_VISIBILITY void *acldvppGetPicDescData(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescSize(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY acldvppPixelFormat acldvppGetPicDescFormat(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescWidth(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescHeight(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescWidthStride(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescHeightStride(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescRetCode(const acldvppPicDesc *picDesc);

/* Batches of picture descriptions (1 to 256; the batch owns them): the
 * input and output lists of the batch VPC calls. */
ACL_FUNC_VISIBILITY acldvppBatchPicDesc *acldvppCreateBatchPicDesc(uint32_t batchSize);
ACL_FUNC_VISIBILITY acldvppPicDesc *acldvppGetPicDesc(acldvppBatchPicDesc *batchPicDesc, uint32_t index);
ACL_FUNC_VISIBILITY aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc *batchPicDesc);

/* Regions (left, right, top, bottom, inclusive) and resize settings. */
ACL_FUNC_VISIBILITY acldvppRoiConfig *acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top,
                                                             uint32_t bottom);
ACL_FUNC_VISIBILITY aclError acldvppDestroyRoiConfig(acldvppRoiConfig *roiConfig);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfig(acldvppRoiConfig *config, uint32_t left, uint32_t right,
                                                 uint32_t top, uint32_t bottom);
ACL_FUNC_VISIBILITY acldvppResizeConfig *acldvppCreateResizeConfig(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyResizeConfig(acldvppResizeConfig *resizeConfig);
ACL_FUNC_VISIBILITY acldvppJpegeConfig *acldvppCreateJpegeConfig(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig *jpegeConfig);
/* The encoding level, 0..100 (a new configuration has 0, which encodes as 100). */
ACL_FUNC_VISIBILITY aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig *jpegeConfig, uint32_t level);
ACL_FUNC_VISIBILITY uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig *jpegeConfig);

/* Processing: JPEG decode and encode and VPC, as above. */
ACL_FUNC_VISIBILITY aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width,
                                                     uint32_t *height, int32_t *components);
ACL_FUNC_VISIBILITY aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize,
                                                       acldvppPixelFormat outputPixelFormat,
                                                       uint32_t *decSize);
ACL_FUNC_VISIBILITY aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data,
                                                    uint32_t size, acldvppPicDesc *outputDesc,
                                                    aclrtStream stream);
/* The bytes acldvppJpegEncodeAsync may write for inputDesc: an upper bound at any level. */
ACL_FUNC_VISIBILITY aclError acldvppJpegPredictEncSize(const acldvppPicDesc *inputDesc,
                                                       const acldvppJpegeConfig *config, uint32_t *size);
/* Encodes inputDesc into data (device memory of *size bytes); the task sets *size to the file's bytes. */
ACL_FUNC_VISIBILITY aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc,
                                                    acldvppPicDesc *inputDesc, const void *data,
                                                    uint32_t *size, acldvppJpegeConfig *config,
                                                    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                   acldvppPicDesc *outputDesc,
                                                   acldvppResizeConfig *resizeConfig, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                 acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                                 aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc,
                                                         acldvppPicDesc *inputDesc,
                                                         acldvppPicDesc *outputDesc,
                                                         acldvppRoiConfig *cropArea,
                                                         acldvppRoiConfig *pasteArea, aclrtStream stream);

/* PNG decode (Ascend 310P's PNGD), as above. */
ACL_FUNC_VISIBILITY aclError acldvppPngGetImageInfo(const void *data, uint32_t dataSize, uint32_t *width,
                                                    uint32_t *height, int32_t *components);
ACL_FUNC_VISIBILITY aclError acldvppPngPredictDecSize(const void *data, uint32_t dataSize,
                                                      acldvppPixelFormat outputPixelFormat,
                                                      uint32_t *decSize);
ACL_FUNC_VISIBILITY aclError acldvppPngDecodeAsync(acldvppChannelDesc *channelDesc, const void *data,
                                                   uint32_t size, acldvppPicDesc *outputDesc,
                                                   aclrtStream stream);

/* Batch VPC: input i of srcBatchPicDescs (i < size) gives roiNums[i]
 * regions; region k (counted over all inputs) is cropAreas[k], written to
 * dstBatchPicDescs' picture k (onto pasteAreas[k] for crop and paste). */
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropAsync(acldvppChannelDesc *channelDesc,
                                                      acldvppBatchPicDesc *srcBatchPicDescs,
                                                      uint32_t *roiNums, uint32_t size,
                                                      acldvppBatchPicDesc *dstBatchPicDescs,
                                                      acldvppRoiConfig *cropAreas[], aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropAndPasteAsync(
    acldvppChannelDesc *channelDesc, acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[], acldvppRoiConfig *pasteAreas[],
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
