/* test_vprog.c - vector programs (common/vprog.h) end to end: built with
 * om_writer into an om package, loaded and verified by libomrt, run by the
 * interpreter (runtime/vprog_exec.c).
 *
 *   1. corner cases, one hand-written program per op family, against values
 *      worked out by hand (ONNX Mod signs, Round half to even, Cast
 *      truncation and saturation, integer division by zero, signed and
 *      unsigned shifts, NaN and inf through compares, ISNAN and ISINF, f16
 *      rounding after every instruction, f64 and the 16-bit and unsigned
 *      integer dtypes);
 *   3. rejections: each malformed program is OMRT_ERR_FORMAT with a message
 *      naming the task, the program offset and the instruction; randomly
 *      damaged programs are rejected or run without harm;
 *   4. NC1HWC0: an SE-block style [N,C,1,1] x [N,C,H,W] product, padding
 *      lanes written as 0;
 *   5. the writer (de-duplication, no VPROGS partition without programs) and
 *      the JSON dump.
 * The property test (2) over random programs is test_vprog_random.c.
 */
#include "vprog_pkg.h"

#include "common/vmath.h"

/* ---- 1. corner cases ---- */

/* out = op(in0, in1) (or op(in0) when binary == 0), one dtype in, dtype `odt` out. */
static void check_binary(int op, int dt, int odt, int nargs, const void *a, const void *b, const void *want,
                         int n, const char *what) {
  om_vinstr ins[4] = {I(VOP_LOAD, dt, 0, 0, 0, 0), I(VOP_LOAD, dt, 1, 1, 0, 0), I(op, odt, 2, 0, 1, 0),
                      I(VOP_STORE, odt, 0, 0, 2, 0)};
  om_vprog h = {.ninputs = (uint16_t)nargs, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  om_vinstr ins1[3] = {I(VOP_LOAD, dt, 0, 0, 0, 0), I(op, odt, 1, 0, 0, 0), I(VOP_STORE, odt, 0, 0, 1, 0)};
  om_vprog h1 = {.ninputs = 1, .noutputs = 1, .nregs = 2, .ninstrs = 3};
  int dts[3] = {dt, nargs == 2 ? dt : odt, odt};
  uint8_t got[64 * 8];
  const void *in[2] = {a, b};
  void *out[1] = {got};
  omrt_status s =
      nargs == 2 ? run_vec(&h, ins, dts, NULL, n, in, out) : run_vec(&h1, ins1, dts, NULL, n, in, out);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s) test_note("  %s: %s", what, omrt_last_error());
  size_t es = dtype_size(odt);
  for (int i = 0; i < n; i++)
    if (memcmp(got + i * es, (const uint8_t *)want + i * es, es) != 0) {
      CHECK(!what);
      double g = odt == DT_FLOAT32 ? ((float *)got)[i] : odt == DT_INT32 ? ((int32_t *)got)[i] : got[i * es];
      test_note("  %s: element %d wrong (got %g)", what, i, g);
    }
}

