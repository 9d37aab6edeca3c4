/* dvpp_tool.c - the test driver of dvpp_test.py: JPEG decode and encode, PNG
 * decode, VPC and batch VPC through AscendCL's DVPP calls
 * (acl/ops/acl_dvpp.h), and the decoder modules alone.
 *
 *   dvpp_tool jpeg IN.jpg OUT.yuv [nv21]
 *       dvpp_jpeg_decode directly (any size the module takes): writes the
 *       luma plane (width x height) then the chroma pairs (ceil(w/2) x
 *       ceil(h/2)), unpadded; prints "W H".
 *   dvpp_tool truncations IN.jpg -
 *       every prefix of the file (0 .. size - 1 bytes, each in a buffer of
 *       exactly that size) through the module: decoded, or refused with a
 *       "jpeg: " message; prints "N decoded N refused N bad".
 *   dvpp_tool decode IN.jpg OUT.yuv [nv21]
 *       acldvppJpegGetImageInfo, acldvppJpegPredictDecSize and
 *       acldvppJpegDecodeAsync on a stream, aclrtSynchronizeStream; writes
 *       the whole output buffer; prints "W H WS HS SIZE COMPONENTS RET".
 *
 *   dvpp_tool vpc resize|crop|paste IN.yuv IW IH IWS IHS IFMT OUT.yuv OW OH OWS OHS OFMT
 *             [L R T B [PL PR PT PB]]
 *       the picture through acldvppVpcResizeAsync, acldvppVpcCropAsync (crop
 *       L R T B) or acldvppVpcCropAndPasteAsync (and paste PL PR PT PB) into
 *       an output buffer first set to 7; writes the whole output buffer and
 *       prints the output description's ret code.
 *
 *   dvpp_tool batch crop|paste SPEC OUTDIR
 *       acldvppVpcBatchCropAsync / acldvppVpcBatchCropAndPasteAsync on the
 *       pictures and regions SPEC lists (numbers separated by white space):
 *         N SRC_BATCH DST_BATCH      (the batch sizes; 0: as many as listed)
 *         N times: IN.yuv IW IH IWS IHS IFMT ROIS
 *         then per region: OW OH OWS OHS OFMT L R T B [PL PR PT PB]
 *       each output buffer first set to 7; writes OUTDIR/out_K.yuv (whole
 *       buffers) and prints the outputs' ret codes.
 *   dvpp_tool encode IN.yuv W H WS HS FMT LEVEL OUT.jpg [SIZE]
 *       the picture (the bytes JPEGE reads for FMT and the strides) through
 *       acldvppJpegPredictEncSize and acldvppJpegEncodeAsync at LEVEL into
 *       a buffer of the predicted size (or SIZE bytes, the rest of a buffer
 *       one page longer set to 0xA5 and checked after the task); writes the
 *       file and prints "PREDICTED SIZE".
 *
 *   dvpp_tool png IN.png OUT.raw rgb|rgba
 *       dvpp_png_decode directly: writes width x height pixels of 3 or 4
 *       bytes, unpadded; prints "W H CHANNELS".
 *   dvpp_tool png_truncations IN.png -
 *       every prefix of the file through the module, as truncations does.
 *   dvpp_tool pngdecode IN.png OUT.raw FMT [SOC]
 *       acldvppPngGetImageInfo, acldvppPngPredictDecSize and
 *       acldvppPngDecodeAsync (output format FMT) with aclrtGetSocName
 *       saying SOC (default Ascend310P3: the tool stands in for a model of
 *       that SoC loaded first); writes the whole output buffer and prints
 *       "W H WS HS SIZE FORMAT COMPONENTS RET".
 *
 * A refusal prints "error <code>: <aclGetRecentErrMsg>" on stdout and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_internal.h"
#include "acl/dvpp_jpeg.h"
#include "acl/dvpp_png.h"
#include "acl/ops/acl_dvpp.h"

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
  *n = b ? fread(b, 1, (size_t)(len > 0 ? len : 0), f) : 0;
  fclose(f);
  return b;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(p, 1, n, f) == n;
  if (f) fclose(f);
  return ok ? 0 : 1;
}

static int refused(aclError e) {
  const char *m = aclGetRecentErrMsg();
  printf("error %d: %s\n", (int)e, m ? m : "");
  return 1;
}

#define TRY(call)                                                                                            \
  do {                                                                                                       \
    aclError e_ = (call);                                                                                    \
    if (e_ != ACL_SUCCESS) {                                                                                 \
      rc = refused(e_);                                                                                      \
      goto done;                                                                                             \
    }                                                                                                        \
  } while (0)

/* buf through the module alone into *yuv (malloc'ed, *bytes of them: the
 * luma plane then the chroma pairs, unpadded); 0, or nonzero with err. */
