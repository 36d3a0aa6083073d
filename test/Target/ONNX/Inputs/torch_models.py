"""Exports models written with torchvision and plain torch.nn (random
weights, fixed seed) to ONNX, with an input and PyTorch's output.

usage: torch_models.py export NAME OUT_DIR [--batch B]
       torch_models.py packed lstm|gru known|runtime OUT_DIR
       torch_models.py compare EXPECTED.npy ACTUAL.npy [--rtol R]

export writes OUT_DIR/NAME.onnx, OUT_DIR/NAME-input.npy (the one input,
named 'x') and OUT_DIR/NAME-expected.npy; --batch B exports with B samples
(dim 0) instead of the model's default. compare prints
'NAME: relative error E <= R: True|False' where E is the largest absolute
difference over the largest absolute expected value.

packed exports a bidirectional LSTM or GRU over sequences of different
lengths: the recurrent node gets input sequence_lens (an initializer
'known', or graph input 'lens' 'runtime'), and the expected outputs are
PyTorch's on the packed batch (pack_padded_sequence): OUT_DIR/KIND-KNOWN
.onnx, -x.npy, -lens.npy, -expected-y.npy (Y padded with zeros) and
-expected-h.npy (the last valid hidden states).

Models (the ONNX ops they exercise):
  mobilenet_v2         torchvision, opset 13: Clip (ReLU6), depthwise Conv
  mobilenet_v3_small   torchvision, opset 13: HardSigmoid + Mul (Hardswish
                       before opset 14)
  mobilenet_v3_small_17  the same at opset 17: HardSwish, HardSigmoid
  groupnorm_cnn        Conv + GroupNorm + SiLU, opset 17 (GroupNorm exports
                       as InstanceNormalization, Reshape, Mul, Add)
  einsum_attention     attention written with torch.einsum: Einsum
  causal_attention     causal mask built with torch.tril (Trilu), argmax
                       of the logits (ArgMax), cumulative positions
                       (CumSum), activations Softsign/SELU/CELU
  lstm_lm              an LSTM language model (embedding, 2-layer LSTM,
                       LM head; token ids as input 'x'): LSTM
  gru_classifier       a bidirectional GRU with initial states: GRU
  moe_router           a top-2 mixture-of-experts layer: TopK,
                       GatherElements
  scatter_cache        scatter_add along the sequence and a KV-cache write
                       (index_put): ScatterElements, ScatterND
  unet                 a small U-Net, opset 13: ConvTranspose (stride 2),
                       Resize (nearest x2, bilinear, bicubic), Pad
                       (reflect, constant), MaxPool, Concat skips
"""
import sys

import numpy as np


def compare(expected_file, actual_file, rtol):
    a = np.load(expected_file)
    b = np.load(actual_file)
    name = expected_file.split("/")[-1].replace("-expected.npy", "")
    if a.shape != b.shape:
        print(f"{name}: shapes differ: {a.shape} vs {b.shape}")
        return 1
    err = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(a))), 1e-30))
    print(f"{name}: relative error {err:.1e} <= {rtol:g}: {err <= rtol}")
    return 0 if err <= rtol else 1


def compare_main():
    rtol = 1e-4
    if "--rtol" in sys.argv:
        rtol = float(sys.argv[sys.argv.index("--rtol") + 1])
    return compare(sys.argv[2], sys.argv[3], rtol)


# Comparing needs numpy only: it runs before torch is imported (2-3 s, which
# each of the test's 19 comparisons paid).
if __name__ == "__main__" and sys.argv[1:2] == ["compare"]:
    sys.exit(compare_main())

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


class EinsumAttention(nn.Module):
    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        b, s, e = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads,
                                      e // self.heads).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (e // self.heads) ** 0.5
        probs = scores.softmax(-1)
        y = torch.einsum("bhqk,bkhd->bqhd", probs, v).reshape(b, s, e)
        return self.out(y)


