//===- Report.cpp - Tables, CSV, JSON and SVG of a search -----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Search.h"
#include "DistIR/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace distir;
using namespace distir::search;

std::string search::formatBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (std::fabs(value) >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} B", bytes).str();
  return llvm::formatv("{0:f2} {1}", value, units[unit]).str();
}

static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%.6g", value)).str();
}

static StringRef scheduleOrDash(const SearchConfig &config) {
  return config.schedule.empty() ? StringRef("-") : StringRef(config.schedule);
}

static std::string describe(const SearchConfig &config) {
  std::string text =
      llvm::formatv("D/T/P/K = {0}/{1}/{2}/{3}", config.dp, config.getTPText(),
                    config.pp, config.microbatches)
          .str();
  if (!config.schedule.empty())
    text += " " + config.schedule;
  if (config.dp > 1 && config.tp > 1)
    text += " " + config.mapping;
  if (config.zero > 0)
    text += " zero=" + std::to_string(config.zero);
  if (config.recompute != Recompute::None)
    text += " recompute=" + stringifyRecompute(config.recompute).str();
  return text;
}

//===----------------------------------------------------------------------===//
// Table
//===----------------------------------------------------------------------===//

/// ", MFU 41.3% (16.2 TFLOP/s per device)" when the device's peak is known.
static std::string describeMFU(const ConfigResult &r) {
  if (r.peakFlopsPerDevice <= 0 || r.modelFlops <= 0)
    return "";
  return llvm::formatv(", MFU {0:f1}% ({1:f1} TFLOP/s per device)",
                       100 * r.getMFU(), r.getModelFlopsPerDevice() / 1e12)
      .str();
}