static void test_corner_cases(void) {
  { /* ONNX Mod (sign of the divisor), Python-style; by zero 0; INT_MIN % -1 = 0 */
    int32_t a[] = {-7, 7, -7, 7, 5, INT32_MIN, 0, -6}, b[] = {3, -3, -3, 3, 0, -1, 5, 3};
    int32_t want[] = {2, -2, -1, 1, 0, 0, 0, 0};
    check_binary(VOP_MOD, DT_INT32, DT_INT32, 2, a, b, want, 8, "mod i32");
    int32_t fwant[] = {-1, 1, -1, 1, 0, 0, 0, 0};
    check_binary(VOP_FMOD, DT_INT32, DT_INT32, 2, a, b, fwant, 8, "fmod i32");
    float fa[] = {-7, 7, -7, 5.5f}, fb[] = {3, -3, -3, 2}, fw[] = {2, -2, -1, 1.5f};
    check_binary(VOP_MOD, DT_FLOAT32, DT_FLOAT32, 2, fa, fb, fw, 4, "mod f32");
  }
  { /* DIV truncates; by zero 0; INT_MIN / -1 wraps */
    int32_t a[] = {7, -7, 5, -5, INT32_MIN, 0}, b[] = {2, 2, 0, 0, -1, 0}, w[] = {3, -3, 0, 0, INT32_MIN, 0};
    check_binary(VOP_DIV, DT_INT32, DT_INT32, 2, a, b, w, 6, "div i32");
    int64_t a64[] = {INT64_MIN, 9}, b64[] = {-1, 0}, w64[] = {INT64_MIN, 0};
    check_binary(VOP_DIV, DT_INT64, DT_INT64, 2, a64, b64, w64, 2, "div i64");
    uint8_t ua[] = {200, 7}, ub[] = {255, 0}, uw[] = {0, 0};
    check_binary(VOP_DIV, DT_UINT8, DT_UINT8, 2, ua, ub, uw, 2, "div u8");
  }
  { /* Round half to even; floor; ceil */
    float a[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4999f, -2.5f, 3.5f};
    float w[] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -2.0f, 4.0f};
    check_binary(VOP_ROUND, DT_FLOAT32, DT_FLOAT32, 1, a, NULL, w, 8, "round f32");
  }
  { /* Cast float -> int: truncation toward zero, saturation, NaN -> 0 */
    float a[] = {1.9f, -1.9f, 3e9f, -3e9f, NAN, INFINITY, -INFINITY, -0.5f};
    int32_t w[] = {1, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 0};
    check_binary(VOP_CAST, DT_FLOAT32, DT_INT32, 1, a, NULL, w, 8, "cast f32->i32");
    uint8_t wu[] = {1, 0, 255, 0, 0, 255, 0, 0};
    check_binary(VOP_CAST, DT_FLOAT32, DT_UINT8, 1, a, NULL, wu, 8, "cast f32->u8");
    int8_t w8[] = {1, -1, 127, -128, 0, 127, -128, 0};
    check_binary(VOP_CAST, DT_FLOAT32, DT_INT8, 1, a, NULL, w8, 8, "cast f32->i8");
    uint8_t wb[] = {1, 1, 1, 1, 1, 1, 1, 1};
    check_binary(VOP_CAST, DT_FLOAT32, DT_BOOL, 1, a, NULL, wb, 8, "cast f32->bool");
    int32_t ia[] = {300, -1, 255, 128};
    uint8_t iw[] = {44, 255, 255, 128};
    check_binary(VOP_CAST, DT_INT32, DT_UINT8, 1, ia, NULL, iw, 4, "cast i32->u8 wraps");
    int64_t big[] = {16777217, -3};
    float bw[] = {16777216.0f, -3.0f};
    check_binary(VOP_CAST, DT_INT64, DT_FLOAT32, 1, big, NULL, bw, 2, "cast i64->f32 rounds");
    uint16_t hw[] = {float_to_half(65504.0f), 0x7c00}; /* 65519 -> 65504, 70000 -> inf */
    float fa[] = {65519.0f, 70000.0f};
    check_binary(VOP_CAST, DT_FLOAT32, DT_FLOAT16, 1, fa, NULL, hw, 2, "cast f32->f16");
  }
  { /* The wide and unsigned dtypes: f64 computes in f64 and casts to f16 in one rounding; narrow
     * integers wrap to their width; u64 divides and compares as unsigned; float -> unsigned saturates */
    double da[] = {1 + 0x1p-11 + 0x1p-40, 0.1, 65519.99, -0.0}, db[] = {0, 0.2, 0, 0};
    uint16_t hw[] = {0x3c01, float_to_half(0.1f), 0x7bff, 0x8000};
    check_binary(VOP_CAST, DT_DOUBLE, DT_FLOAT16, 1, da, NULL, hw, 4, "cast f64->f16 rounds once");
    double sw[] = {1 + 0x1p-11 + 0x1p-40, 0.30000000000000004, 65519.99, 0.0}; /* -0 + 0 = +0 */
    check_binary(VOP_ADD, DT_DOUBLE, DT_DOUBLE, 2, da, db, sw, 4, "add f64");
    int16_t ia[] = {32767, -32768, 300}, ib[] = {1, -1, 300}, iw[] = {-32768, 32767, 24464};
    check_binary(VOP_ADD, DT_INT16, DT_INT16, 2, ia, ib, iw, 2, "add i16 wraps");
    check_binary(VOP_MUL, DT_INT16, DT_INT16, 2, ia + 2, ib + 2, iw + 2, 1, "mul i16 wraps");
    uint16_t ua[] = {0, 5}, ub[] = {1, 7}, uw[] = {65535, 65534};
    check_binary(VOP_SUB, DT_UINT16, DT_UINT16, 2, ua, ub, uw, 2, "sub u16 wraps");
    uint32_t wa[] = {0x10000, 0x80000000u}, wb[] = {0x10000, 31}, ww[] = {0, 1};
    check_binary(VOP_MUL, DT_UINT32, DT_UINT32, 2, wa, wb, ww, 1, "mul u32 wraps");
    check_binary(VOP_SHR, DT_UINT32, DT_UINT32, 2, wa + 1, wb + 1, ww + 1, 1, "shr u32 logical");
    uint64_t la[] = {UINT64_MAX, 1ull << 63, 7}, lb[] = {2, 1, 0}, lw[] = {UINT64_MAX / 2, 1ull << 63, 0};
    check_binary(VOP_DIV, DT_UINT64, DT_UINT64, 2, la, lb, lw, 3, "div u64 unsigned");
    uint8_t lt[] = {0, 0, 0}, gt[] = {1, 1, 1};
    check_binary(VOP_LT, DT_UINT64, DT_BOOL, 2, la, lb, lt, 3, "lt u64 unsigned");
    check_binary(VOP_GT, DT_UINT64, DT_BOOL, 2, la, lb, gt, 3, "gt u64 unsigned");
    float fa[] = {70000.0f, -5.0f, 123.9f, NAN};
    uint16_t fw[] = {65535, 0, 123, 0};
    check_binary(VOP_CAST, DT_FLOAT32, DT_UINT16, 1, fa, NULL, fw, 4, "cast f32->u16 saturates");
    float uf[] = {0x1p64f, 0x1p63f, 7.0f};
    check_binary(VOP_CAST, DT_UINT64, DT_FLOAT32, 1, la, NULL, uf, 3, "cast u64->f32 unsigned");
    int16_t sa[] = {-1, 1};
    uint64_t su[] = {UINT64_MAX, 1};
    check_binary(VOP_CAST, DT_INT16, DT_UINT64, 1, sa, NULL, su, 2, "cast i16->u64 sign-extends");
  }
  { /* Shifts: arithmetic for signed, logical for unsigned, counts >= width (or negative) give 0 */
    int8_t a[] = {-16, -16, 64, 1, -1}, b[] = {2, 8, 1, -1, 7}, w[] = {-4, 0, 32, 0, -1};
    check_binary(VOP_SHR, DT_INT8, DT_INT8, 2, a, b, w, 5, "shr i8");
    uint8_t ua[] = {240, 240, 1}, ub[] = {2, 8, 7}, uw[] = {60, 0, 0};
    check_binary(VOP_SHR, DT_UINT8, DT_UINT8, 2, ua, ub, uw, 3, "shr u8");
    int64_t la[] = {-16, INT64_MIN, -1}, lb[] = {2, 63, 64}, lw[] = {-4, -1, 0};
    check_binary(VOP_SHR, DT_INT64, DT_INT64, 2, la, lb, lw, 3, "shr i64");
    int32_t sa[] = {1, 3, 1}, sb[] = {31, 30, 32}, sw[] = {INT32_MIN, INT32_MIN + (1 << 30), 0};
    check_binary(VOP_SHL, DT_INT32, DT_INT32, 2, sa, sb, sw, 3, "shl i32");
  }
  { /* NaN and inf through compares */
    float a[] = {NAN, NAN, 1, INFINITY, -INFINITY, 0.0f}, b[] = {NAN, 1, NAN, 3e38f, -INFINITY, -0.0f};
    uint8_t eq[] = {0, 0, 0, 0, 1, 1}, ne[] = {1, 1, 1, 1, 0, 0}, lt[] = {0, 0, 0, 0, 0, 0},
            ge[] = {0, 0, 0, 1, 1, 1};
    check_binary(VOP_EQ, DT_FLOAT32, DT_BOOL, 2, a, b, eq, 6, "eq f32");
    check_binary(VOP_NE, DT_FLOAT32, DT_BOOL, 2, a, b, ne, 6, "ne f32");
    check_binary(VOP_LT, DT_FLOAT32, DT_BOOL, 2, a, b, lt, 6, "lt f32");
    check_binary(VOP_GE, DT_FLOAT32, DT_BOOL, 2, a, b, ge, 6, "ge f32");
    uint8_t isn[] = {1, 1, 0, 0, 0, 0};
    check_binary(VOP_ISNAN, DT_FLOAT32, DT_BOOL, 1, a, NULL, isn, 6, "isnan");
    float mx[] = {NAN, NAN, NAN, INFINITY, -INFINITY, -0.0f};
    check_binary(VOP_MAX, DT_FLOAT32, DT_FLOAT32, 2, a, b, mx, 6, "max propagates NaN");
  }
  { /* ISINF with each detect mask */
    float a[] = {INFINITY, -INFINITY, NAN, 1e38f};
    for (int mask = 0; mask < 4; mask++) {
      om_vinstr ins[3] = {I(VOP_LOAD, DT_FLOAT32, 0, 0, 0, 0), I(VOP_ISINF, DT_BOOL, 1, 0, 0, 0),
                          I(VOP_STORE, DT_BOOL, 0, 0, 1, 0)};
      ins[1].imm.i = mask;
      om_vprog h = {.ninputs = 1, .noutputs = 1, .nregs = 2, .ninstrs = 3};
      int dts[2] = {DT_FLOAT32, DT_BOOL};
      uint8_t got[4];
      const void *in[1] = {a};
      void *out[1] = {got};
      CHECK_EQ_INT(run_vec(&h, ins, dts, NULL, 4, in, out), OMRT_OK);
      CHECK(got[0] == (mask & 1) && got[1] == (mask >> 1) && got[2] == 0 && got[3] == 0);
    }
  }
  { /* f16: every result rounded to f16 (2048 + 1 = 2048, ties to even); NaN kept */
    uint16_t a[] = {float_to_half(2048), float_to_half(2050), float_to_half(0.1f), 0x7e00,
                    float_to_half(65504)};
    uint16_t b[] = {float_to_half(1), float_to_half(1), float_to_half(0.2f), float_to_half(1),
                    float_to_half(65504)};
    uint16_t w[] = {float_to_half(2048), float_to_half(2052),
                    float_to_half(half_to_float(a[2]) + half_to_float(b[2])), 0x7e00, 0x7c00};
    check_binary(VOP_ADD, DT_FLOAT16, DT_FLOAT16, 2, a, b, w, 5, "add f16");
  }
  { /* Integer wrap-around, POW, bit ops, MAX/MIN on unsigned */
    int8_t a[] = {127, -128, 100}, b[] = {1, -1, 100}, w[] = {-128, 127, -56};
    check_binary(VOP_ADD, DT_INT8, DT_INT8, 2, a, b, w, 3, "add i8 wraps");
    int8_t nw[] = {-127, -128, -100};
    check_binary(VOP_NEG, DT_INT8, DT_INT8, 1, a, NULL, nw, 3, "neg i8 wraps");
    int32_t pa[] = {2, -2, 3, 2, -1, 1, 0}, pb[] = {10, 3, 21, -1, -3, -5, -1};
    int32_t pw[] = {1024, -8, 1870418611 /* 3^21 mod 2^32 */, 0, -1, 1, 0};
    check_binary(VOP_POW, DT_INT32, DT_INT32, 2, pa, pb, pw, 7, "pow i32");
    uint8_t ua[] = {200, 3}, ub[] = {100, 250}, umax[] = {200, 250}, uand[] = {64, 2};
    check_binary(VOP_MAX, DT_UINT8, DT_UINT8, 2, ua, ub, umax, 2, "max u8 unsigned");
    check_binary(VOP_BITAND, DT_UINT8, DT_UINT8, 2, ua, ub, uand, 2, "bitand u8");
    int64_t xa[] = {-1, 5}, xw[] = {0, -6};
    check_binary(VOP_BITNOT, DT_INT64, DT_INT64, 1, xa, NULL, xw, 2, "bitnot i64");
    int32_t sa[] = {-5, 0, 7, INT32_MIN}, sw[] = {-1, 0, 1, -1}, aw[] = {5, 0, 7, INT32_MIN};
    check_binary(VOP_SIGN, DT_INT32, DT_INT32, 1, sa, NULL, sw, 4, "sign i32");
    check_binary(VOP_ABS, DT_INT32, DT_INT32, 1, sa, NULL, aw, 4, "abs i32");
  }
  { /* Bool logic; bool inputs read as byte != 0 */
    uint8_t a[] = {0, 0, 1, 1, 2}, b[] = {0, 1, 0, 1, 1};
    uint8_t wand[] = {0, 0, 0, 1, 1}, wor[] = {0, 1, 1, 1, 1}, wxor[] = {0, 1, 1, 0, 0},
            wnot[] = {1, 1, 0, 0, 0};
    check_binary(VOP_AND, DT_BOOL, DT_BOOL, 2, a, b, wand, 5, "and");
    check_binary(VOP_OR, DT_BOOL, DT_BOOL, 2, a, b, wor, 5, "or");
    check_binary(VOP_XOR, DT_BOOL, DT_BOOL, 2, a, b, wxor, 5, "xor");
    check_binary(VOP_NOT, DT_BOOL, DT_BOOL, 1, a, NULL, wnot, 5, "not");
  }
  { /* Float math: libm in f32 but EXP and SIGMOID, the vector unit's own
     * (common/vmath.h); sigmoid and softplus without overflow */
    float a[] = {-100, -1, 0, 1, 100, 88.8f};
    float sig[6], sp[6], ex[6], th[6];
    for (int i = 0; i < 6; i++) {
      sig[i] = om_vsigmoid(a[i]);
      sp[i] = a[i] > 0 ? a[i] + log1pf(om_vexp(-a[i])) : log1pf(om_vexp(a[i]));
      ex[i] = om_vexp(a[i]);
      th[i] = tanhf(a[i]);
    }
    check_binary(VOP_SIGMOID, DT_FLOAT32, DT_FLOAT32, 1, a, NULL, sig, 6, "sigmoid");
    check_binary(VOP_SOFTPLUS, DT_FLOAT32, DT_FLOAT32, 1, a, NULL, sp, 6, "softplus");
    CHECK(sp[4] == 100.0f && sp[0] > 0 && isfinite(sp[5]));
    check_binary(VOP_EXP, DT_FLOAT32, DT_FLOAT32, 1, a, NULL, ex, 6, "exp");
    check_binary(VOP_TANH, DT_FLOAT32, DT_FLOAT32, 1, a, NULL, th, 6, "tanh");
  }
  { /* SELECT, CLAMP, FMA, CONST, and a scalar (rank-0) input broadcast over a vector */
    om_vinstr ins[] = {
        I(VOP_LOAD, DT_FLOAT32, 0, 0, 0, 0),  I(VOP_LOAD, DT_FLOAT32, 1, 1, 0, 0),
        I(VOP_CONST, DT_FLOAT32, 2, 0, 0, 0), I(VOP_CONST, DT_FLOAT32, 3, 0, 0, 0),
        I(VOP_CLAMP, DT_FLOAT32, 4, 0, 2, 3), I(VOP_GT, DT_BOOL, 5, 0, 1, 0),
        I(VOP_FMA, DT_FLOAT32, 6, 0, 1, 4),   I(VOP_SELECT, DT_FLOAT32, 7, 5, 6, 4),
        I(VOP_STORE, DT_FLOAT32, 0, 0, 7, 0),
    };
    ins[2].imm.f = -1.0;
    ins[3].imm.f = 1.0;
    om_vprog h = {.ninputs = 2, .noutputs = 1, .nregs = 8, .ninstrs = 9};
    int dts[3] = {DT_FLOAT32, DT_FLOAT32, DT_FLOAT32}, ranks[3] = {1, 0, 1};
    float a[] = {-3, -0.5f, 0.5f, 3}, s = 0.25f, got[4];
    const void *in[2] = {a, &s};
    void *out[1] = {got};
    CHECK_EQ_INT(run_vec(&h, ins, dts, ranks, 4, in, out), OMRT_OK);
    float want[4] = {-1, -0.5f, 0.5f * 0.25f + 0.5f, 3 * 0.25f + 1};
    CHECK(memcmp(got, want, sizeof want) == 0);
  }
}

