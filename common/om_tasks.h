/* om_tasks.h - the task kinds of the om package: what each computes, its
 * tensor slots and params by name, its block unit, and which slots it
 * writes. Part of the om format (om_format.h includes it where the TASKS
 * partition's om_task record needs it; include om_format.h, not this).
 * docs/om-format.md's task table is the prose version. */
#ifndef COMMON_OM_TASKS_H
#define COMMON_OM_TASKS_H

#include <stdint.h>

#include "types.h"

/* Activation applied at the end of a task (after bias and residual). */
typedef enum om_act {
  OM_ACT_NONE = 0,
  OM_ACT_RELU = 1,
  OM_ACT_CLIP = 2, /* clamp to [clip_min, clip_max] (Relu6 = CLIP 0..6) */
  /* MATMUL only (format 2.10), on the f32 sum before the cast to y's dtype,
   * common/vmath.h's functions: */
  OM_ACT_GELU = 3,      /* x/2 * (1 + erf(x / sqrt 2)): om_vgelu */
  OM_ACT_GELU_TANH = 4, /* x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): om_vgelu_tanh */
  OM_ACT_SILU = 5,      /* x * sigmoid(x): om_vsilu */
  OM_ACT_COUNT
} om_act;

/* Task kinds. Each kind's comment below says what it computes, what its
 * tensors[] slots and params[] hold, and its block unit.
 * Names: a kind's tensor slots are OM_<KIND>_T_<NAME> and its params
 * OM_<KIND>_P_<NAME> (CONV2D and DWCONV share OM_CONV_); OM_<KIND>_NTENSORS
 * is its tensor count (the fixed slots where the count varies) and
 * OM_<KIND>_NPARAMS one past its last param: params from there on are 0. A
 * name that starts a run (OM_PAD_P_BEGIN, one per dim) names its first
 * element. The prose calls a slot or param by its name in lower case
 * (tile_m is OM_CONV_P_TILE_M); the numbers are the format.
 * Floats in params are stored as their IEEE-754 bit pattern (memcpy).
 * Blocks: a task's work is `units` of the kind's block unit (stated with
 * each kind), split into block_dim blocks (1 <= block_dim <= units, or 1 for
 * empty work) as [b*units/block_dim, (b+1)*units/block_dim); AI core c of
 * `cores` runs blocks [c*block_dim/cores, (c+1)*block_dim/cores); blocks
 * never write overlapping bytes. */
typedef enum om_task_kind {
  OM_TASK_NONE = 0, /* not a kind: the compiler's "no task" (ir/ops.def) */
  OM_TASK_TRANSDATA = 1,
  OM_TASK_CONV2D = 2,
  OM_TASK_DWCONV = 3,
  OM_TASK_POOL = 4,
  /* 5 was ELTWISE (binary ops with an activation), retired: elementwise work
   * of every kind is VPROG. The number is not reused. */
  OM_TASK_COPY_SLICE = 6,
  OM_TASK_SOFTMAX = 7,
  OM_TASK_VPROG = 8,
  OM_TASK_REDUCE = 9,
  OM_TASK_STRIDED_COPY = 10,
  OM_TASK_GATHER = 11,
  OM_TASK_PAD = 12,
  OM_TASK_MATMUL = 13,
  OM_TASK_RESIZE = 14,
  OM_TASK_POOL_ND = 15,
  OM_TASK_TOPK = 16,
  OM_TASK_SCATTER = 17,
  OM_TASK_CUMSUM = 18,
  OM_TASK_ONEHOT = 19,
  OM_TASK_WPACK = 20,
  OM_TASK_LAYERNORM = 21,
  OM_TASK_ATTENTION = 22,
  OM_TASK_CONV3D = 23,
  OM_TASK_AIPP = 24,
  OM_TASK_QCONV2D = 25,
  OM_TASK_RECURRENCE = 26,
  OM_TASK_NONZERO = 27,
  OM_TASK_NMS = 28,
  OM_TASK_UNIQUE = 29,
  OM_TASK_TFIDF = 30,
  OM_TASK_QELTWISE = 31,
  OM_TASK_QLUT = 32,
  OM_TASK_KIND_COUNT /* one past the largest kind */
} om_task_kind;

enum { OM_TASK_MAX_TENSORS = 8, OM_TASK_MAX_PARAMS = 24 };

/* Tensor access, declared with each kind's slots: OM_<KIND>_WRITES are the
 * slots its tasks write (OM_SLOT(s) for tensors[s]; OM_WRITES_OUTPUTS: a
 * program's outputs, slots ninputs .. ntensors-1, the program's header
 * says ninputs); a task reads every other slot it uses. OM_<KIND>_IN_PLACE
 * are the read slots whose tensor may occupy exactly a written tensor's
 * bytes: the kernel reads each of its elements before it writes the one
 * at that place. libomrt's loader holds every task to the rule: a written
 * tensor lies in WORKSPACE or OUTPUT; written tensors overlap no tensor
 * the task reads (but exactly, in place, where the kind allows it) nor
 * each other. OM_TASK_ACCESS (after the kinds) lists every kind's. */
#define OM_SLOT(s) (1u << (s))
enum { OM_WRITES_OUTPUTS = 1u << OM_TASK_MAX_TENSORS };

/* TRANSDATA (vector unit): copy with layout and dtype conversion.
 *   tensors: src, dst.  params: channels_last (0|1).
 *   src and dst have the same logical element count. If both are ND it is
 *   an element-by-element copy in C order (Reshape, Flatten, Cast between
 *   f32/f16). Otherwise both have equal logical dims and the layouts are ND
 *   (NCHW) / NC1HWC0 (rank 4) or ND (NCDHW) / NDC1HWC0 (rank 5) in either
 *   direction (padding written as 0), or one layout on both sides (a
 *   cast). With channels_last = 1 (rank 4 only) the ND side is [N, H, W, C]
 *   instead (NHWC: one row of C channels per pixel) and the NC1HWC0 side has
 *   logical dims [N, C, H, W], in either direction (an NHWC model's input
 *   into the convs, their output back to NHWC).
 *   dtypes: f32 and f16 in any combination, or u8 / i8 with one dtype on
 *   both sides (the bytes move: int8 activations of QCONV2D). Between two
 *   ND tensors (a Convert) any two dtypes of common/types.h but string,
 *   the storage dtypes (bf16, float8, float4, 4- and 2-bit integers,
 *   packed as ONNX packs them) included, converted as common/dtype_cvt.h
 *   does with params saturate (0|1: float8 and e8m0 results saturate) and
 *   round_mode (CVT_ROUND_UP, _DOWN, _NEAREST: e8m0 results); both 0
 *   elsewhere. With a packed (4- or 2-bit) side, blocks split the elements
 *   in groups of 4, so that no two blocks write one byte.
 *   Block unit: rows of dst, N*C1*H (NC1HWC0 dst), N*D*C1*H (NDC1HWC0 dst),
 *   N*C*H (rank-4 ND dst), N*C*D*H (rank-5 ND dst) or N*H (NHWC dst, rows
 *   of W*C); elements when the layout stays. */
enum { OM_TRANSDATA_T_SRC = 0, OM_TRANSDATA_T_DST = 1, OM_TRANSDATA_NTENSORS = 2 };
enum { OM_TRANSDATA_WRITES = OM_SLOT(OM_TRANSDATA_T_DST) };
enum {
  OM_TRANSDATA_P_CHANNELS_LAST = 0,
  OM_TRANSDATA_P_SATURATE = 1,
  OM_TRANSDATA_P_ROUND_MODE = 2,
  OM_TRANSDATA_NPARAMS = 3
};

