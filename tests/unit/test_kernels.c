/* test_kernels.c - the runtime's kernels against plain NCHW references.
 *
 * Each case builds om_tensor descriptors and a task by hand inside a fake
 * omrt_model (kcase.h; no om file), runs the kind's check function (which
 * must accept it), then runs every block through rt_kernels[kind].run and compares with a
 * straightforward f32/f64 reference written here. f16 cases round inputs and
 * weights to fp16 before computing the reference, so the only differences
 * left are the output rounding and summation order. NC1HWC0 outputs must
 * keep their padding lanes at zero (outputs start filled with garbage).
 * Then: the branch-free fp16 conversions agree with common/fp16.h bit for
 * bit, and a
 * small network built with om_writer runs through the public API with 1 and
 * 2 threads and gives identical bytes.
 *
 * The kernels run on the paths rt_cpu() picks: the AVX2/FMA/F16C ones on
 * hosts that have them (checked, and printed first), with the 512-bit cube
 * micro-kernels where the host has AVX-512 unless OMRT_AVX512=0, the
 * portable C ones under OMRT_PORTABLE=1 (ctest runs all three:
 * unit/test_kernels, unit/test_kernels_avx2 and unit/test_kernels_portable).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/om_write.h"
#include "common/conv_group.h"
#include "common/fp16.h"
#include "omrt.h"
#include "runtime/kernels.h"
#include "kcase.h"
#include "support.h"

/* --- helpers */

static uint32_t rng_state = 12345;
static float frand(void) { /* [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / (float)(1u << 23) - 1.0f;
}

static float round_dt(float v, int dt) { return dt == DT_FLOAT16 ? half_to_float(float_to_half(v)) : v; }

static float *gen(size_t n, int dt, float scale) {
  float *v = malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = round_dt(frand() * scale, dt);
  return v;
}

/* max |got - ref| / max(1, max |ref|) <= tol */
static void compare(const char *what, const float *got, const float *ref, size_t n, double tol) {
  double maxref = 1.0, maxerr = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < n; i++)
    maxref = fmax(maxref, fabs(ref[i]));
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - ref[i]);
    if (!(e <= maxerr)) maxerr = e, worst = i;
  }
  int ok = maxerr / maxref <= tol;
  test_check(ok, __FILE__, __LINE__, what);
  if (!ok)
    test_note("  %s: error %g at %zu (got %g, want %g), tolerance %g", what, maxerr / maxref, worst,
              got[worst], ref[worst], tol);
}

/* Checks (must pass) and runs every block, in reverse order. */
static void kc_run(kcase *c) {
  omrt_status s = kc_check(c);
  CHECK_EQ_INT(s, OMRT_OK);
  if (s != OMRT_OK) {
    test_note("  %s", omrt_last_error());
    return;
  }
  kc_run_blocks(c, kc_core());
}

static void put_nd(kcase *c, int s, const float *v) {
  for (size_t i = 0; i < (size_t)(c->t[s].bytes / dtype_size((int)c->t[s].dtype)); i++)
    rt_put(c->data[s], (int)c->t[s].dtype, i, v[i]);
}

static void get_nd(const kcase *c, int s, float *v) {
  for (size_t i = 0; i < (size_t)(c->t[s].bytes / dtype_size((int)c->t[s].dtype)); i++)
    v[i] = rt_get(c->data[s], (int)c->t[s].dtype, i);
}

/* NC1HWC0 tensor -> NCHW values; checks the padding lanes are zero. */
static void get_5d(const kcase *c, int s, float *v) {
  const int64_t *d = c->t[s].dims;
  size_t badpad = 0;
  for (int64_t n = 0; n < d[0]; n++)
    for (int64_t ch = 0; ch < (d[1] + 15) / 16 * 16; ch++)
      for (int64_t h = 0; h < d[2]; h++)
        for (int64_t w = 0; w < d[3]; w++) {
          float x = rt_get(c->data[s], (int)c->t[s].dtype, nc1hwc0_at(d, n, ch, h, w));
          if (ch < d[1])
            v[(size_t)(((n * d[1] + ch) * d[2] + h) * d[3] + w)] = x;
          else
            badpad += x != 0.0f || signbit(x);
        }
  CHECK_EQ_INT(badpad, 0);
}

/* [Cout, Cin, KH, KW] values -> FRACTAL_Z (types.h's index formula). */
static void put_fz(kcase *c, int s, const float *v) {
  const int64_t *d = c->t[s].dims;
  int64_t n1 = (d[0] + 15) / 16;
  memset(c->data[s], 0, (size_t)c->t[s].bytes);
  size_t i = 0;
  for (int64_t co = 0; co < d[0]; co++)
    for (int64_t ci = 0; ci < d[1]; ci++)
      for (int64_t kh = 0; kh < d[2]; kh++)
        for (int64_t kw = 0; kw < d[3]; kw++) {
          size_t at = (size_t)((((((ci / 16) * d[2] + kh) * d[3] + kw) * n1 + co / 16) * 16 + ci % 16) * 16 +
                               co % 16);
          rt_put(c->data[s], (int)c->t[s].dtype, at, v[i++]);
        }
}

static size_t count4(const int64_t *d) { return (size_t)(d[0] * d[1] * d[2] * d[3]); }

static float act_ref(float v, int act, float lo, float hi) {
  if (act == OM_ACT_RELU) return v > 0 ? v : 0;
  if (act == OM_ACT_CLIP) return v < lo ? lo : v > hi ? hi : v;
  return v;
}

static int32_t fbits(float f) {
  int32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* --- CONV2D / DWCONV */

typedef struct conv_case {
  int64_t n, c, h, w, cout;
  int kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  int tm, tn, tk, bd;
  int xdt, ydt, bias, res, rdt, act;
  float lo, hi;
} conv_case;

static int64_t out_dim(int64_t in, int pa, int pb, int k, int d, int s) {
  return (in + pa + pb - d * (k - 1) - 1) / s + 1;
}

/* y = act(conv(x, w) + bias + res), NCHW, f64 accumulation. dw: depthwise;
 * else `groups` groups (w [Cout, Cin / groups, KH, KW]). */
static void conv_ref(const conv_case *k, int dw, int64_t groups, const float *x, const float *w,
                     const float *bias, const float *res, int64_t ho, int64_t wo, float *y) {
  if (dw) groups = k->c;
  const int64_t cin = k->c / groups, og = k->cout / groups;
  for (int64_t n = 0; n < k->n; n++)
    for (int64_t co = 0; co < k->cout; co++)
      for (int64_t oh = 0; oh < ho; oh++)
        for (int64_t ow = 0; ow < wo; ow++) {
          double acc = bias ? bias[co] : 0.0;
          for (int64_t ci = 0; ci < cin; ci++)
            for (int i = 0; i < k->kh; i++)
              for (int j = 0; j < k->kw; j++) {
                int64_t ih = oh * k->sh - k->pt + i * k->dh, iw = ow * k->sw - k->pl + j * k->dw;
                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w) continue;
                int64_t xc = co / og * cin + ci;
                acc += (double)x[((n * k->c + xc) * k->h + ih) * k->w + iw] *
                       w[((co * cin + ci) * k->kh + i) * k->kw + j];
              }
          size_t at = (size_t)(((n * k->cout + co) * ho + oh) * wo + ow);
          if (res) acc += res[at];
          y[at] = act_ref((float)acc, k->act, k->lo, k->hi);
        }
}

static uint64_t piece_run; /* the task runs of the pieces below (rt_core.run) */

/* A direct convolution's pieces (parts of each of the task's units) each
 * write their own bytes of y, every byte once (a byte counts as written
 * when it differs from the fill of either of two runs, 0xa5 and 0x5a), and
 * when cutting the image evenly into M tiles x parts leaves the last of
 * them the least a piece takes (32 pixels, 4 output rows for a kernel wider
 * than 1x1), no piece more than pixels / (M tiles x parts) of an image: a
 * short last tile does not make the others' pieces larger. */
