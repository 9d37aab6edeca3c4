/* test_view_alias.c - views memplan makes aliases (passes/memplan.c: a
 * view that reads a gapless C-order run of its input at a 64-byte multiple
 * is that run of the input's buffer, no STRIDED_COPY), run through libomrt
 * against the reference evaluator.
 *
 * x [4, 1, 32] -> Relu -> r, then of r: the Slice of rows 1..3 (a run 1 row
 * = 32 floats = 128 bytes in: an alias at an offset), the Transpose to
 * [1, 4, 32] (moves a dim of 1: an alias at 0), and as copies the Slice of
 * the first 16 columns and the Transpose to [32, 1, 4]; each doubled by an
 * Add into a graph output. In must_keep_origin_dtype everything stays f32,
 * so the runtime's outputs equal the evaluator's exactly; the package
 * holds exactly the two copies' STRIDED_COPY tasks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/om_format.h"
#include "ir/eval.h"
#include "omrt.h"
#include "onnx_mb.h"
#include "runtime/rt.h"

enum { NOUT = 4 };
static const size_t out_elems[NOUT] = {3 * 32, 4 * 32, 4 * 16, 32 * 4};

static void model(mb *m) {
  mb_init(m, 13);
  mb_input(m, "x", DT_FLOAT32, 3, (int64_t[]){4, 1, 32}, NULL);
  mb_node(m, "Relu", "relu", "x", "r");
  mb_init_raw(m, "st1", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){1}, 8);
  mb_init_raw(m, "en1", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){4}, 8);
  mb_init_raw(m, "ax0", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){0}, 8);
  mb_node(m, "Slice", "rows", "r,st1,en1,ax0", "s1");
  Onnx__NodeProto *t = mb_node(m, "Transpose", "move_one", "r", "t1");
  attr_ints(m, t, "perm", 3, (int64_t[]){1, 0, 2});
  mb_init_raw(m, "st0", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){0}, 8);
  mb_init_raw(m, "en16", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){16}, 8);
  mb_init_raw(m, "ax2", DT_INT64, 1, (int64_t[]){1}, (int64_t[]){2}, 8);
  mb_node(m, "Slice", "half_rows", "r,st0,en16,ax2", "s2");
  t = mb_node(m, "Transpose", "swap", "r", "t2");
  attr_ints(m, t, "perm", 3, (int64_t[]){2, 1, 0});
  mb_node(m, "Add", "use_s1", "s1,s1", "a");
  mb_node(m, "Add", "use_t1", "t1,t1", "b");
  mb_node(m, "Add", "use_s2", "s2,s2", "c");
  mb_node(m, "Add", "use_t2", "t2,t2", "d");
  mb_output(m, "a");
  mb_output(m, "b");
  mb_output(m, "c");
  mb_output(m, "d");
}

int main(void) {
  float x[4 * 32], got[NOUT][4 * 32];
  for (int i = 0; i < 4 * 32; i++)
    x[i] = (float)((i * 37) % 23) - 9.5f;
  mb m;
  model(&m);
  ir_graph *g = EXPECT_OK(&m, ".", NULL);
  mb_run r;
  const void *in[1] = {x};
  void *out[NOUT] = {got[0], got[1], got[2], got[3]};
  if (mb_run_open(&m, "view_alias.onnx", OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE, &r)) {
    CHECK_EQ_INT(omrt_execute(r.ctx, in, out), OMRT_OK);
    CHECK_EQ_INT(mb_count_tasks(r.model, OM_TASK_STRIDED_COPY), 2);
  }
  arena a;
  arena_init(&a, 0);
  void *ref[NOUT];
  if (g && mb_eval(g, in, ref, &a) == 0)
    for (int k = 0; k < NOUT; k++)
      CHECKF(memcmp(ref[k], got[k], out_elems[k] * sizeof(float)) == 0,
             "  output %d: runtime and evaluator differ", k);
  else
    CHECK(!"evaluates");
  arena_free(&a);
  mb_run_close(&r);
  ir_graph_free(g);
  return test_summary("view_alias");
}
