#!/usr/bin/env python3
"""Compares distir-compat on DistIR's own MLP programs with the reference.

For each D/H/P/K configuration of a grid, builds the published DistIR's
parallel MLP training step (`distir-translate --build-mlp --training
--distir-dhp=D,H,P,K`), simulates it (`distir-sim --cost-model distir-compat
--cluster distir-uniform`) and compares with distir_reference.py, an
independent re-implementation of DistIR's own simulator:

  * with the two documented deviations applied (`--fix loss,sgd`): latency
    equal to 1e-9 relative and every device's peak memory equal to the byte;
  * without them: peak memory still equal, and our latency never below
    DistIR's own (the deviations only add work; the range is printed).

Usage: compare_distir_programs.py [--quick] (tools from PATH).
"""
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "distir_reference", os.path.join(HERE, "distir_reference.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)


def reference(cfg, fix):
    a = SimpleNamespace(dp=cfg["dp"], hp=cfg["hp"], pp=cfg["pp"], k=cfg["k"],
                        layers=cfg["layers"], batch=cfg["batch"],
                        dim=cfg["dim"], dtype=cfg["dtype"],
                        bandwidth_gbps=25.0, throughput=1.4e13,
                        dram_bandwidth=9.0e11, skip_allgathers=False,
                        fix=set(fix), trace=False)
    assert ref.check(a) is None, cfg
    out = ref.run(a)
    # DistIR numbers its workers from 1 (its device 0 only holds the inputs
    # before its unsimulated init function); ours from 0.
    shift = 1 if out["devices"] > 1 else 0
    return out["latency"], {int(d) - shift: b for d, b in out["peak"].items()}


def ours(cfg, tmp):
    program = os.path.join(tmp, "step.mlir")
    subprocess.run(
        ["distir-translate", "--build-mlp", "--training",
         f"--layers={cfg['layers']}", f"--dim={cfg['dim']}",
         f"--batch={cfg['batch']}", f"--dtype={cfg['dtype']}",
         f"--distir-dhp={cfg['dp']},{cfg['hp']},{cfg['pp']},{cfg['k']}",
         "-o", program], stdin=subprocess.DEVNULL, check=True)
    devices = cfg["dp"] * cfg["hp"] * cfg["pp"]
    report = json.loads(subprocess.run(
        ["distir-sim", program, "--cost-model", "distir-compat", "--cluster",
         f"distir-uniform:devices={devices}", "--format", "json"],
        check=True, capture_output=True, text=True).stdout)
    return report["latency"], {d["device"]: d["peak_bytes"]
                               for d in report["devices"]}


def grid(quick):
    for dp, hp, pp in itertools.product((1, 2, 4, 8, 16), repeat=3):
        if dp * hp * pp > (8 if quick else 16):
            continue
        for k in ((1,) if pp == 1 else (1, 2, 4) if quick else (1, 2, 4, 8)):
            layers = 16 if pp == 16 else 8
            yield dict(dp=dp, hp=hp, pp=pp, k=k, layers=layers, batch=128,
                       dim=32, dtype="f32")
    # Half precision and a wider model, a few configurations.
    for dp, hp, pp, k in ((2, 2, 2, 4), (1, 4, 2, 2), (4, 1, 4, 8)):
        yield dict(dp=dp, hp=hp, pp=pp, k=k, layers=8, batch=256, dim=128,
                   dtype="f16")


def main():
    quick = "--quick" in sys.argv
    count, worst, failures = 0, [0.0, 0.0], []
    with tempfile.TemporaryDirectory() as tmp:
        for cfg in grid(quick):
            count += 1
            latency, peaks = ours(cfg, tmp)
            fixed_latency, fixed_peaks = reference(cfg, ("loss", "sgd"))
            raw_latency, raw_peaks = reference(cfg, ())
            name = "D{dp}/H{hp}/P{pp}/K{k} L{layers} {dtype}".format(**cfg)
            if abs(latency - fixed_latency) > 1e-9 * fixed_latency:
                failures.append(f"{name}: latency {latency!r}, reference "
                                f"with deviations {fixed_latency!r}")
            if peaks != fixed_peaks or peaks != raw_peaks:
                failures.append(f"{name}: peaks {peaks}, reference "
                                f"{raw_peaks}")
            rel = latency / raw_latency - 1
            worst = [min(worst[0], rel), max(worst[1], rel)]
    for line in failures:
        print("MISMATCH", line)
    print(f"{count} configurations, {len(failures)} mismatches")
    # Our deviations only add work (every input read, every weight updated).
    print("DistIR's own latency never above ours:", worst[0] >= 0)
    print(f"ours minus DistIR's own: {worst[0]:+.2%} .. {worst[1]:+.2%}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
