/* omrt.h - the embedded runtime for om packages built by atc.
 *
 * libomrt loads an om package, verifies every byte of it before use, and runs
 * its task list on a software model of a Da Vinci AI core (cube unit for
 * 16x16x16 fp16 fractal matrix work with fp32 accumulation, vector unit for
 * the rest). It depends on libc, libm and pthread only.
 *
 * Typical use:
 *
 *   omrt_model *m;
 *   if (omrt_model_load_file("resnet50.om", NULL, &m) != OMRT_OK)
 *     fprintf(stderr, "%s\n", omrt_last_error());
 *   omrt_context *ctx;
 *   omrt_context_new(m, &ctx);                 // workspace + worker threads
 *   const void *in[1] = {input};  void *out[1] = {output};
 *   omrt_execute(ctx, in, out);                // allocates nothing
 *   omrt_context_free(ctx);
 *   omrt_model_free(m);
 *
 * Memory: by default the weights are read in place from the package and a
 * context allocates its workspace. An application that manages memory
 * itself (as AscendCL's aclmdlLoadFromFileWithMem does) passes its own
 * weight memory in omrt_load_options.weights and its own workspace in
 * omrt_context_options.workspace; libomrt then allocates neither (only
 * small descriptor tables and the per-AI-core scratch buffers, whose sizes
 * depend on the SoC, not on the model's tensors).
 *
 * Threads: a loaded model is immutable and may be shared by any number of
 * threads; each context is used by one thread at a time. Errors: every call
 * returns a status; the message of the last failure on the calling thread is
 * omrt_last_error().
 */
#ifndef OMRT_H
#define OMRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header, of libomrt and of atc: one number for the
 * whole project (CMakeLists.txt reads these three lines; the soname, the
 * packages, `atc --version` and the atc version recorded in every om follow
 * it). */
#define OMRT_VERSION_MAJOR 0
#define OMRT_VERSION_MINOR 3
#define OMRT_VERSION_PATCH 0

/* The shared library exports exactly the functions declared here. */
#if defined(__GNUC__)
#define OMRT_API __attribute__((visibility("default")))
#else
#define OMRT_API
#endif

typedef enum omrt_status {
  OMRT_OK = 0,
  OMRT_ERR_IO = 1,          /* the file could not be opened, read or mapped */
  OMRT_ERR_FORMAT = 2,      /* not a well-formed om package (bad magic, bounds, counts) */
  OMRT_ERR_VERSION = 3,     /* an om of another major version */
  OMRT_ERR_CHECKSUM = 4,    /* a header or partition CRC32C does not match */
  OMRT_ERR_ARG = 5,         /* a NULL or out-of-range argument */
  OMRT_ERR_NOMEM = 6,       /* an allocation failed */
  OMRT_ERR_UNSUPPORTED = 7, /* a task kind / dtype / layout this runtime cannot run */
  OMRT_ERR_THREAD = 8,      /* a worker thread could not be started */
  OMRT_ERR_OVERFLOW = 9,    /* with omrt_context_options.check_overflow: a task wrote inf or NaN */
  OMRT_ERR_STOPPED = 10,    /* a task hook (omrt_context_set_task_hook) asked to stop */
} omrt_status;

/* Element types: ONNX TensorProto.DataType numbers (those a model's I/O
 * commonly has; any other number is ONNX's too). The storage types from
 * OMRT_BFLOAT16 on are stored as ONNX's raw_data stores them: the 4- and
 * 2-bit ones packed, element 0 in a byte's lowest bits, so that
 * omrt_tensor_desc.bytes is ceil(elements x bits / 8) (docs/om-format.md). */
