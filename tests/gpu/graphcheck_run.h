// What one `graphcheck run` of a GPU test program gave (its JSON report, its traces, what it printed), for the GPU
// tests that run Python programs under the tool (python_probe_gpu_test, megatron_gpu_test).
#ifndef GRAPHCHECK_TESTS_GPU_GRAPHCHECK_RUN_H_
#define GRAPHCHECK_TESTS_GPU_GRAPHCHECK_RUN_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "report/json.h"
#include "tests/gpu/gpu_test_env.h"
#include "trace/trace_reader.h"

namespace graphcheck::gpu_test {

struct GraphcheckRun {
  Report report;
  std::vector<trace::Trace> traces;
  std::string text;    // the findings, a line each, for failure messages
  std::string output;  // the program's (and graphcheck's) stdout and stderr

  double Metric(const std::string& name) const {
    for (const graphcheck::Metric& m : report.metrics) {
      if (m.name == name) return m.value;
    }
    return -1;
  }
  const Finding* Find(const std::string& id) const {
    auto it = std::find_if(report.findings.begin(), report.findings.end(),
                           [&](const Finding& f) { return f.check_id == id; });
    return it == report.findings.end() ? nullptr : &*it;
  }
  std::vector<std::string> Ids(Severity at_least) const {
    std::vector<std::string> ids;
    for (const Finding& f : report.findings) {
      if (f.severity >= at_least) ids.push_back(f.check_id);
    }
    return ids;
  }
};

// A defect program's report names its defect and nothing else at warning level (issue 58): every warning or error is
// one of `own`, the checks that name this defect.
inline void ExpectNothingElseAtWarning(const GraphcheckRun& run, const std::vector<std::string>& own) {
  for (const std::string& id : run.Ids(Severity::kWarning)) {
    EXPECT_THAT(own, ::testing::Contains(id)) << "a finding beside the defect's own\n" << run.text;
  }
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// The last 6000 bytes of a stalled run's output, each line prefixed "STALL", so that a device call's log says where
// the job stalled.
inline void PrintStall(const std::string& command, const std::string& output) {
  const size_t kTail = 6000;
  const std::string tail = output.size() > kTail ? output.substr(output.size() - kTail) : output;
  std::printf("STALL %s was ended by a bound or left no report; the last %zu bytes of its output:\n", command.c_str(),
              tail.size());
  for (absl::string_view line : absl::StrSplit(tail, '\n')) {
    std::printf("STALL %.*s\n", static_cast<int>(line.size()), line.data());
  }
}

// `graphcheck run FLAGS --trace-dir DIR --fail-on never --format json -o DIR.json -- COMMAND`, its output in DIR.out.
// Prints a line with the run's first step and findings, flushed: a test killed at its limit keeps what it printed. A
// COMMAND that a bound ended (`timeout` or --hang-timeout: status 124 or 137), or that left no report, also prints the
// last of its output (PrintStall).
inline GraphcheckRun RunUnderGraphcheck(const std::string& dir, const std::string& flags, const std::string& command) {
  std::filesystem::remove_all(dir);
  std::system(absl::StrCat(BuildDir(), "/graphcheck run ", flags, " --trace-dir ", dir,
                           " --fail-on never --format json -o ", dir, ".json -- ", command, " >", dir, ".out 2>&1")
                  .c_str());
  GraphcheckRun run;
  run.output = ReadFile(dir + ".out");
  const std::string json = ReadFile(dir + ".json");
  absl::StatusOr<Report> report = ReportFromJson(json);
  EXPECT_TRUE(report.ok()) << report.status() << "\n" << json << "\n" << run.output;
  if (report.ok()) run.report = *std::move(report);
  for (const Finding& f : run.report.findings) {
    absl::StrAppend(&run.text, SeverityName(f.severity), " [", f.check_id, "] ", f.message, "\n");
  }
  std::printf("RUN %s %s: %s\n%s", command.c_str(), flags.c_str(),
              run.report.steps.empty() ? "no report" : run.report.steps[0].message.c_str(), run.text.c_str());
  const double exit_code = run.Metric("program.exit_code");
  if (run.report.steps.empty() || exit_code == 124 || exit_code == 137) PrintStall(command, run.output);
  std::fflush(stdout);
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      absl::StatusOr<trace::Trace> t = trace::ReadTrace(entry.path().string());
      if (t.ok()) run.traces.push_back(*std::move(t));
    }
  }
  return run;
}

}  // namespace graphcheck::gpu_test

#endif  // GRAPHCHECK_TESTS_GPU_GRAPHCHECK_RUN_H_
