"""DistIR from Python: import models, transform them with pass pipelines,
run them on the reference executor, simulate them on a cluster and search
distribution strategies.

Programs travel as MLIR text (`Module.text`, `str(module)`), so they pass to
and from any other MLIR tooling. Every failure raises `distir.Error` with
DistIR's diagnostics (location: error: message).

    import distir
    m = distir.build_mlp(layers=2, dim=8, batch=4)
    dp = m.run("dist-dtp{dp=2}")
    outputs = dp.execute({"x": x, "w0": w0, "w1": w1})
    report = dp.simulate(cluster="dgx-a100")
    results = distir.search("mlp:4,32", cluster="dgx-h100", batch=16)
    print(results.best)
"""

import io
import json
import os

import numpy as np

from ._distir import Error
from . import _distir

__all__ = [
    "Error", "Module", "SearchResults", "build_gpt2", "build_mlp",
    "cluster", "import_onnx", "parse", "search", "synthesize",
]

# Element types of the executor's values, as numpy dtypes. bf16 has no numpy
# type: its values come back as float32 (exactly representable).
_DTYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16,
    "bf16": np.float32, "i64": np.int64, "i32": np.int32, "i16": np.int16,
    "i8": np.int8, "i1": np.bool_, "index": np.int64,
}
_UNSIGNED = {"i64": np.uint64, "i32": np.uint32, "i16": np.uint16,
             "i8": np.uint8}


def _dtype(element_type, unsigned=False):
    if unsigned and element_type in _UNSIGNED:
        return _UNSIGNED[element_type]
    try:
        return _DTYPES[element_type]
    except KeyError:
        raise Error(f"error: no numpy type for element type {element_type}")


