/* types.h - element types and data layouts shared by the compiler, the om
 * package and the runtime.
 *
 * dtype values are ONNX's TensorProto.DataType numbers, so the frontend needs
 * no mapping table and the om stores what ONNX would.
 *
 * Storage dtypes: bf16 (16), the float8s e4m3fn (17), e4m3fnuz (18), e5m2
 * (19), e5m2fnuz (20), e8m0 (24), float4 e2m1 (23) and the sub-byte integers
 * uint4 (21), int4 (22), uint2 (25), int2 (26). Tensors of these types are
 * stored as ONNX stores them, everywhere a byte layout is fixed (the om's
 * weights and I/O buffers, an omrun input file, TensorProto raw_data):
 * bf16 two bytes, the float8s one byte, and the 4- and 2-bit types packed
 * two and four elements to a byte, element 0 in the lowest bits, the last
 * byte's unused high bits zero (dtype_bytes gives the size). Only Convert
 * (ONNX Cast) computes on them (common/dtype_cvt.h has the conversions):
 * the frontend widens each such value to its working dtype (dtype_working:
 * f32 for the floats, i8 / u8 for the integers) where anything else reads
 * it, and narrows a result back where the model's output is declared so.
 * Storage dtypes are ND only.
 *
 * Layouts (byte-exact; all of them C-order over the physical shape):
 *   ND          the logical dims in C order.
 *   NC1HWC0     logical [N, C, H, W]; physical [N][C1][H][W][C0], C0 = 16,
 *               C1 = ceil(C / 16); channels c >= C are zero.
 *   FRACTAL_Z   convolution weights, logical [Cout, Cin, KH, KW]; physical
 *               [C1in * KH * KW][N1][16][16] where N1 = ceil(Cout / 16):
 *               w[co][ci][kh][kw] lives at
 *               [((ci / 16) * KH + kh) * KW + kw][co / 16][ci % 16][co % 16];
 *               padding (co >= Cout or ci >= Cin) is zero. One [16][16] fractal
 *               is the cube's B operand as the kernels read it in place: k-major
 *               rows of 16 output channels (format 2.0; 1.x stored [co][ci]).
 *   NDC1HWC0    3-D activations, logical [N, C, D, H, W]; physical
 *               [N][D][C1][H][W][C0], C0 = 16, C1 = ceil(C / 16); channels
 *               c >= C are zero. Each (n, d) slice is an NC1HWC0 image of
 *               [1, C, H, W], so the bytes are those of NC1HWC0 [N*D, C, H, W].
 *   FRACTAL_Z_3D  3-D convolution weights, logical [Cout, Cin, KD, KH, KW];
 *               physical [KD * C1in * KH * KW][N1][16][16]:
 *               w[co][ci][kd][kh][kw] lives at
 *               [(((kd * C1in + ci / 16) * KH + kh) * KW + kw)][co / 16][ci % 16][co % 16],
 *               padding zero: the FRACTAL_Z weights of each kernel depth, kd
 *               outermost (KD = 1 is FRACTAL_Z [Cout, Cin, KH, KW] exactly).
 *   FRACTAL_NZ  a matrix operand B of the cube, logical [batch..., K, N]
 *               (rank >= 2); physical [batch...][N1][K1 * 16][16] where
 *               N1 = ceil(N / 16), K1 = ceil(K / 16): per batch, the n
 *               blocks of 16 columns, each a K1*16 x 16 panel of k-major
 *               rows; b[..][k][n] lives at [..][n / 16][k][n % 16];
 *               padding (k >= K or n >= N) is zero. As on the chip
 *               ([N1][K1][16][16] fractals), and like FRACTAL_Z's fractals
 *               the micro-kernel reads each row of 16 columns in place.
 */
