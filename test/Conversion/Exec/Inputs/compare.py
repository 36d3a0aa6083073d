"""Compare every output_K.npy of a reference directory with a run's."""
import os
import sys

import numpy as np

ref_dir, run_dir = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(ref_dir) if n.startswith("output_"))
if not names:
    sys.exit("no outputs in " + ref_dir)
for name in names:
    ref = np.load(os.path.join(ref_dir, name))
    path = os.path.join(run_dir, name)
    if not os.path.exists(path):
        sys.exit("missing " + path)
    got = np.load(path)
    if ref.shape != got.shape or not np.allclose(ref, got, rtol=1e-5, atol=1e-5):
        sys.exit("%s differs: max abs error %g" % (name, np.abs(ref - got).max()))
print("OK %d outputs" % len(names))
