#!/usr/bin/python3
"""Rewrite a float transformer export into ONNX Runtime's fused contrib form (what its transformer optimizer
writes), for checking atc's com.microsoft importers (frontend/onnx_decomp_msft.c) on a whole model.

  LayerNormalization(Add(a, b)) over the last axis    -> SkipLayerNormalization(a, b, gamma, beta)
      with a = Add(MatMul, bias) (the bias a 1-D initializer, the Add read by that Add alone): its
      MatMul's output as input and the bias as SkipLayerNormalization's bias; the sum kept as output 3
      (input_skip_bias_sum) when anything else reads it
  the erf GELU x * (1 + Erf(x / sqrt 2)) * 0.5         -> Gelu(x) (com.microsoft),
      or BiasGelu(MatMul, bias) when x = Add(MatMul, bias) read by the GELU alone
  with --heads N, torch.nn.MultiheadAttention's export (batch first): x -> Transpose(1, 0, 2) ->
      MatMul(in_proj [D, 3D]) + bias -> .. -> Softmax (no mask) -> MatMul -> Transpose(1, 0, 2) -> Reshape ->
      Gemm(out_proj, transB) -> Reshape -> Transpose(1, 0, 2)
                                                    -> Attention(x, in_proj, bias, num_heads N) ->
                                                       MatMul(out_proj^T) + out_proj bias
  then the nodes nothing reads any more go.

  models/make_msft_fused.py models/out/bert_base.onnx bert_msft.onnx --heads 12

Needs python3-onnx and numpy. Prints how many of each it rewrote.
"""
import collections
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"


class Graph:
    def __init__(self, model):
        self.g = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        for n in self.g.node:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                self.consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.index()

    def index(self):
        self.prod = {o: n for n in self.g.node for o in n.output}
        self.cons = {}
        for n in self.g.node:
            for i in n.input:
                self.cons.setdefault(i, []).append(n)
        for o in self.g.output:
            self.cons.setdefault(o.name, []).append(None)

    def made(self, name, op):
        n = self.prod.get(name)
        return n if n is not None and n.op_type == op else None

    def readers(self, name):
        return self.cons.get(name, [])

    def scalar(self, name, value):
        c = self.consts.get(name)
        return c is not None and c.size == 1 and abs(float(c.reshape(-1)[0]) - value) <= 1e-4 * max(1, abs(value))

    def bias_add(self, name):
        """(MatMul output, 1-D bias) when name = Add(MatMul, bias) (either order), else None."""
        add = self.made(name, "Add")
        if add is None:
            return None
        for i in (0, 1):
            mm, b = add.input[i], add.input[1 - i]
            if self.made(mm, "MatMul") is not None and b in self.consts and self.consts[b].ndim == 1:
                return mm, b, add
        return None


def other(node, name):
    return node.input[1] if node.input[0] == name else node.input[0]


def only_reader(G, node, op, perm=None):
    """The one reader of node's output (Shape readers aside) when it is `op` (with that perm), else None."""
    rs = [r for r in G.readers(node.output[0]) if r is None or r.op_type != "Shape"]
    if len(rs) != 1 or rs[0] is None or rs[0].op_type != op:
        return None
    if perm is not None and [list(a.ints) for a in rs[0].attribute if a.name == "perm"] != [perm]:
        return None
    return rs[0]


def in_projection(G, start):
    """(x, W, bias) of the packed in_proj above `start`: MatMul(Transpose(x, [1, 0, 2]), W [D, 3D]) + bias."""
    seen, todo = set(), collections.deque([start])  # breadth first: the nearest one
    while todo:
        name = todo.popleft()
        n = G.prod.get(name)
        if n is None or id(n) in seen or len(seen) > 256:
            continue
        seen.add(id(n))
        if n.op_type == "Add":
            hit = G.bias_add(name)
            if hit:
                mm = G.prod[hit[0]]
                t0 = G.made(mm.input[0], "Transpose")
                w = G.consts.get(mm.input[1])
                if t0 is not None and [list(a.ints) for a in t0.attribute] == [[1, 0, 2]] and w is not None \
                        and w.ndim == 2 and w.shape[1] == 3 * w.shape[0]:
                    return t0.input[0], mm.input[1], hit[1]
        todo += [i for i in n.input if i in G.prod]
    return None


