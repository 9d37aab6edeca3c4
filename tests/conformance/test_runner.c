/* test_runner.c - the conformance runner's own test (ctest conformance/runner).
 *
 * Builds a small node-test directory under the build tree and runs the
 * `conformance` executable on it:
 *   test_relu, test_add, test_maxpool_2d_default, test_reshape_reduced_dims
 *                           copies of real ONNX node tests: PASS (the last one
 *                           needs its shape input bound as a constant);
 *   test_relu_corrupt       test_relu with its last expected float moved by
 *                           +1: FAIL naming output 0 and the error;
 *   test_relu_expanded      a copy counted toward Relu, marked expanded;
 *   test_zz_nosuchop        a model built here with op "NoSuchOp": FAIL with
 *                           the compiler's own message;
 * then checks crash and hang isolation (--inject-crash / --inject-hang), the
 * missing-directory error and the --expected regression guard.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx.pb-c.h"
#include "support.h"

static char root[4096];

static void sh(const char *fmt, const char *a, const char *b) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, fmt, a, b);
  if (test_run(cmd, NULL) != 0) test_note("command failed: %s", cmd);
}

/* Copies the real node test `name` into root/`as`. */
static void copy_test(const char *name, const char *as) {
  char src[4200], dst[4200];
  snprintf(src, sizeof src, "%s/%s", ONNX_NODE_TESTS_DEFAULT, name);
  snprintf(dst, sizeof dst, "%s/%s", root, as);
  sh("cp -r '%s' '%s'", src, dst);
}

/* Adds 1.0 to the last float of an output_0.pb whose raw_data comes last
 * (the layout ONNX's generator writes: field 9 after fields 1, 2 and 8). */
static void corrupt_last_float(const char *path) {
  size_t size = 0;
  unsigned char *p = test_read_file(path, &size);
  CHECK(p && size > 4);
  if (!p || size <= 4) return;
  float f;
  memcpy(&f, p + size - 4, 4);
  f += 1.0f;
  memcpy(p + size - 4, &f, 4);
  CHECK(test_write_file(path, p, size) == 0);
  free(p);
}

/* A model y = NoSuchOp(x), x and y float32 [3, 4, 5] (test_relu's data), opset 17. */
static void write_nosuchop_model(const char *path) {
  Onnx__TensorShapeProto__Dimension d[3];
  Onnx__TensorShapeProto__Dimension *dims[3];
  for (int i = 0; i < 3; i++) {
    d[i] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d[i].dim_value = 3 + i;
    dims[i] = &d[i];
  }
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 3;
  shape.dim = dims;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  tt.has_elem_type = 1;
  tt.elem_type = 1;
  tt.shape = &shape;
  Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
  type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type.tensor_type = &tt;
  Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = x;
  x.name = "x";
  y.name = "y";
  x.type = y.type = &type;
  char *in[1] = {"x"}, *out[1] = {"y"};
  Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
  node.name = "n0";
  node.op_type = "NoSuchOp";
  node.n_input = 1;
  node.input = in;
  node.n_output = 1;
  node.output = out;
  Onnx__NodeProto *nodes[1] = {&node};
  Onnx__ValueInfoProto *xs[1] = {&x}, *ys[1] = {&y};
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "nosuchop";
  g.n_node = 1;
  g.node = nodes;
  g.n_input = 1;
  g.input = xs;
  g.n_output = 1;
  g.output = ys;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 17;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.n_opset_import = 1;
  m.opset_import = opsets;
  m.graph = &g;
  size_t size = onnx__model_proto__get_packed_size(&m);
  unsigned char *buf = malloc(size);
  CHECK(buf != NULL);
  if (!buf) return;
  onnx__model_proto__pack(&m, buf);
  CHECK(test_write_file(path, buf, size) == 0);
  free(buf);
}

/* The output line of `test` in `mode`, copied into line (empty if none). */
static const char *find_line(const char *out, const char *test, const char *mode, char *line, size_t size) {
  line[0] = '\0';
  size_t tl = strlen(test);
  for (const char *p = out; p && *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > tl && !strncmp(p, test, tl) && p[tl] == ' ') {
      snprintf(line, size, "%.*s", (int)len, p);
      if (strstr(line, mode)) return line;
    }
    p = end ? end + 1 : NULL;
  }
  line[0] = '\0';
  return line;
}

static void expect_line(const char *out, const char *test, const char *mode, const char *verdict,
                        const char *reason_part) {
  char line[2048];
  find_line(out, test, mode, line, sizeof line);
  int ok = strstr(line, verdict) && (!reason_part || strstr(line, reason_part));
  CHECK(ok);
  if (!ok)
    test_note("  %s %s: wanted %s%s%s, got line \"%s\"", test, mode, verdict, reason_part ? " with " : "",
              reason_part ? reason_part : "", line);
}

static int run(const char *args, char **out) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s %s", CONFORMANCE_BIN, args);
  int rc = test_run(cmd, out);
  if (!*out) *out = strdup("");
  return rc;
}