static void check_piece_writes(kcase *c, const rt_args *a, int ys, uint64_t units, uint32_t parts) {
  const om_tensor *y = &c->t[ys];
  const size_t bytes = (size_t)y->bytes, esize = (size_t)dtype_size((int)y->dtype);
  const int64_t hw = y->dims[2] * y->dims[3], tm = c->task.params[OM_CONV_P_TILE_M];
  const int64_t fine = (hw + tm - 1) / tm * parts, even = (hw + fine - 1) / fine;
  const int32_t *q = c->task.params;
  const int64_t least = q[OM_CONV_P_KH] * q[OM_CONV_P_KW] == 1 ? 32 : 4 * y->dims[3];
  const int64_t most = hw - (fine - 1) * even >= least ? even : tm / parts; /* tm / parts: the tile's own */
  uint8_t *count = calloc(bytes, 1), *mask = malloc(bytes), *pixel = malloc((size_t)(y->dims[0] * hw));
  for (uint64_t p = 0; p < units * parts; p++) {
    memset(mask, 0, bytes);
    for (int fill = 0; fill < 2; fill++) {
      const uint8_t f = fill ? 0x5a : 0xa5;
      memset(c->data[ys], f, bytes);
      kc_core()->run = ++piece_run;
      rt_conv2d_piece(&c->task, a, p, 1, parts, kc_core());
      for (size_t i = 0; i < bytes; i++)
        mask[i] |= ((const uint8_t *)c->data[ys])[i] != f;
    }
    memset(pixel, 0, (size_t)(y->dims[0] * hw));
    int64_t pixels = 0;
    for (size_t i = 0; i < bytes; i++) {
      if (!mask[i]) continue;
      const size_t e = i / esize, img = e / C0 / (size_t)(y->dims[1] * hw), px = e / C0 % (size_t)hw;
      count[i]++;
      if (!pixel[img * (size_t)hw + px]) pixel[img * (size_t)hw + px] = 1, pixels++;
    }
    if (pixels > most) {
      test_check(0, __FILE__, __LINE__,
                 "a direct piece has at most pixels / (M tiles x parts) pixels (or tile_m / parts)");
      test_note("  piece %llu of %u parts: %lld pixels, at most %lld", (unsigned long long)p, parts,
                (long long)pixels, (long long)most);
    }
  }
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; i++)
    wrong += count[i] != 1;
  if (wrong) {
    test_check(0, __FILE__, __LINE__, "each byte of y written by one piece");
    test_note("  %u parts: %zu bytes written never or more than once", parts, wrong);
  }
  free(count), free(mask), free(pixel);
}

/* Runs every piece of the task's units, last unit first as a thief would,
 * in aligned runs: within a unit, one run of `head` pieces (0: none) and
 * then runs of `count` (kernels take runs of any power of two that divides
 * both parts and the run's first piece: team.c's claims). */
static void run_pieces(kcase *c, const rt_args *a, uint64_t units, uint32_t parts, uint32_t head,
                       uint32_t count) {
  kc_core()->run = ++piece_run;
  for (uint64_t u = units; u-- > 0;) {
    uint64_t p = u * parts, end = p + parts;
    if (head) rt_conv2d_piece(&c->task, a, p, head, parts, kc_core()), p += head;
    for (; p < end; p += count)
      rt_conv2d_piece(&c->task, a, p, count, parts, kc_core());
  }
}

/* A CONV2D task run as pieces (exec.c: what an idle AI core takes over
 * from a busy one) must write y bit for bit as its blocks did: with the
 * parts rt_conv2d_pieces chooses for a team of two (kc_core as one of its
 * cores), one piece at a time, in runs of the grain and in a run of half
 * a unit followed by single pieces (team.c's claims: a direct piece's run
 * is one tile of the pixels of its pieces), and one piece at a time with
 * every other split of 2, 3, 4 or 8 that divides the tile (tile_m; a
 * Winograd tile's tile_n). Each pass is a task run of its own
 * (rt_core.run), so that a Winograd piece reuses the input transform its
 * tile's previous piece left in L1, as on the executor's cores. The parts
 * chosen: a direct tile divides (into pieces of 32 pixels or more, 4
 * output rows with a kernel wider than 1x1) until the two workers have 2
 * pieces each, and then into up to 4 finer pieces each (the grain, taken as
 * one while a share lasts); a Winograd tile into pairs of n blocks or more,
 * grain 1. */
static void check_conv_pieces(kcase *c, int ys, int algo) {
  rt_args a;
  memset(&a, 0, sizeof a);
  for (uint32_t i = 0; i < c->task.ntensors; i++)
    if (c->task.tensors[i] != OM_NONE) a.data[i] = c->data[i], a.desc[i] = &c->t[i];
  uint32_t chosen = 0, grain = 0;
  kc_core()->nworkers = 2;
  const uint64_t units = rt_conv2d_pieces(&c->task, &a, kc_core(), &chosen, &grain);
  CHECK_EQ_INT(units > 0, 1);
  const int32_t *q = c->task.params;
  if (algo == OM_CONV_DIRECT) {
    const int64_t tm = q[OM_CONV_P_TILE_M], wo = c->t[ys].dims[3];
    const int64_t least = q[OM_CONV_P_KH] * q[OM_CONV_P_KW] == 1 ? 32 : 4 * wo;
    uint32_t want = 1, want_grain = 1;
    while (want < 8 && units * want < 4 && tm % (2 * want) == 0 && tm / (2 * want) >= least)
      want *= 2;
    while (want_grain < 4 && tm % (2 * want * want_grain) == 0 && tm / (2 * want * want_grain) >= least)
      want_grain *= 2;
    CHECK_EQ_INT(grain, want_grain);
    CHECK_EQ_INT(chosen, want * want_grain);
    if (q[OM_CONV_P_KH] * q[OM_CONV_P_KW] == 1 && tm == 64 && units < 4)
      CHECK_EQ_INT(chosen, 2); /* a 1x1 tile of 64 pixels: two pieces of 32 */
  }
  if (algo != OM_CONV_DIRECT) {
    CHECK_EQ_INT(chosen, q[OM_CONV_P_TILE_N] >= 4 && q[OM_CONV_P_TILE_N] % 2 == 0 ? 2 : 1);
    CHECK_EQ_INT(grain, 1);
  }
  const int32_t size = q[algo != OM_CONV_DIRECT ? OM_CONV_P_TILE_N : OM_CONV_P_TILE_M];
  const size_t bytes = (size_t)c->t[ys].bytes;
  uint8_t *want = malloc(bytes);
  memcpy(want, c->data[ys], bytes);
  /* the chosen parts one at a time, in runs of the grain, half a unit and then singles */
  const uint32_t runs[][2] = {{0, 1}, {0, grain}, {chosen / 2, 1}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    if (i > 0 && (runs[i][1] == 1 && runs[i][0] == 0)) continue;
    memset(c->data[ys], 0xa5, bytes);
    run_pieces(c, &a, units, chosen, runs[i][0], runs[i][1]);
    if (memcmp(c->data[ys], want, bytes) != 0) {
      test_check(0, __FILE__, __LINE__, "conv pieces write what the blocks wrote");
      test_note("  %u parts of a tile of %d, runs of %u after one of %u", chosen, (int)size, runs[i][1],
                runs[i][0]);
    }
  }
  if (algo == OM_CONV_DIRECT) check_piece_writes(c, &a, ys, units, chosen);
  const uint32_t splits[] = {2, 3, 4, 8};
  for (size_t i = 0; i < sizeof splits / sizeof *splits; i++) {
    const uint32_t parts = splits[i];
    if (parts == chosen || size % (int32_t)parts) continue;
    memset(c->data[ys], 0xa5, bytes);
    run_pieces(c, &a, units, parts, 0, 1);
    if (memcmp(c->data[ys], want, bytes) != 0) {
      test_check(0, __FILE__, __LINE__, "conv pieces write what the blocks wrote");
      test_note("  %u parts of a tile of %d", parts, (int)size);
    }
    if (algo == OM_CONV_DIRECT) check_piece_writes(c, &a, ys, units, parts);
  }
  kc_core()->run = 0, kc_core()->nworkers = 0; /* (kc_run's blocks: no reuse across cases) */
  memcpy(c->data[ys], want, bytes);
  free(want);
}

/* dw: depthwise (DWCONV); algo: CONV2D's om_conv_algo (OM_CONV_WINO_F43_FZ:
 * tm counts 4x4 tiles, tk input channel blocks per weight chunk). With
 * y_out, *y_out is a malloc'd copy of y's *bytes_out bytes. */
/* One case through the kernel and the reference. groups > 1: a grouped
 * CONV2D, its weights in FRACTAL_Z_G (common/conv_group.h). */