def fuse_attention(G, model, heads):
    """torch MHA blocks -> Attention + the out projection (top comment); returns the new nodes by the node they replace."""
    out = []
    for sm in [n for n in G.g.node if n.op_type == "Softmax"]:
        scores = G.made(sm.input[0], "MatMul")
        pv = only_reader(G, sm, "MatMul")
        t1 = pv and only_reader(G, pv, "Transpose", [1, 0, 2])
        r1 = t1 and only_reader(G, t1, "Reshape")
        gm = r1 and only_reader(G, r1, "Gemm")
        r2 = gm and only_reader(G, gm, "Reshape")
        end = r2 and only_reader(G, r2, "Transpose", [1, 0, 2])
        if scores is None or end is None or len(gm.input) != 3:
            continue
        attrs = {a.name: a for a in gm.attribute}
        if attrs.get("transB") is None or attrs["transB"].i != 1 or "transA" in attrs and attrs["transA"].i:
            continue
        proj = in_projection(G, scores.output[0])
        if proj is None:
            continue
        x, w, bias = proj
        wt = numpy_helper.from_array(np.ascontiguousarray(G.consts[gm.input[1]].T), gm.name + "_weight_t")
        model.graph.initializer.append(wt)
        name = sm.name + "_attention"
        out.append((end, [helper.make_node("Attention", [x, w, bias], [name + "_out"], name=name, domain=MS,
                                           num_heads=heads),
                          helper.make_node("MatMul", [name + "_out", wt.name], [name + "_proj"], name=name + "_proj"),
                          helper.make_node("Add", [name + "_proj", gm.input[2]], [end.output[0]],
                                           name=name + "_bias")]))
    return out


def rewrite(model, heads):
    G = Graph(model)
    drop, add_nodes, count = set(), [], {"SkipLayerNormalization": 0, "Gelu": 0, "BiasGelu": 0, "Attention": 0}
    for end, new in fuse_attention(G, model, heads) if heads else []:
        drop.add(id(end))
        add_nodes.append((end, new))
        count["Attention"] += 1
    for ln in list(G.g.node):
        if ln.op_type != "LayerNormalization" or ln.domain not in ("", "ai.onnx"):
            continue
        axis = next((a.i for a in ln.attribute if a.name == "axis"), -1)
        eps = next((a.f for a in ln.attribute if a.name == "epsilon"), 1e-5)
        s = G.made(ln.input[0], "Add")
        if axis != -1 or s is None or len(ln.input) < 3 or len(ln.output) > 1:
            continue
        a, b, bias = s.input[0], s.input[1], ""
        for x, y in ((a, b), (b, a)):
            hit = G.bias_add(x)
            if hit and G.readers(x) == [s]:
                a, b, bias = hit[0], y, hit[1]
                drop.add(id(hit[2]))
                break
        sum_used = [r for r in G.readers(s.output[0]) if r is not ln]
        outs = [ln.output[0], "", "", s.output[0] if sum_used else ""]
        while outs and not outs[-1]:
            outs.pop()
        add_nodes.append((ln, [helper.make_node("SkipLayerNormalization", [a, b, ln.input[1], ln.input[2]] +
                                                ([bias] if bias else []), outs, name=ln.name + "_skip",
                                                domain=MS, epsilon=eps)]))
        drop.update((id(ln), id(s)))
        count["SkipLayerNormalization"] += 1
    for erf in list(G.g.node):
        if erf.op_type != "Erf":
            continue
        div = G.made(erf.input[0], "Div")
        if div is None or not G.scalar(div.input[1], np.sqrt(2)):
            continue
        x = div.input[0]
        one = G.readers(erf.output[0])
        if len(one) != 1 or one[0] is None or one[0].op_type != "Add" or not G.scalar(other(one[0], erf.output[0]), 1):
            continue
        m1 = G.readers(one[0].output[0])
        if len(m1) != 1 or m1[0] is None or m1[0].op_type != "Mul" or other(m1[0], one[0].output[0]) != x:
            continue
        m2 = G.readers(m1[0].output[0])
        if len(m2) != 1 or m2[0] is None or m2[0].op_type != "Mul" or not G.scalar(other(m2[0], m1[0].output[0]), 0.5):
            continue
        nodes = [div, erf, one[0], m1[0], m2[0]]
        hit = G.bias_add(x)
        if hit and sorted(id(r) for r in G.readers(x)) == sorted((id(div), id(m1[0]))) and id(hit[2]) not in drop:
            new = helper.make_node("BiasGelu", [hit[0], hit[1]], [m2[0].output[0]], name=erf.name + "_gelu", domain=MS)
            nodes.append(hit[2])
            count["BiasGelu"] += 1
        else:
            new = helper.make_node("Gelu", [x], [m2[0].output[0]], name=erf.name + "_gelu", domain=MS)
            count["Gelu"] += 1
        drop.update(id(n) for n in nodes)
        add_nodes.append((m2[0], [new]))
    at = {id(old): new for old, new in add_nodes}
    nodes = []
    for n in G.g.node:
        if id(n) in at:
            nodes += at[id(n)]
        if id(n) not in drop and id(n) not in at:
            nodes.append(n)
    while True:  # what nothing reads any more: the GELUs' constants, the attentions' head split and shapes
        read = {i for n in nodes for i in n.input} | {o.name for o in G.g.output}
        kept = [n for n in nodes if any(o in read for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del G.g.node[:]
    G.g.node.extend(nodes)
    if not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    return count


def main():
    args = sys.argv[1:]
    heads = 0
    if "--heads" in args:
        i = args.index("--heads")
        heads = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    model = onnx.load(args[0])
    count = rewrite(model, heads)
    used = {i for n in model.graph.node for i in n.input}
    kept = [t for t in model.graph.initializer if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    onnx.save(model, args[1])
    print(", ".join(f"{v} {k}" for k, v in count.items()) + f" -> {args[1]}")


if __name__ == "__main__":
    main()