/* CONV2D (cube unit): y = act(conv(x, w) + bias + residual).
 *   tensors: x NC1HWC0, w FRACTAL_Z [Cout,Cin,KH,KW] (Cin == x's C, group
 *   1), bias ND [Cout] f32 or OM_NONE, residual NC1HWC0 shaped like y, or
 *   OM_NONE, y NC1HWC0 [N,Cout,Ho,Wo]; then x_scale (with x_scale = 1),
 *   then the epilogue's inputs (with epilogue = 1).
 *   x, w share a dtype (f16: fp16 fractals, fp32 accumulation, as the chip;
 *   f32: fp32 throughout). Or x is ND [N, Cin, H, W] with Cin <= 4, f16 or
 *   f32 (an RGB stem reading the model's NCHW input in place; algorithm 0,
 *   no x_scale, group 1): the cube stages its values as a TRANSDATA to
 *   NC1HWC0 in w's dtype would have converted them (rounded to fp16 when w
 *   is f16).
 *   residual and y may be f16 or f32; y may occupy
 *   exactly the residual's bytes (same dims and dtype: in place), since
 *   each residual element is read before the y element at its place is
 *   written.
 *   params: the window (kh .. dilation_w), act, clip_min and clip_max (f32
 *   bits), then the tile:
 *   tile_m: output pixels (of Ho*Wo) per tile, a multiple of 16
 *   tile_n: output channel blocks (of C1out) per tile
 *   tile_k: reduction fractals (of C1in*KH*KW, FRACTAL_Z order) per K
 *   chunk, 1..OM_CONV_MAX_TILE_K: every kernel runs a tile's K in chunks
 *   of exactly tile_k fractals (the last one shorter), in order, keeping
 *   the tile's f32 sums in L0C from one chunk to the next.
 *   The tiles are M-tiles x N-tiles per batch image: T = N * ceil(Ho*Wo /
 *   tile_m) * ceil(C1out / tile_n), numbered image-major, then M, then N.
 *   Block b takes tiles [b*T/block_dim, (b+1)*T/block_dim).
 *   Per chunk a kernel takes the tile's img2col rows (a pixel's chunk of
 *   input values) through L0A in groups of pixels and its weight fractals
 *   through L0B in passes of output channel blocks, as many as fit; the
 *   sums are the same for any grouping. The compiler guarantees (tile_m in
 *   pixels, tile_n and tile_k in 16-wide fractal blocks, L0A and L0B as
 *   staged: OM_L0_STAGING x the SoC's bytes, f32 values):
 *   L0C >= tile_m * tile_n*16 * 4          (the tile's f32 sums)
 *   L0A >= 16 * tile_k*16 * 4              (a chunk's rows of 16 pixels)
 *   L0B >= tile_k*16 * 16 * 4              (a chunk's fractals of one n block)
 *   algorithm (om_conv_algo). OM_CONV_DIRECT: all of the above.
 *   OM_CONV_WINO_F43_FZ, Winograd F(4x4,3x3) (docs/om-format.md): only
 *   for kh = kw = 3, strides 1, dilations at most Ho, Wo; w FRACTAL_Z in
 *   x's dtype, as for OM_CONV_DIRECT. The output of an image is covered by
 *   TH x TW tiles of 4x4 pixels (TH = ceil(Ho/4), TW = ceil(Wo/4), row-major;
 *   pixels past Ho, Wo are computed and dropped; with dilations dh, dw:
 *   TH = wino_f43_tiles(Ho, dh) (common/types.h), each phase of the rows
 *   o % dh its own TH/dh tiles whose rows and input rows lie dh apart,
 *   likewise the columns), tile_m counts those
 *   Winograd tiles, tile_n output channel blocks, tile_k input channel
 *   blocks (1..C1in): T = N * ceil(TH*TW / tile_m) * ceil(C1out /
 *   tile_n), numbered as above. A task tile transforms its inputs once
 *   (V = B^T d B, f32, in L1); per n block it transforms the weights it
 *   uses (U = G g G^T, f32, into UB) tile_k input channel blocks at a
 *   time, runs the chunk's 36 GEMMs [tile_m x tile_k*16] x [tile_k*16 x
 *   16] into L0C (accumulating over the chunks) and transforms the
 *   products back (A^T m A) with the epilogue. All of it is f32. A kernel
 *   may take two n blocks per chunk (the chunks are the same) when UB
 *   holds both blocks' U and L0C their products for a group of the tile's
 *   rows. The guarantees:
 *   L1  >= 36 * tile_m * C1in*16 * 4       (V for the task tile)
 *   L0C >= 36 * tile_m * 16 * 4            (one n block's 36 products, f32)
 *   UB  >= 36 * (tile_k*16 + 1) * 16 * 4   (a K chunk of U + one tile's products)
 *   groups G: 0 or 1 = the dense convolution above; G > 1 = grouped
 *   (ONNX group, not depthwise, which is DWCONV): w is FRACTAL_Z_G with
 *   logical dims [G, Cout/G, Cin/G, KH, KW] (common/conv_group.h), x's C =
 *   G * Cin/G, algorithm OM_CONV_DIRECT. Output channel block nb reduces
 *   only over its groups' input channel blocks [c1_lo(nb), c1_hi(nb)), K =
 *   (c1_hi - c1_lo)*KH*KW fractals, read from its run of the weights; the
 *   tiles are numbered as above and a tile's n blocks are computed run by
 *   run; its K chunks are tile_k fractals of its run's K.
 *   x_scale: 0 none; 1: the x_scale slot holds x_scale, NC1HWC0 [N, Cin,
 *   1, 1] in x's dtype, and the convolution reads x[n][c][h][w] *
 *   x_scale[n][c] (multiplied in f32 as x is staged, not rounded to x's
 *   dtype). Only with kh = kw = 1, strides 1, pads 0, algorithm
 *   OM_CONV_DIRECT and groups 0 or 1 (a squeeze-excitation Mul before a
 *   1x1 conv).
 *   epilogue: 0 none, 1 an epilogue program (OM_CONV_EPILOGUE below);
 *   epilogue_offset: with epilogue = 1 its byte offset in the VPROGS
 *   partition, else 0. The epilogue's extra inputs fill tensor slots
 *   [f .. ntensors-1] (f = OM_CONV_NTENSORS, one more after an x_scale;
 *   ntensors f..8).
 *
 * DWCONV (vector unit): depthwise convolution, group == C == Cout.
 *   tensors: CONV2D's, w NC1HWC0 with logical dims [1, C, KH, KW] (i.e.
 *   physical [C1][KH][KW][16]), bias ND [C] f32 or OM_NONE; no x_scale;
 *   then the epilogue's inputs.
 *   params: CONV2D's window, act, clip_min, clip_max, epilogue and
 *   epilogue_offset; the tile, algorithm, groups and x_scale are 0.
 *   Accumulates in f32; stages one channel block's weights in UB as f32, so
 *   UB >= KH * KW * 16 * 4 bytes. Block unit: N*C1 (image, channel block).
 *
 * OM_CONV_EPILOGUE (CONV2D and DWCONV with epilogue = 1): a vector
 *   program (common/vprog.h, the VPROG task's form) run in place on y after
 *   the fixed epilogue (bias, residual, act, cast): program input 0 is y,
 *   inputs 1..k are tensor slots f..f-1+k (k = ntensors - f, f as
 *   above; DWCONV: f = OM_CONV_NTENSORS), its one output is y. The operands
 *   obey VPROG's rules (NC1HWC0, inputs broadcasting over N, H and W,
 *   LOAD/STORE dtypes the tensors') and it is verified by the same checker.
 *   It runs once per output tile after the tile is written: CONV2D tiles'
 *   pixels (tile_m pixels, or the pixels of tile_m Winograd 4x4 tiles) x
 *   tile_n channel blocks; DWCONV planes. The tiles partition y: the result
 *   is that of a VPROG task with the program run after the conv.
 *
 * CONV3D (cube unit): y = act(conv3d(x, w) + bias + residual), the 3-D
 *   convolution, run as CONV2D's tiles over the N*Do output images (the
 *   (n, od) slices of y, each an NC1HWC0 image of [1, Cout, Ho, Wo]) with K
 *   over KD*C1in*KH*KW fractals in FRACTAL_Z_3D order: fractal kf reads
 *   input channel block (kf / (KH*KW)) % C1in at depth od*stride_d -
 *   pad_front + (kf / (C1in*KH*KW))*dilation_d, zeros outside [0, D).
 *   tensors: CONV2D's slots: x NDC1HWC0 [N, Cin, D, H, W], w FRACTAL_Z_3D
 *   [Cout, Cin, KD, KH, KW], bias ND [Cout] f32 or OM_NONE, residual
 *   NDC1HWC0 shaped like y or OM_NONE, y NDC1HWC0 [N, Cout, Do, Ho, Wo];
 *   then the epilogue's inputs (NDC1HWC0, broadcasting as VPROG's). No
 *   x_scale, no groups, algorithm OM_CONV_DIRECT only.
 *   x and w share a dtype; residual and y f16 or f32 (y may occupy the
 *   residual's bytes, as CONV2D's).
 *   params: CONV2D's window (kh .. dilation_w), act, clip_min, clip_max,
 *   tile_m, tile_n, tile_k, epilogue and epilogue_offset in their CONV2D
 *   slots; in the slots CONV2D gives algorithm, groups and x_scale (and its
 *   two unused ones) the depth window: kd, stride_d, pad_front, pad_back,
 *   dilation_d (each 1..65535, pads 0..65535 and below the depth extent).
 *   The tiles are T = N * Do * ceil(Ho*Wo / tile_m) * ceil(C1out / tile_n),
 *   numbered image-major ((n, od), n outer), then M, then N; tile_k counts
 *   fractals of the K above. CONV2D's L0A/L0B/L0C guarantees hold. The
 *   epilogue runs per tile as CONV2D's does. */
enum {
  OM_CONV_T_X = 0,
  OM_CONV_T_W = 1,
  OM_CONV_T_BIAS = 2,     /* or OM_NONE */
  OM_CONV_T_RESIDUAL = 3, /* or OM_NONE */
  OM_CONV_T_Y = 4,
  OM_CONV_NTENSORS = 5,  /* the fixed slots; x_scale and the epilogue's inputs follow */
  OM_CONV_T_X_SCALE = 5, /* CONV2D with x_scale = 1 */
};
/* y over the residual (in place): each residual element is read before y's at its place */
enum { OM_CONV_WRITES = OM_SLOT(OM_CONV_T_Y), OM_CONV_IN_PLACE = OM_SLOT(OM_CONV_T_RESIDUAL) };

enum {
  OM_CONV_P_KH = 0,
  OM_CONV_P_KW = 1,
  OM_CONV_P_STRIDE_H = 2,
  OM_CONV_P_STRIDE_W = 3,
  OM_CONV_P_PAD_TOP = 4,
  OM_CONV_P_PAD_LEFT = 5,
  OM_CONV_P_PAD_BOTTOM = 6,
  OM_CONV_P_PAD_RIGHT = 7,
  OM_CONV_P_DILATION_H = 8,
  OM_CONV_P_DILATION_W = 9,
  OM_CONV_P_ACT = 10,      /* om_act */
  OM_CONV_P_CLIP_MIN = 11, /* f32 bits */
  OM_CONV_P_CLIP_MAX = 12, /* f32 bits */
  OM_CONV_P_TILE_M = 13,   /* CONV2D only, as the next five */
  OM_CONV_P_TILE_N = 14,
  OM_CONV_P_TILE_K = 15,
  OM_CONV_P_ALGORITHM = 16, /* om_conv_algo */
  OM_CONV_P_GROUPS = 17,
  OM_CONV_P_X_SCALE = 18,
  /* 19 and 20 are 0 */
  OM_CONV_P_EPILOGUE = 21,
  OM_CONV_P_EPILOGUE_OFFSET = 22,
  OM_CONV_NPARAMS = 23,
  /* CONV3D: the depth window in CONV2D's algorithm .. 20 slots */
  OM_CONV3D_P_KD = 16,
  OM_CONV3D_P_STRIDE_D = 17,
  OM_CONV3D_P_PAD_FRONT = 18,
  OM_CONV3D_P_PAD_BACK = 19,
  OM_CONV3D_P_DILATION_D = 20,
};

/* The longest K chunk (tile_k) of a direct CONV2D: libomrt's cube kernels
 * list a chunk's fractals in arrays of this size. */
enum { OM_CONV_MAX_TILE_K = 512 };

/* OM_CONV_P_ALGORITHM. */
/* 1 was Winograd F(4x4,3x3) on weights transformed by atc (layout
 * WINO_F43, f32), which atc stopped writing before format 2.0; retired
 * with it, and the number is not reused. */
typedef enum om_conv_algo {
  OM_CONV_DIRECT = 0,      /* img2col / direct GEMM on FRACTAL_Z weights */
  OM_CONV_WINO_F43_FZ = 2, /* Winograd F(4x4,3x3) on FRACTAL_Z weights, transformed per task tile */
} om_conv_algo;

