/* om_format.h - the om package on disk: the one contract between the
 * compiler's backend (backend/om_write.c) and the runtime's loader
 * (runtime/om_load.c). docs/om-format.md is the prose version of this file.
 *
 * File = header (64 bytes) + partition table (npartitions x 32 bytes), then
 * partitions, each starting at a multiple of OM_ALIGN (64) bytes, in any
 * order. All integers little-endian, all records naturally aligned so the
 * runtime reads them in place from the mapped file. Every offset, size, count
 * and index is checked (overflow-safe) by the loader before any use.
 *
 * Partitions (each type at most once; MODEL, TENSORS, TASKS, WEIGHTS and
 * STRINGS required):
 *   MODEL    om_model_def, then uint32 io[ninputs + noutputs]: tensor indices
 *            of the model inputs, then of the outputs.
 *   TENSORS  om_tensor[ntensors]
 *   TASKS    om_task[ntasks], in execution order
 *   WEIGHTS  raw bytes; tensors in region WEIGHTS point into it (offsets
 *            64-byte aligned), already in their layout and dtype
 *   STRINGS  NUL-terminated UTF-8 strings; a "string" field is a byte offset
 *            into this partition; offset 0 is the empty string; the partition
 *            ends with a NUL.
 *   VPROGS   (optional; required when a task is VPROG or has an epilogue
 *            program) vector programs (common/vprog.h), each at an 8-byte
 *            aligned offset.
 *   IO       (optional, format 2.2) uint32 format[ninputs + noutputs]: the
 *            om_io_format of each model input, then output. Absent: all ND.
 *   GEARS    (optional, format 2.2) the model's shape gears (om_gears
 *            below): several task lists over one set of weights, one of
 *            which runs per execution. Absent: one gear, the whole TASKS
 *            and TENSORS partitions with MODEL's io[].
 *   SOURCES  (optional, format 2.2) what each task stands for in the source
 *            model: om_sources, om_task_source[ntasks], uint32 names[]
 *            (below), one record per task of the whole TASKS partition
 *            (every gear's tasks). Nothing a task computes depends on it;
 *            layer dumps, overflow reports and omcompare read it.
 *   COUNTS   (optional, format 2.4) om_count[noutputs]: which outputs are
 *            counted (an extent known only after execution) and where
 *            their count lives (below). Absent: every output is dense.
 *   ZMAP     (optional, format 2.5) the WEIGHTS partition is stored without
 *            its all-zero 16-byte chunks (the padding of fractal layouts,
 *            the off-diagonal blocks of grouped weights): om_zmap, then a
 *            bitmap of the chunks that are stored (below). Absent: WEIGHTS
 *            is stored as is.
 *   ONODES   (optional, format 2.16) om_onode[noutputs]: the source model's
 *            node that computes each output and which of its outputs it is
 *            (below), for AscendCL's output names. Absent: outputs are
 *            known by their tensor names only.
 *
 * Checksums: header_crc covers bytes [0, header_len) with header_crc taken as
 * zero; each partition's crc32c covers its `size` bytes.
 */
#ifndef COMMON_OM_FORMAT_H
#define COMMON_OM_FORMAT_H

#include <stdint.h>

#include "types.h"