/* ---- 3. rejections ---- */

static void expect_reject(const om_vprog *h, const om_vinstr *ins, const operand *ops, const pkg_opts *o,
                          const char *const *needles, const char *what) {
  size_t size;
  void *data = make_pkg(h, ins, ops, o, &size);
  omrt_model *m = NULL;
  omrt_status s = omrt_model_load_memory(data, size, NULL, &m);
  CHECK_EQ_INT(s, OMRT_ERR_FORMAT);
  CHECK(m == NULL);
  const char *msg = omrt_last_error();
  for (int k = 0; needles[k]; k++)
    if (!strstr(msg, needles[k])) {
      CHECK(!what);
      test_note("  %s: message lacks \"%s\": %s", what, needles[k], msg);
    }
  omrt_model_free(m);
  free(data);
}

static void test_rejections(void) {
  operand ops[3] = {{DT_FLOAT32, LAYOUT_ND, 2, {4, 8}},
                    {DT_FLOAT32, LAYOUT_ND, 1, {8}},
                    {DT_FLOAT32, LAYOUT_ND, 2, {4, 8}}};
  om_vinstr good[4] = {I(VOP_LOAD, DT_FLOAT32, 0, 0, 0, 0), I(VOP_LOAD, DT_FLOAT32, 1, 1, 0, 0),
                       I(VOP_MUL, DT_FLOAT32, 2, 0, 1, 0), I(VOP_STORE, DT_FLOAT32, 0, 0, 2, 0)};
  om_vprog h = {.ninputs = 2, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  { /* the good program loads */
    size_t size;
    void *data = make_pkg(&h, good, ops, &(pkg_opts){.add_decoy = 1}, &size);
    omrt_model *m = NULL;
    CHECK_EQ_INT(omrt_model_load_memory(data, size, NULL, &m), OMRT_OK);
    omrt_model_free(m);
    free(data);
  }
  om_vinstr bad[4];
  const char *head[] = {"task 0 (VPROG) 'vp'", "program at offset 64", NULL};
  pkg_opts decoy = {.add_decoy = 1}; /* ours at offset 64, after the 2-instruction decoy */

  memcpy(bad, good, sizeof bad); /* read before write */
  bad[2].b = 2;
  expect_reject(&h, bad, ops, &decoy,
                (const char *[]){head[0], head[1], "instr 2 (mul.f32)", "before it is written", NULL},
                "non-SSA read");
  memcpy(bad, good, sizeof bad); /* written twice */
  bad[1].dst = 0;
  expect_reject(&h, bad, ops, &decoy, (const char *[]){head[0], head[1], "instr 1", "written twice", NULL},
                "non-SSA write");
  memcpy(bad, good, sizeof bad); /* type error */
  bad[2].dtype = DT_INT32;
  bad[3].dtype = DT_INT32;
  expect_reject(&h, bad, ops, &decoy,
                (const char *[]){head[0], head[1], "instr 2 (mul.i32)", "operand a r0 is f32", NULL},
                "type error");
  memcpy(bad, good, sizeof bad); /* LOAD dtype differs from the tensor's */
  bad[0].dtype = DT_FLOAT16;
  expect_reject(&h, bad, ops, &decoy,
                (const char *[]){head[0], head[1], "instr 0 (load.f16)", "is f32", NULL}, "load dtype");
  memcpy(bad, good, sizeof bad); /* isnan result not bool */
  bad[2] = (om_vinstr)I(VOP_SQRT, DT_FLOAT32, 2, 0, 0, 0);
  bad[2].op = VOP_ISNAN;
  expect_reject(&h, bad, ops, &decoy, (const char *[]){head[0], head[1], "instr 2 (isnan.f32)", NULL},
                "isnan type");
  memcpy(bad, good, sizeof bad); /* bitand on floats */
  bad[2].op = VOP_BITAND;
  expect_reject(&h, bad, ops, &decoy, (const char *[]){head[1], "instr 2 (bitand.f32)", "integer", NULL},
                "bitand f32");
  memcpy(bad, good, sizeof bad); /* unknown opcode */
  bad[2].op = 200;
  expect_reject(&h, bad, ops, &decoy, (const char *[]){head[1], "instr 2", "unknown opcode 200", NULL},
                "opcode");
  memcpy(bad, good, sizeof bad); /* output never stored */
  bad[3] = (om_vinstr)I(VOP_NEG, DT_FLOAT32, 2, 2, 0, 0);
  bad[2].op = VOP_NEG;
  bad[3].dst = 2;
  expect_reject(&h, bad, ops, &decoy, (const char *[]){head[1], "instr 3", NULL}, "neg twice");
  {
    om_vinstr nostore[3] = {good[0], good[1], good[2]};
    om_vprog h3 = h;
    h3.ninstrs = 3;
    expect_reject(&h3, nostore, ops, &decoy, (const char *[]){head[1], "output 0 is never stored", NULL},
                  "no store");
  }
  /* wrong tensor count */
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .ntensors_delta = 1},
                (const char *[]){head[0], head[1], "2 inputs + 1 outputs, but the task has 4 tensors", NULL},
                "tensor count");
  { /* bad broadcast: [5] against [4, 8] */
    operand bb[3] = {ops[0], {DT_FLOAT32, LAYOUT_ND, 1, {5}}, ops[2]};
    expect_reject(&h, good, bb, &decoy, (const char *[]){head[0], "input 1 'in1'", "do not broadcast", NULL},
                  "broadcast");
    operand bigger[3] = {ops[0], {DT_FLOAT32, LAYOUT_ND, 3, {2, 4, 8}}, ops[2]};
    expect_reject(&h, good, bigger, &decoy, (const char *[]){head[0], "do not broadcast", NULL}, "rank");
  }
  /* offsets outside the partition, unaligned */
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .offset_delta = 4096},
                (const char *[]){head[0], "program at offset 4160", "outside the VPROGS partition", NULL},
                "offset");
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .offset_delta = 4},
                (const char *[]){head[0], "program at offset 68", "multiple of 8", NULL}, "unaligned");
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .offset_delta = INT32_MIN + 8},
                (const char *[]){head[0], "outside the VPROGS partition", NULL}, "negative offset");
  /* block_dim beyond the tiles (32 elements = 1 tile) */
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .block_dim = 2},
                (const char *[]){head[0], "block_dim = 2", "256-element tiles", NULL}, "block_dim");
  /* UB too small for the live registers */
  expect_reject(&h, good, ops, &(pkg_opts){.add_decoy = 1, .ub_bytes = 256},
                (const char *[]){head[0], head[1], "of UB; ub_bytes is 256", NULL}, "ub");
  { /* truncated program: ninstrs patched beyond the partition's end */
    size_t size;
    uint8_t *data = make_pkg(&h, good, ops, &decoy, &size);
    om_partition *vp = om_find_part(data, OM_PART_VPROGS);
    CHECK(vp != NULL);
    om_vprog *ph = (om_vprog *)(data + vp->offset + 64);
    ph->ninstrs = 5;
    om_recrc(data, size);
    omrt_model *m = NULL;
    CHECK_EQ_INT(omrt_model_load_memory(data, size, NULL, &m), OMRT_ERR_FORMAT);
    CHECK(strstr(omrt_last_error(), "program at offset 64: truncated") != NULL);
    /* and a VPROG task in a package without the partition */
    vp->type = 99;
    om_recrc(data, size);
    CHECK_EQ_INT(omrt_model_load_memory(data, size, NULL, &m), OMRT_ERR_FORMAT);
    free(data);
    om_writer *w = tiny_writer();
    om_task t = {.kind = OM_TASK_VPROG,
                 .name = om_writer_string(w, "vp"),
                 .block_dim = 1,
                 .ntensors = 2,
                 .tensors = {0, 1}};
    om_writer_add_task(w, &t);
    diag d = {0};
    CHECK_EQ_INT(om_writer_to_memory(w, (void **)&data, &size, &d), ST_OK);
    CHECK_EQ_INT(omrt_model_load_memory(data, size, NULL, &m), OMRT_ERR_FORMAT);
    CHECK(strstr(omrt_last_error(), "task 1 (VPROG) 'vp': program at offset 0: the package has no VPROGS") !=
          NULL);
    free(data);
    om_writer_free(w);
  }
  { /* NC1HWC0: C must match; mixing layouts is refused */
    operand a5 = {DT_FLOAT16, LAYOUT_NC1HWC0, 4, {1, 20, 2, 2}},
            b5 = {DT_FLOAT16, LAYOUT_NC1HWC0, 4, {1, 1, 1, 1}};
    om_vinstr p5[4] = {I(VOP_LOAD, DT_FLOAT16, 0, 0, 0, 0), I(VOP_LOAD, DT_FLOAT16, 1, 1, 0, 0),
                       I(VOP_MUL, DT_FLOAT16, 2, 0, 1, 0), I(VOP_STORE, DT_FLOAT16, 0, 0, 2, 0)};
    operand o5[3] = {a5, b5, a5};
    expect_reject(&h, p5, o5, NULL,
                  (const char *[]){"input 1", "NC1HWC0 broadcasts over N, H and W only", NULL}, "nc1hwc0 C");
    operand nd = {DT_FLOAT16, LAYOUT_ND, 1, {16}};
    operand mix[3] = {a5, nd, a5};
    expect_reject(&h, p5, mix, NULL, (const char *[]){"input 1", "one layout per task", NULL},
                  "mixed layouts");
  }
}