/* QCONV2D (cube unit): the int8 convolution of the QConv op (ops.def):
 *   acc = bias'[m] + sum over the window and the input channels of u * w,
 *   exact in int32, y = q_requant(acc, mult[m], y_zp, lo, hi)
 *   (common/quant.h), where u is x as u8: x itself for u8 x, x + 128 for i8
 *   x (x_signed = 1: vpdpbusd multiplies u8 by i8), taps in the padding
 *   read u = x_zp, and bias' = bias - x_zp * (the sum of the output
 *   channel's weights), computed by the compiler, so that acc = bias +
 *   sum (u - x_zp) * w, the island's integer arithmetic.
 *   tensors: x NC1HWC0 u8 or i8 [N, C, H, W] (padding lanes any value: their
 *   weights are 0), w ND i8 [C1out, KG, 16, 4] (the packing below; a
 *   depthwise convolution, groups = Cin = Cout, [C1out, KH*KW, 16, 1]:
 *   channel co's tap kh*KW + kw at w[co / 16][tap][co % 16]), bias ND
 *   i32 [C1out*16], mult ND f32 [C1out*16] (lanes past Cout 0), y NC1HWC0 u8
 *   or i8 [N, Cout, Ho, Wo] (padding lanes written 0).
 *   Weight packing (K groups of 4 innermost, for vpdpbusd; C0 = 16 as the
 *   activations'): output channel block nb (channels [16nb, 16nb+16))
 *   reduces over the input channel blocks [c1_lo(nb), c1_hi(nb)) of its
 *   groups (common/conv_group.h; all C1in blocks when groups = 1), kb =
 *   c1_hi - c1_lo of them, in the order k = ((kh*KW + kw)*kb + cb)*16 + c0
 *   (tap-major, then the block, then the channel within it). Element (nb,
 *   k, co) is at w[nb][k / 4][co][k % 4]; KG = KH*KW*kbmax*4 (kbmax the
 *   largest kb; a block with a smaller kb leaves the rest 0); weights of
 *   input channels outside the output channel's group, or past Cin, and of
 *   output channels past Cout are 0.
 *   params: CONV2D's window (kh .. dilation_w, slots 0..9; act, clip 0),
 *   tile_m (output pixels of Ho*Wo per tile, >= 1) and tile_n (output
 *   channel blocks per tile, >= 1) in CONV2D's slots, groups (>= 1,
 *   dividing Cin and Cout), x_zp (in u's range 0..255), y_zp, lo, hi (lo <=
 *   hi within y's dtype range, y_zp too), x_signed (0 | 1: x is i8).
 *   K = KG * 4 is at most OM_QCONV_MAX_K; acc + bias' wraps in int32.
 *   Residual (format 2.8, ntensors 6): a QDQ model's residual Add or Mul
 *   after the convolution (the QEltwise it replaces, QELTWISE below) as an
 *   epilogue. Tensor r NC1HWC0 u8 or i8 of y's dims (padding lanes any
 *   value); the convolution's own int8 value is c = q_requant(acc, mult[m],
 *   y_zp, ylo, yhi), clamped to y's dtype range [ylo, yhi], and y =
 *   q_eltwise(c, y_zp, c_scale, r, r_zp, r_scale, r_op, o_scale, o_zp, lo,
 *   hi) (common/quant.h) per element: lo and hi clamp the result written
 *   (a Relu after the Add folded in), y_zp is c's zero point. Each element
 *   of r is read before the same element of y is written, so y may occupy
 *   exactly r's bytes (in place).
 *   Params 10, 11, 12, 15, 16, 23 (0 without r): r_op (0 add, 1 mul),
 *   c_scale, r_scale and o_scale (f32 bits, finite and > 0), r_zp (in r's
 *   dtype range), o_zp (in y's dtype range).
 *   Tiles as CONV2D's: T = N * ceil(Ho*Wo / tile_m) * ceil(C1out /
 *   tile_n), image-major, then M, then N; block b takes tiles [b*T /
 *   block_dim, (b+1)*T / block_dim). The kernels read x and w in place
 *   (the software NPU's int8 cube needs no staging). */
enum {
  OM_QCONV_T_X = 0,
  OM_QCONV_T_W = 1,
  OM_QCONV_T_BIAS = 2,
  OM_QCONV_T_MULT = 3,
  OM_QCONV_T_Y = 4,
  OM_QCONV_NTENSORS = 5,
  OM_QCONV_T_R = 5, /* the residual, with ntensors OM_QCONV_NTENSORS_R */
  OM_QCONV_NTENSORS_R = 6,
};
enum { OM_QCONV_WRITES = OM_SLOT(OM_QCONV_T_Y), OM_QCONV_IN_PLACE = OM_SLOT(OM_QCONV_T_R) };
/* The longest K (KG * 4) of a QCONV2D: 65536 products of u8 x i8 (each at
 * most 255 * 128 in size) sum below 2^31. */
enum { OM_QCONV_MAX_K = 65536 };
enum {
  OM_QCONV_P_TILE_M = 13, /* = OM_CONV_P_TILE_M */
  OM_QCONV_P_TILE_N = 14,
  OM_QCONV_P_GROUPS = 17, /* = OM_CONV_P_GROUPS */
  OM_QCONV_P_X_ZP = 18,
  OM_QCONV_P_Y_ZP = 19,
  OM_QCONV_P_LO = 20,
  OM_QCONV_P_HI = 21,
  OM_QCONV_P_X_SIGNED = 22,
  OM_QCONV_P_R_OP = 10,    /* the residual's, else 0: 0 add, 1 mul */
  OM_QCONV_P_C_SCALE = 11, /* f32 bits */
  OM_QCONV_P_R_SCALE = 12, /* f32 bits */
  OM_QCONV_P_R_ZP = 15,
  OM_QCONV_P_O_SCALE = 16, /* f32 bits */
  OM_QCONV_P_O_ZP = 23,
  OM_QCONV_NPARAMS = 24,
};

/* QELTWISE (vector unit): the int8 elementwise op of the QEltwise op
 * (ops.def) between quantized tensors, a residual Add:
 *   y = q_eltwise(a, a_zp, a_scale, b, b_zp, b_scale, op, y_scale, y_zp,
 *   lo, hi) (common/quant.h) per element: a and b dequantized in f32,
 *   added (op 0) or multiplied (op 1), quantized with y's scale and zero
 *   point, rounding half to even, clamped to [lo, hi] (a Relu or Clip
 *   folded in).
 *   tensors: a, b, y: u8 or i8 each, one layout (ND, or NC1HWC0: padding
 *   lanes of a and b any value, of y written 0) and the same dims.
 *   params: op (0 add, 1 mul), a_zp, b_zp, y_zp (within a's, b's, y's
 *   dtype ranges), a_scale, b_scale, y_scale (f32 bits, finite and > 0),
 *   lo, hi (lo <= hi within y's range).
 *   Block unit: runs of 16 physical elements (an NC1HWC0 pixel's channel
 *   block), ceil(physical elements / 16) of them. */
enum { OM_QELTWISE_T_A = 0, OM_QELTWISE_T_B = 1, OM_QELTWISE_T_Y = 2, OM_QELTWISE_NTENSORS = 3 };
enum { OM_QELTWISE_WRITES = OM_SLOT(OM_QELTWISE_T_Y) };
enum {
  OM_QELTWISE_P_OP = 0,
  OM_QELTWISE_P_A_ZP = 1,
  OM_QELTWISE_P_B_ZP = 2,
  OM_QELTWISE_P_Y_ZP = 3,
  OM_QELTWISE_P_A_SCALE = 4, /* f32 bits */
  OM_QELTWISE_P_B_SCALE = 5, /* f32 bits */
  OM_QELTWISE_P_Y_SCALE = 6, /* f32 bits */
  OM_QELTWISE_P_LO = 7,
  OM_QELTWISE_P_HI = 8,
  OM_QELTWISE_NPARAMS = 9,
};

/* QLUT (vector unit): an int8 -> int8 elementwise function as a 256-entry
 * table (the QLut op, ops.def: a vector program of one u8/i8 input and one
 * u8/i8 output, evaluated at compile time for every input byte):
 *   y[i] = table[x[i] as an unsigned byte] (an i8 x: x + 256 when negative).
 *   tensors: x (u8 or i8), table (256 bytes ND [256], y's dtype), y (u8 or
 *   i8); x and y one layout (ND, or NC1HWC0: padding lanes of x any value,
 *   of y written 0) and the same dims.
 *   params: none.
 *   Block unit: runs of 16 physical elements (an NC1HWC0 pixel's channel
 *   block), ceil(physical elements / 16) of them. */
enum { OM_QLUT_T_X = 0, OM_QLUT_T_TABLE = 1, OM_QLUT_T_Y = 2, OM_QLUT_NTENSORS = 3 };
enum { OM_QLUT_WRITES = OM_SLOT(OM_QLUT_T_Y), OM_QLUT_NPARAMS = 0 };

/* POOL (vector unit): max or average pooling on NC1HWC0 or NDC1HWC0.
 *   tensors: x, y (same dtype family f16/f32, or for max one dtype u8 or
 *   i8; output dims given by y), both NC1HWC0 (2-D) or both NDC1HWC0 (3-D).
 *   params: the window (kh .. pad_right, as CONV2D's), mode (0 max, 1
 *   avg), count_include_pad; 3-D: kd, stride_d, pad_front, pad_back (2-D:
 *   0).
 *   Windows start at (od*stride_d - pad_front, oh*stride_h - pad_top,
 *   ow*stride_w - pad_left); taps outside the input are skipped (max) or,
 *   for avg, counted only if count_include_pad and inside the padded
 *   extent [-pad_top, H+pad_bottom) (and [-pad_front, D+pad_back)).
 *   Global average pooling is avg with kh=H, kw=W (kd=D). Block unit:
 *   output planes, N*C1 (2-D) or N*Do*C1 (3-D). */
enum { OM_POOL_T_X = 0, OM_POOL_T_Y = 1, OM_POOL_NTENSORS = 2 };
enum { OM_POOL_WRITES = OM_SLOT(OM_POOL_T_Y) };
enum {
  OM_POOL_P_KH = 0,
  OM_POOL_P_KW = 1,
  OM_POOL_P_STRIDE_H = 2,
  OM_POOL_P_STRIDE_W = 3,
  OM_POOL_P_PAD_TOP = 4,
  OM_POOL_P_PAD_LEFT = 5,
  OM_POOL_P_PAD_BOTTOM = 6,
  OM_POOL_P_PAD_RIGHT = 7,
  OM_POOL_P_MODE = 8,
  OM_POOL_P_COUNT_INCLUDE_PAD = 9,
  OM_POOL_P_KD = 10, /* 3-D only, as the next three */
  OM_POOL_P_STRIDE_D = 11,
  OM_POOL_P_PAD_FRONT = 12,
  OM_POOL_P_PAD_BACK = 13,
  OM_POOL_NPARAMS = 14,
};

/* COPY_SLICE (vector unit): y[..., offset : offset + x.dims[axis], ...] = x
 *   along logical `axis`; one task per Concat input. x and y share layout
 *   and rank, dims equal except along axis; dtypes f16/f32 mixed, or
 *   (format 2.5) one dtype of any size on both sides (bits copied).
 *   tensors: x, y.  params: axis (0..rank-1), offset.
 *   Block unit: the physical dims before the axis (NC1HWC0 is
 *   [N][C1][H][W][16], so axis 1 splits N, axis 2 N*C1, axis 3 N*C1*H);
 *   for axis 0, elements of the copy. */
enum { OM_COPY_SLICE_T_X = 0, OM_COPY_SLICE_T_Y = 1, OM_COPY_SLICE_NTENSORS = 2 };
enum { OM_COPY_SLICE_WRITES = OM_SLOT(OM_COPY_SLICE_T_Y) };
enum { OM_COPY_SLICE_P_AXIS = 0, OM_COPY_SLICE_P_OFFSET = 1, OM_COPY_SLICE_NPARAMS = 2 };

/* SOFTMAX (vector unit): ND, f16/f32; accumulates in f32; exp is the
 *   vector unit's (om_vexp, common/vmath.h).
 *   tensors: x, y (same dims).
 *   params: axis (0..rank-1); coerce_2d: 0 = normalise along `axis` only
 *   (opset >= 13), 1 = over all dims from `axis` on (opset < 13); log (0
 *   softmax, 1 log-softmax). Block unit: the vectors normalised (outer *
 *   inner; inner = 1 with coerce_2d). */
