/* test_dtype_cvt.c - the storage dtypes (common/types.h) and their
 * conversions (common/dtype_cvt.h): every float8 variant's edge values
 * (largest finite, smallest normal, smallest subnormal, NaN, infinities,
 * saturate on and off, -0), each 8-bit format's every code decoded and
 * encoded back, bf16's rounding, e8m0's three rounding modes, float4's
 * table, 4- and 2-bit packing with odd lengths, copies that keep the codes;
 * then through the compiler
 * and libomrt: a Cast to int4 whose output is packed bytes, a
 * QuantizeLinear to float8, and a packed initializer one byte short,
 * refused naming the tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype_cvt.h"
#include "driver/compile.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "support.h"

static uint32_t enc(int dt, double v, int sat) { return cvt_float_encode(v, cvt_fmt_of(dt), sat); }

/* Largest finite, smallest normal, smallest subnormal, their codes. */
static void edges(int dt, double max, uint32_t max_code, double min_normal, uint32_t normal_code,
                  double min_sub, uint32_t nan_code, uint32_t inf_nosat) {
  CHECK_EQ_INT(enc(dt, max, 1), max_code);
  CHECK_EQ_INT(enc(dt, min_normal, 1), normal_code);
  CHECK_EQ_INT(enc(dt, min_sub, 1), 1);
  CHECK(cvt_float_decode(max_code, cvt_fmt_of(dt)) == max);
  CHECK(cvt_float_decode(normal_code, cvt_fmt_of(dt)) == min_normal);
  CHECK(cvt_float_decode(1, cvt_fmt_of(dt)) == min_sub);
  CHECK_EQ_INT(enc(dt, min_sub / 2, 1), 0);     /* a tie: to even, 0 */
  CHECK_EQ_INT(enc(dt, min_sub * 0.75, 1), 1);  /* above the tie */
  CHECK_EQ_INT(enc(dt, max * 4, 1), max_code);  /* saturates */
  CHECK_EQ_INT(enc(dt, INFINITY, 1), max_code); /* saturate: +-max */
  CHECK_EQ_INT(enc(dt, -INFINITY, 1), max_code | 0x80);
  CHECK_EQ_INT(enc(dt, INFINITY, 0), inf_nosat); /* no saturation: inf (e5m2) or NaN */
  CHECK_EQ_INT(enc(dt, max * 4, 0), inf_nosat);
  CHECK_EQ_INT(enc(dt, NAN, 1), nan_code);
  CHECK(isnan(cvt_float_decode(nan_code, cvt_fmt_of(dt))));
}

/* Every code decodes to a value that encodes back to it (NaN codes to the
 * format's NaN, the fnuz formats' lone -0 code excepted). */
static void round_trip(int dt) {
  for (uint32_t c = 0; c < 256; c++) {
    uint8_t b = (uint8_t)c;
    double v = cvt_get(&b, dt, 0);
    uint8_t back;
    cvt_put(&back, dt, 0, v, 0, CVT_ROUND_UP);
    if (isnan(v)) {
      CHECK(isnan(cvt_get(&back, dt, 0)));
    } else if (back != c) {
      CHECK(back == c);
      test_note("  dtype %d code 0x%02x -> %g -> 0x%02x", dt, c, v, back);
    }
  }
}

static void float8s(void) {
  /* e4m3fn: bias 7, no inf, NaN s.1111.111 */
  edges(DT_FLOAT8E4M3FN, 448, 0x7e, 0x1p-6, 0x08, 0x1p-9, 0x7f, 0x7f);
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FN, -0.0, 1), 0x80);
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FN, 464, 0), 0x7e); /* the tie below 480 rounds to even, 448 */
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FN, 465, 0), 0x7f);
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FN, -1e6, 0), 0xff);
  /* e4m3fnuz: bias 8, NaN 0x80 only, no -0 */
  edges(DT_FLOAT8E4M3FNUZ, 240, 0x7f, 0x1p-7, 0x08, 0x1p-10, 0x80, 0x80);
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FNUZ, -0.0, 1), 0x00);
  CHECK_EQ_INT(enc(DT_FLOAT8E4M3FNUZ, -0x1p-12, 1), 0x00); /* rounds to -0: 0 */
  /* e5m2: IEEE-like, bias 15 */
  edges(DT_FLOAT8E5M2, 57344, 0x7b, 0x1p-14, 0x04, 0x1p-16, 0x7e, 0x7c);
  CHECK_EQ_INT(enc(DT_FLOAT8E5M2, -INFINITY, 0), 0xfc);
  CHECK_EQ_INT(enc(DT_FLOAT8E5M2, 61440, 0), 0x7c); /* the tie above 57344 rounds to even: inf */
  CHECK(isinf(cvt_float_decode(0x7c, cvt_fmt_of(DT_FLOAT8E5M2))));
  /* e5m2fnuz: bias 16 */
  edges(DT_FLOAT8E5M2FNUZ, 57344, 0x7f, 0x1p-15, 0x04, 0x1p-17, 0x80, 0x80);
  for (int dt = DT_FLOAT8E4M3FN; dt <= DT_FLOAT8E5M2FNUZ; dt++)
    round_trip(dt);
  round_trip(DT_FLOAT8E8M0);
}

