/* acl_mdl.c - AscendCL models over libomrt (acl_mdl.h): query, load,
 * unload, execute, execute on a stream.
 *
 * A loaded model is an omrt_model and one omrt_context (its worker threads
 * are the AI cores). With the caller's memory (the *WithMem loads) the
 * weights go to weightPtr (omrt_load_options.weights) and the context runs
 * in workPtr (omrt_context_options.workspace): libomrt allocates neither.
 * Both must be device memory (aclrtMalloc) holding the sizes aclmdlQuerySize
 * reports. Data given to aclmdlLoadFromMem* is copied (64-byte aligned, as
 * libomrt reads packages in place), so the caller may free it.
 *
 * Runs check the datasets against the model (count, each buffer device
 * memory of at least the tensor's bytes) before anything runs; the model
 * itself takes one run at a time (acl_model.run). aclmdlExecute gives an
 * output buffer created empty (no memory, size 0) device memory of the
 * output's bytes, the application's to aclrtFree (AscendCL's rule).
 *
 * Gears (acl_mdl.h): a model with gears has one input more than libomrt's,
 * ACL_DYNAMIC_TENSOR_NAME, holding the gear's values as int64. The
 * aclmdlSet* calls write them after finding the gear (omrt_model_find_gear,
 * whose message lists the gears); a run reads them first, finds the gear
 * again (the buffer is the application's to change) and checks the other
 * buffers against that gear's sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_internal.h"

enum { ALIGN = 64 };

/* libomrt's load of the file `path`, or of `size` bytes at data; weights: the
 * caller's weight memory or NULL. */
static aclError omrt_load(const char *call, const char *path, const void *data, size_t size, void *weights,
                          size_t weights_bytes, omrt_model **out) {
  omrt_load_options lo = {.weights = weights, .weights_bytes = weights_bytes};
  omrt_status s = path ? omrt_model_load_file(path, &lo, out) : omrt_model_load_memory(data, size, &lo, out);
  if (s == OMRT_OK) return ACL_SUCCESS;
  if (s == OMRT_ERR_ARG && weights) /* (libomrt's message says what about them) */
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: weightPtr %p, weightSize %zu: %s", call, weights,
                    weights_bytes, omrt_last_error());
  return acl_fail(acl_from_omrt(s), "%s: %s%s", call, path ? "" : "model data: ", omrt_last_error());
}

/* An aligned copy of `size` bytes of model data; NULL (message recorded) on failure. */
static void *copy_package(const char *call, const void *model, size_t size) {
  void *p = size <= SIZE_MAX - ALIGN ? aligned_alloc(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN) : NULL;
  if (!p) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory for a copy of the %zu-byte model", call, size);
    return NULL;
  }
  return memcpy(p, model, size);
}

aclError acl_mdl_read(const char *call, const char *path, const void *model, size_t size, omrt_model **out,
                      void **copy) {
  *out = NULL, *copy = NULL;
  if (!path && !(*copy = copy_package(call, model, size))) return ACL_ERROR_BAD_ALLOC;
  aclError e = omrt_load(call, path, *copy, size, NULL, 0, out);
  if (e) {
    free(*copy);
    *copy = NULL;
  }
  return e;
}

void acl_model_io(acl_model *am) {
  am->nin = omrt_model_num_inputs(am->m);
  am->nout = omrt_model_num_outputs(am->m);
  omrt_gear_desc g;
  omrt_model_gear(am->m, 0, &g);
  am->dyn = g.kind != OMRT_GEAR_NONE;
  am->nvalues = g.nvalues;
}

static aclError query(const char *call, const char *path, const void *model, size_t size, size_t *workSize,
                      size_t *weightSize) {
  if (!workSize || !weightSize)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, !workSize ? "workSize" : "weightSize");
  omrt_model *m;
  void *copy;
  aclError e = acl_mdl_read(call, path, model, size, &m, &copy);
  if (!e) {
    *workSize = omrt_model_workspace_bytes(m);
    *weightSize = omrt_model_weights_bytes(m);
    omrt_model_free(m);
  }
  free(copy);
  return e;
}

aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize) {
  aclError e = acl_enter("aclmdlQuerySize");
  if (e) return e;
  acl_leave();
  if (!fileName) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlQuerySize: fileName is NULL");
  return query("aclmdlQuerySize", fileName, NULL, 0, workSize, weightSize);
}

