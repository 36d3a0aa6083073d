//===- SimulationReport.cpp - Text, JSON and trace output
//-------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Simulator.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <map>

using namespace distir;
namespace json = llvm::json;

std::optional<double> SimulationResult::getThroughput() const {
  if (!options.batchSize || latency <= 0)
    return std::nullopt;
  return static_cast<double>(*options.batchSize) / latency;
}

std::vector<CommunicationTime> SimulationResult::getCommunicationTimes() const {
  std::map<std::string, CommunicationTime> byOp;
  for (const SimEvent &event : events)
    if (event.isCommunication) {
      CommunicationTime &time = byOp[event.name];
      time.op = event.name;
      ++time.events;
      time.total += event.duration;
    }
  // Compute intervals per device, to tell how much of a communication on
  // the critical path the device where the path goes on spent computing
  // anyway (that part is overlapped, not waited for).
  std::map<int64_t, std::vector<std::pair<double, double>>> computing;
  for (const SimEvent &event : events)
    if (!event.isCommunication)
      for (int64_t device : event.devices)
        computing[device].push_back({event.start, event.end});
  for (auto [position, index] : llvm::enumerate(criticalPath)) {
    const SimEvent &event = events[index];
    if (!event.isCommunication)
      continue;
    double overlapped = 0;
    if (position + 1 < criticalPath.size()) {
      const SimEvent &next = events[criticalPath[position + 1]];
      int64_t device = next.devices.front();
      for (int64_t d : next.devices)
        if (llvm::is_contained(event.devices, d)) {
          device = d;
          break;
        }
      for (auto [start, end] : computing[device])
        overlapped += std::max(0.0, std::min(end, event.end) -
                                        std::max(start, event.start));
    }
    byOp[event.name].exposed += std::max(0.0, event.duration - overlapped);
  }
  std::vector<CommunicationTime> result;
  for (auto &[name, time] : byOp)
    result.push_back(std::move(time));
  return result;
}

void SimulationResult::printText(llvm::raw_ostream &os) const {
  os << "simulation of @" << functionName << " on cluster '" << clusterName
     << "' (cost model " << stringifyCostModelKind(options.costModel) << ", "
     << stringifyCollectiveAlgorithm(options.algorithm) << " collectives, "
     << (options.overlap ? "compute/communication overlap"
                         : "one op at a time per device")
     << (options.linkContention ? ", shared links contended" : "") << ")\n";
  os << llvm::format("latency: %.9e s\n", latency);
  if (std::optional<double> throughput = getThroughput())
    os << llvm::format("throughput: %.6g samples/s (batch %lld)\n", *throughput,
                       (long long)*options.batchSize);
  os << llvm::format("%-7s %14s %14s %14s %16s %16s %16s\n", "device",
                     "compute (s)", "comm (s)", "idle (s)", "peak mem (B)",
                     "planned (B)", "resident (B)");
  for (const auto &[device, report] : devices) {
    double idle =
        std::max(0.0, latency - report.computeBusy - report.communicationBusy);
    os << llvm::format(
        "%-7lld %14.6e %14.6e %14.6e %16lld %16lld %16lld%s\n",
        (long long)device, report.computeBusy, report.communicationBusy, idle,
        (long long)report.peakBytes, (long long)report.plannedBytes,
        (long long)report.residentBytes,
        report.exceedsCapacity ? "  EXCEEDS CAPACITY" : "");
  }
  for (const auto &[device, report] : devices) {
    if (report.peakBuffers.empty())
      continue;
    os << "largest buffers live at the peak of device " << device << ":\n";
    for (const PeakBuffer &buffer : report.peakBuffers)
      os << llvm::format("  %16lld %-13s ", (long long)buffer.bytes,
                         stringifyMemoryKind(buffer.kind).str().c_str())
         << buffer.definer << " " << buffer.location << "\n";
  }
  os << "critical path (" << criticalPath.size() << " ops):\n";
  for (int64_t index : criticalPath) {
    const SimEvent &event = events[index];
    os << llvm::format("  %14.6e %14.6e  ", event.start, event.end)
       << event.name << " [";
    llvm::interleaveComma(event.devices, os);
    os << "] " << event.location << "\n";
  }
  std::vector<CommunicationTime> communication = getCommunicationTimes();
  if (communication.empty())
    return;
  os << "communication by op (summed over its events; exposed: on the "
        "critical path and not overlapped by compute on the device where the "
        "path goes on):\n";
  for (const CommunicationTime &time : communication)
    os << llvm::format("  %-24s %6lld events %14.6e s, exposed %14.6e s\n",
                       time.op.c_str(), (long long)time.events, time.total,
                       time.exposed);
}

