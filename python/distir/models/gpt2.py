#!/usr/bin/python3
"""GPT-2 in PyTorch, exported to ONNX for DistIR's importer.

    /usr/bin/python3 python/distir/models/gpt2.py --preset gpt2-test -o gpt2.onnx
    /usr/bin/python3 python/distir/models/gpt2.py --preset gpt2-175b \
        --arch-only -o gpt2-175b.onnx
    /usr/bin/python3 python/distir/models/gpt2.py --layers 2 --width 64 \
        --heads 4 --vocab 128 --seq 8 -o small.onnx

The graph has one input `input_ids` (int64, [batch, seq], both dynamic) and
one output `logits` ([batch, seq, vocab]). Import with
`distir-translate --import-onnx gpt2.onnx --input-shape input_ids=B,S`.

`--arch-only` writes the graph without weight data: the model is built on
PyTorch's `meta` device (no memory for weights), traced with
`export_params=False`, and the weight inputs are then turned into
initializers that carry dims and element type but no data. This is what lets
the 175B preset be written in seconds on a laptop. (Exporting a tiny-width
model and rewriting initializer shapes does not work: the head count and
head size are baked into Reshape constants.)

Tested with Debian's python3-torch 1.13 and python3-onnx 1.12.
"""

import argparse
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

# name: (layers, width, heads, vocab, n_ctx). The paper sizes follow the
# DistIR paper (GPT-2 1.6B, 13B, 175B); vocab and context are GPT-2's.
PRESETS = {
    "gpt2-test": (2, 64, 4, 128, 64),
    "gpt2-tiny": (1, 32, 2, 64, 16),
    "gpt2-small": (12, 768, 12, 50257, 1024),
    "gpt2-1.6b": (24, 2048, 16, 50257, 1024),
    "gpt2-13b": (40, 5120, 40, 50257, 1024),
    "gpt2-175b": (96, 12288, 96, 50257, 2048),
}


class Attention(nn.Module):
    def __init__(self, width, heads, device=None):
        super().__init__()
        self.heads = heads
        self.width = width
        self.c_attn = nn.Linear(width, 3 * width, device=device)
        self.c_proj = nn.Linear(width, width, device=device)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(self.width, dim=2)
        hd = c // self.heads
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        pos = torch.arange(t, device=x.device)
        causal = pos.unsqueeze(1) >= pos.unsqueeze(0)
        att = att.masked_fill(~causal, -1e4)
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).reshape(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, width, heads, device=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width, device=device)
        self.attn = Attention(width, heads, device)
        self.ln_2 = nn.LayerNorm(width, device=device)
        self.c_fc = nn.Linear(width, 4 * width, device=device)
        self.c_proj = nn.Linear(4 * width, width, device=device)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class GPT2(nn.Module):
    def __init__(self, layers, width, heads, vocab, n_ctx, device=None,
                 tie=False):
        # Parameters are created directly on `device`: on "meta" no memory is
        # allocated (building on CPU first would need 4 bytes per parameter).
        super().__init__()
        assert width % heads == 0, "width must be a multiple of heads"
        self.wte = nn.Embedding(vocab, width, device=device)
        self.wpe = nn.Embedding(n_ctx, width, device=device)
        self.blocks = nn.ModuleList(
            Block(width, heads, device) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width, device=device)
        self.lm_head = nn.Linear(width, vocab, bias=False, device=device)
        if tie:
            # HuggingFace's GPT-2: the head reads the token embedding.
            self.lm_head.weight = self.wte.weight

    def forward(self, input_ids):
        t = input_ids.size(1)
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def strip_to_dataless_initializers(path):
    """Turns weight graph inputs (export_params=False) into initializers
    with dims and element type but no data."""
    import onnx
    from onnx import TensorProto

    m = onnx.load(path)
    g = m.graph
    keep = []
    for vi in g.input:
        if vi.name == "input_ids":
            keep.append(vi)
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value for d in tt.shape.dim]
        g.initializer.append(
            TensorProto(name=vi.name, data_type=tt.elem_type, dims=dims))
    del g.input[:]
    g.input.extend(keep)
    # On the meta device every parameter "equals" every other of its shape,
    # so the exporter deduplicates them: later layers read the first layer's
    # weights through Identity nodes. Give each Identity output its own
    # initializer, and fold Transpose(initializer) as do_constant_folding
    # does for the export with weights (nn.Linear stores [out, in]). The
    # graph then has the structure of that export: one set of weights per
    # layer (memory) feeding the matmuls directly (dist-dtp's tensor
    # parallelism finds its Megatron pairs from those).
    inits = {}
    for t in g.initializer:
        inits[t.name] = (t.data_type, list(t.dims))
    kept_nodes = []
    for n in g.node:
        if n.op_type in ("Identity", "Transpose") and len(n.input) == 1 and \
                n.input[0] in inits:
            data_type, dims = inits[n.input[0]]
            perm = list(range(len(dims)))
            if n.op_type == "Transpose":
                perm = next((list(a.ints) for a in n.attribute
                             if a.name == "perm"), perm[::-1])
            inits[n.output[0]] = (data_type, [dims[p] for p in perm])
            continue
        kept_nodes.append(n)
    used = {i for n in kept_nodes for i in n.input} | \
        {o.name for o in g.output}
    del g.node[:]
    g.node.extend(kept_nodes)
    del g.initializer[:]
    g.initializer.extend(
        TensorProto(name=name, data_type=data_type, dims=dims)
        for name, (data_type, dims) in inits.items() if name in used)
    onnx.save(m, path)


