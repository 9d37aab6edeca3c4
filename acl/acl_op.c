/* acl_op.c - AscendCL's single-operator calls (acl/acl_op.h,
 * acl/acl_op_compiler.h).
 *
 * Op models come from atc --singleop: aclopSetModelDir and aclopLoad load
 * them, the execute calls find the one a call describes (acl_op_model.c)
 * and run it. aclopAttr keeps its attributes typed, as text in the form
 * of the om's record, so matching compares text (acl_internal.h). A call
 * with a stream queues the run on it (an ACL_OP_RUN, as aclmdlExecuteAsync
 * does) and returns; with stream NULL it runs on the calling thread and
 * returns when done. Buffers may be host or device memory (one memory
 * here); each must hold at least the tensor's bytes. aclopCast runs a
 * loaded Cast op model (dst_type = the destination's dtype); its truncate
 * flag is not matched (the Cast models convert float to integer by
 * truncation). Online compilation (aclopCompile*, acl_op_compiler.h),
 * kernels registered at run time, shape inference and updating
 * parameters return ACL_ERROR_FEATURE_UNSUPPORTED: libascendcl holds no
 * compiler (use atc --singleop).
 */
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"
#include "acl/acl_op.h"
#include "acl/acl_op_compiler.h"

struct aclopAttr {
  int n, cap;
  acl_op_attr_val *v;
};

struct aclopHandle {
  acl_op_model *om; /* loaded until aclFinalize */
  int nin, nout;
};

static aclError unsupported(const char *call) {
  return acl_unsupported(call,
                         "online compilation and run-time kernels are not provided (libascendcl holds no "
                         "compiler): compile the operator with atc --singleop and load it with "
                         "aclopSetModelDir or aclopLoad");
}

/* --- loading */

aclError aclopSetModelDir(const char *modelDir) {
  const char *call = "aclopSetModelDir";
  aclError e = acl_enter(call);
  if (e) return e;
  if (!modelDir) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: modelDir is NULL", call));
  return acl_leave_with(acl_op_load_dir(call, modelDir));
}

aclError aclopLoad(const void *model, size_t modelSize) {
  const char *call = "aclopLoad";
  aclError e = acl_enter(call);
  if (e) return e;
  if (!model || !modelSize)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call, !model ? "model is NULL" : "modelSize is 0"));
  return acl_leave_with(acl_op_load_mem(call, model, modelSize));
}

/* --- attributes */

aclopAttr *aclopCreateAttr(void) {
  aclopAttr *a = calloc(1, sizeof *a);
  if (!a) acl_fail(ACL_ERROR_BAD_ALLOC, "aclopCreateAttr: out of memory");
  return a;
}

void aclopDestroyAttr(const aclopAttr *attr) {
  if (!attr) return;
  for (int i = 0; i < attr->n; i++)
    free(attr->v[i].name), free(attr->v[i].value);
  free(attr->v);
  free((void *)attr);
}

const acl_op_attr_val *acl_op_attr_find(const aclopAttr *attr, const char *name) {
  for (int i = 0; attr && i < attr->n; i++)
    if (!strcmp(attr->v[i].name, name)) return &attr->v[i];
  return NULL;
}

int acl_op_attr_count(const aclopAttr *attr) { return attr ? attr->n : 0; }
const acl_op_attr_val *acl_op_attr_at(const aclopAttr *attr, int i) { return &attr->v[i]; }

/* A growing text buffer for a value. */
typedef struct text {
  char *s;
  size_t len, cap;
  int oom;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || t->oom) return;
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = (t->len + (size_t)n + 1) * 2;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = 1;
      return;
    }
    t->s = p, t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

static void add_string(text *t, const char *s) {
  for (; *s; s++)
    add(t, (unsigned char)*s <= ' ' || *s == '%' || *s == 127 ? "%%%02X" : "%c", (unsigned char)*s);
}

typedef enum kind { K_BOOL, K_INT, K_FLOAT, K_STRING, K_DTYPE } kind;

/* Sets attribute `name` of attr, of type `type`, to num values of kind k
 * at values; replaces an earlier value of that name. */
