/* types.c - names and physical sizes of dtypes and layouts (see types.h). */
#include "types.h"

#include "conv_group.h"

#include <string.h>

static const struct {
  int dt;
  const char *name;
} dtype_names[] = {
    {DT_FLOAT32, "f32"},
    {DT_UINT8, "u8"},
    {DT_INT8, "i8"},
    {DT_UINT16, "u16"},
    {DT_INT16, "i16"},
    {DT_INT32, "i32"},
    {DT_INT64, "i64"},
    {DT_STRING, "string"},
    {DT_BOOL, "bool"},
    {DT_FLOAT16, "f16"},
    {DT_DOUBLE, "f64"},
    {DT_UINT32, "u32"},
    {DT_UINT64, "u64"},
    {DT_BFLOAT16, "bf16"},
    {DT_FLOAT8E4M3FN, "f8e4m3fn"},
    {DT_FLOAT8E4M3FNUZ, "f8e4m3fnuz"},
    {DT_FLOAT8E5M2, "f8e5m2"},
    {DT_FLOAT8E5M2FNUZ, "f8e5m2fnuz"},
    {DT_UINT4, "u4"},
    {DT_INT4, "i4"},
    {DT_FLOAT4E2M1, "f4e2m1"},
    {DT_FLOAT8E8M0, "f8e8m0"},
    {DT_UINT2, "u2"},
    {DT_INT2, "i2"},
};

const char *dtype_name(int dt) {
  for (size_t i = 0; i < sizeof dtype_names / sizeof *dtype_names; i++)
    if (dtype_names[i].dt == dt) return dtype_names[i].name;
  return NULL;
}

int dtype_from_name(const char *name) {
  for (size_t i = 0; i < sizeof dtype_names / sizeof *dtype_names; i++)
    if (strcmp(dtype_names[i].name, name) == 0) return dtype_names[i].dt;
  return DT_UNDEFINED;
}

static const char *const layout_names[] = {"ND",
                                           "NC1HWC0",
                                           "FRACTAL_Z",
                                           [LAYOUT_FRACTAL_Z_G] = "FRACTAL_Z_G",
                                           [LAYOUT_FRACTAL_NZ] = "FRACTAL_NZ",
                                           [LAYOUT_NDC1HWC0] = "NDC1HWC0",
                                           [LAYOUT_FRACTAL_Z_3D] = "FRACTAL_Z_3D"};

const char *layout_name(int l) {
  return l >= 0 && l < (int)(sizeof layout_names / sizeof *layout_names) ? layout_names[l] : NULL;
}

int layout_from_name(const char *name) {
  for (int i = 0; i < (int)(sizeof layout_names / sizeof *layout_names); i++)
    if (layout_names[i] && strcmp(layout_names[i], name) == 0) return i;
  return -1;
}

int layout_ranks(int layout, int *max_out) {
  switch (layout) {
  case LAYOUT_ND: *max_out = MAX_RANK; return 0;
  case LAYOUT_NC1HWC0:
  case LAYOUT_FRACTAL_Z: *max_out = 4; return 4;
  case LAYOUT_FRACTAL_Z_G:
  case LAYOUT_NDC1HWC0:
  case LAYOUT_FRACTAL_Z_3D: *max_out = 5; return 5;
  case LAYOUT_FRACTAL_NZ: *max_out = MAX_RANK; return 2;
  default: *max_out = -1; return -1;
  }
}

int layout_elements(int layout, int rank, const int64_t *dims, uint64_t *count_out) {
  if (rank < 0 || rank > MAX_RANK) return -1;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return -1;
  uint64_t n = 1;
  switch (layout) {
  case LAYOUT_ND:
    for (int i = 0; i < rank; i++)
      if (mul_u64(n, (uint64_t)dims[i], &n)) return -1;
    break;
  case LAYOUT_NC1HWC0:     /* [N][C1][H][W][16] */
  case LAYOUT_FRACTAL_Z: { /* [C1in*KH*KW][N1][16][16] */
    if (rank != 4) return -1;
    uint64_t c1 = ((uint64_t)dims[1] + C0 - 1) / C0;
    uint64_t d0 = layout == LAYOUT_NC1HWC0 ? (uint64_t)dims[0] : ((uint64_t)dims[0] + C0 - 1) / C0;
    if (mul_u64(d0, c1, &n) || mul_u64(n, (uint64_t)dims[2], &n) || mul_u64(n, (uint64_t)dims[3], &n) ||
        mul_u64(n, C0, &n))
      return -1;
    if (layout == LAYOUT_FRACTAL_Z && mul_u64(n, C0, &n)) return -1;
    break;
  }
  case LAYOUT_NDC1HWC0:       /* [N][D][C1][H][W][16] */
  case LAYOUT_FRACTAL_Z_3D: { /* [KD*C1in*KH*KW][N1][16][16] */
    if (rank != 5) return -1;
    uint64_t c1 = ((uint64_t)dims[1] + C0 - 1) / C0;
    uint64_t d0 = layout == LAYOUT_NDC1HWC0 ? (uint64_t)dims[0] : ((uint64_t)dims[0] + C0 - 1) / C0;
    if (mul_u64(d0, c1, &n) || mul_u64(n, (uint64_t)dims[2], &n) || mul_u64(n, (uint64_t)dims[3], &n) ||
        mul_u64(n, (uint64_t)dims[4], &n) || mul_u64(n, C0, &n))
      return -1;
    if (layout == LAYOUT_FRACTAL_Z_3D && mul_u64(n, C0, &n)) return -1;
    break;
  }
  case LAYOUT_FRACTAL_NZ: { /* [batch...][N1][K1*16][16] */
    if (rank < 2) return -1;
    for (int i = 0; i < rank - 2; i++)
      if (mul_u64(n, (uint64_t)dims[i], &n)) return -1;
    uint64_t k16 = ((uint64_t)dims[rank - 2] + C0 - 1) / C0 * C0,
             n16 = ((uint64_t)dims[rank - 1] + C0 - 1) / C0 * C0;
    if (mul_u64(n, k16, &n) || mul_u64(n, n16, &n)) return -1;
    break;
  }
  case LAYOUT_FRACTAL_Z_G: { /* common/conv_group.h */
    convg_geom g;
    if (rank != 5 || convg_init(dims, &g) || convg_fractals(&g, &n) || mul_u64(n, C0 * C0, &n)) return -1;
    break;
  }
  default: return -1;
  }
  *count_out = n;
  return 0;
}