enum {
  OMRT_FLOAT32 = 1,
  OMRT_UINT8 = 2,
  OMRT_INT8 = 3,
  OMRT_INT32 = 6,
  OMRT_INT64 = 7,
  OMRT_BOOL = 9,
  OMRT_FLOAT16 = 10,
  OMRT_BFLOAT16 = 16,
  OMRT_FLOAT8E4M3FN = 17,
  OMRT_FLOAT8E4M3FNUZ = 18,
  OMRT_FLOAT8E5M2 = 19,
  OMRT_FLOAT8E5M2FNUZ = 20,
  OMRT_UINT4 = 21,
  OMRT_INT4 = 22,
  OMRT_FLOAT4E2M1 = 23,
  OMRT_FLOAT8E8M0 = 24,
  OMRT_UINT2 = 25,
  OMRT_INT2 = 26
};

enum { OMRT_MAX_RANK = 8 };

typedef struct omrt_model omrt_model;
typedef struct omrt_context omrt_context;

/* A compiler of vector programs to native code, supplied by an optional
 * library (libomrt_jit: omrt_jit_compiler() in omrt_jit.h). */
typedef struct omrt_vprog_compiler omrt_vprog_compiler;

typedef struct omrt_load_options {
  /* Worker threads per context (AI cores simulated at once). 0 = the value of
   * the OMRT_THREADS environment variable if set, else min(SoC AI cores, host
   * cores). */
  uint32_t threads;
  /* Compiles the model's vector programs at load (it must outlive the
   * model); NULL: libomrt interprets them. Results are the same either way. */
  const omrt_vprog_compiler *vprog_compiler;
  /* The caller's weight memory, or NULL to read the weights in place from
   * the package. When set: 64-byte aligned, at least weights_bytes bytes,
   * and weights_bytes >= the package's weight bytes (omrt_model_weights_bytes
   * of a load without it) or the load fails with OMRT_ERR_ARG. The loader
   * copies the verified WEIGHTS partition there, and every task reads its
   * weights from there. Owned by the caller, who keeps it valid and
   * unchanged until omrt_model_free. Loads of the same package may share
   * it: each load writes the same bytes, and runs only read them. */
  void *weights;
  size_t weights_bytes;
} omrt_load_options;

/* How the caller's bytes of an input or output are laid out
 * (omrt_tensor_desc.format). ND, NCHW and NHWC are plain C order over the
 * dims (NCHW and NHWC say which dims are an image's H and W, as atc's
 * --input_format named them); NC1HWC0 is the chip's 5-D fp16 layout of an
 * [N, C, H, W] tensor, [N][ceil(C/16)][H][W][16] with channels past C zero
 * (atc --is_input_adjust_hw_layout / --is_output_adjust_hw_layout). */
enum { OMRT_FORMAT_ND = 0, OMRT_FORMAT_NCHW = 1, OMRT_FORMAT_NHWC = 2, OMRT_FORMAT_NC1HWC0 = 3 };

/* One model input or output as the caller sees it. */
typedef struct omrt_tensor_desc {
  const char *name; /* owned by the model; valid until omrt_model_free */
  int dtype;        /* OMRT_FLOAT32, ... */
  int rank;
  /* Logical dims (NCHW for NC1HWC0). For a model with gears,
   * omrt_model_input/output give -1 for a dim that differs between gears;
   * omrt_model_gear_input/output give the gear's. */
  int64_t dims[OMRT_MAX_RANK];
  size_t bytes; /* of the caller's buffer: for a model with gears, the largest gear's */
  int format;   /* OMRT_FORMAT_* */
  /* -1: a dense tensor. Else an output whose extent along this dim is
   * known only after an execution (NonZero's positions, ...): dims[] and
   * bytes are the bound, the buffer's size; omrt_context_output_dims gives
   * the actual dims, and omrt_execute leaves the output compacted to them
   * (C order from the buffer's start). */
  int count_axis;
} omrt_tensor_desc;

/* Maps `path` read-only and verifies it. `opts` may be NULL. On success
 * *model_out owns the mapping until omrt_model_free. */
OMRT_API omrt_status omrt_model_load_file(const char *path, const omrt_load_options *opts,
                                          omrt_model **model_out);