static aclError set_attr(const char *call, aclopAttr *attr, const char *name, const char *type, kind k,
                         int num, const void *values) {
  if (!attr || !name)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !attr ? "attr" : "attrName");
  if (num < 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': numValues %d < 0", call, name, num);
  if (num > 0 && !values) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': values is NULL", call, name);
  text t = {0};
  add(&t, "%s", ""); /* (an empty list is "") */
  for (int i = 0; i < num; i++) {
    if (i) add(&t, " ");
    switch (k) {
    case K_BOOL: add(&t, "%d", ((const uint8_t *)values)[i] != 0); break;
    case K_INT: add(&t, "%lld", (long long)((const int64_t *)values)[i]); break;
    case K_FLOAT: add(&t, "%.9g", (double)((const float *)values)[i]); break;
    case K_DTYPE: add(&t, "%d", (int)((const aclDataType *)values)[i]); break;
    case K_STRING:
      if (!((const char *const *)values)[i]) {
        free(t.s);
        return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': value %d is NULL", call, name, i);
      }
      add_string(&t, ((const char *const *)values)[i]);
      break;
    }
  }
  acl_op_attr_val *v = (acl_op_attr_val *)acl_op_attr_find(attr, name);
  char *nm = v ? NULL : strdup(name);
  if (!v && nm && attr->n == attr->cap) {
    int cap = attr->cap ? attr->cap * 2 : 8;
    acl_op_attr_val *p = realloc(attr->v, (size_t)cap * sizeof *p);
    if (p)
      attr->v = p, attr->cap = cap;
    else
      t.oom = 1;
  }
  if (t.oom || (!v && !nm)) {
    free(t.s), free(nm);
    return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  }
  if (!v) {
    v = &attr->v[attr->n++];
    v->name = nm;
  } else {
    free(v->value);
  }
  v->type = (char *)type;
  v->value = t.s;
  return ACL_SUCCESS;
}

aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue) {
  return set_attr("aclopSetAttrBool", attr, attrName, "bool", K_BOOL, 1, &attrValue);
}

aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue) {
  return set_attr("aclopSetAttrInt", attr, attrName, "int", K_INT, 1, &attrValue);
}

aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue) {
  return set_attr("aclopSetAttrFloat", attr, attrName, "float", K_FLOAT, 1, &attrValue);
}

aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue) {
  return set_attr("aclopSetAttrString", attr, attrName, "string", K_STRING, 1, &attrValue);
}

aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue) {
  return set_attr("aclopSetAttrDataType", attr, attrName, "data_type", K_DTYPE, 1, &attrValue);
}

aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues,
                                  const aclDataType values[]) {
  return set_attr("aclopSetAttrListDataType", attr, attrName, "list_data_type", K_DTYPE, numValues, values);
}

aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues, const uint8_t *values) {
  return set_attr("aclopSetAttrListBool", attr, attrName, "list_bool", K_BOOL, numValues, values);
}

aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values) {
  return set_attr("aclopSetAttrListInt", attr, attrName, "list_int", K_INT, numValues, values);
}

aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues, const float *values) {
  return set_attr("aclopSetAttrListFloat", attr, attrName, "list_float", K_FLOAT, numValues, values);
}

aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues, const char **values) {
  return set_attr("aclopSetAttrListString", attr, attrName, "list_string", K_STRING, numValues, values);
}

aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists, const int *numValues,
                                 const int64_t *const values[]) {
  const char *call = "aclopSetAttrListListInt";
  if (!attr || !attrName)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !attr ? "attr" : "attrName");
  if (numLists < 0 || (numLists > 0 && (!numValues || !values)))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: '%s': %s", call, attrName,
                    numLists < 0 ? "numLists < 0" : "numValues or values is NULL");
  return acl_unsupported(call, "'%s': no single-operator model here takes a list of lists", attrName);
}

/* --- running */

/* Checks the buffers against om's tensors (count, each at least the
 * tensor's bytes) into a (inputs, then outputs). */
static aclError check_buffers(const char *call, const char *type, const acl_op_model *om, int nin,
                              const aclDataBuffer *const *in, int nout, aclDataBuffer *const *out, void **a) {
  acl_model *m = acl_op_model_run(om);
  if (nin != m->nin || nout != m->nout)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s: %d inputs and %d outputs, the op model has %d and %d",
                    call, type, nin, nout, m->nin, m->nout);
  for (int i = 0; i < nin + nout; i++) {
    const aclDataBuffer *b = i < nin ? (in ? in[i] : NULL) : (out ? out[i - nin] : NULL);
    omrt_tensor_desc t;
    if (i < nin)
      omrt_model_input(m->m, i, &t);
    else
      omrt_model_output(m->m, i - nin, &t);
    if (!b || (!b->data && t.bytes) || b->size < t.bytes)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s: %s[%d]: %s; the tensor has %zu bytes", call, type,
                      i < nin ? "inputs" : "outputs", i < nin ? i : i - nin,
                      !b         ? "the buffer is NULL"
                      : !b->data ? "the buffer has no memory"
                                 : "the buffer is smaller",
                      t.bytes);
    a[i] = b->data;
  }
  return ACL_SUCCESS;
}

/* Runs om on the buffers: queued on `stream`, or now for stream NULL.
 * Called under the lock; returns after leaving it. */
