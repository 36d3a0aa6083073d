"""A stand-in exporter for export-cache.test: counts its runs in COUNTER,
writes OUT (a file, or NAME.onnx in the directory OUT with --dir), prints a
line on stdout and stderr, and fails with --fail.

usage: fake_export.py COUNTER OUT [--dir] [--fail] [--sibling] [--tag T]"""
import os
import sys

counter, out = sys.argv[1], sys.argv[2]
with open(counter, "a") as f:
    f.write("run\n")
if "--fail" in sys.argv:
    print("fake_export: failing as asked", file=sys.stderr)
    sys.exit(3)
tag = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else "a"
if "--dir" in sys.argv:
    os.makedirs(out, exist_ok=True)
    out = os.path.join(out, "model.onnx")
with open(out, "w") as f:
    f.write(f"model {tag}\n")
if "--sibling" in sys.argv:
    with open(out + ".data", "w") as f:
        f.write("weights\n")
print(f"exported {tag}")
print(f"warning from {tag}", file=sys.stderr)
