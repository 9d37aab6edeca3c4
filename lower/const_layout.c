/* const_layout.c - an ND constant's data rewritten into NC1HWC0, NDC1HWC0,
 * FRACTAL_Z (_3D), FRACTAL_NZ or ND in another dtype (common/types.h), with
 * zero padding: what the layout pass does to a constant instead of giving
 * it a TransData. Contract in const_layout.h.
 */
#include <string.h>

#include "common/bigmem.h"
#include "common/fp16.h"
#include "const_layout.h"

static float load_elem(const void *data, int dt, uint64_t i) {
  if (dt == DT_FLOAT16) return half_to_float(((const uint16_t *)data)[i]);
  return ((const float *)data)[i];
}

static void store_elem(void *data, int dt, uint64_t i, float x, int clip) {
  if (dt == DT_FLOAT16)
    ((uint16_t *)data)[i] = clip ? half_clipped(float_to_half(x), x) : float_to_half(x);
  else
    ((float *)data)[i] = x;
}

/* Physical index of logical element (a, b, z, c, e) of a tensor with
 * logical dims `dm` in layout `lay` (types.h): rank 4 (z = 0, no depth
 * dim: dm = [A, B, C, E]) or rank 5 (dm = [A, B, Z, C, E]). */
static uint64_t phys_index(int lay, int rank, const int64_t *dm, int64_t a, int64_t b, int64_t z, int64_t c,
                           int64_t e) {
  const int o = rank == 5;
  uint64_t c1 = (uint64_t)(dm[1] + C0 - 1) / C0, dz = o ? (uint64_t)dm[2] : 1, hh = (uint64_t)dm[2 + o],
           ww = (uint64_t)dm[3 + o];
  if (lay == LAYOUT_NC1HWC0 || lay == LAYOUT_NDC1HWC0) /* [N][D][C1][H][W][16] */
    return (((((uint64_t)a * dz + (uint64_t)z) * c1 + (uint64_t)b / C0) * hh + (uint64_t)c) * ww +
            (uint64_t)e) *
               C0 +
           (uint64_t)b % C0;
  /* FRACTAL_Z (_3D): a = co, b = ci, z = kd, c = kh, e = kw */
  uint64_t n1 = (uint64_t)(dm[0] + C0 - 1) / C0;
  uint64_t frac = (((uint64_t)z * c1 + (uint64_t)b / C0) * hh + (uint64_t)c) * ww + (uint64_t)e;
  return ((frac * n1 + (uint64_t)a / C0) * C0 + (uint64_t)b % C0) * C0 + (uint64_t)a % C0;
}

/* out[j + k * step] = in[i + k] for k < n, converting from dtype `in_dt` to
 * `out_dt` (clipped: store_elem); with one dtype the bits move unchanged. */
static void move_elems(void *out, int out_dt, uint64_t j, uint64_t step, const void *in, int in_dt,
                       uint64_t i, uint64_t n, int clip) {
  size_t es = dtype_size(out_dt);
  if (in_dt == out_dt && es == 2) {
    uint16_t *o = (uint16_t *)out + j;
    const uint16_t *x = (const uint16_t *)in + i;
    for (uint64_t k = 0; k < n; k++)
      o[k * step] = x[k];
  } else if (in_dt == out_dt && es == 4) {
    uint32_t *o = (uint32_t *)out + j;
    const uint32_t *x = (const uint32_t *)in + i;
    for (uint64_t k = 0; k < n; k++)
      o[k * step] = x[k];
  } else {
    for (uint64_t k = 0; k < n; k++)
      store_elem(out, out_dt, j + k * step, load_elem(in, in_dt, i + k), clip);
  }
}

