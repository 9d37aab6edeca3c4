/* om_tasks_cube.h - the om package's cube-unit task kinds (convolutions,
 * int8 convolution, MatMul, attention, recurrent cells): what each
 * computes, its slots and params by name, its block unit and the slots it
 * writes. Part of the om format: include om_format.h.
 * docs/om-format.md's task table is the prose version. */
#ifndef COMMON_OM_TASKS_CUBE_H
#define COMMON_OM_TASKS_CUBE_H

#include "om_task_kind.h"

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
 *   weights are 0), or (format 2.11) x, y and r all ND [N, H, W, C], NHWC,
 *   with Cin and Cout multiples of 16 and groups 1 (a Linear layer's rows as
 *   the pixels, read and written in the MatMul's own layout), w ND i8 [C1out, KG, 16, 4] (the packing below;
 * a depthwise convolution, groups = Cin = Cout, [C1out, KH*KW, 16, 1]: channel co's tap kh*KW + kw at w[co /
 * 16][tap][co % 16]), bias ND i32 [C1out*16], mult ND f32 [C1out*16] (lanes past Cout 0), y NC1HWC0 u8 or i8
 * [N, Cout, Ho, Wo] (padding lanes written 0). Weight packing (K groups of 4 innermost, for vpdpbusd; C0 = 16
 * as the activations'): output channel block nb (channels [16nb, 16nb+16)) reduces over the input channel
 * blocks [c1_lo(nb), c1_hi(nb)) of its groups (common/conv_group.h; all C1in blocks when groups = 1), kb =
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
 *   f32 y (format 2.13): y = fl(fl((float)acc) * mult[m]), no
 *   requantization: an int8 convolution whose consumer is float, mult[m] =
 *   s_x * s_w[m]; y NC1HWC0 (padding lanes written 0) or NHWC f32, y_zp, lo
 *   and hi 0, no residual.
 *   Run-time x zero point (format 2.15, ntensors 8: ONNX's ConvInteger on
 *   constant weights, a dynamically quantized CNN): u8 x; bias is colsum,
 *   each output channel's sum of weights (0 past Cout); mult is scale, ND
 *   f32 of 1 or Cout elements (one per tensor or per output channel, read
 *   at run time); r none; x_zp ND u8 [1] (read at run time) and fbias ND
 *   f32 [C1out*16] or none; y f32 or i32 NC1HWC0. Padding taps read x_zp,
 *   a = acc - x_zp * colsum[m] (wrapping; = the sum of (x - x_zp) * w),
 *   then i32 y = a, or f32 y: f = fl(fl((float)a) * scale[m]) [then f =
 *   fl(f + fbias[m])] [then f = f < f_lo ? f_lo : f] [then f = f > f_hi ?
 *   f_hi : f] (ConvInteger -> Cast -> Mul -> Add -> Relu | Clip). Params
 *   x_zp, y_zp, lo, hi and x_signed 0; params 10 f_clamp (bit 0: f_lo
 *   applies, bit 1: f_hi; 0 for i32 y), 11 f_lo and 12 f_hi (f32 bits,
 *   not NaN, f_lo <= f_hi when both apply; 0 when not).
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
  OM_QCONV_T_X_ZP = 6, /* the run-time x zero point form (format 2.15) */
  OM_QCONV_T_FBIAS = 7,
  OM_QCONV_NTENSORS_DYN = 8,
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
  OM_QCONV_P_F_CLAMP = 10, /* the run-time x zero point form's (format 2.15) */
  OM_QCONV_P_F_LO = 11,    /* f32 bits */
  OM_QCONV_P_F_HI = 12,    /* f32 bits */
  OM_QCONV_NPARAMS = 24,
};

