"""Runs the many-to-many microbenchmark of the Alpa resharding paper (Zhuang et
al., MLSys 2023, Table 2) through distir-reshard and prints, per case, the unit
tasks, the chosen plan and its simulated time against the naive send/recv plan.
Fails if a chosen plan is slower than the naive one in simulation."""

import json
import subprocess
import sys

# case: source sharding, destination sharding, source mesh, destination
# mesh, shape (fp32)
CASES = [
    (1, "S0RR", "S0RR", "2x4", "2x4", "1024x1024x512"),
    (2, "RRR", "S0RR", "2x4", "2x4", "1024x1024x512"),
    (3, "RS0R", "S0RR", "2x4", "2x4", "1024x1024x512"),
    (4, "RS01R", "S01RR", "2x4", "2x4", "1024x1024x512"),
    (5, "S1RR", "S0RR", "2x4", "2x4", "1024x1024x512"),
    (6, "S0RR", "S0RR", "2x4", "3x4", "3072x1024x170"),
    (7, "S1RR", "RRR", "1x4", "2x4", "1024x1024x512"),
    (9, "RS0R", "RRS0", "2x4", "2x4", "1024x1024x512"),
]

ok = True
for number, src, dst, src_mesh, dst_mesh, shape in CASES:
    out = subprocess.run(
        ["distir-reshard", "--cluster", "aws-p3.8xlarge:nodes=5",
         "--src-sharding", src, "--dst-sharding", dst, "--src-mesh", src_mesh,
         "--dst-mesh", dst_mesh, "--shape", shape, "--format", "json"],
        capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    naive = report["strategies"][0]
    assert naive["strategy"] == "naive send-recv"
    broadcast = next(r for r in report["strategies"]
                     if r["strategy"] == "broadcast")
    chosen = report["chosen"]

    def verdict(speedup):
        return ("faster" if speedup > 1.05 else
                "equal" if speedup >= 1 - 1e-9 else "SLOWER")
    speedup = naive["simulated_s"] / chosen["simulated_s"]
    # The balanced broadcast plan on its own (the paper's method).
    bspeedup = naive["simulated_s"] / broadcast["simulated_s"]
    ok = ok and "SLOWER" not in (verdict(speedup), verdict(bspeedup))
    print(f"case {number}: {len(report['unit_tasks'])} unit tasks, "
          f"{chosen['strategy']} by {chosen['balancer']}: "
          f"{speedup:.1f}x naive, {verdict(speedup)}; balanced broadcast "
          f"{bspeedup:.1f}x, {verdict(bspeedup)}")
sys.exit(0 if ok else 1)