static aclError run(const char *call, const char *type, const acl_op_model *om, int nin,
                    const aclDataBuffer *const *in, int nout, aclDataBuffer *const *out, aclrtStream stream) {
  acl_model *m = acl_op_model_run(om);
  acl_stream *s = NULL;
  aclError e = stream ? acl_resolve_stream(call, stream, &s) : ACL_SUCCESS;
  void **a = e ? NULL : calloc((size_t)(nin + nout) + 1, sizeof *a);
  acl_op *op = s ? calloc(1, sizeof *op) : NULL;
  if (!e && (!a || (s && !op))) e = acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
  if (!e) e = check_buffers(call, type, om, nin, in, nout, out, a);
  if (e) {
    free(a);
    free(op);
    return acl_leave_with(e);
  }
  acl_model_use(m);
  if (s) {
    *op = (acl_op){.kind = ACL_OP_RUN, .model = m, .in = (const void **)a, .out = a + nin};
    acl_stream_push(s, op);
    return acl_leave_with(ACL_SUCCESS);
  }
  acl_leave();
  char msg[1024];
  e = acl_run_model(m, 0, (const void *const *)a, a + nin, msg, sizeof msg);
  if (e) acl_fail(e, "%s: %s: %s", call, type, msg);
  acl_model_release(m);
  free(a);
  return e;
}

static aclError execute(const char *call, const acl_op_call *c, const aclDataBuffer *const *in,
                        aclDataBuffer *const *out, aclrtStream stream) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_op_model *om;
  if ((e = acl_op_find(call, c, &om))) return acl_leave_with(e);
  return run(call, c->type, om, c->nin, in, c->nout, out, stream);
}

aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                      const aclDataBuffer *const inputs[], int numOutputs,
                      const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                      const aclopAttr *attr, aclrtStream stream) {
  acl_op_call c = {opType, numInputs, numOutputs, inputDesc, outputDesc, attr};
  return execute("aclopExecute", &c, inputs, outputs, stream);
}

aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                        aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                        aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream) {
  acl_op_call c = {opType,
                   numInputs,
                   numOutputs,
                   (const aclTensorDesc *const *)inputDesc,
                   (const aclTensorDesc *const *)outputDesc,
                   attr};
  return execute("aclopExecuteV2", &c, (const aclDataBuffer *const *)inputs, outputs, stream);
}

/* A handle for the op model c matches. */
static aclError create_handle(const char *call, const acl_op_call *c, aclopHandle **handle) {
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", call);
  *handle = NULL;
  aclError e = acl_enter(call);
  if (e) return e;
  acl_op_model *om;
  if ((e = acl_op_find(call, c, &om))) return acl_leave_with(e);
  aclopHandle *h = calloc(1, sizeof *h);
  if (!h) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *h = (aclopHandle){om, c->nin, c->nout};
  *handle = h;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclopCreateHandle(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                           int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *opAttr,
                           aclopHandle **handle) {
  acl_op_call c = {opType, numInputs, numOutputs, inputDesc, outputDesc, opAttr};
  return create_handle("aclopCreateHandle", &c, handle);
}

void aclopDestroyHandle(aclopHandle *handle) { free(handle); }

aclError aclopExecWithHandle(aclopHandle *handle, int numInputs, const aclDataBuffer *const inputs[],
                             int numOutputs, aclDataBuffer *const outputs[], aclrtStream stream) {
  const char *call = "aclopExecWithHandle";
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", call);
  aclError e = acl_enter(call);
  if (e) return e;
  return run(call, "the handle's op", handle->om, numInputs, inputs, numOutputs, outputs, stream);
}

/* The Cast call of aclopCast: dst_type from dstDesc (attr is the caller's,
 * empty). */
static aclError cast_call(const char *call, const aclTensorDesc *src, const aclTensorDesc *dst,
                          aclopAttr *attr, acl_op_call *c) {
  if (!src || !dst)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !src ? "srcDesc" : "dstDesc");
  int64_t to = dst->dtype;
  aclError e = set_attr(call, attr, "dst_type", "int", K_INT, 1, &to);
  *c = (acl_op_call){"Cast", 1, 1, NULL, NULL, attr};
  return e;
}

aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer, const aclTensorDesc *dstDesc,
                   aclDataBuffer *dstBuffer, uint8_t truncate, aclrtStream stream) {
  const char *call = "aclopCast";
  (void)truncate;
  aclopAttr attr = {0};
  acl_op_call c;
  aclError e = cast_call(call, srcDesc, dstDesc, &attr, &c);
  const aclTensorDesc *in[1] = {srcDesc}, *out[1] = {dstDesc};
  const aclDataBuffer *bin[1] = {srcBuffer};
  aclDataBuffer *bout[1] = {dstBuffer};
  c.in = in, c.out = out;
  if (!e) e = execute(call, &c, bin, bout, stream);
  free(attr.v ? attr.v[0].name : NULL), free(attr.v ? attr.v[0].value : NULL), free(attr.v);
  return e;
}

