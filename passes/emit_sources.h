/* emit_sources.h - what each emitted task stands for in the source model
 * (the om's SOURCES partition, common/om_format.h). Part of emit. */
#ifndef PASSES_EMIT_SOURCES_H
#define PASSES_EMIT_SOURCES_H

#include "backend/om_write.h"
#include "common/status.h"
#include "ir/ir.h"

/* One emitted task as emit saw it: writes[s] is the value the task writes
 * in slot s (one of its node's outputs), NULL for a slot it reads or does
 * not use; names[s], for a slot writing through a view (ATTENTION's y),
 * the name of the tensor the view holds in its own order, else NULL. The
 * values and names are the graph's (borrowed for the call). */
typedef struct emit_task_src {
  const ir_value *writes[OM_TASK_MAX_TENSORS];
  const char *names[OM_TASK_MAX_TENSORS];
  int ntensors;
} emit_task_src;

/* Maps g->src (the ONNX nodes) onto the tasks tasks[0..ntasks), the tasks
 * emit just added to w, and appends their records to w's SOURCES partition
 * (a package of shape gears: one call per gear, in the gears' order, like
 * the tasks). Temporaries go in `scratch`. Fails only with
 * ST_ERR_NOMEM. */
status emit_sources(const ir_graph *g, const emit_task_src *tasks, int ntasks, om_writer *w, arena *scratch,
                    diag *d);

#endif
