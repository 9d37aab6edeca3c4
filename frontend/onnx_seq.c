/* onnx_seq.c - ONNX sequences, resolved at import into the tensors they hold.
 *
 * A static-shape model has no run-time lists, but exporters use sequences as
 * plumbing: torch.onnx writes repeat_interleave (WaveRNN's Stretch2d) as a
 * SplitToSequence, a Loop whose body picks item i (SequenceAt) and appends
 * to a loop-carried sequence (SequenceEmpty, SequenceInsert), and a
 * ConcatFromSequence. Loops are unrolled at import (onnx_control.c), where
 * the iteration number is a constant, so every such sequence is a list known
 * at compile time. The ONNX value naming one is an IR value with no producer
 * and no dtype, which no IR node reads; the load context keeps its items by
 * value id (onnx_seq_of). The sequence ops read and make these lists:
 *   SequenceEmpty, SequenceConstruct   a new list;
 *   SplitToSequence                    one Split of its input (known shape;
 *                                      split absent, a chunk size or the
 *                                      sizes; keepdims 0 squeezes the axis
 *                                      of unit pieces);
 *   SequenceInsert, SequenceErase      a new list (position a constant);
 *   SequenceAt                         the item (position a constant);
 *   SequenceLength                     a constant;
 *   ConcatFromSequence                 one Concat of the items (each
 *                                      unsqueezed first with new_axis).
 * If and Loop pass lists through as outputs and loop-carried values
 * (dc_end). What cannot be resolved so (a position computed at run time, an
 * If choosing between sequences at run time, a sequence as a model input or
 * output) is a one-line error naming the node.
 */
#include <inttypes.h>
#include <string.h>

#include "common/elem.h"
#include "frontend/onnx_decomp.h"
#include "ir/view.h"

const onnx_seq *onnx_seq_of(const onnx_ctx *c, const ir_value *v) {
  return v && v->id < c->seqs_cap ? c->seqs[v->id] : NULL;
}

status onnx_seq_set(onnx_ctx *c, const ir_value *v, int n, ir_value *const *items) {
  if (v->id >= c->seqs_cap) {
    int cap = c->seqs_cap ? c->seqs_cap : 256;
    while (cap <= v->id)
      cap *= 2;
    onnx_seq **grown = arena_array(&c->scratch, (size_t)cap, sizeof *grown);
    if (!grown) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
    if (c->seqs_cap) memcpy(grown, c->seqs, (size_t)c->seqs_cap * sizeof *grown);
    c->seqs = grown, c->seqs_cap = cap;
  }
  onnx_seq *q = arena_alloc(&c->scratch, sizeof *q);
  ir_value **copy = arena_array(&c->scratch, (size_t)n + 1, sizeof *copy);
  if (!q || !copy) return onnx_fail(c, ST_ERR_NOMEM, "out of memory");
  if (n) memcpy(copy, items, (size_t)n * sizeof *copy);
  q->n = n, q->items = copy;
  c->seqs[v->id] = q;
  return ST_OK;
}

/* Input i as a sequence, or a failure. */
static const onnx_seq *seq_in(dc *b, int i) {
  ir_value *v = dc_in(b, i);
  const onnx_seq *q = b->st ? NULL : onnx_seq_of(b->nd->c, v);
  if (!b->st && !q) dc_fail(b, ST_ERR_INVALID, "input %d '%s' must be a sequence", i, v ? v->name : "");
  return q;
}

/* Input i as a tensor (a sequence is refused), or NULL. */
static ir_value *tensor_in(dc *b, int i) {
  ir_value *v = dc_in(b, i);
  if (!b->st && v && onnx_seq_of(b->nd->c, v))
    dc_fail(b, ST_ERR_INVALID, "input %d '%s' must be a tensor, not a sequence", i, v->name);
  return b->st ? NULL : v;
}

/* Output 0 names the sequence items[0..n). */
static status seq_out(dc *b, int n, ir_value *const *items) {
  if (!b->st && b->nd->out[0]) b->st = onnx_seq_set(b->nd->c, b->nd->out[0], n, items);
  return dc_end(b);
}

/* The position input i (a one-value integer constant) checked against
 * [lo, hi] and made non-negative with n; def when the input is omitted. */
