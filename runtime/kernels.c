/* kernels.c - the kernel table (one entry per om_task_kind) and the helpers
 * the kinds' load-time check functions share.
 *
 * The table is what the loader and the executor see: the loader calls
 * rt_kernels[kind].check for every task after bounds-checking its tensor
 * indices, the executor calls rt_kernels[kind].run for every block. The
 * helpers turn each violated rule into one message that names the task, its
 * kind and node name, the slot or param and the offending values.
 */
#include "runtime/epilogue.h"
#include "runtime/kernels.h"
#include "runtime/vprog_plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const rt_kernel rt_kernels[] = {
    [OM_TASK_TRANSDATA] = {"TRANSDATA", rt_transdata_run, rt_transdata_check},
    [OM_TASK_CONV2D] = {"CONV2D", rt_conv2d_run, rt_conv2d_epi_check, rt_epi_prepare, rt_conv2d_pieces,
                        rt_conv2d_piece},
    [OM_TASK_DWCONV] = {"DWCONV", rt_dwconv_run, rt_dwconv_epi_check, rt_epi_prepare},
    [OM_TASK_POOL] = {"POOL", rt_pool_run, rt_pool_check},
    [OM_TASK_COPY_SLICE] = {"COPY_SLICE", rt_copy_slice_run, rt_copy_slice_check},
    [OM_TASK_SOFTMAX] = {"SOFTMAX", rt_softmax_run, rt_softmax_check},
    [OM_TASK_VPROG] = {"VPROG", rt_vprog_run, rt_vprog_check, rt_vprog_prepare},
    [OM_TASK_REDUCE] = {"REDUCE", rt_reduce_run, rt_reduce_check},
    [OM_TASK_STRIDED_COPY] = {"STRIDED_COPY", rt_strided_copy_run, rt_strided_copy_check},
    [OM_TASK_GATHER] = {"GATHER", rt_gather_run, rt_gather_check},
    [OM_TASK_TOPK] = {"TOPK", rt_topk_run, rt_topk_check},
    [OM_TASK_SCATTER] = {"SCATTER", rt_scatter_run, rt_scatter_check},
    [OM_TASK_CUMSUM] = {"CUMSUM", rt_cumsum_run, rt_cumsum_check},
    [OM_TASK_ONEHOT] = {"ONEHOT", rt_onehot_run, rt_onehot_check},
    [OM_TASK_PAD] = {"PAD", rt_pad_run, rt_pad_check},
    [OM_TASK_RESIZE] = {"RESIZE", rt_resize_run, rt_resize_check},
    [OM_TASK_POOL_ND] = {"POOL_ND", rt_pool_nd_run, rt_pool_nd_check},
    [OM_TASK_MATMUL] = {"MATMUL", rt_matmul_run, rt_matmul_epi_check, rt_epi_prepare},
    [OM_TASK_WPACK] = {"WPACK", rt_wpack_run, rt_wpack_check},
    [OM_TASK_LAYERNORM] = {"LAYERNORM", rt_layernorm_run, rt_layernorm_check},
    [OM_TASK_RECURRENCE] = {"RECURRENCE", rt_recurrence_run, rt_recurrence_check},
    [OM_TASK_ATTENTION] = {"ATTENTION", rt_attention_run, rt_attention_check},
    [OM_TASK_QCONV2D] = {"QCONV2D", rt_qconv_run, rt_qconv_check, rt_qconv_prepare},
    [OM_TASK_CONV3D] = {"CONV3D", rt_conv2d_run, rt_conv3d_epi_check, rt_epi_prepare, rt_conv2d_pieces,
                        rt_conv2d_piece},
    [OM_TASK_AIPP] = {"AIPP", rt_aipp_run, rt_aipp_check},
    [OM_TASK_NONZERO] = {"NONZERO", rt_nonzero_run, rt_nonzero_check},
    [OM_TASK_NMS] = {"NMS", rt_nms_run, rt_nms_check},
    [OM_TASK_UNIQUE] = {"UNIQUE", rt_unique_run, rt_unique_check},
    [OM_TASK_TFIDF] = {"TFIDF", rt_tfidf_run, rt_tfidf_check},
    [OM_TASK_QELTWISE] = {"QELTWISE", rt_qeltwise_run, rt_qeltwise_check},
    [OM_TASK_QLUT] = {"QLUT", rt_qlut_run, rt_qlut_check},
    [OM_TASK_QMATMUL] = {"QMATMUL", rt_qmatmul_run, rt_qmatmul_check},
    [OM_TASK_DYNQUANT] = {"DYNQUANT", rt_dynquant_run, rt_dynquant_check},
};
const uint32_t rt_kernel_count = sizeof rt_kernels / sizeof *rt_kernels;