class CausalAttention(nn.Module):
    def __init__(self, width=32, vocab=16):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.head = nn.Linear(width, vocab)
        self.selu = nn.SELU()
        self.celu = nn.CELU(alpha=0.7)

    def forward(self, x):
        s = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2)
        mask = torch.tril(torch.ones(s, s)) == 0
        scores = scores.masked_fill(mask, float("-inf"))
        y = scores.softmax(-1) @ v
        positions = torch.cumsum(torch.ones_like(x[..., 0]), dim=1)
        y = y + positions.unsqueeze(-1) * 0.01
        y = nn.functional.softsign(y) + self.selu(y) + self.celu(y)
        logits = self.head(y)
        picked = logits.argmax(-1, keepdim=True).float()
        return logits + picked


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab=50, width=16, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x):
        y, _ = self.lstm(self.embed(x))
        return self.head(y)


class GRUClassifier(nn.Module):
    def __init__(self, width=12, hidden=10):
        super().__init__()
        self.gru = nn.GRU(width, hidden, bidirectional=True)
        self.h0 = nn.Parameter(torch.randn(2, 1, hidden))
        self.head = nn.Linear(2 * hidden, 3)

    def forward(self, x):
        y, h = self.gru(x, self.h0.expand(-1, x.shape[1], -1).contiguous())
        return self.head(y[-1]) + h.sum(0).mean()


class MoERouter(nn.Module):
    def __init__(self, width=16, experts=4):
        super().__init__()
        self.router = nn.Linear(width, experts)
        self.experts = nn.ModuleList(nn.Linear(width, width)
                                     for _ in range(experts))

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        weights, picked = probs.topk(2, dim=-1)           # [B, S, 2]
        outs = torch.stack([e(x) for e in self.experts], 2)  # [B, S, E, W]
        index = picked.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1])
        chosen = torch.gather(outs, 2, index)             # [B, S, 2, W]
        return (weights.unsqueeze(-1) * chosen).sum(2)