aclError aclmdlQuerySizeFromMem(const void *model, size_t modelSize, size_t *workSize, size_t *weightSize) {
  aclError e = acl_enter("aclmdlQuerySizeFromMem");
  if (e) return e;
  acl_leave();
  if (!model || modelSize == 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlQuerySizeFromMem: %s",
                    !model ? "model is NULL" : "modelSize is 0");
  return query("aclmdlQuerySizeFromMem", NULL, model, modelSize, workSize, weightSize);
}

void acl_model_free(acl_model *m) {
  if (!m) return;
  omrt_context_free(m->ctx);
  omrt_model_free(m->m);
  free(m->package);
  free(m->file_name);
  acl_dump_model_free(m->dump);
  pthread_mutex_destroy(&m->run);
  free(m);
}

/* Checks that `size` bytes at p (a *WithMem argument; NULL: the runtime
 * manages that part) are device memory, before anything is written there. */
static aclError check_user_memory(const char *call, const char *what, const void *p, size_t size) {
  const void *base;
  size_t bytes;
  if (p && acl_device_range(p, size, &base, &bytes) != 1)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: %s %p (%zu bytes) is not device memory from one aclrtMalloc", call, what, p, size);
  return ACL_SUCCESS;
}

aclError acl_mdl_load(const char *call, const char *path, const void *model, size_t size, uint32_t *modelId,
                      void *workPtr, size_t workSize, void *weightPtr, size_t weightSize) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (!modelId) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: modelId is NULL", call));
  *modelId = 0;
  if (path ? !*path : !model || size == 0)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
                                   path     ? "modelPath is empty"
                                   : !model ? "model is NULL"
                                            : "modelSize is 0"));
  acl_context *c = acl_current();
  if (!c) return acl_leave_with(acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context", call));
  if ((e = check_user_memory(call, "weightPtr", weightPtr, weightSize)) ||
      (e = check_user_memory(call, "workPtr", workPtr, workSize)))
    return acl_leave_with(e);
  acl_model *am = calloc(1, sizeof *am);
  if (!am) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  pthread_mutex_init(&am->run, NULL);
  am->ctx_serial = c->serial;
  am->cur_gear = -1;
  if (!path && !(am->package = copy_package(call, model, size))) e = ACL_ERROR_BAD_ALLOC;
  /* libomrt copies the weights to weightPtr only once it knows they fit. */
  if (!e) e = omrt_load(call, path, am->package, size, weightPtr, weightSize, &am->m);
  size_t need = e ? 0 : omrt_model_workspace_bytes(am->m);
  if (!e && workPtr && workSize < need)
    e = acl_fail(ACL_ERROR_INVALID_PARAM,
                 "%s: workSize %zu is less than the model's %zu work bytes (aclmdlQuerySize)", call, workSize,
                 need);
  if (!e) {
    omrt_context_options co = {.workspace = workPtr, .workspace_bytes = workSize};
    omrt_status s = omrt_context_new_with(am->m, &co, &am->ctx);
    if (s) e = acl_fail(acl_from_omrt(s), "%s: %s", call, omrt_last_error());
  }
  if (!e) acl_model_io(am);
  if (e) {
    acl_model_free(am);
    return acl_leave_with(e);
  }
  acl_add_model(am);
  if ((e = acl_dump_attach(am, path))) {
    acl_remove_model(am);
    acl_model_free(am);
    return acl_leave_with(e);
  }
  acl_set_soc(omrt_model_soc(am->m));
  *modelId = am->id;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId) {
  if (!modelPath) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoadFromFile: modelPath is NULL");
  return acl_mdl_load("aclmdlLoadFromFile", modelPath, NULL, 0, modelId, NULL, 0, NULL, 0);
}

aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId) {
  return acl_mdl_load("aclmdlLoadFromMem", NULL, model, modelSize, modelId, NULL, 0, NULL, 0);
}

aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void *workPtr, size_t workSize,
                                   void *weightPtr, size_t weightSize) {
  if (!modelPath) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoadFromFileWithMem: modelPath is NULL");
  return acl_mdl_load("aclmdlLoadFromFileWithMem", modelPath, NULL, 0, modelId, workPtr, workSize, weightPtr,
                      weightSize);
}