static void bf16(void) {
  uint16_t h;
  float f;
  uint32_t bits;
  static const uint32_t in[] = {0x3f808000u, 0x3f818000u, 0x3f808001u, 0x7f7fffffu, 0x7fc00000u, 0xff800000u};
  static const uint16_t want[] = {0x3f80, 0x3f82, 0x3f81, 0x7f80, 0x7fc0, 0xff80};
  for (int i = 0; i < 6; i++) {
    bits = in[i];
    memcpy(&f, &bits, 4);
    cvt_put(&h, DT_BFLOAT16, 0, f, 1, CVT_ROUND_UP);
    if (h != want[i]) test_note("  bf16 of 0x%08x: 0x%04x, want 0x%04x", in[i], h, want[i]);
    CHECK(h == want[i]);
  }
  h = 0x4049; /* 3.140625 */
  CHECK(cvt_get(&h, DT_BFLOAT16, 0) == 3.140625);
}

static void e8m0(void) {
  CHECK_EQ_INT(cvt_e8m0_encode(1.0, 1, CVT_ROUND_UP), 127);
  CHECK_EQ_INT(cvt_e8m0_encode(1.1, 1, CVT_ROUND_UP), 128);
  CHECK_EQ_INT(cvt_e8m0_encode(1.1, 1, CVT_ROUND_DOWN), 127);
  CHECK_EQ_INT(cvt_e8m0_encode(1.4, 1, CVT_ROUND_NEAREST), 127);
  CHECK_EQ_INT(cvt_e8m0_encode(1.5, 1, CVT_ROUND_NEAREST), 128); /* ties up */
  CHECK_EQ_INT(cvt_e8m0_encode(-2.0, 1, CVT_ROUND_UP), 128);     /* no sign: the exponent */
  CHECK_EQ_INT(cvt_e8m0_encode(0x1.8p127, 1, CVT_ROUND_UP), 0xfe);
  CHECK_EQ_INT(cvt_e8m0_encode(0x1.8p127, 0, CVT_ROUND_UP), 0xff);
  CHECK_EQ_INT(cvt_e8m0_encode(INFINITY, 1, CVT_ROUND_UP), 0xfe);
  CHECK_EQ_INT(cvt_e8m0_encode(INFINITY, 0, CVT_ROUND_UP), 0xff);
  CHECK_EQ_INT(cvt_e8m0_encode(NAN, 1, CVT_ROUND_UP), 0xff);
  CHECK(cvt_e8m0_decode(0) == 0x1p-127);
  CHECK(isnan(cvt_e8m0_decode(0xff)));
}

/* 4- and 2-bit packing: odd lengths, low bits first, the pad bits zero. */
static void packing(void) {
  static const float x[5] = {-9, 7, -1, 0.5f, 3};
  uint8_t b[3];
  memset(b, 0xee, sizeof b);
  cvt_run(b, DT_INT4, 0, x, DT_FLOAT32, 0, 5, 1, CVT_ROUND_UP);
  CHECK_EQ_INT(b[0], 0x77); /* -9 wraps to 7 (Cast wraps; QuantizeLinear saturates first) */
  CHECK_EQ_INT(b[1], 0x0f); /* -1, 0 (0.5 truncated) */
  CHECK_EQ_INT(b[2], 0x03); /* 3, pad 0 */
  CHECK(cvt_get(b, DT_INT4, 2) == -1 && cvt_get(b, DT_INT4, 4) == 3 && cvt_get(b, DT_UINT4, 2) == 15);
  uint8_t q[2] = {0xee, 0xee};
  cvt_run(q, DT_UINT2, 0, x, DT_FLOAT32, 0, 5, 1, CVT_ROUND_UP);
  CHECK_EQ_INT(q[0], 0x3f); /* 3, 3, 3, 0 from -9, 7, -1, 0.5 mod 4 */
  CHECK_EQ_INT(q[1], 0x03);
  CHECK(cvt_get(q, DT_INT2, 0) == -1 && cvt_get(q, DT_UINT2, 1) == 3);
  /* float4 e2m1: the grid 0, 0.5, 1, 1.5, 2, 3, 4, 6; ties to even; NaN 0x8 */
  static const float f[8] = {0.25f, 0.75f, 2.5f, -3.5f, 100, NAN, -INFINITY, -0.0f};
  uint8_t p[4];
  cvt_run(p, DT_FLOAT4E2M1, 0, f, DT_FLOAT32, 0, 8, 0, CVT_ROUND_UP);
  CHECK_EQ_INT(p[0], 0x20); /* 0, 1 */
  CHECK_EQ_INT(p[1], 0xe4); /* 2, -4 */
  CHECK_EQ_INT(p[2], 0x87); /* 6, NaN */
  CHECK_EQ_INT(p[3], 0x8f); /* -6, -0 */
  /* one storage dtype on both sides: the codes as they are (a NaN's payload too) */
  uint16_t nan_in[2] = {0x7fc1, 0x3f80}, nan_out[2];
  cvt_run(nan_out, DT_BFLOAT16, 0, nan_in, DT_BFLOAT16, 0, 2, 1, CVT_ROUND_UP);
  CHECK(nan_out[0] == 0x7fc1 && nan_out[1] == 0x3f80);
  uint8_t c4[3];
  cvt_run(c4, DT_INT4, 0, b, DT_INT4, 0, 5, 1, CVT_ROUND_UP);
  CHECK(c4[0] == 0x77 && c4[1] == 0x0f && c4[2] == 0x03);
  uint64_t bytes;
  CHECK(dtype_bytes(DT_INT4, 5, &bytes) == 0 && bytes == 3);
  CHECK(dtype_bytes(DT_INT2, 5, &bytes) == 0 && bytes == 2);
  CHECK(dtype_bytes(DT_BFLOAT16, 5, &bytes) == 0 && bytes == 10);
  CHECK(dtype_bytes(DT_INT4, UINT64_MAX, &bytes) == -1);
}