class ScatterCache(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        b, s, w = x.shape
        y = self.proj(x)
        # Position i goes to (5 i) mod s: a permutation, plus collisions
        # from the second half.
        target = torch.cat([torch.arange(s // 2) * 5 % s,
                            torch.arange(s - s // 2) % 2])
        index = target.view(1, s, 1).expand(b, s, w)
        summed = torch.zeros_like(y).scatter_add(1, index, y)
        cache = torch.zeros(b, s + 4, w)
        cache[:, torch.tensor([1, 3, 4])] = y[:, :3]
        return summed + cache[:, 2:2 + s]


class UNet(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.inc = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(3, c, 3),
                                 nn.ReLU())
        self.down = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(c, 2 * c, 3,
                                                             padding=1),
                                  nn.ReLU())
        self.deeper = nn.Sequential(nn.MaxPool2d(2),
                                    nn.Conv2d(2 * c, 2 * c, 3, padding=1))
        self.up_t = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.up_n = nn.Upsample(scale_factor=2, mode="nearest")
        self.mix = nn.Conv2d(4 * c, c, 3, padding=1)
        self.pad = nn.ZeroPad2d((1, 0, 0, 1))
        self.out = nn.Conv2d(3 * c, 2, 1)

    def forward(self, x):
        a = self.inc(x)                      # [N, c, H, W]
        b = self.down(a)                     # [N, 2c, H/2, W/2]
        d = self.up_n(self.deeper(b))        # [N, 2c, H/2, W/2]
        b = self.mix(torch.cat([b, d], 1))   # [N, c, H/2, W/2]
        u = self.up_t(torch.cat([b, b], 1))  # [N, c, H, W]
        lin = nn.functional.interpolate(b, scale_factor=2, mode="bilinear",
                                        align_corners=False)
        cub = nn.functional.interpolate(b, size=(x.shape[2], x.shape[3]),
                                        mode="bicubic", align_corners=True)
        y = self.out(torch.cat([a + u, lin, cub], 1))
        return self.pad(y)


def build(name):
    """(model, input, opset) for `name`."""
    torch.manual_seed(0)
    if name == "mobilenet_v2":
        import torchvision
        return (torchvision.models.mobilenet_v2(num_classes=10),
                torch.randn(2, 3, 32, 32), 13)
    if name in ("mobilenet_v3_small", "mobilenet_v3_small_17"):
        import torchvision
        return (torchvision.models.mobilenet_v3_small(num_classes=10),
                torch.randn(2, 3, 32, 32), 17 if name.endswith("17") else 13)
    if name == "groupnorm_cnn":
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.SiLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.GroupNorm(4, 8), nn.SiLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
        # Non-trivial affine parameters (GroupNorm starts at 1 and 0).
        with torch.no_grad():
            for m in model:
                if isinstance(m, nn.GroupNorm):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
        return model, torch.randn(2, 3, 16, 16), 17
    if name == "einsum_attention":
        return EinsumAttention(), torch.randn(2, 8, 32), 13
    if name == "causal_attention":
        return CausalAttention(), torch.randn(2, 8, 32), 14
    if name == "lstm_lm":
        return (LSTMLanguageModel(), torch.randint(0, 50, (2, 7)), 13)
    if name == "gru_classifier":
        return GRUClassifier(), torch.randn(5, 2, 12), 13
    if name == "moe_router":
        return MoERouter(), torch.randn(2, 5, 16), 13
    if name == "scatter_cache":
        return ScatterCache(), torch.randn(2, 6, 8), 16
    if name == "unet":
        return UNet(), torch.randn(2, 3, 16, 16), 13
    raise SystemExit("unknown model " + name)


def export(name, out_dir, batch=None):
    model, x, opset = build(name)
    if batch is not None:
        shape = (batch,) + tuple(x.shape[1:])
        x = (torch.randn(shape) if x.dtype.is_floating_point
             else torch.randint(0, int(x.max()) + 1, shape))
    model.eval()
    with torch.no_grad():
        expected = model(x).numpy()
    torch.onnx.export(model, (x,), f"{out_dir}/{name}.onnx",
                      input_names=["x"], output_names=["y"],
                      opset_version=opset)
    np.save(f"{out_dir}/{name}-input.npy", x.numpy())
    np.save(f"{out_dir}/{name}-expected.npy", expected)


def export_packed(kind, lens_mode, out_dir):
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(3)
    seq, batch, width, hidden = 6, 4, 5, 7
    rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(width, hidden,
                                                 bidirectional=True)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            y, state = self.rnn(x)
            return y, state[0] if kind == "lstm" else state

    x = torch.randn(seq, batch, width)
    lens = torch.tensor([6, 2, 4, 1], dtype=torch.int32)
    with torch.no_grad():
        y, state = rnn(pack_padded_sequence(x, lens.long(),
                                            enforce_sorted=False))
        y, _ = pad_packed_sequence(y, total_length=seq)
        h = state[0] if kind == "lstm" else state
    name = f"{out_dir}/{kind}-{lens_mode}"
    torch.onnx.export(Model(), (x,), name + ".onnx", input_names=["x"],
                      output_names=["y", "h"], opset_version=13)
    model = onnx.load(name + ".onnx")
    node = next(n for n in model.graph.node if n.op_type in ("LSTM", "GRU"))
    while len(node.input) < 5:
        node.input.append("")
    node.input[4] = "lens"
    if lens_mode == "known":
        model.graph.initializer.append(
            numpy_helper.from_array(lens.numpy(), "lens"))
    else:
        model.graph.input.append(
            helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]))
    onnx.save(model, name + ".onnx")
    np.save(name + "-x.npy", x.numpy())
    np.save(name + "-lens.npy", lens.numpy())
    np.save(name + "-expected-y.npy", y.numpy())
    np.save(name + "-expected-h.npy", h.numpy())


def main():
    if sys.argv[1] == "export":
        batch = None
        if "--batch" in sys.argv:
            batch = int(sys.argv[sys.argv.index("--batch") + 1])
        export(sys.argv[2], sys.argv[3], batch)
        return 0
    if sys.argv[1] == "packed":
        export_packed(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    return compare_main()


if __name__ == "__main__":
    sys.exit(main())