enum { OM_SOFTMAX_T_X = 0, OM_SOFTMAX_T_Y = 1, OM_SOFTMAX_NTENSORS = 2 };
enum { OM_SOFTMAX_WRITES = OM_SLOT(OM_SOFTMAX_T_Y) };
enum { OM_SOFTMAX_P_AXIS = 0, OM_SOFTMAX_P_COERCE_2D = 1, OM_SOFTMAX_P_LOG = 2, OM_SOFTMAX_NPARAMS = 3 };

/* VPROG (vector unit): runs a vector program (common/vprog.h) element by
 *   element. tensors: [0 .. ninputs-1] the program's inputs, then its
 *   outputs (ninputs + noutputs == ntensors <= 8), each of a register
 *   dtype of common/vprog.h (f32 f16 f64 i8..i64 u8..u64 bool).
 *   params: program, the byte offset of the program in the VPROGS
 *   partition.
 *   Outputs share dims and layout. Inputs broadcast to them over the
 *   physical array: ND tensors numpy-style (right-aligned, size-1 dims
 *   repeat); NC1HWC0 tensors as their physical [N][C1][H][W][16] arrays,
 *   broadcasting over N, H and W only (an NC1HWC0 input's C equals the
 *   outputs'); NDC1HWC0 ones as [N][D][C1][H][W][16], over N, D, H and W.
 *   All operands of one task share a layout. NC1HWC0 and NDC1HWC0 outputs'
 *   padding lanes (c >= C) are written as 0 whatever the program computes.
 *   Block unit: 256-element tiles of the output's physical elements. */
enum { OM_VPROG_P_PROGRAM = 0, OM_VPROG_NPARAMS = 1 };
/* no in place: the interpreter and the JIT load and store a tile in program order */
enum { OM_VPROG_WRITES = OM_WRITES_OUTPUTS };

/* REDUCE (vector unit): y = a reduction of x over a set of its axes.
 *   tensors: x ND, y ND.
 *   params: op (om_reduce_op); axes: bit d set = x's dim d is reduced
 *   (bits below x's rank only; 0 = nothing reduced: the op's per-element
 *   part alone, ONNX's noop_with_empty_axes); select_last_index (0|1;
 *   ARGMAX/ARGMIN only, else 0).
 *   y's dims are x's with every reduced dim either 1 (keepdims) or left
 *   out (all of them one way); ARGMAX/ARGMIN reduce exactly one axis.
 *   dtypes: float ops (all but ARGMAX/ARGMIN) read f16/f32 and write
 *   f16/f32, accumulating in f32, or read and write f64, accumulating in
 *   f64, sums pairwise (error growing with log n, not n); SUM, PROD, MAX,
 *   MIN, L1 and SUMSQUARE also take i16, i32, i64,
 *   u16, u32, u64 (x and y the same, arithmetic wraps in 64 bits, u64
 *   ordered as unsigned); MAX and MIN also i8, u8, bool. ARGMAX/ARGMIN
 *   read any of those but bool and write i64 (the first extreme index,
 *   the last with select_last_index). A reduction over no elements (a reduced dim of 0)
 *   gives the op's identity: 0 (SUM, L1, L2, SUMSQUARE), 1 (PROD), NaN
 *   (MEAN), -inf (LOGSUM, LOGSUMEXP; MAX on floats), +inf (MIN on
 *   floats), the dtype's lowest / highest value (MAX / MIN on integers).
 *   Block unit: y elements. */
enum { OM_REDUCE_T_X = 0, OM_REDUCE_T_Y = 1, OM_REDUCE_NTENSORS = 2 };
enum { OM_REDUCE_WRITES = OM_SLOT(OM_REDUCE_T_Y) };
enum { OM_REDUCE_P_OP = 0, OM_REDUCE_P_AXES = 1, OM_REDUCE_P_SELECT_LAST_INDEX = 2, OM_REDUCE_NPARAMS = 3 };

/* OM_REDUCE_P_OP. */
typedef enum om_reduce_op {
  OM_REDUCE_SUM = 0,
  OM_REDUCE_MEAN = 1,
  OM_REDUCE_MAX = 2,
  OM_REDUCE_MIN = 3,
  OM_REDUCE_PROD = 4,
  OM_REDUCE_L1 = 5,        /* sum |x| */
  OM_REDUCE_L2 = 6,        /* sqrt(sum x^2) */
  OM_REDUCE_LOGSUM = 7,    /* log(sum x) */
  OM_REDUCE_LOGSUMEXP = 8, /* log(sum exp x), computed as max + log(sum exp(x - max)) */
  OM_REDUCE_SUMSQUARE = 9, /* sum x^2 */
  OM_REDUCE_ARGMAX = 10,
  OM_REDUCE_ARGMIN = 11,
  OM_REDUCE_OP_COUNT = 12,
} om_reduce_op;

/* STRIDED_COPY (vector unit): y = a strided view of x (Transpose, Slice,
 *   Expand, Tile, DepthToSpace, SpaceToDepth; BitCast and the Reshape
 *   family's non-float copies as a flat view).
 *   tensors: x ND, y ND; dtypes of one size, any of 1, 2, 4 or 8 bytes
 *   (copied as bytes: one dtype, or a reinterpretation such as f32 ->
 *   i32), or f16/f32 in either direction (converted).
 *   params: rank r of the view (0..8); offset (x elements, >= 0); dims, r
 *   view dims (>= 0); strides, r x strides (elements per step along each
 *   view dim; may be 0 or negative); dims and strides past r 0.
 *   y's element i (C order) is x[offset + sum_d idx_d * stride_d] where
 *   idx is i's position in the view dims; the view has y's element count
 *   and every position it reaches lies inside x. Block unit: y elements. */
enum { OM_STRIDED_COPY_T_X = 0, OM_STRIDED_COPY_T_Y = 1, OM_STRIDED_COPY_NTENSORS = 2 };
enum { OM_STRIDED_COPY_WRITES = OM_SLOT(OM_STRIDED_COPY_T_Y) };
enum {
  OM_STRIDED_COPY_P_RANK = 0,
  OM_STRIDED_COPY_P_OFFSET = 1,
  OM_STRIDED_COPY_P_DIMS = 2,     /* MAX_RANK of them */
  OM_STRIDED_COPY_P_STRIDES = 10, /* MAX_RANK of them */
  OM_STRIDED_COPY_NPARAMS = 18,
};

/* GATHER (vector unit): Gather or GatherElements with run-time indices.
 *   tensors: x ND, indices ND (i32 or i64), y ND; x and y dtypes of one
 *   size (any of 1, 2, 4 or 8 bytes, copied as bytes) or f16/f32.
 *   params: mode: 0 Gather, 1 GatherElements, 2 GatherND; axis (0..x
 *   rank-1; for GatherND: batch_dims b, 0..min(x, indices rank)-1).
 *   Gather: y dims = x dims[:axis] + indices dims + x dims[axis+1:],
 *   y[o, j, i] = x[o, indices[j], i]. GatherElements: indices and y have
 *   x's rank and y's dims are the indices', every dim but the axis at most
 *   x's; y[p] = x[p with its axis coordinate replaced by indices[p]].
 *   GatherND: indices [B..., J..., k] (B = the first b dims, equal to x's
 *   first b dims; 1 <= k <= x rank - b), y dims = indices dims[:-1] + x
 *   dims[b+k:]; y[B, J, :] = x[B, indices[B, J, 0..k), :], each of the k
 *   indices wrapped against its own x dim (a row with one out of range
 *   writes zero bytes, as below).
 *   An index k in [-D, D) (D = x dims[axis]) reads k (k + D when
 *   negative); an index outside that range reads nothing and writes zero
 *   bytes (ONNX calls it an error; a task cannot fail at run time).
 *   With indices counted along their axis a (format 2.6, a counted value:
 *   every indices dim before a is 1, so the valid indices are a prefix) a
 *   fourth tensor, extent ND i64 [1], holds their count n, and param
 *   extent_axis is a: only the first min(max(n, 0), dims[a]) x (indices
 *   elements / dims[a]) indices are read, and the y elements they would
 *   make from the others are zeros (y is counted alike; SSDlite gathers
 *   each class's few boxes above the threshold out of 3234 candidates).
 *   Block unit: y elements. */
enum {
  OM_GATHER_T_X = 0,
  OM_GATHER_T_INDICES = 1,
  OM_GATHER_T_Y = 2,
  OM_GATHER_NTENSORS = 3,
  OM_GATHER_T_EXTENT = 3,
  OM_GATHER_NTENSORS_EXTENT = 4
};
enum { OM_GATHER_WRITES = OM_SLOT(OM_GATHER_T_Y) };
enum { OM_GATHER_P_MODE = 0, OM_GATHER_P_AXIS = 1, OM_GATHER_P_EXTENT_AXIS = 2, OM_GATHER_NPARAMS = 3 };

/* PAD (vector unit): y = x padded (or cropped) per dim.
 *   tensors: x ND, y ND; dtypes of one size (any of 1, 2, 4 or 8 bytes,
 *   copied as bytes) or f16/f32.
 *   params: mode: 0 constant, 1 reflect, 2 edge, 3 wrap; begin, pad_begin
 *   per dim (rank of them, elements, may be negative: crop; 0 past the
 *   rank); value_lo, value_hi: the constant's bytes in y's dtype, low and
 *   high 32 bits (mode 0 only, else 0).
 *   y dims[d] = x dims[d] + pad_begin[d] + pad_end[d] >= 0 (pad_end is
 *   implied by y's dims). y[c] reads x at c[d] - pad_begin[d] along every
 *   dim; a coordinate outside [0, D) is, per mode, the constant (for the
 *   whole element), mirrored without repeating the edge (reflect; D >= 2
 *   where it is needed), clamped to the edge (edge; D >= 1) or taken
 *   modulo D (wrap; D >= 1). Block unit: y elements. */
enum { OM_PAD_T_X = 0, OM_PAD_T_Y = 1, OM_PAD_NTENSORS = 2 };
enum { OM_PAD_WRITES = OM_SLOT(OM_PAD_T_Y) };
enum {
  OM_PAD_P_MODE = 0,
  OM_PAD_P_BEGIN = 1, /* MAX_RANK of them */
  OM_PAD_P_VALUE_LO = 9,
  OM_PAD_P_VALUE_HI = 10,
  OM_PAD_NPARAMS = 11,
};

