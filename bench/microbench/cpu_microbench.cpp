//===- cpu_microbench.cpp - CPU microbenchmarks for calibration -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-microbench-cpu [-o FILE.csv] [--quick] [--min-time SECONDS]
//                       [--repeats N]
//
// Times matmul, elementwise, reduction and copy kernels of several sizes on
// this CPU (one thread) and writes the compute CSV of distir-calibrate:
//
//   op_class,bytes,flops,seconds,kernel
//
// `bytes` and `flops` are counted as the simulator counts the equivalent
// linalg op (ComputeWork in include/DistIR/Analysis/OpCost.h): a matmul
// reads A, B and its accumulator and writes C, 2 flops per point; a
// reduction reads its input and accumulator, 1 flop per point; copies count
// 1 flop per element. Each kernel's time is the minimum over `repeats`
// batches of the mean time per call, a batch lasting at least
// min-time / repeats.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string output = "-";
  bool quick = false;
  double minTime = 0.05;
  int repeats = 5;
};

struct Row {
  const char *opClass;
  double bytes, flops, seconds;
  std::string kernel;
};

/// Keeps results alive so that the kernels are not optimized away.
volatile float sink;

double timeKernel(const std::function<void()> &kernel, const Options &opts) {
  using Clock = std::chrono::steady_clock;
  kernel(); // warm up caches and pages
  double batchTime = opts.minTime / opts.repeats;
  // Calls per batch: enough to last batchTime.
  long calls = 1;
  for (;;) {
    auto start = Clock::now();
    for (long i = 0; i < calls; ++i)
      kernel();
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= batchTime || calls >= (1L << 30))
      break;
    calls = elapsed > 0
                ? std::max(calls * 2,
                           static_cast<long>(calls * batchTime / elapsed))
                : calls * 16;
  }
  double best = 1e300;
  for (int r = 0; r < opts.repeats; ++r) {
    auto start = Clock::now();
    for (long i = 0; i < calls; ++i)
      kernel();
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, elapsed / calls);
  }
  return best;
}

void fillRandom(std::vector<float> &v) {
  unsigned state = 12345;
  for (float &x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  }
}

void benchMatmul(long m, long k, long n, const Options &opts,
                 std::vector<Row> &rows) {
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fillRandom(a);
  fillRandom(b);
  auto kernel = [&]() {
    std::fill(c.begin(), c.end(), 0.0f);
    for (long i = 0; i < m; ++i)
      for (long p = 0; p < k; ++p) {
        float aip = a[i * k + p];
        const float *brow = &b[p * n];
        float *crow = &c[i * n];
        for (long j = 0; j < n; ++j)
          crow[j] += aip * brow[j];
      }
    sink = c[(m * n) / 2];
  };
  double seconds = timeKernel(kernel, opts);
  double bytes = 4.0 * (m * k + k * n + 2 * m * n);
  double flops = 2.0 * m * n * k;
  rows.push_back({"matmul", bytes, flops, seconds,
                  "matmul_" + std::to_string(m) + "x" + std::to_string(k) +
                      "x" + std::to_string(n)});
}

void benchElementwise(long n, const Options &opts, std::vector<Row> &rows) {
  std::vector<float> x(n), y(n), z(n), out(n);
  fillRandom(x);
  fillRandom(y);
  fillRandom(z);
  // add: 2 inputs, 1 output, 1 op per element.
  double seconds = timeKernel(
      [&]() {
        for (long i = 0; i < n; ++i)
          out[i] = x[i] + y[i];
        sink = out[n / 2];
      },
      opts);
  rows.push_back(
      {"elementwise", 12.0 * n, 1.0 * n, seconds, "add_" + std::to_string(n)});
  // multiply-add: 3 inputs, 1 output, 2 ops per element.
  seconds = timeKernel(
      [&]() {
        for (long i = 0; i < n; ++i)
          out[i] = x[i] * y[i] + z[i];
        sink = out[n / 2];
      },
      opts);
  rows.push_back({"elementwise", 16.0 * n, 2.0 * n, seconds,
                  "muladd_" + std::to_string(n)});
}

