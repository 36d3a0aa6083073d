#!/usr/bin/python3
"""Imports every model.onnx under a directory (except the node tests, which
onnx-conformance.py runs) and counts the outcomes: imported, rejected with
exactly one `error:` line and exit status 1, or anything else (a crash, a
hang, several or no diagnostics)."""
import os
import subprocess
import sys

tool, root = sys.argv[1], sys.argv[2]
models = []
for dirpath, _, files in os.walk(root):
    if "/node" in dirpath.replace(root, ""):
        continue
    models += [os.path.join(dirpath, f) for f in files if f.endswith(".onnx")]
imported = rejected = other = 0
for m in sorted(models):
    try:
        r = subprocess.run([tool, "--import-onnx", m, "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        other += 1
        print(f"timeout: {m}")
        continue
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode == 0:
        imported += 1
    elif r.returncode == 1 and len(lines) == 1 and "error:" in lines[0]:
        rejected += 1
    else:
        other += 1
        print(f"exit {r.returncode}, {len(lines)} lines: {m}")
print(f"{len(models)} models: {imported} imported, {rejected} rejected with "
      f"one diagnostic, {other} other outcomes")