aclError aclmdlLoadFromMemWithMem(const void *model, size_t modelSize, uint32_t *modelId, void *workPtr,
                                  size_t workSize, void *weightPtr, size_t weightSize) {
  return acl_mdl_load("aclmdlLoadFromMemWithMem", NULL, model, modelSize, modelId, workPtr, workSize,
                      weightPtr, weightSize);
}

/* The loaded model `id`, of the current context (under the lock). */
aclError acl_mdl_find(const char *call, uint32_t id, acl_model **out) {
  acl_model *m = acl_find_model(id);
  if (!m) return acl_fail(ACL_ERROR_INVALID_MODEL_ID, "%s: modelId %u: no such model is loaded", call, id);
  acl_context *c = acl_current();
  if (!c) return acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context", call);
  if (c->serial != m->ctx_serial)
    return acl_fail(ACL_ERROR_RT_MODEL_CONTEXT,
                    "%s: modelId %u was loaded in another context than the current one", call, id);
  *out = m;
  return ACL_SUCCESS;
}

aclError aclmdlUnload(uint32_t modelId) {
  aclError e = acl_enter("aclmdlUnload");
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find("aclmdlUnload", modelId, &m))) return acl_leave_with(e);
  acl_remove_model(m); /* waits for runs in flight and queued on streams */
  acl_model_free(m);
  return acl_leave_with(ACL_SUCCESS);
}

/* The gear an input dataset asks for: 0 for a model without gears, else
 * the gear whose values its ACL_DYNAMIC_TENSOR_NAME buffer holds (under the
 * lock). */
static aclError dataset_gear(const char *call, const acl_model *m, const aclmdlDataset *d, int *gear) {
  *gear = 0;
  if (!m->dyn || !d || d->n != (size_t)m->nin + 1) return ACL_SUCCESS; /* (check_dataset names the count) */
  const aclDataBuffer *b = d->bufs[m->nin];
  size_t need = (size_t)m->nvalues * sizeof(int64_t);
  const void *base;
  size_t bytes;
  if (!b || !b->data || b->size < need || acl_device_range(b->data, need, &base, &bytes) != 1)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: input %d ('%s'): not device memory of %zu bytes; the model has gears "
                    "(aclmdlSetDynamicBatchSize, aclmdlSetDynamicHWSize, aclmdlSetInputDynamicDims)",
                    call, m->nin, ACL_DYNAMIC_TENSOR_NAME, need);
  int64_t v[OMRT_MAX_GEAR_VALUES];
  memcpy(v, b->data, need);
  if (omrt_model_find_gear(m->m, v, m->nvalues, gear))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: input %d ('%s'): %s", call, m->nin, ACL_DYNAMIC_TENSOR_NAME,
                    omrt_last_error());
  return ACL_SUCCESS;
}

/* Checks a dataset against the model's inputs (is_input) or outputs as gear
 * `gear` has them and puts the buffers' addresses in addrs (under the
 * lock; the dynamic input's buffer is dataset_gear's, not in addrs).
 * empty_ok: an output buffer of no memory and size 0 passes, its address
 * NULL (aclmdlExecute allocates it). */