static int module_decode(const unsigned char *buf, size_t n, int nv21, unsigned char **yuv, size_t *bytes,
                         dvpp_jpeg_info *info, char *err, size_t errn) {
  *yuv = NULL;
  if (dvpp_jpeg_info_read(buf, n, info, err, errn)) return 1;
  size_t w = info->width, h = info->height, cw = (w + 1) / 2, ch = (h + 1) / 2;
  *bytes = w * h + cw * 2 * ch;
  *yuv = malloc(*bytes);
  dvpp_jpeg_nv12 o = {*yuv, *yuv + w * h, w, cw * 2, nv21};
  return dvpp_jpeg_decode(buf, n, &o, err, errn);
}

static int jpeg_module(const unsigned char *buf, size_t n, const char *out, int nv21) {
  dvpp_jpeg_info info;
  char err[256];
  unsigned char *y;
  size_t bytes;
  int r = module_decode(buf, n, nv21, &y, &bytes, &info, err, sizeof err);
  if (r)
    printf("error: %s\n", err);
  else
    printf("%u %u\n", info.width, info.height);
  if (!r) r = write_file(out, y, bytes);
  free(y);
  return r ? 1 : 0;
}

/* Every prefix of the file through the module: each decoded or refused with a "jpeg: " message. */
static int truncations(const unsigned char *buf, size_t n) {
  size_t ok = 0, refused = 0, bad = 0;
  for (size_t len = 0; len < n; len++) {
    unsigned char *cut = malloc(len ? len : 1); /* exactly len bytes: a read past them is an ASan report */
    memcpy(cut, buf, len);
    dvpp_jpeg_info info;
    char err[256] = "";
    unsigned char *y;
    size_t bytes;
    int r = module_decode(cut, len, 0, &y, &bytes, &info, err, sizeof err);
    free(y);
    free(cut);
    if (!r)
      ok++;
    else if (!strncmp(err, "jpeg: ", 6) && strlen(err) > 16)
      refused++;
    else
      bad++, printf("prefix of %zu bytes: message \"%s\"\n", len, err);
  }
  printf("%zu decoded %zu refused %zu bad\n", ok, refused, bad);
  return bad ? 1 : 0;
}

/* buf through the PNG module into *pix (malloc'ed, width x height x channels
 * bytes); 0, or nonzero with err. */
static int png_module_decode(const unsigned char *buf, size_t n, int channels, unsigned char **pix,
                             dvpp_png_info *info, char *err, size_t errn) {
  *pix = NULL;
  if (dvpp_png_info_read(buf, n, info, err, errn)) return 1;
  size_t row = (size_t)info->width * (size_t)channels;
  *pix = malloc(row * info->height);
  dvpp_png_out o = {*pix, row, channels};
  return dvpp_png_decode(buf, n, &o, err, errn);
}

static int png_module(const unsigned char *buf, size_t n, const char *out, int channels) {
  dvpp_png_info info;
  char err[256];
  unsigned char *pix;
  int r = png_module_decode(buf, n, channels, &pix, &info, err, sizeof err);
  if (r)
    printf("error: %s\n", err);
  else
    printf("%u %u %d\n", info.width, info.height, info.channels);
  if (!r) r = write_file(out, pix, (size_t)info.width * info.height * (size_t)channels);
  free(pix);
  return r ? 1 : 0;
}

