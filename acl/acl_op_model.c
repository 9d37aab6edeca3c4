/* acl_op_model.c - the loaded single-operator models (atc --singleop) and
 * how a call finds one (acl_internal.h, "single operators").
 *
 * aclopSetModelDir and aclopLoad add op models to one process-wide table
 * (under the registry lock, acl_enter); each is an acl_model (omrt_model +
 * omrt_context, run one at a time) that no aclmdl call sees, plus its
 * record (om_model_def.singleop, docs/om-format.md) parsed: op type, input
 * and output descriptions (aclDataType, aclFormat, dims) and attributes
 * (name, type, value text, and whether the value is the op's default). An
 * om whose record equals one already loaded is skipped. The table lives
 * until aclFinalize (after the streams have run what was queued).
 *
 * A call matches a model when the op type, every input and output
 * description and every attribute agree: an attribute the call sets must
 * be the model's with the same value (int and data_type compare as one
 * type); one the call leaves out must be at its default in the model. When
 * none matches, the error is the closest model's first difference (the
 * model that agrees longest, in the order inputs, outputs, attributes):
 * ACL_ERROR_OP_NOT_FOUND (no model of that type), ACL_ERROR_OP_INPUT_NOT_MATCH,
 * ACL_ERROR_OP_OUTPUT_NOT_MATCH or ACL_ERROR_OP_ATTR_NOT_MATCH.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl/acl_internal.h"

enum { MAX_IO = 8, MAX_ATTRS = 16, DIR_LEVELS = 3 };

typedef struct op_tensor {
  int dtype, format, rank;
  int64_t dims[OMRT_MAX_RANK];
} op_tensor;

typedef struct op_attr_rec {
  char kind;                       /* 's' set by the description, 'd' the op's default */
  const char *type, *name, *value; /* into the model's record copy */
} op_attr_rec;

struct acl_op_model {
  struct acl_op_model *next;
  acl_model *am;
  char *text;   /* the record as the om holds it */
  char *record; /* our copy, cut into the strings below */
  const char *op_type;
  const char *file; /* where it came from, for messages */
  int nin, nout, nattrs;
  op_tensor in[MAX_IO], out[MAX_IO];
  op_attr_rec attrs[MAX_ATTRS];
};

static acl_op_model *models; /* under the registry lock */

/* --- the record --------------------------------------------------------------- */

static int parse_tensor(char *line, op_tensor *t) {
  char *end;
  long v[3];
  for (int i = 0; i < 3; i++) {
    v[i] = strtol(line, &end, 10);
    if (end == line) return -1;
    line = end;
  }
  if (v[2] < 0 || v[2] > OMRT_MAX_RANK) return -1;
  t->dtype = (int)v[0], t->format = (int)v[1], t->rank = (int)v[2];
  for (int k = 0; k < t->rank; k++) {
    t->dims[k] = strtoll(line, &end, 10);
    if (end == line) return -1;
    line = end;
  }
  return *line ? -1 : 0;
}

/* Cuts the record (ours) into om's fields; -1 when it is not well formed. */
static int parse_record(acl_op_model *om) {
  char *save = NULL;
  for (char *line = strtok_r(om->record, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "op ", 3)) {
      om->op_type = line + 3;
    } else if (!strncmp(line, "input ", 6) || !strncmp(line, "output ", 7)) {
      int in = line[0] == 'i';
      int *n = in ? &om->nin : &om->nout;
      if (*n == MAX_IO || parse_tensor(line + (in ? 6 : 7), (in ? om->in : om->out) + *n)) return -1;
      ++*n;
    } else if (!strncmp(line, "attr ", 5) && om->nattrs < MAX_ATTRS) {
      op_attr_rec *a = &om->attrs[om->nattrs++];
      char *p = line + 5, *sp1 = strchr(p, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
      char *sp3 = sp2 ? strchr(sp2 + 1, ' ') : NULL;
      if (!sp2 || sp1 != p + 1 || (*p != 's' && *p != 'd')) return -1;
      a->kind = *p;
      *sp1 = *sp2 = '\0';
      a->type = sp1 + 1, a->name = sp2 + 1;
      if (sp3) *sp3 = '\0';
      a->value = sp3 ? sp3 + 1 : ""; /* the values, one space before each but the first */
    } else {
      return -1;
    }
  }
  return om->op_type && om->nout ? 0 : -1;
}

static void op_model_free(acl_op_model *om) {
  if (!om) return;
  acl_model_free(om->am);
  free(om->record);
  free(om->text);
  free((char *)om->file);
  free(om);
}