/* Verifies `size` bytes at `data`. The model reads weights in place: the
 * caller keeps `data` valid and unchanged until omrt_model_free. `data` must
 * be 64-byte aligned (OMRT_ERR_ARG otherwise). */
OMRT_API omrt_status omrt_model_load_memory(const void *data, size_t size, const omrt_load_options *opts,
                                            omrt_model **model_out);

OMRT_API void omrt_model_free(omrt_model *model); /* NULL is fine */

OMRT_API int omrt_model_num_inputs(const omrt_model *model);
OMRT_API int omrt_model_num_outputs(const omrt_model *model);
/* index out of range: OMRT_ERR_ARG. */
OMRT_API omrt_status omrt_model_input(const omrt_model *model, int index, omrt_tensor_desc *desc_out);
OMRT_API omrt_status omrt_model_output(const omrt_model *model, int index, omrt_tensor_desc *desc_out);
/* Which node of the source model computes output `index`: its name (owned
 * by the model; NULL when the package does not say, a format 2.15 or older
 * one, or no node computes it) and which of the node's outputs (edge, from
 * 0) it is; picked: the output was chosen by node and edge (atc --out_nodes)
 * rather than named by the source graph. OMRT_ERR_ARG for a bad index. */
typedef struct omrt_output_node {
  const char *node;
  int edge;
  int picked;
} omrt_output_node;
OMRT_API omrt_status omrt_model_output_node(const omrt_model *model, int index, omrt_output_node *node_out);
/* Read-only facts about the package; strings owned by the model. */
OMRT_API const char *omrt_model_name(const omrt_model *model);
OMRT_API const char *omrt_model_soc(const omrt_model *model);
/* atc --singleop's record of the operator an op model computes (its type,
 * tensor descriptions and attributes: docs/om-format.md), "" for a model
 * compiled from ONNX. */
OMRT_API const char *omrt_model_singleop(const omrt_model *model);
OMRT_API size_t omrt_model_workspace_bytes(const omrt_model *model); /* a context's workspace */
OMRT_API size_t omrt_model_weights_bytes(const omrt_model *model);   /* the WEIGHTS partition */

/* Gears: a model compiled with atc's --dynamic_batch_size,
 * --dynamic_image_size or --dynamic_dims holds one task list per gear (one
 * value of its dynamic dims) over one set of weights and one workspace (the
 * largest gear's). A context runs gear 0 until omrt_context_set_gear picks
 * another; a model without gears has exactly one. */
typedef enum omrt_gear_kind {
  OMRT_GEAR_NONE = 0,       /* a static model: its one gear has no values */
  OMRT_GEAR_BATCH = 1,      /* values: the batch */
  OMRT_GEAR_IMAGE_SIZE = 2, /* values: height, width */
  OMRT_GEAR_DIMS = 3,       /* values: each dynamic dim, inputs in order (the -1s of atc's --input_shape) */
} omrt_gear_kind;
enum { OMRT_MAX_GEAR_VALUES = 16 };
typedef struct omrt_gear_desc {
  int kind; /* omrt_gear_kind, the same for every gear of a model */
  int nvalues;
  int64_t values[OMRT_MAX_GEAR_VALUES];
} omrt_gear_desc;

OMRT_API int omrt_model_num_gears(const omrt_model *model); /* >= 1 (0 for NULL) */
/* gear out of range: OMRT_ERR_ARG. */
OMRT_API omrt_status omrt_model_gear(const omrt_model *model, int gear, omrt_gear_desc *desc_out);
/* Input or output `index` as gear `gear` has it (its dims and bytes). */
OMRT_API omrt_status omrt_model_gear_input(const omrt_model *model, int gear, int index,
                                           omrt_tensor_desc *desc_out);
OMRT_API omrt_status omrt_model_gear_output(const omrt_model *model, int gear, int index,
                                            omrt_tensor_desc *desc_out);
/* The gear whose values are values[0, nvalues); none: OMRT_ERR_ARG, with a
 * message listing the model's gears. */