static const rt_access access[] = {
#define KIND_ACCESS(kind, writes, in_place) [kind] = {writes, in_place},
    OM_TASK_ACCESS(KIND_ACCESS)
#undef KIND_ACCESS
};

rt_access rt_kind_access(uint32_t kind) {
  return kind < sizeof access / sizeof *access ? access[kind] : (rt_access){0, 0};
}

omrt_status rt_chk_fail(const rt_chk *c, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_error(OMRT_ERR_FORMAT, "task %u (%s) '%s': %s", c->index, c->kind, rt_string(c->m, c->task->name),
                  msg);
}

omrt_status rt_chk_ntensors(const rt_chk *c, uint32_t n) {
  if (c->task->ntensors != n) return rt_chk_fail(c, "ntensors = %u, expected %u", c->task->ntensors, n);
  return OMRT_OK;
}

uint64_t rt_elements(const om_tensor *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++)
    n *= (uint64_t)t->dims[i];
  return n;
}

uint64_t rt_physical_elements(const om_tensor *t) {
  uint64_t n = 0;
  layout_elements((int)t->layout, (int)t->rank, t->dims, &n);
  return n;
}

void rt_zero_pad_lanes_u8(const om_tensor *y, uint8_t *yd, uint64_t lo, uint64_t hi) {
  const int64_t c = y->dims[1], real = c % C0;
  if (y->layout != LAYOUT_NC1HWC0 || real == 0) return;
  /* the runs of each image's last channel block */
  const uint64_t hw = (uint64_t)(y->dims[2] * y->dims[3]), c1 = (uint64_t)rt_ceil_div(c, C0);
  for (uint64_t img = 0; img < (uint64_t)y->dims[0]; img++) {
    const uint64_t r0 = (img * c1 + c1 - 1) * hw, r1 = r0 + hw;
    for (uint64_t r = r0 > lo ? r0 : lo; r < (r1 < hi ? r1 : hi); r++)
      memset(yd + r * C0 + (uint64_t)real, 0, (size_t)(C0 - real));
  }
}

omrt_status rt_chk_copy_dtypes(const rt_chk *c, const om_tensor *x, const om_tensor *y) {
  int fx = x->dtype == DT_FLOAT16 || x->dtype == DT_FLOAT32,
      fy = y->dtype == DT_FLOAT16 || y->dtype == DT_FLOAT32;
  if (dtype_size((int)x->dtype) != dtype_size((int)y->dtype) && !(fx && fy))
    return rt_chk_fail(c, "x dtype %u and y dtype %u: only dtypes of one size (bits copied) or f16 <-> f32",
                       x->dtype, y->dtype);
  return OMRT_OK;
}

omrt_status rt_chk_nd_tensor(const rt_chk *c, int slot, const char *what, const om_tensor **t_out) {
  uint32_t ti = c->task->tensors[slot];
  if (ti == OM_NONE) return rt_chk_fail(c, "tensor slot %d (%s) is OM_NONE but required", slot, what);
  const om_tensor *t = &c->m->tensors[ti];
  const char *tname = rt_string(c->m, t->name);
  if (t->layout != LAYOUT_ND)
    return rt_chk_fail(c, "%s '%s': layout %u, expected ND", what, tname, t->layout);
  if (t->rank > MAX_RANK)
    return rt_chk_fail(c, "%s '%s': rank %u exceeds %d", what, tname, t->rank, MAX_RANK);
  for (uint32_t d = 0; d < t->rank; d++)
    if (t->dims[d] < 0 || t->dims[d] > INT32_MAX)
      return rt_chk_fail(c, "%s '%s': dims[%u] = %lld out of range", what, tname, d, (long long)t->dims[d]);
  uint64_t n, bytes;
  size_t es = dtype_size((int)t->dtype);
  if (!es || layout_elements(LAYOUT_ND, (int)t->rank, t->dims, &n) || mul_u64(n, es, &bytes) ||
      bytes != t->bytes)
    return rt_chk_fail(c, "%s '%s': bytes = %llu does not match its dims and dtype %u", what, tname,
                       (unsigned long long)t->bytes, t->dtype);
  *t_out = t;
  return OMRT_OK;
}

omrt_status rt_chk_tensor(const rt_chk *c, int slot, const char *what, int optional, int layout, int rank,
                          int f32_only, const om_tensor **t_out) {
  uint32_t dts = f32_only ? RT_DT(DT_FLOAT32) : RT_DT(DT_FLOAT16) | RT_DT(DT_FLOAT32);
  return rt_chk_tensor_of(c, slot, what, optional, layout, rank, dts, t_out);
}

