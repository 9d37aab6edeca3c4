/* kernels_count.c - the kinds that write a counted output (om_format.h's
 * COUNTS partition): NONZERO.
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
  memset(yd, 0, (size_t)y->bytes);
  uint64_t at = 0;
  for (uint64_t i = 0; i < total; i++) {
    uint64_t bits = 0;
    memcpy(&bits, xd + i * es, es); /* little-endian: the element's low bytes */
    if (!(bits & mask)) continue;
    uint64_t rest = i;
    for (int d = (int)x->rank - 1; d >= 0; d--)
      yd[(uint64_t)d * bound + at] = (int64_t)(rest % (uint64_t)x->dims[d]), rest /= (uint64_t)x->dims[d];
    at++;
  }
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
