/* layer_dump.c - omrun --dump: a task hook that writes each task's outputs
 * as float32 .npy in ONNX layout (omrt_task_tensor_to_f32 undoes NC1HWC0),
 * and the index DIR/dump.json.
 *
 * File names: the ONNX tensor the output holds (omrt_task_tensor.onnx_name,
 * from the om's SOURCES partition) or, for a tensor no ONNX node produced
 * (a layout copy), the om tensor's name, made file-safe (npy_file_name),
 * with "__<task>" appended when an earlier output took the name. An om
 * tensor several tasks write in parts (Concat's copies) is dumped after
 * the last of them. Packed weights (WPACK's FRACTAL_Z) are listed in the
 * index with no file. The index is collected in memory while the model
 * runs and written by layer_dump_close, so a run the hook stopped still
 * leaves an index of what was dumped.
 *
 * dump.json: {"model": ..., "tasks": [{"task": i, "name": ..., "kind": ...,
 * "onnx_nodes": [...], "outputs": [{"tensor": ..., "onnx_tensor": ...|null,
 * "file": ...|null, "dtype": stored dtype, "layout": stored layout,
 * "shape": [ONNX-layout dims]}]}]}, tasks in execution order.
 */
#include "tools/layer_dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/npy.h"
#include "tools/omrun_io.h"

typedef struct dumped {
  char *file; /* NULL: not written */
} dumped;

struct layer_dump {
  const omrt_model *m;
  char *dir, *nodes; /* nodes: ",a,b," for matching, or NULL */
  int ntasks;
  int *last_writer; /* per task and output slot k: 1 when this task is the tensor's last writer */
  FILE *index;      /* the tasks part of dump.json, built as the run goes (a temp file) */
  int ntasks_dumped, nfiles;
  char **names; /* file names taken */
  int nnames, names_cap;
  struct onnx_file {
    const char *onnx; /* owned by the model */
    char *path;
  } * files; /* [nfiles]: layer_dump_file's table */
  int files_cap;
  float *buf;
  size_t buf_cap; /* floats */
};

static int fail(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "omrun: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return 1;
}

static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static int listed(const layer_dump *d, const char *name) {
  if (!name || !*name) return 0;
  size_t n = strlen(name);
  for (const char *p = strstr(d->nodes, name); p; p = strstr(p + 1, name))
    if (p[-1] == ',' && p[n] == ',') return 1;
  return 0;
}

static int wanted(const layer_dump *d, const omrt_task_info *info) {
  if (!d->nodes || listed(d, info->name)) return 1;
  for (int j = 0; j < info->nnodes; j++)
    if (listed(d, omrt_model_task_node(d->m, info->index, j))) return 1;
  for (int k = 0; k < info->noutputs; k++)
    if (listed(d, info->outputs[k].onnx_name) || listed(d, info->outputs[k].name)) return 1;
  return 0;
}

int layer_dump_open(const omrt_model *m, const char *dir, const char *nodes, layer_dump **out) {
  *out = NULL;
  if (make_dirs(dir)) return 1;
  layer_dump *d = calloc(1, sizeof *d);
  if (!d) return fail("out of memory%s%s", "", "");
  d->m = m;
  d->ntasks = omrt_model_num_tasks(m);
  d->dir = strdup(dir);
  d->last_writer = calloc((size_t)d->ntasks * OMRT_TASK_MAX_OUTPUTS + 1, sizeof *d->last_writer);
  d->index = tmpfile();
  if (nodes && (d->nodes = malloc(strlen(nodes) + 3))) sprintf(d->nodes, ",%s,", nodes);
  if (!d->dir || !d->last_writer || !d->index || (nodes && !d->nodes)) {
    layer_dump_close(d, NULL);
    return fail("out of memory%s%s", "", "");
  }
  /* The last task writing each om tensor: the first seen walking back
   * (equal names are one string of the model's table: compare pointers). */
  const char **seen = calloc((size_t)d->ntasks * OMRT_TASK_MAX_OUTPUTS + 1, sizeof *seen);
  if (!seen) {
    layer_dump_close(d, NULL);
    return fail("out of memory%s%s", "", "");
  }
  int nseen = 0, gear = -1;
  omrt_task_info a;
  for (int t = d->ntasks - 1; t >= 0; t--) {
    omrt_model_task(m, t, &a);
    if (a.gear != gear) nseen = 0, gear = a.gear; /* gears run apart: each has its own last writers */
    for (int k = 0; k < a.noutputs; k++) {
      int last = 1;
      for (int i = 0; i < nseen && last; i++)
        last = seen[i] != a.outputs[k].name;
      if (last) seen[nseen++] = a.outputs[k].name;
      d->last_writer[t * OMRT_TASK_MAX_OUTPUTS + k] = last;
    }
  }
  free(seen);
  *out = d;
  return 0;
}