#define OM_MAGIC "DVNPU-OM" /* 8 bytes, no NUL stored */
/* 2.1: MATMUL's b may be FRACTAL_NZ, and it has a bias slot, a row fold,
 * an epilogue program and operand permutations; a direct CONV2D's tile_k
 * is the K chunk of libomrt's kernels, with guarantees relaxed to a
 * chunk's 16-pixel rows and one n block (a 2.0 runtime refuses 2.1 tiles
 * beyond its bounds).
 * 2.2 added the IO, GEARS and SOURCES partitions (a 2.1 runtime refuses a
 * package that has them as an unknown partition type and reads the others),
 * the CONV3D task and the NDC1HWC0 and FRACTAL_Z_3D layouts (refused by a
 * 2.1 runtime as an unknown kind or layout).
 * 2.3 added the AIPP and QCONV2D tasks (int8 convolution) and u8/i8
 * TRANSDATA (a 2.2 runtime refuses them as an unknown kind and a dtype it
 * does not convert).
 * 2.4 added the RECURRENCE, NONZERO, NMS, UNIQUE and TFIDF tasks, TOPK's run-time k, the
 * COUNTS partition, the storage dtypes (bf16, float8, float4, int4/int2:
 * common/types.h) and TRANSDATA's saturate and round_mode (a 2.3 runtime
 * refuses them as unknown kinds, partitions, dtypes and params).
 * 2.5 added the ZMAP partition (a 2.4 runtime refuses it as an unknown
 * partition type), TOPK and NMS over inputs counted along their axis (a
 * sixth and a seventh tensor, the inputs' count; a 2.4 runtime refuses them
 * as tensor counts it does not take), COPY_SLICE of any one dtype (a 2.4
 * runtime refuses dtypes other than f16 and f32) and Winograd CONV2D with
 * dilation (a 2.4 runtime refuses the dilation), and the UNIQUE and TFIDF
 * tasks, the QELTWISE task (int8 elementwise: a QDQ model's residual Add)
 * and WPACK into FRACTAL_Z_3D (refused as unknown kinds and layouts).
 * 2.6 added GATHER's fourth tensor, the count of counted indices.
 * 2.7 added ATTENTION's operand views (params 7..23; a 2.6 runtime refuses
 * them as unused params that are not 0).
 * 2.8 added QCONV2D's residual epilogue: a sixth tensor and the params of
 * an int8 Add or Mul (a 2.7 runtime refuses the tensor count).
 * 2.9 added the QLUT task (an int8 -> int8 elementwise function as a
 * 256-entry table; a 2.8 runtime refuses it as an unknown kind).
 * 2.10 added MATMUL's act 3..5: gelu, gelu_tanh and silu (a 2.9 runtime
 * refuses them as an unknown act).
 * 2.11 added QCONV2D on NHWC (ND) x, y and r (a 2.10 runtime refuses the
 * layout).
 * 2.12 added the QMATMUL task (an int8 matrix product with a run-time x
 * zero point and a float epilogue: dynamically quantized models; a 2.11
 * runtime refuses it as an unknown kind).
 * 2.13 gave AIPP's params one record per image (dynamic AIPP with
 * per-image crop, padding and normalisation; a 2.12 runtime refuses the
 * params size) and added the DYNQUANT task (DynamicQuantizeLinear as one
 * task; a 2.12 runtime refuses it as an unknown kind), and QCONV2D's f32 y (the sums' float value, acc *
 * mult[co]: an int8 convolution whose consumer is float; a 2.12 runtime
 * refuses the dtype).
 * 2.14 added QMATMUL with a run-time w (the int8 product of two
 * activations, both zero points, batches, operand permutations, and an
 * i32, f32 or requantized u8 / i8 y; a 2.13 runtime refuses the absent
 * colsum).
 * 2.15 added QCONV2D with a run-time x zero point (a 2.14 runtime refuses
 * the tensor count).
 * 2.16 added the ONODES partition (a 2.15 runtime refuses it as an unknown
 * partition type). */
enum { OM_VERSION_MAJOR = 2, OM_VERSION_MINOR = 17 };
enum { OM_ALIGN = 64 };
enum { OM_NONE = 0xFFFFFFFFu }; /* "no tensor" in om_task.tensors */
/* The largest workspace libomrt accepts (om_model_def.workspace_bytes); atc
 * refuses to emit more. */
#define OM_MAX_WORKSPACE_BYTES ((uint64_t)1 << 40)

