/* kernels_tfidf.c - TFIDF: ONNX TfIdfVectorizer (om_format.h), its count
 * and weighting in common/tfidf.c.
 *
 * One block: each row's count is a scan over the compile-time n-gram table
 * and the short token row, small work next to dispatching it.
 */
#include "common/tfidf.h"
#include "runtime/kernels.h"

void rt_tfidf_run(const om_task *task, const rt_args *args, uint32_t block, rt_core *core) {
  (void)block, (void)core;
  const om_tensor *x = args->desc[OM_TFIDF_T_X], *t = args->desc[OM_TFIDF_T_TABLE],
                  *y = args->desc[OM_TFIDF_T_Y];
  const int64_t C = x->dims[x->rank - 1], outs = y->dims[y->rank - 1], rows = x->rank == 2 ? x->dims[0] : 1;
  tfidf_run(args->data[OM_TFIDF_T_X], (int)x->dtype, rows, C, args->data[OM_TFIDF_T_TABLE], t->dims[0],
            t->dims[1], task->params[OM_TFIDF_P_MAX_SKIP], task->params[OM_TFIDF_P_MODE],
            args->desc[OM_TFIDF_T_WEIGHTS] ? args->data[OM_TFIDF_T_WEIGHTS] : NULL, outs,
            args->data[OM_TFIDF_T_Y]);
}

omrt_status rt_tfidf_check(const omrt_model *m, uint32_t i, const om_task *task) {
  rt_chk c = {m, i, task, "TFIDF"};
  const om_tensor *x = NULL, *t = NULL, *w = NULL, *y = NULL;
  omrt_status s;
  if ((s = rt_chk_ntensors(&c, OM_TFIDF_NTENSORS)) || (s = rt_chk_nd_tensor(&c, OM_TFIDF_T_X, "x", &x)) ||
      (s = rt_chk_nd_tensor(&c, OM_TFIDF_T_TABLE, "table", &t)) ||
      (s = rt_chk_nd_tensor(&c, OM_TFIDF_T_Y, "y", &y)) ||
      (task->tensors[OM_TFIDF_T_WEIGHTS] != OM_NONE &&
       (s = rt_chk_nd_tensor(&c, OM_TFIDF_T_WEIGHTS, "weights", &w))))
    return s;
  for (int k = OM_TFIDF_NPARAMS; k < OM_TASK_MAX_PARAMS; k++)
    if (task->params[k] != 0)
      return rt_chk_fail(&c, "params[%d] = %d, expected 0 (unused)", k, task->params[k]);
  const int32_t mode = task->params[OM_TFIDF_P_MODE], skip = task->params[OM_TFIDF_P_MAX_SKIP];
  if (mode < 0 || mode > 2 || skip < 0)
    return rt_chk_fail(&c, "params mode = %d, max_skip = %d: expected 0..2 and >= 0", mode, skip);
  if ((x->dtype != DT_INT32 && x->dtype != DT_INT64) || x->rank < 1 || x->rank > 2)
    return rt_chk_fail(&c, "x must be i32 or i64 [C] or [B, C]");
  if (t->dtype != DT_INT64 || t->rank != 2 || t->dims[1] < 3)
    return rt_chk_fail(&c, "table must be i64 [ngrams, width >= 3]");
  if (y->dtype != DT_FLOAT32 || y->rank != x->rank || (x->rank == 2 && y->dims[0] != x->dims[0]))
    return rt_chk_fail(&c, "y must be f32 [outs] or [B, outs] for x");
  if (w && (w->dtype != DT_FLOAT32 || rt_elements(w) != (uint64_t)y->dims[y->rank - 1]))
    return rt_chk_fail(&c, "weights must be f32 [%lld]", (long long)y->dims[y->rank - 1]);
  return rt_chk_block_dim(&c, 1, "blocks");
}