OMRT_API omrt_status omrt_model_find_gear(const omrt_model *model, const int64_t *values, int nvalues,
                                          int *gear_out);

typedef struct omrt_context_options {
  /* The caller's workspace, or NULL for one the context allocates. When
   * set: 64-byte aligned and workspace_bytes >= omrt_model_workspace_bytes
   * (OMRT_ERR_ARG otherwise). Owned by the caller, who keeps it valid until
   * omrt_context_free; contexts (of one model or of several) may share one
   * workspace as long as they never execute at the same time. Its contents
   * between executions mean nothing. */
  void *workspace;
  size_t workspace_bytes;
  /* Profiling (omrt_context_profile, omrt_context_task_profile): 0 = as the
   * OMRT_PROFILE environment variable says, 1 = time per task kind, 2 = per
   * kind and per task. */
  int profile;
  /* 1: after every task, omrt_execute checks the floats the task wrote;
   * the first task that wrote an inf or a NaN stops the run with
   * OMRT_ERR_OVERFLOW, and omrt_last_error() names the task, the ONNX nodes
   * it stands for and the tensor (fp16 overflow, as ATC's overflow
   * detection). Costs a pass over every task's output. 0: no check. */
  int check_overflow;
} omrt_context_options;

/* Allocates the workspace (once) and starts the worker threads. The model
 * must outlive the context. Same as omrt_context_new_with(model, NULL, ...). */
OMRT_API omrt_status omrt_context_new(const omrt_model *model, omrt_context **ctx_out);
/* With options (NULL: the defaults, as omrt_context_new). */
OMRT_API omrt_status omrt_context_new_with(const omrt_model *model, const omrt_context_options *opts,
                                           omrt_context **ctx_out);
OMRT_API void omrt_context_free(omrt_context *ctx); /* NULL is fine; joins the workers */
OMRT_API int omrt_context_threads(const omrt_context *ctx);
/* Where execution time went, when the context was created with profiling
 * on (omrt_context_options.profile, or OMRT_PROFILE=1): for task kind number
 * `kind` (0, 1, ...; the runtime kernel's name, e.g. "VPROG"; "" for unused numbers) the
 * tasks run and their wall time in ms, summed over every omrt_execute on
 * ctx. OMRT_ERR_ARG past the last kind or when profiling is off. */
OMRT_API omrt_status omrt_context_profile(const omrt_context *ctx, int kind, const char **name_out,
                                          uint64_t *tasks_out, double *ms_out);

/* With per-task profiling (profile 2, or OMRT_PROFILE=2), the same per
 * task: task number `task` (0 .. ntasks-1, in execution order), its name (the IR node's;
 * owned by the model), its kind's name, and its wall time in ms summed over
 * every omrt_execute on ctx. OMRT_ERR_ARG past the last task or when
 * per-task profiling is off. */
OMRT_API omrt_status omrt_context_task_profile(const omrt_context *ctx, int task, const char **name_out,
                                               const char **kind_out, double *ms_out);

/* The gear the next omrt_execute on ctx runs (0 .. omrt_model_num_gears - 1;
 * OMRT_ERR_ARG otherwise). */
OMRT_API omrt_status omrt_context_set_gear(omrt_context *ctx, int gear);
OMRT_API int omrt_context_gear(const omrt_context *ctx);

/* AIPP (atc --insert_op_conf): an image input whose raw uint8 pixels (as
 * a camera or decoder delivers them: NV12, RGB, ...) the model converts,
 * crops, pads and normalises itself before its first layer
 * (common/om_format.h's AIPP task states the arithmetic exactly). Static
 * AIPP has its parameters in the package; dynamic AIPP reads them from one
 * more model input (named "ascend_dynamic_aipp_data": one
 * OMRT_AIPP_PARAMS_BYTES record an image of the batch), which the
 * application fills with omrt_aipp_pack (one set for every image) or
 * omrt_aipp_pack_images (a set an image: the images share format, image
 * size, swaps and csc; crop, padding, mean, min and var_reci go per
 * image), or which omrt_context_set_aipp(_images) fills for every run on a
 * context. */
