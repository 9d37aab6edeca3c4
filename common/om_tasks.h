/* om_tasks.h - every task kind of the om package: the shared kind numbers
 * and conventions (om_task_kind.h), each family's slots and params
 * (om_tasks_cube.h, om_tasks_vector.h, om_aipp.h) and the table of every
 * kind's tensor access. Part of the om format (om_format.h includes it where
 * the TASKS partition's om_task record needs it; include om_format.h, not
 * this). docs/om-format.md's task table is the prose version. */
#ifndef COMMON_OM_TASKS_H
#define COMMON_OM_TASKS_H

#include "om_aipp.h"
#include "om_task_kind.h"
#include "om_tasks_cube.h"
#include "om_tasks_vector.h"

/* Every kind's tensor access: X(kind, writes, in_place). A kind missing
 * here has none, and the loader refuses its tasks. */
#define OM_TASK_ACCESS(X)                                                                                    \
  X(OM_TASK_TRANSDATA, OM_TRANSDATA_WRITES, 0)                                                               \
  X(OM_TASK_CONV2D, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_DWCONV, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_POOL, OM_POOL_WRITES, 0)                                                                         \
  X(OM_TASK_COPY_SLICE, OM_COPY_SLICE_WRITES, 0)                                                             \
  X(OM_TASK_SOFTMAX, OM_SOFTMAX_WRITES, 0)                                                                   \
  X(OM_TASK_VPROG, OM_VPROG_WRITES, 0)                                                                       \
  X(OM_TASK_REDUCE, OM_REDUCE_WRITES, 0)                                                                     \
  X(OM_TASK_STRIDED_COPY, OM_STRIDED_COPY_WRITES, 0)                                                         \
  X(OM_TASK_GATHER, OM_GATHER_WRITES, 0)                                                                     \
  X(OM_TASK_PAD, OM_PAD_WRITES, 0)                                                                           \
  X(OM_TASK_MATMUL, OM_MATMUL_WRITES, 0)                                                                     \
  X(OM_TASK_RESIZE, OM_RESIZE_WRITES, 0)                                                                     \
  X(OM_TASK_POOL_ND, OM_POOL_ND_WRITES, 0)                                                                   \
  X(OM_TASK_TOPK, OM_TOPK_WRITES, 0)                                                                         \
  X(OM_TASK_SCATTER, OM_SCATTER_WRITES, 0)                                                                   \
  X(OM_TASK_CUMSUM, OM_CUMSUM_WRITES, 0)                                                                     \
  X(OM_TASK_ONEHOT, OM_ONEHOT_WRITES, 0)                                                                     \
  X(OM_TASK_WPACK, OM_WPACK_WRITES, 0)                                                                       \
  X(OM_TASK_LAYERNORM, OM_LAYERNORM_WRITES, 0)                                                               \
  X(OM_TASK_ATTENTION, OM_ATTENTION_WRITES, 0)                                                               \
  X(OM_TASK_CONV3D, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_AIPP, OM_AIPP_WRITES, 0)                                                                         \
  X(OM_TASK_QCONV2D, OM_QCONV_WRITES, OM_QCONV_IN_PLACE)                                                     \
  X(OM_TASK_RECURRENCE, OM_RECURRENCE_WRITES, 0)                                                             \
  X(OM_TASK_NONZERO, OM_NONZERO_WRITES, 0)                                                                   \
  X(OM_TASK_NMS, OM_NMS_WRITES, 0)                                                                           \
  X(OM_TASK_UNIQUE, OM_UNIQUE_WRITES, 0)                                                                     \
  X(OM_TASK_TFIDF, OM_TFIDF_WRITES, 0)                                                                       \
  X(OM_TASK_QELTWISE, OM_QELTWISE_WRITES, 0)                                                                 \
  X(OM_TASK_QLUT, OM_QLUT_WRITES, 0)                                                                         \
  X(OM_TASK_QMATMUL, OM_QMATMUL_WRITES, 0)                                                                   \
  X(OM_TASK_DYNQUANT, OM_DYNQUANT_WRITES, 0)

#endif
