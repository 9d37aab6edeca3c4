/* test_frontend_external.c - external data (frontend/onnx_tensor.c): a valid
 * relative file loads; absolute paths, "..", symlinks anywhere on the path,
 * hard-linked files, offset + length past the end, lengths that disagree with
 * the dims, unknown and duplicate keys are each refused with a message naming
 * the initializer; and onnx_load_file on a model file in a directory.
 * Models are built with onnx_mb.h. */
#include "onnx_mb.h"

/* The same file through onnx_load_file. */
static void test_load_file(const char *dir) {
  mb m;
  conv_relu_model(&m);
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  char path[4200];
  snprintf(path, sizeof path, "%s/convrelu.onnx", dir);
  CHECK(test_write_file(path, buf, len) == 0);
  ir_graph *g = NULL;
  diag d;
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_OK);
  if (g) CHECK_EQ_INT(g->nnodes, 2);
  ir_graph_free(g);
  g = NULL;
  onnx_options small = {.max_file_bytes = 16};
  diag_init(&d);
  CHECK(onnx_load_file(path, &small, &g, &d) == ST_ERR_LIMIT && strstr(d.msg, "convrelu.onnx"));
  snprintf(path, sizeof path, "%s/missing.onnx", dir);
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_ERR_IO && strstr(d.msg, "missing.onnx"));
  snprintf(path, sizeof path, "%s/empty.onnx", dir);
  CHECK(test_write_file(path, "", 0) == 0);
  diag_init(&d);
  CHECK(onnx_load_file(path, NULL, &g, &d) == ST_ERR_PARSE && strstr(d.msg, "empty.onnx") &&
        strstr(d.msg, "not a valid ONNX ModelProto"));
  free(buf);
  mb_free(&m);
}

static Onnx__TensorProto *ext_init(mb *m, const char *name, int rank, const int64_t *dims,
                                   const char *const *kv) {
  Onnx__TensorProto *t = mb_tensor(m, name, DT_FLOAT32, rank, dims);
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  for (int i = 0; kv[i]; i += 2) {
    Onnx__StringStringEntryProto *e = arena_alloc(&m->a, sizeof *e);
    *e = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    e->key = arena_strdup(&m->a, kv[i]);
    e->value = arena_strdup(&m->a, kv[i + 1]);
    PUSH(m, t->external_data, t->n_external_data, e);
  }
  PUSH(m, m->graph.initializer, m->graph.n_initializer, t);
  mb_output(m, name);
  return t;
}

/* A model whose one initializer `w` [2, 3] reads external data per kv. */
static void ext_model(mb *m, const char *const *kv) {
  mb_init(m, 13);
  ext_init(m, "w", 2, (int64_t[]){2, 3}, kv);
}

static void path_join(char *out, size_t size, const char *dir, const char *name) {
  snprintf(out, size, "%s/%s", dir, name);
}

