"""Tests of the distir Python package (run by test/Python/package.test)."""
import io
import json
import os

import numpy as np
import pytest

import distir


def random_inputs(module, entry="", seed=0):
    rng = np.random.default_rng(seed)
    return {a["name"]: rng.standard_normal(a["shape"]).astype(np.float32)
            for a in module.signature(entry)["arguments"]}


def test_mlp_data_parallel_equals_sequential():
    m = distir.build_mlp(layers=2, dim=8, batch=4)
    inputs = random_inputs(m)
    expected = m.execute(inputs)
    dp = m.run("dist-dtp{dp=2 microbatches=2}")
    # The wrapper @mlp distributes, runs the step and gathers.
    got = dp.execute(inputs, entry="mlp")
    assert expected[0].dtype == np.float32 and expected[0].shape == (4, 8)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    # Both spellings of a pipeline give the same program.
    assert m.run("builtin.module(dist-dtp{dp=2 microbatches=2})").text == \
        dp.text


def test_inputs_by_position_and_name():
    m = distir.build_mlp(layers=1, dim=4, batch=2)
    inputs = random_inputs(m)
    by_name = m.execute(inputs)
    by_position = m.execute([inputs[a["name"]] for a in
                             m.signature()["arguments"]])
    np.testing.assert_array_equal(by_name[0], by_position[0])


def transformer_encoder():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2,
                                             dim_feedforward=32,
                                             batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
    x = torch.randn(4, 5, 16)
    with torch.no_grad():
        expected = model(x).numpy()
    buffer = io.BytesIO()
    torch.onnx.export(model, (x,), buffer, input_names=["x"],
                      output_names=["y"], opset_version=13)
    return buffer.getvalue(), x.numpy(), expected


def test_import_torch_encoder_equals_pytorch(tmp_path):
    onnx = pytest.importorskip("onnx")
    data, x, expected = transformer_encoder()
    # Bytes, an onnx.ModelProto and a path import the same program.
    m = distir.import_onnx(data, weights="constants")
    assert distir.import_onnx(onnx.load_from_string(data),
                              weights="constants").text == m.text
    path = tmp_path / "encoder.onnx"
    path.write_bytes(data)
    assert distir.import_onnx(path, weights="constants").text == m.text
    (y,) = m.execute({"x": x})
    err = np.max(np.abs(y - expected)) / np.max(np.abs(expected))
    assert err <= 1e-4
    # Data parallel on 2 devices: equal outputs.
    (y2,) = m.run("dist-dtp{dp=2}").execute({"x": x}, entry="main")
    np.testing.assert_allclose(y2, y, rtol=1e-5, atol=1e-6)


PLAIN = """
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
"""


def test_plain_ir_goes_in_through_dist_place():
    with pytest.raises(distir.Error, match="has no placement"):
        distir.parse(PLAIN)
    placed = distir.Module(PLAIN).run("dist-place")
    args = placed.signature()["arguments"]
    assert [a["name"] for a in args] == ["arg0", "arg1"]
    assert "dist.batch_dim = 0" in placed.text
    inputs = random_inputs(placed)
    expected = placed.execute(inputs)
    got = placed.run("dist-dtp{dp=2 microbatches=2}").execute(
        inputs, entry="linear")
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)


def test_distir_compat_program():
    # The published DistIR's own step (dp=1, hp=1, pp=2, K=2): the worked
    # example of docs/design/reference-facts.md.
    m = distir.build_mlp(layers=4, dim=4, batch=8, training=True,
                         distir_dhp=(1, 1, 2, 2))
    report = m.simulate(cluster="distir-uniform:devices=2",
                        cost_model="distir-compat")
    assert abs(report["latency"] - 4.200873897e-4) < 1e-12
    assert [d["peak_bytes"] for d in report["devices"]] == [768, 964]
    with pytest.raises(distir.Error, match="four numbers"):
        distir.build_mlp(training=True, distir_dhp=(1, 2))
    with pytest.raises(distir.Error, match="does not divide the 4 layers"):
        distir.build_mlp(layers=4, training=True, distir_dhp=(1, 1, 3, 1))


