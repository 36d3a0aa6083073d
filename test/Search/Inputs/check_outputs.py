"""Checks the CSV, JSON and SVG that distir-search writes agree.

Usage: check_outputs.py CSV JSON SVG
Prints one summary line for FileCheck; exits non-zero on any inconsistency.
"""

import csv
import json
import sys
import xml.etree.ElementTree as ET

COLUMNS = ["index", "rank", "batch", "dp", "tp", "pp", "microbatches",
           "schedule", "mapping", "devices", "status", "latency_s",
           "throughput", "peak_bytes", "peak_device", "resident_bytes",
           "microbatch_size", "tokens_per_s", "model_flops",
           "model_tflops_per_device", "mfu", "zero", "recompute",
           "peak_weights", "peak_gradients", "peak_activations",
           "peak_inputs", "peak_communication", "peak_optimizer_state",
           "stage_transfer_s", "stage_tp", "reason"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    csv_path, json_path, svg_path = sys.argv[1:4]
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            fail("CSV columns %s" % reader.fieldnames)
        rows = list(reader)
    with open(json_path) as f:
        report = json.load(f)
    configs = report["configurations"]
    if len(configs) != len(rows):
        fail("%d CSV rows but %d JSON configurations" % (len(rows), len(configs)))

    ranked = []
    for row, config in zip(rows, configs):
        for key in ("index", "rank", "batch", "dp", "tp", "pp", "microbatches",
                    "devices"):
            if int(row[key]) != config[key]:
                fail("row %s: %s differs" % (row["index"], key))
        if row["status"] != config["status"]:
            fail("row %s: status differs" % row["index"])
        stage_tp = [int(t) for t in row["stage_tp"].split(":") if t]
        if stage_tp != config["stage_tp"]:
            fail("row %s: stage_tp differs" % row["index"])
        meshes = sum(stage_tp) if stage_tp else int(row["tp"]) * int(row["pp"])
        if int(row["devices"]) != int(row["dp"]) * meshes:
            fail("row %s: devices != dp*tp*pp (dp * the stages' tp)" % row["index"])
        if (row["schedule"] == "") != (int(row["pp"]) == 1):
            fail("row %s: schedule given iff pp > 1" % row["index"])
        if int(row["microbatch_size"]) * int(row["dp"]) * int(row["microbatches"]) != int(row["batch"]):
            fail("row %s: microbatch_size != batch / (dp * K)" % row["index"])
        if row["mfu"] and abs(float(row["mfu"]) - config.get("mfu", -1)) > 1e-5 * max(1.0, float(row["mfu"])):
            fail("row %s: mfu differs" % row["index"])
        if row["status"] in ("ok", "oom"):
            latency, throughput = float(row["latency_s"]), float(row["throughput"])
            if latency <= 0 or abs(throughput * latency - int(row["batch"])) > 1e-6 * int(row["batch"]):
                fail("row %s: throughput != batch / latency" % row["index"])
            split = sum(int(row[c]) for c in ("peak_weights", "peak_gradients", "peak_activations", "peak_inputs", "peak_communication", "peak_optimizer_state"))
            if split != int(row["peak_bytes"]):
                fail("row %s: the peak's split does not add up" % row["index"])
            if int(row["peak_bytes"]) > report["capacity_bytes"] and row["status"] == "ok":
                fail("row %s: ok but over capacity" % row["index"])
        else:
            if not row["reason"]:
                fail("row %s: %s without a reason" % (row["index"], row["status"]))
        if row["status"] == "ok":
            ranked.append((int(row["rank"]), -float(row["throughput"])))
        elif int(row["rank"]) != 0:
            fail("row %s: ranked but not ok" % row["index"])
    ranked.sort()
    if [r for r, _ in ranked] != list(range(1, len(ranked) + 1)):
        fail("ranks are not 1..%d" % len(ranked))
    if [t for _, t in ranked] != sorted(t for _, t in ranked):
        fail("ranks do not follow throughput")
    best = report["best"]
    if ranked and configs[best]["rank"] != 1:
        fail("JSON best is not rank 1")

    ns = {"svg": "http://www.w3.org/2000/svg"}
    root = ET.parse(svg_path).getroot()
    points = root.findall(".//svg:g[@id='points']/*", ns)
    simulated = sum(1 for r in rows if r["status"] in ("ok", "oom"))
    best_points = root.findall(".//svg:circle[@class='best']", ns)
    if len(points) + len(best_points) != simulated:
        fail("%d points for %d simulated configurations" %
             (len(points) + len(best_points), simulated))
    if len(best_points) != (1 if ranked else 0):
        fail("best highlighted %d times" % len(best_points))
    for axis in ("x-ticks", "y-ticks"):
        if len(root.findall(".//svg:g[@id='%s']/svg:text" % axis, ns)) < 3:
            fail("too few %s" % axis)
    labels = [root.find(".//svg:text[@id='%s']" % a, ns).text
              for a in ("x-label", "y-label")]

    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("consistent: %d rows, %s; best rank 1 = index %s; %d points; "
          "axes '%s' / '%s'" % (
              len(rows), ", ".join("%d %s" % (counts[k], k) for k in sorted(counts)),
              best, simulated, labels[0], labels[1]))


if __name__ == "__main__":
    main()