void *const_layout_convert(ir_graph *g, const ir_value *c, int lay, int dt, int rank, const int64_t *dims,
                           int replaced, int clip) {
  uint64_t phys;
  if (layout_elements(lay, rank, dims, &phys) != 0) return NULL;
  size_t es = dtype_size(dt);
  if (!es || !dtype_size(c->dtype)) return NULL; /* a storage dtype: Convert widens it before any layout */
  ir_payload_reader r;
  ir_payload_reader_init(g, &r, c, replaced);
  const int consume = r.consume;
  void *out = phys <= SIZE_MAX / es ? ir_payload_alloc(g, &r, (size_t)phys * es) : NULL;
  if (!out) return NULL;
  if (consume && lay != LAYOUT_ND) bigmem_small_pages(out, (size_t)phys * es);
  if (lay == LAYOUT_FRACTAL_NZ) { /* per batch and row k, runs of 16 columns, K16 * 16 apart */
    const int64_t K = dims[rank - 2], N = dims[rank - 1], k16 = (K + C0 - 1) / C0 * C0;
    const int64_t n16 = (N + C0 - 1) / C0 * C0,
                  batches = K && N ? (int64_t)(phys / (uint64_t)(k16 * n16)) : 0;
    /* rows a block at a time: when consuming, a block's pages in every
     * panel are faulted in by one call each, not a write at a time */
    const int64_t rows = consume ? 1 + (int64_t)((32 << 20) / dtype_size(c->dtype) / (uint64_t)N) : K;
    for (int64_t bi = 0; bi < batches; bi++)
      for (int64_t k0 = 0; k0 < K; k0 += rows) {
        const int64_t k1 = K - k0 < rows ? K : k0 + rows;
        for (int64_t p = 0; consume && p < n16 / C0; p++)
          bigmem_populate((char *)out + (size_t)(bi * k16 * n16 + (p * k16 + k0) * C0) * es,
                          (size_t)((k1 - k0) * C0) * es);
        for (int64_t k = k0; k < k1; k++)
          for (int64_t n0 = 0; n0 < N; n0 += C0)
            move_elems(out, dt, (uint64_t)(bi * k16 * n16 + ((n0 / C0) * k16 + k) * C0), 1, c->data, c->dtype,
                       (uint64_t)((bi * K + k) * N + n0), (uint64_t)(N - n0 < C0 ? N - n0 : C0), clip);
        ir_payload_read(&r, (uint64_t)((bi * K + k1) * N));
      }
    return out;
  }
  if (lay == LAYOUT_ND) { /* a chunk at a time, so that the source can go as it is read */
    const uint64_t chunk = 8 << 20;
    for (uint64_t i = 0; i < phys; i += chunk) {
      uint64_t n = phys - i < chunk ? phys - i : chunk;
      if ((int)c->dtype == DT_FLOAT32 && dt == DT_FLOAT16 && clip)
        floats_to_halves_clipped((uint16_t *)out + i, (const float *)c->data + i, (size_t)n);
      else if ((int)c->dtype == DT_FLOAT32 && dt == DT_FLOAT16)
        floats_to_halves((uint16_t *)out + i, (const float *)c->data + i, (size_t)n);
      else
        move_elems(out, dt, i, 1, c->data, c->dtype, i, n, clip);
      ir_payload_read(&r, i + n);
    }
    return out;
  }
  const int o = rank == 5;
  uint64_t hw = (uint64_t)dims[2 + o] * (uint64_t)dims[3 + o];
  uint64_t step =
      lay == LAYOUT_NC1HWC0 || lay == LAYOUT_NDC1HWC0 ? C0 : (uint64_t)(dims[0] + C0 - 1) / C0 * C0 * C0;
  uint64_t i = 0;
  for (int64_t a = 0; a < dims[0]; a++) {
    for (int64_t b = 0; b < dims[1]; b++)
      for (int64_t z = 0; z < (o ? dims[2] : 1); z++, i += hw)
        move_elems(out, dt, phys_index(lay, rank, dims, a, b, z, 0, 0), step, c->data, c->dtype, i, hw, clip);
    ir_payload_read(&r, i);
  }
  return out;
}