/* MATMUL (cube unit): y = act(alpha * op(a) x op(b) + bias + beta * c),
 *   batched (ONNX MatMul and Gemm, with the bias, residual and activation
 *   passes/fuse.c adds), then an optional epilogue program.
 *   tensors: a ND, b ND or FRACTAL_NZ, c ND or OM_NONE, y ND, bias ND [N]
 *   f32 or OM_NONE (format 2.0 packages end before this slot: ntensors 4),
 *   then the epilogue's inputs (with epilogue = 1).
 *   a and b share a dtype (f16: fp16 operands, fp32 accumulation, as the
 *   chip; f32: fp32 throughout); c and y are f16 or f32 each.
 *   Matrices: an operand is read through its permutation perm_a / perm_b
 *   first (a Transpose folded into the task: the view's dim d is the
 *   stored dim perm[d]; common/matmul_geom.h encodes it, 0 = none); of
 *   that view, a of rank >= 2 is [..., M, K], or [..., K, M] with trans_a;
 *   a of rank 1 is [K], read as one row [1, K]. b of rank >= 2 is
 *   [..., K, N], or [..., N, K] with trans_b; b of rank 1 is [K], read as
 *   one column [K, 1]. A FRACTAL_NZ b (common/types.h: per batch, n blocks
 *   of K1*16 x 16 panels, as the micro-kernel reads them) has rank >= 2,
 *   trans_b = 0, perm_b = 0 and an ND b's logical dims. The dims before a's and b's
 *   matrix dims are their batch dims; they broadcast numpy-style
 *   (right-aligned, a dim of 1 repeats) to y's batch dims, of rank max(the
 *   two). y is [batch..., M, N] without the M dim when a has rank 1 and
 *   without the N dim when b has rank 1 (ONNX MatMul's 1-D rule). c
 *   broadcasts numpy-style to y (rank <= y's); bias[n] is added to column n.
 *   M, N, K >= 1.
 *   params: trans_a, trans_b (0|1; 0 for a rank-1 operand); alpha, beta
 *   (f32 bits; beta 0 without c; both finite); act (om_act), clip_min,
 *   clip_max (f32 bits, as CONV2D); tile_m, tile_n, tile_k: elements of
 *   rows, N and K per tile, each a multiple of 16 in 16..65536; fold: how
 *   many of y's last batch dims join M in the row axis (0..y's batch rank;
 *   common/matmul_geom.h): legal when b does not vary along them and a's
 *   and c's rows are evenly spaced along the axis (c may also not vary
 *   along it); the axis has F = (those dims' product) * M rows, the other
 *   batch dims remain batches; epilogue, epilogue_offset: an epilogue
 *   program as CONV2D's (OM_CONV_EPILOGUE), its first extra input in slot
 *   OM_MATMUL_NTENSORS, run in place on y once per tile over the tile's
 *   rows and columns; perm_a, perm_b (above).
 *   The tiles are T = batch * ceil(F / tile_m) * ceil(N / tile_n) (batch =
 *   the product of y's unfolded batch dims, F = M without a fold),
 *   numbered batch-major, then rows, then N. Block unit: tiles. A tile runs
 *   K in chunks of tile_k (the last one shorter): op(a)'s [tile_m x tile_k]
 *   block into L0A, op(b)'s [tile_k x tile_n] block into L0B (a
 *   FRACTAL_NZ b is read there in place), fractal products accumulated in
 *   L0C; the epilogue (alpha, + bias, + beta * c, act, cast to y's dtype,
 *   then the program) runs when K is done.
 *   The compiler guarantees (esize = dtype_size(a.dtype); the kernels
 *   stage the blocks as f32, in L0A and L0B staged: OM_L0_STAGING):
 *   L0A >= tile_m * tile_k * esize,  L0B >= tile_k * tile_n * esize,
 *   L0C >= tile_m * tile_n * 4. */
enum {
  OM_MATMUL_T_A = 0,
  OM_MATMUL_T_B = 1,
  OM_MATMUL_T_C = 2, /* or OM_NONE */
  OM_MATMUL_T_Y = 3,
  OM_MATMUL_T_BIAS = 4,   /* or OM_NONE, or absent (ntensors 4) */
  OM_MATMUL_NTENSORS = 5, /* the fixed slots; the epilogue's inputs follow */
};
enum { OM_MATMUL_WRITES = OM_SLOT(OM_MATMUL_T_Y) };
enum {
  OM_MATMUL_P_TRANS_A = 0,
  OM_MATMUL_P_TRANS_B = 1,
  OM_MATMUL_P_ALPHA = 2, /* f32 bits */
  OM_MATMUL_P_BETA = 3,  /* f32 bits */
  OM_MATMUL_P_ACT = 4,   /* om_act */
  OM_MATMUL_P_CLIP_MIN = 5,
  OM_MATMUL_P_CLIP_MAX = 6,
  OM_MATMUL_P_TILE_M = 7,
  OM_MATMUL_P_TILE_N = 8,
  OM_MATMUL_P_TILE_K = 9,
  OM_MATMUL_P_FOLD = 10,
  OM_MATMUL_P_EPILOGUE = 11,
  OM_MATMUL_P_EPILOGUE_OFFSET = 12,
  OM_MATMUL_P_PERM_A = 13, /* common/matmul_geom.h's encoding */
  OM_MATMUL_P_PERM_B = 14,
  OM_MATMUL_NPARAMS = 15,
};

/* RESIZE (vector unit): y = x resampled per dim through compile-time
 *   tables (ONNX Resize and Upsample, every mode: the compiler turns
 *   coordinate transform, nearest rounding, linear/cubic coefficients,
 *   antialias, exclude_outside and edge clamping into source indices and
 *   weights).
 *   tensors: x ND, idx ND i32 [T], w ND f32 [T] (mode 0) or OM_NONE (mode
 *   1), y ND of x's rank (>= 1).
 *   params: mode: 0 interpolate (x and y f16/f32, any mix; f32
 *   arithmetic), 1 select (every table tap count 1, y[c] = x[idx(c)]; x
 *   and y the same dtype of any size, or f16/f32); taps, taps[d] per dim
 *   (dims past the rank 0): 0 = dim d is not resampled (y dims[d] == x
 *   dims[d]), else 1..1024 taps; value_lo, value_hi: the extrapolation
 *   value as bytes of y's dtype, low and high 32 bits (unused bytes 0).
 *   The tables hold, dim after dim for every d with taps[d] > 0, y
 *   dims[d] * taps[d] entries: entry (o, t) of dim d is its tap t for
 *   output coordinate o, an x coordinate in [0, x dims[d]) with weight
 *   w; T is their total. Tap 0 may instead be -1: coordinate o of dim d
 *   lies outside (tf_crop_and_resize), and every y element with it is
 *   the extrapolation value (its other taps are still in range).
 *   y[c] = sum over the taps t_d of every resampled dim (all
 *   combinations) of prod_d w_d(c_d, t_d) * x[idx_d(c_d, t_d) ...], dims
 *   with taps 0 reading x at c_d. The product of taps over all dims but
 *   the last is at most 4096. Block unit: y rows (y elements / the last
 *   dim). */
enum { OM_RESIZE_T_X = 0, OM_RESIZE_T_IDX = 1, OM_RESIZE_T_W = 2, OM_RESIZE_T_Y = 3, OM_RESIZE_NTENSORS = 4 };
enum { OM_RESIZE_WRITES = OM_SLOT(OM_RESIZE_T_Y) };
enum {
  OM_RESIZE_P_MODE = 0,
  OM_RESIZE_P_TAPS = 1, /* MAX_RANK of them */
  OM_RESIZE_P_VALUE_LO = 9,
  OM_RESIZE_P_VALUE_HI = 10,
  OM_RESIZE_NPARAMS = 11,
};

/* POOL_ND (vector unit): max, average or Lp pooling on ND [N, C, D1..Dr]
 *   tensors, r = 1..3 spatial dims (the NC1HWC0 POOL stays the 2-D CNN
 *   path).
 *   tensors: x ND of rank r + 2, y ND of the same rank, y's N and C equal
 *   to x's.
 *   params: mode: 0 max, 1 avg, 2 lp; count_include_pad (avg only, else
 *   0); lp_p, the p of lp (1..64, else 0); then r each of kernel, strides,
 *   dilations (each 1..65535), pad_begin and pad_end (0..65535, below the
 *   kernel extent dilation * (kernel - 1) + 1), those past r 0.
 *   y's spatial dims are floor or ceil of (D + pads - extent) / stride +
 *   1. The window of y[n, c, o] starts at o * stride - pad_begin per dim
 *   and takes taps every dilation; taps outside x are skipped. max: the
 *   largest tap (-inf, or the dtype's lowest, with none); avg: the sum
 *   over the count of taps inside x, or, with count_include_pad, inside
 *   the padded extent [-pad_begin, D + pad_end) (0 for a count of 0);
 *   lp: (sum |x|^p)^(1/p). dtypes: x and y f16/f32 (any mix), or for max
 *   also i8 or u8 (x and y the same). Accumulates in f32. Block unit: y
 *   elements. */
enum { OM_POOL_ND_T_X = 0, OM_POOL_ND_T_Y = 1, OM_POOL_ND_NTENSORS = 2 };
enum { OM_POOL_ND_WRITES = OM_SLOT(OM_POOL_ND_T_Y) };
enum {
  OM_POOL_ND_P_MODE = 0,
  OM_POOL_ND_P_COUNT_INCLUDE_PAD = 1,
  OM_POOL_ND_P_LP_P = 2,
  OM_POOL_ND_P_KERNEL = 3, /* OM_POOL_ND_MAX_DIMS of each of these five */
  OM_POOL_ND_P_STRIDES = 6,
  OM_POOL_ND_P_DILATIONS = 9,
  OM_POOL_ND_P_PAD_BEGIN = 12,
  OM_POOL_ND_P_PAD_END = 15,
  OM_POOL_ND_NPARAMS = 18,
  OM_POOL_ND_MAX_DIMS = 3, /* spatial dims */
};

/* TOPK (vector unit): the k largest (or smallest) elements along an axis.
 *   tensors: x ND, values ND, indices ND i64. x is f16, f32, f64, i8, u8,
 *   i16, u16, i32, u32, i64 or u64; values x's dtype (or f16/f32).
 *   params: axis (0..x rank-1), k (0..x dims[axis]), largest (0|1),
 *   sorted (0|1). values and indices have x's dims with dims[axis] = k.
 *   With a run-time k (format 2.4): two more tensors, k ND i32/i64 one
 *   element and count ND i64 [1]; param k is then the bound (values'
 *   and indices' extent along the axis: x's dims[axis], or less when the
 *   compiler bounds k, as min(300, count) in torchvision's detectors), the
 *   kernel takes
 *   k' = min(max(k, 0), bound) best, writes zeros after them along the
 *   axis and stores k' into count: a counted output. With x itself
 *   counted along the axis (format 2.5) a sixth tensor, extent ND i64
 *   [1], holds x's count n: only positions below min(max(n, 0),
 *   dims[axis]) compete and k' is at most that.
 *   Each line along the axis is ordered by value (descending when
 *   largest, else ascending), equal values by ascending index, NaN above
 *   every number (first when largest, last otherwise); the first k go
 *   out, values and their positions. The output is always in that order,
 *   sorted or not. Block unit: lines (the product of x's dims other than
 *   the axis). */
enum { OM_TOPK_T_X = 0, OM_TOPK_T_VALUES = 1, OM_TOPK_T_INDICES = 2, OM_TOPK_NTENSORS = 3 };
enum { OM_TOPK_T_K = 3, OM_TOPK_T_COUNT = 4, OM_TOPK_NTENSORS_COUNTED = 5 };
enum { OM_TOPK_T_EXTENT = 5, OM_TOPK_NTENSORS_EXTENT = 6 };
enum { OM_TOPK_WRITES = OM_SLOT(OM_TOPK_T_VALUES) | OM_SLOT(OM_TOPK_T_INDICES) | OM_SLOT(OM_TOPK_T_COUNT) };
enum {
  OM_TOPK_P_AXIS = 0,
  OM_TOPK_P_K = 1,
  OM_TOPK_P_LARGEST = 2,
  OM_TOPK_P_SORTED = 3,
  OM_TOPK_NPARAMS = 4
};