def test_simulate_report_and_trace(tmp_path):
    m = distir.build_mlp(layers=2, dim=64, batch=16, training=True)
    dp = m.run("dist-dtp{dp=2}")
    trace = tmp_path / "new" / "dir" / "trace.json"
    report = dp.simulate(cluster="dgx-a100", entry="mlp_dtp", trace=trace)
    assert report["latency"] > 0
    assert [d["device"] for d in report["devices"]] == [0, 1]
    events = json.loads(trace.read_text())
    assert isinstance(events, (list, dict)) and events
    # The module's own cluster is used when none is given.
    attached = dp.run("dist-attach-cluster{cluster=dgx-a100}")
    assert attached.simulate(entry="mlp_dtp")["latency"] == report["latency"]


def test_search_records_and_best_program():
    results = distir.search("mlp:4,32", cluster="dgx-h100", batch=16,
                            training=True, emit_best=True, jobs=2)
    assert results.summary["counts"]["ok"] == len(results.ranked)
    best = results.best
    assert best["rank"] == 1 and best["status"] == "ok"
    assert all(best["throughput"] >= r["throughput"] for r in results.ranked)
    assert {"dp", "tp", "pp", "microbatches", "peak_bytes", "latency_s",
            "mfu"} <= set(best)
    # The best program simulates to the latency the search reported.
    program = results.best_program
    report = program.simulate(cluster="dgx-h100", entry="mlp_dtp",
                              batch=16)
    assert report["latency"] == pytest.approx(best["latency_s"], rel=1e-9)


def test_search_stage_meshes():
    # Per-stage tensor-parallel degrees (distir-search --stage-meshes): on 8
    # devices, the 4-stage pipelines of a 4-layer MLP with degrees 4,2,1,1.
    results = distir.search("mlp:4,32", cluster="distir-uniform:devices=8",
                            batch=16, training=True, max_dp=1, max_pp=4,
                            jobs=2, stage_meshes=True)
    meshes = [r for r in results if r["stage_tp"]]
    assert len(meshes) == 12
    assert all(sorted(r["stage_tp"]) == [1, 1, 2, 4] and r["tp"] == 4 and
               r["devices"] == 8 for r in meshes)
    assert "stage-tp=" in meshes[0]["pass_options"]
    plain = distir.search("mlp:4,32", cluster="distir-uniform:devices=8",
                          batch=16, training=True, max_dp=1, max_pp=4, jobs=2)
    assert not any(r["stage_tp"] for r in plain)


def test_search_batch_sweep():
    results = distir.search("mlp:2,32", cluster="dgx-a100", batch=[8, 16],
                            jobs=2)
    assert {r["batch"] for r in results} == {8, 16}


def test_to_dataframe():
    results = distir.search("mlp:2,32", cluster="dgx-a100", batch=8, jobs=1)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(distir.Error, match="needs pandas"):
            results.to_dataframe()
        return
    frame = results.to_dataframe()
    assert len(frame) == len(results)


def test_to_dataframe_hands_the_records_to_pandas(monkeypatch):
    # pandas is not a dependency: a stand-in module checks what
    # to_dataframe gives pandas.DataFrame (the records, one dict each).
    import sys
    import types
    stub = types.ModuleType("pandas")
    stub.DataFrame = lambda rows: ("frame", rows)
    monkeypatch.setitem(sys.modules, "pandas", stub)
    results = distir.search("mlp:2,32", cluster="dgx-a100", batch=8, jobs=1)
    kind, rows = results.to_dataframe()
    assert kind == "frame" and rows == list(results)
    assert all(isinstance(r, dict) and "dp" in r for r in rows)


def test_cluster():
    c = distir.cluster("dgx-h100:nodes=2")
    assert json.dumps(c)  # plain JSON
    with pytest.raises(distir.Error, match="unknown cluster"):
        distir.cluster("no-such-cluster")


@pytest.mark.parametrize("call, message", [
    (lambda: distir.build_mlp(layers=0), "layers"),
    (lambda: distir.import_onnx(b"not an onnx model"), "error"),
    (lambda: distir.import_onnx("/nonexistent/model.onnx"), "cannot read"),
    (lambda: distir.build_mlp().run("dist-dtp{bogus=1}"),
     "no such option bogus"),
    (lambda: distir.build_mlp(batch=4).run("dist-dtp{dp=3}"),
     "dp=3 does not divide the batch dimension"),
    (lambda: distir.parse("func.func @f("), "error"),
    (lambda: distir.build_mlp().simulate(cluster="dgx-a100", entry="nope"),
     "no function @nope"),
    (lambda: distir.build_mlp().simulate(), "no cluster"),
    (lambda: distir.search("mlp:2,8", cluster="dgx-a100", batch=0),
     "batch sizes must be positive"),
    (lambda: distir.search("model.txt", cluster="dgx-a100", batch=1),
     "unknown model"),
    (lambda: distir.search("mlp:2,8", cluster="dgx-a100", batch=4,
                           devices=3), "not a power of two"),
    (lambda: distir.import_onnx(b"", weights="sometimes"),
     "weights must be"),
])
def test_errors_raise_distir_error(call, message):
    with pytest.raises(distir.Error, match=message):
        call()