static json::Value eventToJSON(const SimEvent &event) {
  json::Array devices;
  for (int64_t d : event.devices)
    devices.push_back(d);
  return json::Object{
      {"op", event.name},
      {"location", event.location},
      {"devices", std::move(devices)},
      {"stream", event.isCommunication ? "communication" : "compute"},
      {"start", event.start},
      {"end", event.end},
      {"flops", event.flops},
      {"bytes", event.bytes}};
}

json::Value SimulationResult::toJSON() const {
  json::Array deviceArray;
  for (const auto &[device, report] : devices) {
    json::Object breakdown;
    for (int k = 0; k < kNumMemoryKinds; ++k)
      breakdown[stringifyMemoryKind(static_cast<MemoryKind>(k))] =
          report.peakBreakdown[k];
    json::Array peakBuffers;
    for (const PeakBuffer &buffer : report.peakBuffers)
      peakBuffers.push_back(
          json::Object{{"bytes", buffer.bytes},
                       {"kind", stringifyMemoryKind(buffer.kind)},
                       {"definer", buffer.definer},
                       {"location", buffer.location}});
    json::Object deviceObject{{"device", device},
                              {"compute_busy", report.computeBusy},
                              {"communication_busy", report.communicationBusy},
                              {"finish", report.finish},
                              {"peak_bytes", report.peakBytes},
                              {"peak_breakdown", std::move(breakdown)},
                              {"planned_bytes", report.plannedBytes},
                              {"resident_bytes", report.residentBytes},
                              {"exceeds_capacity", report.exceedsCapacity}};
    if (!report.peakBuffers.empty())
      deviceObject["peak_buffers"] = std::move(peakBuffers);
    deviceArray.push_back(std::move(deviceObject));
  }
  json::Array eventArray;
  for (const SimEvent &event : events)
    eventArray.push_back(eventToJSON(event));
  json::Array path;
  for (int64_t index : criticalPath)
    path.push_back(index);
  json::Array communication;
  for (const CommunicationTime &time : getCommunicationTimes())
    communication.push_back(json::Object{{"op", time.op},
                                         {"events", time.events},
                                         {"total_s", time.total},
                                         {"exposed_s", time.exposed}});
  json::Object root{
      {"function", functionName},
      {"cluster", clusterName},
      {"cost_model", stringifyCostModelKind(options.costModel)},
      {"algorithm", stringifyCollectiveAlgorithm(options.algorithm)},
      {"overlap", options.overlap},
      {"link_contention", options.linkContention},
      {"latency", latency},
      {"device_capacity", deviceCapacity},
      {"devices", std::move(deviceArray)},
      {"events", std::move(eventArray)},
      {"critical_path", std::move(path)},
      {"communication", std::move(communication)}};
  if (std::optional<double> throughput = getThroughput()) {
    root["batch"] = *options.batchSize;
    root["throughput"] = *throughput;
  }
  return root;
}

json::Value SimulationResult::toChromeTrace() const {
  // Times in microseconds; one process per device, thread 0 = compute,
  // thread 1 = communication. Collectives appear on every device they use.
  json::Array trace;
  for (const auto &[device, report] : devices) {
    trace.push_back(json::Object{
        {"name", "process_name"},
        {"ph", "M"},
        {"pid", device},
        {"args", json::Object{{"name", "device " + std::to_string(device)}}}});
    for (int tid : {0, 1})
      trace.push_back(json::Object{
          {"name", "thread_name"},
          {"ph", "M"},
          {"pid", device},
          {"tid", tid},
          {"args", json::Object{{"name", tid ? "communication" : "compute"}}}});
  }
  for (const SimEvent &event : events)
    for (int64_t device : event.devices)
      trace.push_back(json::Object{
          {"name", event.name},
          {"cat", event.isCommunication ? "communication" : "compute"},
          {"ph", "X"},
          {"ts", event.start * 1e6},
          {"dur", (event.end - event.start) * 1e6},
          {"pid", device},
          {"tid", event.isCommunication ? 1 : 0},
          {"args", json::Object{{"location", event.location},
                                {"flops", event.flops},
                                {"bytes", event.bytes}}}});
  for (const auto &[device, report] : devices)
    for (const auto &[time, bytes] : report.memoryTimeline)
      trace.push_back(json::Object{{"name", "live bytes"},
                                   {"ph", "C"},
                                   {"ts", time * 1e6},
                                   {"pid", device},
                                   {"args", json::Object{{"bytes", bytes}}}});
  return json::Object{{"traceEvents", std::move(trace)},
                      {"displayTimeUnit", "ns"}};
}