omrt_status rt_chk_tensor_of(const rt_chk *c, int slot, const char *what, int optional, int layout, int rank,
                             uint32_t dtypes, const om_tensor **t_out) {
  *t_out = NULL;
  if ((uint32_t)slot >= c->task->ntensors)
    return rt_chk_fail(c, "tensor slot %d (%s) missing: ntensors = %u", slot, what, c->task->ntensors);
  uint32_t ti = c->task->tensors[slot];
  if (ti == OM_NONE) {
    if (optional) return OMRT_OK;
    return rt_chk_fail(c, "tensor slot %d (%s) is OM_NONE but required", slot, what);
  }
  const om_tensor *t = &c->m->tensors[ti];
  const char *tname = rt_string(c->m, t->name);
  if (t->dtype >= 32 || !(dtypes & RT_DT(t->dtype))) {
    static const int order[] = {DT_FLOAT16, DT_FLOAT32, DT_UINT8, DT_INT8, DT_INT32}; /* "f16 or f32", ... */
    char list[96] = "";
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
      if (dtypes & RT_DT(order[k]))
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? " or " : "",
                 dtype_name(order[k]));
    return rt_chk_fail(c, "%s '%s': dtype %u, expected %s", what, tname, t->dtype, list);
  }
  const int nd = t->layout == LAYOUT_ND, hd4 = t->layout == LAYOUT_NC1HWC0,
            hd5 = t->layout == LAYOUT_NDC1HWC0;
  int lay_ok = layout >= 0                ? t->layout == (uint32_t)layout
               : layout == RT_LAYOUTS_5HD ? hd4 || hd5
               : layout == RT_LAYOUTS_ACT ? nd || hd4 || hd5
                                          : nd || hd4;
  if (!lay_ok)
    return rt_chk_fail(c, "%s '%s': layout %u (%s), expected %s", what, tname, t->layout,
                       layout_name((int)t->layout) ? layout_name((int)t->layout) : "?",
                       layout >= 0                ? layout_name(layout)
                       : layout == RT_LAYOUTS_5HD ? "NC1HWC0 or NDC1HWC0"
                       : layout == RT_LAYOUTS_ACT ? "ND, NC1HWC0 or NDC1HWC0"
                                                  : "ND or NC1HWC0");
  if (t->rank > MAX_RANK || (rank >= 0 && t->rank != (uint32_t)rank))
    return rt_chk_fail(c, "%s '%s': rank %u, expected %d", what, tname, t->rank, rank);
  for (uint32_t d = 0; d < t->rank; d++)
    if (t->dims[d] < 0 || t->dims[d] > INT32_MAX)
      return rt_chk_fail(c, "%s '%s': dims[%u] = %lld out of range", what, tname, d, (long long)t->dims[d]);
  uint64_t n, bytes;
  if (layout_elements((int)t->layout, (int)t->rank, t->dims, &n) || dtype_bytes((int)t->dtype, n, &bytes) ||
      bytes != t->bytes)
    return rt_chk_fail(c, "%s '%s': bytes = %llu does not match its dims, layout and dtype", what, tname,
                       (unsigned long long)t->bytes);
  *t_out = t;
  return OMRT_OK;
}

omrt_status rt_chk_same_dims(const rt_chk *c, const char *what_a, const om_tensor *a, const char *what_b,
                             const om_tensor *b) {
  if (a->rank != b->rank) return rt_chk_fail(c, "%s rank %u != %s rank %u", what_a, a->rank, what_b, b->rank);
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return rt_chk_fail(c, "%s dims[%u] = %lld != %s dims[%u] = %lld", what_a, d, (long long)a->dims[d],
                         what_b, d, (long long)b->dims[d]);
  return OMRT_OK;
}

omrt_status rt_chk_block_dim(const rt_chk *c, uint64_t units, const char *unit_name) {
  uint32_t bd = c->task->block_dim;
  if (bd < 1 || bd > 65535 || bd > (units ? units : 1))
    return rt_chk_fail(c, "block_dim = %u, expected 1..%llu (%s)", bd,
                       (unsigned long long)(units ? units : 1), unit_name);
  return OMRT_OK;
}

