#!/usr/bin/python3
"""Imports every ONNX backend node test and counts the outcomes.

    /usr/bin/python3 test/Target/ONNX/conformance.py build/bin/distir-translate \
        [/usr/share/libonnx-testdata/data/node] [-v]

For each test directory it runs `distir-translate --import-onnx model.onnx`
with the input shapes of test_data_set_0/input_*.pb (so dynamic dimensions
resolve) and sorts the result into:
  imported     the import succeeded (output not executed: the reference
               executor does that);
  unsupported  a clean diagnostic naming an unsupported operator, element
               type, attribute value or opset;
  failed       any other diagnostic;
  crashed      no diagnostic, a signal, or a timeout (never acceptable).
Exit status is 1 if anything crashed.
"""

import os
import subprocess
import sys

from onnx import TensorProto, load

UNSUPPORTED_MARKERS = ("unsupported", "is not supported", "are not supported",
                       "not supported on")


def input_shapes(test_dir, model):
    init_names = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in init_names]
    data_dir = os.path.join(test_dir, "test_data_set_0")
    specs = []
    for idx, name in enumerate(inputs):
        path = os.path.join(data_dir, f"input_{idx}.pb")
        if not os.path.exists(path):
            continue
        t = TensorProto()
        try:
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
        except Exception:  # noqa: BLE001 - sequences, maps: no shape
            continue
        specs.append(f"--input-shape={name}=" + ",".join(str(d) for d in t.dims))
    return specs


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv
    tool = args[0]
    root = args[1] if len(args) > 1 else "/usr/share/libonnx-testdata/data/node"
    counts = {"imported": 0, "unsupported": 0, "failed": 0, "crashed": 0}
    for name in sorted(os.listdir(root)):
        test_dir = os.path.join(root, name)
        model_path = os.path.join(test_dir, "model.onnx")
        if not os.path.exists(model_path):
            continue
        try:
            specs = input_shapes(test_dir, load(model_path))
        except Exception:  # noqa: BLE001 - the importer must still cope
            specs = []
        try:
            r = subprocess.run([tool, "--import-onnx", model_path, "-o",
                                os.devnull] + specs,
                               capture_output=True, text=True, timeout=60)
            err = r.stderr.strip()
            if r.returncode == 0:
                kind = "imported"
            elif r.returncode < 0 or "error:" not in err:
                kind = "crashed"
            elif any(m in err for m in UNSUPPORTED_MARKERS):
                kind = "unsupported"
            else:
                kind = "failed"
        except subprocess.TimeoutExpired:
            kind, err = "crashed", "timeout"
        counts[kind] += 1
        if verbose and kind != "imported":
            print(f"{kind:12} {name}: {err.splitlines()[-1] if err else ''}")
    total = sum(counts.values())
    print(f"{total} node tests: " +
          ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if counts["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())
