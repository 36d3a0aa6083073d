#!/usr/bin/env bash
# Replays the GPU traces kept here (recorded on one H200 on 2026-11-30 with
# python/generators/record_ddp_traces.py --device cuda --destroy-before-stop;
# each folder's run.json has the options and the unprofiled step time) and
# prints, per job, the measured (profiled) and predicted iteration, the
# error with and without clock alignment, the unprofiled step time and each
# rank's GPU time per iteration (kernels, copies and memsets, summed over
# streams). The 2-rank MLP of the same session is
# test/Replay/Inputs/gpu-mlp-2 (replay-gpu.test).
# usage: bench/replay/gpu/replay.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="${1:-$root/build}/bin"
for job in "$here"/*/ "$root/test/Replay/Inputs/gpu-mlp-2/"; do
  "$bin/distir-replay" "$job"rank*.json.gz --format json |
    /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
run = json.load(open(sys.argv[2] + "run.json"))
gpu = " ".join("%.2f" % (x["gpu_time_s"] / r["iterations"] * 1e3)
                for x in r["rank_reports"])
print("%-20s ranks %d  measured %7.2f ms  predicted %7.2f ms (%+.1f%%, "
      "unaligned %+.1f%%)  unprofiled %6.2f ms  GPU time/iteration %s ms" % (
          sys.argv[1], r["ranks"], r["measured_iteration_s"] * 1e3,
          r["predicted_iteration_s"] * 1e3, r["relative_error"] * 100,
          r["relative_error_unaligned"] * 100,
          run["unprofiled_step_s"] * 1e3, gpu))' "$(basename "$job")" "$job"
done