/* QMATMUL (cube unit, format 2.12): the int8 matrix product of the
 * QMatMul op (ops.def), on QCONV2D's packing and tiles as a 1x1
 * convolution whose pixels are x's rows:
 *   acc[n] = sum_k x[k] * w[k][n] + (-x_zp) * colsum[n], exact (int32,
 *   wrapping: the sum of (x - x_zp) * w fits), then y = acc (int32 y), or
 *   y = fl(fl((float)acc) * scale[n]) [+ bias[n]] in f32, each step one f32
 *   operation (f32 y: ONNX's MatMulInteger -> Cast -> Mul -> Add).
 *   tensors: x ND u8 [.., K] (rows M = its elements / K; K a multiple of 4
 *   and at most OM_QCONV_MAX_K), w ND i8 [C1out, KG, 16, 4] (QCONV2D's
 *   packing of the [N, K, 1, 1] weights: KG = ceil(K / 16) * 4), colsum ND
 *   i32 [C1out*16] (each column's sum of w, 0 past N), x_zp ND u8 [1],
 *   scale ND f32 [1] or [N] (one per tensor or per column; OM_NONE for an
 *   int32 y), bias ND f32 [C1out*16] or OM_NONE (not without scale), y ND
 *   f32 or i32 [.., N] (x's dims with the last N). x_zp and scale are read
 *   at run time (DynamicQuantizeLinear's outputs).
 *   params: tile_m (rows per tile, >= 1), tile_n (16-column blocks per
 *   tile, >= 1). Tiles T = ceil(M / tile_m) * ceil(C1out / tile_n),
 *   row-major; block b takes tiles [b*T / block_dim, (b+1)*T / block_dim). */
enum {
  OM_QMATMUL_T_X = 0,
  OM_QMATMUL_T_W = 1,
  OM_QMATMUL_T_COLSUM = 2,
  OM_QMATMUL_T_X_ZP = 3,
  OM_QMATMUL_T_SCALE = 4,
  OM_QMATMUL_T_BIAS = 5,
  OM_QMATMUL_T_Y = 6,
  OM_QMATMUL_NTENSORS = 7,
};
enum { OM_QMATMUL_WRITES = OM_SLOT(OM_QMATMUL_T_Y) };
/* QMATMUL with a run-time w (format 2.14: colsum is OM_NONE): the batched
 *   product of two int8 activations (a QDQ model's attention MatMuls:
 *   DequantizeLinear of both operands -> MatMul [-> QuantizeLinear]):
 *   x ND u8 or i8 and w ND u8 or i8, each read through its permutation
 *   perm_a / perm_b (a Transpose folded in; common/matmul_geom.h's code, 0
 *   none), then x as [.., M, K] and w as [.., K, N] (ranks >= 2), their
 *   batch dims broadcasting numpy-style to y's [.., M, N]; x_zp ND of one
 *   element of x's dtype, w_zp a param in w's dtype range:
 *   acc[m][n] = sum_k (x[m][k] - x_zp) * (w[k][n] - w_zp), exact in int32
 *   (K at most OM_QMATMUL_MAX_K_ACT, so that it fits), then y = acc (i32 y,
 *   no scale), y = fl(fl((float)acc) * scale) (f32 y), or y =
 *   q_requant(acc, scale, y_zp, lo, hi) (u8 or i8 y: scale = s_x * s_w /
 *   s_y, each product rounded to f32; lo <= hi within y's dtype range);
 *   scale ND f32 of one element, no bias. A block packs w's columns of each
 *   (batch, column tile) it runs into its core's L1 (tile_n * 16 columns x
 *   ceil(K / 16) * 16 bytes: at most the SoC's L1), and when x's rows are
 *   not contiguous along K or K is not a multiple of 4, copies a tile's
 *   rows of x into L0A (tile_m rows of ceil(K / 4) * 4 bytes: at most the
 *   SoC's L0A). Tiles T = batch * ceil(C1out / tile_n) * ceil(M / tile_m),
 *   batch outermost, then column tiles, then row tiles (the tiles of one
 *   column tile share the packing); block b takes tiles [b*T / block_dim,
 *   (b+1)*T / block_dim). */
enum { OM_QMATMUL_MAX_K_ACT = 32768 }; /* 32768 * 255 * 255 < 2^31 */
enum {
  OM_QMATMUL_P_TILE_M = 0,
  OM_QMATMUL_P_TILE_N = 1,
  OM_QMATMUL_P_W_ZP = 2,   /* run-time w (format 2.14), else 0 */
  OM_QMATMUL_P_Y_ZP = 3,   /* u8 / i8 y, else 0 */
  OM_QMATMUL_P_LO = 4,     /* u8 / i8 y, else 0 */
  OM_QMATMUL_P_HI = 5,     /* u8 / i8 y, else 0 */
  OM_QMATMUL_P_PERM_A = 6, /* run-time w, else 0 */
  OM_QMATMUL_P_PERM_B = 7, /* run-time w, else 0 */
  OM_QMATMUL_NPARAMS = 8,
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

#endif