/* Every prefix of the PNG through the module: each decoded or refused with a "png: " message. */
static int png_truncations(const unsigned char *buf, size_t n) {
  size_t ok = 0, refused = 0, bad = 0;
  for (size_t len = 0; len < n; len++) {
    unsigned char *cut = malloc(len ? len : 1); /* exactly len bytes: a read past them is an ASan report */
    memcpy(cut, buf, len);
    dvpp_png_info info;
    char err[256] = "";
    unsigned char *pix;
    int r = png_module_decode(cut, len, 4, &pix, &info, err, sizeof err);
    free(pix);
    free(cut);
    if (!r)
      ok++;
    else if (!strncmp(err, "png: ", 5) && strlen(err) > 15)
      refused++;
    else
      bad++, printf("prefix of %zu bytes: message \"%s\"\n", len, err);
  }
  printf("%zu decoded %zu refused %zu bad\n", ok, refused, bad);
  return bad ? 1 : 0;
}

/* What the AscendCL modes share: the device, a stream and a DVPP channel. */
typedef struct session {
  aclrtStream stream;
  acldvppChannelDesc *ch;
} session;

static aclError session_open(session *s) {
  aclError e;
  if ((e = aclInit(NULL)) || (e = aclrtSetDevice(0)) || (e = aclrtCreateStream(&s->stream))) return e;
  s->ch = acldvppCreateChannelDesc();
  return acldvppCreateChannel(s->ch);
}

static void session_close(session *s) {
  if (s->ch) {
    acldvppDestroyChannel(s->ch);
    acldvppDestroyChannelDesc(s->ch);
  }
  if (s->stream) aclrtDestroyStream(s->stream);
  aclrtResetDevice(0);
  aclFinalize();
}

static int decode(const unsigned char *buf, size_t n, const char *out, int nv21) {
  int rc = 0;
  session ss = {NULL, NULL};
  acldvppPicDesc *pic = NULL;
  void *in_dev = NULL, *out_dev = NULL, *host = NULL;
  uint32_t w = 0, h = 0, dec_size = 0;
  int32_t comps = 0;
  acldvppPixelFormat fmt = nv21 ? PIXEL_FORMAT_YVU_SEMIPLANAR_420 : PIXEL_FORMAT_YUV_SEMIPLANAR_420;
  TRY(session_open(&ss));
  TRY(acldvppMalloc(&in_dev, n ? n : 1));
  TRY(aclrtMemcpy(in_dev, n, buf, n, ACL_MEMCPY_HOST_TO_DEVICE));
  TRY(acldvppJpegGetImageInfo(in_dev, (uint32_t)n, &w, &h, &comps));
  TRY(acldvppJpegPredictDecSize(in_dev, (uint32_t)n, fmt, &dec_size));
  TRY(acldvppMalloc(&out_dev, dec_size));
  pic = acldvppCreatePicDesc();
  TRY(acldvppSetPicDescData(pic, out_dev));
  TRY(acldvppSetPicDescSize(pic, dec_size));
  TRY(acldvppSetPicDescFormat(pic, fmt));
  TRY(acldvppJpegDecodeAsync(ss.ch, in_dev, (uint32_t)n, pic, ss.stream));
  TRY(aclrtSynchronizeStream(ss.stream));
  printf("%u %u %u %u %u %d %u\n", acldvppGetPicDescWidth(pic), acldvppGetPicDescHeight(pic),
         acldvppGetPicDescWidthStride(pic), acldvppGetPicDescHeightStride(pic), acldvppGetPicDescSize(pic),
         comps, acldvppGetPicDescRetCode(pic));
  host = malloc(dec_size);
  TRY(aclrtMemcpy(host, dec_size, out_dev, dec_size, ACL_MEMCPY_DEVICE_TO_HOST));
  rc = write_file(out, host, dec_size);
done:
  free(host);
  if (pic) {
    uint32_t ret = acldvppGetPicDescRetCode(pic);
    if (rc) printf("ret %u\n", ret);
    acldvppDestroyPicDesc(pic);
  }
  if (out_dev) acldvppFree(out_dev);
  if (in_dev) acldvppFree(in_dev);
  session_close(&ss);
  return rc;
}

