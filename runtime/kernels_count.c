/* kernels_count.c - the kinds that write a counted output (om_format.h's
 * COUNTS partition): NONZERO, NMS (common/nms.h's selection), UNIQUE
 * (common/unique.h's).
 *
 * A counted output is stored at its compile-time bound; the kernel writes
 * the valid entries first along the counted axis, zeros after them (a
 * consumer reading the padding reads a valid index), and the number of
 * valid entries into the task's count tensor. They run as one block: each
 * output position depends on every input element before it, and these
 * postprocessing ops are small.
 *
 * NONZERO tests an element's bits, so one loop serves every dtype: an
 * integer or bool is nonzero when any bit is set, a float when any bit
 * but the sign is (-0.0 is zero, NaN is not).
 */
#include <string.h>

#include "common/fp16.h"
#include "common/nms.h"
#include "common/unique.h"
#include "runtime/kernels.h"

/* The bits that make an element of dtype dt nonzero. */
static uint64_t nonzero_mask(uint32_t dt) {
  switch (dt) {
  case DT_FLOAT16: return 0x7fffu;
  case DT_FLOAT32: return 0x7fffffffu;
  case DT_DOUBLE: return 0x7fffffffffffffffu;
  default: return ~(uint64_t)0;
  }
}

void rt_nonzero_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)task, (void)block, (void)core;
  const om_tensor *x = args->desc[OM_NONZERO_T_X], *y = args->desc[OM_NONZERO_T_Y];
  const uint8_t *xd = args->data[OM_NONZERO_T_X];
  int64_t *yd = args->data[OM_NONZERO_T_Y], *count = args->data[OM_NONZERO_T_COUNT];
  const size_t es = dtype_size((int)x->dtype);
  const uint64_t mask = nonzero_mask(x->dtype), total = rt_elements(x), bound = (uint64_t)y->dims[1];
  uint64_t at = 0;
  if (x->rank <= 1 && es == 1) { /* a bool mask (SSDlite's scores above the threshold, per class) */
    for (uint64_t i = 0; i < total; i++)
      if (xd[i]) yd[at++] = (int64_t)i;
  } else {
    for (uint64_t i = 0; i < total; i++) {
      uint64_t bits = 0;
      memcpy(&bits, xd + i * es, es); /* little-endian: the element's low bytes */
      if (!(bits & mask)) continue;
      uint64_t rest = i;
      for (int d = (int)x->rank - 1; d >= 0; d--)
        yd[(uint64_t)d * bound + at] = (int64_t)(rest % (uint64_t)x->dims[d]), rest /= (uint64_t)x->dims[d];
      at++;
    }
  }
  for (uint64_t d = 0; d < (uint64_t)y->dims[0]; d++) /* zeros past the count */
    memset(yd + d * bound + at, 0, (size_t)(bound - at) * sizeof *yd);
  *count = (int64_t)at;
}

omrt_status rt_nonzero_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "NONZERO"};
  const om_tensor *x = NULL, *y = NULL, *n = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_NONZERO_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_NONZERO_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_NONZERO_T_Y, "y", &y)) ||
      (s = rt_chk_nd_tensor(&c, OM_NONZERO_T_COUNT, "count", &n)))
    return s;
  for (int k = 0; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k] != 0)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, task->params[k]);
  if (!dtype_size((int)x->dtype)) return rt_chk_fail(&c, "x dtype %u not supported", x->dtype);
  if (y->dtype != DT_INT64 || y->rank != 2 || y->dims[0] != (x->rank ? (int64_t)x->rank : 1) ||
      (uint64_t)y->dims[1] != rt_elements(x))
    return rt_chk_fail(&c, "y must be i64 [%u, %llu] for x", x->rank ? x->rank : 1,
                       (unsigned long long)rt_elements(x));
  if (n->dtype != DT_INT64 || rt_elements(n) != 1) return rt_chk_fail(&c, "count must be i64 [1]");
  return rt_chk_block_dim(&c, 1, "blocks");
}

static float get_f32(const void *p, uint64_t i) { return ((const float *)p)[i]; }
static float get_f16(const void *p, uint64_t i) { return half_to_float(((const uint16_t *)p)[i]); }

/* Element 0 of an optional one-element threshold (f32 or f16). */
static float threshold(const rt_args *args, int slot, float def) {
  const om_tensor *t = args->desc[slot];
  if (!t) return def;
  return t->dtype == DT_FLOAT16 ? get_f16(args->data[slot], 0) : get_f32(args->data[slot], 0);
}