/* Damaged programs (random bytes of the VPROGS partition and the task's
 * params, checksums fixed) are rejected or, when still valid, run safely. */
static void test_damaged_programs(void) {
  operand ops[3] = {{DT_FLOAT16, LAYOUT_ND, 3, {2, 3, 40}},
                    {DT_INT32, LAYOUT_ND, 2, {3, 1}},
                    {DT_FLOAT32, LAYOUT_ND, 3, {2, 3, 40}}};
  om_vinstr ins[] = {I(VOP_LOAD, DT_FLOAT16, 0, 0, 0, 0), I(VOP_LOAD, DT_INT32, 1, 1, 0, 0),
                     I(VOP_CAST, DT_FLOAT16, 2, 1, 0, 0), I(VOP_MUL, DT_FLOAT16, 3, 0, 2, 0),
                     I(VOP_GT, DT_BOOL, 4, 3, 0, 0),      I(VOP_SELECT, DT_FLOAT16, 5, 4, 3, 0),
                     I(VOP_CAST, DT_FLOAT32, 6, 5, 0, 0), I(VOP_STORE, DT_FLOAT32, 0, 0, 6, 0)};
  om_vprog h = {.ninputs = 2, .noutputs = 1, .nregs = 7, .ninstrs = 8};
  size_t size;
  uint8_t *good = make_pkg(&h, ins, ops, &(pkg_opts){.block_dim = 1}, &size),
          *buf = aligned_alloc(64, (size + 63) / 64 * 64);
  uint16_t x[240] = {0};
  int32_t c[3] = {1, -2, 3};
  float y[240];
  const void *in[2] = {x, c};
  void *out[1] = {y};
  int ok = 0, rejected = 0;
  CHECK_EQ_INT(run_pkg(good, size, 2, in, out), OMRT_OK);
  rng_state = 0x1234567;
  for (int it = 0; it < 3000; it++) {
    memcpy(buf, good, size);
    om_partition *vp = om_find_part(buf, OM_PART_VPROGS), *tp = om_find_part(buf, OM_PART_TASKS);
    for (int k = 1 + rndn(3); k-- > 0;) {
      if (rndn(8) == 0)
        buf[tp->offset + offsetof(om_task, params[OM_VPROG_P_PROGRAM]) + (uint64_t)rndn(4)] ^=
            (uint8_t)(1 << rndn(8));
      else
        buf[vp->offset + (uint64_t)rndn((int)vp->size)] = (uint8_t)rnd();
    }
    om_recrc(buf, size);
    omrt_status s = run_pkg(buf, size, 2, in, out);
    if (s != OMRT_OK && s != OMRT_ERR_FORMAT)
      test_note("  damaged %d: status %d: %s", it, s, omrt_last_error());
    ok += s == OMRT_OK;
    rejected += s == OMRT_ERR_FORMAT;
  }
  CHECK_EQ_INT(ok + rejected, 3000);
  CHECK(rejected > 1000);
  free(good);
  free(buf);
}