void rt_conv_params_read(const om_task *task, rt_conv_params *p) {
  const int32_t *q = task->params;
  *p = (rt_conv_params){.kh = q[OM_CONV_P_KH],
                        .kw = q[OM_CONV_P_KW],
                        .sh = q[OM_CONV_P_STRIDE_H],
                        .sw = q[OM_CONV_P_STRIDE_W],
                        .pt = q[OM_CONV_P_PAD_TOP],
                        .pl = q[OM_CONV_P_PAD_LEFT],
                        .pb = q[OM_CONV_P_PAD_BOTTOM],
                        .pr = q[OM_CONV_P_PAD_RIGHT],
                        .dh = q[OM_CONV_P_DILATION_H],
                        .dw = q[OM_CONV_P_DILATION_W],
                        .act = q[OM_CONV_P_ACT],
                        .clip_min = rt_param_f32(q[OM_CONV_P_CLIP_MIN]),
                        .clip_max = rt_param_f32(q[OM_CONV_P_CLIP_MAX])};
}

/* Output extent of one spatial dim; < 1 when the kernel does not fit. */
static int64_t conv_out(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t d, int64_t s) {
  int64_t span = in + pa + pb - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

omrt_status rt_chk_conv_params(const rt_chk *c, const rt_conv_params *p, const om_tensor *x, int64_t cout,
                               const om_tensor *y) {
  static const char *const names[] = {[OM_CONV_P_KH] = "kh",
                                      [OM_CONV_P_KW] = "kw",
                                      [OM_CONV_P_STRIDE_H] = "stride_h",
                                      [OM_CONV_P_STRIDE_W] = "stride_w",
                                      [OM_CONV_P_PAD_TOP] = "pad_top",
                                      [OM_CONV_P_PAD_LEFT] = "pad_left",
                                      [OM_CONV_P_PAD_BOTTOM] = "pad_bottom",
                                      [OM_CONV_P_PAD_RIGHT] = "pad_right",
                                      [OM_CONV_P_DILATION_H] = "dilation_h",
                                      [OM_CONV_P_DILATION_W] = "dilation_w"};
  const int32_t *q = c->task->params;
  for (int i = OM_CONV_P_KH; i <= OM_CONV_P_DILATION_W; i++) {
    int is_pad = i >= OM_CONV_P_PAD_TOP && i <= OM_CONV_P_PAD_RIGHT;
    if (q[i] < (is_pad ? 0 : 1) || q[i] > 65535)
      return rt_chk_fail(c, "params[%d] %s = %d out of range", i, names[i], q[i]);
  }
  int64_t ext_h = (int64_t)p->dh * (p->kh - 1) + 1, ext_w = (int64_t)p->dw * (p->kw - 1) + 1;
  if (p->pt >= ext_h || p->pb >= ext_h || p->pl >= ext_w || p->pr >= ext_w)
    return rt_chk_fail(c,
                       "pads (top %d, left %d, bottom %d, right %d) must be below the kernel "
                       "extent %lldx%lld",
                       p->pt, p->pl, p->pb, p->pr, (long long)ext_h, (long long)ext_w);
  if (p->act != OM_ACT_NONE && p->act != OM_ACT_RELU && p->act != OM_ACT_CLIP)
    return rt_chk_fail(c, "params[%d] act = %d unknown", OM_CONV_P_ACT, p->act);
  if (p->act == OM_ACT_CLIP && !(p->clip_min <= p->clip_max))
    return rt_chk_fail(c, "clip_min %g > clip_max %g (or NaN)", p->clip_min, p->clip_max);
  for (int d = 0; d < 4; d++)
    if (x->dims[d] < 1) return rt_chk_fail(c, "x dims[%d] = %lld, expected >= 1", d, (long long)x->dims[d]);
  int64_t ho = conv_out(x->dims[2], p->pt, p->pb, p->kh, p->dh, p->sh);
  int64_t wo = conv_out(x->dims[3], p->pl, p->pr, p->kw, p->dw, p->sw);
  if (ho < 1 || wo < 1)
    return rt_chk_fail(c, "kernel %dx%d (dilation %dx%d) does not fit the padded input %lldx%lld", p->kh,
                       p->kw, p->dh, p->dw, (long long)x->dims[2], (long long)x->dims[3]);
  int64_t want[4] = {x->dims[0], cout, ho, wo};
  static const char *const dn[] = {"N", "C", "Ho", "Wo"};
  for (int d = 0; d < 4; d++)
    if (y->dims[d] != want[d])
      return rt_chk_fail(c,
                         "y dims[%d] (%s) = %lld, expected %lld (x %lldx%lldx%lldx%lld, kernel "
                         "%dx%d, stride %dx%d, pads %d,%d,%d,%d, dilation %dx%d)",
                         d, dn[d], (long long)y->dims[d], (long long)want[d], (long long)x->dims[0],
                         (long long)x->dims[1], (long long)x->dims[2], (long long)x->dims[3], p->kh, p->kw,
                         p->sh, p->sw, p->pt, p->pl, p->pb, p->pr, p->dh, p->dw);
  return OMRT_OK;
}