static aclError check_dataset(const char *call, const acl_model *m, const aclmdlDataset *d, int is_input,
                              int gear, int empty_ok, void **addrs) {
  const char *what = is_input ? "input" : "output";
  int n = is_input ? m->nin : m->nout, nbufs = n + (is_input ? m->dyn : 0);
  aclError mismatch = is_input ? ACL_ERROR_MODEL_INPUT_NOT_MATCH : ACL_ERROR_MODEL_OUTPUT_NOT_MATCH;
  if (!d) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s dataset is NULL", call, what);
  if (d->n != (size_t)nbufs)
    return acl_fail(mismatch, "%s: the %s dataset has %zu buffers, model %u has %d %ss%s", call, what, d->n,
                    m->id, nbufs, what, is_input && m->dyn ? " (the last: " ACL_DYNAMIC_TENSOR_NAME ")" : "");
  for (int i = 0; i < n; i++) {
    omrt_tensor_desc t;
    if (is_input)
      omrt_model_gear_input(m->m, gear, i, &t);
    else
      omrt_model_gear_output(m->m, gear, i, &t);
    const aclDataBuffer *b = d->bufs[i];
    if (b && !b->data && b->size == 0 && !is_input && empty_ok) {
      addrs[i] = NULL;
      continue;
    }
    if (!b || !b->data)
      return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s %d ('%s'): the data buffer %s", call, what, i, t.name,
                      !b                          ? "is NULL"
                      : !is_input && b->size == 0 ? "has no memory (only aclmdlExecute allocates it)"
                                                  : "has no memory");
    if (b->size < t.bytes)
      return acl_fail(mismatch, "%s: %s %d ('%s'): buffer of %zu bytes, the tensor has %zu%s", call, what, i,
                      t.name, b->size, t.bytes, m->dyn ? " at the gear the dataset chose" : "");
    const void *base;
    size_t bytes;
    if (acl_device_range(b->data, t.bytes, &base, &bytes) != 1)
      return acl_fail(
          ACL_ERROR_INVALID_PARAM,
          "%s: %s %d ('%s'): %p is not device memory holding %zu bytes (aclrtMalloc, then aclrtMemcpy "
          "from the host)",
          call, what, i, t.name, b->data, t.bytes);
    const aclTensorDesc *td = is_input ? d->descs[i] : NULL;
    int same = !td || td->rank == (size_t)t.rank;
    for (int k = 0; td && same && k < t.rank; k++)
      same = td->dims[k] == t.dims[k] || td->dims[k] == -1;
    if (!same)
      return acl_fail(
          ACL_ERROR_INVALID_PARAM,
          "%s: input %d ('%s'): its tensor description (aclmdlSetDatasetTensorDesc) has other dims "
          "than the input%s",
          call, i, t.name, m->dyn ? " at the gear the dataset chose" : "");
    addrs[i] = b->data;
  }
  return ACL_SUCCESS;
}

/* Describes each output of a run of gear `gear` in the output dataset's
 * descriptions; ran: after the run (a data-dependent extent is its). */
static aclError describe_outputs(const char *call, acl_model *m, int gear, aclmdlDataset *out, int ran) {
  for (int i = 0; i < m->nout; i++) {
    omrt_tensor_desc t, now;
    omrt_model_gear_output(m->m, gear, i, &t);
    if (ran) {
      pthread_mutex_lock(&m->run);
      if (omrt_context_output_dims(m->ctx, i, &now) == OMRT_OK && now.count_axis >= 0)
        t.dims[now.count_axis] = now.dims[now.count_axis];
      pthread_mutex_unlock(&m->run);
    }
    aclTensorDesc *d = acl_tensor_desc(acl_data_type(t.dtype), acl_format(t.format), (size_t)t.rank, t.dims);
    if (d) aclSetTensorDescName(d, t.name);
    if (!d || strcmp(d->name, t.name) != 0) {
      aclDestroyTensorDesc(d);
      return acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
    }
    acl_dataset_put_desc(out, (size_t)i, d);
  }
  return ACL_SUCCESS;
}

/* Both datasets checked (gear first): the gear in *gear, addresses in a
 * (empty_ok: check_dataset's). */
static aclError check_datasets(const char *call, const acl_model *m, const aclmdlDataset *in,
                               const aclmdlDataset *out, int empty_ok, int *gear, void **a) {
  aclError e = dataset_gear(call, m, in, gear);
  if (!e) e = check_dataset(call, m, in, 1, *gear, 0, a);
  if (!e) e = check_dataset(call, m, out, 0, *gear, empty_ok, a + m->nin);
  return e;
}

/* aclmdlExecute's empty output buffers (no memory, size 0) get device
 * memory of their output's bytes at gear `gear`, which the application
 * frees with aclrtFree (under the lock; all or none). */
