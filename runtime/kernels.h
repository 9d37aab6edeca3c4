/* kernels.h - what the kernel files share: fp16/fp32 element access, param
 * decoding, block splitting and the load-time check helpers.
 *
 * Element access: kernels compute in f32 whatever the stored dtype (f16 or
 * f32, checked at load). rt_h2f / rt_f2h are branch-free versions of
 * common/fp16.h's half_to_float / float_to_half that gcc vectorizes; they
 * agree with the reference bit for bit (tests/unit/test_kernels.c checks all
 * 65536 halves and a sweep of floats). They assume the default rounding mode
 * and no -ffast-math.
 *
 * Blocks: a kind splits `units` of work over block_dim blocks as
 * [b*units/block_dim, (b+1)*units/block_dim) (rt_block_range); the unit of
 * each kind (checked as block_dim <= units, or block_dim == 1 for empty work):
 *   TRANSDATA   rows of dst: N*C1*H (NC1HWC0 dst), N*D*C1*H (NDC1HWC0
 *               dst), N*C*H or N*C*D*H (rank-4 or -5 ND dst); elements
 *               when the layout stays
 *   CONV2D, CONV3D  tiles (om_format.h);  DWCONV  N*C1 planes
 *   POOL        output planes: N*C1 (2-D) or N*Do*C1 (3-D)
 *   COPY_SLICE  physical dims before the axis (NC1HWC0 is [N][C1][H][W][16],
 *               so axis 1 splits N, axis 2 N*C1, axis 3 N*C1*H); axis 0:
 *               elements of the (contiguous) copy
 *   SOFTMAX     normalised vectors: outer*inner (inner = 1 with coerce_2d)
 *   LAYERNORM   rows (the dims before the axis)
 *   REDUCE      y elements
 *   STRIDED_COPY  y elements
 *   GATHER      y elements
 *   TOPK, CUMSUM  lines (the product of x's dims other than the axis)
 *   SCATTER, ONEHOT  y elements
 *   PAD         y elements
 *   RESIZE      y rows (elements / last dim);  POOL_ND  y elements
 *   MATMUL      tiles (om_format.h)
 *   ATTENTION   tiles: batch x query blocks (om_format.h)
 *   AIPP        y rows: N*H
 *   QCONV2D     tiles (om_format.h)
 *   QELTWISE    runs of 16 physical elements
 *   QLUT        runs of 16 physical elements
 *   DYNQUANT    runs of 64 elements of x (each block also reads all of x)
 *   RECURRENCE  batch rows (each block runs every step of its rows)
 *
 * Checks: each kind's check function validates its task with the rt_chk_*
 * helpers; every failure is rt_error(OMRT_ERR_FORMAT, "task %u (KIND)
 * '<name>': <slot/field>: <values>").
 */
#ifndef RUNTIME_KERNELS_H
#define RUNTIME_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/fp16.h"
#include "common/vmath.h"
#include "runtime/rt.h"

static inline uint32_t rt_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float rt_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* A float stored in a param as its IEEE-754 bit pattern. */
static inline float rt_param_f32(int32_t bits) { return rt_bits_f32((uint32_t)bits); }

/* = half_to_float(h): the exponent/mantissa shifted into place and scaled by
 * 2^112 is exact for normals and subnormals; inf/NaN keep an all-ones
 * exponent. Selections are written as masks: gcc does not if-convert the
 * ternary forms, and these loops must vectorize. */
static inline float rt_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
  uint32_t bits = rt_f32_bits(rt_bits_f32(em) * 0x1p112f);
  uint32_t infnan = 0u - (uint32_t)((h & 0x7c00u) == 0x7c00u);
  bits = (bits & ~infnan) | ((em | 0x7f800000u) & infnan);
  return rt_bits_f32(bits | sign);
}

/* h with a signaling NaN made quiet (the significand's top bit set, the
 * payload kept): what a hardware f16 -> f32 convert (F16C, the JIT's
 * fpext) gives, so the vector unit's f16 LOAD is the same in every
 * executor. Branch-free, so it vectorizes. */
static inline uint16_t rt_h_quiet(uint16_t h) {
  return (uint16_t)(h | (0x200u & (0u - (uint32_t)((h & 0x7fffu) > 0x7c00u))));
}

/* = float_to_half(f), round to nearest even: adding a power of two aligned so
 * that the float adder rounds away exactly the bits the half drops (the
 * FP16 library's method), with NaN payloads kept as fp16.h does. Signed
 * compares only, so it vectorizes on SSE2 as well. */
static inline uint16_t rt_f2h(float f) {
  uint32_t w = rt_f32_bits(f), absx = w & 0x7fffffffu;
  uint32_t sign = (w >> 16) & 0x8000u;
  float base = (rt_bits_f32(absx) * 0x1p112f) * 0x1p-110f;
  int32_t e = (int32_t)(absx >> 23);
  e = e < 0x71 ? 0x71 : e;
  base = rt_bits_f32(((uint32_t)e << 23) + 0x07800000u) + base;
  uint32_t bits = rt_f32_bits(base);
  uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  uint32_t nan = 0x7e00u | ((w >> 13) & 0x3ffu);
  uint32_t isnan = 0u - (uint32_t)((int32_t)absx > 0x7f800000);
  return (uint16_t)(sign | (nan & isnan) | (nonsign & ~isnan));
}

/* n elements of dtype `dt` (DT_FLOAT16 or DT_FLOAT32) at src[i0..] <-> f32. */
static inline void rt_load_f32(float *dst, const void *src, int dt, size_t i0, size_t n) {
  if (dt == DT_FLOAT16) {
    const uint16_t *s = (const uint16_t *)src + i0;
    for (size_t i = 0; i < n; i++)
      dst[i] = rt_h2f(s[i]);
  } else {
    memcpy(dst, (const float *)src + i0, n * sizeof(float));
  }
}

