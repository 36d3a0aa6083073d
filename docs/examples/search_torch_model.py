#!/usr/bin/python3
"""Plan the training of a PyTorch model with DistIR, from Python.

    PYTHONPATH=build/python_packages /usr/bin/python3 \
        docs/examples/search_torch_model.py OUT_DIR

Exports a small `nn.TransformerEncoder` (nothing DistIR-specific in it),
searches data/tensor/pipeline-parallel plans for its training step (MSE
loss, Adam) on one DGX A100, prints the best plans, and writes the best
plan's program and its simulated timeline (a Chrome trace: open it in
Perfetto or chrome://tracing) to OUT_DIR. The test suite runs this script
(test/Examples/python-example.test).
"""
import io
import os
import sys

import torch

import distir

out_dir = sys.argv[1] if len(sys.argv) > 1 else "out/python-example"

# 1. A model as PyTorch users write it, exported to ONNX in memory.
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4,
                                         dim_feedforward=256,
                                         batch_first=True, dropout=0.0)
model = torch.nn.TransformerEncoder(layer, num_layers=4).eval()
batch, seq, width = 32, 16, 64
onnx_model = io.BytesIO()
torch.onnx.export(model, (torch.randn(batch, seq, width),), onnx_model,
                  input_names=["x"], output_names=["y"], opset_version=13)

# 2. Search: every D/T/P split of the 8 GPUs, up to 4 microbatches, ZeRO
#    stages 0-1, simulated on the cluster's cost model.
results = distir.search(onnx_model.getvalue(), cluster="dgx-a100",
                        batch=batch, input_shapes={"x": [batch, seq, width]},
                        training=True, loss="mse", optimizer="adam",
                        max_microbatches=4, zero=1, emit_best=True)

# 3. The plans, as practitioners read them.
counts = results.summary["counts"]
print(f"{len(results)} configurations: {counts['ok']} fit, "
      f"{counts['oom']} out of memory, {counts['skipped']} rejected by "
      "dist-dtp")
print(f"{'rank':>4} {'D':>2} {'T':>2} {'P':>2} {'K':>2} {'ZeRO':>4} "
      f"{'schedule':<10} {'step ms':>9} {'samples/s':>10} {'peak MiB':>9}")
for r in results.ranked[:5]:
    print(f"{r['rank']:>4} {r['dp']:>2} {r['tp']:>2} {r['pp']:>2} "
          f"{r['microbatches']:>2} {r['zero']:>4} {r['schedule'] or '-':<10} "
          f"{r['latency_s'] * 1e3:>9.3f} {r['throughput']:>10.1f} "
          f"{r['peak_bytes'] / 2**20:>9.2f}")
best = results.best
print(f"best: D/T/P/K = {best['dp']}/{best['tp']}/{best['pp']}/"
      f"{best['microbatches']}, ZeRO {best['zero']}, "
      f"{best['throughput']:.1f} samples/s")

# 4. The best plan's program (MLIR text, for distir-opt or any MLIR tool)
#    and its timeline.
os.makedirs(out_dir, exist_ok=True)
program = results.best_program
with open(os.path.join(out_dir, "best.mlir"), "w") as f:
    f.write(program.text)
trace = os.path.join(out_dir, "best-trace.json")
report = program.simulate(cluster="dgx-a100", entry="main_dtp", batch=batch,
                          trace=trace)
print(f"simulated step: {report['latency'] * 1e3:.3f} ms on "
      f"{len(report['devices'])} devices; trace written to {trace}")