typedef struct om_header { /* 64 bytes at offset 0 */
  char magic[8];
  uint16_t major, minor;
  uint32_t header_len;  /* bytes: 64 + npartitions * 32 */
  uint64_t file_len;    /* bytes of the whole file */
  uint32_t npartitions; /* 1..16 */
  uint32_t header_crc;
  uint8_t reserved[32]; /* zero */
} om_header;

typedef enum om_partition_type {
  OM_PART_MODEL = 1,
  OM_PART_TENSORS = 2,
  OM_PART_TASKS = 3,
  OM_PART_WEIGHTS = 4,
  OM_PART_STRINGS = 5,
  OM_PART_VPROGS = 6,
  OM_PART_IO = 7,
  OM_PART_GEARS = 8,
  OM_PART_SOURCES = 9,
  OM_PART_COUNTS = 10,
  OM_PART_ZMAP = 11,
  OM_PART_ONODES = 12,
  OM_PART_TYPE_COUNT /* one past the largest type */
} om_partition_type;

typedef struct om_partition { /* 32 bytes */
  uint32_t type;
  uint32_t reserved;
  uint64_t offset; /* bytes from file start; multiple of OM_ALIGN */
  uint64_t size;   /* bytes */
  uint32_t crc32c;
  uint32_t reserved2;
} om_partition;

typedef enum om_precision {
  OM_PRECISION_FORCE_FP16 = 0,             /* activations + weights fp16, cube accumulates fp32 */
  OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE = 1, /* everything stays fp32 */
  OM_PRECISION_ALLOW_FP32_TO_FP16 = 2,
  OM_PRECISION_ALLOW_MIX_PRECISION = 3,
} om_precision;

typedef struct om_model_def { /* 96 bytes */
  uint32_t name;              /* string: model name (the --output base name) */
  uint32_t soc;               /* string: e.g. "Ascend310" */
  uint32_t atc_version;       /* string */
  uint32_t cmdline;           /* string: the atc command line that built it */
  uint32_t precision;         /* om_precision */
  uint32_t ai_cores;          /* of the SoC; runtime threads = min(this, host cores) by default */
  uint32_t ninputs, noutputs;
  uint32_t ntensors, ntasks;
  uint64_t workspace_bytes; /* one arena; every WORKSPACE tensor fits inside */
  /* per-AI-core buffer capacities from the SoC file, bytes: the executor gives
   * each worker scratch of these sizes (L0A and L0B OM_L0_STAGING times
   * them, below) and kernels stay inside them. */
  uint32_t l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, ub_bytes;
  uint32_t singleop; /* string: atc --singleop's record of the op (docs/om-format.md); "" for a model */
  uint32_t reserved[6];
} om_model_def;

/* The software NPU stages the cube's operands as f32 whatever their stored
 * dtype: fp16 products are exact in f32, so this is the chip's fp16 x fp16
 * -> fp32 arithmetic. A core's L0A and L0B therefore hold OM_L0_STAGING
 * times the SoC's bytes (what the chip holds as fp16, as f32): libomrt's
 * executor allocates that much, and the tiling (passes/tiling.c) and the
 * loader's checks count staged f32 values against it. L1, L0C and UB are
 * the SoC's bytes. */
enum { OM_L0_STAGING = 2 }; /* staged bytes per SoC byte of L0A and L0B */

typedef enum om_region {
  OM_REGION_WEIGHTS = 0,   /* offset into the WEIGHTS partition (read-only) */
  OM_REGION_WORKSPACE = 1, /* offset into the context's workspace */
  OM_REGION_INPUT = 2,     /* the caller's input buffer number `index`, offset 0 */
  OM_REGION_OUTPUT = 3,    /* the caller's output buffer number `index`, offset 0 */
} om_region;