void search::printTable(llvm::raw_ostream &os, const SearchSummary &summary,
                        ArrayRef<ConfigResult> results,
                        ArrayRef<size_t> ranking, size_t top) {
  os << "model " << summary.model << (summary.training ? " (training)" : "")
     << " on " << summary.cluster << ", " << summary.devices << " devices of "
     << formatBytes(summary.capacityBytes) << ", cost model "
     << summary.costModel << "\n";
  size_t rows = std::min(top, ranking.size());
  if (rows > 0) {
    // Explicit device orders ("tp:4,pp:2,dp:2") are wider than the names.
    size_t mappingWidth = 8;
    for (size_t r = 0; r < rows; ++r)
      mappingWidth =
          std::max(mappingWidth, results[ranking[r]].config.mapping.size());
    auto padded = [&](StringRef text) {
      return (text + std::string(mappingWidth - text.size(), ' ')).str();
    };
    // So are per-stage degrees ("4,2,1,1"), right-aligned.
    size_t tpWidth = 4;
    for (size_t r = 0; r < rows; ++r)
      tpWidth =
          std::max(tpWidth, results[ranking[r]].config.getTPText().size());
    auto tpColumn = [&](StringRef text) {
      return (std::string(tpWidth - text.size(), ' ') + text).str();
    };
    os << llvm::formatv("{0,4}  ", "rank");
    if (summary.batchSweep)
      os << llvm::formatv("{0,6}  ", "batch");
    os << llvm::formatv("{0,4} {1} {2,4} {3,4}  {4,-10}  {5}  {6,-7}  "
                        "{7,12}  {8,14}  {9,6}  {10,12}  {11}\n",
                        "D", tpColumn("T"), "P", "K", "schedule",
                        padded("mapping"), "memory", "latency", "throughput/s",
                        "MFU", "peak memory", "status");
    for (size_t r = 0; r < rows; ++r) {
      const ConfigResult &result = results[ranking[r]];
      const SearchConfig &c = result.config;
      os << llvm::formatv("{0,4}  ", r + 1);
      if (summary.batchSweep)
        os << llvm::formatv("{0,6}  ", c.batch);
      // Memory transforms: ZeRO stage and recomputation ("-" for none).
      std::string memory = c.zero > 0 ? "z" + std::to_string(c.zero) : "";
      if (c.recompute != Recompute::None) {
        std::string rc = c.recompute == Recompute::Half ? "rc/2" : "rc";
        memory += memory.empty() ? rc : "+" + rc;
      }
      if (memory.empty())
        memory = "-";
      os << llvm::formatv(
          "{0,4} {1} {2,4} {3,4}  {4,-10}  {5}  {6,-7}  {7,12}  {8,14}  "
          "{9,6}  {10,12}  {11}\n",
          c.dp, tpColumn(c.getTPText()), c.pp, c.microbatches,
          scheduleOrDash(c), padded(c.mapping), memory,
          formatSeconds(result.latency),
          llvm::formatv("{0:f1}", result.throughput).str(),
          result.peakFlopsPerDevice > 0
              ? llvm::formatv("{0:f1}%", 100 * result.getMFU()).str()
              : std::string("-"),
          formatBytes(result.peakBytes), stringifyConfigStatus(result.status));
    }
  }
  size_t counts[4] = {0, 0, 0, 0};
  for (const ConfigResult &result : results)
    ++counts[static_cast<unsigned>(result.status)];
  os << results.size() << " configurations: " << counts[0] << " ok, "
     << counts[1] << " oom, " << counts[2] << " skipped, " << counts[3]
     << " failed\n";
  // Replication is a decision the plan shows (reasons in --json).
  for (const TensorParallelReport &report : summary.tensorParallel) {
    const std::vector<TensorParallelDecision> &decisions = report.decisions;
    int64_t replicated =
        llvm::count_if(decisions, [](const TensorParallelDecision &d) {
          return d.isReplicated();
        });
    os << "tp=" << report.tp;
    // Only when the decisions depend on the microbatch size.
    if (llvm::count_if(summary.tensorParallel,
                       [&](const auto &r) { return r.tp == report.tp; }) > 1) {
      os << " (microbatches of ";
      llvm::interleaveComma(report.microbatchSizes, os);
      os << " samples)";
    }
    os << ": " << decisions.size() - replicated << " of " << decisions.size()
       << " weight-reading ops split";
    if (replicated > 0)
      os << ", " << replicated << " replicated (reasons in --json)";
    os << "\n";
  }
  if (summary.batchSweep) {
    // The best configuration of each batch size (the trend across batches).
    std::vector<int64_t> seen;
    for (size_t index : ranking) {
      const ConfigResult &r = results[index];
      if (llvm::is_contained(seen, r.config.batch))
        continue;
      seen.push_back(r.config.batch);
    }
    llvm::sort(seen);
    for (int64_t batch : seen) {
      for (size_t index : ranking) {
        const ConfigResult &r = results[index];
        if (r.config.batch != batch)
          continue;
        os << "best at batch " << batch << ": " << describe(r.config) << ", "
           << llvm::formatv("{0:f1}", r.throughput) << " samples/s, peak "
           << formatBytes(r.peakBytes) << describeMFU(r) << "\n";
        break;
      }
    }
  }
  if (!ranking.empty()) {
    const ConfigResult &best = results[ranking.front()];
    os << "best: " << describe(best.config);
    if (summary.batchSweep)
      os << " batch " << best.config.batch;
    os << ", " << llvm::formatv("{0:f1}", best.throughput)
       << " samples/s, peak " << formatBytes(best.peakBytes)
       << describeMFU(best) << "\n";
    if (best.stageTransferSeconds >= 0)
      os << "best plan's transfers between stages: "
         << formatSeconds(best.stageTransferSeconds)
         << " of communication per step (summed over the transfers)\n";
  }
}

//===----------------------------------------------------------------------===//
// CSV and JSON
//===----------------------------------------------------------------------===//

