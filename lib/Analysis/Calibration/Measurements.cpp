//===- Measurements.cpp - Microbenchmark CSVs and nccl-tests output ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Calibration.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace distir;

namespace {

/// Reports `FILE:LINE: message`.
struct LineError {
  llvm::StringRef fileName;
  ErrorFn emitError;
  mlir::LogicalResult operator()(int64_t line, const llvm::Twine &message) {
    emitError(fileName + ":" + llvm::Twine(line) + ": " + message);
    return mlir::failure();
  }
};

/// A CSV file: a header row naming the columns, then data rows.
struct CSVTable {
  llvm::StringMap<size_t> columns;
  /// (line number, fields) of each data row.
  std::vector<std::pair<int64_t, llvm::SmallVector<llvm::StringRef>>> rows;
};

} // namespace

static mlir::LogicalResult readCSV(llvm::StringRef text,
                                   llvm::ArrayRef<llvm::StringRef> required,
                                   LineError &error, CSVTable &table) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  bool haveHeader = false;
  size_t headerWidth = 0;
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    int64_t lineNo = static_cast<int64_t>(index) + 1;
    llvm::StringRef line = rawLine.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    llvm::SmallVector<llvm::StringRef> fields;
    line.split(fields, ',');
    for (llvm::StringRef &field : fields)
      field = field.trim();
    if (!haveHeader) {
      haveHeader = true;
      headerWidth = fields.size();
      for (auto [column, name] : llvm::enumerate(fields)) {
        if (name.empty())
          return error(lineNo, "empty column name in the CSV header");
        if (!table.columns.try_emplace(name, column).second)
          return error(lineNo, "column '" + name + "' appears twice");
      }
      for (llvm::StringRef name : required)
        if (!table.columns.count(name))
          return error(lineNo, "missing column '" + name +
                                   "' in the CSV header (expected " +
                                   llvm::join(required, ",") + ")");
      continue;
    }
    if (fields.size() != headerWidth)
      return error(lineNo, "expected " + llvm::Twine(headerWidth) +
                               " fields, got " + llvm::Twine(fields.size()));
    table.rows.push_back({lineNo, std::move(fields)});
  }
  if (!haveHeader)
    return error(1, "empty file: expected a header " +
                        llvm::join(required, ",") + " and measurements");
  if (table.rows.empty())
    return error(static_cast<int64_t>(lines.size()),
                 "no measurements after the header");
  return mlir::success();
}

/// Parses a finite non-negative number (`positive`: > 0).
static mlir::LogicalResult parseNumber(llvm::StringRef field,
                                       llvm::StringRef what, bool positive,
                                       int64_t lineNo, LineError &error,
                                       double &result) {
  double value;
  if (field.getAsDouble(value) || !std::isfinite(value))
    return error(lineNo, "invalid " + what + " '" + field + "'");
  if (value < 0)
    return error(lineNo, "negative " + what + " '" + field + "'");
  if (positive && value == 0)
    return error(lineNo, what + " must be positive, got '" + field + "'");
  result = value;
  return mlir::success();
}

mlir::LogicalResult distir::parseComputeCSV(llvm::StringRef text,
                                            llvm::StringRef fileName,
                                            std::vector<ComputeSample> &samples,
                                            ErrorFn emitError) {
  LineError error{fileName, emitError};
  CSVTable table;
  if (failed(readCSV(text, {"op_class", "bytes", "flops", "seconds"}, error,
                     table)))
    return mlir::failure();
  size_t classColumn = table.columns.lookup("op_class");
  size_t bytesColumn = table.columns.lookup("bytes");
  size_t flopsColumn = table.columns.lookup("flops");
  size_t secondsColumn = table.columns.lookup("seconds");
  for (auto &[lineNo, fields] : table.rows) {
    ComputeSample sample;
    std::optional<ComputeClass> opClass =
        symbolizeComputeClass(fields[classColumn]);
    if (!opClass)
      return error(lineNo, "unknown op class '" + fields[classColumn] +
                               "' (expected matmul, reduction, elementwise "
                               "or copy)");
    sample.opClass = *opClass;
    if (failed(parseNumber(fields[bytesColumn], "bytes", false, lineNo, error,
                           sample.bytes)) ||
        failed(parseNumber(fields[flopsColumn], "flops", false, lineNo, error,
                           sample.flops)) ||
        failed(parseNumber(fields[secondsColumn], "time", true, lineNo, error,
                           sample.seconds)))
      return mlir::failure();
    samples.push_back(sample);
  }
  return mlir::success();
}