void rt_nms_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)block, (void)core;
  const om_tensor *b = args->desc[OM_NMS_T_BOXES], *s = args->desc[OM_NMS_T_SCORES],
                  *y = args->desc[OM_NMS_T_SELECTED];
  const uint64_t B = (uint64_t)b->dims[0], N = (uint64_t)b->dims[1], C = (uint64_t)s->dims[1];
  const int64_t per = task->params[OM_NMS_P_MAX_PER_CLASS];
  const float iou = threshold(args, OM_NMS_T_IOU, 0.0f), st = threshold(args, OM_NMS_T_SCORE_THRESHOLD, 0.0f);
  int64_t *yd = args->data[OM_NMS_T_SELECTED], rows = 0;
  uint64_t n = N; /* the boxes taking part: with boxes counted, their count */
  if (task->ntensors == OM_NMS_NTENSORS_EXTENT) {
    int64_t e = *(const int64_t *)args->data[OM_NMS_T_EXTENT];
    n = e < 0 ? 0 : (uint64_t)e > N ? N : (uint64_t)e;
  }
  memset(yd, 0, (size_t)y->bytes);
  for (uint64_t bi = 0; bi < B; bi++)
    for (uint64_t c = 0; c < C; c++) {
      int64_t k =
          nms_class(args->data[OM_NMS_T_BOXES], bi * N * 4, args->data[OM_NMS_T_SCORES], (bi * C + c) * N, n,
                    b->dtype == DT_FLOAT16 ? get_f16 : get_f32, task->params[OM_NMS_P_CENTER_POINT_BOX], iou,
                    args->desc[OM_NMS_T_SCORE_THRESHOLD] != NULL, st, per, yd + rows * 3 + 2, 3);
      for (int64_t j = 0; j < k; j++)
        yd[(rows + j) * 3] = (int64_t)bi, yd[(rows + j) * 3 + 1] = (int64_t)c;
      rows += k;
    }
  *(int64_t *)args->data[OM_NMS_T_COUNT] = rows;
}

omrt_status rt_nms_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "NMS"};
  const om_tensor *b = NULL, *s = NULL, *y = NULL, *n = NULL, *t[2] = {NULL, NULL}, *e = NULL;
  omrt_status st;
  int with_extent = task->ntensors == OM_NMS_NTENSORS_EXTENT;
  if ((st = rt_chk_ntensors(&c, with_extent ? OM_NMS_NTENSORS_EXTENT : OM_NMS_NTENSORS)) ||
      (with_extent && (st = rt_chk_nd_tensor(&c, OM_NMS_T_EXTENT, "extent", &e))) ||
      (st = rt_chk_nd_tensor(&c, OM_NMS_T_BOXES, "boxes", &b)) ||
      (st = rt_chk_nd_tensor(&c, OM_NMS_T_SCORES, "scores", &s)) ||
      (st = rt_chk_nd_tensor(&c, OM_NMS_T_SELECTED, "selected", &y)) ||
      (st = rt_chk_nd_tensor(&c, OM_NMS_T_COUNT, "count", &n)))
    return st;
  for (int k = 0; k < 2; k++)
    if (task->tensors[OM_NMS_T_IOU + k] != OM_NONE &&
        (st = rt_chk_nd_tensor(&c, OM_NMS_T_IOU + k, k ? "score_threshold" : "iou_threshold", &t[k])))
      return st;
  for (int k = OM_NMS_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k] != 0)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, task->params[k]);
  const int32_t cpb = task->params[OM_NMS_P_CENTER_POINT_BOX], per = task->params[OM_NMS_P_MAX_PER_CLASS];
  if (b->rank != 3 || b->dims[2] != 4 || s->rank != 3 || s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1])
    return rt_chk_fail(&c, "boxes and scores must be [B, N, 4] and [B, C, N]");
  if ((b->dtype != DT_FLOAT32 && b->dtype != DT_FLOAT16) || s->dtype != b->dtype)
    return rt_chk_fail(&c, "boxes and scores must share dtype f32 or f16");
  for (int k = 0; k < 2; k++)
    if (t[k] && ((t[k]->dtype != DT_FLOAT32 && t[k]->dtype != DT_FLOAT16) || rt_elements(t[k]) != 1))
      return rt_chk_fail(&c, "thresholds must be one f32 or f16");
  if ((cpb != 0 && cpb != 1) || per < 0 || per > b->dims[1])
    return rt_chk_fail(&c, "params center_point_box = %d, max_per_class = %d: expected 0|1 and 0..%lld", cpb,
                       per, (long long)b->dims[1]);
  if (y->dtype != DT_INT64 || y->rank != 2 || y->dims[1] != 3 ||
      (uint64_t)y->dims[0] != (uint64_t)b->dims[0] * (uint64_t)s->dims[1] * (uint64_t)per)
    return rt_chk_fail(&c, "selected must be i64 [B x C x max_per_class, 3]");
  if (n->dtype != DT_INT64 || rt_elements(n) != 1) return rt_chk_fail(&c, "count must be i64 [1]");
  if (e && (e->dtype != DT_INT64 || rt_elements(e) != 1)) return rt_chk_fail(&c, "extent must be i64 [1]");
  return rt_chk_block_dim(&c, 1, "blocks");
}

