/* atc.c - the command line: flags in, messages and exit codes out.
 *
 *   atc --model=resnet50.onnx --framework=5 --output=resnet50 \
 *       --input_shape="input:1,3,224,224" --soc_version=Ascend310
 *   atc --mode=1 --om=resnet50.om --json=resnet50.json
 *   atc --mode=3 --model=resnet50.onnx --soc_version=Ascend310   (precheck)
 *
 * Flag names follow Huawei's ATC; both --flag=value and --flag value work.
 * All the work is in the library (driver/compile.h, backend/om_write.h);
 * this file parses, prints and picks the exit code: 0 success, 1 failure,
 * 2 bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json_out.h"
#include "backend/om_write.h"
#include "driver/compile.h"
#include "driver/singleop.h"
#include "passes/precision.h"

#ifndef ATC_VERSION
#error "ATC_VERSION (the project version, CMakeLists.txt) must be defined"
#endif

enum { LOG_NULL, LOG_ERROR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

typedef struct flags {
  const char *model, *framework, *output, *input_shape, *input_format, *soc_version;
  const char *precision_mode, *op_select_implmode, *out_nodes, *log, *mode, *om, *json, *dump_graph;
  const char *check_report;
  const char *fusion_switch_file, *dynamic_batch_size, *dynamic_image_size, *dynamic_dims;
  const char *output_type, *input_fp16_nodes, *is_input_adjust_hw_layout, *is_output_adjust_hw_layout;
  const char *precision_mode_v2, *keep_dtype, *customize_dtypes, *modify_mixlist,
      *precision_calibration_input;
  const char *insert_op_conf, *enable_compress_weight, *disable_reuse_memory, *enable_small_channel;
  const char *deterministic, *is_weight_clip, *singleop;
} flags;

static const struct {
  const char *name;
  size_t offset;
  const char *help;
} flag_table[] = {
#define FLAG(n, h)                                                                                           \
  { #n, offsetof(flags, n), h }
    FLAG(model, "ONNX model file to compile"),
    FLAG(framework, "source framework; 5 = ONNX (the only one supported)"),
    FLAG(output, "output path without .om (\"resnet50\" writes resnet50.om)"),
    FLAG(input_shape, "fix input dims: \"name:1,3,224,224;name2:1,10\""),
    FLAG(input_format, "what the dims of 4-D inputs mean: NCHW (default), NHWC or ND (recorded in the om; H "
                       "and W for --dynamic_image_size)"),
    FLAG(dynamic_batch_size, "batch gears, with -1 as the first dim in --input_shape: \"1,2,4,8\" (2 to 100 "
                             "gears; one om, the gear chosen per run: omrun --dymBatch)"),
    FLAG(dynamic_image_size, "image size gears, with -1 as H and W in --input_shape: \"224,224;320,320\" "
                             "(height,width per gear; omrun --dymHW)"),
    FLAG(dynamic_dims, "dims gears, one value per -1 of --input_shape: \"32,32;64,64\" (omrun --dymDims)"),
    FLAG(soc_version, "target SoC: Ascend310, Ascend310P3, Ascend910 (socs/*.yaml)"),
    FLAG(precision_mode,
         "force_fp16 (default), allow_fp32_to_fp16, allow_mix_precision, must_keep_origin_dtype"),
    FLAG(precision_mode_v2, "the same choice in ATC's newer names: fp16 (force_fp16), origin "
                            "(must_keep_origin_dtype), mixed_float16 (allow_mix_precision); not with "
                            "--precision_mode"),
    FLAG(keep_dtype, "file of nodes kept in their original dtype (fp32) under the fp16 modes: one ONNX node "
                     "name a line, or \"OpType::Name\" for every node of an op type ('#' comments)"),
    FLAG(customize_dtypes,
         "file of nodes computed in a precision of their own, ATC's lines "
         "\"Name::InputDtype:float16,...,OutputDtype:float16\" or "
         "\"OpType::Type:InputDtype:...,OutputDtype:...\" "
         "(a dtype per input and output of the ONNX node; all float16 or all float32, the one precision a "
         "node computes in here); wins over --keep_dtype and the mixed-precision lists, a node name over an "
         "op type; float16 needs an fp16 mode"),
    FLAG(modify_mixlist,
         "JSON file editing allow_mix_precision's lists of op types: {\"black-list\": "
         "{\"to-add\": [...], \"to-remove\": [...]}, \"white-list\": {...}, \"gray-list\": "
         "{\"to-add\": [...]}}; black runs in fp32, white in fp16, gray follows its inputs; the "
         "default lists are at the end of --help"),
    FLAG(precision_calibration_input,
         "raw sample input files \"a.bin[,b.bin]\" (one per model input, as omrun reads them): under "
         "allow_mix_precision the model is compiled and run on them in fp32 and mixed, and the nodes that "
         "lose "
         "the most accuracy are kept in fp32 as well (--log=info lists them with their figures)"),
    FLAG(op_select_implmode, "high_performance (Winograd F(4x4,3x3) for eligible 3x3 convs; the default) or "
                             "high_precision (direct convolution only; the default under "
                             "must_keep_origin_dtype, which asks for the original precision)"),
    FLAG(enable_compress_weight,
         "true, false, or auto (default): store the weights without their all-zero 16-byte chunks (the "
         "padding of the cube's fractal layouts, the off-diagonal blocks of grouped convolutions); libomrt "
         "decodes them once at load. auto does it when that saves at least 2% of the weights; false keeps "
         "the weights mapped in place from the file"),
    FLAG(disable_reuse_memory,
         "0 (default): tensors whose lifetimes do not overlap share workspace memory; 1: every tensor gets "
         "memory of its own (the workspace is the sum of their sizes) and no Conv writes over its residual. "
         "The environment variable OP_NO_REUSE_MEM (\"name,OpType,...\": node names as --dump_graph shows "
         "them, or op types) does that for the outputs of the nodes it names only"),
    FLAG(enable_small_channel,
         "0 (default) or 1: ATC's optimisation of Convs over <= 4 channels (advised with a static "
         "--insert_op_conf). Accepted for ATC's scripts; here 0 and 1 compile the same om: the convolution "
         "kernels never pad such a Conv's channels to 16 (ResNet-50's 3-channel stem takes about its share "
         "of the multiply-adds)"),
    FLAG(deterministic,
         "0 (default) or 1: ATC's deterministic computation. Accepted for ATC's scripts; here 0 "
         "and 1 compile the same om: every run is deterministic (no kernel splits a sum across "
         "threads, so the same om and inputs give the same output bytes on any thread count)"),
    FLAG(is_weight_clip,
         "1 (default) or 0: under the fp16 modes a finite fp32 constant (weight, scalar) beyond fp16's range "
         "is stored as +-65504 (1), or as +-inf (0); exporters write minus infinity as fp32's lowest value "
         "(attention masks), which as fp16's -inf turns (1 - mask) * lowest into NaN where the mask is 1"),
    FLAG(out_nodes, "outputs to use instead of the graph's: \"node:0;node2:1\""),
    FLAG(output_type, "output dtype: FP32, FP16 or UINT8 for every float output, or per output "
                      "\"node:0:FP16;node2:1:UINT8\" (UINT8: a Cast, truncating and saturating)"),
    FLAG(input_fp16_nodes, "inputs the caller gives as fp16: \"name1;name2\""),
    FLAG(is_input_adjust_hw_layout,
         "per --input_fp16_nodes entry, \"true,false\": that input is fp16 NC1HWC0 "
         "(the chip's 5-D layout)"),
    FLAG(is_output_adjust_hw_layout, "per --out_nodes entry, \"true,false\": that output is fp16 NC1HWC0"),
    FLAG(insert_op_conf,
         "AIPP file: ATC's \"aipp_op { key: value ... }\" blocks, one per image input "
         "(related_input_rank); that input becomes the raw uint8 image (YUV420SP_U8, RGB888_U8, XRGB8888_U8, "
         "YUV400_U8) and the om crops, pads, colour-converts (csc_switch, matrix_r*c*) and normalises "
         "(mean_chn_i, min_chn_i, var_reci_chn_i) it; aipp_mode: dynamic with max_src_image_size takes the "
         "parameters at run time (docs/aipp.md)"),
    FLAG(fusion_switch_file,
         "file of fusion switches, one \"PassName:on|off\" a line ('#' comments), later "
         "lines win; every rule is on by default, ALL:off gives the op-by-op build (one task "
         "per ONNX op); the rules are listed at the end of --help"),
    FLAG(log, "null, error, warning (default), info (a line per phase with its time), debug"),
    FLAG(mode,
         "0 = compile ONNX to om (default), 1 = om to JSON (with --om and --json), 3 = precheck: list "
         "every unsupported node of --model and exit 1 if there is one, without compiling; 6 = print --om's "
         "summary (inputs and outputs, gears, AIPP, SoC, atc version and command line)"),
    FLAG(check_report,
         "with --mode=3 (or a failed --mode=0 compile): the JSON precheck report to write; --mode=3 "
         "writes check_result.json in $ASCEND_WORK_PATH or the current directory when it is not given"),
    FLAG(
        singleop,
        "single-operator description file (JSON, as AscendCL's: [{\"op\": \"MatMul\", \"input_desc\": "
        "[{\"format\": \"ND\", \"shape\": [3,4], \"type\": \"float16\"}, ...], \"output_desc\": [...], "
        "\"attr\": [{\"name\": \"transpose_x1\", \"type\": \"bool\", \"value\": false}]}, ...]): one op "
        "model per description in the --output directory, for aclopSetModelDir / aclopExecuteV2; with "
        "--soc_version, --precision_mode(_v2), --op_select_implmode and --log only; ops: Add, Sub, Mul, "
        "RealDiv, "
        "Div, Maximum, Minimum, Pow, Abs, Neg, Exp, Log, Sqrt, Rsqrt, Reciprocal, Relu, Sigmoid, Tanh, Cast, "
        "MatMul, BatchMatMul, GEMM, SoftmaxV2, ReduceSumD, ReduceMeanD, TransposeD, Conv2D, MaxPool, AvgPool "
        "(README: AscendCL)"),
    FLAG(om, "with --mode=1 or --mode=6: the om file to read"),
    FLAG(json, "with --mode=1: the JSON file to write"),
    FLAG(dump_graph, "directory to write the IR (text and DOT) after every pass"),
#undef FLAG
};
enum { NFLAGS = sizeof flag_table / sizeof *flag_table };

/* Huawei ATC's flags that this atc does not implement: named as such rather
 * than as unknown. */
