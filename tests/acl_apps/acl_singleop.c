/* acl_singleop.c - the single-operator flow of the public documentation,
 * written as an application would be, against the public headers only:
 *
 *   aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 *   -> aclopSetModelDir (the op models atc --singleop wrote)
 *   -> aclopLoad (one more op model, read into memory and freed after)
 *   -> per operator: tensor descriptions, data buffers (device memory
 *      filled by aclrtMemcpy, or host memory from aclrtMallocHost),
 *      attributes -> aclopExecuteV2 on the stream (or stream NULL) ->
 *      aclrtSynchronizeStream -> the outputs against values computed here
 *   -> aclopCreateHandle / aclopExecWithHandle, aclopCast
 *   -> the documented errors: an unmatched shape, an unmatched attribute,
 *      an op type no model has
 *   -> the documented teardown.
 *
 * The op models (tests/acl_apps_test.sh singleop) are compiled with
 * --precision_mode=must_keep_origin_dtype: Add on float [2,3] and int32
 * [3,3], MatMul on float16 [3,4] x [5,4] with transpose_x2, SoftmaxV2 on
 * float [2,7] (axes [-1]), Cast float [4] -> int32; and, loaded from
 * memory, Sub on float [2,3]. Elementwise and integer results must be
 * exact; MatMul's inputs are small integers, so its fp16 result is exact
 * too; Softmax within 1e-6.
 *
 *   acl_singleop OP_MODEL_DIR SUB.om
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

static int failures;

static int failed(const char *what, aclError ret) {
  const char *msg = aclGetRecentErrMsg();
  fprintf(stderr, "[ERROR] %s: error %d: %s\n", what, ret, msg ? msg : "(no message)");
  return 1;
}
#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) return failed(#call, ret_);                                                     \
  } while (0)

static void expect(const char *what, int ok) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  failures += !ok;
}

/* IEEE half of a float that half holds exactly (small integers here). */
static uint16_t to_half(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t sign = (b >> 16) & 0x8000, exp = (b >> 23) & 0xff, man = b & 0x7fffff;
  if (exp == 0) return (uint16_t)sign;
  return (uint16_t)(sign | ((exp - 127 + 15) << 10) | (man >> 13));
}

static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t b = exp == 0 ? sign : sign | ((exp - 15 + 127) << 23) | (man << 13);
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* One operand: its description and a buffer of device (or host) memory
 * holding `bytes` copied from host. */
typedef struct operand {
  aclTensorDesc *desc;
  aclDataBuffer *buf;
  void *mem;
  int host;
  size_t bytes;
} operand;