enum { OMRT_AIPP_NONE = 0, OMRT_AIPP_STATIC = 1, OMRT_AIPP_DYNAMIC = 2 };
enum {
  OMRT_AIPP_YUV420SP_U8 = 1, /* NV12: a Y plane, then interleaved U, V at half resolution */
  OMRT_AIPP_XRGB8888_U8 = 2, /* 4 bytes a pixel: X, R, G, B (R, G, B, X with ax_swap_switch) */
  OMRT_AIPP_RGB888_U8 = 3,   /* 3 bytes a pixel: R, G, B */
  OMRT_AIPP_YUV400_U8 = 4,   /* 1 byte a pixel */
};
enum { OMRT_AIPP_PARAMS_BYTES = 192 };
typedef struct omrt_aipp {
  int input_format;                                 /* OMRT_AIPP_YUV420SP_U8, ... */
  int32_t src_w, src_h;                             /* the image's pixels */
  int csc_switch, rbuv_swap_switch, ax_swap_switch; /* 0|1 */
  int crop;                                         /* 0|1; 0: the whole image */
  int32_t crop_x, crop_y, crop_w, crop_h;           /* pixels (load_start_pos_w/h, crop_size_w/h) */
  int padding;                                      /* 0|1; 0: the pad sizes count as 0 */
  int32_t pad_left, pad_right, pad_top, pad_bottom; /* pixels */
  float pad_value;                                  /* every channel of a padded pixel */
  int32_t matrix[3][3];                             /* csc: matrix_r<i>c<j> */
  int32_t input_bias[3], output_bias[3];            /* csc: 0..255 */
  int32_t mean[4];                                  /* mean_chn_<i> */
  float min[4], var_reci[4];                        /* min_chn_<i>, var_reci_chn_<i> */
} omrt_aipp;
typedef struct omrt_aipp_info {
  int mode;            /* OMRT_AIPP_NONE, _STATIC or _DYNAMIC */
  int params_input;    /* dynamic: the input that carries the parameters; else -1 */
  int64_t src_bytes;   /* bytes of the image input (dynamic: batch x max_src_image_size) */
  int64_t out_dims[4]; /* what AIPP hands the model's first layer: N, C, H, W */
  omrt_aipp config;    /* static: the package's parameters; else zero */
} omrt_aipp_info;
/* How input `input` is preprocessed (OMRT_AIPP_NONE for a plain input,
 * and for the parameters input of dynamic AIPP). With shape gears: as in
 * the largest gear (the one whose image input is largest). */
OMRT_API omrt_status omrt_model_input_aipp(const omrt_model *model, int input, omrt_aipp_info *info_out);
/* Checks cfg against image input `input`'s dynamic AIPP (formats, sizes,
 * crop inside the image, the output size the model takes, the bytes the
 * input holds; with gears, in some gear: omrt_execute checks the gear it
 * runs) and writes it as every image's record into buf, the parameters
 * input's bytes (omrt_model_input's: OMRT_AIPP_PARAMS_BYTES x the largest
 * gear's batch; bytes >= that). OMRT_ERR_ARG naming the broken rule (buf
 * then holds unchecked records). */
OMRT_API omrt_status omrt_aipp_pack(const omrt_model *model, int input, const omrt_aipp *cfg, void *buf,
                                    size_t bytes);
/* The same with a set an image: cfgs[ncfgs], ncfgs the largest gear's
 * batch (a gear of batch n reads the first n; 1: every image); they must
 * agree on format, image size, swaps and csc. */
OMRT_API omrt_status omrt_aipp_pack_images(const omrt_model *model, int input, const omrt_aipp *cfgs,
                                           int ncfgs, void *buf, size_t bytes);
/* The same, kept in the context: every later omrt_execute on ctx given
 * NULL for the parameters input reads these. Allocates on each call; a
 * failed call keeps what the context had. */