void benchReduction(long r, long c, const Options &opts,
                    std::vector<Row> &rows) {
  std::vector<float> in(r * c), out(r);
  fillRandom(in);
  double seconds = timeKernel(
      [&]() {
        for (long i = 0; i < r; ++i) {
          float sum = 0;
          const float *row = &in[i * c];
          for (long j = 0; j < c; ++j)
            sum += row[j];
          out[i] = sum;
        }
        sink = out[r / 2];
      },
      opts);
  rows.push_back({"reduction", 4.0 * r * c + 8.0 * r, 1.0 * r * c, seconds,
                  "rowsum_" + std::to_string(r) + "x" + std::to_string(c)});
}

void benchCopy(long r, long c, const Options &opts, std::vector<Row> &rows) {
  std::vector<float> in(r * c), out(r * c);
  fillRandom(in);
  double seconds = timeKernel(
      [&]() {
        std::memcpy(out.data(), in.data(), sizeof(float) * r * c);
        sink = out[(r * c) / 2];
      },
      opts);
  rows.push_back({"copy", 8.0 * r * c, 1.0 * r * c, seconds,
                  "copy_" + std::to_string(r * c)});
  seconds = timeKernel(
      [&]() {
        // Tiled, so that both sides stay in cache lines.
        constexpr long tile = 16;
        for (long ii = 0; ii < r; ii += tile)
          for (long jj = 0; jj < c; jj += tile)
            for (long i = ii; i < std::min(r, ii + tile); ++i)
              for (long j = jj; j < std::min(c, jj + tile); ++j)
                out[j * r + i] = in[i * c + j];
        sink = out[(r * c) / 2];
      },
      opts);
  rows.push_back({"copy", 8.0 * r * c, 1.0 * r * c, seconds,
                  "transpose_" + std::to_string(r) + "x" + std::to_string(c)});
}

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [-o FILE.csv] [--quick] [--min-time SECONDS] "
               "[--repeats N]\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (arg == "-o") {
      const char *v = value();
      if (!v)
        return usage(argv[0]);
      opts.output = v;
    } else if (arg == "--quick") {
      opts.quick = true;
      opts.minTime = 0.002;
      opts.repeats = 3;
    } else if (arg == "--min-time") {
      const char *v = value();
      if (!v || (opts.minTime = std::atof(v)) <= 0)
        return usage(argv[0]);
    } else if (arg == "--repeats") {
      const char *v = value();
      if (!v || (opts.repeats = std::atoi(v)) <= 0)
        return usage(argv[0]);
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n", arg.c_str());
      return usage(argv[0]);
    }
  }

  std::vector<Row> rows;
  std::vector<long> squares =
      opts.quick ? std::vector<long>{8, 16, 24, 32, 48}
                 : std::vector<long>{32, 64, 96, 128, 192, 256, 384};
  for (long s : squares)
    benchMatmul(s, s, s, opts, rows);
  // Skinny shapes: more bytes per flop than squares.
  long t = opts.quick ? 8 : 32;
  benchMatmul(t, 8 * t, t, opts, rows);
  benchMatmul(8 * t, t, 8 * t, opts, rows);

  std::vector<long> lengths;
  for (long n = opts.quick ? 256 : 1024; n <= (opts.quick ? 16384 : 1 << 22);
       n *= 4)
    lengths.push_back(n);
  for (long n : lengths)
    benchElementwise(n, opts, rows);
  for (long n : lengths) {
    long c = std::min<long>(n, 256);
    benchReduction(n / c, c, opts, rows);
    benchReduction(c, n / c, opts, rows);
    benchCopy(n / c, c, opts, rows);
  }

  FILE *out =
      opts.output == "-" ? stdout : std::fopen(opts.output.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "error: cannot write '%s'\n", opts.output.c_str());
    return 1;
  }
  std::fprintf(out, "# distir-microbench-cpu: one thread, float32\n");
  std::fprintf(out, "op_class,bytes,flops,seconds,kernel\n");
  for (const Row &row : rows)
    std::fprintf(out, "%s,%.17g,%.17g,%.9e,%s\n", row.opClass, row.bytes,
                 row.flops, row.seconds, row.kernel.c_str());
  if (out != stdout && std::fclose(out) != 0) {
    std::fprintf(stderr, "error: cannot write '%s'\n", opts.output.c_str());
    return 1;
  }
  return 0;
}