static int make(operand *o, aclDataType dt, int rank, const int64_t *dims, const void *host_data, int host) {
  memset(o, 0, sizeof *o);
  o->host = host;
  o->desc = aclCreateTensorDesc(dt, rank, dims, ACL_FORMAT_ND);
  if (!o->desc) return failed("aclCreateTensorDesc", -1);
  o->bytes = aclGetTensorDescSize(o->desc);
  CHECK(host ? aclrtMallocHost(&o->mem, o->bytes)
             : aclrtMalloc(&o->mem, o->bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  if (host_data && host)
    memcpy(o->mem, host_data, o->bytes);
  else if (host_data)
    CHECK(aclrtMemcpy(o->mem, o->bytes, host_data, o->bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  o->buf = aclCreateDataBuffer(o->mem, o->bytes);
  if (!o->buf) return failed("aclCreateDataBuffer", -1);
  return 0;
}

static int fetch(const operand *o, void *host) {
  if (o->host)
    memcpy(host, o->mem, o->bytes);
  else
    CHECK(aclrtMemcpy(host, o->bytes, o->mem, o->bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  return 0;
}

static int release(operand *o) {
  if (o->buf) CHECK(aclDestroyDataBuffer(o->buf));
  if (o->desc) aclDestroyTensorDesc(o->desc);
  if (o->mem) CHECK(o->host ? aclrtFreeHost(o->mem) : aclrtFree(o->mem));
  memset(o, 0, sizeof *o);
  return 0;
}

/* Runs opType on in[0..nin) -> out[0] with attr on stream. */
static aclError exec(const char *type, operand *in, int nin, operand *out, aclopAttr *attr,
                     aclrtStream stream) {
  aclTensorDesc *id[4], *od[1] = {out->desc};
  aclDataBuffer *ib[4], *ob[1] = {out->buf};
  for (int i = 0; i < nin; i++)
    id[i] = in[i].desc, ib[i] = in[i].buf;
  return aclopExecuteV2(type, nin, id, ib, 1, od, ob, attr, stream);
}

static int run_ops(aclrtStream stream, const char *sub_om) {
  /* Add, float [2,3], device memory, on the stream. */
  int64_t d23[2] = {2, 3};
  float a[6], b[6], y[6];
  for (int i = 0; i < 6; i++)
    a[i] = 0.1f * (float)i - 0.25f, b[i] = 1.5f / (float)(i + 1);
  operand in[2], out;
  if (make(&in[0], ACL_FLOAT, 2, d23, a, 0) || make(&in[1], ACL_FLOAT, 2, d23, b, 0) ||
      make(&out, ACL_FLOAT, 2, d23, NULL, 0))
    return 1;
  aclopAttr *none = aclopCreateAttr();
  if (!none) return failed("aclopCreateAttr", -1);
  CHECK(exec("Add", in, 2, &out, none, stream));
  CHECK(aclrtSynchronizeStream(stream));
  if (fetch(&out, y)) return 1;
  int ok = 1;
  for (int i = 0; i < 6; i++)
    ok &= y[i] == a[i] + b[i];
  expect("Add float [2,3] on the stream, device memory: exact", ok);

  /* The same shapes of another width: no model takes them. */
  int64_t d24[2] = {2, 4};
  operand wide[2], wout;
  if (make(&wide[0], ACL_FLOAT, 2, d24, NULL, 0) || make(&wide[1], ACL_FLOAT, 2, d24, NULL, 0) ||
      make(&wout, ACL_FLOAT, 2, d24, NULL, 0))
    return 1;
  aclError e = exec("Add", wide, 2, &wout, none, stream);
  const char *msg = aclGetRecentErrMsg();
  expect("Add float [2,4]: ACL_ERROR_OP_INPUT_NOT_MATCH naming the input and the closest model's shape",
         e == ACL_ERROR_OP_INPUT_NOT_MATCH && msg && strstr(msg, "Add") && strstr(msg, "inputDesc[0]") &&
             strstr(msg, "[2,3]"));
  if (e != ACL_ERROR_OP_INPUT_NOT_MATCH && msg) printf("  (%d: %s)\n", e, msg);
  e = exec("Conv2D", wide, 2, &wout, none, stream);
  expect("an op type with no model: ACL_ERROR_OP_NOT_FOUND", e == ACL_ERROR_OP_NOT_FOUND);
  for (int i = 0; i < 2; i++)
    if (release(&wide[i])) return 1;
  if (release(&wout)) return 1;

  /* Sub, loaded from memory by aclopLoad, same operands. */
  FILE *f = fopen(sub_om, "rb");
  if (!f) return failed(sub_om, -1);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *om = malloc((size_t)n);
  if (!om || fread(om, 1, (size_t)n, f) != (size_t)n) return failed("reading the Sub op model", -1);
  fclose(f);
  CHECK(aclopLoad(om, (size_t)n));
  memset(om, 0, (size_t)n); /* (the library keeps its own copy) */
  free(om);
  CHECK(exec("Sub", in, 2, &out, none, stream));
  CHECK(aclrtSynchronizeStream(stream));
  if (fetch(&out, y)) return 1;
  ok = 1;
  for (int i = 0; i < 6; i++)
    ok &= y[i] == a[i] - b[i];
  expect("Sub float [2,3] loaded by aclopLoad: exact", ok);
  for (int i = 0; i < 2; i++)
    if (release(&in[i])) return 1;
  if (release(&out)) return 1;

  /* Add, int32 [3,3], host memory, stream NULL (runs before returning). */
  int64_t d33[2] = {3, 3};
  int32_t ia[9], ib[9], iy[9];
  for (int i = 0; i < 9; i++)
    ia[i] = 1000 * i - 4000, ib[i] = 7 - 3 * i;
  if (make(&in[0], ACL_INT32, 2, d33, ia, 1) || make(&in[1], ACL_INT32, 2, d33, ib, 1) ||
      make(&out, ACL_INT32, 2, d33, NULL, 1))
    return 1;
  CHECK(exec("Add", in, 2, &out, NULL, NULL));
  if (fetch(&out, iy)) return 1;
  ok = 1;
  for (int i = 0; i < 9; i++)
    ok &= iy[i] == ia[i] + ib[i];
  expect("Add int32 [3,3], host memory, stream NULL: exact", ok);
  for (int i = 0; i < 2; i++)
    if (release(&in[i])) return 1;
  if (release(&out)) return 1;

  /* MatMul float16 [3,4] x [5,4]^T. */
  int64_t d34[2] = {3, 4}, d54[2] = {5, 4}, d35[2] = {3, 5};
  uint16_t x1[12], x2[20], hy[15];
  for (int i = 0; i < 12; i++)
    x1[i] = to_half((float)(i % 7 - 3));
  for (int i = 0; i < 20; i++)
    x2[i] = to_half((float)(i % 5 - 2));
  if (make(&in[0], ACL_FLOAT16, 2, d34, x1, 0) || make(&in[1], ACL_FLOAT16, 2, d54, x2, 0) ||
      make(&out, ACL_FLOAT16, 2, d35, NULL, 0))
    return 1;
  e = exec("MatMul", in, 2, &out, none, stream);
  msg = aclGetRecentErrMsg();
  expect("MatMul without transpose_x2: ACL_ERROR_OP_ATTR_NOT_MATCH naming the attribute",
         e == ACL_ERROR_OP_ATTR_NOT_MATCH && msg && strstr(msg, "transpose_x2"));
  aclopAttr *tr = aclopCreateAttr();
  if (!tr) return failed("aclopCreateAttr", -1);
  CHECK(aclopSetAttrBool(tr, "transpose_x2", 1));
  CHECK(exec("MatMul", in, 2, &out, tr, stream));
  CHECK(aclrtSynchronizeStream(stream));
  if (fetch(&out, hy)) return 1;
  ok = 1;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) {
      float s = 0;
      for (int k = 0; k < 4; k++)
        s += from_half(x1[i * 4 + k]) * from_half(x2[j * 4 + k]);
      ok &= from_half(hy[i * 5 + j]) == s;
    }
  expect("MatMul float16 [3,4] x [5,4]^T (transpose_x2): exact on small integers", ok);
  aclopDestroyAttr(tr);
  for (int i = 0; i < 2; i++)
    if (release(&in[i])) return 1;
  if (release(&out)) return 1;

  /* SoftmaxV2 through a handle, run twice. */
  int64_t d27[2] = {2, 7};
  float sx[14], sy[14];
  for (int i = 0; i < 14; i++)
    sx[i] = 0.37f * (float)(i % 9) - 1.0f;
  if (make(&in[0], ACL_FLOAT, 2, d27, sx, 0) || make(&out, ACL_FLOAT, 2, d27, NULL, 0)) return 1;
  aclopAttr *axes = aclopCreateAttr();
  int64_t last = -1;
  if (!axes) return failed("aclopCreateAttr", -1);
  CHECK(aclopSetAttrListInt(axes, "axes", 1, &last));
  const aclTensorDesc *sid[1] = {in[0].desc}, *sod[1] = {out.desc};
  aclopHandle *h = NULL;
  CHECK(aclopCreateHandle("SoftmaxV2", 1, sid, 1, sod, axes, &h));
  const aclDataBuffer *sib[1] = {in[0].buf};
  aclDataBuffer *sob[1] = {out.buf};
  for (int r = 0; r < 2; r++) {
    CHECK(aclopExecWithHandle(h, 1, sib, 1, sob, stream));
    CHECK(aclrtSynchronizeStream(stream));
  }
  if (fetch(&out, sy)) return 1;
  ok = 1;
  for (int row = 0; row < 2; row++) {
    double m = -1e30, s = 0;
    for (int k = 0; k < 7; k++)
      m = fmax(m, sx[row * 7 + k]);
    for (int k = 0; k < 7; k++)
      s += exp(sx[row * 7 + k] - m);
    for (int k = 0; k < 7; k++)
      ok &= fabs(sy[row * 7 + k] - exp(sx[row * 7 + k] - m) / s) <= 1e-6;
  }
  expect("SoftmaxV2 float [2,7] through aclopCreateHandle / aclopExecWithHandle: within 1e-6", ok);
  aclopDestroyHandle(h);
  aclopDestroyAttr(axes);
  if (release(&in[0]) || release(&out)) return 1;

  /* aclopCast float -> int32 (the loaded Cast model). */
  int64_t d4[1] = {4};
  float cx[4] = {1.75f, -2.5f, 300.25f, -0.5f};
  int32_t cy[4];
  if (make(&in[0], ACL_FLOAT, 1, d4, cx, 0) || make(&out, ACL_INT32, 1, d4, NULL, 0)) return 1;
  CHECK(aclopCast(in[0].desc, in[0].buf, out.desc, out.buf, 1, stream));
  CHECK(aclrtSynchronizeStream(stream));
  if (fetch(&out, cy)) return 1;
  ok = 1;
  for (int i = 0; i < 4; i++)
    ok &= cy[i] == (int32_t)cx[i];
  expect("aclopCast float [4] -> int32: truncated, exact", ok);
  if (release(&in[0]) || release(&out)) return 1;
  aclopDestroyAttr(none);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: acl_singleop OP_MODEL_DIR SUB.om\n");
    return 2;
  }
  aclrtContext context;
  aclrtStream stream;
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  CHECK(aclrtCreateContext(&context, 0));
  CHECK(aclrtCreateStream(&stream));
  CHECK(aclopSetModelDir(argv[1]));
  int rc = run_ops(stream, argv[2]);
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtDestroyContext(context));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  printf("%s\n", rc || failures ? "FAIL" : "ok   acl_singleop");
  return rc || failures;
}