OMRT_API omrt_status omrt_context_set_aipp(omrt_context *ctx, int input, const omrt_aipp *cfg);
OMRT_API omrt_status omrt_context_set_aipp_images(omrt_context *ctx, int input, const omrt_aipp *cfgs,
                                                  int ncfgs);

/* Runs the context's gear once. inputs[i] points to the gear's input i
 * bytes (omrt_model_gear_input; omrt_model_input's bytes are enough for
 * every gear; NULL for a dynamic AIPP parameters input that
 * omrt_context_set_aipp set), outputs[i] to its output i bytes of writable memory, where
 * the gear's outputs are written in C order from the start; the buffers
 * belong to the caller and are only used during the call. Allocates
 * nothing. OMRT_ERR_ARG, naming the task and the index, when indices
 * computed from the inputs (Gather, GatherElements, GatherND,
 * ScatterElements, ScatterND) fall outside their axis, as ONNX makes that an
 * error; the outputs are then unspecified. OMRT_ERR_ARG, before any task
 * runs, when dynamic AIPP parameters break a rule (omrt_aipp_pack's). */
OMRT_API omrt_status omrt_execute(omrt_context *ctx, const void *const *inputs, void *const *outputs);
/* Output `index` as the last omrt_execute on ctx wrote it: for a counted
 * output (desc.count_axis >= 0) dims[count_axis] and bytes are the actual
 * extent (0 before the first execution), for a dense one as
 * omrt_model_output. The name is the model's. OMRT_ERR_ARG for a bad
 * index. */
OMRT_API omrt_status omrt_context_output_dims(const omrt_context *ctx, int index, omrt_tensor_desc *desc_out);
/* The same, first checking each buffer's size: input_bytes[i] and
 * output_bytes[i] must be at least the gear's (OMRT_ERR_ARG naming the
 * input or output, the gear and both sizes). */
OMRT_API omrt_status omrt_execute_sized(omrt_context *ctx, const void *const *inputs,
                                        const size_t *input_bytes, void *const *outputs,
                                        const size_t *output_bytes);

/* ---- Tasks: layer dumps, overflow reports, per-node comparison ----
 * A package built by atc 0.2 on (om format 2.2) records, per task, the ONNX
 * nodes it stands for (the nodes whose outputs it writes, and those fused
 * into it) and the ONNX tensor each output holds; older packages have no
 * such record (nnodes 0, onnx_name NULL). */

/* Stored layouts of a task tensor (omrt_task_tensor.layout). */
enum {
  OMRT_LAYOUT_ND = 0,
  OMRT_LAYOUT_NC1HWC0 = 1, /* dims NCHW, stored [N, C1, H, W, C0] */
  OMRT_LAYOUT_FRACTAL_Z = 2,
  OMRT_LAYOUT_FRACTAL_Z_G = 6,
  OMRT_LAYOUT_FRACTAL_NZ = 7,
  OMRT_LAYOUT_NDC1HWC0 = 8, /* dims NCDHW, stored [N, D, C1, H, W, C0] */
  OMRT_LAYOUT_FRACTAL_Z_3D = 9
};
enum { OMRT_TASK_MAX_OUTPUTS = 8 };

/* A tensor a task writes. Strings owned by the model. */
typedef struct omrt_task_tensor {
  const char *name;      /* the om tensor's name (the compiler's value name) */
  const char *onnx_name; /* the ONNX tensor it holds once the task ran, or NULL */
  int dtype;             /* stored dtype (OMRT_FLOAT16 under fp16 modes, ...) */
  int layout;            /* stored layout, OMRT_LAYOUT_* */
  int rank;
  int64_t dims[OMRT_MAX_RANK]; /* logical dims (NCHW for NC1HWC0) */
  const void *data;            /* in a task hook: the stored bytes, valid during the call; else NULL */
  size_t bytes;                /* stored bytes, layout padding included */
  /* A tensor the task writes through a strided view (ATTENTION's y written
   * into the out-projection's input, om format 2.7): element (i_0, ..)
   * of the logical dims lies sum i_d * strides[d] elements from data. All
   * 0: stored in its layout's own order. */
  int64_t strides[OMRT_MAX_RANK];
} omrt_task_tensor;