static const char *const unsupported_flags[] = {
    "weight",
    "input_shape_range",
    "core_type",
    "aicore_num",
    "virtual_type",
    "external_weight",
    "op_name_map",
    "enable_scope_fusion_passes",
    "enable_single_stream",
    "compress_weight_conf",
    "compression_optimize_conf",
    "sparsity",
    "buffer_optimize",
    "mdl_bank_path",
    "op_precision_mode",
    "allow_hf32",
    "op_bank_path",
    "optypelist_for_implmode",
    "op_debug_level",
    "op_debug_config",
    "save_original_model",
    "dump_mode",
    "debug_dir",
    "op_compiler_cache_mode",
    "op_compiler_cache_dir",
    "display_model_info",
    "shape_generalized_build_mode",
    "host_env_os",
    "host_env_cpu",
    "status_check",
    "quant_dumpable",
    "atomic_clean_policy",
    "oo_level",
    "auto_tune_mode",
    "input_hint_shape",
    "ac_parallel_enable",
    "tiling_schedule_optimize",
    "distributed_cluster_build",
    "enable_graph_parallel",
    "cluster_config",
    "model_name",
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: atc --model=FILE.onnx --framework=5 --output=NAME --soc_version=SOC [options]\n"
          "       atc --mode=1 --om=FILE.om --json=FILE.json\n"
          "       atc --mode=6 --om=FILE.om\n"
          "       atc --mode=3 --model=FILE.onnx --soc_version=SOC [--input_shape=...]\n"
          "       atc --singleop=OPS.json --output=DIR --soc_version=SOC\n\n"
          "Compiles an ONNX model into an om package for the software Da Vinci NPU (run it with omrun).\n"
          "Flags are --name=value or --name value; as in ATC, -name and dashes for underscores\n"
          "(--soc-version) work too.\n\n");
  for (int i = 0; i < NFLAGS; i++)
    fprintf(out, "  --%-16s %s\n", flag_table[i].name, flag_table[i].help);
  fprintf(out, "  --%-16s %s\n", "help", "this text");
  fprintf(out, "  --%-16s %s\n", "version", "print \"atc VERSION\" (the version every om it writes records)");
  fprintf(out, "\nATC flags this atc does not implement (refused by name):");
  for (size_t i = 0; i < sizeof unsupported_flags / sizeof *unsupported_flags; i++)
    fprintf(out, "%s--%s", i % 5 ? ", " : "\n  ", unsupported_flags[i]);
  fprintf(out, "\n\nFusion rules (--fusion_switch_file; each merges several ONNX ops into one task):\n");
  const char *what;
  for (int i = 0; atc_fusion_rule(i, &what); i++)
    fprintf(out, "  %-26s %s\n", atc_fusion_rule(i, NULL), what);
  for (int l = PREC_LIST_BLACK; l <= PREC_LIST_WHITE; l++) {
    fprintf(out, "\nallow_mix_precision's %s list (--modify_mixlist; %s; other op types are gray):",
            l == PREC_LIST_BLACK ? "black" : "white", l == PREC_LIST_BLACK ? "kept in fp32" : "fp16");
    prec_list pl;
    const char *t;
    for (int i = 0, k = 0; (t = precision_default_entry(i, &pl)); i++)
      if ((int)pl == l) fprintf(out, "%s%s", !k ? "\n  " : k % 8 ? ", " : ",\n  ", t), k++;
  }
  fprintf(
      out,
      "\n(LayerNorm and FusedAttention compute in f32 whatever the list; only their stored I/O is fp16.)\n"
      "A rule adds a Resize writing a graph output (upsampling of logits). Then atc measures (on\n"
      "--precision_calibration_input, or a random sample for float inputs) and, when the outputs miss\n"
      "cosine 0.9995 against fp32, keeps in fp32 the nodes that lose the most, or the shortest prefix of\n"
      "the graph that reaches it.\n");
  fprintf(out, "\natc %s\n", ATC_VERSION);
}