static std::string csvField(StringRef text) {
  if (text.find_first_of(",\"\n") == StringRef::npos)
    return text.str();
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"')
      quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

static std::vector<size_t> ranksOf(size_t count, ArrayRef<size_t> ranking) {
  std::vector<size_t> ranks(count, 0);
  for (size_t r = 0; r < ranking.size(); ++r)
    ranks[ranking[r]] = r + 1;
  return ranks;
}

static bool wasSimulated(const ConfigResult &result) {
  return result.simulated;
}

void search::writeCSV(llvm::raw_ostream &os, ArrayRef<ConfigResult> results,
                      ArrayRef<size_t> ranking) {
  std::vector<size_t> ranks = ranksOf(results.size(), ranking);
  os << "index,rank,batch,dp,tp,pp,microbatches,schedule,mapping,devices,"
        "status,latency_s,throughput,peak_bytes,peak_device,resident_bytes,"
        "microbatch_size,tokens_per_s,model_flops,model_tflops_per_device,"
        "mfu,zero,recompute,peak_weights,peak_gradients,peak_activations,"
        "peak_inputs,peak_communication,peak_optimizer_state,"
        "stage_transfer_s,stage_tp,reason\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const ConfigResult &result = results[i];
    const SearchConfig &c = result.config;
    bool simulated = wasSimulated(result);
    os << i << "," << ranks[i] << "," << c.batch << "," << c.dp << "," << c.tp
       << "," << c.pp << "," << c.microbatches << "," << c.schedule << ","
       << csvField(c.mapping) << "," << c.getNumDevices() << ","
       << stringifyConfigStatus(result.status) << ",";
    if (simulated)
      os << llvm::format("%.9g", result.latency) << ","
         << llvm::format("%.9g", result.throughput) << "," << result.peakBytes
         << "," << result.peakDevice << "," << result.residentBytes;
    else
      os << ",,,,";
    os << "," << result.getMicrobatchSize() << ",";
    if (simulated && result.tokensPerSample > 0)
      os << llvm::format("%.9g", result.throughput * result.tokensPerSample);
    os << "," << llvm::format("%.9g", result.modelFlops) << ",";
    if (simulated)
      os << llvm::format("%.9g", result.getModelFlopsPerDevice() / 1e12);
    os << ",";
    if (simulated && result.peakFlopsPerDevice > 0)
      os << llvm::format("%.6g", result.getMFU());
    os << "," << c.zero << "," << stringifyRecompute(c.recompute);
    for (int64_t bytes : result.peakBreakdown) {
      os << ",";
      if (simulated)
        os << bytes;
    }
    os << ",";
    if (simulated && result.stageTransferSeconds >= 0)
      os << llvm::format("%.9g", result.stageTransferSeconds);
    // Per-stage degrees, colon-separated ("4:2"); empty for one tp.
    os << ",";
    llvm::interleave(c.stageTp, os, ":");
    os << "," << csvField(result.reason) << "\n";
  }
}

/// dist-dtp's tensor-parallel decisions per degree: every weight-reading
/// op's split or the reason it stays replicated.
static llvm::json::Array tensorParallelToJSON(const SearchSummary &summary) {
  llvm::json::Array plans;
  for (const TensorParallelReport &report : summary.tensorParallel) {
    llvm::json::Array list;
    int64_t replicated = 0;
    for (const TensorParallelDecision &d : report.decisions) {
      replicated += d.isReplicated();
      list.push_back(llvm::json::Object{{"location", d.location},
                                        {"decision", d.what},
                                        {"replicated", d.isReplicated()}});
    }
    llvm::json::Array sizes;
    for (int64_t size : report.microbatchSizes)
      sizes.push_back(size);
    plans.push_back(llvm::json::Object{{"tp", report.tp},
                                       {"microbatch_sizes", std::move(sizes)},
                                       {"replicated", replicated},
                                       {"decisions", std::move(list)}});
  }
  return plans;
}

