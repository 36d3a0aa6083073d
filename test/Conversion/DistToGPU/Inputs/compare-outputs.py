#!/usr/bin/env python3
"""Compares the GPU step driver's results (DIR/out_K.bin) with distir-run's
(REF/output_K.npy, listed in REF/outputs.json).

compare-outputs.py REF DIR RTOL

Prints one line per result and a summary; exits 1 when a result differs by
more than RTOL relative to its largest magnitude, or has NaN elsewhere than
the reference.
"""
import json
import sys

import numpy as np


def main():
    ref, out, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    bad = 0
    entries = json.load(open(ref + "/outputs.json"))
    for e in entries:
        r = np.load("%s/%s" % (ref, e["file"]))
        g = np.fromfile("%s/out_%d.bin" % (out, e["index"]),
                        dtype=r.dtype).reshape(r.shape)
        # NaN where the reference has NaN (and only there); the error over
        # the other elements.
        same_nan = np.array_equal(np.isnan(r), np.isnan(g)) \
            if r.dtype.kind == "f" else True
        finite = ~np.isnan(r) if r.dtype.kind == "f" else np.ones(r.shape, bool)
        err = 0.0
        if finite.any():
            scale = max(float(np.abs(r[finite]).max()), 1e-30)
            err = float(np.abs(g[finite].astype(np.float64) -
                               r[finite]).max()) / scale
        ok = same_nan and err <= rtol
        bad += not ok
        print("%s %s: relative error %.3g%s" % (e["index"], e["name"], err,
                                                "" if ok else " MISMATCH"))
    print("%d results, %d mismatches" % (len(entries), bad))
    sys.exit(1 if bad else 0)


main()
