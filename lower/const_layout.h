/* const_layout.h - a constant's payload converted at compile time into a
 * cube layout and dtype (lower/const_layout.c), for the layout pass.
 */
#ifndef LOWER_CONST_LAYOUT_H
#define LOWER_CONST_LAYOUT_H

#include <stdint.h>

#include "ir/ir.h"

/* The payload of ND constant c reinterpreted with logical dims `dims` (same
 * element count) in layout `lay` and dtype `dt` (c's own dtype of 2 or 4
 * bytes, whose bits move as they are, or f16 <-> f32 converted; with clip,
 * a finite f32 beyond fp16's range becomes +-65504, not +-inf),
 * padding zero; NULL when out of memory, when a dtype is a storage dtype or
 * when the layout's size overflows. The payload is in g's arena (lives as
 * long as g). replaced: the caller replaces c's payload with the result, so
 * a large one of c's own is given back as it is read (ir_payload_reader)
 * and the new one is faulted in as it is written. */
void *const_layout_convert(ir_graph *g, const ir_value *c, int lay, int dt, int rank, const int64_t *dims,
                           int replaced, int clip);

#endif