static inline void rt_store_f32(void *dst, int dt, size_t i0, const float *src, size_t n) {
  if (dt == DT_FLOAT16) {
    uint16_t *d = (uint16_t *)dst + i0;
    for (size_t i = 0; i < n; i++)
      d[i] = rt_f2h(src[i]);
  } else {
    memcpy((float *)dst + i0, src, n * sizeof(float));
  }
}

/* One element, for the strided paths. */
static inline float rt_get(const void *p, int dt, size_t i) {
  return dt == DT_FLOAT16 ? rt_h2f(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static inline void rt_put(void *p, int dt, size_t i, float v) {
  if (dt == DT_FLOAT16)
    ((uint16_t *)p)[i] = rt_f2h(v);
  else
    ((float *)p)[i] = v;
}

/* Block `b` of `bd` takes units [*lo, *hi). */
static inline void rt_block_range(uint64_t units, uint32_t bd, uint32_t b, uint64_t *lo, uint64_t *hi) {
  *lo = (uint64_t)((unsigned __int128)units * b / bd);
  *hi = (uint64_t)((unsigned __int128)units * (b + 1) / bd);
}

static inline int64_t rt_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* 1 when the core's L1 still holds what (what, a, b, c) names, written
 * earlier in this task run (rt_core.run); otherwise records that the caller
 * is about to write it there and returns 0. Never 1 outside the executor
 * (run 0), where nothing says the data behind `what` did not change. */
static inline int rt_l1_holds(rt_core *core, const void *what, int64_t a, int64_t b, int64_t c) {
  struct rt_l1_key *k = &core->l1_key;
  if (core->run && k->run == core->run && k->what == what && k->a == a && k->b == b && k->c == c) return 1;
  *k = (struct rt_l1_key){core->run, what, a, b, c};
  return 0;
}

/* Applies om_act to one value. */
static inline float rt_act(float v, int act, float lo, float hi) {
  switch (act) {
  case OM_ACT_RELU: return v > 0.0f ? v : 0.0f;
  case OM_ACT_CLIP: return v < lo ? lo : v > hi ? hi : v;
  case OM_ACT_GELU: return om_vgelu(v);
  case OM_ACT_GELU_TANH: return om_vgelu_tanh(v);
  case OM_ACT_SILU: return om_vsilu(v);
  default: return v;
  }
}

/* --- load-time checks (kernels.c) */

typedef struct rt_chk {
  const omrt_model *m;
  uint32_t index; /* task number */
  const om_task *task;
  const char *kind; /* "CONV2D", ... */
} rt_chk;

/* rt_error(OMRT_ERR_FORMAT, "task %u (KIND) 'name': <fmt>"). */
omrt_status rt_chk_fail(const rt_chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* task->ntensors == n. */
omrt_status rt_chk_ntensors(const rt_chk *c, uint32_t n);
/* The tensor in slot `slot` (called `what` in messages): present unless
 * `optional` (then *t_out = NULL for OM_NONE), dtype f16 or f32 (only f32 if
 * f32_only), layout `layout` (or one of a set: RT_LAYOUTS_*), rank `rank`
 * (any when < 0), every dim in [0, INT32_MAX], bytes matching dims. */
enum {
  RT_LAYOUTS_ND_NC1HWC0 = -1, /* rt_chk_tensor's layout sets */
  RT_LAYOUTS_5HD = -2,        /* NC1HWC0 or NDC1HWC0 */
  RT_LAYOUTS_ACT = -3,        /* ND, NC1HWC0 or NDC1HWC0 */
};
omrt_status rt_chk_tensor(const rt_chk *c, int slot, const char *what, int optional, int layout, int rank,
                          int f32_only, const om_tensor **t_out);
/* rt_chk_tensor with the dtypes allowed given as a set: RT_DT(dt) bits. */
#define RT_DT(dt) (1u << (dt))
omrt_status rt_chk_tensor_of(const rt_chk *c, int slot, const char *what, int optional, int layout, int rank,
                             uint32_t dtypes, const om_tensor **t_out);
/* The tensor in slot `slot` (required): layout ND, any known dtype, rank <=
 * MAX_RANK, every dim in [0, INT32_MAX], bytes matching dims and dtype. The
 * ND kinds (REDUCE, STRIDED_COPY, GATHER, PAD) check their tensors with it. */
omrt_status rt_chk_nd_tensor(const rt_chk *c, int slot, const char *what, const om_tensor **t_out);
/* x and y (a copy's source and destination) have dtypes of one size (the
 * bits are copied unchanged: one dtype, or a reinterpretation), or are f16
 * and f32 in either direction (converted). */
omrt_status rt_chk_copy_dtypes(const rt_chk *c, const om_tensor *x, const om_tensor *y);
/* a and b have the same rank and dims. */
omrt_status rt_chk_same_dims(const rt_chk *c, const char *what_a, const om_tensor *a, const char *what_b,
                             const om_tensor *b);
/* 1 <= block_dim <= max(units, 1). */
omrt_status rt_chk_block_dim(const rt_chk *c, uint64_t units, const char *unit_name);
/* Logical element count (dims product); physical element count. */
uint64_t rt_elements(const om_tensor *t);
uint64_t rt_physical_elements(const om_tensor *t);
/* Writes 0 into the padding lanes (channels past dims[1]) that fall in runs
 * [lo, hi) of C0 bytes of an NC1HWC0 y of one-byte elements at yd; nothing
 * for another layout or a channel count that fills its last block. The
 * int8 elementwise kinds (QELTWISE, QLUT) split y into such runs. */
void rt_zero_pad_lanes_u8(const om_tensor *y, uint8_t *yd, uint64_t lo, uint64_t hi);

/* The window, act and clip params shared by CONV2D and DWCONV (OM_CONV_P_KH ..
 * OM_CONV_P_CLIP_MAX). */
typedef struct rt_conv_params {
  int kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, act;
  float clip_min, clip_max;
} rt_conv_params;
void rt_conv_params_read(const om_task *task, rt_conv_params *p_out);
/* Checks params and that y is [N, cout, Ho, Wo] for x [N, C, H, W]. */
omrt_status rt_chk_conv_params(const rt_chk *c, const rt_conv_params *p, const om_tensor *x, int64_t cout,
                               const om_tensor *y);

/* --- CONV2D geometry, shared by the portable and the x86 cube paths */

/* A CONV3D task runs as the CONV2D tile code over N*Do output images (the
 * (n, od) slices of its NDC1HWC0 y, each an NC1HWC0 image), with K over
 * (kd, c1in, kh, kw): fractal kf reads virtual channel block vb = kf /
 * (kh*kw) of c1v = kd * c1, i.e. input channel block vb % c1 at depth
 * od*sd - pf + (vb / c1)*dd, zero outside [0, D) (rt_conv_plane). For
 * CONV2D the depth window is d = dout = kd = sd = dd = 1, pf = 0, so
 * c1v = c1 and the plane of (img, vb) is image img's channel block vb
 * (flat: so it is for a 3-D window of kd 1, sd 1 and no depth pads). */
typedef struct rt_conv_geom {
  const om_tensor *x, *w, *bias, *res, *y;
  const void *xd, *wd, *rd;
  const void *xsd; /* x_scale (CONV2D x_scale = 1): [N][C1][16] in x's dtype, or NULL */
  const float *bd; /* bias data */
  void *yd;
  int64_t n, cin, c1, h, w_, ho, wo, cout, c1out, k; /* n: output images (N*Do); k: fractals c1v*kh*kw */
  int64_t c1v, d, dout, kd, sd, pf, dd;              /* the depth window (above) */
  int flat; /* output image img reads input image img only (2-D, or kd 1, sd 1, no depth pads) */
  int64_t tm, tn, tk, mtiles, ntiles; /* tile sizes, tiles per image */
  int algo;                           /* om_conv_algo (OM_CONV_P_ALGORITHM) */
  int xnd;          /* x is ND [N, Cin, H, W] (Cin <= 4, an RGB stem reading the model input in place) */
  int xr16;         /* round x to fp16 as it is staged (x f32, w f16: what TRANSDATA would have done) */
  int64_t wth, wtw; /* OM_CONV_WINO_F43_FZ: 4x4 output tiles per column, per row (wino_f43_tiles) */
  int diag8; /* a grouped piece of 8 input and 8 output channels a group: every fractal is two 8x8 diagonal
              * blocks, its other entries zero (kernels_cube_group.c); the x86 tile multiplies those only */
  rt_conv_params p;
} rt_conv_geom;

/* Input channels of fractal kf that are real: 16, or Cin % 16 in the last
 * channel block. The lanes beyond are zero in both operands (NC1HWC0 and
 * FRACTAL_Z padding), so staging leaves them out: the products summed are
 * the same, and a 3-channel stem does 3/16 of the multiplies. */
static inline int rt_conv_k_lanes(const rt_conv_geom *g, int64_t kf) {
  return kf / ((int64_t)g->p.kh * g->p.kw) % g->c1 == g->c1 - 1 ? (int)(g->cin - (g->c1 - 1) * C0) : C0;
}

/* The first pixel (x element offset / 16) of the input plane that output
 * image img reads for virtual channel block vb, or -1 when that depth tap
 * lies in the padding (the plane reads as zeros). */
static inline int64_t rt_conv_plane(const rt_conv_geom *g, int64_t img, int64_t vb) {
  if (g->flat) return (img * g->c1 + vb) * g->h * g->w_;
  const int64_t n = img / g->dout, od = img % g->dout, kz = vb / g->c1, c = vb % g->c1;
  const int64_t id = od * g->sd - g->pf + kz * g->dd;
  return id < 0 || id >= g->d ? -1 : ((n * g->d + id) * g->c1 + c) * g->h * g->w_;
}

/* Output pixels m0 .. m0+mrows-1 of one image as the window sees them: their
 * first and last output row, and their first and last column (all columns
 * when they span more than one row), each times its stride. */
typedef struct rt_conv_span {
  int64_t ih0, ih1, iw0, iw1; /* oh0 * stride_h, oh1 * stride_h, ow0 * stride_w, ow1 * stride_w */
} rt_conv_span;

static inline rt_conv_span rt_conv_span_of(const rt_conv_geom *g, int64_t m0, int64_t mrows) {
  const int64_t oh0 = m0 / g->wo, oh1 = (m0 + mrows - 1) / g->wo;
  const int64_t ow0 = oh0 == oh1 ? m0 % g->wo : 0, ow1 = oh0 == oh1 ? (m0 + mrows - 1) % g->wo : g->wo - 1;
  return (rt_conv_span){oh0 * g->p.sh, oh1 * g->p.sh, ow0 * g->p.sw, ow1 * g->p.sw};
}

/* Whether a tap reading input offsets (dy, dx) from a pixel's strided
 * position (row * stride_h + dy: dy = kernel row * dilation - pad_top,
 * likewise dx) reads only padding for the pixels of span s. */
static inline int rt_conv_off_dead(const rt_conv_geom *g, const rt_conv_span *s, int64_t dy, int64_t dx) {
  return s->ih1 + dy < 0 || s->ih0 + dy >= g->h || s->iw1 + dx < 0 || s->iw0 + dx >= g->w_;
}

/* Whether fractal kf reads only padding for output pixels m0 .. m0+mrows-1
 * of one image: its tap's input row lies outside [0, H) for every output
 * row of the pixels, or its input column outside [0, W) for every output
 * column of them (all columns when they span more than one row). Its
 * products are then all 0 * w, which a tile may skip: the sums are the same
 * bits (acc + 0 = acc). Depth taps in the padding are not asked here
 * (rt_conv_plane answers them). A dilated window on a small map (DeepLab's
 * ASPP) reads padding through its outer taps for whole tiles. */
static inline int rt_conv_tap_dead(const rt_conv_geom *g, int64_t m0, int64_t mrows, int64_t kf) {
  const int64_t tap = kf % ((int64_t)g->p.kh * g->p.kw);
  const rt_conv_span s = rt_conv_span_of(g, m0, mrows);
  return rt_conv_off_dead(g, &s, (tap / g->p.kw) * g->p.dh - g->p.pt, (tap % g->p.kw) * g->p.dw - g->p.pl);
}

/* The first output row (or column) of Winograd tile row th (column) of a
 * grid of `tiles` along an output dim with dilation d (wino_f43_tiles:
 * tiles / d per phase, phase after phase); the tile's 4 rows are d apart
 * and its 6x6 input patch starts at that row - pad, its rows d apart. */
static inline int64_t rt_wino_origin(int64_t th, int64_t tiles, int64_t d) {
  const int64_t per_phase = tiles / d;
  return th / per_phase + d * 4 * (th % per_phase);
}

/* Channel c of pixel (ih, iw) of image img of an ND (NCHW) stem input, as
 * the cube stages it: rounded to fp16 when g->xr16. */
static inline float rt_conv_x_nd(const rt_conv_geom *g, int64_t img, int64_t c, int64_t ih, int64_t iw) {
  float v = rt_get(g->xd, (int)g->x->dtype, (size_t)(((img * g->cin + c) * g->h + ih) * g->w_ + iw));
  return g->xr16 ? rt_h2f(rt_f2h(v)) : v;
}

/* The portable CONV2D tile (kernels_cube.c): the x86 tile hands it the
 * stem tiles with an ND x that its packed path does not take. */
void rt_conv_tile_portable(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);

/* L0B[nb][k][16 co] as f32 for n blocks nb0 .. nb0+nblocks-1 and fractals
 * kc .. kc+kn-1: rows ci < k_lanes of each FRACTAL_Z fractal, klen of them
 * per n block (kernels_cube.c; the portable tile's loadB, and the x86
 * tile's for the packed RGB stems). */
void rt_conv_load_b(const rt_conv_geom *g, int64_t nb0, int64_t nblocks, int64_t kc, int64_t kn, int64_t klen,
                    float *l0b);

/* --- POOL geometry, shared by the portable and the x86 paths: output plane
 * `unit` (of N*Do*C1; 2-D: N*C1 with Do = 1) is y's plane (n, od, cb) and
 * reads the input planes (n, id, cb) for the depth taps id in
 * [od*sd - pf, od*sd - pf + kd) inside [0, D). 2-D: d = dout = kd = sd = 1,
 * pf = pbk = 0. */
typedef struct rt_pool_geom {
  int64_t c1, d, dout, h, w, ho, wo; /* x [.., D, H, W], y [.., Do, Ho, Wo] */
  int64_t kd, sd, pf, pbk;           /* the depth window */
  int64_t kh, kw, sh, sw;            /* the 2-D window and strides */
  int64_t pt, pl, pb, pr;            /* pads top, left, bottom, right */
  int is_max, include_pad;           /* mode 0 (max); count_include_pad */
} rt_pool_geom;
void rt_pool_geom_init(const om_task *task, const rt_args *args, rt_pool_geom *g);
/* POOL's max on u8/i8 (x and y one dtype) over output planes [lo, hi)
 * (kernels_qpool.c). */
void rt_pool_max8(const rt_args *args, const rt_pool_geom *g, uint64_t lo, uint64_t hi);
/* The x element offset of input plane (n, id, cb) of output plane unit. */
static inline size_t rt_pool_xplane(const rt_pool_geom *g, uint64_t unit, int64_t id) {
  const int64_t cb = (int64_t)(unit % (uint64_t)g->c1), n = (int64_t)(unit / (uint64_t)g->c1) / g->dout;
  return (size_t)(((n * g->d + id) * g->c1 + cb) * g->h * g->w) * C0;
}
/* Output plane unit's depth window: its start *d0 and end *pd1 inside the
 * padded input (for count_include_pad), and the input planes [*id0, *id1)
 * it reads. */
static inline void rt_pool_depth(const rt_pool_geom *g, uint64_t unit, int64_t *d0, int64_t *pd1,
                                 int64_t *id0, int64_t *id1) {
  const int64_t od = (int64_t)(unit / (uint64_t)g->c1) % g->dout, a = od * g->sd - g->pf, b = a + g->kd;
  *d0 = a, *pd1 = b < g->d + g->pbk ? b : g->d + g->pbk;
  *id0 = a < 0 ? 0 : a, *id1 = b < g->d ? b : g->d;
}

/* --- TRANSDATA geometry between ND and NC1HWC0 / NDC1HWC0, shared by the
 * portable and the x86 paths: the 5HD side is images img = n*D + d (D = 1
 * in 2-D), each [C1][H][W][16]; the ND side reads channel ch of image img
 * at rt_td_nd_base(img) + ch * cstride (+ ih * W + iw). */
typedef struct rt_td_geom {
  int64_t n, c, c1, d, h, w;
  size_t cstride; /* ND elements from one channel to the next: D*H*W */
} rt_td_geom;
void rt_td_geom_init(const om_tensor *t, rt_td_geom *g);
static inline size_t rt_td_nd_base(const rt_td_geom *g, int64_t img) {
  return (size_t)((img / g->d) * g->c * g->d + img % g->d) * (size_t)(g->h * g->w);
}

/* --- run-time kernel selection (cpu.c)
 *
 * rt_cpu() returns the paths this process uses, detected once (thread-safe):
 * NULL members mean "portable C". The x86 members exist on x86-64 builds and
 * are only set when the CPU has AVX2, FMA and F16C and OMRT_PORTABLE is not
 * set. The int-returning paths return 0 when they do not handle a case (the
 * caller then runs the portable code), 1 when done.
 *   conv_tile   one CONV2D tile (img, M tile, N tile), fully written to y
 *   dwconv      DWCONV units (N*C1 planes) [lo, hi)
 *   pool        POOL units [lo, hi)
 *   transdata   TRANSDATA between ND (NCHW) and NC1HWC0, dst rows [lo, hi)
 *   convert     n elements f16/f32 -> f16/f32 (dtypes differ)
 *   wino_fz_tile  one CONV2D tile of algorithm OM_CONV_WINO_F43_FZ
 *   matmul_tile one MATMUL tile (kernels_matmul.h), fully written to y
 *   exp, sigmoid, erf  n EXP / SIGMOID / ERF lanes of the vector unit
 *               (common/vmath.h om_vexp, om_vsigmoid, om_verf) vectorized
 *               for AVX2, with hardware FMA (the portable SIGMOID and ERF
 *               lanes call libm's fmaf)
 *   fma         n FMA lanes (fmaf) of the vector unit
 *   vmax, vsum, vexp_sum, vsum_sqdev  the row instructions below, on
 *               8-lane YMM registers (vexp_sum on ZMM ones with avx512)
 *   vexp_sum_r16  vexp_sum storing its values rounded to f16 ones
 *               (rt_h2f(rt_f2h(.)), the sum the unrounded values'): the
 *               p of ATTENTION's fp16 products in the same pass; NULL: not
 *               on this host
 *   gemm16      rt_gemm16_acc_x86, the cube's micro-kernel on f32 staging
 *               (ATTENTION's products)
 *   h2f, f2h, round16  n f16 lanes of the vector-program interpreter
 *               (vprog_exec.c): rt_h2f(rt_h_quiet(s)), rt_f2h(s) and
 *               rt_h2f(rt_f2h(x)) in place, with F16C; the same bits, every
 *               half and every float checked (exhaustively, when written)
 *   gemv        rt_gemv's rows (below): weight rows streamed once, f16
 *               converted in registers (ZMM lanes with avx512)
 *   avx512      1: the host has AVX-512F + DQ and OMRT_AVX512 is not 0: the
 *               x86 cube tiles run their micro-kernels on 16-lane ZMM
 *               registers, and conv_tile, wino_fz_tile and dwconv are the
 *               ZMM builds; 0: YMM ones */
struct rt_mm_geom;
struct rt_qconv_geom;
struct rt_qelt;
/* LAYERNORM's rows lo..hi-1 as kernels_norm.c runs them (the AVX-512 build
 * fuses its passes: rt_layernorm_avx512). Tensors f16 or f32. */
typedef struct rt_ln_rows {
  const void *x, *res;       /* res: the residual, or NULL */
  void *sum, *y;             /* sum: x + residual for other readers, or NULL */
  int xt, rt, st, yt;        /* their dtypes */
  const float *scale, *bias; /* D floats each (staged in the UB), or NULL */
  float eps;
  int rms;
  size_t d; /* elements per row */
} rt_ln_rows;

/* LAYERNORM's rows through the row instructions below (the path without
 * rt_cpu()->layernorm). */
void rt_layernorm_rows(const rt_ln_rows *a, uint64_t lo, uint64_t hi, float *row);

typedef struct rt_cpu_paths {
  const char *name; /* "avx512f+avx2+fma+f16c", "avx2+fma+f16c", "portable", ... (tests print it) */
  int baseline; /* 0 under OMRT_PORTABLE: the kernels that use only the ISA baseline (x86-64 SSE2) take C */
  void (*conv_tile)(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
  int (*dwconv)(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core);
  int (*pool)(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core);
  int (*transdata)(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi);
  int (*convert)(void *dst, int dd, size_t di, const void *src, int sd, size_t si, size_t n);
  void (*wino_fz_tile)(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
  void (*matmul_tile)(const struct rt_mm_geom *g, int64_t bt, int64_t mt, int64_t nt, rt_core *core);
  void (*exp)(const float *x, float *y, uint32_t n);
  void (*sigmoid)(const float *x, float *y, uint32_t n);
  void (*erf)(const float *x, float *y, uint32_t n);
  void (*fma)(const float *a, const float *b, const float *c, float *d, uint32_t n);
  float (*vmax)(const float *x, size_t n);
  float (*vsum)(const float *x, size_t n);
  float (*vexp_sum)(float *x, float sub, size_t n);
  float (*vexp_sum_r16)(float *x, float sub, size_t n);
  float (*vsum_sqdev)(const float *x, float mean, size_t n);
  void (*gemm16)(const float *a, size_t lda, int64_t mrows, size_t klen, const float *b, size_t ldb,
                 int nblocks, size_t bstride, float *c, size_t cstride, int first);
  void (*h2f)(float *d, const uint16_t *s, uint32_t n);
  void (*f2h)(uint16_t *d, const float *s, uint32_t n);
  void (*round16)(float *x, uint32_t n);
  /* QCONV2D's tile (kernels_qconv.h): AVX-512 VNNI or AVX2; NULL: portable */
  void (*qconv_tile)(const struct rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                     int64_t nb1);
  /* QCONV2D's depthwise tile (kernels_qdw.h): AVX-512 VNNI; NULL: qconv_tile */
  void (*qconv_dw_tile)(const struct rt_qconv_geom *g, int64_t img, int64_t p0, int64_t p1, int64_t nb0,
                        int64_t nb1);
  /* QELTWISE's run (kernels_qeltwise.h): AVX-512F or AVX2; NULL: portable */
  void (*qeltwise)(const struct rt_qelt *q, size_t i0, size_t n);
  /* QLUT's run (kernels_qlut.h): AVX-512 VBMI or AVX2; NULL: portable */
  void (*qlut)(const uint8_t *table, const uint8_t *x, uint8_t *y, size_t n);
  void (*gemv)(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y);
  /* LAYERNORM's rows, row (D floats of UB) the staging; 0 when it does not
   * take the dtypes (the row instructions then run them) */
  int (*layernorm)(const rt_ln_rows *a, uint64_t lo, uint64_t hi, float *row);
  /* MATMUL's epilogue from L0C (rt_mm_epilogue's contract) for act GELU,
   * GELU_TANH and SILU, c absent or running along N: mm_act_x86.inc */
  void (*mm_act_epilogue)(const struct rt_mm_geom *g, int64_t bt, int64_t m0, int64_t rows, int64_t n0,
                          int64_t cols, const float *acc, int64_t ldm, int with_bias);
  /* ATTENTION's scaled scores of a row and their max (kernels_attention.c) */
  float (*attn_scale_max)(float *p, const float *s, size_t sstride, size_t n, float scale);
  /* ATTENTION's k as [Skv, D]: 16 keys (rows rs elements apart from
   * element at of k, f16 when kh) into L0B's panel dst[c * 16 + j] = key
   * j's element c, c < d (kernels_attention.c) */
  void (*attn_stage_k)(float *dst, const void *k, int kh, size_t at, size_t rs, size_t d);
  /* COPY_SLICE's lanes of 16-bit elements: lanes (<= 16) lanes of each of
   * hw 16-lane pixels from s to d, the pixels' other lanes untouched
   * (kernels_vector.c, copy_lanes) */
  void (*copy_lanes16)(uint16_t *d, const uint16_t *s, int64_t lanes, int64_t hw);
  int avx512;
} rt_cpu_paths;
/* The host's paths (cpu.c), detected on the first call from any thread.
 * The micro-kernels' callers ask per group of pixels, so after detection
 * rt_cpu() is one acquire load, inline: a call through pthread_once each
 * time was 0.5% of ResNet-50's CPU time (perf, 1 thread). */
extern const rt_cpu_paths *_Atomic rt_cpu_detected; /* &the paths once detected, else NULL */
const rt_cpu_paths *rt_cpu_detect(void);
static inline const rt_cpu_paths *rt_cpu(void) {
  const rt_cpu_paths *p = atomic_load_explicit(&rt_cpu_detected, memory_order_acquire);
  return p ? p : rt_cpu_detect();
}

#if defined(__x86_64__) && defined(__GNUC__)
void rt_conv_tile_x86(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
int rt_dwconv_x86(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core);
int rt_dwconv_avx512(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core);
int rt_pool_x86(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi, rt_core *core);
int rt_transdata_x86(const om_task *task, const rt_args *args, uint64_t lo, uint64_t hi);
int rt_convert_x86(void *dst, int dd, size_t di, const void *src, int sd, size_t si, size_t n);
void rt_exp_x86(const float *x, float *y, uint32_t n);
void rt_sigmoid_x86(const float *x, float *y, uint32_t n);
void rt_erf_x86(const float *x, float *y, uint32_t n);
void rt_mm_act_epilogue_x86(const struct rt_mm_geom *g, int64_t bt, int64_t m0, int64_t rows, int64_t n0,
                            int64_t cols, const float *acc, int64_t ldm, int with_bias);
void rt_mm_act_epilogue_avx512(const struct rt_mm_geom *g, int64_t bt, int64_t m0, int64_t rows, int64_t n0,
                               int64_t cols, const float *acc, int64_t ldm, int with_bias);
void rt_fma_x86(const float *a, const float *b, const float *c, float *d, uint32_t n);
float rt_vmax_x86(const float *x, size_t n);
float rt_vsum_x86(const float *x, size_t n);
float rt_vexp_sum_x86(float *x, float sub, size_t n);
float rt_vexp_sum_avx512(float *x, float sub, size_t n);
float rt_vexp_sum_r16_avx512(float *x, float sub, size_t n);
int rt_layernorm_avx512(const rt_ln_rows *a, uint64_t lo, uint64_t hi, float *row);
float rt_attn_scale_max_avx512(float *p, const float *s, size_t sstride, size_t n, float scale);
void rt_attn_stage_k_avx512(float *dst, const void *k, int kh, size_t at, size_t rs, size_t d);
void rt_round16_avx512(float *x, uint32_t n);
void rt_copy_lanes16_avx512bw(uint16_t *d, const uint16_t *s, int64_t lanes, int64_t hw);
float rt_vsum_sqdev_x86(const float *x, float mean, size_t n);
void rt_h2f_x86(float *d, const uint16_t *s, uint32_t n);
void rt_f2h_x86(uint16_t *d, const float *s, uint32_t n);
void rt_round16_x86(float *x, uint32_t n);
void rt_gemv_x86(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y);
void rt_gemv_avx512(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y);
/* c[nb*cstride + m*16 ..+16] += sum_k a[m*lda + k] * b[nb*bstride + k*ldb
 * ..+16] for m < mrows and the nb < nblocks (<= 2) n blocks, = when first
 * (f32, strides in floats; the cube micro-kernel six rows at a time,
 * two blocks in one pass on AVX-512 hosts: rt_cpu()->gemm16). */
void rt_gemm16_acc_x86(const float *a, size_t lda, int64_t mrows, size_t klen, const float *b, size_t ldb,
                       int nblocks, size_t bstride, float *c, size_t cstride, int first);
/* Where the cube micro-kernel's sums of one n block go on the last K chunk
 * (rt_cube_gemm_x86): row m of the block to y + m * ystride elements (f16
 * when yf16), + res[m * rstride ..] (f16 when rf16) before act (om_act,
 * clip bounds lo, hi); the sums start from bias (16 lanes; NULL: 0) on the
 * first chunk. y NULL: the sums stay in L0C (not the last chunk). */
typedef struct rt_mk_out {
  const float *bias;
  void *y;
  const void *res;
  size_t ystride, rstride; /* elements */
  int yf16, rf16, act;
  float lo, hi;
} rt_mk_out;
/* What rt_cube_gemm_x86 fetches into the cache while it computes, spread
 * over its row groups: nblocks runs of bytes each, the first at b, nbstride
 * bytes apart (the next B panel the tile will read; borrowed for the call). */
typedef struct rt_mk_pf {
  const uint8_t *b;
  size_t bytes, nbstride; /* bytes */
  int64_t nblocks;
} rt_mk_pf;
/* The cube micro-kernel over a MATMUL tile's chunk (kernels_matmul_x86.c):
 * for rows m < mrows of A (f32, row m at a + m * lda floats) and n blocks
 * nb < nblocks of B (block nb's row k at b + nb * nbstride + k * brow bytes,
 * 16 lanes, f16 when bh: FRACTAL_NZ panels read in place, or staged ones),
 * the sums over k < klen of A[m][k] * B[k][0..16) start from out[nb].bias
 * (first) or from L0C (c + nb * cstride + m * 16 floats), and go to L0C or
 * through out[nb]'s write-back. Every out[nb].y is NULL or none is. Row
 * groups of twelve in the ZMM kernel on AVX-512 hosts (pairs of blocks; the
 * last rows in groups of up to six), of six in the YMM one otherwise; a
 * group's A stays in L1 while the blocks stream past. pf (or NULL): what
 * to fetch meanwhile (rt_mk_pf). */
void rt_cube_gemm_x86(const float *a, size_t lda, int64_t mrows, size_t klen, const void *b, int bh,
                      size_t brow, size_t nbstride, int64_t nblocks, float *c, size_t cstride, int first,
                      const rt_mk_out *out, const rt_mk_pf *pf);
void rt_wino_fz_tile_x86(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
void rt_wino_fz_tile_avx512(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
#endif

/* Portable 16-lane multiply-accumulate rows (kernels_cube.c; CONV2D, MATMUL
 * and ATTENTION tiles): c[r][0..16) += sum_k a[r*lda + k] * b[k][0..16) for
 * rows r = 0, 1 (rt_mmad16_2) or row 0. */
void rt_mmad16_2(const float *a, int64_t lda, int64_t klen, const float *b, float *c);
void rt_mmad16_1(const float *a, int64_t klen, const float *b, float *c);

/* --- the vector unit's row instructions (kernels_norm.c) on f32 runs in
 * the UB, through rt_cpu()'s x86 builds when the host has them, else
 * portable loops; the two differ only in f32 summation order. */
float rt_vmax(const float *x, size_t n);                   /* the largest; NaNs skipped; -inf for n = 0 */
float rt_vsum(const float *x, size_t n);                   /* sum, in f32 lanes */
float rt_vexp_sum(float *x, float sub, size_t n);          /* x[i] = om_vexp(x[i] - sub); returns their sum */
float rt_vsum_sqdev(const float *x, float mean, size_t n); /* sum of (x[i] - mean)^2 */
/* dst[0..n) = src[i0..i0+n) (dtype dt, f16 or f32) as f32, and back. */
void rt_vload(float *dst, const void *src, int dt, size_t i0, size_t n);
void rt_vstore(void *dst, int dt, size_t i0, const float *src, size_t n);

/* --- kernels (kernels_cube.c, kernels_vector.c, kernels_norm.c) */

void rt_conv2d_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
uint64_t rt_conv2d_pieces(const om_task *task, const rt_args *args, const rt_core *core, uint32_t *parts,
                          uint32_t *grain);
void rt_conv2d_piece(const om_task *task, const rt_args *args, uint64_t first, uint32_t count, uint32_t parts,
                     rt_core *core);
/* kernels_cube_group.c: CONV2D with groups > 1 (FRACTAL_Z_G
 * weights). g as conv_geom_init made it (its cout/c1out are fixed up there);
 * tile is the dense tile function each run's piece of a tile goes through. */
typedef void (*rt_conv_tile_fn)(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
void rt_conv_group_run(const om_task *task, const rt_args *args, const rt_conv_geom *g, rt_conv_tile_fn tile,
                       uint32_t block, rt_core *core);
omrt_status rt_conv_group_check(const rt_chk *c);
/* kernels_cube.c: a direct CONV2D's tile_m, tile_n, tile_k against the
 * model's buffers (om_format.h's guarantees; L0A and L0B as staged). */
omrt_status rt_conv_tile_check(const rt_chk *c);
/* kernels_wpack.c: WPACK, conv weights computed at run time into their layout. */
void rt_wpack_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_wpack_check(const omrt_model *m, uint32_t i, const om_task *task);
/* OM_CONV_WINO_F43_FZ transforms weights with G' = diag(WINO_D)^-1 G, whose
 * rows are small integers, and applies WINO_D = (D0, D1, D1, D3, D3, 1) in
 * the output transform instead (kernels_wino.c). */
#define WINO_D0 0.25f
#define WINO_D1 (-1.0f / 6)
#define WINO_D3 (1.0f / 24)
/* kernels_wino.c: algorithm OM_CONV_WINO_F43_FZ, its tile (portable) and its
 * load-time check (the kernel shape, tiles and capacities of om_format.h). */
void rt_wino_fz_tile(const rt_conv_geom *g, int64_t img, int64_t mt, int64_t nt, rt_core *core);
omrt_status rt_wino_fz_check(const rt_chk *c, const rt_conv_params *p, const om_tensor *x, const om_tensor *w,
                             const om_tensor *y);
omrt_status rt_conv2d_check(const omrt_model *m, uint32_t i, const om_task *task);
/* CONV3D runs through rt_conv2d_run / _pieces / _piece (the geometry reads its kind). */
omrt_status rt_conv3d_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_transdata_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_transdata_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_dwconv_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_dwconv_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_pool_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_pool_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_copy_slice_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_copy_slice_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_softmax_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_softmax_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_recurrence_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_recurrence_check(const omrt_model *m, uint32_t i, const om_task *task);
/* y[0..n) += sum over i < k of x[i] * w[i * ldw + j] (w f16 when wf16, else
 * f32; ldw in elements): one row's h R^T for RECURRENCE, through rt_cpu()'s
 * gemv when set; paths differ only in f32 summation order. */
void rt_gemv(const float *x, size_t k, const void *w, int wf16, size_t ldw, size_t n, float *y);
void rt_layernorm_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_layernorm_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_qconv_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_qconv_check(const omrt_model *m, uint32_t i, const om_task *task);
/* On the AVX2 path: the weights (when constant) widened once for its tile
 * (kernels_qconv.h's w16), as the task's side data; else none. */
omrt_status rt_qconv_prepare(const omrt_model *m, uint32_t i, const om_task *task, void **aux_out);
void rt_qeltwise_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_qeltwise_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_qmatmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_qmatmul_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_dynquant_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_dynquant_check(const omrt_model *m, uint32_t i, const om_task *task);
/* DYNQUANT's two passes (kernels_dynquant.c), for the unit tests: x[0..n)'s
 * smallest and largest element with 0 included (NaN for both when x has a
 * NaN; a zero's sign unspecified), and y[i] = q_quantize(x[i], scale, zp,
 * 0, 255); simd 0 takes the portable loops. */
void rt_dynquant_range(const float *x, uint64_t n, int simd, float *lo_out, float *hi_out);
void rt_dynquant_quantize(const float *x, uint64_t n, float scale, int32_t zp, int simd, uint8_t *y);
void rt_qlut_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_qlut_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_attention.c */
void rt_attention_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_attention_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_reduce.c */
void rt_reduce_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_reduce_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_strided.c */
void rt_strided_copy_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_strided_copy_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_index.c: TOPK, SCATTER, CUMSUM, ONEHOT, and GATHER's mode 2 (GatherND), which
 * rt_gather_run / rt_gather_check hand over (the check after the dtype rules they share). */
void rt_topk_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_topk_check(const omrt_model *m, uint32_t i, const om_task *task);
/* Records index k, outside [-D, D), as core's fault (the first one stays). */
static inline void rt_index_fault(rt_core *core, int64_t k, int64_t D) {
  if (core->fault) return;
  core->fault = 1;
  core->fault_index = k;
  core->fault_dim = D;
}
void rt_scatter_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_scatter_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_cumsum_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_cumsum_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_aipp.c: AIPP. */
void rt_aipp_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_aipp_check(const omrt_model *m, uint32_t i, const om_task *task);

/* kernels_count.c: NONZERO, NMS, UNIQUE. */
void rt_nonzero_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_nonzero_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_nms_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_nms_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_unique_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_unique_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_tfidf.c: TFIDF. */
void rt_tfidf_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_tfidf_check(const omrt_model *m, uint32_t i, const om_task *task);

void rt_onehot_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_onehot_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_gathernd_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
/* How many of a GATHER task's indices (flattened) are read: all of them,
 * or with an extent tensor the valid prefix its count gives. */
uint64_t rt_gather_valid_indices(const om_task *task, const rt_args *args);
omrt_status rt_gathernd_check(const rt_chk *c, const om_tensor *x, const om_tensor *ix, const om_tensor *y);
/* kernels_gather.c */
void rt_gather_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_gather_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_pad.c */
void rt_pad_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_pad_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_resize.c, kernels_poolnd.c */
void rt_resize_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_resize_check(const omrt_model *m, uint32_t i, const om_task *task);
void rt_pool_nd_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_pool_nd_check(const omrt_model *m, uint32_t i, const om_task *task);
/* kernels_matmul.c */
void rt_matmul_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core);
omrt_status rt_matmul_check(const omrt_model *m, uint32_t i, const om_task *task);

#endif
