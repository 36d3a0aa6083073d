#!/usr/bin/python3
"""Runs the ONNX backend node tests through the importer and the reference
executor and compares every output with the test's expected output.

    /usr/bin/python3 scripts/onnx-conformance.py --bin build/bin \
        [--root /usr/share/libonnx-testdata/data/node] [--filter SUBSTR]
        [-v] [--jobs N] [--sample N]
        [--doc docs/design/onnx-importer.md [--update-doc]]

For each test: `distir-translate --import-onnx model.onnx` (input shapes
from test_data_set_0/input_*.pb), then `distir-run` on those inputs
(matched by name through `dist.name`), then a comparison of output_*.pb
with the results (rtol 1e-3, atol 1e-5, as the ONNX backend tests; rtol
1.6e-2 for bfloat16 outputs, torch.testing's default for that type); the
program's result element types (and signedness) must be the expected
outputs' data types. Each
test lands in one of:
  passed        imported, executed, every output matches;
  failed        imported but executing failed or an output differs;
  unsupported   the importer reports an unsupported operator, element type,
                attribute value or opset (a clean diagnostic);
  import-error  the importer rejects the model with another diagnostic;
  crashed       a signal, no diagnostic, or a timeout (never acceptable).
Tests whose data DistIR cannot read or compare (sequences, optionals,
strings) are imported without input shapes: the importer's diagnostic
classifies them (unsupported if it imports them).
Exit status 1 if anything failed or crashed.

With --bind-shape-inputs, the tests whose import fails because a shape
operand (Reshape's shape, axes, Slice bounds, Split sizes, ...) is a graph
input run again: each such input is bound to its test_data_set_0 value with
`distir-translate --input-value NAME=v0,v1,...` (the importer then treats it
as an initializer, as an exporter would emit it); a second summary line
counts these tests.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, load, numpy_helper

UNSUPPORTED_MARKERS = ("unsupported", "is not supported", "are not supported",
                       "not supported on")
# TensorProto data types DistIR reads and writes (float, double, float16,
# bfloat16, int8/16/32/64, uint8/16/32/64, bool); older test data stores
# bfloat16 as uint16.
SUPPORTED_TYPES = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
                   TensorProto.BFLOAT16, TensorProto.INT8, TensorProto.INT16,
                   TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
                   TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64,
                   TensorProto.BOOL}


# The MLIR element type of each ONNX type (unsigned integers are signless,
# marked `dist.unsigned` on the function result).
MLIR_ELEMENT = {TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64",
                TensorProto.FLOAT16: "f16", TensorProto.BFLOAT16: "bf16",
                TensorProto.INT8: "i8", TensorProto.UINT8: "i8",
                TensorProto.INT16: "i16", TensorProto.UINT16: "i16",
                TensorProto.INT32: "i32", TensorProto.UINT32: "i32",
                TensorProto.INT64: "i64", TensorProto.UINT64: "i64",
                TensorProto.BOOL: "i1"}
UNSIGNED = {TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32,
            TensorProto.UINT64}
RESULT_TYPE = re.compile(r"tensor<(?:[0-9?]+x)*([a-z]+[0-9]+)"
                         r"(?:, #dist\.device<\d+>)?>(\s*\{[^}]*\})?")


def result_types(prog):
    """(element type, unsigned) of each result of the imported @main, from
    its signature; None if there is none."""
    with open(prog) as f:
        for line in f:
            if line.lstrip().startswith("func.func @main("):
                _, sep, results = line.partition(") -> ")
                if not sep:
                    return []
                return [(m.group(1), "dist.unsigned" in (m.group(2) or ""))
                        for m in RESULT_TYPE.finditer(results)]
    return None


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def input_value_arg(name, path):
    """`--input-value=NAME=v0,v1,...` holding the tensor in `path`."""
    values = numpy_helper.to_array(read_pb(path)).ravel()
    if values.dtype.kind == "f":
        text = ",".join(repr(float(v)) for v in values)
    else:
        text = ",".join(str(int(v)) for v in values)
    return f"--input-value={name}={text}"


def classify_import_failure(returncode, err):
    """Kind and detail of a failed import (returncode != 0)."""
    if returncode < 0 or "error:" not in err:
        return "crashed", err[-300:]
    kind = ("unsupported" if any(m in err for m in UNSUPPORTED_MARKERS)
            else "import-error")
    return kind, err.splitlines()[-1] if err else ""


def import_only(bin_dir, model_path, reason):
    """For a test whose data DistIR cannot read or compare (sequences,
    strings): the importer must reject the model with a clean diagnostic,
    or the test counts as unsupported for `reason`."""
    try:
        r = subprocess.run([os.path.join(bin_dir, "distir-translate"),
                            "--import-onnx", model_path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "crashed", "import timed out"
    if r.returncode == 0:
        return "unsupported", reason
    return classify_import_failure(r.returncode, r.stderr.strip())


def run_test(bin_dir, test_dir, bound=frozenset()):
    """Runs one node test; the graph inputs named in `bound` are bound to
    their test values at import time (--input-value)."""
    name = os.path.basename(test_dir)
    model_path = os.path.join(test_dir, "model.onnx")
    data_dir = os.path.join(test_dir, "test_data_set_0")
    try:
        model = load(model_path)
        init_names = {t.name for t in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in init_names]
        input_files = [os.path.join(data_dir, f"input_{k}.pb")
                       for k in range(len(inputs))]
        shapes = []
        for input_name, path in zip(inputs, input_files):
            if os.path.exists(path):
                dims = read_pb(path).dims
                shapes.append(f"--input-shape={input_name}=" +
                              ",".join(str(d) for d in dims))
                if input_name in bound:
                    shapes.append(input_value_arg(input_name, path))
        out_types = [o.type.tensor_type.elem_type for o in model.graph.output]
        outputs = []
        # The ONNX element type of each expected output.
        want_types = []
        bf16_outputs = set()
        k = 0
        while os.path.exists(os.path.join(data_dir, f"output_{k}.pb")):
            proto = read_pb(os.path.join(data_dir, f"output_{k}.pb"))
            if proto.data_type not in SUPPORTED_TYPES:
                return (name,) + import_only(
                    bin_dir, model_path,
                    f"expected output {k} has data type {proto.data_type}")
            want = numpy_helper.to_array(proto)
            want_types.append(proto.data_type)
            if k < len(out_types) and out_types[k] == TensorProto.BFLOAT16:
                want_types[-1] = TensorProto.BFLOAT16
                bf16_outputs.add(k)
                if proto.data_type == TensorProto.UINT16:
                    # bfloat16 bit patterns (older test data): the high half
                    # of a float32.
                    want = (want.astype(np.uint32) << 16).view(np.float32)
            outputs.append(want)
            k += 1
    except Exception as e:  # noqa: BLE001 - sequences, maps, optionals
        return (name,) + import_only(
            bin_dir, model_path, f"test data not readable as tensors: {e}")

    with tempfile.TemporaryDirectory() as work:
        prog = os.path.join(work, "prog.mlir")
        try:
            r = subprocess.run([os.path.join(bin_dir, "distir-translate"),
                                "--import-onnx", model_path, "-o", prog] + shapes,
                               capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return name, "crashed", "import timed out"
        if r.returncode != 0:
            return (name,) + classify_import_failure(r.returncode,
                                                     r.stderr.strip())
        cmd = [os.path.join(bin_dir, "distir-run"), prog, "--output-dir",
               os.path.join(work, "out"), "--print-limit", "0"]
        for input_name, path in zip(inputs, input_files):
            if input_name not in bound:
                cmd += ["--input", f"{input_name}={path}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return name, "crashed", "execution timed out"
        if r.returncode != 0:
            if r.returncode < 0:
                return name, "crashed", r.stderr[-300:]
            err = r.stderr.strip()
            first = next((l for l in err.splitlines() if "error:" in l), err)
            if any(m in first for m in UNSUPPORTED_MARKERS):
                return name, "unsupported", "execution: " + first
            return name, "failed", "execution: " + first
        # The imported program's result types must be the expected ones:
        # the values below are compared after conversions that would hide
        # a wrong type (e.g. float16 and float32 are both written as f4).
        types = result_types(prog)
        if types is None or len(types) < len(outputs):
            return name, "failed", "cannot read the result types of @main"
        for k, onnx_type in enumerate(want_types):
            elt, is_unsigned = types[k]
            if (elt, is_unsigned) != (MLIR_ELEMENT[onnx_type],
                                      onnx_type in UNSIGNED):
                return name, "failed", (
                    f"output {k}: element type "
                    f"{'unsigned ' if is_unsigned else ''}{elt}, expected "
                    f"{TensorProto.DataType.Name(onnx_type)}")
        for k, want in enumerate(outputs):
            path = os.path.join(work, "out", f"output_{k}.npy")
            if not os.path.exists(path):
                return name, "failed", f"output {k} missing"
            got = np.load(path)
            if want.dtype == np.bool_:
                want = want.astype(np.bool_)
                got = got.astype(np.bool_)
            if got.shape != want.shape:
                return name, "failed", (f"output {k}: shape {got.shape}, "
                                        f"expected {want.shape}")
            if want.dtype.kind in "fc":
                # bfloat16 keeps 8 significant bits: compare at its
                # precision (torch.testing's default rtol for bfloat16).
                rtol = 1.6e-2 if k in bf16_outputs else 1e-3
                ok = np.allclose(got.astype(np.float64),
                                 want.astype(np.float64), rtol=rtol,
                                 atol=1e-5, equal_nan=True)
            else:
                ok = np.array_equal(got.astype(np.int64), want.astype(np.int64))
            if not ok:
                diff = np.max(np.abs(got.astype(np.float64) -
                                     want.astype(np.float64)))
                return name, "failed", f"output {k} differs (max abs diff {diff:.3g})"
    return name, "passed", ""


UNRESOLVED = re.compile(r"unresolvable dynamic shape: .*\('([^']+)'\) is not "
                        r"known at import time")


def run_bound(bin_dir, test_dir, first):
    """Runs `test_dir` again with every graph input that the importer reports
    as an unresolvable shape operand bound to its test value; `first` is the
    unbound run's result. None if that run needed no such input."""
    name, kind, detail = first
    if kind != "import-error" or not UNRESOLVED.search(detail):
        return None
    model = load(os.path.join(test_dir, "model.onnx"))
    init_names = {t.name for t in model.graph.initializer}
    inputs = {i.name for i in model.graph.input if i.name not in init_names}
    bound = set()
    while True:
        match = UNRESOLVED.search(detail) if kind == "import-error" else None
        if match and match.group(1) in inputs and match.group(1) not in bound:
            bound.add(match.group(1))
            _, kind, detail = run_test(bin_dir, test_dir, frozenset(bound))
            continue
        if not bound:
            return None
        return name, kind, detail