typedef struct om_tensor { /* 104 bytes */
  uint32_t name;           /* string */
  uint32_t region;         /* om_region */
  uint32_t index;          /* I/O number for INPUT/OUTPUT regions, else 0 */
  uint32_t dtype;          /* dtype (types.h) */
  uint32_t layout;         /* layout (types.h) */
  uint32_t rank;           /* 0..MAX_RANK; NC1HWC0 and FRACTAL_Z need 4 */
  uint64_t offset;         /* bytes from the region base */
  uint64_t bytes;          /* = layout_elements(layout, rank, dims) * dtype_size(dtype) */
  int64_t dims[MAX_RANK];  /* logical dims (NCHW for NC1HWC0, [Cout,Cin,KH,KW] for FRACTAL_Z); unused = 0 */
} om_tensor;

/* IO partition: how the caller's bytes of each model input and output are
 * laid out. ND, NCHW and NHWC are all plain C order over the tensor's dims
 * (NCHW and NHWC name what the dims mean, from atc's --input_format: an
 * image's H and W, for --dynamic_image_size and AIPP); NC1HWC0 is the
 * chip's 5-D layout of a rank-4 tensor ([N][C1][H][W][16], fp16; atc's
 * --is_input_adjust_hw_layout / --is_output_adjust_hw_layout), and its
 * om_tensor has layout NC1HWC0. */
typedef enum om_io_format {
  OM_IO_ND = 0,
  OM_IO_NCHW = 1,
  OM_IO_NHWC = 2,
  OM_IO_NC1HWC0 = 3,
  OM_IO_FORMAT_COUNT
} om_io_format;

/* COUNTS partition: one record per model output, in output order. A
 * counted output (NonZero's positions, ...) is stored at its compile-time
 * bound, dims[axis] of its om_tensor; after each execution only the first
 * count entries along `axis` are valid, count being the int64 that the
 * task writing it stores into tensor `count` (an ND i64 [1] WORKSPACE
 * tensor of the model, which no later task overwrites). The runtime then
 * compacts the output in the caller's buffer into C order over the actual
 * dims (axis = count) from its start. A dense output has axis = count =
 * OM_NONE. Not with a GEARS partition. */
typedef struct om_count { /* 8 bytes */
  uint32_t axis;          /* 0..rank-1 of the output, or OM_NONE */
  uint32_t count;         /* tensor index, or OM_NONE */
} om_count;

/* ONODES partition: one record per model output, in output order: the
 * source model's node that computes it (its name; 0 when the output is no
 * node's, a graph input or an initializer) and the output's position among
 * that node's outputs (edge). PICKED: the output was chosen by node and
 * position (atc --out_nodes), not named by the source model's graph. */
enum { OM_ONODE_PICKED = 1 };
typedef struct om_onode { /* 16 bytes */
  uint32_t node;          /* string, or 0 */
  uint32_t edge;          /* 0 when node is 0 */
  uint32_t flags;         /* OM_ONODE_* */
  uint32_t reserved;      /* zero */
} om_onode;

/* ZMAP partition: om_zmap, then uint8 stored[ceil(logical_bytes / 16 / 8)].
 * The weights the tensors of region WEIGHTS address (their offsets and the
 * bound of offset + bytes) are the logical_bytes of the decoded image: chunk
 * i is its bytes [16i, 16i + 16). Bit i of the bitmap (byte i / 8, bit i % 8,
 * least significant first) is 1 when chunk i is stored, 0 when it is all
 * zero; the WEIGHTS partition holds the stored chunks in order, so its size is
 * 16 x the number of set bits, and bits past the last chunk are 0. The loader
 * decodes the image into memory of its own (or the caller's weight memory)
 * once, at load: the package stays smaller on disk, and execution reads the
 * decoded image exactly as it reads an unzipped WEIGHTS partition. */
enum { OM_ZMAP_CHUNK = 16 }; /* bytes per chunk */
typedef struct om_zmap {     /* 16 bytes */
  uint64_t logical_bytes;    /* of the decoded image; a multiple of OM_ZMAP_CHUNK */
  uint32_t chunk_bytes;      /* OM_ZMAP_CHUNK */
  uint32_t reserved;         /* zero */
} om_zmap;