/* dvpp_tool pngdecode IN.png OUT.raw FMT [SOC] */
static int pngdecode(const unsigned char *buf, size_t n, const char *out, acldvppPixelFormat fmt,
                     const char *soc) {
  int rc = 0;
  session ss = {NULL, NULL};
  acldvppPicDesc *pic = NULL;
  void *in_dev = NULL, *out_dev = NULL, *host = NULL;
  uint32_t w = 0, h = 0, dec_size = 0;
  int32_t comps = 0;
  TRY(session_open(&ss));
  acl_set_soc(soc); /* as loading a model of that SoC would */
  TRY(acldvppMalloc(&in_dev, n ? n : 1));
  TRY(aclrtMemcpy(in_dev, n, buf, n, ACL_MEMCPY_HOST_TO_DEVICE));
  TRY(acldvppPngGetImageInfo(in_dev, (uint32_t)n, &w, &h, &comps));
  TRY(acldvppPngPredictDecSize(in_dev, (uint32_t)n, fmt, &dec_size));
  TRY(acldvppMalloc(&out_dev, dec_size));
  pic = acldvppCreatePicDesc();
  TRY(acldvppSetPicDescData(pic, out_dev));
  TRY(acldvppSetPicDescSize(pic, dec_size));
  TRY(acldvppSetPicDescFormat(pic, fmt));
  TRY(acldvppPngDecodeAsync(ss.ch, in_dev, (uint32_t)n, pic, ss.stream));
  TRY(aclrtSynchronizeStream(ss.stream));
  printf("%u %u %u %u %u %d %d %u\n", acldvppGetPicDescWidth(pic), acldvppGetPicDescHeight(pic),
         acldvppGetPicDescWidthStride(pic), acldvppGetPicDescHeightStride(pic), acldvppGetPicDescSize(pic),
         (int)acldvppGetPicDescFormat(pic), comps, acldvppGetPicDescRetCode(pic));
  host = malloc(dec_size);
  TRY(aclrtMemcpy(host, dec_size, out_dev, dec_size, ACL_MEMCPY_DEVICE_TO_HOST));
  rc = write_file(out, host, dec_size);
done:
  free(host);
  if (pic) {
    uint32_t ret = acldvppGetPicDescRetCode(pic);
    if (rc) printf("ret %u\n", ret);
    acldvppDestroyPicDesc(pic);
  }
  if (out_dev) acldvppFree(out_dev);
  if (in_dev) acldvppFree(in_dev);
  session_close(&ss);
  return rc;
}

/* dvpp_tool vpc resize|crop|paste IN.yuv IW IH IWS IHS IFMT OUT.yuv OW OH OWS OHS OFMT [L R T B [PL PR PT
 * PB]]: the input picture (IWS x IHS x 3 / 2 bytes) through acldvppVpcResizeAsync, acldvppVpcCropAsync or
 * acldvppVpcCropAndPasteAsync into an output buffer first set to 7; writes the whole output buffer and prints
 * "RET". */