int main(void) {
  struct stat st;
  if (stat(ONNX_NODE_TESTS_DEFAULT, &st) != 0) {
    test_note("the ONNX node tests are not at %s", ONNX_NODE_TESTS_DEFAULT);
    CHECK(!"node tests present");
    return test_summary("conformance_runner");
  }
  snprintf(root, sizeof root, "%s/node", test_tmpdir("conformance_runner"));
  CHECK(mkdir(root, 0777) == 0);
  copy_test("test_relu", "test_relu");
  copy_test("test_add", "test_add");
  copy_test("test_maxpool_2d_default", "test_maxpool_2d_default");
  copy_test("test_reshape_reduced_dims", "test_reshape_reduced_dims");
  copy_test("test_relu", "test_relu_corrupt");
  copy_test("test_relu", "test_relu_expanded");
  copy_test("test_relu", "test_zz_nosuchop");
  char path[4200];
  snprintf(path, sizeof path, "%s/test_relu_corrupt/test_data_set_0/output_0.pb", root);
  corrupt_last_float(path);
  snprintf(path, sizeof path, "%s/test_zz_nosuchop/model.onnx", root);
  write_nosuchop_model(path);

  /* 1. Both modes: verdicts, reasons, totals, the TSV. */
  char args[9000], *out = NULL;
  const char *keep = "must_keep_origin_dtype", *fp16 = "force_fp16";
  snprintf(args, sizeof args, "--tsv=%s/../results.tsv '%s'", root, root);
  CHECK_EQ_INT(run(args, &out), 0);
  for (int m = 0; m < 2; m++) {
    const char *mode = m ? fp16 : keep;
    expect_line(out, "test_relu", mode, "PASS", NULL);
    expect_line(out, "test_add", mode, "PASS", NULL);
    expect_line(out, "test_maxpool_2d_default", mode, "PASS", NULL);
    expect_line(out, "test_reshape_reduced_dims", mode, "PASS", NULL);
    expect_line(out, "test_relu_expanded", mode, "PASS", NULL);
    expect_line(out, "test_zz_nosuchop", mode, "FAIL", "atc: model.onnx: node 'n0' (NoSuchOp)");
  }
  expect_line(out, "test_relu_corrupt", keep, "FAIL",
              "output 0 'y': max err 1 at [2,3,4] (got 0, expected 1), 1 of 60 over");
  expect_line(out, "test_relu_corrupt", fp16, "FAIL", "output 0 'y': max err");
  CHECK(strstr(out, "\n10 passed, 4 failed\n") != NULL);
  free(out);
  snprintf(path, sizeof path, "%s/../results.tsv", root);
  char *tsv = test_read_file(path, NULL);
  CHECK(tsv && strstr(tsv, "test_relu\tmust_keep_origin_dtype\tPASS\tRelu\tai.onnx\t14\tfloat32\t0\t\n"));
  CHECK(tsv && strstr(tsv, "test_relu_expanded\tforce_fp16\tPASS\tRelu\tai.onnx\t14\tfloat32\t1\t\n"));
  CHECK(tsv && strstr(tsv, "test_zz_nosuchop\tforce_fp16\tFAIL\tNoSuchOp\tai.onnx\t17\tfloat32\t0\tatc: "));
  CHECK(tsv && strstr(tsv, "# tolerance force_fp16: |got - expected| <= 0.001 + 0.01 * |expected|"));
  free(tsv);

  /* 2. A crash and a hang are those tests' failures; the others still run. */
  snprintf(args, sizeof args,
           "--mode=must_keep_origin_dtype --timeout=2 --inject-crash=test_add "
           "--inject-hang=test_relu '%s'",
           root);
  CHECK_EQ_INT(run(args, &out), 0);
  expect_line(out, "test_add", keep, "FAIL", "crashed: SIGSEGV");
  expect_line(out, "test_relu", keep, "FAIL", "timed out after 2 s");
  expect_line(out, "test_maxpool_2d_default", keep, "PASS", NULL);
  expect_line(out, "test_relu_expanded", keep, "PASS", NULL);
  CHECK(strstr(out, "\n3 passed, 4 failed\n") != NULL);
  free(out);

  /* 3. No directory: an error, never a pass. */
  CHECK_EQ_INT(run("/nonexistent/onnx-node-tests", &out), 2);
  CHECK(strstr(out, "does not exist") != NULL);
  free(out);

  /* 4. The regression guard. */
  snprintf(path, sizeof path, "%s/../expected.txt", root);
  const char *list = "# cases that passed\nmust_keep_origin_dtype test_relu\n"
                     "must_keep_origin_dtype test_relu_corrupt\n";
  CHECK(test_write_file(path, list, strlen(list)) == 0);
  snprintf(args, sizeof args, "--quiet --mode=must_keep_origin_dtype --expected='%s' '%s'", path, root);
  CHECK_EQ_INT(run(args, &out), 1);
  expect_line(out, "test_relu_corrupt", keep, "FAIL (REGRESSION", "output 0");
  CHECK(strstr(out, "1 regressions") != NULL);
  CHECK(strstr(out, "4 newly passing: update expected_pass.txt") != NULL);
  free(out);
  list = "must_keep_origin_dtype test_relu\nforce_fp16 test_add\nforce_fp16 test_gone\n";
  CHECK(test_write_file(path, list, strlen(list)) == 0);
  snprintf(args, sizeof args, "--quiet --expected='%s' '%s'", path, root);
  CHECK_EQ_INT(run(args, &out), 1); /* test_gone is missing: a regression */
  CHECK(strstr(out, "test_gone force_fp16 FAIL") != NULL);
  free(out);
  list = "must_keep_origin_dtype test_relu\nforce_fp16 test_add\n";
  CHECK(test_write_file(path, list, strlen(list)) == 0);
  CHECK_EQ_INT(run(args, &out), 0);
  CHECK(strstr(out, "REGRESSION") == NULL);
  CHECK(strstr(out, "8 newly passing") != NULL);
  free(out);
  return test_summary("conformance_runner");
}