/* ATC's spellings of a flag name: a '-' anywhere in it is the '_' of the
 * table's name (--soc-version is --soc_version). */
static int flag_is(const char *table_name, const char *name, size_t len) {
  if (strlen(table_name) != len) return 0;
  for (size_t i = 0; i < len; i++)
    if (table_name[i] != (name[i] == '-' ? '_' : name[i])) return 0;
  return 1;
}

/* The flag name of argv word ARG, or NULL if it is not a flag: ATC takes
 * both --name and -name. */
static const char *flag_name(const char *arg) {
  if (arg[0] != '-' || !arg[1] || arg[1] == '=') return NULL;
  return arg + (arg[1] == '-' ? 2 : 1);
}

/* Returns 0, or 2 after printing what is wrong. */
static int parse_flags(int argc, char **argv, flags *f) {
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *name = flag_name(arg);
    if (!name) {
      fprintf(stderr, "atc: unexpected argument '%s' (flags start with --; see atc --help)\n", arg);
      return 2;
    }
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int k = 0;
    while (k < NFLAGS && !flag_is(flag_table[k].name, name, len))
      k++;
    if (k == NFLAGS) {
      int known = 0;
      for (size_t u = 0; u < sizeof unsupported_flags / sizeof *unsupported_flags && !known; u++)
        known = flag_is(unsupported_flags[u], name, len);
      if (known)
        fprintf(stderr, "atc: --%.*s is an ATC flag not supported by this atc (see atc --help)\n", (int)len,
                name);
      else
        fprintf(stderr, "atc: unknown flag '--%.*s' (see atc --help)\n", (int)len, name);
      return 2;
    }
    const char *value = eq ? eq + 1 : NULL;
    if (!value) {
      if (i + 1 >= argc) {
        fprintf(stderr, "atc: --%s needs a value\n", flag_table[k].name);
        return 2;
      }
      value = argv[++i];
    }
    *(const char **)((char *)f + flag_table[k].offset) = value;
  }
  return 0;
}

