#!/usr/bin/env python3
"""Checks that dist-dtp preserves semantics: for every (dp, tp, pp) with
dp * tp * pp <= max-devices and every microbatch count, distir-run's outputs
of the distributed program equal those of the sequential one on the same
pseudo-random inputs. Schedules (for pp > 1) and device mappings (for
dp, tp > 1) take turns, so that each is covered without multiplying the
grid.

usage: check-dtp-equivalence.py --program P.mlir --entry NAME --work DIR
       [--degrees 1,2,4,8] [--tp-degrees D,...] [--pp-degrees D,...] [--microbatches 1,2,4]
       [--max-devices 8] [--stage-tp T0:T1,...]
       [--seed 3] [--rtol 1e-4]

With --stage-tp, each entry is one stage-tp (per-stage tensor-parallel
degrees, pp = its length) and replaces the tp and pp degrees.
"""

import argparse
import os
import sys

from distir_checks import DEFAULT_RTOL, check_transformed, outputs, run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--entry", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--degrees", default="1,2,4,8")
    p.add_argument("--tp-degrees", default=None,
                   help="tensor-parallel degrees (default: --degrees)")
    p.add_argument("--pp-degrees", default=None,
                   help="pipeline degrees (default: --degrees)")
    p.add_argument("--microbatches", default="1")
    p.add_argument("--max-devices", type=int, default=8)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--rtol", type=float, default=DEFAULT_RTOL,
                   help="relative tolerance (fp32 summation order by default; "
                   "bf16 programs round to 2^-8)")
    p.add_argument("--stage-tp", default=None,
                   help="per-stage degrees to check instead of tp and pp, "
                   "e.g. 2:1,1:2 (stage-tp=2,1 and stage-tp=1,2)")
    p.add_argument("--extra", default="",
                   help="more dist-dtp options, e.g. stage-transfer=planned")
    a = p.parse_args()
    seed = str(a.seed)
    ref_dir = os.path.join(a.work, "sequential")
    run(["distir-run", a.program, "--entry", a.entry, "--random-inputs", seed,
         "--output-dir", ref_dir])
    reference = outputs(ref_dir)
    degrees = [int(d) for d in a.degrees.split(",")]
    tp_degrees = [int(d) for d in (a.tp_degrees or a.degrees).split(",")]
    pp_degrees = [int(d) for d in (a.pp_degrees or a.degrees).split(",")]
    microbatches = [int(k) for k in a.microbatches.split(",")]
    schedules = ["gpipe", "1f1b", "eager-1f1b"]
    mappings = ["tp-inner", "dp-inner"]
    # (tp option, pp, devices per replica) of each mesh shape.
    if a.stage_tp:
        meshes = []
        for entry in a.stage_tp.split(","):
            stages = [int(t) for t in entry.split(":")]
            meshes.append((f"stage-tp={','.join(map(str, stages))}",
                           len(stages), sum(stages), max(stages)))
    else:
        meshes = [(f"tp={tp}", pp, tp * pp, tp)
                  for tp in tp_degrees for pp in pp_degrees]
    total = equal = 0
    for dp in degrees:
        for tp_option, pp, per_replica, tp in meshes:
                if dp * per_replica > a.max_devices:
                    continue
                for k in microbatches:
                    options = f"dp={dp} {tp_option} pp={pp} microbatches={k}"
                    if pp > 1:
                        options += " schedule=" + schedules[total % 3]
                    if dp > 1 and tp > 1:
                        options += " mapping=" + mappings[total % 2]
                    if a.extra:
                        options += " " + a.extra
                    total += 1
                    name = options.replace(" ", "_").replace("=", "").replace(",", "-")
                    prog = os.path.join(a.work, name + ".mlir")
                    out_dir = os.path.join(a.work, name)
                    equal += check_transformed(
                        a.program, f"--dist-dtp={options}", a.entry, seed,
                        prog, out_dir, reference, options, rtol=a.rtol)
    print(f"{total} configurations, {equal} equal, {total - equal} different")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main())