llvm::json::Value search::toJSON(const SearchSummary &summary,
                                 ArrayRef<ConfigResult> results,
                                 ArrayRef<size_t> ranking) {
  std::vector<size_t> ranks = ranksOf(results.size(), ranking);
  llvm::json::Array configurations;
  for (size_t i = 0; i < results.size(); ++i) {
    const ConfigResult &result = results[i];
    const SearchConfig &c = result.config;
    llvm::json::Object row{
        {"index", static_cast<int64_t>(i)},
        {"rank", static_cast<int64_t>(ranks[i])},
        {"batch", c.batch},
        {"dp", c.dp},
        {"tp", c.tp},
        {"stage_tp", llvm::json::Array(c.stageTp)},
        {"pp", c.pp},
        {"microbatches", c.microbatches},
        {"schedule", c.schedule},
        {"mapping", c.mapping},
        {"devices", c.getNumDevices()},
        {"pass_options", c.getPassOptions()},
        {"zero", c.zero},
        {"recompute", stringifyRecompute(c.recompute)},
        {"status", stringifyConfigStatus(result.status)},
    };
    row["microbatch_size"] = result.getMicrobatchSize();
    row["model_flops"] = result.modelFlops;
    if (wasSimulated(result)) {
      row["latency_s"] = result.latency;
      row["throughput"] = result.throughput;
      row["peak_bytes"] = result.peakBytes;
      row["peak_device"] = result.peakDevice;
      row["resident_bytes"] = result.residentBytes;
      row["model_tflops_per_device"] = result.getModelFlopsPerDevice() / 1e12;
      if (result.peakFlopsPerDevice > 0)
        row["mfu"] = result.getMFU();
      if (result.tokensPerSample > 0)
        row["tokens_per_s"] = result.throughput * result.tokensPerSample;
      llvm::json::Object breakdown;
      for (int k = 0; k < kNumMemoryKinds; ++k)
        breakdown[stringifyMemoryKind(static_cast<MemoryKind>(k))] =
            result.peakBreakdown[k];
      row["peak_breakdown"] = std::move(breakdown);
      if (result.stageTransferSeconds >= 0)
        row["stage_transfer_s"] = result.stageTransferSeconds;
    }
    if (!result.reason.empty())
      row["reason"] = result.reason;
    configurations.push_back(std::move(row));
  }
  llvm::json::Object counts;
  for (ConfigStatus status : {ConfigStatus::Ok, ConfigStatus::OutOfMemory,
                              ConfigStatus::Skipped, ConfigStatus::Failed})
    counts[stringifyConfigStatus(status)] = static_cast<int64_t>(llvm::count_if(
        results, [&](const ConfigResult &r) { return r.status == status; }));
  return llvm::json::Object{
      {"model", summary.model},
      {"training", summary.training},
      {"cluster", summary.cluster},
      {"devices", summary.devices},
      {"capacity_bytes", summary.capacityBytes},
      {"cost_model", summary.costModel},
      {"counts", std::move(counts)},
      {"best", ranking.empty()
                   ? llvm::json::Value(nullptr)
                   : llvm::json::Value(static_cast<int64_t>(ranking.front()))},
      {"configurations", std::move(configurations)},
      {"tensor_parallel", tensorParallelToJSON(summary)},
  };
}

//===----------------------------------------------------------------------===//
// SVG
//===----------------------------------------------------------------------===//

static std::string xmlEscape(StringRef text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) that divides
/// [0, max] into about `count` intervals.
static double niceStep(double max, int count) {
  if (max <= 0)
    return 1;
  double raw = max / count;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (raw <= factor * magnitude)
      return factor * magnitude;
  return 10 * magnitude;
}