/* x read as [outer, len, inner] around UNIQUE's axis (-1: flattened). */
static void unique_geom(const om_tensor *x, int32_t axis, uint64_t *outer, uint64_t *len, uint64_t *inner) {
  *outer = *inner = 1, *len = axis < 0 ? rt_elements(x) : (uint64_t)x->dims[axis];
  for (int d = 0; axis >= 0 && d < (int)x->rank; d++)
    if (d < axis)
      *outer *= (uint64_t)x->dims[d];
    else if (d > axis)
      *inner *= (uint64_t)x->dims[d];
}

void rt_unique_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)block, (void)core;
  uint64_t outer, len, inner;
  unique_geom(args->desc[OM_UNIQUE_T_X], task->params[OM_UNIQUE_P_AXIS], &outer, &len, &inner);
  *(int64_t *)args->data[OM_UNIQUE_T_COUNT] =
      len ? unique_run(args->data[OM_UNIQUE_T_X], (int)args->desc[OM_UNIQUE_T_X]->dtype, (int64_t)outer,
                       (int64_t)len, (int64_t)inner, task->params[OM_UNIQUE_P_SORTED],
                       args->data[OM_UNIQUE_T_Y], args->data[OM_UNIQUE_T_INDICES],
                       args->data[OM_UNIQUE_T_INVERSE], args->data[OM_UNIQUE_T_COUNTS])
          : 0;
}

omrt_status rt_unique_check(const omrt_model *m, uint32_t i, const om_task *task) {
  static const char *const names[OM_UNIQUE_NTENSORS] = {"x",      "y",    "indices", "inverse_indices",
                                                        "counts", "count"};
  rt_chk c = {m, i, task, "UNIQUE"};
  const om_tensor *t[OM_UNIQUE_NTENSORS] = {0};
  omrt_status s = rt_chk_ntensors(&c, OM_UNIQUE_NTENSORS);
  for (int k = 0; k < OM_UNIQUE_NTENSORS && !s; k++)
    s = rt_chk_nd_tensor(&c, k, names[k], &t[k]);
  if (s) return s;
  for (int k = OM_UNIQUE_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k] != 0)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, task->params[k]);
  const om_tensor *x = t[OM_UNIQUE_T_X], *y = t[OM_UNIQUE_T_Y];
  const int32_t axis = task->params[OM_UNIQUE_P_AXIS], sorted = task->params[OM_UNIQUE_P_SORTED];
  if (axis < -1 || axis >= (int32_t)x->rank || (sorted != 0 && sorted != 1))
    return rt_chk_fail(&c, "params axis = %d, sorted = %d: expected -1..%u and 0|1", axis, sorted,
                       x->rank ? x->rank - 1 : 0);
  if (!dtype_size((int)x->dtype) || y->dtype != x->dtype)
    return rt_chk_fail(&c, "x dtype %u not supported, or y's (%u) differs", x->dtype, y->dtype);
  uint64_t outer, len, inner;
  unique_geom(x, axis, &outer, &len, &inner);
  if (axis >= 0) {
    if ((s = rt_chk_same_dims(&c, "x", x, "y", y))) return s;
  } else if (y->rank != 1 || (uint64_t)y->dims[0] != len) {
    return rt_chk_fail(&c, "y must be [%llu], x's elements", (unsigned long long)len);
  }
  for (int k = OM_UNIQUE_T_INDICES; k <= OM_UNIQUE_T_COUNTS; k++)
    if (t[k]->dtype != DT_INT64 || t[k]->rank != 1 || (uint64_t)t[k]->dims[0] != len)
      return rt_chk_fail(&c, "%s must be i64 [%llu]", names[k], (unsigned long long)len);
  if (t[OM_UNIQUE_T_COUNT]->dtype != DT_INT64 || rt_elements(t[OM_UNIQUE_T_COUNT]) != 1)
    return rt_chk_fail(&c, "count must be i64 [1]");
  return rt_chk_block_dim(&c, 1, "blocks");
}
