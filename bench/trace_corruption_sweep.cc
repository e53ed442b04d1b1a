// The corrupted-trace sweep: a recorded trace with one byte flipped at every position that holds data (every non-zero
// byte, and every 64th zero byte of the padding), then cut at random lengths, each read and analyzed in this process
// as `graphcheck analyze` does. Prints how many inputs were refused, read with damage warnings or read clean, the
// slowest input and the peak memory. A crash or a sanitizer report (run the build-asan copy) is the failure it looks
// for; bench/results/ keeps the figures.
//   trace_corruption_sweep TRACE [TRUNCATIONS]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "absl/strings/numbers.h"
#include "checks/analyze.h"
#include "cli/catalog.h"
#include "core/file_io.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

struct Tally {
  size_t inputs = 0;
  size_t refused = 0;  // not read at all (bad magic, another major version)
  size_t damaged = 0;  // read, with warnings
  size_t clean = 0;
  double slowest_ms = 0;
  size_t slowest_input = 0;

  void Add(const std::string& bytes, size_t input) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<trace::Trace> trace = trace::ReadTraceFromBytes(bytes);
    if (!trace.ok()) {
      ++refused;
    } else {
      static const CheckSelection kAll = *CheckSelection::Parse("");
      static const CheckOptions kDefaults;
      checks::AnalyzeTraces({&*trace}, nullptr, BuiltinChecks(), kAll, kDefaults);
      ++(trace->read_warnings.empty() ? clean : damaged);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > slowest_ms) {
      slowest_ms = ms;
      slowest_input = input;
    }
    ++inputs;
  }
  void Print(const char* what) const {
    std::printf(
        "%-34s %8zu inputs: %7zu refused, %7zu read with damage warnings, %7zu read clean; slowest %.1f ms "
        "(input %zu)\n",
        what, inputs, refused, damaged, clean, slowest_ms, slowest_input);
  }
};

int Sweep(const std::string& path, size_t truncations) {
  absl::StatusOr<std::string> original = ReadInputFile(path, InputKind{"trace", 64ull << 20});
  if (!original.ok()) {
    std::fprintf(stderr, "%s\n", std::string(original.status().message()).c_str());
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  Tally flips;
  std::string bytes = *original;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == 0 && i % 64 != 0) continue;
    bytes[i] = static_cast<char>(bytes[i] ^ 0xff);
    flips.Add(bytes, i);
    bytes[i] = (*original)[i];
  }
  Tally cuts;
  std::mt19937_64 random(20261124);
  for (size_t n = 0; n < truncations; ++n) {
    const size_t length = std::uniform_int_distribution<size_t>(0, original->size())(random);
    cuts.Add(original->substr(0, length), length);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("trace %s: %zu bytes\n", path.c_str(), original->size());
  flips.Print("one byte flipped (data positions)");
  cuts.Print("cut at a random length");
  std::printf("total %.1f s, peak RSS %.1f MiB\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              usage.ru_maxrss / 1024.0);
  return 0;
}

}  // namespace
}  // namespace graphcheck

int main(int argc, char** argv) {
  size_t truncations = 2000;
  if (argc < 2 || argc > 3 || (argc == 3 && !absl::SimpleAtoi(argv[2], &truncations))) {
    std::fprintf(stderr, "usage: %s TRACE [TRUNCATIONS]\n", argv[0]);
    return 2;
  }
  return graphcheck::Sweep(argv[1], truncations);
}