/* NONZERO (vector unit): the positions of x's nonzero elements, a
 * counted output (om_format.h's COUNTS partition).
 *   tensors: x ND (any dtype of 1, 2, 4 or 8 bytes: bool, integers,
 *   floats; NaN counts as nonzero), y ND i64 [max(rank, 1), bound] with
 *   bound = x's elements, count ND i64 [1].
 *   params: none. Column j < count of y holds the coordinates of the j-th
 *   nonzero element of x in C order (a rank-0 x reads as [1]: row 0 is 0);
 *   the columns from count to bound are 0; count gets the number of
 *   nonzero elements. block_dim 1. */
enum { OM_NONZERO_T_X = 0, OM_NONZERO_T_Y = 1, OM_NONZERO_T_COUNT = 2, OM_NONZERO_NTENSORS = 3 };
enum { OM_NONZERO_WRITES = OM_SLOT(OM_NONZERO_T_Y) | OM_SLOT(OM_NONZERO_T_COUNT) };
enum { OM_NONZERO_NPARAMS = 0 };

/* NMS (vector unit): ONNX NonMaxSuppression (common/nms.h states the
 * selection), a counted output.
 *   tensors: boxes ND [B, N, 4], scores ND [B, C, N] (each f32 or f16),
 *   iou_threshold ND one element (f32/f16) or OM_NONE (0), score_threshold
 *   likewise or OM_NONE (none), selected ND i64 [B x C x max_per_class,
 *   3], count ND i64 [1].
 *   params: center_point_box (0|1), max_per_class (0..N).
 *   Rows j < count of selected are (batch, class, box), batches then
 *   classes in order, each class's boxes in selection order; the rows from
 *   count on are 0. block_dim 1. With boxes and scores counted along N
 *   (format 2.5) a seventh tensor, extent ND i64 [1], holds their count n:
 *   only the boxes below min(max(n, 0), N) take part. */
enum {
  OM_NMS_T_BOXES = 0,
  OM_NMS_T_SCORES = 1,
  OM_NMS_T_IOU = 2,
  OM_NMS_T_SCORE_THRESHOLD = 3,
  OM_NMS_T_SELECTED = 4,
  OM_NMS_T_COUNT = 5,
  OM_NMS_NTENSORS = 6
};
enum { OM_NMS_T_EXTENT = 6, OM_NMS_NTENSORS_EXTENT = 7 };
enum { OM_NMS_WRITES = OM_SLOT(OM_NMS_T_SELECTED) | OM_SLOT(OM_NMS_T_COUNT) };
enum { OM_NMS_P_CENTER_POINT_BOX = 0, OM_NMS_P_MAX_PER_CLASS = 1, OM_NMS_NPARAMS = 2 };

/* UNIQUE (vector unit): ONNX Unique (common/unique.h states the order and
 * the outputs), counted outputs.
 *   tensors: x ND (a numeric dtype of 1, 2, 4 or 8 bytes), y ND in x's
 *   dtype (x's dims with an axis, [x's elements] without), indices,
 *   inverse, counts ND i64 [L] (L = x's dims[axis], or its elements),
 *   count ND i64 [1].
 *   params: axis (-1: x flattened, else 0..rank-1), sorted (0|1).
 *   x is read as [outer, L, inner] around the axis; y, indices and counts
 *   hold the G distinct items first along the axis (y's, or their only
 *   one) and zeros after them, inverse every item's group, and count gets
 *   G. block_dim 1. */
enum {
  OM_UNIQUE_T_X = 0,
  OM_UNIQUE_T_Y = 1,
  OM_UNIQUE_T_INDICES = 2,
  OM_UNIQUE_T_INVERSE = 3,
  OM_UNIQUE_T_COUNTS = 4,
  OM_UNIQUE_T_COUNT = 5,
  OM_UNIQUE_NTENSORS = 6
};
enum {
  OM_UNIQUE_WRITES = OM_SLOT(OM_UNIQUE_T_Y) | OM_SLOT(OM_UNIQUE_T_INDICES) | OM_SLOT(OM_UNIQUE_T_INVERSE) |
                     OM_SLOT(OM_UNIQUE_T_COUNTS) | OM_SLOT(OM_UNIQUE_T_COUNT)
};
enum { OM_UNIQUE_P_AXIS = 0, OM_UNIQUE_P_SORTED = 1, OM_UNIQUE_NPARAMS = 2 };

/* TFIDF (vector unit): ONNX TfIdfVectorizer (common/tfidf.h states the
 * count and the weighting).
 *   tensors: x ND i32 or i64 [C] or [B, C], table ND i64 [ngrams, width]
 *   (width >= 3; row g: n, the output position, n items), weights ND f32
 *   [outs] or OM_NONE (1s), y ND f32 [outs] or [B, outs] (x's rank).
 *   params: mode (0 TF, 1 IDF, 2 TFIDF), max_skip (>= 0).
 *   A table row outside 1 <= n <= width - 2, 0 <= position < outs counts
 *   nothing. block_dim 1. */
enum {
  OM_TFIDF_T_X = 0,
  OM_TFIDF_T_TABLE = 1,
  OM_TFIDF_T_WEIGHTS = 2,
  OM_TFIDF_T_Y = 3,
  OM_TFIDF_NTENSORS = 4
};
enum { OM_TFIDF_WRITES = OM_SLOT(OM_TFIDF_T_Y) };
enum { OM_TFIDF_P_MODE = 0, OM_TFIDF_P_MAX_SKIP = 1, OM_TFIDF_NPARAMS = 2 };

/* SCATTER (vector unit): ScatterElements / ScatterND / TensorScatter. y starts as a copy
 *   of data, then each update in C order of updates is combined into y.
 *   tensors: data ND, indices ND (i32 or i64), updates ND, y ND with
 *   data's dims; data, updates and y one dtype (f16, f32, f64, i8, u8,
 *   i16, u16, i32, u32, i64, u64 or bool).
 *   params: mode: 0 ScatterElements, 1 ScatterND, 2 TensorScatter; axis
 *   (mode 0: 0..rank-1; mode 1: 0; mode 2: 1..rank-1); reduction: 0 none
 *   (the update replaces), 1 add, 2 mul, 3 max, 4 min (mode 2: 0);
 *   circular (mode 2: 0|1, else 0).
 *   ScatterElements: indices and updates share dims and data's rank,
 *   every dim but the axis at most data's; update p goes to p with its
 *   axis coordinate replaced by indices[p]. ScatterND: indices [J..., k]
 *   (1 <= k <= rank), updates dims = indices dims[:-1] + data dims[k:];
 *   the slice updates[J, :] goes to y[indices[J, 0..k), :].
 *   TensorScatter (a KV-cache write): indices are the write positions,
 *   [data dims[0]] (one per batch entry), or OM_NONE for all 0; updates
 *   have data's dims but a shorter (or equal) axis; update p goes to p
 *   with its axis coordinate a replaced by w + a, w = indices[p's dim 0],
 *   taken modulo the axis's extent when circular, else dropped when
 *   outside it. Indices of modes 0 and 1 wrap
 *   as GATHER's; an update with one out of range is dropped. Floats
 *   combine in their own dtype (f16 as f32, rounded once), integers in
 *   64 bits (wrapping, stored truncated),
 *   bool as 0/1 (add = or, mul = and).
 *   Block unit: y elements. Block b copies its range of data, then walks
 *   every update in order and applies those landing in its range, so
 *   with duplicate indices the last update wins (reduction none)
 *   whatever block_dim is. */
enum {
  OM_SCATTER_T_DATA = 0,
  OM_SCATTER_T_INDICES = 1, /* OM_NONE: TensorScatter writing at 0 */
  OM_SCATTER_T_UPDATES = 2,
  OM_SCATTER_T_Y = 3,
  OM_SCATTER_NTENSORS = 4,
};
enum { OM_SCATTER_WRITES = OM_SLOT(OM_SCATTER_T_Y) };
enum {
  OM_SCATTER_P_MODE = 0,
  OM_SCATTER_P_AXIS = 1,
  OM_SCATTER_P_REDUCTION = 2,
  OM_SCATTER_P_CIRCULAR = 3,
  OM_SCATTER_NPARAMS = 4,
};

/* CUMSUM (vector unit): inclusive or exclusive running sum or product.
 *   tensors: x ND, y ND (x's dims); x and y one dtype (f16, f32, f64, i32,
 *   i64, u32, u64) or f16/f32.
 *   params: axis (0..rank-1), exclusive (0|1), reverse (0|1), op: 0 sum, 1
 *   product.
 *   y[.., j, ..] combines x[.., i, ..] for i <= j (i >= j when reverse;
 *   strictly when exclusive, the empty case giving 0 or 1). f16 and f32
 *   accumulate in f32, f64 in f64, integers in 64 bits (wrapping). Block unit:
 *   lines (the product of x's dims other than the axis). */
enum { OM_CUMSUM_T_X = 0, OM_CUMSUM_T_Y = 1, OM_CUMSUM_NTENSORS = 2 };
enum { OM_CUMSUM_WRITES = OM_SLOT(OM_CUMSUM_T_Y) };
enum {
  OM_CUMSUM_P_AXIS = 0,
  OM_CUMSUM_P_EXCLUSIVE = 1,
  OM_CUMSUM_P_REVERSE = 2,
  OM_CUMSUM_P_OP = 3,
  OM_CUMSUM_NPARAMS = 4,
};

/* ONEHOT (vector unit): y = off, with on where the axis coordinate
 *   equals the index.
 *   tensors: indices ND (f16, f32, f64, i8, u8, i16, u16, i32, u32, i64,
 *   u64), values ND of 2 elements [off, on] in y's dtype, y ND (any dtype
 *   of 1, 2, 4 or 8 bytes).
 *   params: axis (0..y rank-1), depth (>= 0).
 *   y dims = indices dims with depth inserted at the axis. A float index
 *   is truncated toward zero; an index in [-depth, 0) counts from the
 *   end; others outside [0, depth) give a row of off. Block unit: y
 *   elements. */
enum { OM_ONEHOT_T_INDICES = 0, OM_ONEHOT_T_VALUES = 1, OM_ONEHOT_T_Y = 2, OM_ONEHOT_NTENSORS = 3 };
enum { OM_ONEHOT_WRITES = OM_SLOT(OM_ONEHOT_T_Y) };
enum { OM_ONEHOT_P_AXIS = 0, OM_ONEHOT_P_DEPTH = 1, OM_ONEHOT_NPARAMS = 2 };