class Module:
    """A DistIR program (an MLIR module), held as text."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    def __repr__(self):
        first = next((line.strip() for line in self.text.splitlines()
                      if "func.func" in line), "")
        return f"<distir.Module {first[:80]}>"

    def run(self, pipeline):
        """Runs a pass pipeline ("dist-place,dist-dtp{dp=2 tp=2}" or
        "builtin.module(...)"); returns the transformed module."""
        return Module(_distir.run_pipeline(self.text, pipeline))

    def signature(self, entry=""):
        """The entry function's arguments and results: dicts with name,
        element_type, shape, is_tensor, unsigned."""
        return _distir.signature(self.text, entry)

    def execute(self, inputs, entry=""):
        """Runs `entry` on the reference executor. `inputs`: a dict from
        argument name (dist.name, argN or N) to array, or a list in argument
        order. Returns the results as numpy arrays, in order."""
        sig = self.signature(entry)
        args = sig["arguments"]
        if isinstance(inputs, dict):
            ordered = []
            given = dict(inputs)
            for i, arg in enumerate(args):
                for key in (arg["name"], f"arg{i}", str(i), i):
                    if key in given:
                        ordered.append(given.pop(key))
                        break
                else:
                    raise Error(f"error: missing input for argument #{i} "
                                f"({arg['name']}) of @{sig['entry']}")
            if given:
                raise Error(f"error: @{sig['entry']} has no argument named "
                            f"'{next(iter(given))}'")
        else:
            ordered = list(inputs)
            if len(ordered) != len(args):
                raise Error(f"error: @{sig['entry']} takes {len(args)} "
                            f"arguments, got {len(ordered)}")
        arrays = []
        for arg, value in zip(args, ordered):
            a = np.asarray(value)
            kind = "f" if arg["element_type"].startswith(("f", "bf")) else "i"
            if kind == "i" and a.dtype.kind == "f":
                raise Error(f"error: input '{arg['name']}' is {a.dtype}, the "
                            f"argument holds {arg['element_type']}")
            if a.dtype.kind not in "biuf":
                raise Error(f"error: input '{arg['name']}' is {a.dtype}, not "
                            "a numeric array")
            arrays.append(a.astype(np.float64))
        outputs = _distir.execute(self.text, sig["entry"], arrays)
        results = []
        for (element_type, data), port in zip(outputs, sig["results"]):
            dtype = _dtype(element_type, port["unsigned"])
            if np.issubdtype(dtype, np.integer) and port["unsigned"]:
                data = data.astype(np.int64)
            value = data.astype(dtype)
            results.append(value if port["is_tensor"] else value[()])
        return results

    def simulate(self, cluster="", entry="", cost_model="analytic",
                 calibration="", algorithm="ring", overlap=False, batch=0,
                 peak_buffers=0, trace=None):
        """Simulates `entry` on `cluster` (a preset such as "dgx-h100:nodes=2"
        or a JSON file; default: the module's dist.cluster). Returns the
        report as a dict (distir-sim --format=json); with `trace`, writes
        the Chrome trace to that path."""
        report, chrome = _distir.simulate(
            self.text, entry, cluster, cost_model, calibration, algorithm,
            overlap, batch, peak_buffers, trace is not None)
        if trace is not None:
            _write(trace, chrome)
        return json.loads(report)


def _write(path, text):
    directory = os.path.dirname(os.fspath(path))
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def parse(text):
    """Parses and verifies MLIR text (placements included)."""
    return Module(_distir.verify(text))


def import_onnx(model, input_shapes=None, weights="arguments",
                func_name="main", device=0):
    """Imports an ONNX model: a path, bytes, or an onnx.ModelProto.
    `input_shapes`: {input name: [d0, d1, ...]} for dynamic dimensions;
    `weights`: "arguments" (function arguments) or "constants"."""
    if weights not in ("arguments", "constants"):
        raise Error(f"error: weights must be 'arguments' or 'constants', "
                    f"not '{weights}'")
    if hasattr(model, "SerializeToString"):
        data, name = model.SerializeToString(), "<onnx model>"
    elif isinstance(model, (bytes, bytearray)):
        data, name = bytes(model), "<onnx bytes>"
    else:
        name = os.fspath(model)
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Error(f"error: cannot read '{name}': {e.strerror}")
    shapes = [(k, [int(d) for d in v]) for k, v in (input_shapes or {}).items()]
    return Module(_distir.import_onnx(data, name, shapes,
                                      weights == "constants", func_name,
                                      device))


def build_mlp(layers=4, dim=64, batch=16, training=False, dtype="f32",
              device=0, distir_dhp=None):
    """The DistIR paper's MLP benchmark (distir-translate --build-mlp).

    With `distir_dhp=(dp, hp, pp, k)` and `training=True`: the published
    DistIR's own parallel training step for those degrees and microbatches
    (--distir-dhp), to simulate with cost_model="distir-compat" on
    "distir-uniform:devices=dp*hp*pp"."""
    return Module(_distir.build_mlp(layers, dim, batch, training, dtype,
                                    device, list(distir_dhp or [])))


def build_gpt2(preset="gpt2-test", batch=1, seq=8, arch_only=False,
               **overrides):
    """GPT-2 exported from PyTorch (distir.models.gpt2) and imported with
    input_ids of shape [batch, seq]. `overrides`: layers, width, heads,
    vocab, n_ctx. Needs torch and onnx."""
    import contextlib
    import tempfile
    from .models import gpt2
    argv = ["--preset", preset, "--batch", str(batch), "--seq", str(seq)]
    for key, value in overrides.items():
        argv += ["--" + key.replace("_", "-"), str(value)]
    if arch_only:
        argv.append("--arch-only")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt2.onnx")
        with contextlib.redirect_stdout(io.StringIO()):
            gpt2.main(argv + ["-o", path])
        return import_onnx(path, {"input_ids": [batch, seq]})


class SearchResults(list):
    """The configurations of a search, one dict per configuration in
    enumeration order (the keys of distir-search --json: dp, tp, pp,
    microbatches, schedule, mapping, zero, recompute, status, rank,
    latency_s, throughput, peak_memory_bytes, mfu, ...). `best` is the
    rank-1 record (None when nothing fits), `ranked` the ok ones in rank
    order, `summary` the search's header (model, cluster, counts)."""

    def __init__(self, report, best_program):
        super().__init__(report.get("configurations", []))
        self.summary = {k: v for k, v in report.items()
                        if k != "configurations"}
        self._best_program = best_program

    @property
    def ranked(self):
        return sorted((r for r in self if r.get("rank", 0) > 0),
                      key=lambda r: r["rank"])

    @property
    def best(self):
        ranked = self.ranked
        return ranked[0] if ranked else None

    @property
    def best_program(self):
        """The best configuration's distributed program (a Module), when
        the search ran with emit_best=True."""
        if not self._best_program:
            return None
        return Module(self._best_program)

    def to_dataframe(self):
        """The records as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError:
            raise Error("error: to_dataframe needs pandas (Debian: "
                        "python3-pandas)")
        return pandas.DataFrame(list(self))


def search(model, cluster, batch, training=False, input_shapes=None,
           dtype=None, loss="mse", optimizer="sgd", devices=0,
           allow_fewer=False, max_microbatches=1, max_dp=0, max_tp=0,
           max_pp=0, zero=0, recompute=False, cost_model="analytic",
           algorithm="ring", overlap=False, fast=False, jobs=0,
           emit_best=False, stage_meshes=False):
    """Searches data/tensor/pipeline-parallel configurations of `model`
    ("mlp:LAYERS,DIM", an ONNX path, bytes or onnx.ModelProto) on
    `cluster`, as distir-search (`stage_meshes`: --stage-meshes).
    `batch`: samples per step, or a list of batch sizes to sweep. Returns
    SearchResults."""
    batches = [int(b) for b in batch] if isinstance(batch, (list, tuple)) \
        else [int(batch)]
    shapes = [(k, [int(d) for d in v]) for k, v in (input_shapes or {}).items()]

    def run(spec):
        report, best = _distir.search(
            spec, shapes, batches, training, dtype or "f32",
            dtype is not None, loss, optimizer, cluster, devices,
            allow_fewer, max_microbatches, max_dp, max_tp, max_pp, zero,
            recompute, stage_meshes, cost_model, algorithm, overlap, fast,
            jobs, emit_best)
        return SearchResults(json.loads(report), best)

    if hasattr(model, "SerializeToString") or \
            isinstance(model, (bytes, bytearray)):
        # An in-memory ONNX model: the search reads it from a file.
        import tempfile
        data = model.SerializeToString() \
            if hasattr(model, "SerializeToString") else bytes(model)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
            return run(path)
    return run(os.fspath(model))


def _sizes(value, bare_names=False):
    """"node:2,gpu:8", {"node": 2, "gpu": 8}, [("node", 2), ...] or (with
    bare_names) [2, 8] as the text distir-synth reads."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.items())
    items = []
    for item in value:
        if isinstance(item, (tuple, list)):
            items.append(f"{item[0]}:{int(item[1])}")
        elif bare_names:
            items.append(str(int(item)))
        else:
            raise Error(f"error: expected NAME:SIZE entries, got {item!r}")
    return ",".join(items)


def synthesize(axes, reduce, hierarchy=None, cluster="", max_size=5,
               algorithm="ring", bytes=64 * 1024 * 1024,
               master_collectives="allreduce"):
    """Synthesizes hierarchical reductions (P2), as distir-synth: for every
    placement of the parallelism `axes` on the `hierarchy` (default: the
    cluster's levels), the valid reduction programs over the axes indexed
    by `reduce`, priced on `cluster`. `master_collectives` is "allreduce"
    (the Master form takes AllReduce only, as the P2 paper's programs) or
    "all". Returns distir-synth's JSON report as a dict; each entry of
    "matrices" has "best", "speedup" and "programs".

        distir.synthesize(axes=[2, 16], reduce=[1],
                          hierarchy={"node": 2, "gpu": 16},
                          cluster="gcp-a100x16:nodes=2")
    """
    if isinstance(reduce, int):
        reduce = [reduce]
    reduce_text = reduce if isinstance(reduce, str) else \
        ",".join(str(int(i)) for i in reduce)
    if not 1 <= max_size <= 8:
        raise Error("error: max_size must be between 1 and 8")
    if not 0 < bytes <= 1e18:
        raise Error("error: bytes must be a positive number")
    if master_collectives not in ("allreduce", "all"):
        raise Error("error: master_collectives must be 'allreduce' or 'all', "
                    f"got {master_collectives!r}")
    report = _distir.synthesize(
        _sizes(hierarchy) if hierarchy is not None else "",
        hierarchy is not None, _sizes(axes, bare_names=True), reduce_text,
        cluster, max_size, algorithm, float(bytes),
        master_collectives == "all")
    return json.loads(report)


def cluster(spec):
    """A cluster preset or JSON file, resolved, as a dict (cluster JSON)."""
    return json.loads(_distir.cluster_json(spec))
