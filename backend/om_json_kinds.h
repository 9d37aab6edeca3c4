/* om_json_kinds.h - what each task kind's tensor slots and params are
 * called in atc --mode=1's JSON (backend/om_json_kinds.c): the names
 * om_format.h gives them, and how a param's number is shown. Tables of
 * static storage: never freed, valid for the process.
 */
#ifndef BACKEND_OM_JSON_KINDS_H
#define BACKEND_OM_JSON_KINDS_H

#include <stdint.h>

#include "common/om_format.h"

typedef enum om_param_type {
  OM_PT_INT,       /* a number */
  OM_PT_HEX,       /* a bit set or packed nibbles, shown "0x..." */
  OM_PT_F32,       /* an IEEE-754 float's bits */
  OM_PT_ACT,       /* an om_act, shown by name */
  OM_PT_POOL_MODE, /* 0 max, 1 avg */
  OM_PT_REDUCE_OP  /* REDUCE's op, shown by name */
} om_param_type;

typedef struct om_param_desc {
  const char *name; /* NULL: the param is not shown */
  om_param_type type;
} om_param_desc;

typedef struct om_kind_desc {
  const char *name;                       /* "CONV2D" */
  const char *slots[OM_TASK_MAX_TENSORS]; /* NULL: an unnamed slot */
  om_param_desc params[OM_TASK_MAX_PARAMS];
} om_kind_desc;

/* Kind k's names, or NULL for a kind this table does not know (the dump
 * then gives the task's raw arrays). */
const om_kind_desc *om_kind_desc_of(uint32_t k);

/* QCONV2D's residual params, shown only when the task has its residual. */
extern const om_param_desc om_qconv_residual_params[OM_TASK_MAX_PARAMS];

#endif
