#!/usr/bin/python3
"""FLOPs of the cube work in an om package, for bench/run.sh.

Reads the package's JSON (`atc --mode=1 --om X.om --json X.json`) and counts
2 x multiply-accumulates of every task that does matrix work, from its
tensors' logical dims:

  CONV2D     N x Cout x Ho x Wo x (Cin / groups) x KH x KW
  CONV3D     N x Cout x Do x Ho x Wo x Cin x KD x KH x KW
  DWCONV     N x C x Ho x Wo x KH x KW
  MATMUL     prod(y) x K (y holds batch x M x N whatever the operands'
             permutations and row fold; K from b's logical dims)
  ATTENTION  B x Lq x Lk x (D + Dv): the two products Q K^T and P V

This is the work of the model's convolutions and matrix products whatever
the compiler made of them (a MatMul lowered to a 1x1 convolution, an LSTM
unrolled into its steps' products), counted as direct convolution:
Convolutions that run as Winograd F(4x4,3x3) count their direct
multiply-accumulates. Other tasks (pooling, elementwise programs, softmax,
copies) are left out: these are the cube unit's work, the figure GFLOP/s is
quoted against. Prints one line:  flops: <total> (conv <c>, dwconv <d>, matmul <m>)
A task kind that does matrix work and is not counted here is an error (exit 1).

Usage: bench/flops.py X.json
"""
import json
import sys


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# Kinds whose work is matrix products; each must have a rule above.
MATRIX_KINDS = {"CONV2D", "CONV3D", "DWCONV", "MATMUL", "ATTENTION"}


def logical(stored, code):
    """An operand's dims with its perm param applied (common/matmul_geom.h:
    logical dim d is stored dim perm[d], perm[d] in bits [4d, 4d + 4))."""
    code = int(code, 0) if isinstance(code, str) else code
    if not code:
        return stored
    return [stored[(code >> (4 * d)) & 15] for d in range(len(stored))]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        om = json.load(f)
    dims = [t["dims"] for t in om["tensors"]]
    conv = dw = mm = 0
    for t in om["tasks"]:
        kind, ts, p = t["kind"], t["tensors"], t["params"]
        if kind == "CONV2D":
            w, y = dims[ts["w"]], dims[ts["y"]]
            groups = max(1, p.get("groups", 0))
            if groups > 1:  # FRACTAL_Z_G [G, Cout/G, Cin/G, KH, KW]
                cin_g, khkw = w[2], w[3] * w[4]
            else:  # FRACTAL_Z [Cout, Cin, KH, KW]
                cin_g, khkw = w[1], w[2] * w[3]
            conv += 2 * y[0] * y[1] * y[2] * y[3] * cin_g * khkw
        elif kind == "DWCONV":
            w, y = dims[ts["w"]], dims[ts["y"]]  # w NC1HWC0 [1, C, KH, KW]
            dw += 2 * y[0] * y[1] * y[2] * y[3] * w[2] * w[3]
        elif kind == "CONV3D":
            w, y = dims[ts["w"]], dims[ts["y"]]  # FRACTAL_Z_3D [Cout, Cin, KD, KH, KW]
            conv += 2 * prod(y) * w[1] * w[2] * w[3] * w[4]
        elif kind == "MATMUL":
            b, y = dims[ts["b"]], dims[ts["y"]]
            b = logical(b, p.get("perm_b", 0))
            k = b[0] if len(b) == 1 else (b[-1] if p.get("trans_b", 0) else b[-2])
            mm += 2 * prod(y) * k
        elif kind == "ATTENTION":
            q, v = dims[ts["q"]], dims[ts["v"]]  # q [..., Lq, D], v [..., Lk, Dv]
            mm += 2 * prod(q[:-1]) * v[-2] * (q[-1] + v[-1])
        elif kind in MATRIX_KINDS:
            sys.exit(f"flops.py: task kind {kind} does matrix work this script does not count")
    total = conv + dw + mm
    print(f"flops: {total} (conv {conv}, dwconv {dw}, matmul {mm})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