/* GEARS partition: om_gears, then om_gear[ngears], then uint32
 * io[ngears][ninputs + noutputs] (each gear's input then output tensor
 * indices, as MODEL's io[]). A gear is the model compiled for one value of
 * its dynamic dims (atc --dynamic_batch_size, --dynamic_image_size,
 * --dynamic_dims): its own task list and tensor descriptors, over the one
 * WEIGHTS partition (identical weights are stored once) and the one
 * workspace (om_model_def.workspace_bytes, the largest gear's).
 * The gears partition the tensor and task tables in order: gear g's
 * first_tensor (first_task) is the sum of the ntensors (ntasks) of the
 * gears before it, and the last gear ends at ntensors (ntasks). A gear's
 * tasks name only its own tensors, and its WORKSPACE tensors lie within
 * its workspace_bytes. MODEL's io[] equals gear 0's. Every gear has the
 * model's inputs and outputs in one order, with the same names, dtypes,
 * ranks and formats; only dims (and so bytes) differ. A caller's buffer
 * holds the largest gear's bytes; the runtime runs the gear chosen on the
 * execution context. */
typedef enum om_gear_kind {
  OM_GEAR_BATCH = 1,      /* values: the batch (the first dim of every input with -1 there) */
  OM_GEAR_IMAGE_SIZE = 2, /* values: h, w (the H and W of every input with -1 there) */
  OM_GEAR_DIMS = 3,       /* values: every -1 of --input_shape, inputs in order */
} om_gear_kind;
enum { OM_MAX_GEARS = 100, OM_GEAR_MAX_VALUES = 16 };

typedef struct om_gears { /* 16 bytes */
  uint32_t kind;          /* om_gear_kind */
  uint32_t ngears;        /* 1..OM_MAX_GEARS */
  uint32_t nvalues;       /* values per gear: 1 (BATCH), 2 (IMAGE_SIZE), 1..OM_GEAR_MAX_VALUES (DIMS) */
  uint32_t reserved;      /* zero */
} om_gears;

typedef struct om_gear {              /* 160 bytes */
  uint32_t first_tensor, ntensors;    /* its tensor descriptors */
  uint32_t first_task, ntasks;        /* its tasks, in execution order */
  uint64_t workspace_bytes;           /* <= om_model_def.workspace_bytes */
  int64_t values[OM_GEAR_MAX_VALUES]; /* the gear's values (>= 1), unused = 0; no two gears equal */
  uint32_t reserved[2];               /* zero */
} om_gear;

#include "om_tasks.h" /* task kinds, their named slots and params, OM_TASK_ACCESS */

typedef struct om_task {                 /* 144 bytes */
  uint32_t kind;                         /* om_task_kind */
  uint32_t name;                         /* string: the IR node name, for messages and profiles */
  uint32_t block_dim;                    /* 1..65535 */
  uint32_t ntensors;                     /* slots used in tensors[] */
  uint32_t tensors[OM_TASK_MAX_TENSORS]; /* tensor indices or OM_NONE */
  int32_t params[OM_TASK_MAX_PARAMS];    /* unused = 0 */
} om_task;

/* SOURCES partition: om_sources, then om_task_source[ntasks], then uint32
 * names[nnames], each a string (an offset into STRINGS; 0 = none). Task i's
 * record says which source-model (ONNX) nodes it stands for and which
 * source tensor each of its slots carries:
 *   names[first .. first + nnodes)          the ONNX node names, in the
 *     source graph's order: the nodes whose outputs the task writes, and
 *     the nodes fused into it (their outputs exist in no task; each is
 *     listed with the first task that reads what it computed);
 *   names[first + nnodes + s], s < ntensors  the ONNX tensor the task's slot
 *     s holds after the task ran, for slots the task writes (0 when it holds
 *     no ONNX tensor: a layout copy, a partial write); 0 for read slots.
 * A tensor several tasks write (Concat's COPY_SLICE, one per input) holds
 * the ONNX tensor only after the last of them; every one names it. */