static void conv_case_run(const conv_case *k, int dw, int64_t groups, int algo, uint8_t **y_out,
                          size_t *bytes_out) {
  kcase c;
  kc_setup(&c, dw ? OM_TASK_DWCONV : OM_TASK_CONV2D, (uint32_t)k->bd, 0);
  int64_t ho = out_dim(k->h, k->pt, k->pb, k->kh, k->dh, k->sh);
  int64_t wo = out_dim(k->w, k->pl, k->pr, k->kw, k->dw, k->sw);
  int64_t xd[4] = {k->n, k->c, k->h, k->w}, yd[4] = {k->n, k->cout, ho, wo};
  int64_t wd[4] = {k->cout, k->c / groups, k->kh, k->kw}, wdd[4] = {1, k->c, k->kh, k->kw}, bd[1] = {k->cout};
  int64_t wgd[5] = {groups, k->cout / groups, k->c / groups, k->kh, k->kw};
  int xs = kc_add(&c, k->xdt, LAYOUT_NC1HWC0, 4, xd);
  int ws = dw           ? kc_add(&c, k->xdt, LAYOUT_NC1HWC0, 4, wdd)
           : groups > 1 ? kc_add(&c, k->xdt, LAYOUT_FRACTAL_Z_G, 5, wgd)
                        : kc_add(&c, k->xdt, LAYOUT_FRACTAL_Z, 4, wd);
  int bs = -1, rs = -1;
  if (k->bias)
    bs = kc_add(&c, DT_FLOAT32, LAYOUT_ND, 1, bd);
  else
    kc_none(&c);
  if (k->res)
    rs = kc_add(&c, k->rdt, LAYOUT_NC1HWC0, 4, yd);
  else
    kc_none(&c);
  int ys = kc_add(&c, k->ydt, LAYOUT_NC1HWC0, 4, yd);
  int32_t *q = c.task.params;
  q[OM_CONV_P_KH] = k->kh, q[OM_CONV_P_KW] = k->kw, q[OM_CONV_P_STRIDE_H] = k->sh,
  q[OM_CONV_P_STRIDE_W] = k->sw;
  q[OM_CONV_P_PAD_TOP] = k->pt, q[OM_CONV_P_PAD_LEFT] = k->pl, q[OM_CONV_P_PAD_BOTTOM] = k->pb;
  q[OM_CONV_P_PAD_RIGHT] = k->pr, q[OM_CONV_P_DILATION_H] = k->dh, q[OM_CONV_P_DILATION_W] = k->dw;
  q[OM_CONV_P_ACT] = k->act, q[OM_CONV_P_CLIP_MIN] = fbits(k->lo), q[OM_CONV_P_CLIP_MAX] = fbits(k->hi);
  q[OM_CONV_P_TILE_M] = k->tm, q[OM_CONV_P_TILE_N] = k->tn, q[OM_CONV_P_TILE_K] = k->tk;
  q[OM_CONV_P_ALGORITHM] = algo, q[OM_CONV_P_GROUPS] = groups > 1 ? (int32_t)groups : 0;

  size_t nw = dw ? (size_t)(k->c * k->kh * k->kw) : count4(wd);
  float *x = gen(count4(xd), k->xdt, 1.0f), *w = gen(nw, k->xdt, 0.5f);
  float *b = gen((size_t)k->cout, DT_FLOAT32, 1.0f), *r = gen(count4(yd), k->rdt, 1.0f);
  kc_put_nc1hwc0(&c, xs, x);
  convg_geom geo;
  if (dw)
    kc_put_nc1hwc0(&c, ws, w);
  else if (groups > 1 && !convg_init(wgd, &geo))
    convg_pack_rows(&geo, w, DT_FLOAT32, c.data[ws], k->xdt, 0, geo.c1out * 16);
  else
    put_fz(&c, ws, w);
  if (bs >= 0) put_nd(&c, bs, b);
  if (rs >= 0) kc_put_nc1hwc0(&c, rs, r);
  kc_run(&c);
  if (!dw && groups == 1) check_conv_pieces(&c, ys, algo); /* grouped tasks do not divide */
  if (y_out) {
    *bytes_out = (size_t)c.t[ys].bytes;
    *y_out = malloc(*bytes_out);
    memcpy(*y_out, c.data[ys], *bytes_out);
  }

  float *ref = malloc(count4(yd) * sizeof *ref), *got = malloc(count4(yd) * sizeof *got);
  conv_ref(k, dw, groups, x, w, bs >= 0 ? b : NULL, rs >= 0 ? r : NULL, ho, wo, ref);
  get_5d(&c, ys, got);
  char what[160];
  char kind[32];
  snprintf(kind, sizeof kind, "%s", dw ? "dwconv" : algo == OM_CONV_WINO_F43_FZ ? "winograd" : "conv");
  if (groups > 1) snprintf(kind, sizeof kind, "conv groups %lld", (long long)groups);
  snprintf(what, sizeof what, "%s %lldx%lldx%lldx%lld -> %lld k%dx%d s%d p%d,%d,%d,%d d%d %s->%s", kind,
           (long long)k->n, (long long)k->c, (long long)k->h, (long long)k->w, (long long)k->cout, k->kh,
           k->kw, k->sh, k->pt, k->pl, k->pb, k->pr, k->dh, dtype_name(k->xdt), dtype_name(k->ydt));
  /* Winograd's transforms cost a few f32 roundings more than direct sums */
  compare(what, got, ref, count4(yd),
          k->ydt == DT_FLOAT16     ? 1.5e-3
          : algo != OM_CONV_DIRECT ? 1e-5 * sqrt((double)k->c)
                                   : 2e-5);
  free(x), free(w), free(b), free(r), free(ref), free(got);
  kc_free(&c);
}

static void run_conv_case(const conv_case *k, int dw, int algo) { conv_case_run(k, dw, 1, algo, NULL, NULL); }

/* K chunks change how often partial sums go through L0C, never the sums
 * (om_format.h, CONV2D tile_k): on each kernel path y is the same bits for
 * every tile_k, one chunk or many, direct and Winograd. */
static void test_conv_chunks_exact(void) {
  const int F16 = DT_FLOAT16, F32 = DT_FLOAT32;
  /* clang-format off */
  const conv_case cases[] = {
      /* n c h w cout | kh kw sh sw pt pl pb pr dh dw | tm tn tk bd | xdt ydt bias res rdt act lo hi */
      {1, 40, 20, 20, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400, 10, 27, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 64, 12, 12, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144, 3, 36, 1, F32, F32, 1, 0, F32, 0, 0, 0},
      {1, 100, 9, 9, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 96, 2, 7, 1, F16, F16, 1, 0, F16, 0, 0, 0},
      {1, 72, 1, 1, 37, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 16, 3, 5, 1, F16, F32, 1, 0, F16, 0, 0, 0},
  };
  const conv_case wino = {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 4, 4, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0};
  /* clang-format on */
  for (size_t i = 0; i <= sizeof cases / sizeof *cases; i++) {
    conv_case k = i < sizeof cases / sizeof *cases ? cases[i] : wino;
    const int algo = i < sizeof cases / sizeof *cases ? OM_CONV_DIRECT : OM_CONV_WINO_F43_FZ;
    const int ks[] = {k.tk, 3, 2, 1};
    uint8_t *first = NULL;
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
      uint8_t *y;
      size_t bytes;
      k.tk = ks[j];
      rng_state = 777; /* the same inputs */
      conv_case_run(&k, 0, 1, algo, &y, &bytes);
      if (!first)
        first = y;
      else {
        if (memcmp(first, y, bytes) != 0) {
          test_check(0, __FILE__, __LINE__, "y is the same for every tile_k");
          test_note("  case %zu: tile_k %d differs from tile_k %d", i, ks[j], ks[0]);
        }
        free(y);
      }
    }
    free(first);
  }
}

