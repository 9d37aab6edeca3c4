/* types.h - element types and data layouts shared by the compiler, the om
 * package and the runtime.
 *
 * dtype values are ONNX's TensorProto.DataType numbers, so the frontend needs
 * no mapping table and the om stores what ONNX would.
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
} dtype;

typedef enum layout {
  LAYOUT_ND = 0,
  LAYOUT_NC1HWC0 = 1,
  LAYOUT_FRACTAL_Z = 2,
  /* 3 was WINO_F43 (weights transformed for the retired CONV2D algorithm 1) */
  LAYOUT_FRACTAL_Z_G = 6, /* grouped conv weights, rank 5 [G, Og, Ig, KH, KW]: common/conv_group.h */
  LAYOUT_FRACTAL_NZ = 7,  /* MATMUL's B: [batch..., K, N] as n-block panels (above) */
} layout;

enum { WINO_F43_POINTS = 36 }; /* 6x6 transformed positions of F(4x4,3x3) */

enum { C0 = 16 };      /* channel block of NC1HWC0 and the cube's fractal edge */
enum { MAX_RANK = 8 }; /* the largest rank anything in the project accepts */

/* Bytes per element; 0 for DT_UNDEFINED / DT_STRING / unknown values. */
static inline size_t dtype_size(int dt) {
  switch (dt) {
  case DT_FLOAT32:
  case DT_INT32:
  case DT_UINT32: return 4;
  case DT_UINT8:
  case DT_INT8:
  case DT_BOOL: return 1;
  case DT_UINT16:
  case DT_INT16:
  case DT_FLOAT16: return 2;
  case DT_INT64:
  case DT_DOUBLE:
  case DT_UINT64: return 8;
  default: return 0;
  }
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
 * "i64", "i32", "i8", "u8", "bool", "f64", ... ; NULL for unknown. */
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
 * FRACTAL_NZ). NC1HWC0 and FRACTAL_Z need rank 4, FRACTAL_Z_G rank 5,
 * FRACTAL_NZ rank >= 2.
 * Returns -1 on negative dims, a bad rank/layout pair,
 * or overflow. */
int layout_elements(int layout, int rank, const int64_t *dims, uint64_t *count_out);

#endif