#ifndef COMMON_TYPES_H
#define COMMON_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum dtype {
  DT_UNDEFINED = 0,
  DT_FLOAT32 = 1,
  DT_UINT8 = 2,
  DT_INT8 = 3,
  DT_UINT16 = 4,
  DT_INT16 = 5,
  DT_INT32 = 6,
  DT_INT64 = 7,
  DT_STRING = 8,
  DT_BOOL = 9,
  DT_FLOAT16 = 10,
  DT_DOUBLE = 11,
  DT_UINT32 = 12,
  DT_UINT64 = 13,
  DT_BFLOAT16 = 16,
  DT_FLOAT8E4M3FN = 17,
  DT_FLOAT8E4M3FNUZ = 18,
  DT_FLOAT8E5M2 = 19,
  DT_FLOAT8E5M2FNUZ = 20,
  DT_UINT4 = 21,
  DT_INT4 = 22,
  DT_FLOAT4E2M1 = 23,
  DT_FLOAT8E8M0 = 24,
  DT_UINT2 = 25,
  DT_INT2 = 26,
} dtype;

typedef enum layout {
  LAYOUT_ND = 0,
  LAYOUT_NC1HWC0 = 1,
  LAYOUT_FRACTAL_Z = 2,
  /* 3 was WINO_F43 (weights transformed for the retired CONV2D algorithm 1) */
  LAYOUT_FRACTAL_Z_G = 6,  /* grouped conv weights, rank 5 [G, Og, Ig, KH, KW]: common/conv_group.h */
  LAYOUT_FRACTAL_NZ = 7,   /* MATMUL's B: [batch..., K, N] as n-block panels (above) */
  LAYOUT_NDC1HWC0 = 8,     /* 3-D activations, rank 5 [N, C, D, H, W] */
  LAYOUT_FRACTAL_Z_3D = 9, /* 3-D conv weights, rank 5 [Cout, Cin, KD, KH, KW] */
} layout;

enum { WINO_F43_POINTS = 36 }; /* 6x6 transformed positions of F(4x4,3x3) */

/* Winograd F(4x4,3x3) tiles along an output dim of `out` pixels for a
 * dilation `dil` (CONV2D algorithm 2, om_tasks.h): the outputs o with the
 * same o % dil (a phase) are an undilated convolution of every dil-th
 * input, so each phase is covered by its own 4x4 tiles, ceil(ceil(out /
 * dil) / 4) of them (the largest phase's count; a shorter phase's last
 * pixels are computed and dropped), phase after phase: dil times that.
 * Dilation 1 is the plain ceil(out / 4). */
static inline int64_t wino_f43_tiles(int64_t out, int64_t dil) {
  return dil * (((out + dil - 1) / dil + 3) / 4);
}

enum { C0 = 16 };      /* channel block of NC1HWC0 and the cube's fractal edge */
enum { MAX_RANK = 8 }; /* the largest rank anything in the project accepts */

/* Bits per element: 64 .. 2; 0 for DT_UNDEFINED / DT_STRING / unknown values. */
static inline int dtype_bits(int dt) {
  switch (dt) {
  case DT_UINT4:
  case DT_INT4:
  case DT_FLOAT4E2M1: return 4;
  case DT_UINT2:
  case DT_INT2: return 2;
  case DT_BFLOAT16: return 16;
  case DT_FLOAT8E4M3FN:
  case DT_FLOAT8E4M3FNUZ:
  case DT_FLOAT8E5M2:
  case DT_FLOAT8E5M2FNUZ:
  case DT_FLOAT8E8M0: return 8;
  case DT_UINT8:
  case DT_INT8:
  case DT_BOOL: return 8;
  case DT_UINT16:
  case DT_INT16:
  case DT_FLOAT16: return 16;
  case DT_FLOAT32:
  case DT_INT32:
  case DT_UINT32: return 32;
  case DT_INT64:
  case DT_DOUBLE:
  case DT_UINT64: return 64;
  default: return 0;
  }
}

/* 1 for the storage dtypes (top of the file): only Convert computes on them. */
static inline int dtype_is_storage(int dt) { return dt >= DT_BFLOAT16 && dt <= DT_INT2; }

/* The dtype a storage dtype's values are computed in (f32 for bf16, the
 * float8s and float4; i8 for int4 / int2; u8 for uint4 / uint2); any other
 * dtype is its own. Every value of a storage dtype is exact in it. */