/* ---- 4. NC1HWC0 with broadcasting over H, W: the SE block ---- */

static void test_nc1hwc0_se_block(void) {
  /* y = x * sigmoid(s) + 1 over NC1HWC0 f16, x [2, 20, 3, 5], s [2, 20, 1, 1]; padding lanes of y must be 0.
   */
  operand ops[3] = {{DT_FLOAT16, LAYOUT_NC1HWC0, 4, {2, 20, 3, 5}},
                    {DT_FLOAT16, LAYOUT_NC1HWC0, 4, {2, 20, 1, 1}},
                    {DT_FLOAT16, LAYOUT_NC1HWC0, 4, {2, 20, 3, 5}}};
  om_vinstr ins[] = {I(VOP_LOAD, DT_FLOAT16, 0, 0, 0, 0),    I(VOP_LOAD, DT_FLOAT16, 1, 1, 0, 0),
                     I(VOP_SIGMOID, DT_FLOAT16, 2, 1, 0, 0), I(VOP_MUL, DT_FLOAT16, 3, 0, 2, 0),
                     I(VOP_CONST, DT_FLOAT16, 4, 0, 0, 0),   I(VOP_ADD, DT_FLOAT16, 5, 3, 4, 0),
                     I(VOP_STORE, DT_FLOAT16, 0, 0, 5, 0)};
  ins[4].imm.f = 1.0;
  om_vprog h = {.ninputs = 2, .noutputs = 1, .nregs = 6, .ninstrs = 7};
  uint64_t nx = phys_elems(&ops[0]), ns = phys_elems(&ops[1]);
  uint16_t *x = calloc(nx, 2), *s = calloc(ns, 2), *y = malloc(nx * 2);
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 20; c++) {
      s[(n * 2 + c / 16) * 16 + c % 16] = float_to_half((float)(c - 10) / 4);
      for (int hw = 0; hw < 15; hw++)
        x[((n * 2 + c / 16) * 15 + hw) * 16 + c % 16] = float_to_half((float)(hw - c) / 8);
    }
  memset(y, 0xA5, nx * 2);
  size_t size;
  void *data = make_pkg(&h, ins, ops, &(pkg_opts){.block_dim = 3}, &size);
  const void *in[2] = {x, s};
  void *out[1] = {y};
  CHECK_EQ_INT(run_pkg(data, size, 3, in, out), OMRT_OK);
  int bad = 0;
  for (int n = 0; n < 2; n++)
    for (int c1 = 0; c1 < 2; c1++)
      for (int hw = 0; hw < 15; hw++)
        for (int c0 = 0; c0 < 16; c0++) {
          int c = c1 * 16 + c0;
          uint64_t at = (uint64_t)((n * 2 + c1) * 15 + hw) * 16 + (uint64_t)c0;
          uint16_t want = 0;
          if (c < 20) {
            float sg = half_to_float(float_to_half(om_vsigmoid(half_to_float(s[(n * 2 + c1) * 16 + c0]))));
            float prod = half_to_float(float_to_half(half_to_float(x[at]) * sg));
            want = float_to_half(prod + 1.0f);
          }
          bad += y[at] != want;
        }
  CHECK_EQ_INT(bad, 0);
  free(data);
  free(x), free(s), free(y);
}

