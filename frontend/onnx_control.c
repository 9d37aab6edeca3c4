/* onnx_control.c - If, Loop and Scan, resolved at import into straight-line IR.
 *
 * A static-shape NPU model has no control flow of its own, so the importer
 * removes it, importing each subgraph as often as it runs
 * (onnx_import_subgraph, onnx_load.c) with its formal inputs bound:
 *
 *   If    with a condition that folds to a constant: the taken branch only.
 *         With a run-time condition: both branches, and each output is
 *         Where(cond, then, else), so the om computes both and selects one;
 *         the branches must then agree on each output's dtype and shape,
 *         but for one axis where one may be shorter (an empty result) or
 *         counted: the output is then counted along it (select_extents).
 *   Loop  unrolled: the body once per iteration with the iteration number and
 *         the condition bound as constants and the loop-carried values
 *         threaded through. The trip count M must be a constant; the body's
 *         condition output must fold to a constant in every iteration (a
 *         loop that stops on a run-time value has no static shape). Scan
 *         outputs are the iterations' values stacked on a new axis 0.
 *   Scan  unrolled over the scan axis: iteration t binds the states and
 *         slice t (Gather with a scalar index) of each scan input; the scan
 *         outputs are stacked on their scan_output_axes. Opset 8's batch
 *         axis runs the same per batch entry and stacks the results.
 *
 * Iterations are bounded (LOOP_MAX_ITERATIONS, and ONNX_UNROLL_MAX_NODES over
 * the whole load), so a trip count of 2^40 is a one-line error, not an
 * endless import. Everything is built with the decomposition builder
 * (onnx_decomp.h), which names what it makes after the ONNX node and wires
 * the final values to the node's outputs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/elem.h"
#include "frontend/onnx_decomp.h"

enum {
  LOOP_MAX_ITERATIONS = 4096, /* iterations one Loop or Scan is unrolled to */
  CF_MAX_VALUES = 64,         /* carried and scanned values of one Loop or Scan */
};

/* GRAPH attribute `name` (check_attrs checked its kind), or a failure. */
static const Onnx__GraphProto *graph_attr(dc *b, const char *name) {
  const Onnx__AttributeProto *a = onnx_attr(b->nd, name);
  if (!a || !a->g) dc_fail(b, ST_ERR_INVALID, "attribute '%s' (a graph) is required", name);
  return a ? a->g : NULL;
}

/* The subgraph's interface: `nin` inputs and `nout` outputs. */
static void check_arity(dc *b, const char *what, const Onnx__GraphProto *gp, size_t nin, size_t nout) {
  if (!b->st && (gp->n_input != nin || gp->n_output != nout))
    dc_fail(b, ST_ERR_INVALID, "%s has %zu inputs and %zu outputs, expected %zu and %zu", what, gp->n_input,
            gp->n_output, nin, nout);
}

/* Imports gp once more (onnx_import_subgraph); 0 on success, else the
 * failure is the builder's. The nodes the builder made since the last import
 * (the slices a Scan binds) are inferred first, so that the subgraph sees
 * their shapes; the subgraph's own nodes are inferred as they are imported. */
static int import(dc *b, const Onnx__GraphProto *gp, ir_value *const *in, ir_value **out) {
  dc_infer(b);
  if (b->st) return -1;
  b->st = onnx_import_subgraph(b->nd, gp, in, out);
  b->inferred = b->g->nnodes; /* the subgraph's nodes are */
  return b->st ? -1 : 0;
}

/* The one value of a constant v (a condition, a trip count) as an int64;
 * 0 when v is not a one-element constant. */
static int const_int(const ir_value *v, int64_t *out) {
  if (!v || !v->data || ir_value_elements(v) != 1) return 0;
  *out =
      elem_is_float(v->dtype) ? (int64_t)elem_get(v->data, v->dtype, 0) : elem_get_int(v->data, v->dtype, 0);
  return 1;
}