/* A file name no earlier output took. */
static char *take_name(layer_dump *d, const char *tensor, int task) {
  char base[512], name[600];
  npy_file_name(tensor, base, sizeof base - 8);
  snprintf(name, sizeof name, "%s.npy", base);
  for (int i = 0; i < d->nnames; i++)
    if (!strcmp(d->names[i], name)) {
      snprintf(name, sizeof name, "%s__%d.npy", base, task);
      break;
    }
  if (d->nnames == d->names_cap) {
    int cap = d->names_cap ? 2 * d->names_cap : 64;
    char **p = realloc(d->names, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    d->names = p, d->names_cap = cap;
  }
  return d->names[d->nnames++] = strdup(name);
}

static const char *dtype_str(int dt) {
  switch (dt) {
  case OMRT_FLOAT32: return "float32";
  case OMRT_FLOAT16: return "float16";
  case OMRT_UINT8: return "uint8";
  case OMRT_INT8: return "int8";
  case OMRT_INT32: return "int32";
  case OMRT_INT64: return "int64";
  case OMRT_BOOL: return "bool";
  }
  return "other";
}

static const char *layout_str(int l) {
  switch (l) {
  case OMRT_LAYOUT_ND: return "ND";
  case OMRT_LAYOUT_NC1HWC0: return "NC1HWC0";
  case OMRT_LAYOUT_FRACTAL_Z: return "FRACTAL_Z";
  case OMRT_LAYOUT_FRACTAL_Z_G: return "FRACTAL_Z_G";
  case OMRT_LAYOUT_FRACTAL_NZ: return "FRACTAL_NZ";
  case OMRT_LAYOUT_NDC1HWC0: return "NDC1HWC0";
  case OMRT_LAYOUT_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
  }
  return "other";
}

int layer_dump_hook(void *user, const omrt_task_info *info) {
  layer_dump *d = user;
  if (!wanted(d, info)) return 0;
  FILE *ix = d->index;
  fprintf(ix, "%s\n    {\"task\": %d, \"name\": ", d->ntasks_dumped++ ? "," : "", info->index);
  json_str(ix, info->name);
  fprintf(ix, ", \"kind\": ");
  json_str(ix, info->kind);
  fprintf(ix, ",\n      \"onnx_nodes\": [");
  for (int j = 0; j < info->nnodes; j++) {
    fprintf(ix, "%s", j ? ", " : "");
    json_str(ix, omrt_model_task_node(d->m, info->index, j));
  }
  fprintf(ix, "],\n      \"outputs\": [");
  for (int k = 0; k < info->noutputs; k++) {
    const omrt_task_tensor *o = &info->outputs[k];
    size_t count = 1;
    for (int r = 0; r < o->rank; r++)
      count *= (size_t)o->dims[r];
    char *file = NULL;
    int weights =
        o->layout != OMRT_LAYOUT_ND && o->layout != OMRT_LAYOUT_NC1HWC0 && o->layout != OMRT_LAYOUT_NDC1HWC0;
    if (!weights && d->last_writer[info->index * OMRT_TASK_MAX_OUTPUTS + k]) {
      if (count > d->buf_cap) {
        float *p = realloc(d->buf, count * sizeof *p);
        if (!p) return fail("out of memory for '%s'%s", o->name, "");
        d->buf = p, d->buf_cap = count;
      }
      if (!(file = take_name(d, o->onnx_name ? o->onnx_name : o->name, info->index)))
        return fail("out of memory for '%s'%s", o->name, "");
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", d->dir, file);
      if (omrt_task_tensor_to_f32(o, d->buf, count) != OMRT_OK) return fail("%s%s", omrt_last_error(), "");
      if (npy_write_f32(path, o->rank, o->dims, d->buf))
        return fail("cannot write '%s': %s", path, strerror(errno));
      if (d->nfiles == d->files_cap) {
        int cap = d->files_cap ? 2 * d->files_cap : 64;
        struct onnx_file *p = realloc(d->files, (size_t)cap * sizeof *p);
        if (!p) return fail("out of memory for '%s'%s", o->name, "");
        d->files = p, d->files_cap = cap;
      }
      d->files[d->nfiles].onnx = o->onnx_name;
      if (!(d->files[d->nfiles++].path = strdup(path))) return fail("out of memory for '%s'%s", o->name, "");
    }
    fprintf(ix, "%s\n        {\"tensor\": ", k ? "," : "");
    json_str(ix, o->name);
    fprintf(ix, ", \"onnx_tensor\": ");
    json_str(ix, o->onnx_name);
    fprintf(ix, ", \"file\": ");
    json_str(ix, file);
    fprintf(ix, ", \"dtype\": \"%s\", \"layout\": \"%s\", \"shape\": [", dtype_str(o->dtype),
            layout_str(o->layout));
    for (int r = 0; r < o->rank; r++)
      fprintf(ix, "%s%lld", r ? ", " : "", (long long)o->dims[r]);
    fprintf(ix, "]}");
  }
  fprintf(ix, "]}");
  return 0;
}

const char *layer_dump_file(const layer_dump *d, const char *onnx_name) {
  for (int i = d->nfiles - 1; i >= 0; i--)
    if (d->files[i].onnx && !strcmp(d->files[i].onnx, onnx_name)) return d->files[i].path;
  return NULL;
}

int layer_dump_close(layer_dump *d, int *files_out) {
  if (!d) return 0;
  int rc = 0;
  if (files_out) *files_out = d->nfiles;
  if (d->index && d->dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/dump.json", d->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
      rc = fail("cannot create '%s': %s", path, strerror(errno));
    } else {
      fprintf(f, "{\n  \"model\": ");
      json_str(f, omrt_model_name(d->m));
      fprintf(f, ",\n  \"tasks\": [");
      rewind(d->index);
      char chunk[8192];
      size_t n;
      while ((n = fread(chunk, 1, sizeof chunk, d->index)) > 0)
        fwrite(chunk, 1, n, f);
      fprintf(f, "\n  ]\n}\n");
      int bad = ferror(f);
      if (fclose(f) != 0 || bad) rc = fail("cannot write '%s'%s", path, "");
    }
  }
  if (d->index) fclose(d->index);
  for (int i = 0; i < d->nnames; i++)
    free(d->names[i]);
  free(d->names);
  for (int i = 0; i < d->nfiles; i++)
    free(d->files[i].path);
  free(d->files);
  free(d->buf);
  free(d->last_writer);
  free(d->nodes);
  free(d->dir);
  free(d);
  return rc;
}
