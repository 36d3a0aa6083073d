"""Trains a plain torch.nn model for a few steps with torch.autograd and
torch.optim, and the same model through DistIR (ONNX import, dist-autodiff,
distir-run), and prints the largest relative differences of the loss and of
the updated weights after each step.

usage: autodiff_vs_torch.py OUTDIR MODEL LOSS OPTIMIZER [STEPS [COMPUTE]]
MODEL: mlp | cnn | encoder | gpt; LOSS: mse | cross-entropy;
OPTIMIZER: sgd | momentum | adam | adamw; COMPUTE: f32 (default) | bf16 |
f16, dist-autodiff's mixed precision, compared with PyTorch's fp32 run
(relative error <= 3e-2 instead of 1e-4).
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

HYPER = {"lr": 0.05, "momentum": 0.9, "beta1": 0.9, "beta2": 0.999,
         "eps": 1e-8, "weight_decay": 0.01}


class GPT(nn.Module):
    """A GPT-style decoder: token and position embeddings, causal
    self-attention blocks, an LM head tied to the token embedding."""

    def __init__(self, vocab=11, dim=16, heads=2, layers=2, seq=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.1)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0,
                                           batch_first=True, norm_first=True,
                                           activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, layers,
                                            enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.register_buffer(
            "mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, ids):
        h = self.tok(ids) + self.pos
        h = self.blocks(h, mask=self.mask)
        return self.head(self.norm(h))


def build(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16),
                              nn.GELU(), nn.Linear(16, 5))
        x = torch.randn(4, 8)
    elif name == "cnn":
        # BatchNorm after the ReLU: directly after a convolution, the
        # exporter would fold it into the convolution's weights.
        model = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(4),
            nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=2, padding=1),
            nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 5))
        # Non-trivial running statistics (the model runs in eval mode).
        bn = model[2]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
        x = torch.randn(2, 3, 8, 8)
    elif name == "decoder":
        # Transposed convolutions (stride 2 with output padding, stride 3
        # with dilation 2 and groups): each stride phase is its own
        # convolution in the imported program.
        model = nn.Sequential(
            nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1,
                               output_padding=1), nn.Tanh(),
            nn.ConvTranspose2d(4, 4, 2, stride=3, dilation=2, groups=2),
            nn.Flatten(), nn.Linear(4 * 24 * 24, 5))
        x = torch.randn(2, 3, 4, 4)
    elif name == "encoder":
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                           batch_first=True)
        model = nn.Sequential(
            nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
            nn.Linear(16, 5))
        x = torch.randn(2, 6, 16)
    elif name == "gpt":
        model = GPT()
        x = torch.randint(0, 11, (2, 6))
    else:
        raise SystemExit("unknown model " + name)
    # Cloned layers start equal, and the exporter would merge equal
    # initializers into one (tied) weight: make every parameter distinct.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape))
    model.eval()  # no dropout; BatchNorm uses its running statistics
    return model, x


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
        raise SystemExit(1)
    return r.stdout


def main():
    out, name, loss, opt = sys.argv[1:5]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    precision = sys.argv[6] if len(sys.argv) > 6 else "f32"
    tolerance = 1e-4 if precision == "f32" else 3e-2
    os.makedirs(out, exist_ok=True)
    model, x = build(name)
    with torch.no_grad():
        y = model(x)
    torch.manual_seed(1)
    if loss == "mse":
        target = torch.randn(y.shape)
        lossfn = nn.MSELoss()
        compute = lambda out: lossfn(out, target)
    else:
        target = torch.randint(0, y.shape[-1], y.shape[:-1])
        lossfn = nn.CrossEntropyLoss()
        compute = lambda out: lossfn(out.reshape(-1, out.shape[-1]),
                                     target.reshape(-1))
    onnx_path = os.path.join(out, "model.onnx")
    torch.onnx.export(model, (x,), onnx_path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      do_constant_folding=False)

    # DistIR: import, differentiate, then run the step `steps` times.
    h = HYPER
    options = (f"loss={loss} optimizer={opt} lr={h['lr']} "
               f"momentum={h['momentum']} beta1={h['beta1']} "
               f"beta2={h['beta2']} eps={h['eps']} ")
    decay = h["weight_decay"] if opt in ("adam", "adamw") else 0.0
    options += f"weight-decay={decay} compute={precision}"
    mlir = os.path.join(out, "step.mlir")
    imported = run(["distir-translate", "--import-onnx", onnx_path])
    # Buffers (a causal mask) are initializers like the weights: freeze
    # them, except BatchNorm statistics, which the importer marks itself.
    buffers = dict(model.named_buffers())
    frozen = [n for n in buffers
              if f'dist.name = "{n}"' in imported and "running_" not in n]
    if frozen:
        options += " frozen=" + ",".join(frozen)
    run(["distir-opt", "--dist-autodiff=" + options, "-o", mlir],
        input=imported)
    # Argument names of the step, in order.
    with open(mlir) as f:
        header = next(l for l in f if "func.func" in l).split(") ->")[0]
    names = re.findall(r'dist.name = "([^"]*)"', header)
    params = dict(model.named_parameters())
    values = {"x": x.numpy(), "target": target.numpy()}
    for n in names:
        if n in params:
            values[n] = params[n].detach().numpy().copy()
        elif n.endswith(".m") or n.endswith(".v"):
            values[n] = np.zeros_like(params[n[:-2]].detach().numpy())
        elif n in buffers:  # BatchNorm statistics: frozen arguments
            values[n] = buffers[n].numpy().copy()
        elif n == "step":
            values[n] = np.zeros((), np.float32)
        elif n not in values:
            raise SystemExit("no value for argument " + n)

    if opt == "sgd":
        torch_opt = torch.optim.SGD(model.parameters(), lr=h["lr"])
    elif opt == "momentum":
        torch_opt = torch.optim.SGD(model.parameters(), lr=h["lr"],
                                    momentum=h["momentum"])
    elif opt == "adam":
        torch_opt = torch.optim.Adam(model.parameters(), lr=h["lr"],
                                     eps=h["eps"], weight_decay=decay)
    else:
        torch_opt = torch.optim.AdamW(model.parameters(), lr=h["lr"],
                                      eps=h["eps"], weight_decay=decay)

    worst = 0.0
    for step in range(steps):
        torch_opt.zero_grad()
        ref_loss = compute(model(x))
        ref_loss.backward()
        if step == 0:
            # The key bias of attention has a zero gradient (softmax ignores
            # a shift): both sides see only rounding noise there, which
            # Adam without L2 decay (adamw) scales into full steps of either
            # sign. Such entries (gradient below 1e-6 of the largest) are
            # not compared.
            largest = max(float(p.grad.abs().max()) for p in params.values()
                          if p.grad is not None)
            defined = {n: (p.grad.abs() > 1e-6 * largest).numpy()
                       for n, p in params.items() if p.grad is not None}
            skipped = sum(int((~d).sum()) for d in defined.values())
            print(f"entries with a zero gradient, not compared: {skipped}")
        torch_opt.step()

        # The first step reads the weights from the model file
        # (--weights-from), later ones the previous step's results.
        inputs = ["--weights-from", onnx_path] if step == 0 else []
        for n in names:
            if step == 0 and (n in params or n in buffers):
                continue
            path = os.path.join(out, f"in_{n}.npy")
            np.save(path, values[n])
            inputs += ["--input", f"{n}={path}"]
        res = os.path.join(out, "res")
        run(["distir-run", mlir, "--output-dir", res, "--print-limit", "0"]
            + inputs)
        # Results by name, from the listing distir-run writes.
        with open(os.path.join(res, "outputs.json")) as f:
            listing = json.load(f)
        outputs = {e["name"]: np.load(os.path.join(res, e["file"]))
                   for e in listing}
        got_loss = float(outputs.pop("loss"))
        errors = {"loss": abs(got_loss - ref_loss.item())
                  / max(abs(ref_loss.item()), 1e-6)}
        for n, v in outputs.items():
            values[n] = v
            if n in params:
                ref = params[n].detach().numpy()
                scale = max(float(np.max(np.abs(ref))), 1e-6)
                diff = np.abs(v - ref)
                if n in defined:
                    diff = np.where(defined[n], diff, 0)
                errors[n] = float(np.max(diff)) / scale
        name_max = max(errors, key=errors.get)
        worst = max(worst, errors[name_max])
        print(f"step {step}: loss {got_loss:.6f} (torch {ref_loss.item():.6f})"
              f" largest relative error {errors[name_max]:.2e} ({name_max})")
    print("PASS" if worst <= tolerance else "FAIL",
          f"{name} {loss} {opt}" + ("" if precision == "f32" else " " + precision))


if __name__ == "__main__":
    main()