static const char *shape_str(const ir_value *v, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s [", dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
  for (int i = 0; i < v->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? "," : "", v->dims[i]);
  if (n < size) snprintf(buf + n, size - n, "%s", v->rank < 0 ? "unknown]" : "]");
  return buf;
}

/* Values v[0..n) stacked along a new axis `axis` (of the result). */
static ir_value *stack(dc *b, ir_value *const *v, int n, int64_t axis) {
  ir_value **parts = b->st ? NULL : arena_array(&b->nd->c->scratch, (size_t)n, sizeof *parts);
  if (!b->st && !parts) return dc_fail(b, ST_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n && !b->st; i++)
    parts[i] = dc_unsqueeze(b, v[i], 1, &axis);
  return b->st ? NULL : dc_concat(b, axis, n, parts);
}

/* --- If */

/* The extent of v along axis a: its count (i64 [1]) or its static extent. */
static ir_value *extent(dc *b, ir_value *v, int a) {
  return v->count_axis == a && v->count ? v->count : dc_ints(b, 1, &v->dims[a]);
}

/* x (dense) padded with zeros at the end of axis a to `bound`. */
static ir_value *pad_to(dc *b, ir_value *x, int a, int64_t bound) {
  if (x->dims[a] == bound) return x;
  int64_t pads[2 * MAX_RANK] = {0};
  pads[x->rank + a] = bound - x->dims[a];
  if (ir_value_elements(x) > 0) return dc_pad(b, x, x->rank, pads, 0.0);
  int64_t dims[MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[a] = bound;
  ir_value probe = {.dtype = x->dtype, .rank = x->rank};
  memcpy(probe.dims, dims, sizeof dims);
  int64_t bytes = ir_value_bytes(&probe);
  void *zeros = bytes >= 0 ? arena_array(&b->nd->c->scratch, (size_t)bytes + 1, 1) : NULL;
  if (zeros) memset(zeros, 0, (size_t)bytes + 1);
  return zeros ? dc_const(b, x->dtype, x->rank, dims, zeros) : dc_fail(b, ST_ERR_NOMEM, "out of memory");
}

/* A run-time condition's result when the branches give output extents that
 * differ along one axis a only (an empty branch against a counted one: a
 * detector's "no boxes" case): a value counted along a, at the larger
 * bound, holding the taken branch's valid rows. Both branches are padded to
 * the bound (a counted one is already), selected, and the rows below the
 * taken branch's extent gathered (NonZero of iota < extent counts them).
 * NULL when the branches differ otherwise. */
static ir_value *select_extents(dc *b, ir_value *sel, ir_value *t, ir_value *e) {
  int a = -1;
  if (t->dtype != e->dtype || t->rank < 1 || t->rank != e->rank) return NULL;
  for (int d = 0; d < t->rank; d++)
    if (t->dims[d] != e->dims[d]) {
      if (a >= 0) return NULL;
      a = d;
    }
  for (int k = 0; k < 2; k++) { /* dense, or counted along a only */
    const ir_value *v = k ? e : t;
    if (v->count && v->count_axis != a) return NULL;
  }
  int64_t bound = t->dims[a] > e->dims[a] ? t->dims[a] : e->dims[a];
  if ((t->count && t->dims[a] != bound) || (e->count && e->dims[a] != bound)) return NULL;
  ir_value *n = dc_where(b, sel, extent(b, t, a), extent(b, e, a));
  ir_value *v = dc_where(b, sel, pad_to(b, t, a, bound), pad_to(b, e, a, bound));
  int64_t *iota = b->st ? NULL : arena_array(&b->nd->c->scratch, (size_t)bound + 1, sizeof *iota);
  if (!b->st && !iota) return dc_fail(b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; iota && i < bound; i++)
    iota[i] = i;
  ir_value *mask = dc_op2(b, IR_OP_LESS, dc_const(b, DT_INT64, 1, &bound, iota), n);
  ir_node *nz = b->st ? NULL : dc_node_outs(b, IR_OP_NONZERO, 1, &mask, 2);
  if (b->st || !nz) return NULL;
  nz->out[1]->dtype = DT_INT64;
  return dc_gather(b, v, dc_reshape_to(b, nz->out[0], 1, &bound), a);
}

status onnx_import_if(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const Onnx__GraphProto *then_g = graph_attr(&b, "then_branch"), *else_g = graph_attr(&b, "else_branch");
  if (b.st) return b.st;
  size_t nout = (size_t)nd->nout;
  check_arity(&b, "then_branch", then_g, 0, nout);
  check_arity(&b, "else_branch", else_g, 0, nout);
  ir_value *cond = dc_in(&b, 0), *t[DC_MAX_OUTPUTS], *e[DC_MAX_OUTPUTS];
  int64_t c;
  if (const_int(cond, &c)) { /* resolved at compile time: the taken branch only */
    import(&b, c ? then_g : else_g, NULL, t);
    for (int k = 0; !b.st && k < nd->nout; k++)
      dc_output(&b, k, t[k]);
    return dc_end(&b);
  }
  char why[384];
  if (ir_value_elements(cond) < 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "the condition '%s' has a shape known only at run time%s",
                     cond->name, onnx_data_origin(nd->c, cond, why, sizeof why));
  if (ir_value_elements(cond) != 1)
    return dc_refuse(&b, ST_ERR_INVALID, "the condition '%s' must hold one value, it holds %" PRId64,
                     cond->name, ir_value_elements(cond));
  import(&b, then_g, NULL, t);
  import(&b, else_g, NULL, e);
  for (int k = 0; !b.st && k < nd->nout; k++)
    if (onnx_seq_of(nd->c, t[k]) || onnx_seq_of(nd->c, e[k]))
      return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                       "output %d is a sequence, which is resolved at import; the condition '%s' is "
                       "computed at run time",
                       k, cond->name);
  const int64_t scalar = 0; /* no dims */
  ir_value *sel = cond->rank > 0 ? dc_reshape_to(&b, cond, 0, &scalar) : cond;
  for (int k = 0; !b.st && k < nd->nout; k++) {
    int same = t[k]->dtype == e[k]->dtype && t[k]->rank >= 0 && t[k]->rank == e[k]->rank &&
               !memcmp(t[k]->dims, e[k]->dims, (size_t)t[k]->rank * sizeof *t[k]->dims);
    char ts[160], es[160];
    ir_value *v = same ? NULL : select_extents(&b, sel, t[k], e[k]);
    if (v) {
      dc_output(&b, k, v);
      continue;
    }
    if (!same)
      return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                       "the condition '%s' is computed at run time, so both branches run and the "
                       "result is selected; they must agree on output %d's type and shape, but "
                       "then_branch gives %s and else_branch %s",
                       cond->name, k, shape_str(t[k], ts, sizeof ts), shape_str(e[k], es, sizeof es));
    dc_output(&b, k, dc_where(&b, sel, t[k], e[k]));
  }
  return dc_end(&b);
}