static int vpc(int argc, char **argv) {
  int rc = 0;
  if (argc < 15)
    return fprintf(stderr, "usage: dvpp_tool vpc MODE IN IW IH IWS IHS IFMT OUT OW OH OWS OHS OFMT ...\n"), 2;
  const char *mode = argv[2];
  uint32_t v[12];
  for (int i = 0; i < 5; i++)
    v[i] = (uint32_t)strtoul(argv[4 + i], NULL, 0);
  for (int i = 0; i < 5; i++)
    v[5 + i] = (uint32_t)strtoul(argv[10 + i], NULL, 0);
  uint32_t roi[8] = {0};
  for (int i = 0; i < 8 && 15 + i < argc; i++)
    roi[i] = (uint32_t)strtoul(argv[15 + i], NULL, 0);
  size_t n = 0;
  unsigned char *buf = read_file(argv[3], &n);
  size_t isz = (size_t)v[2] * v[3] * 3 / 2, osz = (size_t)v[7] * v[8] * 3 / 2;
  if (!buf || n < isz) return fprintf(stderr, "%s: fewer than %zu bytes\n", argv[3], isz), 2;
  session ss = {NULL, NULL};
  acldvppPicDesc *in = NULL, *out = NULL;
  acldvppRoiConfig *crop = NULL, *paste = NULL;
  acldvppResizeConfig *rcfg = NULL;
  void *in_dev = NULL, *out_dev = NULL, *host = NULL;
  TRY(session_open(&ss));
  TRY(acldvppMalloc(&in_dev, isz ? isz : 1));
  TRY(acldvppMalloc(&out_dev, osz ? osz : 1));
  TRY(aclrtMemcpy(in_dev, isz, buf, isz, ACL_MEMCPY_HOST_TO_DEVICE));
  TRY(aclrtMemset(out_dev, osz, 7, osz));
  in = acldvppCreatePicDesc();
  out = acldvppCreatePicDesc();
  acldvppPicDesc *d[2] = {in, out};
  void *data[2] = {in_dev, out_dev};
  size_t size[2] = {isz, osz};
  for (int k = 0; k < 2; k++) {
    TRY(acldvppSetPicDescData(d[k], data[k]));
    TRY(acldvppSetPicDescSize(d[k], (uint32_t)size[k]));
    TRY(acldvppSetPicDescWidth(d[k], v[5 * k]));
    TRY(acldvppSetPicDescHeight(d[k], v[5 * k + 1]));
    TRY(acldvppSetPicDescWidthStride(d[k], v[5 * k + 2]));
    TRY(acldvppSetPicDescHeightStride(d[k], v[5 * k + 3]));
    TRY(acldvppSetPicDescFormat(d[k], (acldvppPixelFormat)v[5 * k + 4]));
  }
  if (!strcmp(mode, "resize")) {
    rcfg = acldvppCreateResizeConfig();
    TRY(acldvppVpcResizeAsync(ss.ch, in, out, rcfg, ss.stream));
  } else {
    crop = acldvppCreateRoiConfig(roi[0], roi[1], roi[2], roi[3]);
    if (!strcmp(mode, "crop")) {
      TRY(acldvppVpcCropAsync(ss.ch, in, out, crop, ss.stream));
    } else {
      paste = acldvppCreateRoiConfig(roi[4], roi[5], roi[6], roi[7]);
      TRY(acldvppVpcCropAndPasteAsync(ss.ch, in, out, crop, paste, ss.stream));
    }
  }
  TRY(aclrtSynchronizeStream(ss.stream));
  printf("%u\n", acldvppGetPicDescRetCode(out));
  host = malloc(osz);
  TRY(aclrtMemcpy(host, osz, out_dev, osz, ACL_MEMCPY_DEVICE_TO_HOST));
  rc = write_file(argv[9], host, osz);
done:
  free(host);
  free(buf);
  if (rcfg) acldvppDestroyResizeConfig(rcfg);
  if (crop) acldvppDestroyRoiConfig(crop);
  if (paste) acldvppDestroyRoiConfig(paste);
  if (in) acldvppDestroyPicDesc(in);
  if (out) acldvppDestroyPicDesc(out);
  if (out_dev) acldvppFree(out_dev);
  if (in_dev) acldvppFree(in_dev);
  session_close(&ss);
  return rc;
}

enum { BATCH_MAX = 512 };