/* WPACK (vector unit): convolution weights computed at run time packed
 *   into the layout CONV2D, DWCONV or CONV3D reads.
 *   tensors: w ND [Cout, Cin/G, KH, KW] (ONNX Conv weights), dst:
 *   FRACTAL_Z [Cout, Cin, KH, KW] (G = 1), FRACTAL_Z_G [G, Cout/G, Cin/G,
 *   KH, KW] (common/conv_group.h), or NC1HWC0 with logical dims [1, Cout,
 *   KH, KW] (depthwise, Cin/G = 1); or w ND [Cout, Cin, KD, KH, KW] and
 *   dst FRACTAL_Z_3D of those dims (format 2.4). dtypes f16/f32 in any
 *   combination.
 *   params: none. Entries outside the weights (padding channels, inputs
 *   outside a group) are written as zero. Block unit: output channel rows
 *   padded to blocks of 16, ceil(Cout / 16) * 16. */
enum { OM_WPACK_T_W = 0, OM_WPACK_T_DST = 1, OM_WPACK_NTENSORS = 2 };
enum { OM_WPACK_WRITES = OM_SLOT(OM_WPACK_T_DST) };
enum { OM_WPACK_NPARAMS = 0 };

/* LAYERNORM (vector unit): LayerNormalization, or RMSNormalization, of
 *   the rows of s = x + residual (a residual Add fused in) or of x.
 *   tensors: x ND, scale ND or OM_NONE, bias ND or OM_NONE, residual ND or
 *   OM_NONE, y ND, sum ND or OM_NONE (only with a residual).
 *   x, residual, y and sum have one dims; x, residual and sum one dtype,
 *   f16 or f32; y f16 or f32; scale and bias f16 or f32, D elements each
 *   (any dims; C order is the row's), where D, the row, is the product of
 *   x's dims from `axis` on (D >= 1).
 *   params: axis (0..rank-1); epsilon (f32 bits, finite, >= 0); rms (0|1).
 *   Each row r (rows: the product of x's dims before axis): s = x[r] +
 *   residual[r] rounded to x's dtype, or x[r]; sum[r] = s; in f32, mean =
 *   sum(s) / D (0 when rms), var = sum((s - mean)^2) / D, y[r] = (s -
 *   mean) / sqrt(var + epsilon) * scale + bias (scale 1, bias 0 when
 *   absent). A row and one each of scale and bias are staged in the UB as
 *   f32: the compiler guarantees UB >= 3 * D * 4. Block unit: rows. */
enum {
  OM_LAYERNORM_T_X = 0,
  OM_LAYERNORM_T_SCALE = 1,    /* or OM_NONE */
  OM_LAYERNORM_T_BIAS = 2,     /* or OM_NONE */
  OM_LAYERNORM_T_RESIDUAL = 3, /* or OM_NONE */
  OM_LAYERNORM_T_Y = 4,
  OM_LAYERNORM_T_SUM = 5, /* or OM_NONE */
  OM_LAYERNORM_NTENSORS = 6,
};
enum { OM_LAYERNORM_WRITES = OM_SLOT(OM_LAYERNORM_T_Y) | OM_SLOT(OM_LAYERNORM_T_SUM) };
enum {
  OM_LAYERNORM_P_AXIS = 0,
  OM_LAYERNORM_P_EPSILON = 1,
  OM_LAYERNORM_P_RMS = 2,
  OM_LAYERNORM_NPARAMS = 3
};

/* ATTENTION (cube unit, with the vector unit's softmax): y = softmax(scale
 *   * q k^T + bias0 + bias1, masked) v, batched, never storing the scores.
 *   tensors: q ND [..., Sq, D], k ND [..., Skv, D] (k_trans 0) or [..., D,
 *   Skv] (k_trans 1), v ND [..., Skv, Dv], bias0 and bias1 ND or OM_NONE,
 *   y ND [..., Sq, Dv].
 *   q, k, v one dtype (f16: fp16 operands, fp32 accumulation, as the cube;
 *   f32 throughout), each of rank >= 2; the dims before the last two are
 *   batch dims, broadcasting numpy-style (right-aligned, 1 repeats) to y's
 *   (as MATMUL's). A bias (f16/f32, rank <= y's) broadcasts numpy-style to
 *   [y's batch..., Sq, Skv]. y f16 or f32. Sq, Skv, D, Dv >= 1.
 *   params: scale (f32 bits, finite); k_trans (0|1); causal (0|1),
 *   causal_offset (int32; 0 without causal): with causal, query i sees
 *   only keys j <= i + causal_offset; zero_masked (0|1); tile_q, tile_kv
 *   (multiples of 16 in 16..4096).
 *   Score (i, j) = scale * sum_d q[i][d] k[j][d] (f32, fp16 products
 *   exact) + the biases at (i, j), or -inf where causal hides key j. Row
 *   i's softmax over j, in f32 with the vector unit's exp, times v, is
 *   y[i]; a row whose every score is -inf gives 0 with zero_masked, else
 *   NaN (Softmax's 0/0).
 *   The tiles are batch x ceil(Sq / tile_q) query blocks, numbered
 *   batch-major (batch = the product of y's batch dims). Block unit: tiles.
 *   A tile stages its tile_q rows of q in L0A and walks the keys in blocks
 *   of tile_kv (online softmax: a running max and sum per row in f32, the
 *   output accumulators rescaled when the max grows): the block's k rows
 *   into L0B, its scores into L0C, their exponentials (rounded to q's
 *   dtype, the cube's operand) into the UB, then the block's v rows into
 *   L0B and their product into the output accumulators in L0C. Under
 *   causal, key blocks past the tile's last visible key are skipped. The
 *   compiler guarantees (esize = dtype_size(q.dtype), Dv16 = Dv rounded up
 *   to 16, W = max(tile_kv, D, Dv16)):
 *   L0A >= tile_q * D * esize,  L0B >= tile_kv * max(D, Dv16) * esize,
 *   L0C >= tile_q * (tile_kv + Dv16) * 4,
 *   UB  >= (tile_q * (tile_kv + 2) + W) * 4.
 *   Views (format 2.7): views has bit t set (q 0, k 1, v 2, y 3) when
 *   operand t is read (y: written) through strides instead of in C order:
 *   its tensor's dims are the operand's logical dims, rank 2..4, and its
 *   element (i_0, .., i_r-1) lies i_r-1 + sum_d<r-1 i_d * stride_d
 *   elements from the tensor's start (the last dim is contiguous). Its
 *   params[view + 4t ..] hold stride_0 .. stride_r-2 (>= 0; 0 past them)
 *   and, at view + 4t + 3, its span: the elements from the tensor's start
 *   to the end of the tensor it views (a Slice / Reshape / Transpose chain
 *   folded into the task: heads read from the in-projection's output,
 *   merged into the out-projection's input). Every element reached lies in
 *   the span, the span in the WORKSPACE region; a dim of 1 repeats (its
 *   stride is not used). A y view reaches each element once. An operand
 *   without its bit has params[view + 4t .. + 3] = 0. */
enum {
  OM_ATTENTION_T_Q = 0,
  OM_ATTENTION_T_K = 1,
  OM_ATTENTION_T_V = 2,
  OM_ATTENTION_T_BIAS0 = 3, /* or OM_NONE */
  OM_ATTENTION_T_BIAS1 = 4, /* or OM_NONE */
  OM_ATTENTION_T_Y = 5,
  OM_ATTENTION_NTENSORS = 6,
};
enum { OM_ATTENTION_WRITES = OM_SLOT(OM_ATTENTION_T_Y) };
enum {
  OM_ATTENTION_P_SCALE = 0, /* f32 bits */
  OM_ATTENTION_P_K_TRANS = 1,
  OM_ATTENTION_P_CAUSAL = 2,
  OM_ATTENTION_P_CAUSAL_OFFSET = 3,
  OM_ATTENTION_P_ZERO_MASKED = 4,
  OM_ATTENTION_P_TILE_Q = 5,
  OM_ATTENTION_P_TILE_KV = 6,
  OM_ATTENTION_P_VIEWS = 7, /* bit t: operand t (OM_ATTENTION_V_*) is a view */
  OM_ATTENTION_P_VIEW = 8,  /* 4 per operand: 3 strides, then the span */
  OM_ATTENTION_NPARAMS = 24,
};
enum {
  OM_ATTENTION_V_Q = 0,
  OM_ATTENTION_V_K = 1,
  OM_ATTENTION_V_V = 2,
  OM_ATTENTION_V_Y = 3,
  OM_ATTENTION_NVIEWS = 4
};

/* RECURRENCE (cube unit for h R^T, vector unit for the gates): one
 *   direction of an LSTM, GRU or RNN over every time step, the state kept
 *   in the UB between steps (one task instead of a dozen per step).
 *   tensors: xw ND [T, B, G*H] (x W^T + Wb of every step, computed before
 *   by one MATMUL), rt ND [H, G*H] (R^T), rb ND [G*H] or OM_NONE, h0 and
 *   c0 ND [B, H] or OM_NONE (c0 only for an LSTM), y ND [T, B, H], y_h ND
 *   [B, H], y_c ND [B, H] (an LSTM's; OM_NONE for the other cells).
 *   One dtype for all, f16 or f32 (f16: fp16 operands of h R^T, fp32
 *   accumulation, as the cube). T, B, H >= 1.
 *   params: cell (0 LSTM: G = 4, gate blocks i o f c; 1 GRU: G = 3, z r h;
 *   2 RNN: G = 1), reverse (0|1: the steps run T-1 .. 0),
 *   linear_before_reset (0|1, GRU only).
 *   Per batch row and step t, in f32, with g = xw[t] + h rt + rb and
 *   sig(x) = om_vsigmoid(x), tanh(x) = 2 sig(2x) - 1 (common/vmath.h):
 *   LSTM c = sig(gf) c + sig(gi) tanh(gc), h = sig(go) tanh(c); GRU z =
 *   sig(gz), r = sig(gr), n = tanh(xw_h + (r h) rt_h + rb_h) (r h rounded
 *   to the operand dtype; or with
 *   linear_before_reset tanh(xw_h + r (h rt_h + rb_h))), h = (1 - z) n +
 *   z h, where rt_h are rt's last H columns and the z, r gates use only
 *   h rt's first 2H; RNN h = tanh(g). Each step's h is rounded to y's
 *   dtype and stored as y[t] (the next step reads it back); c stays f32
 *   and is rounded once into y_c; y_h is the last step's h. h0, c0 absent:
 *   0. Block unit: batch rows B (each runs every step of its rows).
 *   The compiler guarantees UB >= (2G + 3) * H * 4 (the gate accumulators,
 *   the recurrent bias, h, c and one more row, in f32). */