/* --- Loop */

/* Whether the body passes its condition input straight through (directly or
 * by an Identity): then only the trip count ends the loop. */
static int cond_passes_through(const Onnx__GraphProto *body) {
  const char *in = body->input[1]->name, *out = body->output[0]->name;
  if (!in || !out) return 0;
  if (!strcmp(in, out)) return 1;
  for (size_t i = 0; i < body->n_node; i++) {
    const Onnx__NodeProto *n = body->node[i];
    if (n->n_output == 1 && !strcmp(n->output[0], out))
      return !strcmp(n->op_type, "Identity") && n->n_input == 1 && !strcmp(n->input[0], in);
  }
  return 0;
}

status onnx_import_loop(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  const Onnx__GraphProto *body = graph_attr(&b, "body");
  if (b.st) return b.st;
  int ncarried = nd->nin - 2, nscan = nd->nout - ncarried;
  if (ncarried < 0)
    return dc_refuse(&b, ST_ERR_INVALID, "has %d inputs, Loop takes M, cond and more", nd->nin);
  if (nscan < 0)
    return dc_refuse(&b, ST_ERR_INVALID, "has %d loop-carried inputs but only %d outputs", ncarried,
                     nd->nout);
  if (ncarried + nscan > CF_MAX_VALUES)
    return dc_refuse(&b, ST_ERR_LIMIT, "has more than %d loop-carried and scan values", CF_MAX_VALUES);
  check_arity(&b, "body", body, (size_t)ncarried + 2, (size_t)(1 + ncarried + nscan));
  if (b.st) return b.st;
  ir_value *m = dc_in(&b, 0), *cond = dc_in(&b, 1);
  int64_t trips = INT64_MAX, go = 1;
  if (m && !const_int(m, &trips))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "the trip count M '%s' is computed at run time; Loop is unrolled at compile time and "
                     "needs a constant",
                     m->name);
  if (cond && !const_int(cond, &go))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                     "the condition '%s' is computed at run time; Loop is unrolled at compile time and "
                     "needs a constant",
                     cond->name);
  if (trips > LOOP_MAX_ITERATIONS && go && cond_passes_through(body))
    return dc_refuse(&b, ST_ERR_LIMIT,
                     "trip count %" PRId64 " is more than the %d iterations a Loop is unrolled to "
                     "(loops do not run on the device)",
                     trips, LOOP_MAX_ITERATIONS);
  ir_value *cur[CF_MAX_VALUES], *outs[1 + CF_MAX_VALUES], *in[2 + CF_MAX_VALUES];
  ir_value **scans =
      arena_array(&nd->c->scratch, (size_t)(nscan > 0 ? nscan : 1) * LOOP_MAX_ITERATIONS, sizeof *scans);
  if (!scans) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int k = 0; k < ncarried; k++)
    if (!(cur[k] = dc_in(&b, 2 + k)))
      return dc_refuse(&b, ST_ERR_INVALID, "loop-carried input %d has no name", 2 + k);
  int64_t it = 0;
  for (; it < trips && go && !b.st; it++) {
    if (it == LOOP_MAX_ITERATIONS)
      return dc_refuse(&b, ST_ERR_LIMIT,
                       "still running after %d iterations, the most a Loop is unrolled to (loops do not "
                       "run on the device)",
                       LOOP_MAX_ITERATIONS);
    in[0] = dc_scalar(&b, DT_INT64, (double)it);
    in[1] = dc_scalar(&b, DT_BOOL, 1);
    for (int k = 0; k < ncarried; k++)
      in[2 + k] = cur[k];
    if (import(&b, body, in, outs)) break;
    if (!const_int(outs[0], &go))
      return dc_refuse(&b, ST_ERR_UNSUPPORTED,
                       "the body's condition output '%s' is computed at run time in iteration %" PRId64
                       "; a Loop must stop at a trip count known at compile time",
                       outs[0]->name, it);
    for (int k = 0; k < ncarried; k++)
      cur[k] = outs[1 + k];
    for (int j = 0; j < nscan; j++)
      scans[(size_t)j * LOOP_MAX_ITERATIONS + (size_t)it] = outs[1 + ncarried + j];
  }
  if (b.st) return b.st;
  if (nscan > 0 && it == 0)
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "runs no iteration, so its scan outputs would be empty");
  for (int k = 0; k < ncarried; k++)
    dc_output(&b, k, cur[k]);
  for (int j = 0; j < nscan; j++)
    dc_output(&b, ncarried + j, stack(&b, scans + (size_t)j * LOOP_MAX_ITERATIONS, (int)it, 0));
  return dc_end(&b);
}