static aclError fill_empty_outputs(const char *call, const acl_model *m, aclmdlDataset *out, int gear,
                                   void **addrs) {
  for (int i = 0; i < m->nout; i++) {
    if (addrs[i]) continue;
    omrt_tensor_desc t;
    omrt_model_gear_output(m->m, gear, i, &t);
    aclError e = acl_alloc_device_locked(call, &addrs[i], t.bytes ? t.bytes : 1);
    if (e) {
      for (int k = 0; k < i; k++)
        if (!out->bufs[k]->data) acl_free_device_locked(addrs[k]); /* (an empty buffer's, allocated above) */
      return e;
    }
  }
  for (int i = 0; i < m->nout; i++)
    if (!out->bufs[i]->data) {
      omrt_tensor_desc t;
      omrt_model_gear_output(m->m, gear, i, &t);
      *out->bufs[i] = (aclDataBuffer){addrs[i], t.bytes ? t.bytes : 1};
    }
  return ACL_SUCCESS;
}

/* Runs the model on the calling thread (aclmdlExecute, aclmdlExecuteV2 without a stream). */
static aclError execute(const char *call, uint32_t modelId, const aclmdlDataset *input,
                        aclmdlDataset *output) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find(call, modelId, &m))) return acl_leave_with(e);
  /* The addresses are checked into a stack array, then copied under the run lock. */
  enum { MAX_STACK = 64 };
  void *addrs[MAX_STACK],
      **a = m->nin + m->nout <= MAX_STACK ? addrs : malloc((size_t)(m->nin + m->nout) * sizeof *a);
  if (!a) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  int gear;
  if ((e = check_datasets(call, m, input, output, 1, &gear, a)) ||
      (e = fill_empty_outputs(call, m, output, gear, a + m->nin))) {
    if (a != addrs) free(a);
    return acl_leave_with(e);
  }
  acl_model_use(m);
  acl_leave();
  char msg[1024];
  e = acl_run_model(m, gear, (const void *const *)a, a + m->nin, msg, sizeof msg);
  if (e) acl_fail(e, "%s: %s", call, msg);
  if (!e) e = describe_outputs(call, m, gear, output, 1);
  acl_model_release(m);
  if (a != addrs) free(a);
  return e;
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output) {
  return execute("aclmdlExecute", modelId, input, output);
}

/* Queues one run on `stream` (NULL: the default stream); *queued: the
 * stream it went to. */
static aclError enqueue(const char *call, uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                        aclrtStream stream, acl_stream **queued) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  acl_stream *s = NULL;
  if ((e = acl_mdl_find(call, modelId, &m)) || (e = acl_resolve_stream(call, stream, &s)))
    return acl_leave_with(e);
  acl_op *op = calloc(1, sizeof *op);
  void **a = calloc((size_t)(m->nin + m->nout) + 1, sizeof *a);
  if (!op || !a) {
    free(op);
    free(a);
    return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  }
  int gear;
  if ((e = check_datasets(call, m, input, output, 0, &gear, a)) ||
      (e = describe_outputs(call, m, gear, output, 0))) {
    free(op);
    free(a);
    return acl_leave_with(e);
  }
  *op = (acl_op){.kind = ACL_OP_RUN, .model = m, .gear = gear, .in = (const void **)a, .out = a + m->nin};
  acl_model_use(m);
  acl_stream_push(s, op);
  *queued = s;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                            aclrtStream stream) {
  acl_stream *s;
  return enqueue("aclmdlExecuteAsync", modelId, input, output, stream, &s);
}

aclError aclmdlExecuteV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                         aclrtStream stream, const aclmdlExecConfigHandle *handle) {
  const char *call = "aclmdlExecuteV2";
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", call);
  if (!stream) return execute(call, modelId, input, output);
  acl_stream *s;
  aclError e = enqueue(call, modelId, input, output, stream, &s);
  if (e) return e;
  char msg[1024]; /* (destroying the stream while this waits for it is the caller's race) */
  e = acl_stream_wait(s, msg, sizeof msg, handle->stream_sync_timeout);
  return e ? acl_fail(e, "%s: stream %p: %s", call, stream, msg) : ACL_SUCCESS;
}

aclError aclmdlExecuteAsyncV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                              aclrtStream stream, const aclmdlExecConfigHandle *handle) {
  if (!handle) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlExecuteAsyncV2: handle is NULL");
  acl_stream *s;
  return enqueue("aclmdlExecuteAsyncV2", modelId, input, output, stream, &s);
}

/* --- gears: the aclmdlSet* calls write the gear's values into the
 * dataset's ACL_DYNAMIC_TENSOR_NAME buffer */