/* dvpp_tool batch crop|paste SPEC OUTDIR */
static int batch(int argc, char **argv) {
  if (argc < 5) return fprintf(stderr, "usage: dvpp_tool batch crop|paste SPEC OUTDIR\n"), 2;
  int paste = !strcmp(argv[2], "paste"), rc = 0;
  FILE *f = fopen(argv[3], "r");
  if (!f) return fprintf(stderr, "cannot read %s\n", argv[3]), 2;
  unsigned n = 0, src_n = 0, dst_n = 0, total = 0;
  static char path[BATCH_MAX][512];
  static uint32_t in[BATCH_MAX][6], rois[BATCH_MAX], out[BATCH_MAX][13];
  static void *in_dev[BATCH_MAX], *out_dev[BATCH_MAX];
  static acldvppRoiConfig *crop[BATCH_MAX], *pst[BATCH_MAX];
  int ok = fscanf(f, "%u %u %u", &n, &src_n, &dst_n) == 3 && n <= BATCH_MAX;
  for (unsigned i = 0; ok && i < n; i++) {
    ok = fscanf(f, "%511s %u %u %u %u %u %u", path[i], &in[i][0], &in[i][1], &in[i][2], &in[i][3], &in[i][4],
                &rois[i]) == 7;
    total += ok ? rois[i] : 0;
    ok = ok && total <= BATCH_MAX;
  }
  for (unsigned k = 0; ok && k < total; k++)
    for (int j = 0; ok && j < (paste ? 13 : 9); j++)
      ok = fscanf(f, "%u", &out[k][j]) == 1;
  fclose(f);
  if (!ok) return fprintf(stderr, "%s: a malformed spec\n", argv[3]), 2;
  session ss = {NULL, NULL};
  acldvppBatchPicDesc *src = NULL, *dst = NULL;
  unsigned char *host = NULL;
  TRY(session_open(&ss));
  src = acldvppCreateBatchPicDesc(src_n ? src_n : n);
  dst = acldvppCreateBatchPicDesc(dst_n ? dst_n : total);
  if (!src || !dst) TRY(ACL_ERROR_INVALID_PARAM); /* acldvppCreateBatchPicDesc's message */
  unsigned src_count = src_n ? src_n : n, dst_count = dst_n ? dst_n : total; /* pictures past them: unset */
  for (unsigned i = 0; i < n && i < src_count; i++) {
    size_t bytes = 0, need = (size_t)in[i][2] * in[i][3] * 3 / 2;
    unsigned char *buf = read_file(path[i], &bytes);
    if (!buf || bytes < need) {
      free(buf);
      fprintf(stderr, "%s: fewer than %zu bytes\n", path[i], need);
      rc = 2;
      goto done;
    }
    aclError e = acldvppMalloc(&in_dev[i], need ? need : 1);
    if (!e) e = aclrtMemcpy(in_dev[i], need, buf, need, ACL_MEMCPY_HOST_TO_DEVICE);
    free(buf);
    TRY(e);
    acldvppPicDesc *d = acldvppGetPicDesc(src, i);
    TRY(acldvppSetPicDescData(d, in_dev[i]));
    TRY(acldvppSetPicDescSize(d, (uint32_t)need));
    TRY(acldvppSetPicDescWidth(d, in[i][0]));
    TRY(acldvppSetPicDescHeight(d, in[i][1]));
    TRY(acldvppSetPicDescWidthStride(d, in[i][2]));
    TRY(acldvppSetPicDescHeightStride(d, in[i][3]));
    TRY(acldvppSetPicDescFormat(d, (acldvppPixelFormat)in[i][4]));
  }
  for (unsigned k = 0; k < total; k++) {
    size_t need = (size_t)out[k][2] * out[k][3] * 3 / 2;
    TRY(acldvppMalloc(&out_dev[k], need ? need : 1));
    TRY(aclrtMemset(out_dev[k], need, 7, need));
    crop[k] = acldvppCreateRoiConfig(out[k][5], out[k][6], out[k][7], out[k][8]);
    if (paste) pst[k] = acldvppCreateRoiConfig(out[k][9], out[k][10], out[k][11], out[k][12]);
    if (k >= dst_count) continue;
    acldvppPicDesc *d = acldvppGetPicDesc(dst, k);
    TRY(acldvppSetPicDescData(d, out_dev[k]));
    TRY(acldvppSetPicDescSize(d, (uint32_t)need));
    TRY(acldvppSetPicDescWidth(d, out[k][0]));
    TRY(acldvppSetPicDescHeight(d, out[k][1]));
    TRY(acldvppSetPicDescWidthStride(d, out[k][2]));
    TRY(acldvppSetPicDescHeightStride(d, out[k][3]));
    TRY(acldvppSetPicDescFormat(d, (acldvppPixelFormat)out[k][4]));
  }
  if (paste)
    TRY(acldvppVpcBatchCropAndPasteAsync(ss.ch, src, rois, n, dst, crop, pst, ss.stream));
  else
    TRY(acldvppVpcBatchCropAsync(ss.ch, src, rois, n, dst, crop, ss.stream));
  TRY(aclrtSynchronizeStream(ss.stream));
  for (unsigned k = 0; k < total; k++) {
    size_t need = (size_t)out[k][2] * out[k][3] * 3 / 2;
    char name[600];
    host = malloc(need ? need : 1);
    TRY(aclrtMemcpy(host, need, out_dev[k], need, ACL_MEMCPY_DEVICE_TO_HOST));
    snprintf(name, sizeof name, "%s/out_%u.yuv", argv[4], k);
    if (write_file(name, host, need)) {
      rc = 2;
      goto done;
    }
    free(host);
    host = NULL;
    printf("%u%s", acldvppGetPicDescRetCode(acldvppGetPicDesc(dst, k)), k + 1 < total ? " " : "\n");
  }
done:
  free(host);
  for (unsigned k = 0; k < total; k++) {
    if (crop[k]) acldvppDestroyRoiConfig(crop[k]);
    if (pst[k]) acldvppDestroyRoiConfig(pst[k]);
    if (out_dev[k]) acldvppFree(out_dev[k]);
  }
  for (unsigned i = 0; i < n; i++)
    if (in_dev[i]) acldvppFree(in_dev[i]);
  if (src) acldvppDestroyBatchPicDesc(src);
  if (dst) acldvppDestroyBatchPicDesc(dst);
  session_close(&ss);
  return rc;
}