/* --- Scan */

/* One Scan (a sequence: opset 9's whole input, or one batch entry of opset
 * 8's): states[nstate], the scan inputs xs[nx] (with their axes and
 * directions) in, the final states and the stacked scan outputs (with their
 * axes and directions) into res[nstate + ny]. */
typedef struct scan_spec {
  const Onnx__GraphProto *body;
  int nstate, nx, ny;
  int64_t in_axis[CF_MAX_VALUES], in_dir[CF_MAX_VALUES], out_axis[CF_MAX_VALUES], out_dir[CF_MAX_VALUES];
} scan_spec;

static void scan_run(dc *b, const scan_spec *sp, ir_value *const *states, ir_value *const *xs,
                     ir_value **res) {
  int64_t steps = -1;
  dc_infer(b); /* opset 8's per-batch slices */
  for (int j = 0; j < sp->nx && !b->st; j++) {
    const ir_value *x = xs[j];
    int64_t axis = sp->in_axis[j] < 0 ? sp->in_axis[j] + x->rank : sp->in_axis[j];
    if (x->rank < 0)
      dc_fail(b, ST_ERR_UNSUPPORTED, "scan input '%s' needs a known shape", x->name);
    else if (axis < 0 || axis >= x->rank)
      dc_fail(b, ST_ERR_INVALID, "scan_input_axes[%d] = %" PRId64 " is out of range for rank %d", j,
              sp->in_axis[j], x->rank);
    else if (steps >= 0 && x->dims[axis] != steps)
      dc_fail(b, ST_ERR_INVALID, "scan input '%s' has %" PRId64 " steps, the first has %" PRId64, x->name,
              x->dims[axis], steps);
    else
      steps = x->dims[axis];
  }
  if (b->st) return;
  if (steps > LOOP_MAX_ITERATIONS) {
    dc_fail(b, ST_ERR_LIMIT, "%" PRId64 " steps are more than the %d a Scan is unrolled to", steps,
            LOOP_MAX_ITERATIONS);
    return;
  }
  if (steps <= 0 && sp->ny > 0) {
    dc_fail(b, ST_ERR_UNSUPPORTED, "scans no step, so its scan outputs would be empty");
    return;
  }
  ir_value *cur[CF_MAX_VALUES], *in[CF_MAX_VALUES], *outs[CF_MAX_VALUES];
  ir_value **ys =
      arena_array(&b->nd->c->scratch, (size_t)(sp->ny > 0 ? sp->ny : 1) * (size_t)(steps + 1), sizeof *ys);
  if (!ys) {
    dc_fail(b, ST_ERR_NOMEM, "out of memory");
    return;
  }
  for (int k = 0; k < sp->nstate; k++)
    cur[k] = states[k];
  for (int64_t t = 0; t < steps && !b->st; t++) {
    for (int k = 0; k < sp->nstate; k++)
      in[k] = cur[k];
    for (int j = 0; j < sp->nx; j++) {
      int64_t axis = sp->in_axis[j] < 0 ? sp->in_axis[j] + xs[j]->rank : sp->in_axis[j];
      int64_t at = sp->in_dir[j] ? steps - 1 - t : t;
      in[sp->nstate + j] = dc_gather(b, xs[j], dc_scalar(b, DT_INT64, (double)at), axis);
    }
    if (import(b, sp->body, in, outs)) return;
    for (int k = 0; k < sp->nstate; k++)
      cur[k] = outs[k];
    for (int j = 0; j < sp->ny; j++) {
      int64_t at = sp->out_dir[j] ? steps - 1 - t : t; /* reversed outputs are stacked back to front */
      ys[(size_t)j * (size_t)steps + (size_t)at] = outs[sp->nstate + j];
    }
  }
  for (int k = 0; k < sp->nstate; k++)
    res[k] = cur[k];
  for (int j = 0; j < sp->ny && !b->st; j++) {
    const ir_value *y0 = ys[(size_t)j * (size_t)steps];
    if (y0->rank < 0) {
      dc_fail(b, ST_ERR_UNSUPPORTED, "scan output %d '%s' needs a known shape", j, y0->name);
      return;
    }
    int64_t axis = sp->out_axis[j] < 0 ? sp->out_axis[j] + y0->rank + 1 : sp->out_axis[j];
    if (axis < 0 || axis > y0->rank) {
      dc_fail(b, ST_ERR_INVALID, "scan_output_axes[%d] = %" PRId64 " is out of range for rank %d", j,
              sp->out_axis[j], y0->rank + 1);
      return;
    }
    res[sp->nstate + j] = stack(b, ys + (size_t)j * (size_t)steps, (int)steps, axis);
  }
}