typedef struct log_state {
  int level;
  double total_ms;
  FILE *report; /* --check_report's file while the compile runs, or NULL */
  int nreported;
} log_state;

/* A 0 | 1 flag's value (0 when the flag is not given), or -1 after the usage
 * error. */
static int flag_01(const char *name, const char *value) {
  if (!value || !strcmp(value, "0")) return 0;
  if (!strcmp(value, "1")) return 1;
  fprintf(stderr, "atc: --%s=%s: expected 0 or 1\n", name, value);
  return -1;
}

/* Reads --fusion_switch_file: lines "PassName:on|off" (a rule of
 * atc_fusion_rule, or ALL for every one; later lines override earlier ones),
 * blanks and '#' comments. Returns 0 with *off_out holding the bits of the
 * rules turned off, or 2 after naming the file, line and problem. */
static int read_fusion_switches(const char *path, unsigned *off_out) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "atc: --fusion_switch_file=%s: cannot open it\n", path);
    return 2;
  }
  char line[512];
  int rc = 0;
  for (int no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
    size_t n = strlen(line);
    if (n == sizeof line - 1 && line[n - 1] != '\n' && !feof(f)) {
      fprintf(stderr, "atc: %s:%d: line longer than %d characters\n", path, no, (int)sizeof line - 2);
      rc = 2;
      break;
    }
    char *s = line, *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    while (*s == ' ' || *s == '\t')
      s++;
    char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
      *--end = '\0';
    if (!*s) continue;
    char *colon = strchr(s, ':');
    if (!colon) {
      fprintf(stderr, "atc: %s:%d: expected \"PassName:on\" or \"PassName:off\", got '%s'\n", path, no, s);
      rc = 2;
      break;
    }
    char *name = s, *value = colon + 1, *ne = colon;
    while (ne > name && (ne[-1] == ' ' || ne[-1] == '\t'))
      ne--;
    *ne = '\0';
    while (*value == ' ' || *value == '\t')
      value++;
    int on = strcmp(value, "on") == 0;
    if (!on && strcmp(value, "off") != 0) {
      fprintf(stderr, "atc: %s:%d: %s: switch '%s' is not on or off\n", path, no, name, value);
      rc = 2;
    } else if (atc_fusion_rule_bit(name)) {
      unsigned bit = atc_fusion_rule_bit(name);
      *off_out = on ? *off_out & ~bit : *off_out | bit;
    } else {
      fprintf(stderr, "atc: %s:%d: unknown fusion pass '%s' (known: ALL", path, no, name);
      for (int i = 0; atc_fusion_rule(i, NULL); i++)
        fprintf(stderr, ", %s", atc_fusion_rule(i, NULL));
      fprintf(stderr, ")\n");
      rc = 2;
    }
  }
  if (rc == 0 && ferror(f)) {
    fprintf(stderr, "atc: --fusion_switch_file=%s: read error\n", path);
    rc = 2;
  }
  fclose(f);
  return rc;
}