static aclError set_gear(const char *call, uint32_t modelId, aclmdlDataset *dataset, size_t index, int kind,
                         const int64_t *values, int nvalues) {
  static const char *const kinds[] = {"no gears", "batch gears (--dynamic_batch_size)",
                                      "image size gears (--dynamic_image_size)",
                                      "dims gears (--dynamic_dims)"};
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  if ((e = acl_mdl_find(call, modelId, &m))) return acl_leave_with(e);
  omrt_gear_desc g;
  omrt_model_gear(m->m, 0, &g);
  if (g.kind != kind)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u has %s, not %s", call, modelId,
                                   kinds[g.kind], kinds[kind]));
  if (!dataset || index != (size_t)m->nin || index >= dataset->n)
    return acl_leave_with(acl_fail(
        ACL_ERROR_INVALID_PARAM, "%s: %s; the dynamic input '" ACL_DYNAMIC_TENSOR_NAME "' is index %d", call,
        !dataset ? "dataset is NULL" : "index does not name it in the dataset", m->nin));
  int gear;
  if (nvalues != m->nvalues || omrt_model_find_gear(m->m, values, nvalues, &gear))
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u: %s", call, modelId,
                                   nvalues != m->nvalues ? "wrong number of values" : omrt_last_error()));
  aclDataBuffer *b = dataset->bufs[index];
  size_t need = (size_t)nvalues * sizeof(int64_t);
  const void *base;
  size_t bytes;
  if (!b || !b->data || b->size < need || acl_device_range(b->data, need, &base, &bytes) != 1)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: the dataset's buffer %zu is not device memory of %zu bytes "
                                   "(aclmdlGetInputSizeByIndex)",
                                   call, index, need));
  memcpy(b->data, values, need);
  m->cur_gear = gear;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                   uint64_t batchSize) {
  int64_t v = batchSize > INT64_MAX ? -1 : (int64_t)batchSize;
  return set_gear("aclmdlSetDynamicBatchSize", modelId, dataset, index, OMRT_GEAR_BATCH, &v, 1);
}

aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index, uint64_t height,
                                uint64_t width) {
  int64_t v[2] = {height > INT64_MAX ? -1 : (int64_t)height, width > INT64_MAX ? -1 : (int64_t)width};
  return set_gear("aclmdlSetDynamicHWSize", modelId, dataset, index, OMRT_GEAR_IMAGE_SIZE, v, 2);
}

/* dims: every input's dims one after another; the gear whose inputs have
 * exactly those dims. */
aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                   const aclmdlIODims *dims) {
  const char *call = "aclmdlSetInputDynamicDims";
  if (!dims) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL", call);
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = NULL;
  e = acl_mdl_find(call, modelId, &m);
  int ngears = e ? 0 : omrt_model_num_gears(m->m), found = -1;
  for (int g = 0; g < ngears && found < 0; g++) {
    size_t k = 0;
    int same = 1;
    for (int i = 0; i < m->nin && same; i++) {
      omrt_tensor_desc t;
      omrt_model_gear_input(m->m, g, i, &t);
      for (int j = 0; j < t.rank && same; j++, k++)
        same = k < dims->dimCount && k < ACL_MAX_DIM_CNT && dims->dims[k] == t.dims[j];
    }
    if (same && k == dims->dimCount) found = g;
  }
  omrt_gear_desc gd = {0};
  if (!e && found >= 0) omrt_model_gear(m->m, found, &gd);
  char list[512] = "";
  if (!e && found < 0) {
    size_t len = 0;
    for (int g = 0; g < ngears && len < sizeof list; g++)
      for (int i = 0; i < m->nin && len < sizeof list; i++) {
        omrt_tensor_desc t;
        omrt_model_gear_input(m->m, g, i, &t);
        for (int j = 0; j < t.rank && len < sizeof list; j++)
          len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld",
                                  j || i ? ","
                                  : g    ? "; "
                                         : "",
                                  (long long)t.dims[j]);
      }
  }
  acl_leave();
  if (e) return e;
  if (found < 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: model %u: no gear has these input dims (the gears: %s)",
                    call, modelId, list);
  /* (the model may be unloaded between the two locks: set_gear finds it again) */
  return set_gear(call, modelId, dataset, index, OMRT_GEAR_DIMS, gd.values, gd.nvalues);
}