/* INTS attribute `name` with `count` values, or `count` zeros when absent. */
static void scan_attr(dc *b, const char *name, int count, int64_t *out) {
  memset(out, 0, (size_t)count * sizeof *out);
  int n = dc_attr_ints(b, name, out, CF_MAX_VALUES);
  if (n >= 0 && n != count)
    dc_fail(b, ST_ERR_INVALID, "attribute '%s' has %d values, expected %d", name, n, count);
  for (int i = 0; n >= 0 && i < count && strstr(name, "directions"); i++)
    if (out[i] != 0 && out[i] != 1)
      dc_fail(b, ST_ERR_INVALID, "attribute '%s'[%d] = %" PRId64 " must be 0 or 1", name, i, out[i]);
}

status onnx_import_scan(onnx_node *nd, ir_node *none) {
  (void)none;
  dc b;
  dc_begin(&b, nd);
  scan_spec sp = {.body = graph_attr(&b, "body")};
  if (b.st) return b.st;
  int batched = nd->c->opset < 9, first = batched ? 1 : 0; /* opset 8: sequence_lens, then the rest */
  if (batched && dc_in(&b, 0))
    return dc_refuse(&b, ST_ERR_UNSUPPORTED, "input 0 'sequence_lens' is not supported (omit it)");
  int64_t nx = dc_attr_int(&b, "num_scan_inputs", -1);
  int nvals = nd->nin - first;
  if (nvals < 1) return dc_refuse(&b, ST_ERR_INVALID, "has no state or scan input");
  if (nx < 1 || nx > nvals)
    return dc_refuse(&b, ST_ERR_INVALID, "attribute 'num_scan_inputs' must be 1 to %d", nvals);
  sp.nx = (int)nx;
  sp.nstate = nvals - sp.nx;
  sp.ny = nd->nout - sp.nstate;
  if (sp.ny < 0 || nvals > CF_MAX_VALUES || nd->nout > CF_MAX_VALUES)
    return dc_refuse(&b, ST_ERR_INVALID, "has %d states and %d outputs", sp.nstate, nd->nout);
  check_arity(&b, "body", sp.body, (size_t)nvals, (size_t)nd->nout);
  scan_attr(&b, batched ? "directions" : "scan_input_directions", sp.nx, sp.in_dir);
  if (!batched) {
    scan_attr(&b, "scan_input_axes", sp.nx, sp.in_axis);
    scan_attr(&b, "scan_output_axes", sp.ny, sp.out_axis);
    scan_attr(&b, "scan_output_directions", sp.ny, sp.out_dir);
  }
  if (b.st) return b.st;
  ir_value *states[CF_MAX_VALUES], *xs[CF_MAX_VALUES], *res[CF_MAX_VALUES];
  for (int k = 0; k < nvals; k++)
    if (!dc_in(&b, first + k)) return dc_refuse(&b, ST_ERR_INVALID, "input %d has no name", first + k);
  for (int k = 0; k < sp.nstate; k++)
    states[k] = dc_in(&b, first + k);
  for (int j = 0; j < sp.nx; j++)
    xs[j] = dc_in(&b, first + sp.nstate + j);
  if (!batched) {
    scan_run(&b, &sp, states, xs, res);
    for (int k = 0; k < nd->nout && !b.st; k++)
      dc_output(&b, k, res[k]);
    return dc_end(&b);
  }
  /* Opset 8: axis 0 of every input and output is the batch; each entry is
   * one opset-9 scan along axis 1 of the inputs (axis 0 once selected). */
  const ir_value *x0 = xs[0];
  if (x0->rank < 1) return dc_refuse(&b, ST_ERR_UNSUPPORTED, "scan input '%s' needs a known shape", x0->name);
  int64_t batch = x0->dims[0];
  if (batch < 1 || batch > LOOP_MAX_ITERATIONS)
    return dc_refuse(&b, ST_ERR_LIMIT, "batch %" PRId64 " is not 1 to %d", batch, LOOP_MAX_ITERATIONS);
  ir_value **per = arena_array(&nd->c->scratch, (size_t)nd->nout * (size_t)batch, sizeof *per);
  if (!per) return dc_refuse(&b, ST_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < batch && !b.st; i++) {
    ir_value *bs[CF_MAX_VALUES], *bx[CF_MAX_VALUES];
    for (int k = 0; k < sp.nstate; k++)
      bs[k] = dc_gather(&b, states[k], dc_scalar(&b, DT_INT64, (double)i), 0);
    for (int j = 0; j < sp.nx; j++)
      bx[j] = dc_gather(&b, xs[j], dc_scalar(&b, DT_INT64, (double)i), 0);
    if (b.st) break;
    scan_run(&b, &sp, bs, bx, res);
    for (int k = 0; k < nd->nout && !b.st; k++)
      per[(size_t)k * (size_t)batch + (size_t)i] = res[k];
  }
  for (int k = 0; k < nd->nout && !b.st; k++)
    dc_output(&b, k, stack(&b, per + (size_t)k * (size_t)batch, (int)batch, 0));
  return dc_end(&b);
}