static int64_t position(dc *b, int i, int64_t def, int64_t lo, int64_t hi, int64_t n) {
  ir_value *v = dc_in(b, i);
  double d = (double)def;
  if (b->st) return 0;
  if (v) {
    if (v->dtype != DT_INT64 && v->dtype != DT_INT32) {
      dc_fail(b, ST_ERR_INVALID, "input %d '%s' (position) must be int32 or int64", i, v->name);
      return 0;
    }
    if ((b->st = onnx_scalar_input(b->nd, i, "position", &d))) return 0;
  }
  int64_t p = (int64_t)d;
  if (p < lo || p > hi) {
    dc_fail(b, ST_ERR_INVALID,
            "position %" PRId64 " is outside [%" PRId64 ", %" PRId64 "] for a sequence of %" PRId64, p, lo,
            hi, n);
    return 0;
  }
  return p < 0 ? p + n : p;
}

status onnx_import_sequence_empty(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  return seq_out(&b, 0, NULL);
}

status onnx_import_sequence_construct(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value **items = arena_array(&nd->c->scratch, (size_t)nd->nin, sizeof *items);
  if (!items) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int i = 0; i < nd->nin && !b.st; i++)
    if (!(items[i] = tensor_in(&b, i))) dc_fail(&b, ST_ERR_INVALID, "input %d has no name", i);
  return seq_out(&b, nd->nin, items);
}

status onnx_import_split_to_sequence(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  ir_value *x = tensor_in(&b, 0), *sp = tensor_in(&b, 1);
  if (b.st) return b.st;
  char why[384];
  if (x->rank < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input '%s' needs a shape known at import%s", x->name,
                     onnx_data_origin(nd->c, x, why, sizeof why));
  int64_t axis = dc_attr_int(&b, "axis", 0), keepdims = dc_attr_int(&b, "keepdims", 1);
  if (axis < -x->rank || axis >= x->rank)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'axis' = %" PRId64 " is out of range for rank %d", axis,
                     x->rank);
  if (keepdims != 0 && keepdims != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'keepdims' = %" PRId64 " must be 0 or 1", keepdims);
  if (axis < 0) axis += x->rank;
  const int64_t len = x->dims[axis];
  int64_t *sizes = arena_array(&nd->c->scratch, IR_SPLIT_MAX_OUTPUTS, sizeof *sizes);
  if (!sizes) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  int n = 0;
  const ir_value *v = NULL;
  if (sp && (b.st = onnx_const_input(nd, 1, "split", &v))) return b.st;
  if (v && v->dtype != DT_INT64 && v->dtype != DT_INT32)
    return dc_refuse(&b, ST_ERR_INVALID, "input 1 '%s' (split) must be int32 or int64", v->name);
  if (v && v->rank == 1) { /* the sizes */
    int64_t total = 0, count = ir_value_elements(v);
    if (count > IR_SPLIT_MAX_OUTPUTS)
      return dc_refuse(&b, ST_ERR_LIMIT, "%" PRId64 " pieces are more than the limit of %d", count,
                       IR_SPLIT_MAX_OUTPUTS);
    for (int64_t k = 0; k < count; k++) {
      sizes[n] = elem_get_int(v->data, v->dtype, (size_t)k);
      if (sizes[n] < 0) return dc_refuse(&b, ST_ERR_INVALID, "split[%" PRId64 "] is negative", k);
      total += sizes[n++];
    }
    if (total != len)
      return dc_refuse(&b, ST_ERR_INVALID,
                       "the split sizes add up to %" PRId64 ", but axis %" PRId64 " of '%s' has %" PRId64,
                       total, axis, x->name, len);
  } else { /* one chunk size (split a scalar), or 1 */
    if (v && v->rank != 0)
      return dc_refuse(&b, ST_ERR_INVALID, "input 1 '%s' (split) must be a scalar or a 1-D list", v->name);
    int64_t chunk = v ? elem_get_int(v->data, v->dtype, 0) : 1;
    if (chunk < 1) return dc_refuse(&b, ST_ERR_INVALID, "the chunk size %" PRId64 " must be positive", chunk);
    if ((len + chunk - 1) / chunk > IR_SPLIT_MAX_OUTPUTS)
      return dc_refuse(&b, ST_ERR_LIMIT, "%" PRId64 " pieces are more than the limit of %d",
                       (len + chunk - 1) / chunk, IR_SPLIT_MAX_OUTPUTS);
    for (int64_t at = 0; at < len; at += chunk)
      sizes[n++] = len - at < chunk ? len - at : chunk;
  }
  ir_value **items = arena_array(&nd->c->scratch, (size_t)n + 1, sizeof *items);
  if (!items) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  ir_node *split = n > 0 ? dc_node_outs(&b, IR_OP_SPLIT, 1, &x, n) : NULL;
  if (split) {
    dc_set_int(&b, split, "axis", axis);
    dc_set_ints(&b, split, "split", n, sizes);
  }
  for (int k = 0; k < n && !b.st; k++) /* keepdims 0 drops the axis when no split is given */
    items[k] = !v && !keepdims ? dc_squeeze(&b, split->out[k], 1, &axis) : split->out[k];
  return seq_out(&b, n, items);
}

