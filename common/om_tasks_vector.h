/* om_tasks_vector.h - the om package's vector-unit task kinds (layout and
 * data movement, vector programs, reductions, pooling, normalization and
 * the rest): what each computes, its slots and params by name, its block
 * unit and the slots it writes. Part of the om format: include om_format.h.
 * docs/om-format.md's task table is the prose version. */
#ifndef COMMON_OM_TASKS_VECTOR_H
#define COMMON_OM_TASKS_VECTOR_H

#include "om_task_kind.h"

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

/* DYNQUANT (vector unit, format 2.13): ONNX's DynamicQuantizeLinear (the
 * DynQuant op, ops.def), x's range and its quantization in one task:
 *   lo, hi = the smallest and largest element of x with 0 included (NaN
 *   when x has a NaN); scale = (hi - lo) / 255, zp = saturate(round(-lo /
 *   scale)) (0 for a NaN quotient), y[i] = saturate(round(x[i] / scale) +
 *   zp) (a NaN quotient counts 0), each step one f32 operation, rounding
 *   half to even, saturating to [0, 255] (common/quant.h).
 *   tensors: x ND f32 or f16 (read as its exact f32 values), y ND u8 (x's
 *   dims), scale ND f32 (one element), zp ND u8 (one element).
 *   params: none.
 *   Block unit: equal runs of x's elements; every block reads all of x for
 *   lo and hi (so the blocks need not meet), quantizes its own run, and
 *   block 0 writes scale and zp. */
enum { OM_DYNQUANT_T_X = 0, OM_DYNQUANT_T_Y = 1, OM_DYNQUANT_T_SCALE = 2, OM_DYNQUANT_T_ZP = 3 };
enum { OM_DYNQUANT_NTENSORS = 4, OM_DYNQUANT_NPARAMS = 0 };
enum {
  OM_DYNQUANT_WRITES = OM_SLOT(OM_DYNQUANT_T_Y) | OM_SLOT(OM_DYNQUANT_T_SCALE) | OM_SLOT(OM_DYNQUANT_T_ZP)
};

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

#endif