typedef struct om_sources { /* 8 bytes */
  uint32_t ntasks;          /* == om_model_def.ntasks */
  uint32_t nnames;          /* entries of names[] */
} om_sources;

typedef struct om_task_source { /* 8 bytes */
  uint32_t first;               /* index into names[] */
  uint32_t nnodes;              /* ONNX nodes; ntensors slot names follow them */
} om_task_source;

_Static_assert(sizeof(om_header) == 64, "om_header is 64 bytes");
_Static_assert(sizeof(om_partition) == 32, "om_partition is 32 bytes");
_Static_assert(sizeof(om_model_def) == 96, "om_model_def is 96 bytes");
_Static_assert(sizeof(om_tensor) == 104, "om_tensor is 104 bytes");
_Static_assert(sizeof(om_task) == 144, "om_task is 144 bytes");
_Static_assert(sizeof(om_gears) == 16, "om_gears is 16 bytes");
_Static_assert(sizeof(om_zmap) == 16, "om_zmap is 16 bytes");
_Static_assert(sizeof(om_count) == 8, "om_count is 8 bytes");
_Static_assert(sizeof(om_gear) == 160, "om_gear is 160 bytes");
_Static_assert(sizeof(om_aipp_params) == OM_AIPP_PARAMS_BYTES, "om_aipp_params is 192 bytes");
/* The named slots fit the record, and the runs their neighbours leave room
 * for. (int): the constants of different enums compare as numbers. */
_Static_assert((int)OM_CONV_NPARAMS <= (int)OM_TASK_MAX_PARAMS &&
                   (int)OM_STRIDED_COPY_NPARAMS <= (int)OM_TASK_MAX_PARAMS &&
                   (int)OM_POOL_ND_NPARAMS <= (int)OM_TASK_MAX_PARAMS,
               "params fit om_task.params");
_Static_assert((int)OM_CONV_NTENSORS + 1 <= (int)OM_TASK_MAX_TENSORS, "conv slots fit om_task.tensors");
_Static_assert((int)OM_PAD_P_BEGIN + MAX_RANK == (int)OM_PAD_P_VALUE_LO &&
                   (int)OM_RESIZE_P_TAPS + MAX_RANK == (int)OM_RESIZE_P_VALUE_LO &&
                   (int)OM_STRIDED_COPY_P_DIMS + MAX_RANK == (int)OM_STRIDED_COPY_P_STRIDES &&
                   (int)OM_STRIDED_COPY_P_STRIDES + MAX_RANK == (int)OM_STRIDED_COPY_NPARAMS &&
                   (int)OM_POOL_ND_P_KERNEL + 5 * (int)OM_POOL_ND_MAX_DIMS == (int)OM_POOL_ND_NPARAMS,
               "per-dim runs of params");
_Static_assert((int)OM_POOL_P_KH == (int)OM_CONV_P_KH && (int)OM_POOL_P_KW == (int)OM_CONV_P_KW &&
                   (int)OM_POOL_P_STRIDE_H == (int)OM_CONV_P_STRIDE_H &&
                   (int)OM_POOL_P_STRIDE_W == (int)OM_CONV_P_STRIDE_W &&
                   (int)OM_POOL_P_PAD_TOP == (int)OM_CONV_P_PAD_TOP &&
                   (int)OM_POOL_P_PAD_LEFT == (int)OM_CONV_P_PAD_LEFT &&
                   (int)OM_POOL_P_PAD_BOTTOM == (int)OM_CONV_P_PAD_BOTTOM &&
                   (int)OM_POOL_P_PAD_RIGHT == (int)OM_CONV_P_PAD_RIGHT,
               "POOL's window is in CONV2D's slots (the compiler writes both alike)");

#endif