/* ---- 5. writer and JSON ---- */

static void test_writer_and_json(void) {
  om_writer *w = tiny_writer();
  om_vinstr ins[4] = {I(VOP_LOAD, DT_FLOAT32, 0, 0, 0, 0), I(VOP_LOAD, DT_FLOAT32, 1, 0, 0, 0),
                      I(VOP_MUL, DT_FLOAT32, 2, 0, 1, 0), I(VOP_STORE, DT_FLOAT32, 0, 0, 2, 0)};
  om_vprog h = {.ninputs = 1, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  uint32_t o1, o2, o3;
  CHECK_EQ_INT(om_writer_add_vprog(w, &h, ins, &o1), 0);
  CHECK_EQ_INT(om_writer_add_vprog(w, &h, ins, &o2), 0);
  CHECK_EQ_INT(o1, 0);
  CHECK_EQ_INT(o2, 0); /* identical: stored once */
  ins[2].op = VOP_ADD;
  CHECK_EQ_INT(om_writer_add_vprog(w, &h, ins, &o3), 0);
  CHECK_EQ_INT(o3, 16 + 4 * 24);
  om_task t = {.kind = OM_TASK_VPROG,
               .name = om_writer_string(w, "square"),
               .block_dim = 1,
               .ntensors = 2,
               .tensors = {0, 1},
               .params = {(int32_t)o1}};
  om_writer_add_task(w, &t);
  void *data;
  size_t size;
  diag d = {0};
  CHECK_EQ_INT(om_writer_to_memory(w, &data, &size, &d), ST_OK);
  CHECK_EQ_INT(((om_header *)data)->npartitions, 6);
  om_partition *vp = om_find_part(data, OM_PART_VPROGS);
  CHECK(vp && vp->size == 2 * (16 + 4 * 24));
  char *json = NULL;
  size_t len = 0;
  CHECK_EQ_INT(om_json_memory(data, size, "vp.om", &json, &len, &d), ST_OK);
  CHECK(json && strstr(json, "\"type\": \"VPROGS\""));
  CHECK(json && strstr(json, "\"r2 = mul.f32 r0, r1\""));
  CHECK(json && strstr(json, "\"store.f32 out0, r2\""));
  CHECK(json && strstr(json, "\"r0 = load.f32 in0\""));
  CHECK(json && strstr(json, "\"kind\": \"VPROG\""));
  CHECK(json && strstr(json, "\"in0\": 0, \"out0\": 1"));
  CHECK(json && strstr(json, "\"program\": 0"));
  CHECK(json && !strstr(json, "add.f32")); /* only the programs tasks use */
  {                                        /* the task runs: y = x * x */
    omrt_model *m;
    omrt_context *ctx;
    CHECK_EQ_INT(omrt_model_load_memory(data, size, NULL, &m), OMRT_OK);
    CHECK_EQ_INT(omrt_context_new(m, &ctx), OMRT_OK);
    float x[6] = {1, 2, 3, -4, 0.5f, 0}, y[6] = {0}, wy[6] = {1, 4, 9, 16, 0.25f, 0};
    const void *in[1] = {x};
    void *out[2] = {y, y};
    CHECK_EQ_INT(omrt_execute(ctx, in, out), OMRT_OK); /* TRANSDATA copies x, then the VPROG squares it */
    CHECK(memcmp(y, wy, sizeof y) == 0);
    omrt_context_free(ctx);
    omrt_model_free(m);
  }
  free(json);
  free(data);
  om_writer_free(w);
  /* no programs: no VPROGS partition */
  w = tiny_writer();
  CHECK_EQ_INT(om_writer_to_memory(w, &data, &size, &d), ST_OK);
  CHECK_EQ_INT(((om_header *)data)->npartitions, 5);
  CHECK(om_find_part(data, OM_PART_VPROGS) == NULL);
  free(data);
  om_writer_free(w);
}

int main(void) {
  test_corner_cases();
  test_rejections();
  test_damaged_programs();
  test_nc1hwc0_se_block();
  test_writer_and_json();
  return test_summary("vprog");
}