static void test_conv2d(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  conv_case cases[] = {
      /* n c h w cout | kh kw sh sw pt pl pb pr dh dw | tm tn tk bd | xdt ydt bias res rdt act lo hi */
      /* ResNet-50 layer 2's tiling: 784 pixels in tiles of 208 (the last one 160), two n tiles */
      {1, 16, 28, 28, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 208, 2, 1, 8, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 3, 11, 13, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, 2, 3, F32, F32, 0, 0, F32, 0, 0, 0},
      {2, 17, 9, 7, 40, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 16, 2, 3, 4, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0},
      {1, 40, 15, 15, 33, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 32, 1, 4, 4, F16, F32, 1, 1, F16, OM_ACT_CLIP, 0, 0.6f},
      {1, 16, 8, 8, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 1, 1, 1, F32, F32, 0, 1, F32, OM_ACT_RELU, 0, 0},
      {1, 5, 12, 10, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 16, 1, 4, 7, F16, F16, 1, 1, F32, 0, 0, 0},
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 2, 2, 2, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {2, 3, 32, 32, 20, 7, 7, 2, 2, 3, 3, 2, 2, 1, 1, 32, 2, 2, 6, F32, F16, 1, 0, F32, OM_ACT_CLIP, -0.2f, 0.3f},
      {1, 48, 7, 9, 130, 1, 1, 2, 1, 0, 0, 0, 0, 1, 1, 16, 3, 2, 9, F32, F32, 1, 1, F16, 0, 0, 0},
      /* 1x1 stride 1 (the GEMM staging) with a partial channel block, K in chunks */
      {1, 40, 6, 5, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 32, 1, 1, 2, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {2, 24, 5, 7, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 16, 2, 2, 5, F32, F32, 0, 0, F32, 0, 0, 0},
      /* one output pixel (fully connected; 3x3 on a 3x3 image): the matrix-vector path */
      {1, 72, 1, 1, 37, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 16, 2, 3, 2, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 20, 3, 3, 40, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 16, 1, 4, 3, F32, F32, 1, 0, F32, 0, 0, 0},
      /* ... with tiles of 7 and 5 n blocks: four fractals at a time, then one */
      {1, 40, 1, 1, 100, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 16, 7, 3, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 33, 1, 1, 150, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 16, 5, 3, 2, F32, F32, 1, 0, F32, 0, 0, 0},
      /* whole channel blocks: the direct (no img2col) path, strided and dilated */
      {1, 32, 11, 10, 24, 3, 3, 2, 1, 2, 1, 2, 1, 2, 2, 32, 1, 3, 3, F16, F16, 1, 1, F32, OM_ACT_CLIP, -0.5f, 0.5f},
      {2, 16, 9, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 2, 4, 5, F32, F32, 1, 1, F32, OM_ACT_RELU, 0, 0},
      /* 3-channel stem: more than tile_k fractals per staged chunk */
      {1, 3, 30, 30, 24, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 64, 2, 2, 3, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0},
      /* patch embeddings (ViT): 16x16x3 kernels, two n blocks' f32 weights in L0B at a time, and
       * 32x32x3, one block's weights larger than L0B (kernel rows in chunks, partial sums in L0C) */
      {1, 3, 48, 48, 40, 16, 16, 16, 16, 0, 0, 0, 0, 1, 1, 16, 2, 128, 2, F16, F16, 1, 0, F16, 0, 0, 0},
      {1, 3, 64, 96, 40, 32, 32, 32, 32, 0, 0, 0, 0, 1, 1, 16, 1, 16, 3, F16, F32, 1, 0, F16, 0, 0, 0},
      {1, 3, 64, 64, 24, 32, 32, 32, 32, 0, 0, 0, 0, 1, 1, 16, 2, 100, 1, F32, F32, 1, 0, F32, 0, 0, 0},
      /* chunks whose rows of the whole tile do not fit L0A (groups of pixels) and whose fractals of all
       * its n blocks do not fit L0B (passes): one chunk of K = 27, then chunks of 10 */
      {1, 40, 20, 20, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400, 10, 27, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 40, 20, 20, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400, 10, 10, 1, F32, F32, 1, 0, F32, 0, 0, 0},
      {1, 100, 20, 20, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 400, 2, 6, 1, F16, F32, 0, 1, F16, OM_ACT_RELU, 0, 0},
      /* ... the direct path (whole channel blocks): K = 36 in one chunk and in chunks of 5 */
      {1, 64, 20, 20, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400, 10, 36, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 64, 20, 20, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 400, 10, 5, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      /* the last stages' small maps, whose tiles of at most 96 pixels fetch each pass's weights a block
       * ahead: 7x7 1x1 with K in chunks against five n blocks (fp16 and fp32), 13x13 3x3 on 40 channels
       * (img2col), 14x14 3x3 on 48 (direct), channels that are not multiples of 16 */
      {1, 40, 7, 7, 72, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 5, 2, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 40, 7, 7, 72, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 5, 2, 1, F32, F32, 1, 0, F32, 0, 0, 0},
      {1, 40, 13, 13, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 96, 3, 7, 2, F16, F32, 1, 0, F16, 0, 0, 0},
      {1, 48, 14, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 96, 3, 10, 3, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_conv_case(&cases[i], 0, OM_CONV_DIRECT);
}

/* Dilated windows on small maps, whose outer taps read only padding for
 * whole tiles (DeepLab's ASPP): the tiles skip those taps
 * (rt_conv_tap_dead), the x86 tiles also per group of pixels of their
 * micro-kernel. Against the reference, for dilations 1 .. 8, strides,
 * pads as large as the image, odd channels (img2col) and whole blocks (the
 * direct path), chunks left with no live tap; and bit for bit against tiles
 * of the whole image, which skip less (a skipped tap only added zeros). */
static void test_conv_dead_taps(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  conv_case cases[] = {
      /* n c h w cout | kh kw sh sw pt pl pb pr dh dw | tm tn tk bd | xdt ydt bias res rdt act lo hi */
      {1, 32, 8, 8, 24, 3, 3, 1, 1, 6, 6, 6, 6, 6, 6, 16, 1, 5, 2, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 20, 6, 6, 17, 3, 3, 1, 1, 8, 8, 8, 8, 8, 8, 16, 2, 2, 1, F32, F32, 1, 0, F32, 0, 0, 0},
      {2, 17, 13, 11, 20, 3, 3, 2, 2, 5, 1, 4, 6, 3, 3, 16, 1, 3, 3, F16, F32, 1, 0, F16, 0, 0, 0},
      {1, 16, 4, 5, 16, 5, 5, 1, 1, 6, 6, 6, 6, 2, 2, 16, 1, 7, 2, F16, F16, 0, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 24, 3, 4, 40, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 16, 3, 9, 1, F32, F32, 1, 1, F32, 0, 0, 0},
      {1, 48, 10, 10, 32, 3, 3, 1, 1, 7, 7, 7, 7, 7, 7, 16, 2, 36, 3, F16, F16, 1, 0, F16, 0, 0, 0},
      /* ASPP's rates 12 and 24 on a 32x32 map, tiles of 8 rows: taps dead for some pixel groups of a tile
       * only (groups kept within rows: the first or last 12 pixels of each row read padding through a
       * column of taps); whole blocks (the direct path) and odd channels (img2col) */
      {1, 32, 32, 32, 24, 3, 3, 1, 1, 12, 12, 12, 12, 12, 12, 256, 2, 5, 4, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 20, 32, 32, 17, 3, 3, 1, 1, 24, 24, 24, 24, 24, 24, 256, 2, 4, 4, F32, F32, 1, 0, F32, 0, 0, 0},
      /* strides 2 with 7 columns of padding at each end of a row (17 outputs), pads unequal */
      {1, 17, 20, 21, 16, 3, 3, 2, 2, 9, 14, 8, 14, 8, 8, 64, 1, 3, 3, F16, F32, 1, 0, F16, 0, 0, 0},
  };
  /* clang-format on */
  const size_t ncases = sizeof cases / sizeof *cases;
  for (size_t i = 0; i < ncases + 8; i++) {
    conv_case k = cases[i < ncases ? i : 0];
    if (i >= ncases) { /* dilations 1 .. 8 on a 9x10 map, pads = dilation */
      const int d = (int)(i - ncases) + 1;
      k = (conv_case){1, d % 2 ? 16 : 24,   9,   10, 20, 3,   3, 1, 1, d, d, d, d, d, d, 16, 1, 4,
                      2, d % 3 ? F16 : F32, F16, 1,  0,  F16, 0, 0, 0};
    }
    const int64_t pixels =
        out_dim(k.h, k.pt, k.pb, k.kh, k.dh, k.sh) * out_dim(k.w, k.pl, k.pr, k.kw, k.dw, k.sw);
    uint8_t *small, *whole;
    size_t bytes, bytes2;
    rng_state = 4242;
    conv_case_run(&k, 0, 1, OM_CONV_DIRECT, &small, &bytes);
    k.tm = (int)((pixels + 15) / 16 * 16), k.bd = 1;
    rng_state = 4242;
    conv_case_run(&k, 0, 1, OM_CONV_DIRECT, &whole, &bytes2);
    if (bytes != bytes2 || memcmp(small, whole, bytes) != 0) {
      test_check(0, __FILE__, __LINE__, "tiles that skip dead taps write what whole-image tiles write");
      test_note("  case %zu", i);
    }
    free(small), free(whole);
  }
}

/* Winograd F(4x4,3x3) against the direct reference: odd H and W (partial
 * 4x4 tiles), padding on some sides only, channels not multiples of 16,
 * batch 2, f16 and f32, several blocks and tile splits. */
/* Grouped convolutions (FRACTAL_Z_G, kernels_cube_group.c) against the
 * reference: group widths 8 (one 16-channel block holds two groups: the x86
 * tile multiplies only the fractals' two diagonal 8x8 blocks, rt_conv_geom
 * .diag8), 16 (a group a block), 24 (blocks straddling groups) and 48 (runs
 * of several blocks); 1x1 and 3x3 windows, stride 1 and 2, 7x7 and 14x14
 * maps, channel counts not multiples of 16 (104 = 13 x 8: a last block of
 * one group, 8 real lanes), K whole or in chunks, f16 and f32, tiles
 * splitting both M and N. */
static void test_conv_grouped(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  const struct {
    conv_case c;
    int64_t groups;
  } cases[] = {
      /* {n c h w cout | kh kw sh sw pt pl pb pr dh dw | tm tn tk bd | xdt ydt bias res rdt act lo hi}, groups */
      {{1, 104, 14, 14, 104, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 112, 7, 9, 2, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0}, 13},
      {{1, 104, 14, 14, 104, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 64, 3, 9, 3, F32, F32, 1, 1, F32, 0, 0, 0}, 13},
      {{1, 48, 7, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 3, 3, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0}, 6},
      {{1, 40, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 2, 4, 4, F32, F32, 0, 0, F32, 0, 0, 0}, 5},
      {{2, 56, 7, 7, 56, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 4, 1, 2, F16, F32, 1, 0, F16, 0, 0, 0}, 7},
      {{1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 112, 4, 9, 2, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0}, 4},
      {{1, 64, 14, 14, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 64, 2, 5, 2, F32, F32, 1, 0, F32, 0, 0, 0}, 4},
      {{1, 80, 7, 7, 80, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 5, 1, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0}, 5},
      {{1, 72, 14, 14, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 112, 5, 18, 2, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0}, 3},
      {{1, 72, 7, 7, 72, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 64, 5, 1, 1, F32, F32, 1, 1, F32, 0, 0, 0}, 3},
      {{1, 96, 7, 7, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 3, 7, 2, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0}, 2},
      {{1, 96, 14, 14, 96, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 112, 6, 2, 2, F32, F32, 1, 0, F32, 0, 0, 0}, 2},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    conv_case_run(&cases[i].c, 0, cases[i].groups, OM_CONV_DIRECT, NULL, NULL);
  /* the runs the tiles walk (convg_run_of, convg_run_next) against each block's input range: every
   * block of a run has the run's range, runs are maximal, a run's base is the fractals of the blocks
   * before it */
  const int64_t dims[][5] = {{13, 8, 8, 3, 3},  {3, 24, 24, 1, 1}, {2, 48, 48, 3, 3},
                             {5, 24, 12, 3, 3}, {7, 6, 10, 1, 1},  {1, 40, 40, 3, 3}};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    convg_geom geo;
    CHECK_EQ_INT(convg_init(dims[i], &geo), 0);
    convg_run walk, at;
    convg_run_of(&geo, 0, &walk);
    uint64_t before = 0; /* fractals of the blocks before nb */
    for (int64_t nb = 0; nb < geo.c1out; nb++) {
      if (nb >= walk.nb0 + walk.len) convg_run_next(&geo, &walk);
      convg_run_of(&geo, nb, &at);
      int64_t lo, hi, plo = -1, phi = -1, nlo = -1, nhi = -1;
      convg_block_range(&geo, nb, &lo, &hi);
      if (walk.nb0 > 0) convg_block_range(&geo, walk.nb0 - 1, &plo, &phi);
      if (walk.nb0 + walk.len < geo.c1out) convg_block_range(&geo, walk.nb0 + walk.len, &nlo, &nhi);
      CHECK_EQ_INT(walk.nb0 <= nb && nb < walk.nb0 + walk.len && walk.c1_lo == lo && walk.c1_hi == hi &&
                       (plo != lo || phi != hi) && (nlo != lo || nhi != hi) &&
                       walk.base + (uint64_t)((nb - walk.nb0) * (hi - lo) * geo.taps) == before,
                   1);
      CHECK_EQ_INT(walk.nb0 == at.nb0 && walk.len == at.len && walk.base == at.base, 1);
      before += (uint64_t)((hi - lo) * geo.taps);
    }
  }
}

static void test_winograd(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  conv_case cases[] = {
      /* n c h w cout | kh kw sh sw pt pl pb pr dh dw | tm tn tk bd | xdt ydt bias res rdt act lo hi */
      {1, 20, 11, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 2, 5, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 1, 2, F32, F32, 1, 0, F32, 0, 0, 0},
      {2, 3, 9, 7, 40, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2, 2, 1, 3, F16, F32, 1, 1, F32, OM_ACT_CLIP, -0.3f, 0.4f},
      {1, 33, 14, 14, 17, 3, 3, 1, 1, 2, 0, 1, 2, 1, 1, 6, 1, 3, 4, F32, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 2, 4, 2, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {2, 48, 6, 17, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 3, 5, F32, F32, 0, 1, F16, 0, 0, 0},
      /* 72 tiles x 3 channel blocks in one task tile: on AVX-512 hosts a pair of blocks in slabs of rows
       * (L0C holds both blocks' sums for 56 tiles), then the odd block alone */
      {1, 32, 34, 30, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 72, 3, 2, 1, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      /* dilated: per phase of the output (wino_f43_tiles), 2 phases of 16 x 16 pixels per dim; 4 phases of
       * 4 and 3 pixels (13 and 11 outputs: partial tiles, phases of unequal length); dilations 2 and 3 with
       * uneven pads */
      {1, 32, 32, 32, 40, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 16, 2, 2, 3, F16, F16, 1, 1, F16, OM_ACT_RELU, 0, 0},
      {1, 20, 13, 11, 17, 3, 3, 1, 1, 4, 4, 4, 4, 4, 4, 5, 1, 2, 2, F16, F32, 1, 1, F32, OM_ACT_CLIP, -0.3f, 0.4f},
      {2, 16, 10, 14, 24, 3, 3, 1, 1, 1, 3, 2, 2, 2, 3, 7, 1, 1, 5, F32, F32, 1, 1, F32, 0, 0, 0},
  };
  /* clang-format on */
  /* Each in K chunks of tile_k input channel blocks: C1in (one chunk),
   * C1in - 1 (a short last chunk) and 1. */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    conv_case k = cases[i];
    const int c1 = (int)((k.c + 15) / 16);
    run_conv_case(&k, 0, OM_CONV_WINO_F43_FZ);
    k.tk = c1 > 1 ? c1 - 1 : 1;
    run_conv_case(&k, 0, OM_CONV_WINO_F43_FZ);
    k.tk = 1;
    run_conv_case(&k, 0, OM_CONV_WINO_F43_FZ);
  }
}

static void test_dwconv(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  conv_case cases[] = {
      {1, 20, 9, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 2, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0},
      {2, 3, 8, 7, 3, 5, 5, 2, 2, 2, 1, 0, 2, 1, 1, 0, 0, 0, 2, F32, F32, 0, 1, F32, 0, 0, 0},
      {1, 33, 10, 6, 33, 3, 3, 2, 1, 1, 0, 2, 1, 2, 1, 0, 0, 0, 3, F32, F16, 1, 1, F16, OM_ACT_CLIP, 0.1f, 0.5f},
      /* rows wide enough for the AVX2 path's 8-pixel blocks, with edge columns on both sides: each fast shape
       * (3x3 and 5x5, stride 1 and 2, 3x3 dilation 2, 7x7), f16 and f32, and one it does not cover (7x7
       * stride 2) */
      {1, 32, 6, 37, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 2, F16, F16, 1, 1, F16, OM_ACT_CLIP, 0.0f, 6.0f},
      {1, 16, 7, 45, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, F16, F16, 1, 0, F16, OM_ACT_RELU, 0, 0},
      {1, 24, 7, 29, 24, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 0, 0, 0, 2, F32, F32, 1, 1, F32, 0, 0, 0},
      {2, 40, 9, 33, 40, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, 3, F16, F32, 0, 0, F16, 0, 0, 0},
      {1, 16, 7, 23, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 1, F16, F16, 1, 0, F16, 0, 0, 0},
      {1, 16, 9, 20, 16, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 0, 0, 0, 1, F32, F32, 1, 0, F32, OM_ACT_RELU, 0, 0},
      {1, 40, 9, 30, 40, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 0, 0, 0, 2, F16, F16, 1, 1, F16, 0, 0, 0},
      {1, 16, 7, 7, 16, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 0, 0, 0, 1, F16, F16, 1, 0, F16, 0, 0, 0},
      {1, 24, 11, 33, 24, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 0, 0, 0, 1, F32, F16, 1, 0, F32, OM_ACT_RELU, 0, 0},
      {1, 16, 4, 4, 16, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, F16, F16, 1, 0, F16, 0, 0, 0},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_conv_case(&cases[i], 1, OM_CONV_DIRECT);
}

/* --- POOL */

typedef struct pool_case {
  int64_t n, c, h, w, ho, wo;
  int kh, kw, sh, sw, pt, pl, pb, pr, avg, include_pad, bd, xdt, ydt;
} pool_case;

static void pool_ref(const pool_case *k, const float *x, float *y) {
  for (int64_t n = 0; n < k->n; n++)
    for (int64_t ch = 0; ch < k->c; ch++)
      for (int64_t oh = 0; oh < k->ho; oh++)
        for (int64_t ow = 0; ow < k->wo; ow++) {
          double acc = k->avg ? 0.0 : -INFINITY;
          int count = 0;
          for (int i = 0; i < k->kh; i++)
            for (int j = 0; j < k->kw; j++) {
              int64_t ih = oh * k->sh - k->pt + i, iw = ow * k->sw - k->pl + j;
              int in_pad = ih < k->h + k->pb && iw < k->w + k->pr;
              if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w) {
                count += k->include_pad && in_pad;
                continue;
              }
              float v = x[((n * k->c + ch) * k->h + ih) * k->w + iw];
              count++;
              acc = k->avg ? acc + v : fmax(acc, v);
            }
          y[((n * k->c + ch) * k->ho + oh) * k->wo + ow] = (float)(k->avg ? acc / count : acc);
        }
}

static void test_pool(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* clang-format off */
  pool_case cases[] = {
      /* n c h w ho wo | kh kw sh sw pt pl pb pr avg incl bd xdt ydt */
      {1, 17, 11, 11, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 2, F16, F16},  /* max, floor */
      {1, 20, 10, 10, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 2, F32, F32},  /* avg, ceil */
      {1, 20, 10, 10, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, F16, F32},  /* avg, ceil, incl pad */
      {2, 40, 7, 7, 1, 1, 7, 7, 1, 1, 0, 0, 0, 0, 1, 0, 5, F16, F16},    /* global avg */
      {1, 3, 9, 8, 5, 4, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, F32, F16},     /* avg 2x2 ceil H */
      {2, 33, 9, 9, 4, 4, 3, 3, 2, 2, 0, 0, 0, 0, 0, 0, 6, F32, F32},    /* max, no pad */
      {1, 16, 6, 7, 4, 3, 3, 2, 2, 3, 2, 0, 1, 1, 1, 1, 1, F32, F32},    /* asymmetric */
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const pool_case *k = &cases[i];
    kcase c;
    kc_setup(&c, OM_TASK_POOL, (uint32_t)k->bd, 0);
    int64_t xd[4] = {k->n, k->c, k->h, k->w}, yd[4] = {k->n, k->c, k->ho, k->wo};
    int xs = kc_add(&c, k->xdt, LAYOUT_NC1HWC0, 4, xd), ys = kc_add(&c, k->ydt, LAYOUT_NC1HWC0, 4, yd);
    int32_t *q = c.task.params;
    q[OM_POOL_P_KH] = k->kh, q[OM_POOL_P_KW] = k->kw, q[OM_POOL_P_STRIDE_H] = k->sh,
    q[OM_POOL_P_STRIDE_W] = k->sw;
    q[OM_POOL_P_PAD_TOP] = k->pt, q[OM_POOL_P_PAD_LEFT] = k->pl, q[OM_POOL_P_PAD_BOTTOM] = k->pb;
    q[OM_POOL_P_PAD_RIGHT] = k->pr, q[OM_POOL_P_MODE] = k->avg,
    q[OM_POOL_P_COUNT_INCLUDE_PAD] = k->include_pad;
    float *x = gen(count4(xd), k->xdt, 2.0f), *ref = malloc(count4(yd) * 4), *got = malloc(count4(yd) * 4);
    kc_put_nc1hwc0(&c, xs, x);
    kc_run(&c);
    pool_ref(k, x, ref);
    get_5d(&c, ys, got);
    char what[64];
    snprintf(what, sizeof what, "pool case %zu", i);
    compare(what, got, ref, count4(yd), k->ydt == F16 ? 1e-3 : 1e-6);
    free(x), free(ref), free(got);
    kc_free(&c);
  }
}

/* --- COPY_SLICE (Concat) */

/* Concatenates random x_i along `axis` into y through one task per input. */
static void concat_case(int layout, int rank, const int64_t *ydims, int axis, const int64_t *parts,
                        int nparts, int xdt, int ydt, int bd) {
  size_t yn = 1, inner = 1, outer = 1;
  for (int d = 0; d < rank; d++)
    yn *= (size_t)ydims[d];
  for (int d = 0; d < axis; d++)
    outer *= (size_t)ydims[d];
  for (int d = axis + 1; d < rank; d++)
    inner *= (size_t)ydims[d];
  float *ref = malloc(yn * 4), *got = malloc(yn * 4);
  void *ydata = NULL;
  int64_t off = 0;
  for (int p = 0; p < nparts; p++) {
    kcase c;
    kc_setup(&c, OM_TASK_COPY_SLICE, (uint32_t)bd, 0);
    int64_t xdims[MAX_RANK];
    memcpy(xdims, ydims, (size_t)rank * sizeof *xdims);
    xdims[axis] = parts[p];
    int xs = kc_add(&c, xdt, layout, rank, xdims), ys = kc_add(&c, ydt, layout, rank, ydims);
    if (ydata) /* keep the earlier slices */
      memcpy(c.data[ys], ydata, (size_t)c.t[ys].bytes);
    else /* NaNs: a lane no slice writes shows */
      memset(c.data[ys], 0xff, (size_t)c.t[ys].bytes);
    c.task.params[OM_COPY_SLICE_P_AXIS] = axis, c.task.params[OM_COPY_SLICE_P_OFFSET] = (int32_t)off;
    size_t xn = yn / (size_t)ydims[axis] * (size_t)parts[p];
    float *x = gen(xn, xdt, 1.0f);
    for (size_t o = 0; o < outer; o++)
      for (size_t k = 0; k < (size_t)parts[p] * inner; k++)
        ref[(o * (size_t)ydims[axis] + (size_t)off) * inner + k] =
            round_dt(x[o * (size_t)parts[p] * inner + k], ydt);
    if (layout == LAYOUT_NC1HWC0)
      kc_put_nc1hwc0(&c, xs, x);
    else
      put_nd(&c, xs, x);
    kc_run(&c);
    free(ydata);
    ydata = malloc((size_t)c.t[ys].bytes);
    memcpy(ydata, c.data[ys], (size_t)c.t[ys].bytes);
    if (p == nparts - 1) {
      if (layout == LAYOUT_NC1HWC0)
        get_5d(&c, ys, got);
      else
        get_nd(&c, ys, got);
    }
    free(x);
    kc_free(&c);
    off += parts[p];
  }
  char what[80];
  snprintf(what, sizeof what, "concat %s axis %d, %d parts", layout_name(layout), axis, nparts);
  compare(what, got, ref, yn, 0.0);
  free(ref), free(got), free(ydata);
}

static void test_copy_slice(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  int64_t nd[3] = {2, 9, 4}, p1[3] = {3, 4, 2};
  concat_case(LAYOUT_ND, 3, nd, 1, p1, 3, F32, F16, 2);
  int64_t nd0[3] = {7, 3, 5}, p0[2] = {4, 3};
  concat_case(LAYOUT_ND, 3, nd0, 0, p0, 2, F16, F16, 3);
  int64_t y37[4] = {2, 37, 3, 5}, c37[2] = {20, 17};
  concat_case(LAYOUT_NC1HWC0, 4, y37, 1, c37, 2, F16, F32, 2);
  int64_t y41[4] = {1, 41, 3, 3}, c41[3] = {16, 9, 16};
  concat_case(LAYOUT_NC1HWC0, 4, y41, 1, c41, 3, F32, F32, 1);
  /* one dtype: lanes move as runs (ShuffleNet's 58 + 58; parts straddling blocks) */
  int64_t y116[4] = {1, 116, 3, 3}, c116[2] = {58, 58};
  concat_case(LAYOUT_NC1HWC0, 4, y116, 1, c116, 2, F16, F16, 1);
  int64_t y39[4] = {2, 39, 2, 5}, c39[3] = {5, 20, 14};
  concat_case(LAYOUT_NC1HWC0, 4, y39, 1, c39, 3, F16, F16, 2);
  int64_t y48[4] = {2, 48, 2, 3}, c48[2] = {32, 16};
  concat_case(LAYOUT_NC1HWC0, 4, y48, 1, c48, 2, F16, F16, 2);
  int64_t yn[4] = {5, 19, 2, 3}, cn[2] = {2, 3};
  concat_case(LAYOUT_NC1HWC0, 4, yn, 0, cn, 2, F32, F16, 4);
  int64_t yh[4] = {2, 19, 7, 3}, ch[2] = {3, 4};
  concat_case(LAYOUT_NC1HWC0, 4, yh, 2, ch, 2, F16, F16, 3);
  int64_t yw[4] = {1, 5, 2, 6}, cw[3] = {1, 2, 3};
  concat_case(LAYOUT_NC1HWC0, 4, yw, 3, cw, 3, F32, F32, 2);
}

/* --- TRANSDATA */

static void transdata_cases(const int64_t *shape);
static void transdata_reshape(void);
static void transdata_bytes(void);

static void test_transdata(void) {
  /* W = 21: the x86 paths' 8-pixel transposes plus a tail (their last 8
   * columns again); W = 9: a tail overlapping 7 columns; W = 5: a row
   * shorter than one transpose; C = 19: a channel block with real and
   * padding halves; {2, 40, 5, 16}: whole 8-channel groups in both images,
   * the block split cutting through them. */
  const int64_t shapes[4][4] = {{2, 17, 3, 5}, {1, 19, 3, 21}, {2, 40, 5, 16}, {1, 33, 2, 9}};
  for (int sh = 0; sh < 4; sh++)
    transdata_cases(shapes[sh]);
  transdata_reshape();
  transdata_bytes();
}

/* u8 / i8 ND -> NC1HWC0 moves the bytes: every byte of y, the padding
 * lanes 0, against a direct index of x. C = 3: an RGB input (one word of
 * each pixel's two); C = 19: a whole channel block (both words) and a
 * partial one; C = 11: more than one word's channels in a partial block. */
static void transdata_bytes(void) {
  const int64_t shapes[3][4] = {{1, 3, 4, 21}, {2, 19, 3, 5}, {1, 11, 2, 9}};
  for (int sh = 0; sh < 3; sh++)
    for (int dt = 0; dt < 2; dt++) {
      const int64_t *d = shapes[sh], c1 = (d[1] + 15) / 16;
      kcase c;
      kc_setup(&c, OM_TASK_TRANSDATA, 2, 0);
      int ss = kc_add(&c, dt ? DT_INT8 : DT_UINT8, LAYOUT_ND, 4, d),
          ds = kc_add(&c, dt ? DT_INT8 : DT_UINT8, LAYOUT_NC1HWC0, 4, d);
      uint8_t *x = c.data[ss], *y = c.data[ds];
      for (uint64_t i = 0; i < c.t[ss].bytes; i++)
        x[i] = (uint8_t)(i * 37u + 11u);
      memset(y, 0xa5, c.t[ds].bytes);
      kc_run(&c);
      size_t bad = 0;
      for (int64_t n = 0; n < d[0]; n++)
        for (int64_t cb = 0; cb < c1; cb++)
          for (int64_t hw = 0; hw < d[2] * d[3]; hw++)
            for (int64_t l = 0; l < 16; l++) {
              int64_t ch = cb * 16 + l;
              uint8_t want = ch < d[1] ? x[(n * d[1] + ch) * d[2] * d[3] + hw] : 0;
              bad += y[((n * c1 + cb) * d[2] * d[3] + hw) * 16 + l] != want;
            }
      CHECK(bad == 0);
      if (bad) test_note("  transdata bytes C %lld dtype %d: %zu bytes differ", (long long)d[1], dt, bad);
      kc_free(&c);
    }
}

static void transdata_cases(const int64_t *shape) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  int64_t d[4] = {shape[0], shape[1], shape[2], shape[3]};
  size_t n = count4(d);
  /* clang-format off */
  struct { int sl, dl, sdt, ddt, bd; } cases[] = {
      {LAYOUT_ND, LAYOUT_NC1HWC0, F32, F16, 5}, {LAYOUT_NC1HWC0, LAYOUT_ND, F16, F32, 7},
      {LAYOUT_ND, LAYOUT_NC1HWC0, F16, F16, 1}, {LAYOUT_NC1HWC0, LAYOUT_ND, F32, F32, 3},
      {LAYOUT_NC1HWC0, LAYOUT_NC1HWC0, F32, F16, 4}, {LAYOUT_ND, LAYOUT_ND, F32, F16, 6},
      {LAYOUT_NC1HWC0, LAYOUT_ND, F16, F16, 2},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    kcase c;
    kc_setup(&c, OM_TASK_TRANSDATA, (uint32_t)cases[i].bd, 0);
    int ss = kc_add(&c, cases[i].sdt, cases[i].sl, 4, d), ds = kc_add(&c, cases[i].ddt, cases[i].dl, 4, d);
    float *x = gen(n, cases[i].sdt, 3.0f), *ref = malloc(n * 4), *got = malloc(n * 4);
    for (size_t j = 0; j < n; j++)
      ref[j] = round_dt(x[j], cases[i].ddt);
    if (cases[i].sl == LAYOUT_ND)
      put_nd(&c, ss, x);
    else
      kc_put_nc1hwc0(&c, ss, x);
    kc_run(&c);
    if (cases[i].dl == LAYOUT_ND)
      get_nd(&c, ds, got);
    else
      get_5d(&c, ds, got);
    char what[64];
    snprintf(what, sizeof what, "transdata case %zu (W %lld)", i, (long long)d[3]);
    compare(what, got, ref, n, 0.0);
    free(x), free(ref), free(got);
    kc_free(&c);
  }
}

static void transdata_reshape(void) {
  const int F32 = DT_FLOAT32, F16 = DT_FLOAT16;
  /* ND -> ND reshape [2, 255] -> [510] */
  kcase c;
  kc_setup(&c, OM_TASK_TRANSDATA, 4, 0);
  int64_t a[2] = {2, 255}, b[1] = {510};
  int ss = kc_add(&c, F16, LAYOUT_ND, 2, a), ds = kc_add(&c, F32, LAYOUT_ND, 1, b);
  float *x = gen(510, F16, 2.0f), *got = malloc(510 * 4);
  put_nd(&c, ss, x);
  kc_run(&c);
  get_nd(&c, ds, got);
  compare("transdata reshape", got, x, 510, 0.0);
  free(x), free(got);
  kc_free(&c);
}

/* --- fp16 conversions agree with common/fp16.h */

static void test_fp16(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float a = rt_h2f((uint16_t)h), b = half_to_float((uint16_t)h);
    bad += memcmp(&a, &b, 4) != 0;
  }
  CHECK_EQ_INT(bad, 0);
  bad = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 997) {
    float f = rt_bits_f32((uint32_t)u);
    bad += rt_f2h(f) != float_to_half(f);
  }
  /* every rounding boundary around the half grid, both signs */
  for (uint32_t h = 0; h < 0x7c00u; h++)
    for (int s = 0; s < 2; s++)
      for (int32_t dlt = -2; dlt <= 2; dlt++) {
        float f = half_to_float((uint16_t)h);
        uint32_t mid = rt_f32_bits(f) + (h < 0x400 ? 0 : 0x1000u); /* halfway up for normals */
        float g = rt_bits_f32((uint32_t)((int32_t)mid + dlt) | (s ? 0x80000000u : 0));
        bad += rt_f2h(g) != float_to_half(g);
      }
  CHECK_EQ_INT(bad, 0);
}

/* --- public API, 1 and 2 threads */

static uint32_t add_t(om_writer *w, const char *name, int region, uint32_t index, int dt, int layout,
                      int rank, const int64_t *dims, uint64_t offset) {
  om_tensor t = {.name = om_writer_string(w, name),
                 .region = (uint32_t)region,
                 .index = index,
                 .dtype = (uint32_t)dt,
                 .layout = (uint32_t)layout,
                 .rank = (uint32_t)rank,
                 .offset = offset};
  memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
  uint64_t n = 0;
  layout_elements(layout, rank, dims, &n);
  t.bytes = n * dtype_size(dt);
  return om_writer_add_tensor(w, &t);
}

static uint32_t add_weights(om_writer *w, const char *name, int dt, int layout, int rank, const int64_t *dims,
                            const float *v) {
  kcase c; /* reuse the packers */
  kc_setup(&c, OM_TASK_TRANSDATA, 1, 0);
  int s = kc_add(&c, dt, layout, rank, dims);
  if (layout == LAYOUT_FRACTAL_Z)
    put_fz(&c, s, v);
  else
    put_nd(&c, s, v);
  uint64_t off = 0;
  om_writer_add_weights(w, c.data[s], c.t[s].bytes, &off);
  uint32_t idx = add_t(w, name, OM_REGION_WEIGHTS, 0, dt, layout, rank, dims, off);
  kc_free(&c);
  return idx;
}

static void add_task(om_writer *w, int kind, const char *name, uint32_t bd, int n, const uint32_t *tensors,
                     const int32_t *params, int nparams) {
  om_task t = {
      .kind = (uint32_t)kind, .name = om_writer_string(w, name), .block_dim = bd, .ntensors = (uint32_t)n};
  for (int i = 0; i < OM_TASK_MAX_TENSORS; i++)
    t.tensors[i] = i < n ? tensors[i] : OM_NONE;
  if (nparams) memcpy(t.params, params, (size_t)nparams * sizeof *params);
  om_writer_add_task(w, &t);
}

/* x [1,3,20,20] f32 -> NC1HWC0 f16 -> conv 3x3 32 relu -> maxpool 2x2 ->
 * conv 1x1 40 clip -> + itself (a vector program, f16 -> f32) -> ND f32. */
static void *build_net(size_t *size_out) {
  om_writer *w = om_writer_new();
  om_model_def def = {.name = om_writer_string(w, "net"),
                      .soc = om_writer_string(w, "Ascend310"),
                      .atc_version = om_writer_string(w, "test"),
                      .cmdline = om_writer_string(w, "test_kernels"),
                      .precision = OM_PRECISION_FORCE_FP16,
                      .ai_cores = 2,
                      .workspace_bytes = 64000,
                      .l1_bytes = 1 << 20,
                      .l0a_bytes = 64 << 10,
                      .l0b_bytes = 64 << 10,
                      .l0c_bytes = 256 << 10,
                      .ub_bytes = 256 << 10};
  om_writer_set_model(w, &def);
  int64_t xd[4] = {1, 3, 20, 20}, bd[4] = {1, 32, 20, 20}, cd[4] = {1, 32, 10, 10}, dd[4] = {1, 40, 10, 10};
  int64_t w1d[4] = {32, 3, 3, 3}, w2d[4] = {40, 32, 1, 1}, b1d[1] = {32};
  uint32_t x = add_t(w, "x", OM_REGION_INPUT, 0, DT_FLOAT32, LAYOUT_ND, 4, xd, 0);
  uint32_t a = add_t(w, "a", OM_REGION_WORKSPACE, 0, DT_FLOAT16, LAYOUT_NC1HWC0, 4, xd, 0);
  uint32_t b = add_t(w, "b", OM_REGION_WORKSPACE, 0, DT_FLOAT16, LAYOUT_NC1HWC0, 4, bd, 12800);
  uint32_t cc = add_t(w, "c", OM_REGION_WORKSPACE, 0, DT_FLOAT16, LAYOUT_NC1HWC0, 4, cd, 38400);
  uint32_t d = add_t(w, "d", OM_REGION_WORKSPACE, 0, DT_FLOAT16, LAYOUT_NC1HWC0, 4, dd, 44800);
  uint32_t e = add_t(w, "e", OM_REGION_WORKSPACE, 0, DT_FLOAT32, LAYOUT_NC1HWC0, 4, dd, 0);
  uint32_t y = add_t(w, "y", OM_REGION_OUTPUT, 0, DT_FLOAT32, LAYOUT_ND, 4, dd, 0);
  float *w1 = gen(32 * 27, DT_FLOAT16, 0.5f), *w2 = gen(40 * 32, DT_FLOAT16, 0.3f),
        *b1 = gen(32, DT_FLOAT32, 0.2f);
  uint32_t w1i = add_weights(w, "w1", DT_FLOAT16, LAYOUT_FRACTAL_Z, 4, w1d, w1);
  uint32_t w2i = add_weights(w, "w2", DT_FLOAT16, LAYOUT_FRACTAL_Z, 4, w2d, w2);
  uint32_t b1i = add_weights(w, "b1", DT_FLOAT32, LAYOUT_ND, 1, b1d, b1);
  free(w1), free(w2), free(b1);
  uint32_t t1[2] = {x, a}, t2[5] = {a, w1i, b1i, OM_NONE, b}, t3[2] = {b, cc};
  uint32_t t4[5] = {cc, w2i, OM_NONE, OM_NONE, d}, t6[2] = {e, y};
  int32_t p2[OM_CONV_NPARAMS] = {CONV_WINDOW(3, 1, 1, 1), [OM_CONV_P_ACT] = OM_ACT_RELU,
                                 [OM_CONV_P_TILE_M] = 64, [OM_CONV_P_TILE_N] = 1, [OM_CONV_P_TILE_K] = 1};
  int32_t p3[OM_POOL_NPARAMS] = {POOL_WINDOW(2, 2, 0)};
  int32_t p4[OM_CONV_NPARAMS] = {CONV_WINDOW(1, 1, 0, 1),
                                 [OM_CONV_P_ACT] = OM_ACT_CLIP,
                                 [OM_CONV_P_CLIP_MIN] = fbits(-0.5f),
                                 [OM_CONV_P_CLIP_MAX] = fbits(0.75f),
                                 [OM_CONV_P_TILE_M] = 32,
                                 [OM_CONV_P_TILE_N] = 2,
                                 [OM_CONV_P_TILE_K] = 1};
  /* e = f32(d + d): LOAD, ADD in f16, CAST to f32, STORE. */
  om_vprog vh = {.ninputs = 1, .noutputs = 1, .nregs = 3, .ninstrs = 4};
  om_vinstr vi[4] = {{.op = VOP_LOAD, .dtype = DT_FLOAT16, .dst = 0, .a = 0},
                     {.op = VOP_ADD, .dtype = DT_FLOAT16, .dst = 1, .a = 0, .b = 0},
                     {.op = VOP_CAST, .dtype = DT_FLOAT32, .dst = 2, .a = 1},
                     {.op = VOP_STORE, .dtype = DT_FLOAT32, .a = 0, .b = 2}};
  uint32_t voff = 0;
  om_writer_add_vprog(w, &vh, vi, &voff);
  int32_t p5[OM_VPROG_NPARAMS] = {[OM_VPROG_P_PROGRAM] = (int32_t)voff};
  uint32_t t5[2] = {d, e};
  add_task(w, OM_TASK_TRANSDATA, "to_5d", 2, 2, t1, NULL, 0);
  add_task(w, OM_TASK_CONV2D, "conv1", 5, 5, t2, p2, OM_CONV_NPARAMS);
  add_task(w, OM_TASK_POOL, "pool", 2, 2, t3, p3, OM_POOL_NPARAMS);
  add_task(w, OM_TASK_CONV2D, "conv2", 4, 5, t4, p4, OM_CONV_NPARAMS);
  add_task(w, OM_TASK_VPROG, "add", 3, 2, t5, p5, OM_VPROG_NPARAMS);
  add_task(w, OM_TASK_TRANSDATA, "to_nd", 3, 2, t6, NULL, 0);
  om_writer_set_io(w, &x, 1, &y, 1);
  void *data = NULL;
  diag dg;
  diag_init(&dg);
  if (om_writer_to_memory(w, &data, size_out, &dg) != ST_OK) test_note("  writer: %s", dg.msg);
  om_writer_free(w);
  return data;
}

static void test_public_api(void) {
  size_t size = 0;
  void *pkg = build_net(&size);
  CHECK(pkg != NULL);
  if (!pkg) return;
  float *in = gen(1200, DT_FLOAT32, 1.0f), *out[2];
  for (int threads = 1; threads <= 2; threads++) {
    omrt_load_options o = {.threads = (uint32_t)threads};
    omrt_model *m = NULL;
    omrt_context *ctx = NULL;
    omrt_status s = omrt_model_load_memory(pkg, size, &o, &m);
    CHECK_EQ_INT(s, OMRT_OK);
    if (s) {
      test_note("  load: %s", omrt_last_error());
      out[threads - 1] = NULL;
      continue;
    }
    CHECK_EQ_INT(omrt_context_new(m, &ctx), OMRT_OK);
    CHECK_EQ_INT(omrt_context_threads(ctx), threads);
    out[threads - 1] = calloc(4000, sizeof(float));
    float *tmp = calloc(4000, sizeof(float));
    const void *ins[1] = {in};
    void *outs[1] = {out[threads - 1]}, *touts[1] = {tmp};
    CHECK_EQ_INT(omrt_execute(ctx, ins, outs), OMRT_OK);
    int same = 1;
    for (int it = 0; it < 30; it++) { /* reuse the pool, sometimes after the workers slept */
      if (it % 10 == 9) usleep(20000);
      omrt_execute(ctx, ins, touts);
      same &= memcmp(tmp, out[threads - 1], 4000 * sizeof(float)) == 0;
    }
    CHECK(same);
    CHECK_EQ_INT(omrt_execute(NULL, ins, outs), OMRT_ERR_ARG);
    CHECK_EQ_INT(omrt_execute(ctx, NULL, outs), OMRT_ERR_ARG);
    const void *nulls[1] = {NULL};
    CHECK_EQ_INT(omrt_execute(ctx, nulls, outs), OMRT_ERR_ARG);
    CHECK(strlen(omrt_last_error()) > 0);
    free(tmp);
    omrt_context_free(ctx);
    omrt_model_free(m);
  }
  if (out[0] && out[1]) {
    CHECK(memcmp(out[0], out[1], 4000 * sizeof(float)) == 0);
    double mx = 0;
    for (int i = 0; i < 4000; i++)
      mx = fmax(mx, fabs(out[0][i]));
    CHECK(mx > 0.1); /* not all zero */
  }
  free(out[0]), free(out[1]), free(in);
  CHECK_EQ_INT(omrt_context_new(NULL, NULL), OMRT_ERR_ARG);
  omrt_context_free(NULL);
  free(pkg);
}

/* The interpreter's F16C lanes (rt_cpu()->h2f / f2h / round16) against the
 * portable conversions: every half, and every 97th float bit pattern (all
 * of them matched when the lanes were written). */
static void test_f16_lanes(void) {
  const rt_cpu_paths *cpu = rt_cpu();
  if (!cpu->h2f) return; /* portable: nothing to compare */
  enum { N = 4096 };
  static uint16_t h[N], h2[N];
  static float f[N], g[N], r[N];
  int bad = 0;
  for (uint32_t base = 0; base < 65536; base += N) {
    for (uint32_t i = 0; i < N; i++)
      h[i] = (uint16_t)(base + i);
    cpu->h2f(f, h, N);
    for (uint32_t i = 0; i < N; i++) {
      float want = rt_h2f(rt_h_quiet(h[i]));
      bad += memcmp(&want, &f[i], 4) != 0;
    }
  }
  CHECK_EQ_INT(bad, 0);
  bad = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += 97ull * N) {
    for (uint32_t i = 0; i < N; i++) {
      uint32_t u = (uint32_t)(b + 97ull * i);
      memcpy(&g[i], &u, 4);
    }
    cpu->f2h(h2, g, N - 3); /* an odd count: the scalar tail too */
    memcpy(r, g, sizeof r);
    cpu->round16(r, N - 3);
    for (uint32_t i = 0; i < N - 3; i++) {
      float want = rt_h2f(rt_f2h(g[i]));
      bad += h2[i] != rt_f2h(g[i]) || memcmp(&want, &r[i], 4) != 0;
    }
  }
  CHECK_EQ_INT(bad, 0);
}

int main(void) {
  /* Which kernel paths run (cpu.c): the default run takes the x86 paths on
   * hosts that have them, unit/test_kernels_portable sets OMRT_PORTABLE=1. */
  const char *env = getenv("OMRT_PORTABLE");
  printf("kernel paths: %s\n", rt_cpu()->name);
  if (env && strcmp(env, "1") == 0) CHECK(rt_cpu()->conv_tile == NULL);
#if defined(__x86_64__)
  if (!env && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    CHECK(rt_cpu()->conv_tile != NULL && rt_cpu()->dwconv != NULL);
    /* unit/test_kernels_avx2 sets OMRT_AVX512=0: the 256-bit micro-kernels */
    const char *wide = getenv("OMRT_AVX512");
    int want = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               !(wide && !strcmp(wide, "0"));
    CHECK_EQ_INT(rt_cpu()->avx512, want);
  }
#endif
  test_fp16();
  test_f16_lanes();
  test_conv2d();
  test_conv_chunks_exact();
  test_conv_dead_taps();
  test_conv_grouped();
  test_winograd();
  test_dwconv();
  test_pool();
  test_copy_slice();
  test_transdata();
  test_public_api();
  return test_summary("kernels");
}