typedef struct omrt_task_info {
  int index;        /* 0 .. omrt_model_num_tasks-1, execution order */
  int gear;         /* the gear whose task list holds it (its tasks are contiguous) */
  const char *name; /* the compiler's node name; owned by the model */
  const char *kind; /* "CONV2D", ... */
  int nnodes;       /* ONNX nodes it stands for (omrt_model_task_node) */
  int noutputs;     /* tensors it writes, in slot order */
  omrt_task_tensor outputs[OMRT_TASK_MAX_OUTPUTS];
} omrt_task_info;

OMRT_API int omrt_model_num_tasks(const omrt_model *model);
/* Task `task` as stored (outputs[].data NULL). OMRT_ERR_ARG out of range. */
OMRT_API omrt_status omrt_model_task(const omrt_model *model, int task, omrt_task_info *info_out);
/* The i-th ONNX node name of task `task` (graph order), NULL out of range. */
OMRT_API const char *omrt_model_task_node(const omrt_model *model, int task, int i);

/* Converts a task tensor's stored data (t->data) to C-order float32 in its
 * logical dims (NCHW for NC1HWC0, a strided view's through its strides:
 * what the ONNX tensor holds); dst has room
 * for `count` floats, the product of t->dims. Integer and bool dtypes
 * convert by value. OMRT_ERR_UNSUPPORTED for the weight layouts (FRACTAL_Z,
 * FRACTAL_Z_G: packed weights, no ONNX tensor); OMRT_ERR_ARG for a NULL
 * data or a count that does not match. */
OMRT_API omrt_status omrt_task_tensor_to_f32(const omrt_task_tensor *t, float *dst, size_t count);

/* Called by omrt_execute after each task, on the thread calling execute,
 * before the next task starts; info->outputs[].data point at what the task
 * wrote. Return 0 to go on; anything else stops the run, and omrt_execute
 * returns OMRT_ERR_STOPPED. The hook must not call omrt_execute on ctx. */
typedef int (*omrt_task_hook)(void *user, const omrt_task_info *info);
/* Sets (hook NULL: clears) ctx's task hook. user is passed through. */
OMRT_API omrt_status omrt_context_set_task_hook(omrt_context *ctx, omrt_task_hook hook, void *user);
/* Sets (hook NULL: clears) ctx's task start hook: called by omrt_execute
 * before each task, on the calling thread, once the task's tensors are
 * resolved (info->outputs[].data: where it will write; the inputs through
 * omrt_context_task_input hold what the task will read). Return 0 to go on;
 * anything else stops the run before the task (OMRT_ERR_STOPPED). The hook
 * must not call omrt_execute on ctx. Nothing is called when no hook is set. */
OMRT_API omrt_status omrt_context_set_task_start_hook(omrt_context *ctx, omrt_task_hook hook, void *user);
/* Inside a task hook or start hook of ctx: input `index` of the running
 * task (0, 1, ...: the tensors it reads and does not write, in slot order:
 * activations, weights, model inputs), data pointing at its stored bytes
 * (valid during the hook call; in the hook after the task, a tensor the
 * task wrote in place already holds the result). OMRT_ERR_ARG past the last
 * input or outside a hook. */
OMRT_API omrt_status omrt_context_task_input(const omrt_context *ctx, int index,
                                             omrt_task_tensor *tensor_out);

/* "MAJOR.MINOR.PATCH" of the libomrt actually linked or loaded; compare it
 * with the OMRT_VERSION_* the application was built against. */
OMRT_API const char *omrt_version(void);

/* The message of the last failed call on this thread ("" if none). */
OMRT_API const char *omrt_last_error(void);
OMRT_API const char *omrt_status_string(omrt_status status);

#ifdef __cplusplus
}
#endif

#endif
