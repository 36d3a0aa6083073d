//===- TraceReader.cpp - Read torch.profiler Chrome traces ----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Trace.h"
#include "DistIR/Support/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <zlib.h>

using namespace distir::replay;
namespace json = llvm::json;

static llvm::Error fail(llvm::StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + message);
}

/// Inflates a gzip file; a stream that stops before its end is an error
/// (a truncated download or an interrupted write).
static llvm::Expected<std::string> gunzip(llvm::StringRef path,
                                          llvm::StringRef data) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    return fail(path, "cannot initialize zlib");
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char chunk[1 << 16];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef *>(chunk);
    stream.avail_out = sizeof(chunk);
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - stream.avail_out);
    // No progress with input left means the stream is cut off.
    if (status == Z_BUF_ERROR && stream.avail_in == 0)
      break;
  }
  inflateEnd(&stream);
  if (status == Z_STREAM_END)
    return out;
  if (status == Z_BUF_ERROR || status == Z_OK)
    return fail(path, "truncated gzip stream");
  return fail(path, llvm::Twine("corrupt gzip stream (") +
                        (stream.msg ? stream.msg : "zlib error") + ")");
}

/// Thread ids are numbers in PyTorch's traces, strings in some tools'.
static int64_t threadId(const json::Value *value,
                        std::map<std::string, int64_t> &named) {
  if (!value)
    return 0;
  if (std::optional<int64_t> id = value->getAsInteger())
    return *id;
  if (std::optional<llvm::StringRef> text = value->getAsString())
    return named.try_emplace(text->str(), -1 - (int64_t)named.size())
        .first->second;
  return 0;
}

/// Elements of each input in "Input Dims" ([] for a non-tensor argument).
static std::vector<int64_t> inputElements(const json::Object &args) {
  std::vector<int64_t> elements;
  const json::Array *dims = args.getArray("Input Dims");
  if (!dims)
    return elements;
  for (const json::Value &input : *dims) {
    const json::Array *shape = input.getAsArray();
    int64_t count = 0;
    if (shape && !shape->empty()) {
      count = 1;
      for (const json::Value &dim : *shape)
        count *= std::max<int64_t>(0, dim.getAsInteger().value_or(0));
    }
    elements.push_back(count);
  }
  return elements;
}

static llvm::Error readEvents(llvm::StringRef path, const json::Array &events,
                              RankTrace &trace) {
  std::map<std::string, int64_t> namedThreads;
  std::vector<MemoryEvent> hostMemory;
  for (auto [index, value] : llvm::enumerate(events)) {
    const json::Object *event = value.getAsObject();
    if (!event)
      return fail(path, llvm::formatv("event {0} is not an object", index));
    std::optional<llvm::StringRef> phase = event->getString("ph");
    std::optional<llvm::StringRef> name = event->getString("name");
    if (!phase)
      return fail(path, llvm::formatv("event {0} has no \"ph\"", index));
    const json::Object *args = event->getObject("args");
    if (*phase == "i" && name == "[memory]") {
      std::optional<double> time = event->getNumber("ts");
      std::optional<int64_t> bytes =
          args ? args->getInteger("Bytes") : std::nullopt;
      if (!time || !bytes)
        return fail(path, llvm::formatv("memory event {0} needs \"ts\" and "
                                        "args.Bytes",
                                        index));
      // Kineto's device types: 0 the host, 1 CUDA.
      bool onGpu = args->getInteger("Device Type").value_or(0) == 1;
      (onGpu ? trace.memory : hostMemory).push_back({*time * 1e-6, *bytes});
      continue;
    }
    if (*phase != "X")
      continue;
    std::optional<llvm::StringRef> category = event->getString("cat");
    // Kineto's copies of host annotations onto the GPU streams they
    // launched work on: the span of that work, which the kernels give.
    if (category && *category == "gpu_user_annotation")
      continue;
    std::optional<double> start = event->getNumber("ts");
    std::optional<double> duration = event->getNumber("dur");
    if (!name || !start || !duration || *duration < 0)
      return fail(path, llvm::formatv("complete event {0} needs \"name\", "
                                      "\"ts\" and a non-negative \"dur\"",
                                      index));
    std::optional<int64_t> correlation =
        args ? args->getInteger("correlation") : std::nullopt;
    // GPU activity on CUDA streams: linked to its launch by correlation id.
    if (category && (*category == "kernel" || *category == "gpu_memcpy" ||
                     *category == "gpu_memset")) {
      std::optional<int64_t> stream =
          args ? args->getInteger("stream") : std::nullopt;
      if (!stream || !correlation)
        return fail(path, llvm::formatv("GPU event {0} ('{1}') needs "
                                        "args.stream and args.correlation",
                                        index, *name));
      trace.gpu.push_back({name->str(), *stream, *start * 1e-6,
                           *duration * 1e-6, *correlation});
      continue;
    }
    TraceEvent parsed;
    parsed.name = name->str();
    parsed.thread = threadId(event->get("tid"), namedThreads);
    parsed.start = *start * 1e-6;
    parsed.duration = *duration * 1e-6;
    if (args)
      parsed.inputElements = inputElements(*args);
    if (category &&
        (*category == "cuda_runtime" || *category == "cuda_driver")) {
      parsed.runtimeCall = true;
      parsed.correlation = correlation.value_or(-1);
    }
    trace.events.push_back(std::move(parsed));
  }
  if (trace.memory.empty())
    trace.memory = std::move(hostMemory);
  llvm::sort(trace.gpu, [](const GpuEvent &a, const GpuEvent &b) {
    return std::tie(a.start, a.stream, a.correlation) <
           std::tie(b.start, b.stream, b.correlation);
  });
  // Enclosing events first among those starting together.
  llvm::sort(trace.events, [](const TraceEvent &a, const TraceEvent &b) {
    if (a.start != b.start)
      return a.start < b.start;
    return a.duration > b.duration;
  });
  // By time; events at the same time keep the file's order (an allocation
  // and a release together must not swap: that would move a peak).
  std::vector<size_t> order(trace.memory.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    const MemoryEvent &x = trace.memory[a], &y = trace.memory[b];
    return x.time != y.time ? x.time < y.time : a < b;
  });
  std::vector<MemoryEvent> sorted;
  sorted.reserve(order.size());
  for (size_t index : order)
    sorted.push_back(trace.memory[index]);
  trace.memory = std::move(sorted);
  return llvm::Error::success();
}