static void test_external(void) {
  const char *tmp = test_tmpdir("frontend");
  char dir[4096], outside[4096], p[4200], q[4200];
  snprintf(dir, sizeof dir, "%s/model", tmp);
  snprintf(outside, sizeof outside, "%s/outside", tmp);
  mkdir(dir, 0755);
  mkdir(outside, 0755);
  test_load_file(dir);

  /* w.bin: 16 bytes of header, then six floats */
  unsigned char file[16 + 24];
  float vals[6] = {1, 2, 3, 4, 5, 6};
  memset(file, 0xee, 16);
  memcpy(file + 16, vals, 24);
  path_join(p, sizeof p, dir, "w.bin");
  CHECK(test_write_file(p, file, sizeof file) == 0);
  path_join(p, sizeof p, outside, "secret.bin");
  CHECK(test_write_file(p, file, sizeof file) == 0);
  path_join(p, sizeof p, dir, "sub");
  mkdir(p, 0755);
  path_join(p, sizeof p, dir, "sub/w2.bin");
  CHECK(test_write_file(p, vals, sizeof vals) == 0);

  mb m;
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "length", "24", "checksum",
                                      "ignored", NULL});
  ir_graph *g = EXPECT_OK(&m, dir, NULL);
  if (g) CHECK(g->outputs[0]->data && !memcmp(g->outputs[0]->data, vals, 24));
  ir_graph_free(g);
  mb_free(&m);

  /* through onnx_load_file: relative to the model's directory */
  ext_model(&m, (const char *const[]){"location", "./sub/w2.bin", NULL});
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  path_join(p, sizeof p, dir, "ext.onnx");
  CHECK(test_write_file(p, buf, len) == 0);
  free(buf);
  diag d;
  diag_init(&d);
  g = NULL;
  CHECK(onnx_load_file(p, NULL, &g, &d) == ST_OK);
  if (g)
    CHECK(g->outputs[0]->data && !memcmp(g->outputs[0]->data, vals, 24));
  else
    test_note("  %s", d.msg);
  ir_graph_free(g);
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, NULL, NULL, ST_ERR_UNSUPPORTED, "initializer 'w'", "'w.bin'", "directory");
  mb_free(&m);

  /* rejections, each naming the initializer and the location */
  snprintf(q, sizeof q, "%s/secret.bin", outside);
  ext_model(&m, (const char *const[]){"location", q, NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", q, "absolute");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "../outside/secret.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'../outside/secret.bin'", "'..'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "sub/../w.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'sub/../w.bin'", "'..'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "location");
  mb_free(&m);

  /* a symlink inside the directory pointing out of it */
  path_join(p, sizeof p, dir, "link.bin");
  CHECK(symlink("../outside/secret.bin", p) == 0);
  ext_model(&m, (const char *const[]){"location", "link.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'link.bin'", "symbolic link");
  mb_free(&m);

  /* a symlinked directory component */
  path_join(p, sizeof p, dir, "ldir");
  CHECK(symlink("../outside", p) == 0);
  ext_model(&m, (const char *const[]){"location", "ldir/secret.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'ldir/secret.bin'", "symbolic link");
  mb_free(&m);

  /* a hard link to a file outside */
  path_join(p, sizeof p, outside, "secret.bin");
  path_join(q, sizeof q, dir, "hard.bin");
  CHECK(link(p, q) == 0);
  ext_model(&m, (const char *const[]){"location", "hard.bin", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'hard.bin'", "hard link");
  mb_free(&m);

  /* not a regular file */
  ext_model(&m, (const char *const[]){"location", "sub", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_SECURITY, "initializer 'w'", "'sub'", "regular file");
  mb_free(&m);

  /* missing */
  ext_model(&m, (const char *const[]){"location", "nothere.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_IO, "initializer 'w'", "'nothere.bin'");
  mb_free(&m);

  /* offset + length past the end */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "20", "length", "24", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "offset 20 + length 24",
              "past the end");
  mb_free(&m);

  ext_model(
      &m, (const char *const[]){"location", "w.bin", "offset", "18446744073709551615", "length", "24", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "past the end");
  mb_free(&m);

  /* length != dims x dtype size */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "length", "20", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'w.bin'", "length 20",
              "[2, 3] x float32 need 24");
  mb_free(&m);

  /* no length: the rest of the file, which must fit exactly */
  ext_model(&m, (const char *const[]){"location", "w.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "length 40");
  mb_free(&m);

  /* keys */
  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "colour", "red", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "unknown external_data key 'colour'");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "16", "offset", "16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'offset' is given twice");
  mb_free(&m);

  ext_model(&m, (const char *const[]){"location", "w.bin", "offset", "-16", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_INVALID, "initializer 'w'", "'-16'");
  mb_free(&m);

  /* two tensors reading the same bytes */
  ext_model(&m, (const char *const[]){"location", "sub/w2.bin", NULL});
  ext_init(&m, "w_again", 2, (int64_t[]){2, 3}, (const char *const[]){"location", "sub/w2.bin", NULL});
  EXPECT_FAIL(&m, dir, NULL, ST_ERR_LIMIT, "initializer 'w_again'", "'sub/w2.bin'", "overlapping");
  mb_free(&m);
}

int main(void) {
  test_external();
  return test_summary("test_frontend_external");
}