static mlir::LogicalResult parseGroupSize(llvm::StringRef field, int64_t lineNo,
                                          LineError &error, int64_t &result) {
  int64_t value;
  if (field.getAsInteger(10, value))
    return error(lineNo, "invalid group size '" + field + "'");
  if (value < 2)
    return error(lineNo, "group size must be at least 2, got " + field);
  result = value;
  return mlir::success();
}

mlir::LogicalResult
distir::parseCollectiveCSV(llvm::StringRef text, llvm::StringRef fileName,
                           std::vector<CollectiveSample> &samples,
                           ErrorFn emitError) {
  LineError error{fileName, emitError};
  CSVTable table;
  if (failed(readCSV(text, {"kind", "group_size", "bytes", "seconds"}, error,
                     table)))
    return mlir::failure();
  size_t kindColumn = table.columns.lookup("kind");
  size_t groupColumn = table.columns.lookup("group_size");
  size_t bytesColumn = table.columns.lookup("bytes");
  size_t secondsColumn = table.columns.lookup("seconds");
  for (auto &[lineNo, fields] : table.rows) {
    CollectiveSample sample;
    std::optional<CollectiveKind> kind =
        parseCalibrationKindName(fields[kindColumn]);
    if (!kind)
      return error(lineNo, "unknown collective kind '" + fields[kindColumn] +
                               "' (expected all_reduce, all_gather, "
                               "reduce_scatter, broadcast, reduce, scatter, "
                               "gather, alltoall or sendrecv)");
    sample.kind = *kind;
    if (failed(parseGroupSize(fields[groupColumn], lineNo, error,
                              sample.groupSize)) ||
        failed(parseNumber(fields[bytesColumn], "bytes", false, lineNo, error,
                           sample.bytes)) ||
        failed(parseNumber(fields[secondsColumn], "time", true, lineNo, error,
                           sample.seconds)))
      return mlir::failure();
    samples.push_back(sample);
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// nccl-tests
//===----------------------------------------------------------------------===//

/// The collective named by an nccl-tests binary (`all_reduce_perf`,
/// `all_reduce_perf_mpi`, a path to one, ...) in `text`.
static std::optional<CollectiveKind> findBinaryKind(llvm::StringRef text) {
  size_t pos = text.find("_perf");
  while (pos != llvm::StringRef::npos) {
    size_t begin = pos;
    while (begin > 0 &&
           (llvm::isAlnum(text[begin - 1]) || text[begin - 1] == '_'))
      --begin;
    if (std::optional<CollectiveKind> kind =
            parseCalibrationKindName(text.slice(begin, pos)))
      return kind;
    pos = text.find("_perf", pos + 1);
  }
  return std::nullopt;
}

bool distir::isNcclTestsOutput(llvm::StringRef text) {
  // A CSV's first line that is not a comment is its header, with commas;
  // nccl-tests rows are separated by spaces.
  for (llvm::StringRef rest = text; !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    return !line.contains(',');
  }
  // Only comments: nccl-tests headers without rows, or an empty CSV.
  return text.contains("_perf") || text.contains("algbw");
}

mlir::LogicalResult
distir::parseNcclTestsOutput(llvm::StringRef text, llvm::StringRef fileName,
                             const NcclTestsOptions &options,
                             std::vector<CollectiveSample> &samples,
                             ErrorFn emitError) {
  LineError error{fileName, emitError};
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');

  std::optional<CollectiveKind> headerKind;
  int64_t rankLines = 0;
  std::optional<int64_t> nranks;
  // Column of the out-of-place time: `size count type redop root time ...`
  // in nccl-tests >= 2.10; read from the column header when there is one.
  size_t timeColumn = 5;
  struct Row {
    int64_t line;
    double bytes, seconds;
  };
  std::vector<Row> rows;
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    int64_t lineNo = static_cast<int64_t>(index) + 1;
    llvm::StringRef line = rawLine.trim();
    if (line.empty())
      continue;
    if (line.starts_with("#")) {
      llvm::StringRef body = line.drop_front().trim();
      if (!headerKind)
        headerKind = findBinaryKind(body);
      llvm::SmallVector<llvm::StringRef> tokens;
      body.split(tokens, ' ', -1, /*KeepEmpty=*/false);
      if (!tokens.empty() && tokens[0] == "Rank")
        ++rankLines;
      for (size_t i = 0; i + 1 < tokens.size(); ++i)
        if (tokens[i] == "nranks" || tokens[i] == "nranks:") {
          int64_t n;
          if (!tokens[i + 1].getAsInteger(10, n) && n > 0)
            nranks = n;
        }
      if (!tokens.empty() && tokens[0] == "size") {
        auto it = llvm::find(tokens, "time");
        if (it == tokens.end())
          return error(lineNo, "nccl-tests column header has no 'time' column");
        timeColumn = it - tokens.begin();
      }
      continue;
    }
    llvm::SmallVector<llvm::StringRef> tokens;
    line.split(tokens, ' ', -1, /*KeepEmpty=*/false);
    // Also split on tabs.
    llvm::SmallVector<llvm::StringRef> fields;
    for (llvm::StringRef token : tokens) {
      llvm::SmallVector<llvm::StringRef> parts;
      token.split(parts, '\t', -1, /*KeepEmpty=*/false);
      fields.append(parts.begin(), parts.end());
    }
    // Other lines (NCCL version banners, MPI messages, warnings) are not
    // measurements; a data row starts with its size in bytes.
    uint64_t size;
    if (fields.empty() || fields[0].getAsInteger(10, size)) {
      if (!headerKind)
        headerKind = findBinaryKind(line);
      continue;
    }
    if (fields.size() <= timeColumn)
      return error(lineNo, "nccl-tests row has " + llvm::Twine(fields.size()) +
                               " fields; expected the out-of-place time in "
                               "field " +
                               llvm::Twine(timeColumn + 1));
    double micros;
    llvm::StringRef timeField = fields[timeColumn];
    if (timeField.getAsDouble(micros) || !std::isfinite(micros))
      return error(lineNo, "invalid out-of-place time '" + timeField + "'");
    if (micros < 0)
      return error(lineNo, "negative time '" + timeField + "'");
    if (micros == 0)
      return error(lineNo, "time must be positive, got '" + timeField + "'");
    rows.push_back({lineNo, static_cast<double>(size), micros * 1e-6});
  }

  if (rows.empty())
    return error(static_cast<int64_t>(lines.size()),
                 "no nccl-tests measurements found");
  std::optional<CollectiveKind> kind = options.kind;
  if (!kind)
    kind = headerKind;
  if (!kind)
    kind = findBinaryKind(llvm::sys::path::filename(fileName));
  if (!kind) {
    emitError(fileName +
              ": cannot tell which collective was measured (no "
              "'*_perf' binary name in the header or the file name); "
              "pass --kind");
    return mlir::failure();
  }
  std::optional<int64_t> groupSize = options.groupSize;
  if (!groupSize && rankLines > 0)
    groupSize = rankLines;
  if (!groupSize)
    groupSize = nranks;
  if (!groupSize) {
    emitError(fileName + ": cannot tell the number of ranks (no '# Rank' "
                         "lines or nranks field); pass --group-size");
    return mlir::failure();
  }
  if (*groupSize < 2) {
    emitError(fileName + ": the run has " + llvm::Twine(*groupSize) +
              " rank; collectives need at least 2");
    return mlir::failure();
  }
  for (const Row &row : rows)
    samples.push_back({*kind, *groupSize, row.bytes, row.seconds});
  return mlir::success();
}