status onnx_import_sequence_insert(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const onnx_seq *q = seq_in(&b, 0);
  ir_value *t = tensor_in(&b, 1);
  if (b.st) return b.st;
  int64_t at = position(&b, 2, q->n, -(int64_t)q->n, q->n, q->n);
  ir_value **items = arena_array(&nd->c->scratch, (size_t)q->n + 1, sizeof *items);
  if (!b.st && !items) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  if (b.st) return b.st;
  memcpy(items, q->items, (size_t)at * sizeof *items);
  items[at] = t;
  memcpy(items + at + 1, q->items + at, (size_t)(q->n - at) * sizeof *items);
  return seq_out(&b, q->n + 1, items);
}

status onnx_import_sequence_erase(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const onnx_seq *q = seq_in(&b, 0);
  if (b.st) return b.st;
  if (q->n == 0) return dc_refuse(&b, ST_ERR_INVALID, "erases from an empty sequence");
  int64_t at = position(&b, 1, -1, -(int64_t)q->n, q->n - 1, q->n);
  ir_value **items = arena_array(&nd->c->scratch, (size_t)q->n, sizeof *items);
  if (!b.st && !items) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  if (b.st) return b.st;
  memcpy(items, q->items, (size_t)at * sizeof *items);
  memcpy(items + at, q->items + at + 1, (size_t)(q->n - at - 1) * sizeof *items);
  return seq_out(&b, q->n - 1, items);
}

status onnx_import_sequence_at(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const onnx_seq *q = seq_in(&b, 0);
  if (b.st) return b.st;
  if (q->n == 0) return dc_refuse(&b, ST_ERR_INVALID, "reads from an empty sequence");
  int64_t at = position(&b, 1, 0, -(int64_t)q->n, q->n - 1, q->n);
  if (!b.st) dc_output(&b, 0, q->items[at]);
  return dc_end(&b);
}

status onnx_import_sequence_length(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const onnx_seq *q = seq_in(&b, 0);
  if (!b.st) dc_output(&b, 0, dc_scalar(&b, DT_INT64, (double)q->n));
  return dc_end(&b);
}

status onnx_import_concat_from_sequence(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const onnx_seq *q = seq_in(&b, 0);
  if (b.st) return b.st;
  if (!dc_has_attr(&b, "axis")) return dc_refuse(&b, ST_ERR_INVALID, "attribute 'axis' is required");
  int64_t axis = dc_attr_int(&b, "axis", 0), new_axis = dc_attr_int(&b, "new_axis", 0);
  if (new_axis != 0 && new_axis != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'new_axis' = %" PRId64 " must be 0 or 1", new_axis);
  if (q->n == 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "concatenates an empty sequence (its result has no known shape)");
  ir_value **parts = arena_array(&nd->c->scratch, (size_t)q->n, sizeof *parts);
  if (!parts) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int k = 0; k < q->n && !b.st; k++)
    parts[k] = new_axis ? dc_unsqueeze(&b, q->items[k], 1, &axis) : q->items[k];
  if (!b.st) dc_output(&b, 0, dc_concat(&b, axis, q->n, parts));
  return dc_end(&b);
}