aclError aclopCreateHandleForCast(aclTensorDesc *srcDesc, aclTensorDesc *dstDesc, uint8_t truncate,
                                  aclopHandle **handle) {
  const char *call = "aclopCreateHandleForCast";
  (void)truncate;
  aclopAttr attr = {0};
  acl_op_call c;
  aclError e = cast_call(call, srcDesc, dstDesc, &attr, &c);
  const aclTensorDesc *in[1] = {srcDesc}, *out[1] = {dstDesc};
  c.in = in, c.out = out;
  if (!e) e = create_handle(call, &c, handle);
  free(attr.v ? attr.v[0].name : NULL), free(attr.v ? attr.v[0].value : NULL), free(attr.v);
  return e;
}

aclError aclopCreateKernel(const char *opType, const char *kernelId, const char *kernelName, void *binData,
                           int binSize, aclopEngineType enginetype, aclDataDeallocator deallocator) {
  (void)opType, (void)kernelId, (void)kernelName, (void)binData, (void)binSize, (void)enginetype,
      (void)deallocator;
  return unsupported("aclopCreateKernel");
}

aclError aclopRegisterCompileFunc(const char *opType, aclopCompileFunc func) {
  (void)opType, (void)func;
  return unsupported("aclopRegisterCompileFunc");
}

aclError aclopUnregisterCompileFunc(const char *opType) {
  (void)opType;
  return unsupported("aclopUnregisterCompileFunc");
}

aclError aclopSetKernelArgs(aclopKernelDesc *kernelDesc, const char *kernelId, uint32_t blockDim,
                            const void *args, uint32_t argSize) {
  (void)kernelDesc, (void)kernelId, (void)blockDim, (void)args, (void)argSize;
  return unsupported("aclopSetKernelArgs");
}

aclError aclopSetKernelWorkspaceSizes(aclopKernelDesc *kernelDesc, int numWorkspaces,
                                      size_t *workspaceSizes) {
  (void)kernelDesc, (void)numWorkspaces, (void)workspaceSizes;
  return unsupported("aclopSetKernelWorkspaceSizes");
}

aclError aclopUpdateParams(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                           int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)numOutputs, (void)outputDesc, (void)attr;
  return unsupported("aclopUpdateParams");
}

aclError aclopSetMaxOpQueueNum(uint64_t maxOpNum) {
  (void)maxOpNum;
  return unsupported("aclopSetMaxOpQueueNum");
}

aclError aclopInferShape(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                         aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                         aclopAttr *attr) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc,
      (void)attr;
  return unsupported("aclopInferShape");
}

/* --- compilation (acl_op_compiler.h) */

aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                      int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr,
                      aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)numOutputs, (void)outputDesc, (void)attr;
  (void)engineType, (void)compileFlag, (void)opPath;
  return unsupported("aclopCompile");
}

aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs,
                                const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                const aclopAttr *attr, aclopEngineType engineType,
                                aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)compileFlag, (void)opPath, (void)stream;
  return unsupported("aclopCompileAndExecute");
}

aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                  aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                  aclDataBuffer *outputs[], aclopAttr *attr, aclopEngineType engineType,
                                  aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)compileFlag, (void)opPath, (void)stream;
  return unsupported("aclopCompileAndExecuteV2");
}

aclError aclSetCompileopt(aclCompileOpt opt, const char *value) {
  (void)opt, (void)value;
  return unsupported("aclSetCompileopt");
}

size_t aclGetCompileoptSize(aclCompileOpt opt) {
  (void)opt;
  unsupported("aclGetCompileoptSize");
  return 0;
}

aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length) {
  (void)opt, (void)value, (void)length;
  return unsupported("aclGetCompileopt");
}

aclError aclopSetCompileFlag(aclOpCompileFlag flag) {
  (void)flag;
  return unsupported("aclopSetCompileFlag");
}

aclError aclGenGraphAndDumpForOp(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                 const aclDataBuffer *const inputs[], int numOutputs,
                                 const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                 const aclopAttr *attr, aclopEngineType engineType, const char *graphDumpPath,
                                 const aclGraphDumpOption *graphDumpOpt) {
  (void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs, (void)outputDesc;
  (void)outputs, (void)attr, (void)engineType, (void)graphDumpPath, (void)graphDumpOpt;
  return unsupported("aclGenGraphAndDumpForOp");
}

aclGraphDumpOption *aclCreateGraphDumpOpt(void) {
  unsupported("aclCreateGraphDumpOpt");
  return NULL;
}

aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt) {
  (void)graphDumpOpt;
  return unsupported("aclDestroyGraphDumpOpt");
}
