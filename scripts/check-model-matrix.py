#!/usr/bin/env python3
"""D, T and P on models nobody on the team wrote: exports each model (random
weights, small inputs), imports it, and applies dist-dtp in each
configuration. A configuration either runs under distir-run with the
sequential program's outputs (fp32 tolerance) or is refused with dist-dtp's
one-line reason; tensor parallelism also counts the weight-reading ops it
splits and those it leaves replicated (report=true). Prints one line per
(model, configuration) and a summary; exits non-zero when a configuration
that dist-dtp accepted gives other outputs or fails to run.

usage: check-model-matrix.py --work DIR [--models NAME,...]
       [--configs "dp=2;tp=2;..."] [--no-run]

Models: resnet18, efficientnet_b0, vit, alexnet, inception_v3 (torchvision),
encoder (nn.TransformerEncoder), seq2seq (nn.Transformer), gpt (the GPT-2
generator: a GPT-style decoder).
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

from distir_checks import check_transformed, outputs, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable

DEFAULT_CONFIGS = ("dp=2;tp=2;pp=2;dp=2 tp=2;tp=2 pp=2 microbatches=2;"
                   "dp=2 pp=2 microbatches=2 schedule=1f1b")


# torchvision models: constructor and input shape (AlexNet needs 224 x 224:
# its adaptive pooling from smaller maps does not export; InceptionV3 75).
TORCHVISION = {
    "resnet18": ("torchvision.models.resnet18(num_classes=10)",
                 (4, 3, 32, 32)),
    "efficientnet_b0": ("torchvision.models.efficientnet_b0(num_classes=10)",
                        (4, 3, 32, 32)),
    "alexnet": ("torchvision.models.alexnet(num_classes=10)",
                (4, 3, 224, 224)),
    "inception_v3": ("torchvision.models.inception_v3(num_classes=10, "
                     "aux_logits=False, init_weights=False)", (4, 3, 75, 75)),
}


def torchvision_export(expr, shape, path):
    """Exports torchvision's `expr` (evaluated with torchvision imported) on
    a random input of `shape` to `path`."""
    code = (
        "import torch, torchvision; torch.manual_seed(0); "
        f"m = {expr}.eval(); "
        f"torch.onnx.export(m, (torch.randn{shape},), '{path}', "
        "input_names=['x'], output_names=['y'], opset_version=13)")
    subprocess.run([PY, "-c", code], check=True, capture_output=True)


def export(name, work):
    """Exports `name` into `work`; returns (onnx path, --input-shape list)."""
    tests = os.path.join(ROOT, "test")
    if name in TORCHVISION:
        expr, shape = TORCHVISION[name]
        path = os.path.join(work, name + ".onnx")
        torchvision_export(expr, shape, path)
        return path, []
    if name == "vit":
        path = os.path.join(work, "vit.onnx")
        subprocess.run([PY, os.path.join(
            tests, "Dialect/Dist/Transforms/Inputs/export_vit.py"), path],
            check=True, capture_output=True)
        return path, ["x=4,3,32,32"]
    if name in ("encoder", "seq2seq"):
        subprocess.run([PY, os.path.join(
            tests, "Search/Inputs/export_attention.py"), work], check=True,
            capture_output=True)
        if name == "encoder":
            return os.path.join(work, "encoder.onnx"), ["x=8,16,64"]
        return (os.path.join(work, "seq2seq.onnx"),
                ["src=4,8,32", "tgt=4,8,32"])
    if name == "gpt":
        path = os.path.join(work, "gpt.onnx")
        subprocess.run([PY, os.path.join(ROOT, "python/distir/models/gpt2.py"),
                        "--layers", "2", "--width", "32", "--heads", "4",
                        "--vocab", "96", "--n-ctx", "8", "--seq", "8",
                        "--batch", "4", "-o", path],
                       check=True, capture_output=True)
        return path, ["input_ids=4,8"]
    raise SystemExit(f"unknown model '{name}'")


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return re.sub(r".*error: ", "", line).strip()
    return text.strip().splitlines()[-1] if text.strip() else "failed"


def tp_counts(stderr):
    """(split, replicated) weight-reading ops of report=true's remarks."""
    remarks = [l for l in stderr.splitlines() if "remark: tp=" in l]
    replicated = sum("replicated:" in l for l in remarks)
    return len(remarks) - replicated, replicated


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--models", default="resnet18,efficientnet_b0,vit,alexnet,"
                   "inception_v3,encoder,seq2seq,gpt")
    p.add_argument("--configs", default=DEFAULT_CONFIGS)
    p.add_argument("--no-run", action="store_true",
                   help="transform only (no distir-run equality)")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    configs = [c.strip() for c in a.configs.split(";") if c.strip()]
    bad = total = equal = refused = 0
    for name in a.models.split(","):
        work = os.path.join(a.work, name)
        os.makedirs(work, exist_ok=True)
        onnx, shapes = export(name, work)
        program = os.path.join(work, "model.mlir")
        cmd = ["distir-translate", "--import-onnx", onnx, "-o", program]
        for s in shapes:
            cmd += ["--input-shape", s]
        run(cmd)
        # The model's own weights (PyTorch's initialization): uniform
        # random ones in [-1, 1) blow up through deep CNNs (InceptionV3's
        # outputs overflow to NaN); the inputs stay pseudo-random.
        weights = ["--weights-from", onnx]
        reference = None
        if not a.no_run:
            ref_dir = os.path.join(work, "sequential")
            run(["distir-run", program, "--entry", "main", "--random-inputs",
                 "3", "--output-dir", ref_dir, *weights])
            reference = outputs(ref_dir)
            if not all(np.isfinite(r).all() for r in reference):
                raise SystemExit(f"{name}: the sequential outputs are not "
                                 "finite")
        for options in configs:
            total += 1
            label = f"{name:16s} {options:40s}"
            # Accepted or refused, and report=true's decisions, in one run.
            proc = subprocess.run(
                ["distir-opt", program, f"--dist-dtp={options} report=true",
                 "-o", os.devnull], capture_output=True, text=True)
            if proc.returncode != 0:
                refused += 1
                print(f"{label} refused: {first_error(proc.stderr)}",
                      flush=True)
                continue
            note = ""
            if "tp=" in options:
                split, replicated = tp_counts(proc.stderr)
                note = f" (tp: {split} split, {replicated} replicated)"
            if a.no_run:
                print(f"{label} accepted{note}", flush=True)
                continue
            tag = options.replace(" ", "_").replace("=", "")
            ok = check_transformed(program, f"--dist-dtp={options}", "main",
                                   "3", os.path.join(work, tag + ".mlir"),
                                   os.path.join(work, tag), reference, label,
                                   weights)
            equal += ok
            bad += not ok
            print(f"{label} {'equal' if ok else 'DIFFERENT'}{note}",
                  flush=True)
    print(f"{total} configurations: {equal} equal, {refused} refused with a "
          f"reason, {bad} different or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