def export(args):
    if args.preset:
        layers, width, heads, vocab, n_ctx = PRESETS[args.preset]
    else:
        layers, width, heads, vocab, n_ctx = 2, 64, 4, 128, 64
    layers = args.layers or layers
    width = args.width or width
    heads = args.heads or heads
    vocab = args.vocab or vocab
    n_ctx = args.n_ctx or n_ctx
    seq = args.seq
    if seq > n_ctx:
        sys.exit(f"--seq {seq} exceeds the context length {n_ctx}")
    # (Callers may pass a Namespace without it.)
    tie = getattr(args, "tie_embeddings", False)
    if tie and args.arch_only:
        # On "meta" the exporter deduplicates equal-shaped parameters, and
        # the graph is rebuilt from initializer shapes: the tie is lost.
        sys.exit("--tie-embeddings needs the weights (not --arch-only)")
    device = "meta" if args.arch_only else "cpu"
    torch.manual_seed(args.seed)
    with torch.no_grad():
        model = GPT2(layers, width, heads, vocab, n_ctx, device,
                     tie).eval()
        ids = torch.zeros((args.batch, seq), dtype=torch.int64, device=device)
        # torch.onnx.export cannot turn off the exporter's own shape
        # inference, which reads parameter data (absent on `meta`); the
        # internal _export can (torch 1.13).
        export_fn = torch.onnx.export
        extra = {}
        if args.arch_only:
            export_fn = torch.onnx.utils._export
            extra["onnx_shape_inference"] = False
        export_fn(
            model, (ids,), args.output,
            input_names=["input_ids"], output_names=["logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                          "logits": {0: "batch", 1: "seq"}},
            opset_version=args.opset,
            export_params=not args.arch_only,
            # Folding would store the head's transposed copy of a tied
            # embedding as an initializer of its own, untying them.
            do_constant_folding=not args.arch_only and not tie,
            **extra)
    if args.arch_only:
        strip_to_dataless_initializers(args.output)
    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {args.output}: {layers} layers, width {width}, "
          f"{heads} heads, vocab {vocab}, context {n_ctx}, "
          f"{params / 1e9:.3f}B parameters"
          f"{' (architecture only)' if args.arch_only else ''}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS))
    p.add_argument("--layers", type=int)
    p.add_argument("--width", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--vocab", type=int)
    p.add_argument("--n-ctx", type=int, help="context length (wpe rows)")
    p.add_argument("--seq", type=int, default=8,
                   help="sequence length used for tracing")
    p.add_argument("--batch", type=int, default=1,
                   help="batch size used for tracing")
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--arch-only", action="store_true",
                   help="write the graph without weight data")
    p.add_argument("--tie-embeddings", action="store_true",
                   help="the LM head reads the token embedding "
                   "(HuggingFace's GPT-2)")
    p.add_argument("-o", "--output", required=True)
    export(p.parse_args(argv))


if __name__ == "__main__":
    main()