/* --mode=3: one line per node the compiler does not support, and an entry of
 * the report's "unsupported" list. */
static void on_unsupported(void *user, const char *msg) {
  log_state *ls = user;
  printf("atc: precheck: %s\n", msg);
  if (ls->report) {
    fputs(ls->nreported++ ? ",\n    " : "\n    ", ls->report);
    json_str(ls->report, msg);
  }
}

/* The precheck report (--check_report): opens it and writes its head. The
 * file is JSON: model, soc_version, result ("success" or "failed"), nodes
 * (on success), unsupported (one message per node, "node 'NAME' (OP): why")
 * and error (the reason a failed compile stopped). Returns 0, or 1 after
 * printing why the file cannot be written. */
static int report_open(log_state *ls, const char *path, const char *model, const char *soc) {
  if (!(ls->report = fopen(path, "w"))) {
    fprintf(stderr, "atc: --check_report=%s: cannot write it: %s\n", path, strerror(errno));
    return 1;
  }
  fputs("{\n  \"model\": ", ls->report);
  json_str(ls->report, model);
  fputs(",\n  \"soc_version\": ", ls->report);
  json_str(ls->report, soc);
  fputs(",\n  \"unsupported\": [", ls->report);
  return 0;
}

/* Writes the report's tail: the result, and the node count or the error. */
static int report_close(log_state *ls, const char *path, int ok, int nodes, const char *error) {
  FILE *r = ls->report;
  ls->report = NULL;
  fprintf(r, "%s],\n  \"result\": \"%s\"", ls->nreported ? "\n  " : "", ok ? "success" : "failed");
  if (ok) fprintf(r, ",\n  \"nodes\": %d", nodes);
  if (!ok && error) {
    fputs(",\n  \"error\": ", r);
    json_str(r, error);
  }
  fputs("\n}\n", r);
  if (ferror(r) | fclose(r)) {
    fprintf(stderr, "atc: --check_report=%s: write error\n", path);
    return 1;
  }
  return 0;
}

static void on_phase(void *user, const char *phase, double ms) {
  log_state *ls = user;
  ls->total_ms += ms;
  if (ls->level >= LOG_INFO) fprintf(stderr, "[INFO] atc: %-12s %8.1f ms\n", phase, ms);
}

static void on_note(void *user, const char *msg) {
  log_state *ls = user;
  if (ls->level >= LOG_INFO) fprintf(stderr, "[INFO] atc: %s\n", msg);
}

/* 1 when --output cannot name a package: empty, ending in '/' (or "/." or
 * "/.."), or an existing directory (with or without the .om atc adds). */
static int names_directory(const char *output, const char *out_path) {
  size_t n = strlen(output);
  const char *base = strrchr(output, '/');
  base = base ? base + 1 : output;
  struct stat st;
  return n == 0 || output[n - 1] == '/' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
         (stat(output, &st) == 0 && S_ISDIR(st.st_mode)) || (stat(out_path, &st) == 0 && S_ISDIR(st.st_mode));
}

/* The command line as one string, for the om's record of how it was built. */
static char *join_args(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++)
    n += strlen(argv[i]) + 1;
  char *s = malloc(n), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < argc; i++)
    p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
  *p = '\0';
  return s;
}

static int run_json(const flags *f) {
  if (!f->om || !f->json) {
    fprintf(stderr, "atc: --mode=1 needs --om=FILE.om and --json=FILE.json\n");
    return 2;
  }
  diag d;
  diag_init(&d);
  if (om_dump_json(f->om, f->json, &d) != ST_OK) {
    fprintf(stderr, "atc: %s\n", d.msg);
    return 1;
  }
  printf("atc: wrote %s\n", f->json);
  return 0;
}

static int run_summary(const flags *f) {
  if (!f->om) {
    fprintf(stderr, "atc: --mode=6 needs --om=FILE.om\n");
    return 2;
  }
  diag d;
  diag_init(&d);
  char *text = NULL;
  if (om_summary(f->om, &text, &d) != ST_OK) {
    fprintf(stderr, "atc: %s\n", d.msg);
    return 1;
  }
  fputs(text, stdout);
  free(text);
  return 0;
}

static void on_singleop_written(void *user, const char *path, const atc_result *res) {
  const log_state *ls = user;
  if (ls->level >= LOG_WARNING) printf("atc: wrote %s: %d tasks\n", path, res->ntasks);
}

/* --singleop: every description of the file into the --output directory
 * (made when missing). */