/* Loads one op model: the file `path`, or `size` bytes at data (copied). */
static aclError load_one(const char *call, const char *path, const void *data, size_t size) {
  acl_op_model *om = calloc(1, sizeof *om);
  acl_model *am = calloc(1, sizeof *am);
  aclError e = ACL_SUCCESS;
  if (!om || !am || !(om->file = strdup(path ? path : "the model data"))) {
    free(am);
    op_model_free(om);
    return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  om->am = am;
  pthread_mutex_init(&am->run, NULL);
  e = acl_mdl_read(call, path, data, size, &am->m, &am->package);
  const char *rec = e ? "" : omrt_model_singleop(am->m);
  if (!e && !*rec)
    e = acl_fail(ACL_ERROR_OP_LOAD_FAILED, "%s: %s is a model, not a single-operator model (atc --singleop)",
                 call, om->file);
  if (!e && (!(om->text = strdup(rec)) || !(om->record = strdup(rec)) || parse_record(om)))
    e = acl_fail(om->record ? ACL_ERROR_OP_LOAD_FAILED : ACL_ERROR_BAD_ALLOC,
                 "%s: %s: the single-operator record is malformed", call, om->file);
  if (!e && (om->nin != omrt_model_num_inputs(am->m) || om->nout != omrt_model_num_outputs(am->m)))
    e = acl_fail(ACL_ERROR_OP_LOAD_FAILED, "%s: %s: the record's inputs and outputs are not the model's",
                 call, om->file);
  if (!e) {
    omrt_status s = omrt_context_new(am->m, &am->ctx);
    if (s) e = acl_fail(acl_from_omrt(s), "%s: %s: %s", call, om->file, omrt_last_error());
  }
  if (e) {
    op_model_free(om);
    return e;
  }
  acl_model_io(am);
  for (acl_op_model *o = models; o; o = o->next)
    if (!strcmp(o->text, om->text)) {
      op_model_free(om);
      return ACL_SUCCESS;
    }
  om->next = models;
  models = om;
  acl_set_soc(omrt_model_soc(am->m));
  return ACL_SUCCESS;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every *.om of dir, then of its subdirectories down to DIR_LEVELS levels
 * in all (AscendCL's rule), in name order. */
static aclError load_dir(const char *call, const char *dir, int level, int *count) {
  struct dirent **names;
  int n = scandir(dir, &names, NULL, by_name);
  if (n < 0) return acl_fail(ACL_ERROR_INVALID_FILE, "%s: cannot read the directory %s", call, dir);
  aclError e = ACL_SUCCESS;
  for (int pass = 0; pass < 2; pass++) /* files, then subdirectories */
    for (int i = 0; i < n && !e; i++) {
      const char *nm = names[i]->d_name;
      if (nm[0] == '.') continue;
      size_t len = strlen(dir) + strlen(nm) + 2;
      char *path = malloc(len);
      if (!path) {
        e = acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
        break;
      }
      snprintf(path, len, "%s/%s", dir, nm);
      struct stat st;
      if (stat(path, &st) == 0) {
        if (pass == 0 && S_ISREG(st.st_mode) && has_suffix(nm, ".om")) {
          e = load_one(call, path, NULL, 0);
          ++*count;
        } else if (pass == 1 && S_ISDIR(st.st_mode) && level + 1 < DIR_LEVELS) {
          e = load_dir(call, path, level + 1, count);
        }
      }
      free(path);
    }
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return e;
}

aclError acl_op_load_dir(const char *call, const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return acl_fail(ACL_ERROR_INVALID_FILE, "%s: %s is not a directory", call, dir);
  int count = 0;
  aclError e = load_dir(call, dir, 0, &count);
  if (!e && count == 0)
    return acl_fail(ACL_ERROR_INVALID_FILE, "%s: %s holds no .om file (atc --singleop writes them)", call,
                    dir);
  return e;
}

aclError acl_op_load_mem(const char *call, const void *data, size_t size) {
  return load_one(call, NULL, data, size);
}

void acl_op_finalize(void) {
  while (models) {
    acl_op_model *om = models;
    models = om->next;
    op_model_free(om);
  }
}

/* --- matching ------------------------------------------------------------------ */

static const char *dtype_str(int dt) {
  static const char *const names[] = {"float",  "float16", "int8",  "int32",  "uint8",  "?",   "int16",
                                      "uint16", "uint32",  "int64", "uint64", "double", "bool"};
  return dt >= 0 && dt < (int)(sizeof names / sizeof *names) ? names[dt] : "?";
}

static const char *format_str(int f) { return f == 0 ? "NCHW" : f == 1 ? "NHWC" : f == 2 ? "ND" : "?"; }

static void tensor_str(char *buf, size_t n, int dtype, int format, int rank, const int64_t *dims) {
  int len = snprintf(buf, n, "%s %s [", dtype_str(dtype), format_str(format));
  for (int k = 0; k < rank && len < (int)n; k++)
    len += snprintf(buf + len, n - (size_t)len, "%s%lld", k ? "," : "", (long long)dims[k]);
  if (len < (int)n) snprintf(buf + len, n - (size_t)len, "]");
}

/* How far the call agrees with om: 4 points per check passed in order
 * (the input count, each input, the output count, each output, each
 * attribute), and at the first difference, when it is a tensor, a point
 * each for its dtype, format and rank that agree; *code and why (the first
 * difference) when it does not match. Returns -1 for a full match. */
static int agree(const acl_op_model *om, const acl_op_call *c, aclError *code, char *why, size_t n) {
  int score = 0;
  for (int l = 0; l < 2; l++) {
    int cn = l ? c->nout : c->nin, mn = l ? om->nout : om->nin;
    const aclTensorDesc *const *descs = l ? c->out : c->in;
    const op_tensor *ts = l ? om->out : om->in;
    const char *what = l ? "outputDesc" : "inputDesc";
    *code = l ? ACL_ERROR_OP_OUTPUT_NOT_MATCH : ACL_ERROR_OP_INPUT_NOT_MATCH;
    if (cn != mn) {
      snprintf(why, n, "%d %s, the model (%s) has %d", cn, l ? "outputs" : "inputs", om->file, mn);
      return score;
    }
    score += 4;
    for (int i = 0; i < cn; i++) {
      const aclTensorDesc *d = descs[i];
      const op_tensor *t = &ts[i];
      int same = d && (int)d->dtype == t->dtype && (int)d->format == t->format && (int)d->rank == t->rank;
      for (int k = 0; same && k < t->rank; k++)
        same = d->dims[k] == t->dims[k];
      if (!same) {
        char got[256] = "NULL", want[256];
        if (d) tensor_str(got, sizeof got, d->dtype, d->format, (int)d->rank, d->dims);
        tensor_str(want, sizeof want, t->dtype, t->format, t->rank, t->dims);
        snprintf(why, n, "%s[%d] is %s, the closest model (%s) takes %s", what, i, got, om->file, want);
        return d ? score + ((int)d->dtype == t->dtype) + ((int)d->format == t->format) +
                       ((int)d->rank == t->rank)
                 : score;
      }
      score += 4;
    }
  }
  *code = ACL_ERROR_OP_ATTR_NOT_MATCH;
  for (int i = 0; i < om->nattrs; i++) {
    const op_attr_rec *a = &om->attrs[i];
    const acl_op_attr_val *v = acl_op_attr_find(c->attr, a->name);
    if (!v && a->kind == 's') {
      snprintf(why, n, "attr '%s' is not set, the closest model (%s) has %s %s", a->name, om->file, a->type,
               a->value);
      return score;
    }
    int same_type =
        v && (!strcmp(v->type, a->type) || (!strcmp(v->type, "data_type") && !strcmp(a->type, "int")) ||
              (!strcmp(v->type, "int") && !strcmp(a->type, "data_type")));
    if (v && (!same_type || strcmp(v->value, a->value))) {
      snprintf(why, n, "attr '%s' is %s %s, the closest model (%s) has %s %s", a->name, v->type, v->value,
               om->file, a->type, a->value);
      return score;
    }
    score += 4;
  }
  for (int i = 0; c->attr && i < acl_op_attr_count(c->attr); i++) {
    const acl_op_attr_val *v = acl_op_attr_at(c->attr, i);
    int known = 0;
    for (int k = 0; k < om->nattrs && !known; k++)
      known = !strcmp(om->attrs[k].name, v->name);
    if (!known) {
      snprintf(why, n,
               "attr '%s' is not an attribute of the op (the closest model, %s, has none of that name)",
               v->name, om->file);
      return score;
    }
  }
  return -1;
}

aclError acl_op_find(const char *call, const acl_op_call *c, acl_op_model **out) {
  *out = NULL;
  if (!c->type) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: opType is NULL", call);
  if (c->nin < 0 || c->nout < 0 || (c->nin && !c->in) || (c->nout && !c->out))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s: %s", call, c->type,
                    c->nin < 0 || c->nout < 0 ? "a negative number of inputs or outputs"
                                              : "a descriptor array is NULL");
  int best = -2, any = 0;
  aclError best_code = ACL_ERROR_OP_NOT_FOUND;
  char best_why[768] = "";
  for (acl_op_model *om = models; om; om = om->next) {
    if (strcmp(om->op_type, c->type)) continue;
    any = 1;
    aclError code;
    char why[768];
    int score = agree(om, c, &code, why, sizeof why);
    if (score < 0) {
      *out = om;
      return ACL_SUCCESS;
    }
    if (score > best) best = score, best_code = code, snprintf(best_why, sizeof best_why, "%s", why);
  }
  if (!any)
    return acl_fail(ACL_ERROR_OP_NOT_FOUND,
                    "%s: no single-operator model of op type '%s' is loaded (aclopSetModelDir, aclopLoad)",
                    call, c->type);
  return acl_fail(best_code, "%s: %s: no loaded op model matches: %s", call, c->type, best_why);
}

acl_model *acl_op_model_run(const acl_op_model *om) { return om->am; }