def summarize(results, what, verbose):
    """Prints the failures (all non-passing tests with -v) and the counts
    line; returns the counts."""
    counts = {k: 0 for k in ("passed", "failed", "unsupported", "import-error",
                             "crashed")}
    for name, kind, detail in results:
        counts[kind] += 1
        if kind in ("failed", "crashed") or (verbose and kind != "passed"):
            print(f"{kind:12} {name}: {detail}")
    print(f"{len(results)} {what}: " +
          ", ".join(f"{v} {k}" for k, v in counts.items()))
    return counts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--root", default="/usr/share/libonnx-testdata/data/node")
    p.add_argument("--filter", default="")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("-v", action="store_true")
    p.add_argument("--bind-shape-inputs", action="store_true")
    p.add_argument("--sample", type=int, default=1, metavar="N",
                   help="run every N-th test (by name) only: a quicker "
                   "sweep over every kind of op, e.g. under sanitizers")
    p.add_argument("--doc", help="check that this document states the "
                   "counts of the run (exit 1 if not)")
    p.add_argument("--update-doc", action="store_true",
                   help="with --doc, write the run's counts into the "
                   "document instead of checking them")
    a = p.parse_args()
    tests = [os.path.join(a.root, n) for n in sorted(os.listdir(a.root))
             if a.filter in n and
             os.path.exists(os.path.join(a.root, n, "model.onnx"))]
    if a.sample < 1 or (a.sample > 1 and a.doc):
        p.error("--sample takes N >= 1, and not with --doc (the document "
                "states the whole run's counts)")
    tests = tests[::a.sample]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda t: run_test(a.bin, t), tests))
        bound = []
        if a.bind_shape_inputs:
            bound = [r for r in pool.map(lambda tr: run_bound(a.bin, *tr),
                                         zip(tests, results))
                     if r is not None]
    counts = summarize(results, "node tests", a.v)
    # The document states the counts in bold; line breaks are spaces.
    statements = [("**" + ", ".join(f"{v} {k}" for k, v in counts.items()) +
                   "**", r"\*\*\d+\s+passed,\s+\d+\s+failed,\s+\d+\s+"
                   r"unsupported,\s+\d+\s+import-error,\s+\d+\s+crashed\*\*")]
    status = 1 if counts["failed"] or counts["crashed"] else 0
    if a.bind_shape_inputs:
        bound_counts = summarize(bound, "node tests with shape inputs bound",
                                 a.v)
        statements.append((f"**{bound_counts['passed']} of {len(bound)} pass**",
                           r"\*\*\d+\s+of\s+\d+\s+pass\*\*"))
        if bound_counts["failed"] or bound_counts["crashed"]:
            status = 1
    if a.doc:
        with open(a.doc) as f:
            raw = f.read()
        if a.update_doc:
            # The bold counts, wherever the document wraps them.
            changed = 0
            for stated, pattern in statements:
                raw, n = re.subn(pattern, stated, raw, count=1)
                changed += n
            if changed:
                with open(a.doc, "w") as f:
                    f.write(raw)
        text = " ".join(raw.split())
        missing = [stated for stated, _ in statements if stated not in text]
        if not missing:
            print(f"{os.path.basename(a.doc)} states these counts")
        else:
            print(f"{os.path.basename(a.doc)} does not state "
                  f"{' and '.join(missing)}: update it")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