static inline int dtype_working(int dt) {
  switch (dt) {
  case DT_INT4:
  case DT_INT2: return DT_INT8;
  case DT_UINT4:
  case DT_UINT2: return DT_UINT8;
  default: return dtype_is_storage(dt) ? DT_FLOAT32 : dt;
  }
}

/* Bytes of n elements of dt as stored (packed for the sub-byte dtypes):
 * ceil(n * bits / 8). Returns -1 on an unknown dtype or overflow. */
static inline int dtype_bytes(int dt, uint64_t n, uint64_t *bytes_out) {
  uint64_t bits = (uint64_t)dtype_bits(dt), b;
  if (!bits || __builtin_mul_overflow(n, bits, &b) || b > UINT64_MAX - 7) return -1;
  *bytes_out = (b + 7) / 8;
  return 0;
}

/* Bytes per element of the dtypes the IR computes in; 0 for DT_UNDEFINED /
 * DT_STRING / unknown values and for the storage dtypes, so that code sizing
 * with it refuses them (dtype_bytes sizes every dtype). */
static inline size_t dtype_size(int dt) {
  int bits = dtype_bits(dt);
  return dtype_is_storage(dt) ? 0 : (size_t)bits / 8;
}

/* v (an integer dtype's value, sign- or zero-extended to 64 bits) wrapped to
 * dtype dt: two's complement truncation, bool as v != 0; i64 and u64 as is. */
static inline int64_t dtype_wrap_int(int dt, int64_t v) {
  switch (dt) {
  case DT_INT32: return (int32_t)(uint32_t)(uint64_t)v;
  case DT_INT16: return (int16_t)(uint16_t)(uint64_t)v;
  case DT_INT8: return (int8_t)(uint8_t)(uint64_t)v;
  case DT_UINT32: return (int64_t)(uint32_t)(uint64_t)v;
  case DT_UINT16: return (int64_t)(uint16_t)(uint64_t)v;
  case DT_UINT8: return (int64_t)(uint8_t)(uint64_t)v;
  case DT_BOOL: return v != 0;
  default: return v; /* i64, u64 */
  }
}

/* Short names used by the IR text form, JSON dumps and messages: "f32", "f16",
 * "i64", "i32", "i8", "u8", "bool", "f64", ..., "bf16", "f8e4m3fn",
 * "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0", "f4e2m1", "u4", "i4",
 * "u2", "i2"; NULL for unknown. */
const char *dtype_name(int dt);
int dtype_from_name(const char *name);  /* DT_UNDEFINED when unknown */
const char *layout_name(int l);         /* "ND", "NC1HWC0", "FRACTAL_Z", "FRACTAL_Z_G", "FRACTAL_NZ" */
int layout_from_name(const char *name); /* -1 when unknown */

/* Overflow-checked size arithmetic: return 0 on success, -1 on overflow. */
static inline int mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}
static inline int add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* Physical element count of a tensor with logical dims `dims[rank]` stored in
 * `layout` (includes the zero padding of NC1HWC0 / FRACTAL_Z / FRACTAL_Z_G /
 * NDC1HWC0 / FRACTAL_Z_3D / FRACTAL_NZ). NC1HWC0 and FRACTAL_Z need rank 4,
 * FRACTAL_Z_G, NDC1HWC0 and FRACTAL_Z_3D rank 5, FRACTAL_NZ rank >= 2;
 * layout_ranks says which.
 * Returns -1 on negative dims, a bad rank/layout pair,
 * or overflow. */
int layout_elements(int layout, int rank, const int64_t *dims, uint64_t *count_out);
/* The ranks a layout allows: returns the least and stores the greatest in
 * *max_out (ND 0..MAX_RANK, NC1HWC0 / FRACTAL_Z 4, FRACTAL_Z_G / NDC1HWC0 /
 * FRACTAL_Z_3D 5, FRACTAL_NZ 2..MAX_RANK); -1 and -1 for unknown layouts. */
int layout_ranks(int layout, int *max_out);

#endif