void search::writeSVG(llvm::raw_ostream &os, const SearchSummary &summary,
                      ArrayRef<ConfigResult> results,
                      ArrayRef<size_t> ranking) {
  const int width = 760, height = 500;
  const double left = 90, right = 30, top = 60, bottom = 70;
  const double plotW = width - left - right, plotH = height - top - bottom;
  const double gib = 1024.0 * 1024.0 * 1024.0;

  // Memory is shown in GiB, MiB or KiB.
  double maxThroughput = 0, maxBytes = 0;
  for (const ConfigResult &r : results) {
    if (!wasSimulated(r))
      continue;
    maxThroughput = std::max(maxThroughput, r.throughput);
    maxBytes = std::max(maxBytes, static_cast<double>(r.peakBytes));
  }
  bool showCapacity = summary.capacityBytes > 0 &&
                      summary.capacityBytes <= 1.5 * std::max(maxBytes, 1.0);
  if (showCapacity)
    maxBytes = std::max(maxBytes, static_cast<double>(summary.capacityBytes));
  double unit = maxBytes >= 0.5 * gib               ? gib
                : maxBytes >= 0.5 * 1024.0 * 1024.0 ? 1024.0 * 1024.0
                                                    : 1024.0;
  StringRef unitName = unit == gib ? "GiB" : unit == 1024.0 ? "KiB" : "MiB";

  // Axes start at zero and end at a tick above the largest value (or at 1
  // when nothing was simulated).
  double xRange = maxThroughput > 0 ? maxThroughput * 1.05 : 1;
  double yRange = maxBytes > 0 ? maxBytes / unit * 1.05 : 1;
  double xStep = niceStep(xRange, 6);
  double xMax = std::ceil(xRange / xStep - 1e-9) * xStep;
  double yStep = niceStep(yRange, 6);
  double yMax = std::ceil(yRange / yStep - 1e-9) * yStep;
  auto px = [&](double throughput) { return left + throughput / xMax * plotW; };
  auto py = [&](double bytes) {
    return top + plotH - bytes / unit / yMax * plotH;
  };
  auto num = [](double v) { return llvm::formatv("{0:f1}", v).str(); };

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
     << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << num(width / 2) << "\" y=\"24\" text-anchor=\"middle\" "
     << "font-size=\"15\">"
     // The file name only: a long path would not fit the title.
     << xmlEscape("Peak memory vs throughput: " +
                  llvm::sys::path::filename(summary.model).str() +
                  (summary.training ? " (training)" : "") + " on " +
                  summary.cluster)
     << "</text>\n";
  os << "<text x=\"" << num(width / 2)
     << "\" y=\"42\" text-anchor=\"middle\" fill=\"#555\">"
     << xmlEscape(std::to_string(summary.devices) + " devices, cost model " +
                  summary.costModel + ", " +
                  std::to_string(llvm::count_if(results, wasSimulated)) +
                  " simulated configurations")
     << "</text>\n";

  // Grid, ticks and tick labels.
  os << "<g id=\"x-axis\" stroke=\"#ddd\">\n";
  for (double x = 0; x <= xMax * (1 + 1e-9); x += xStep)
    os << "<line x1=\"" << num(px(x)) << "\" y1=\"" << num(top) << "\" x2=\""
       << num(px(x)) << "\" y2=\"" << num(top + plotH + 5) << "\"/>\n";
  os << "</g>\n<g id=\"x-ticks\" text-anchor=\"middle\">\n";
  for (double x = 0; x <= xMax * (1 + 1e-9); x += xStep)
    os << "<text class=\"tick\" x=\"" << num(px(x)) << "\" y=\""
       << num(top + plotH + 20) << "\">" << formatNumber(x) << "</text>\n";
  os << "</g>\n<g id=\"y-axis\" stroke=\"#ddd\">\n";
  for (double y = 0; y <= yMax * (1 + 1e-9); y += yStep)
    os << "<line x1=\"" << num(left - 5) << "\" y1=\"" << num(py(y * unit))
       << "\" x2=\"" << num(left + plotW) << "\" y2=\"" << num(py(y * unit))
       << "\"/>\n";
  os << "</g>\n<g id=\"y-ticks\" text-anchor=\"end\">\n";
  for (double y = 0; y <= yMax * (1 + 1e-9); y += yStep)
    os << "<text class=\"tick\" x=\"" << num(left - 8) << "\" y=\""
       << num(py(y * unit) + 4) << "\">" << formatNumber(y) << "</text>\n";
  os << "</g>\n";
  os << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\""
     << num(plotW) << "\" height=\"" << num(plotH)
     << "\" fill=\"none\" stroke=\"black\"/>\n";
  os << "<text id=\"x-label\" x=\"" << num(left + plotW / 2) << "\" y=\""
     << num(height - 20)
     << "\" text-anchor=\"middle\" font-size=\"13\">Throughput "
        "(samples/s)</text>\n";
  os << "<text id=\"y-label\" transform=\"translate(22," << num(top + plotH / 2)
     << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">Peak memory "
        "per device ("
     << unitName << ")</text>\n";

  if (showCapacity) {
    double y = py(static_cast<double>(summary.capacityBytes));
    os << "<line id=\"capacity\" x1=\"" << num(left) << "\" y1=\"" << num(y)
       << "\" x2=\"" << num(left + plotW) << "\" y2=\"" << num(y)
       << "\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/>\n"
       << "<text x=\"" << num(left + plotW - 4) << "\" y=\"" << num(y - 5)
       << "\" text-anchor=\"end\" fill=\"#d62728\">device capacity "
       << xmlEscape(formatBytes(summary.capacityBytes)) << "</text>\n";
  }

  // Points: fitting configurations as circles (coloured by batch size in a
  // sweep), out-of-memory ones as crosses, each with a tooltip.
  static const char *palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
                                  "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  std::vector<int64_t> batches;
  for (const ConfigResult &r : results)
    if (!llvm::is_contained(batches, r.config.batch))
      batches.push_back(r.config.batch);
  llvm::sort(batches);
  auto colorOf = [&](int64_t batch) {
    size_t i = llvm::find(batches, batch) - batches.begin();
    return palette[i % std::size(palette)];
  };
  std::optional<size_t> best;
  if (!ranking.empty())
    best = ranking.front();
  os << "<g id=\"points\">\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const ConfigResult &r = results[i];
    if (!wasSimulated(r) || (best && *best == i))
      continue;
    double x = px(r.throughput), y = py(static_cast<double>(r.peakBytes));
    std::string tip = xmlEscape(
        describe(r.config) + " batch " + std::to_string(r.config.batch) + ": " +
        formatNumber(r.throughput) + " samples/s, " + formatBytes(r.peakBytes) +
        ", " + stringifyConfigStatus(r.status).str());
    if (r.status == ConfigStatus::Ok)
      os << "<circle class=\"ok\" cx=\"" << num(x) << "\" cy=\"" << num(y)
         << "\" r=\"4\" fill=\"" << colorOf(r.config.batch)
         << "\" fill-opacity=\"0.7\"><title>" << tip << "</title></circle>\n";
    else
      os << "<path class=\"oom\" d=\"M" << num(x - 4) << "," << num(y - 4)
         << " l8,8 m0,-8 l-8,8\" stroke=\"#d62728\" stroke-width=\"2\"><title>"
         << tip << "</title></path>\n";
  }
  os << "</g>\n";
  if (best) {
    const ConfigResult &r = results[*best];
    double x = px(r.throughput), y = py(static_cast<double>(r.peakBytes));
    std::string label = describe(r.config);
    if (summary.batchSweep)
      label += " batch " + std::to_string(r.config.batch);
    os << "<g id=\"best\">\n<circle class=\"best\" cx=\"" << num(x)
       << "\" cy=\"" << num(y)
       << "\" r=\"8\" fill=\"#ff7f0e\" stroke=\"black\" "
          "stroke-width=\"1.5\"><title>best: "
       << xmlEscape(label) << "</title></circle>\n";
    bool leftSide = x > left + plotW * 0.6;
    os << "<text x=\"" << num(leftSide ? x - 12 : x + 12) << "\" y=\""
       << num(std::max(top + 14, y - 10)) << "\" text-anchor=\""
       << (leftSide ? "end" : "start")
       << "\" font-weight=\"bold\">best: " << xmlEscape(label)
       << "</text>\n</g>\n";
  }

  // Legend.
  double lx = left + 12, ly = top + 16;
  os << "<g id=\"legend\">\n";
  if (summary.batchSweep) {
    for (int64_t batch : batches) {
      os << "<circle cx=\"" << num(lx) << "\" cy=\"" << num(ly)
         << "\" r=\"4\" fill=\"" << colorOf(batch) << "\"/><text x=\""
         << num(lx + 10) << "\" y=\"" << num(ly + 4) << "\">batch " << batch
         << "</text>\n";
      ly += 14;
    }
  } else {
    os << "<circle cx=\"" << num(lx) << "\" cy=\"" << num(ly)
       << "\" r=\"4\" fill=\"" << palette[0] << "\"/><text x=\"" << num(lx + 10)
       << "\" y=\"" << num(ly + 4) << "\">fits in memory</text>\n";
    ly += 14;
  }
  os << "<path d=\"M" << num(lx - 4) << "," << num(ly - 4)
     << " l8,8 m0,-8 l-8,8\" stroke=\"#d62728\" stroke-width=\"2\"/><text x=\""
     << num(lx + 10) << "\" y=\"" << num(ly + 4) << "\">out of memory</text>\n"
     << "<circle cx=\"" << num(lx) << "\" cy=\"" << num(ly + 16)
     << "\" r=\"6\" fill=\"#ff7f0e\" stroke=\"black\"/><text x=\""
     << num(lx + 10) << "\" y=\"" << num(ly + 20) << "\">best</text>\n"
     << "</g>\n</svg>\n";
}
