//===- Module.cpp - The distir._distir extension module -------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Binds Api.h to Python: strings, dicts and numpy arrays (as float64, the
// executor's representation; distir/__init__.py converts to and from the
// arguments' dtypes). ApiError becomes distir.Error.
//
//===----------------------------------------------------------------------===//

#include "Api.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace distir::api;

namespace {

py::dict toDict(const Port &p) {
  py::dict d;
  d["name"] = p.name;
  d["element_type"] = p.elementType;
  d["shape"] = p.shape;
  d["is_tensor"] = p.isTensor;
  d["unsigned"] = p.isUnsigned;
  return d;
}

/// The calls below release the GIL: they touch no Python object.
template <typename F> auto withoutGIL(F &&f) {
  py::gil_scoped_release release;
  return f();
}

} // namespace

PYBIND11_MODULE(_distir, m) {
  m.doc() = "DistIR native bindings (use the distir package)";
  py::register_exception<ApiError>(m, "Error", PyExc_RuntimeError);

  m.def(
      "import_onnx",
      [](py::bytes bytes, const std::string &fileName,
         const std::vector<std::pair<std::string, Shape>> &shapes,
         bool weightsAsConstants, const std::string &funcName, int64_t device) {
        std::string data = bytes;
        return withoutGIL([&] {
          return importONNX(data, fileName, shapes, weightsAsConstants,
                            funcName, device);
        });
      },
      py::arg("data"), py::arg("file_name"), py::arg("input_shapes"),
      py::arg("weights_as_constants"), py::arg("func_name"), py::arg("device"));
  m.def(
      "build_mlp",
      [](int64_t layers, int64_t dim, int64_t batch, bool training,
         const std::string &dtype, int64_t device,
         const std::vector<int64_t> &distirDHP) {
        return withoutGIL([&] {
          return buildMLP(layers, dim, batch, training, dtype, device,
                          distirDHP);
        });
      },
      py::arg("layers"), py::arg("dim"), py::arg("batch"), py::arg("training"),
      py::arg("dtype"), py::arg("device"), py::arg("distir_dhp"));
  m.def(
      "verify",
      [](const std::string &text) {
        return withoutGIL([&] { return verify(text); });
      },
      py::arg("text"));
  m.def(
      "run_pipeline",
      [](const std::string &text, const std::string &pipeline) {
        return withoutGIL([&] { return runPipeline(text, pipeline); });
      },
      py::arg("text"), py::arg("pipeline"));
  m.def(
      "signature",
      [](const std::string &text, const std::string &entry) {
        Signature sig = withoutGIL([&] { return signature(text, entry); });
        py::dict d;
        d["entry"] = sig.entry;
        py::list args, results;
        for (const Port &p : sig.arguments)
          args.append(toDict(p));
        for (const Port &p : sig.results)
          results.append(toDict(p));
        d["arguments"] = args;
        d["results"] = results;
        return d;
      },
      py::arg("text"), py::arg("entry"));
  m.def(
      "execute",
      [](const std::string &text, const std::string &entry,
         const std::vector<py::array_t<
             double, py::array::c_style | py::array::forcecast>> &inputs) {
        std::vector<Array> arrays;
        for (const auto &in : inputs) {
          Array a;
          a.shape.assign(in.shape(), in.shape() + in.ndim());
          a.data.assign(in.data(), in.data() + in.size());
          arrays.push_back(std::move(a));
        }
        std::vector<Array> out =
            withoutGIL([&] { return execute(text, entry, arrays); });
        py::list results;
        for (Array &a : out) {
          py::array_t<double> data(a.shape);
          std::copy(a.data.begin(), a.data.end(), data.mutable_data());
          results.append(py::make_tuple(a.elementType, data));
        }
        return results;
      },
      py::arg("text"), py::arg("entry"), py::arg("inputs"));
  m.def(
      "simulate",
      [](const std::string &text, const std::string &entry,
         const std::string &cluster, const std::string &costModel,
         const std::string &calibration, const std::string &algorithm,
         bool overlap, int64_t batch, int64_t peakBuffers, bool trace) {
        SimulateOptions o;
        o.cluster = cluster;
        o.costModel = costModel;
        o.calibrationFile = calibration;
        o.algorithm = algorithm;
        o.overlap = overlap;
        o.batch = batch;
        o.peakBuffers = peakBuffers;
        o.trace = trace;
        return withoutGIL([&] { return simulate(text, entry, o); });
      },
      py::arg("text"), py::arg("entry"), py::arg("cluster"),
      py::arg("cost_model"), py::arg("calibration"), py::arg("algorithm"),
      py::arg("overlap"), py::arg("batch"), py::arg("peak_buffers"),
      py::arg("trace"));
  m.def(
      "search",
      [](const std::string &model,
         const std::vector<std::pair<std::string, Shape>> &inputShapes,
         const std::vector<int64_t> &batches, bool training,
         const std::string &dtype, bool dtypeGiven, const std::string &loss,
         const std::string &optimizer, const std::string &cluster,
         int64_t devices, bool allowFewer, int64_t maxMicrobatches,
         int64_t maxDP, int64_t maxTP, int64_t maxPP, int64_t maxZero,
         bool recompute, bool stageMeshes, const std::string &costModel,
         const std::string &algorithm, bool overlap, bool fast, unsigned jobs,
         bool emitBest) {
        SearchRequest r;
        r.model = model;
        r.inputShapes = inputShapes;
        r.batches = batches;
        r.training = training;
        r.dtype = dtype;
        r.dtypeGiven = dtypeGiven;
        r.loss = loss;
        r.optimizer = optimizer;
        r.cluster = cluster;
        r.devices = devices;
        r.allowFewer = allowFewer;
        r.maxMicrobatches = maxMicrobatches;
        r.maxDP = maxDP;
        r.maxTP = maxTP;
        r.maxPP = maxPP;
        r.maxZero = maxZero;
        r.recompute = recompute;
        r.stageMeshes = stageMeshes;
        r.costModel = costModel;
        r.algorithm = algorithm;
        r.overlap = overlap;
        r.fast = fast;
        r.jobs = jobs;
        r.emitBest = emitBest;
        return withoutGIL([&] { return search(r); });
      },
      py::arg("model"), py::arg("input_shapes"), py::arg("batches"),
      py::arg("training"), py::arg("dtype"), py::arg("dtype_given"),
      py::arg("loss"), py::arg("optimizer"), py::arg("cluster"),
      py::arg("devices"), py::arg("allow_fewer"), py::arg("max_microbatches"),
      py::arg("max_dp"), py::arg("max_tp"), py::arg("max_pp"), py::arg("zero"),
      py::arg("recompute"), py::arg("stage_meshes"), py::arg("cost_model"),
      py::arg("algorithm"), py::arg("overlap"), py::arg("fast"),
      py::arg("jobs"), py::arg("emit_best"));
  m.def(
      "synthesize",
      [](const std::string &hierarchy, bool hasHierarchy,
         const std::string &axes, const std::string &reduce,
         const std::string &cluster, unsigned maxSize,
         const std::string &algorithm, double bytes,
         bool allMasterCollectives) {
        return withoutGIL([&] {
          return synthesize(hierarchy, hasHierarchy, axes, reduce, cluster,
                            maxSize, algorithm, bytes, allMasterCollectives);
        });
      },
      py::arg("hierarchy"), py::arg("has_hierarchy"), py::arg("axes"),
      py::arg("reduce"), py::arg("cluster"), py::arg("max_size"),
      py::arg("algorithm"), py::arg("bytes"),
      py::arg("all_master_collectives"));
  m.def(
      "cluster_json",
      [](const std::string &spec) {
        return withoutGIL([&] { return clusterJSON(spec); });
      },
      py::arg("spec"));
}