llvm::Expected<RankTrace> distir::replay::readRankTrace(llvm::StringRef path,
                                                        int64_t position) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false);
  if (!file)
    return fail(path, file.getError().message());
  llvm::StringRef data = (*file)->getBuffer();
  std::string inflated;
  if (data.starts_with("\x1f\x8b")) {
    llvm::Expected<std::string> text = gunzip(path, data);
    if (!text)
      return text.takeError();
    inflated = std::move(*text);
    data = inflated;
  }
  json::Value document(nullptr);
  std::string error;
  if (!distir::parseJSON(data, document, error))
    return fail(path, "not a JSON trace: " + error);

  RankTrace trace;
  trace.path = path.str();
  trace.rank = position;
  const json::Array *events = document.getAsArray();
  if (const json::Object *root = document.getAsObject()) {
    events = root->getArray("traceEvents");
    if (const json::Object *info = root->getObject("distributedInfo")) {
      std::optional<int64_t> rank = info->getInteger("rank");
      trace.worldSize = info->getInteger("world_size");
      if (!rank || !trace.worldSize || *rank < 0 || *rank >= *trace.worldSize)
        return fail(path, "distributedInfo needs a rank below world_size");
      trace.rank = *rank;
      trace.backend = info->getString("backend").value_or("").str();
      // NCCL's collectives are kernels on GPU streams: its host-side events
      // time launches, not transfers, and a ring of NCCL kernels across
      // ranks is not joined yet.
      if (trace.backend == "nccl")
        return fail(path, "an NCCL job (distributedInfo backend 'nccl'): its "
                          "collectives are NCCL kernels, which are not "
                          "replayed yet (gloo jobs are, on CPUs and GPUs)");
    }
  }
  if (!events)
    return fail(path, "not a Chrome trace: expected an array of events or "
                      "an object with \"traceEvents\"");
  if (llvm::Error err = readEvents(path, *events, trace))
    return std::move(err);
  if (trace.events.empty())
    return fail(path, "the trace has no complete events");
  return trace;
}

llvm::Expected<std::vector<RankTrace>>
distir::replay::readJobTraces(llvm::ArrayRef<std::string> paths) {
  if (paths.size() < 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "a replay needs the traces of every rank of a distributed job (at "
        "least 2), got " +
            llvm::Twine(paths.size()));
  std::vector<RankTrace> traces;
  for (auto [position, path] : llvm::enumerate(paths)) {
    llvm::Expected<RankTrace> trace = readRankTrace(path, position);
    if (!trace)
      return trace.takeError();
    traces.push_back(std::move(*trace));
  }
  const RankTrace &first = traces.front();
  for (const RankTrace &trace : traces) {
    if (trace.worldSize != first.worldSize || trace.backend != first.backend)
      return fail(trace.path,
                  "distributedInfo (backend, world_size) differs from " +
                      first.path + ": traces of different jobs");
  }
  if (first.worldSize && *first.worldSize != (int64_t)traces.size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("the job has {0} ranks (distributedInfo) but {1} "
                      "traces were given",
                      *first.worldSize, traces.size()));
  llvm::sort(traces, [](const RankTrace &a, const RankTrace &b) {
    return a.rank < b.rank;
  });
  for (size_t i = 1; i < traces.size(); ++i)
    if (traces[i].rank == traces[i - 1].rank)
      return fail(traces[i].path,
                  llvm::formatv("rank {0} is also {1}", traces[i].rank,
                                traces[i - 1].path));
  return traces;
}
