#include "report/coverage_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/number_text.h"
#include "report/text_table.h"
#include "report/where.h"

namespace graphcheck {
namespace {

constexpr size_t kKernelChars = 60;  // long template names are cut in tables; JSON keeps them whole

std::string Percent(double part, double whole) { return whole > 0 ? NumberText(100 * part / whole, 1, "%") : "-"; }

std::string Us(double us) { return NumberText(us, 1, "us"); }

uint64_t GraphedKernels(const StepCoverage& step) {
  uint64_t kernels = 0;
  for (const CoverageShare& s : step.graphed) kernels += s.kernels;
  return kernels;
}

double GraphedUs(const StepCoverage& step) {
  double us = 0;
  for (const CoverageShare& s : step.graphed) us += s.gpu_us;
  return us;
}

// "make_graphed_callables 120.0 us, user 30.0 us".
std::string ByOrigin(const StepCoverage& step) {
  std::vector<std::string> parts;
  for (const CoverageShare& s : step.graphed) parts.push_back(absl::StrCat(s.origin, " ", Us(s.gpu_us)));
  return absl::StrJoin(parts, ", ");
}

// Where a remainder runs, shortly: the program's line when the launch carried a Python stack, the NVTX path, thread
// and stream.
std::string RemainderWhere(const Location& where) {
  std::vector<std::string> parts;
  if (const SourceFrame* frame = FirstUserFrame(where)) parts.push_back(FrameText(*frame));
  if (!where.nvtx_path.empty()) parts.push_back(absl::StrCat("in ", where.nvtx_path));
  if (where.thread_id) parts.push_back(absl::StrCat("thread ", *where.thread_id));
  if (where.stream_id) parts.push_back(absl::StrCat("stream ", *where.stream_id));
  return absl::StrJoin(parts, ", ");
}

std::string ShortKernel(const std::string& name) {
  return name.size() <= kKernelChars ? name : absl::StrCat(name.substr(0, kKernelChars - 3), "...");
}

}  // namespace

std::vector<std::string> CoverageHeadline(const Coverage& coverage) {
  if (coverage.steps_counted == 0) return {absl::StrCat("not computed: ", coverage.scope)};
  const StepCoverage& total = coverage.total;
  const double graphed_us = GraphedUs(total);
  const double all_us = graphed_us + total.eager_gpu_us;
  const uint64_t graphed_kernels = GraphedKernels(total);
  std::string headline = absl::StrCat(Percent(graphed_us, all_us), " of the GPU time and ",
                                      Percent(graphed_kernels, graphed_kernels + total.eager_kernels),
                                      " of the kernels ran as CUDA graph replays");
  std::vector<std::string> origins;
  for (const CoverageShare& s : total.graphed)
    origins.push_back(absl::StrCat(s.origin, " ", Percent(s.gpu_us, all_us)));
  if (!origins.empty())
    absl::StrAppend(&headline, " (of the GPU time, by who made the graphs: ", absl::StrJoin(origins, ", "), ")");
  absl::StrAppend(&headline, "; launched one by one: ", Plural(total.eager_kernels, "kernel", "kernels"), ", ",
                  Us(total.eager_gpu_us));
  return {headline, absl::StrCat("over ", coverage.scope)};
}

CellTable MakeCoverageStepTable(const Coverage& coverage, size_t max_rows) {
  CellTable table;
  table.header = {"step",        "eager kernels", "eager GPU", "graphed kernels",
                  "graphed GPU", "graphed share", "graphed by"};
  for (const StepCoverage& step : coverage.steps) {
    if (table.rows.size() == max_rows) {
      ++table.omitted;
      continue;
    }
    const double graphed_us = GraphedUs(step);
    table.rows.push_back({step.label, absl::StrCat(step.eager_kernels), Us(step.eager_gpu_us),
                          absl::StrCat(GraphedKernels(step)), Us(graphed_us),
                          Percent(graphed_us, graphed_us + step.eager_gpu_us), ByOrigin(step)});
  }
  table.omitted += coverage.dropped_steps;
  return table;
}

CellTable MakeRemainderTable(const Coverage& coverage) {
  CellTable table;
  table.header = {"kernel", "GPU time", "of eager", "launches", "steps", "where", "reason", "why"};
  const std::string* previous = nullptr;
  for (const EagerRemainder& r : coverage.remainders) {
    // One reason for many call sites is said once: the rows below it say "as above".
    const bool repeated = previous != nullptr && *previous == r.detail && !r.detail.empty();
    table.rows.push_back({ShortKernel(r.kernel), Us(r.gpu_us), Percent(r.gpu_us, coverage.total.eager_gpu_us),
                          absl::StrCat(r.launches), absl::StrCat(r.steps), RemainderWhere(r.where), r.reason,
                          repeated ? "as above" : r.detail});
    previous = &r.detail;
  }
  table.omitted = coverage.more_remainders;
  return table;
}

std::string CoverageText(const Coverage& coverage, size_t max_step_rows) {
  std::string out;
  for (const std::string& line : CoverageHeadline(coverage)) absl::StrAppend(&out, "  ", LineText(line), "\n");
  if (coverage.steps_counted == 0) return out;
  const CellTable steps = MakeCoverageStepTable(coverage, max_step_rows);
  absl::StrAppend(&out, AlignedTable(steps.header, steps.rows));
  if (steps.omitted > 0)
    absl::StrAppend(&out, "  ... and ", Plural(steps.omitted, "more step", "more steps"),
                    " (--format json lists them)\n");
  const CellTable remainders = MakeRemainderTable(coverage);
  if (remainders.rows.empty()) return out;
  absl::StrAppend(&out, "  largest eager remainders (GPU time) and why they are not graphed\n");
  absl::StrAppend(&out, AlignedTable(remainders.header, remainders.rows));
  if (remainders.omitted > 0)
    absl::StrAppend(&out, "  ... and ", Plural(remainders.omitted, "more call site", "more call sites"), "\n");
  return out;
}

}  // namespace graphcheck