static int run_singleop(const flags *f, int precision, int high_performance, int argc, char **argv,
                        log_state *ls) {
  struct stat st;
  if (stat(f->output, &st) != 0 && mkdir(f->output, 0777) != 0) {
    fprintf(stderr, "atc: --output=%s: cannot create the directory: %s\n", f->output, strerror(errno));
    return 1;
  }
  if (stat(f->output, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "atc: --output=%s: with --singleop, --output is the directory of the op models\n",
            f->output);
    return 2;
  }
  char *cmdline = join_args(argc, argv);
  if (!cmdline) {
    fprintf(stderr, "atc: out of memory\n");
    return 1;
  }
  atc_options opt = {.soc_version = f->soc_version,
                     .precision = (om_precision)precision,
                     .high_performance = high_performance,
                     .cmdline = cmdline,
                     .on_phase = on_phase,
                     .on_note = on_note,
                     .user = ls};
  diag d;
  diag_init(&d);
  int rc = atc_singleop(f->singleop, f->output, &opt, on_singleop_written, ls, &d) == ST_OK ? 0 : 1;
  if (rc) fprintf(stderr, "atc: error: %s\n", d.msg);
  free(cmdline);
  return rc;
}

int main(int argc, char **argv) {
  /* Past `ulimit -f`, a write fails with EFBIG and the package writer cleans
   * up and says so, instead of the process dying with a half-written file. */
  signal(SIGXFSZ, SIG_IGN);
  for (int i = 1; i < argc; i++)
    if (flag_name(argv[i]) &&
        (strcmp(flag_name(argv[i]), "help") == 0 || strcmp(flag_name(argv[i]), "h") == 0)) {
      usage(stdout);
      return 0;
    } else if (flag_name(argv[i]) && strcmp(flag_name(argv[i]), "version") == 0) {
      printf("atc %s\n", ATC_VERSION);
      return 0;
    }
  if (argc == 1) {
    usage(stderr);
    return 2;
  }
  flags f = {0};
  if (parse_flags(argc, argv, &f)) return 2;

  log_state ls = {.level = LOG_WARNING};
  if (f.log) {
    static const char *levels[] = {"null", "error", "warning", "info", "debug"};
    ls.level = -1;
    for (int i = 0; i < 5; i++)
      if (strcmp(f.log, levels[i]) == 0) ls.level = i;
    if (ls.level < 0) {
      fprintf(stderr, "atc: --log=%s: expected null, error, warning, info or debug\n", f.log);
      return 2;
    }
  }
  int precheck = f.mode && strcmp(f.mode, "3") == 0;
  if (f.mode && strcmp(f.mode, "0") != 0 && !precheck) {
    if (strcmp(f.mode, "1") == 0) return run_json(&f);
    if (strcmp(f.mode, "6") == 0) return run_summary(&f);
    fprintf(stderr,
            "atc: --mode=%s is not supported (0 = compile, 1 = om to JSON, 3 = precheck, 6 = om summary)\n",
            f.mode);
    return 2;
  }
  if (precheck && (!f.model || !f.soc_version)) {
    fprintf(stderr, "atc: --mode=3 needs --model and --soc_version (see atc --help)\n");
    return 2;
  }
  if (f.singleop) {
    static const char *const with[] = {
        "singleop",           "output", "soc_version", "precision_mode", "precision_mode_v2",
        "op_select_implmode", "log"};
    for (int k = 0; k < NFLAGS; k++) {
      int ok = 0;
      for (size_t w = 0; w < sizeof with / sizeof *with; w++)
        ok |= !strcmp(flag_table[k].name, with[w]);
      if (!ok && *(const char **)((char *)&f + flag_table[k].offset)) {
        fprintf(stderr,
                "atc: --%s is not taken with --singleop (only --output, --soc_version, --precision_mode, "
                "--precision_mode_v2, --op_select_implmode and --log)\n",
                flag_table[k].name);
        return 2;
      }
    }
    if (!f.output || !f.soc_version) {
      fprintf(stderr, "atc: --singleop needs --output=DIR and --soc_version (see atc --help)\n");
      return 2;
    }
  } else if (!precheck && (!f.model || !f.output || !f.soc_version)) {
    fprintf(stderr, "atc: --model, --output and --soc_version are required (see atc --help)\n");
    return 2;
  }
  if (f.framework && strcmp(f.framework, "5") != 0) {
    fprintf(stderr, "atc: --framework=%s is not supported; only 5 (ONNX)\n", f.framework);
    return 2;
  }
  if (f.input_format && strcmp(f.input_format, "NCHW") != 0 && strcmp(f.input_format, "NHWC") != 0 &&
      strcmp(f.input_format, "ND") != 0) {
    fprintf(stderr, "atc: --input_format=%s: expected NCHW, NHWC or ND\n", f.input_format);
    return 2;
  }
  int precision = OM_PRECISION_FORCE_FP16;
  if (f.precision_mode && (precision = atc_precision_from_name(f.precision_mode)) < 0) {
    fprintf(stderr,
            "atc: --precision_mode=%s: expected force_fp16, allow_fp32_to_fp16, allow_mix_precision or "
            "must_keep_origin_dtype\n",
            f.precision_mode);
    return 2;
  }
  if (f.precision_mode_v2) {
    static const char *const v2[][2] = {{"fp16", "force_fp16"},
                                        {"origin", "must_keep_origin_dtype"},
                                        {"mixed_float16", "allow_mix_precision"}};
    if (f.precision_mode) {
      fprintf(stderr, "atc: --precision_mode_v2=%s and --precision_mode=%s: give one of the two\n",
              f.precision_mode_v2, f.precision_mode);
      return 2;
    }
    precision = -1;
    for (int i = 0; i < 3; i++)
      if (!strcmp(f.precision_mode_v2, v2[i][0])) precision = atc_precision_from_name(v2[i][1]);
    if (precision < 0) {
      int known = !strcmp(f.precision_mode_v2, "cube_fp16in_fp32out") ||
                  !strcmp(f.precision_mode_v2, "mixed_bfloat16") ||
                  !strcmp(f.precision_mode_v2, "mixed_hif8");
      fprintf(stderr, "atc: --precision_mode_v2=%s: %s; expected fp16, origin or mixed_float16\n",
              f.precision_mode_v2, known ? "an ATC mode this atc does not implement" : "unknown mode");
      return 2;
    }
  }
  if (f.modify_mixlist && precision != OM_PRECISION_ALLOW_MIX_PRECISION) {
    fprintf(stderr, "atc: --modify_mixlist edits allow_mix_precision's lists: it needs "
                    "--precision_mode=allow_mix_precision "
                    "(or --precision_mode_v2=mixed_float16)\n");
    return 2;
  }
  if (f.precision_calibration_input && precision != OM_PRECISION_ALLOW_MIX_PRECISION) {
    fprintf(stderr, "atc: --precision_calibration_input chooses nodes for allow_mix_precision: it needs "
                    "--precision_mode=allow_mix_precision (or --precision_mode_v2=mixed_float16)\n");
    return 2;
  }
  if (f.keep_dtype && precision == OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE && ls.level >= LOG_WARNING)
    fprintf(stderr,
            "[WARNING] atc: --keep_dtype has no effect under must_keep_origin_dtype (every node keeps "
            "its dtype)\n");

  /* must_keep_origin_dtype asks for the original precision: Winograd's
   * transforms about double a 3x3 convolution's f32 rounding error, so
   * there the default is the direct convolution. */
  int high_performance = precision != OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE;
  if (f.op_select_implmode) {
    high_performance = strcmp(f.op_select_implmode, "high_performance") == 0;
    if (!high_performance && strcmp(f.op_select_implmode, "high_precision") != 0) {
      fprintf(stderr, "atc: --op_select_implmode=%s: expected high_precision or high_performance\n",
              f.op_select_implmode);
      return 2;
    }
  }

  int compress_weight = 0;
  if (f.enable_compress_weight) {
    compress_weight = !strcmp(f.enable_compress_weight, "true")    ? 1
                      : !strcmp(f.enable_compress_weight, "false") ? -1
                      : !strcmp(f.enable_compress_weight, "auto")  ? 0
                                                                   : 2;
    if (compress_weight == 2) {
      fprintf(stderr, "atc: --enable_compress_weight=%s: expected true, false or auto\n",
              f.enable_compress_weight);
      return 2;
    }
  }

  if (f.is_input_adjust_hw_layout && !f.input_fp16_nodes && ls.level >= LOG_WARNING)
    fprintf(stderr, "[WARNING] atc: --is_input_adjust_hw_layout has no effect without --input_fp16_nodes\n");

  unsigned fusion_off = 0;
  if (f.fusion_switch_file && read_fusion_switches(f.fusion_switch_file, &fusion_off)) return 2;

  /* --enable_small_channel and --deterministic change nothing here (--help
   * says why): only their values are checked. */
  int no_reuse = flag_01("disable_reuse_memory", f.disable_reuse_memory);
  int weight_clip = f.is_weight_clip ? flag_01("is_weight_clip", f.is_weight_clip) : 1;
  if (no_reuse < 0 || weight_clip < 0 || flag_01("enable_small_channel", f.enable_small_channel) < 0 ||
      flag_01("deterministic", f.deterministic) < 0)
    return 2;

  if (f.singleop) return run_singleop(&f, precision, high_performance, argc, argv, &ls);

  /* --output names the package without its extension, as in ATC. */
  if (precheck) f.output = "precheck";
  size_t olen = strlen(f.output);
  char *out_path = malloc(olen + 4);
  char *cmdline = join_args(argc, argv);
  if (!out_path || !cmdline) {
    fprintf(stderr, "atc: out of memory\n");
    free(out_path);
    free(cmdline);
    return 1;
  }
  strcpy(out_path, f.output);
  if (olen < 3 || strcmp(f.output + olen - 3, ".om") != 0) strcat(out_path, ".om");
  if (!precheck && names_directory(f.output, out_path)) {
    fprintf(stderr,
            "atc: --output='%s' names a directory, not a package: give the path without .om "
            "(--output=DIR/NAME writes DIR/NAME.om); nothing written\n",
            f.output);
    free(out_path);
    free(cmdline);
    return 2;
  }

  atc_options opt = {.model_path = f.model,
                     .output_path = precheck ? NULL : out_path,
                     .input_shape = f.input_shape,
                     .input_format = f.input_format,
                     .dynamic_batch_size = f.dynamic_batch_size,
                     .dynamic_image_size = f.dynamic_image_size,
                     .dynamic_dims = f.dynamic_dims,
                     .output_type = f.output_type,
                     .input_fp16_nodes = f.input_fp16_nodes,
                     .insert_op_conf = f.insert_op_conf,
                     .is_input_adjust_hw_layout = f.is_input_adjust_hw_layout,
                     .is_output_adjust_hw_layout = f.is_output_adjust_hw_layout,
                     .soc_version = f.soc_version,
                     .precision = (om_precision)precision,
                     .high_performance = high_performance,
                     .compress_weight = compress_weight,
                     .keep_dtype = f.keep_dtype,
                     .customize_dtypes = f.customize_dtypes,
                     .no_weight_clip = !weight_clip,
                     .modify_mixlist = f.modify_mixlist,
                     .calibration_input = f.precision_calibration_input,
                     .out_nodes = f.out_nodes,
                     .fusion_off = fusion_off,
                     .no_reuse = no_reuse,
                     .no_reuse_nodes = getenv("OP_NO_REUSE_MEM"),
                     .dump_graph_dir = f.dump_graph,
                     .cmdline = cmdline,
                     .on_phase = on_phase,
                     .on_note = on_note,
                     .user = &ls,
                     .precheck = precheck,
                     .on_unsupported = on_unsupported};
  atc_result res;
  diag d;
  diag_init(&d);
  int rc = 0;
  /* ATC's default report path in a precheck: $ASCEND_WORK_PATH, else here. */
  char report_path[4096];
  const char *work = getenv("ASCEND_WORK_PATH");
  if (f.check_report)
    snprintf(report_path, sizeof report_path, "%s", f.check_report);
  else
    snprintf(report_path, sizeof report_path, "%s%scheck_result.json", work && *work ? work : "",
             work && *work ? "/" : "");
  /* A precheck's report is open while it runs (each unsupported node an
   * entry); a --mode=0 compile writes one only when it fails, so a compile
   * that succeeds leaves the file alone. */
  if (precheck && report_open(&ls, report_path, f.model, f.soc_version)) {
    free(out_path);
    free(cmdline);
    return 1;
  }
  int ok = atc_compile(&opt, &res, &d) == ST_OK, reported = 0;
  if (precheck || (!ok && f.check_report)) {
    reported = (ls.report || !report_open(&ls, report_path, f.model, f.soc_version)) &&
               !report_close(&ls, report_path, ok, res.nnodes_in, ok ? NULL : d.msg);
    if (!reported) rc = 1;
  }
  if (precheck) {
    if (!ok) {
      printf("atc: precheck failed: %s\n", d.msg);
      rc = 1;
    } else {
      printf("atc: precheck passed: %s: every one of its %d nodes is supported on %s\n", f.model,
             res.nnodes_in, f.soc_version);
    }
    if (reported) printf("atc: precheck report: %s\n", report_path);
  } else if (!ok) {
    fprintf(stderr, "atc: error: %s\n", d.msg); /* errors are printed at every --log level */
    if (reported) fprintf(stderr, "atc: precheck report: %s\n", report_path);
    rc = 1;
  } else if (ls.level >= LOG_WARNING) {
    double mib = 1024.0 * 1024.0;
    if (ls.level >= LOG_INFO) fprintf(stderr, "[INFO] atc: SoC %s from %s\n", f.soc_version, res.soc_file);
    printf("atc: wrote %s: %.2f MiB, %d tasks", out_path, res.om_bytes / mib, res.ntasks);
    if (res.ngears) printf(" in %d gears", res.ngears);
    printf(", %s, %s, %.0f ms\n", f.soc_version, atc_precision_name((om_precision)precision), ls.total_ms);
    printf("atc: memory plan: workspace %.2f MiB, liveness lower bound %.2f MiB (%.3fx)\n",
           res.workspace_bytes / mib, res.workspace_lower_bound / mib,
           res.workspace_lower_bound ? (double)res.workspace_bytes / res.workspace_lower_bound : 1.0);
  }
  free(out_path);
  free(cmdline);
  return rc;
}
