#!/usr/bin/env python3
"""Edits a recorded rank trace for distir-replay's tests.

  edit_trace.py shift IN OUT MICROSECONDS   every event later by MICROSECONDS
  edit_trace.py drop IN OUT K               without the K-th gloo collective
                                            (negative: from the end)
  edit_trace.py unlaunch IN OUT K           without the K-th collective and
                                            its launch (c10d::*)
  edit_trace.py swap-dims IN OUT NAME I J   swap the "Input Dims" of the I-th
                                            and J-th events named NAME
  edit_trace.py drop-name IN OUT NAME K     without the K-th event named NAME
  edit_trace.py scale-gpu IN OUT FACTOR     GPU kernels FACTOR times longer
  edit_trace.py scale-copies IN OUT FACTOR  device-to-host copies FACTOR
                                            times longer
  edit_trace.py check JSON MAX_ERROR        the replay report's relative error
                                            is within MAX_ERROR, fields present
Output files are plain JSON (the replay reads .json and .json.gz alike).
"""
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    command = sys.argv[1]
    if command == "check":
        report = json.load(open(sys.argv[2]))
        limit = float(sys.argv[3])
        for key in ("measured_iteration_s", "predicted_iteration_s",
                    "predicted_iteration_unaligned_s", "clock_offsets_s",
                    "critical_path", "collectives", "rank_reports"):
            assert key in report, key
        error = report["relative_error"]
        assert abs(error) <= limit, f"relative error {error:.4f} > {limit}"
        assert report["clock_offsets_s"][0] == 0
        assert report["critical_path"], "empty critical path"
        print(f"ok: ranks {report['ranks']}, error {error:+.4f} "
              f"(unaligned {report['relative_error_unaligned']:+.4f})")
        return
    trace = load(sys.argv[2])
    events = trace["traceEvents"]
    if command == "shift":
        for event in events:
            if "ts" in event:
                event["ts"] += float(sys.argv[4])
    elif command == "scale-gpu":
        for event in events:
            if event.get("cat") == "kernel":
                event["dur"] *= float(sys.argv[4])
    elif command == "scale-copies":
        for event in events:
            if event.get("cat") == "gpu_memcpy" and "DtoH" in event["name"]:
                event["dur"] *= float(sys.argv[4])
    elif command == "drop":
        collectives = [i for i, e in enumerate(events)
                       if e.get("name", "").startswith("gloo:")]
        del events[collectives[int(sys.argv[4])]]
    elif command == "unlaunch":
        k = int(sys.argv[4])
        for prefix in ("gloo:", "c10d::"):
            matches = [i for i, e in enumerate(events)
                       if e.get("name", "").startswith(prefix)]
            del events[matches[k]]
    elif command == "swap-dims":
        named = [e for e in events if e.get("name") == sys.argv[4]]
        a, b = named[int(sys.argv[5])], named[int(sys.argv[6])]
        a["args"]["Input Dims"], b["args"]["Input Dims"] = \
            b["args"]["Input Dims"], a["args"]["Input Dims"]
    elif command == "drop-name":
        named = [i for i, e in enumerate(events)
                 if e.get("name") == sys.argv[4]]
        del events[named[int(sys.argv[5])]]
    else:
        raise SystemExit(f"unknown command {command}")
    with open(sys.argv[3], "w") as f:
        json.dump(trace, f)


if __name__ == "__main__":
    main()