/* dvpp_tool encode IN.yuv W H WS HS FMT LEVEL OUT.jpg [SIZE] */
static int encode(int argc, char **argv) {
  int rc = 0;
  if (argc < 10)
    return fprintf(stderr, "usage: dvpp_tool encode IN.yuv W H WS HS FMT LEVEL OUT.jpg [SIZE]\n"), 2;
  uint32_t v[6];
  for (int i = 0; i < 6; i++)
    v[i] = (uint32_t)strtoul(argv[3 + i], NULL, 0);
  size_t n = 0;
  unsigned char *buf = read_file(argv[2], &n);
  if (!buf) return fprintf(stderr, "cannot read %s\n", argv[2]), 2;
  session ss = {NULL, NULL};
  acldvppPicDesc *in = NULL;
  acldvppJpegeConfig *cfg = NULL;
  void *in_dev = NULL, *out_dev = NULL, *host = NULL;
  uint32_t predicted = 0, size = 0, cap = 0, tail = 4096;
  TRY(session_open(&ss));
  TRY(acldvppMalloc(&in_dev, n ? n : 1));
  TRY(aclrtMemcpy(in_dev, n, buf, n, ACL_MEMCPY_HOST_TO_DEVICE));
  in = acldvppCreatePicDesc();
  cfg = acldvppCreateJpegeConfig();
  TRY(acldvppSetPicDescData(in, in_dev));
  TRY(acldvppSetPicDescSize(in, (uint32_t)n));
  TRY(acldvppSetPicDescWidth(in, v[0]));
  TRY(acldvppSetPicDescHeight(in, v[1]));
  TRY(acldvppSetPicDescWidthStride(in, v[2]));
  TRY(acldvppSetPicDescHeightStride(in, v[3]));
  TRY(acldvppSetPicDescFormat(in, (acldvppPixelFormat)v[4]));
  TRY(acldvppSetJpegeConfigLevel(cfg, v[5]));
  if (acldvppGetJpegeConfigLevel(cfg) != v[5]) {
    printf("acldvppGetJpegeConfigLevel gives %u, not %u\n", acldvppGetJpegeConfigLevel(cfg), v[5]);
    rc = 1;
    goto done;
  }
  TRY(acldvppJpegPredictEncSize(in, cfg, &predicted));
  size = argc > 10 ? (uint32_t)strtoul(argv[10], NULL, 0) : predicted;
  cap = size;
  TRY(acldvppMalloc(&out_dev, (size_t)cap + tail));
  TRY(aclrtMemset(out_dev, (size_t)cap + tail, 0xA5, (size_t)cap + tail));
  TRY(acldvppJpegEncodeAsync(ss.ch, in, out_dev, &size, cfg, ss.stream));
  aclError sync =
      aclrtSynchronizeStream(ss.stream); /* a file too large fails here: the tail is checked first */
  host = malloc((size_t)cap + tail);
  TRY(aclrtMemcpy(host, (size_t)cap + tail, out_dev, (size_t)cap + tail, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = cap; i < (size_t)cap + tail; i++)
    if (((unsigned char *)host)[i] != 0xA5) {
      printf("byte %zu past the %u-byte output buffer was written\n", i, cap);
      rc = 1;
      goto done;
    }
  TRY(sync);
  printf("%u %u\n", predicted, size);
  rc = write_file(argv[9], host, size);
done:
  free(host);
  free(buf);
  if (cfg) acldvppDestroyJpegeConfig(cfg);
  if (in) acldvppDestroyPicDesc(in);
  if (out_dev) acldvppFree(out_dev);
  if (in_dev) acldvppFree(in_dev);
  session_close(&ss);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "vpc")) return vpc(argc, argv);
  if (argc > 1 && !strcmp(argv[1], "encode")) return encode(argc, argv);
  if (argc > 1 && !strcmp(argv[1], "batch")) return batch(argc, argv);
  if (argc < 4)
    return fprintf(stderr, "usage: dvpp_tool jpeg|decode|truncations IN OUT [nv21] | "
                           "png|pngdecode|png_truncations IN OUT ... | vpc ... | batch ... | encode ...\n"),
           2;
  size_t n = 0;
  unsigned char *buf = read_file(argv[2], &n);
  if (!buf) return fprintf(stderr, "cannot read %s\n", argv[2]), 2;
  int nv21 = argc > 4 && !strcmp(argv[4], "nv21"), rc = 2;
  if (!strcmp(argv[1], "jpeg"))
    rc = jpeg_module(buf, n, argv[3], nv21);
  else if (!strcmp(argv[1], "truncations"))
    rc = truncations(buf, n);
  else if (!strcmp(argv[1], "decode"))
    rc = decode(buf, n, argv[3], nv21);
  else if (!strcmp(argv[1], "png") && argc > 4)
    rc = png_module(buf, n, argv[3], !strcmp(argv[4], "rgba") ? 4 : 3);
  else if (!strcmp(argv[1], "png_truncations"))
    rc = png_truncations(buf, n);
  else if (!strcmp(argv[1], "pngdecode") && argc > 4)
    rc = pngdecode(buf, n, argv[3], (acldvppPixelFormat)strtol(argv[4], NULL, 0),
                   argc > 5 ? argv[5] : "Ascend310P3");
  free(buf);
  return rc;
}