static void *compile(mb *m, size_t *size) {
  atc_options opt = {.model_path = "cvt.onnx",
                     .soc_version = "Ascend310",
                     .precision = OM_PRECISION_FORCE_FP16,
                     .cmdline = "test_dtype_cvt"};
  return mb_compile(m, &opt, size);
}

/* Runs a one-input, one-output package; its output has out_bytes bytes. */
static void run(void *om, size_t size, const void *in, void *out, size_t out_bytes) {
  omrt_model *rm;
  omrt_context *c;
  omrt_tensor_desc od;
  CHECK(om != NULL);
  if (!om || omrt_model_load_memory(om, size, NULL, &rm) != OMRT_OK) {
    CHECK(!"the package loads");
    return;
  }
  CHECK_EQ_INT(omrt_model_output(rm, 0, &od), OMRT_OK);
  CHECK_EQ_INT(od.bytes, out_bytes); /* packed */
  CHECK_EQ_INT(omrt_context_new(rm, &c), OMRT_OK);
  const void *ins[1] = {in};
  void *outs[1] = {out};
  CHECK_EQ_INT(omrt_execute(c, ins, outs), OMRT_OK);
  omrt_context_free(c);
  omrt_model_free(rm);
}

/* Through atc and libomrt: Cast to int4, 5 elements -> 3 packed bytes. */
static void cast_int4(void) {
  mb m;
  mb_init(&m, 21);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){5}, NULL);
  Onnx__NodeProto *n = mb_node(&m, "Cast", "cast", "x", "y");
  attr_int(&m, n, "to", DT_INT4);
  mb_output(&m, "y");
  size_t size;
  void *om = compile(&m, &size);
  static const float x[5] = {-9, 7, -1, 0.5f, 3};
  uint8_t y[3] = {0xee, 0xee, 0xee};
  run(om, size, x, y, 3);
  CHECK_EQ_INT(y[0], 0x77);
  CHECK_EQ_INT(y[1], 0x0f);
  CHECK_EQ_INT(y[2], 0x03);
  free(om);
}

/* QuantizeLinear to e4m3fn saturates: x / 2 of 1e5 is 448. */
static void quantize_f8(void) {
  mb m;
  mb_init(&m, 21);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){4}, NULL);
  mb_init_raw(&m, "s", DT_FLOAT32, 0, NULL, (float[]){2}, 4);
  mb_init_raw(&m, "z", DT_FLOAT8E4M3FN, 1, (int64_t[]){1}, (uint8_t[]){0}, 1);
  mb_node(&m, "QuantizeLinear", "q", "x,s,z", "y");
  mb_output(&m, "y");
  size_t size;
  void *om = compile(&m, &size);
  static const float x[4] = {0, 1, 1e5f, -200};
  uint8_t y[4];
  run(om, size, x, y, 4);
  CHECK_EQ_INT(y[0], 0x00);
  CHECK_EQ_INT(y[1], 0x30); /* 0.5 */
  CHECK_EQ_INT(y[2], 0x7e); /* 448 */
  CHECK_EQ_INT(y[3], 0xec); /* -100 rounds to even: -96 = -1.5 * 2^6 */
  free(om);
}

/* A packed int4 initializer one byte short: refused, naming it. */
static void short_initializer(void) {
  mb m;
  mb_init(&m, 21);
  mb_input(&m, "x", DT_FLOAT32, 1, (int64_t[]){5}, NULL);
  mb_init_raw(&m, "w4", DT_INT4, 1, (int64_t[]){5}, (uint8_t[]){0x12, 0x34}, 2);
  mb_node(&m, "Cast", "c", "w4", "wf");
  attr_int(&m, m.graph.node[0], "to", DT_FLOAT32);
  mb_node(&m, "Add", "a", "x,wf", "y");
  mb_output(&m, "y");
  EXPECT_FAIL(&m, NULL, &(onnx_options){0}, ST_ERR_INVALID, "w4", "raw_data has 2 bytes", "need 3");
  mb_free(&m);
}

int main(void) {
  float8s();
  bf16();
  e8m0();
  packing();
  cast_int4();
  quantize_f8();
  short_initializer();
  return test_summary("test_dtype_cvt");
}