enum {
  OM_RECURRENCE_T_XW = 0,
  OM_RECURRENCE_T_RT = 1,
  OM_RECURRENCE_T_RB = 2, /* or OM_NONE */
  OM_RECURRENCE_T_H0 = 3, /* or OM_NONE */
  OM_RECURRENCE_T_C0 = 4, /* or OM_NONE */
  OM_RECURRENCE_T_Y = 5,
  OM_RECURRENCE_T_Y_H = 6,
  OM_RECURRENCE_T_Y_C = 7, /* or OM_NONE */
  OM_RECURRENCE_NTENSORS = 8,
};
enum {
  OM_RECURRENCE_WRITES =
      OM_SLOT(OM_RECURRENCE_T_Y) | OM_SLOT(OM_RECURRENCE_T_Y_H) | OM_SLOT(OM_RECURRENCE_T_Y_C)
};
enum { OM_RECURRENCE_LSTM = 0, OM_RECURRENCE_GRU = 1, OM_RECURRENCE_RNN = 2 };
enum {
  OM_RECURRENCE_P_CELL = 0,
  OM_RECURRENCE_P_REVERSE = 1,
  OM_RECURRENCE_P_LINEAR_BEFORE_RESET = 2,
  OM_RECURRENCE_NPARAMS = 3,
};

/* AIPP (vector unit): the image preprocessing of atc's --insert_op_conf,
 *   the model's first task on an image input: raw uint8 pixels as a camera
 *   or decoder delivers them in, the model's first layer's input out.
 *   tensors: src ND uint8 (the model input: the raw images, one after
 *   another), params ND uint8 [OM_AIPP_PARAMS_BYTES] (an om_aipp_params
 *   record: in WEIGHTS for static AIPP, a model input for dynamic AIPP, set
 *   by the application per run), y [N, C, H, W] f16 or f32, NC1HWC0 or ND.
 *   params: none (the record says everything).
 *   Per image n (src bytes [n*S, (n+1)*S), S = om_aipp_image_bytes of the
 *   record's format and size) and output pixel (h, w): when (h, w) lies in
 *   the padding (h < pad_top, h >= H - pad_bottom, w < pad_left, w >= W -
 *   pad_right), every channel is pad_value. Otherwise the source pixel is
 *   (crop_y + h - pad_top, crop_x + w - pad_left) (crop off: crop_x =
 *   crop_y = 0), and in the order the hardware applies them:
 *   1. read its channels p[0..2] (YUV400: p[0] only) as integers 0..255:
 *      YUV420SP_U8 (NV12): Y plane of src_w*src_h bytes, then src_h/2 rows
 *      of src_w/2 interleaved (U, V) pairs: p = (Y, U, V); XRGB8888_U8: 4
 *      bytes a pixel (X, R, G, B), or (R, G, B, X) with ax_swap: p = (R,
 *      G, B); RGB888_U8: 3 bytes a pixel: p = (R, G, B); YUV400_U8: one
 *      byte: p = (Y).
 *   2. swap: rbuv_swap exchanges p[1] and p[2] of YUV420SP (NV21: V
 *      before U) and p[0] and p[2] of the RGB formats (BGR).
 *   3. csc (3 channels): q[i] = clamp(((sum_j matrix[i][j] * (p[j] -
 *      input_bias[j])) >> 8) + output_bias[i], 0, 255) in 32-bit integers,
 *      >> an arithmetic shift (floor); else q = p.
 *   4. channel c of y = ((float)(q[c] - mean[c]) - min[c]) * var_reci[c],
 *      in f32 (each operation rounded to f32), then rounded once to y's
 *      dtype (f16: to nearest even).
 *   The image is src_w x src_h; crop_x + crop_w <= src_w, crop_y + crop_h
 *   <= src_h; crop_w + pad_left + pad_right = W, crop_h + pad_top +
 *   pad_bottom = H (crop off: crop_w = src_w, crop_h = src_h); C = 3 (1
 *   for YUV400, which has no csc); YUV420SP has even src_w, src_h, crop_x
 *   and crop_y. The loader checks a static record; omrt_execute checks a
 *   dynamic one before it runs any task, and its images must fit src:
 *   N * S <= src bytes. NC1HWC0 lanes past C are written 0. Block unit:
 *   output rows, N*H. */
enum { OM_AIPP_T_SRC = 0, OM_AIPP_T_PARAMS = 1, OM_AIPP_T_Y = 2, OM_AIPP_NTENSORS = 3 };
enum { OM_AIPP_WRITES = OM_SLOT(OM_AIPP_T_Y) };
enum { OM_AIPP_NPARAMS = 0 };

typedef enum om_aipp_format {
  OM_AIPP_YUV420SP_U8 = 1,
  OM_AIPP_XRGB8888_U8 = 2,
  OM_AIPP_RGB888_U8 = 3,
  OM_AIPP_YUV400_U8 = 4,
} om_aipp_format;

typedef struct om_aipp_params {                                 /* 192 bytes: AIPP's record */
  uint32_t input_format;                                        /* om_aipp_format */
  int32_t src_w, src_h;                                         /* pixels, >= 1 */
  uint8_t csc, rbuv_swap, ax_swap, crop, padding, reserved0[3]; /* switches, 0|1 */
  int32_t crop_x, crop_y, crop_w, crop_h;                       /* pixels */
  int32_t pad_left, pad_right, pad_top, pad_bottom;             /* pixels, >= 0 */
  int32_t matrix[3][3];                                         /* csc, -32768..32767 */
  int32_t input_bias[3];                                        /* csc, 0..255 */
  int32_t output_bias[3];                                       /* csc, 0..255 */
  int32_t mean[4];                                              /* -32768..32767; [3] unused */
  float min[4], var_reci[4];                                    /* finite; [3] unused */
  float pad_value;                                              /* finite */
  uint32_t reserved[7];                                         /* zero */
} om_aipp_params;
enum { OM_AIPP_PARAMS_BYTES = 192, OM_AIPP_MAX_SIDE = 8192 };

/* Bytes of one image of `format`, w x h pixels (0 for a bad format). */
static inline uint64_t om_aipp_image_bytes(uint32_t format, uint64_t w, uint64_t h) {
  switch (format) {
  case OM_AIPP_YUV420SP_U8: return w * h * 3 / 2;
  case OM_AIPP_XRGB8888_U8: return w * h * 4;
  case OM_AIPP_RGB888_U8: return w * h * 3;
  case OM_AIPP_YUV400_U8: return w * h;
  default: return 0;
  }
}

/* Steps 1-3 above for one output pixel: the channels of source pixel
 * (x, y) of image `img` (om_aipp_image_bytes of p's format and size),
 * read, swapped and, with csc on, converted, into q[0..2] (0..255; YUV400
 * leaves q[1] = q[2] = 0). The one transcription of those steps: the
 * evaluator and the kernels call it. */
static inline void om_aipp_pixel(const om_aipp_params *p, const uint8_t *img, int32_t x, int32_t y,
                                 int32_t q[3]) {
  const uint64_t w = (uint64_t)p->src_w, h = (uint64_t)p->src_h, at = (uint64_t)y * w + (uint64_t)x;
  if (p->input_format == OM_AIPP_YUV420SP_U8) {
    const uint8_t *uv = img + w * h + (uint64_t)(y / 2) * w + (uint64_t)(x / 2) * 2;
    q[0] = img[at], q[1] = uv[p->rbuv_swap ? 1 : 0], q[2] = uv[p->rbuv_swap ? 0 : 1];
  } else if (p->input_format == OM_AIPP_XRGB8888_U8 || p->input_format == OM_AIPP_RGB888_U8) {
    const int bpp = p->input_format == OM_AIPP_RGB888_U8 ? 3 : 4;
    const uint8_t *px = img + at * (uint64_t)bpp + (bpp == 4 && !p->ax_swap);
    q[0] = px[p->rbuv_swap ? 2 : 0], q[1] = px[1], q[2] = px[p->rbuv_swap ? 0 : 2];
  } else { /* YUV400 */
    q[0] = img[at], q[1] = q[2] = 0;
  }
  if (!p->csc) return;
  int32_t o[3];
  for (int i = 0; i < 3; i++) {
    int32_t acc = 0;
    for (int j = 0; j < 3; j++)
      acc += p->matrix[i][j] * (q[j] - p->input_bias[j]);
    acc = (acc >> 8) + p->output_bias[i];
    o[i] = acc < 0 ? 0 : acc > 255 ? 255 : acc;
  }
  q[0] = o[0], q[1] = o[1], q[2] = o[2];
}

/* Every kind's tensor access: X(kind, writes, in_place). A kind missing
 * here has none, and the loader refuses its tasks. */
#define OM_TASK_ACCESS(X)                                                                                    \
  X(OM_TASK_TRANSDATA, OM_TRANSDATA_WRITES, 0)                                                               \
  X(OM_TASK_CONV2D, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_DWCONV, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_POOL, OM_POOL_WRITES, 0)                                                                         \
  X(OM_TASK_COPY_SLICE, OM_COPY_SLICE_WRITES, 0)                                                             \
  X(OM_TASK_SOFTMAX, OM_SOFTMAX_WRITES, 0)                                                                   \
  X(OM_TASK_VPROG, OM_VPROG_WRITES, 0)                                                                       \
  X(OM_TASK_REDUCE, OM_REDUCE_WRITES, 0)                                                                     \
  X(OM_TASK_STRIDED_COPY, OM_STRIDED_COPY_WRITES, 0)                                                         \
  X(OM_TASK_GATHER, OM_GATHER_WRITES, 0)                                                                     \
  X(OM_TASK_PAD, OM_PAD_WRITES, 0)                                                                           \
  X(OM_TASK_MATMUL, OM_MATMUL_WRITES, 0)                                                                     \
  X(OM_TASK_RESIZE, OM_RESIZE_WRITES, 0)                                                                     \
  X(OM_TASK_POOL_ND, OM_POOL_ND_WRITES, 0)                                                                   \
  X(OM_TASK_TOPK, OM_TOPK_WRITES, 0)                                                                         \
  X(OM_TASK_SCATTER, OM_SCATTER_WRITES, 0)                                                                   \
  X(OM_TASK_CUMSUM, OM_CUMSUM_WRITES, 0)                                                                     \
  X(OM_TASK_ONEHOT, OM_ONEHOT_WRITES, 0)                                                                     \
  X(OM_TASK_WPACK, OM_WPACK_WRITES, 0)                                                                       \
  X(OM_TASK_LAYERNORM, OM_LAYERNORM_WRITES, 0)                                                               \
  X(OM_TASK_ATTENTION, OM_ATTENTION_WRITES, 0)                                                               \
  X(OM_TASK_CONV3D, OM_CONV_WRITES, OM_CONV_IN_PLACE)                                                        \
  X(OM_TASK_AIPP, OM_AIPP_WRITES, 0)                                                                         \
  X(OM_TASK_QCONV2D, OM_QCONV_WRITES, OM_QCONV_IN_PLACE)                                                     \
  X(OM_TASK_RECURRENCE, OM_RECURRENCE_WRITES, 0)                                                             \
  X(OM_TASK_NONZERO, OM_NONZERO_WRITES, 0)                                                                   \
  X(OM_TASK_NMS, OM_NMS_WRITES, 0)                                                                           \
  X(OM_TASK_UNIQUE, OM_UNIQUE_WRITES, 0)                                                                     \
  X(OM_TASK_TFIDF, OM_TFIDF_WRITES, 0)                                                                       \
  X(OM_TASK_QELTWISE, OM_QELTWISE_WRITES, 0)                                                                 \
  X(OM_TASK_QLUT, OM_QLUT_WRITES, 0)

#endif