def test_execute_checks_inputs():
    m = distir.build_mlp(layers=1, dim=4, batch=2)
    inputs = random_inputs(m)
    with pytest.raises(distir.Error, match="missing input"):
        m.execute({k: v for k, v in list(inputs.items())[1:]})
    with pytest.raises(distir.Error, match="has no argument named 'extra'"):
        m.execute({**inputs, "extra": np.zeros(1)})
    bad = dict(inputs)
    bad["arg0"] = np.zeros((3, 4), np.float32)
    with pytest.raises(distir.Error, match="has shape"):
        m.execute(bad)


def test_integer_inputs_are_checked():
    torch = pytest.importorskip("torch")
    embed = torch.nn.Embedding(10, 4)
    ids = torch.tensor([[1, 2, 3]])
    buffer = io.BytesIO()
    torch.onnx.export(embed, (ids,), buffer, input_names=["ids"],
                      opset_version=13)
    m = distir.import_onnx(buffer.getvalue(), weights="constants")
    (y,) = m.execute({"ids": ids.numpy()})
    np.testing.assert_allclose(y, embed(ids).detach().numpy(), rtol=1e-6)
    with pytest.raises(distir.Error, match="is float32, the argument holds"):
        m.execute({"ids": ids.numpy().astype(np.float32)})
    with pytest.raises(distir.Error, match="out of range|index"):
        m.execute({"ids": np.array([[1, 2, 99]])})


def test_text_interoperates():
    m = distir.build_mlp(layers=1, dim=4, batch=2)
    assert distir.parse(str(m)).text == m.text
    assert "func.func @mlp" in repr(m)


def test_build_gpt2():
    pytest.importorskip("torch")
    m = distir.build_gpt2("gpt2-tiny", batch=2, seq=4)
    args = m.signature()["arguments"]
    assert args[0]["name"] == "input_ids" and args[0]["shape"] == [2, 4]
    inputs = random_inputs(m)
    inputs["input_ids"] = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    (logits,) = m.execute(inputs)
    assert logits.shape == (2, 4, 64)
    (dp,) = m.run("dist-dtp{dp=2}").execute(inputs, entry="main")
    np.testing.assert_allclose(dp, logits, rtol=1e-5, atol=1e-6)


def test_synthesize():
    report = distir.synthesize(axes=[2, 16], reduce=[1],
                               hierarchy={"node": 2, "gpu": 16},
                               cluster="gcp-a100x16:nodes=2")
    assert [a["size"] for a in report["axes"]] == [2, 16]
    assert report["matrices"]
    for matrix in report["matrices"]:
        best = matrix["best"]
        assert best["time"] == min(p["time"] for p in matrix["programs"])
        assert matrix["speedup"] == pytest.approx(
            matrix["baseline_time"] / best["time"])
    # The same request as text.
    assert distir.synthesize(axes="2,16", reduce="1",
                             hierarchy="node:2,gpu:16",
                             cluster="gcp-a100x16:nodes=2") == report
    # The P2 paper's count for one axis of 32 devices on [[2, 16]]; 104
    # with the Master form taking every collective.
    counts = [distir.synthesize(axes=[32], reduce=[0],
                                hierarchy="node:2,gpu:16",
                                master_collectives=masters)
              ["matrices"][0]["num_programs"] for masters in ("allreduce", "all")]
    assert counts == [47, 104]
    with pytest.raises(distir.Error, match="master_collectives must be"):
        distir.synthesize(axes=[32], reduce=[0], hierarchy="node:2,gpu:16",
                          master_collectives="some")
    with pytest.raises(distir.Error, match="axes product 16 does not match"):
        distir.synthesize(axes=[2, 8], reduce=[1], hierarchy="node:2,gpu:16")
    with pytest.raises(distir.Error, match="reduce index 5 out of range"):
        distir.synthesize(axes=[2, 16], reduce=[5], hierarchy="node:2,gpu:16")
