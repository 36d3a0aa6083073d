#!/usr/bin/env python3
"""Compares the GPU step driver's results (DIR/out_K.bin) with distir-run's
(REF/output_K.npy, listed in REF/outputs.json).

compare-outputs.py REF DIR RTOL

Prints one line per result and a summary; exits 1 when a result differs by
more than RTOL relative to its largest magnitude.
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
        scale = max(float(np.abs(r).max()) if r.size else 0.0, 1e-30)
        err = float(np.abs(g.astype(np.float64) - r).max()) / scale \
            if r.size else 0.0
        ok = err <= rtol
        bad += not ok
        print("%s %s: relative error %.3g%s" % (e["index"], e["name"], err,
                                                "" if ok else " MISMATCH"))
    print("%d results, %d mismatches" % (len(entries), bad))
    sys.exit(1 if bad else 0)


main()
