#include "cli/analyze_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/iterations.h"
#include "checks/analyze.h"
#include "checks/trace/launch_model_options.h"
#include "cli/catalog.h"
#include "cli/progress.h"
#include "core/file_io.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> traces;
  IterationFlags iteration;
  std::string stderr_path;
  OutputOptions output;
};

int Analyze(const AnalyzeOptions& options, const CommandContext& context) {
  absl::StatusOr<CommandSettings> settings = ResolveSettings(options.output);
  if (!settings.ok()) return FailWith(settings.status());
  std::vector<std::string> stderr_lines;
  if (!options.stderr_path.empty()) {
    absl::StatusOr<std::string> text = ReadInputFile(options.stderr_path, kStderrInput);
    if (!text.ok()) return FailWith(text.status());
    stderr_lines = absl::StrSplit(*text, '\n');
  }
  Report report = NewReport("analyze", context);
  if (!options.traces.empty()) report.subject = options.traces.front();
  if (absl::Status s = AnalyzeTraceFilesInto(options.traces, options.stderr_path.empty() ? nullptr : &stderr_lines,
                                             options.iteration, settings->checks, &report, TraceOrigin::kUserPaths);
      !s.ok()) {
    return FailWith(s);
  }
  return EmitReport(report, settings->output);
}

}  // namespace

void AddIterationFlags(CLI::App* command, IterationFlags* flags) {
  command->add_option("--region", flags->region,
                      "NVTX range that marks one step of the region to graph (default: steps found by repetition)");
  command->add_option("--step-range", flags->step_range,
                      "Steps to analyze, FIRST:LAST (0-based, LAST excluded; default 1: skips the first)");
}

namespace {

// How many traces are analyzed at once: one per core, at most 8 (each holds its trace in memory);
// GRAPHCHECK_ANALYSIS_THREADS overrides.
size_t AnalysisThreads(size_t traces) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* set = std::getenv("GRAPHCHECK_ANALYSIS_THREADS"); set != nullptr && std::atoi(set) > 0) {
    threads = static_cast<size_t>(std::atoi(set));
  } else {
    threads = std::min<size_t>(threads, 8);
  }
  return std::max<size_t>(1, std::min(threads, traces));
}

// The analysis' settings, made once: the steps from --region and --step-range, the launch model from the options the
// user set for it.
absl::StatusOr<analysis::AnalysisSettings> AnalysisSettingsFrom(const IterationFlags& flags,
                                                                const CheckOptions& check_options) {
  analysis::AnalysisSettings settings;
  settings.steps.region = flags.region;
  if (!flags.step_range.empty()) {
    if (absl::Status s = analysis::ParseStepRange(flags.step_range, &settings.steps); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--step-range: ", s.message()));
    }
  }
  settings.launch = checks::LaunchModelFromOptions(check_options);
  return settings;
}

// What tells one job's processes from another's, kept once the trace is dropped.
struct ProcessIdentity {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  std::string host;
  int32_t rank = -1;
  int32_t world_size = -1;
  uint64_t start_ns = 0;   // 0: not known
  uint64_t last_ns = 0;    // its recorded end or its last record, on the same wall clock; 0: not known
  std::string rendezvous;  // "MASTER_ADDR:MASTER_PORT", "" when not recorded

  // When the trace shows the process alive; a time not known is the whole run.
  uint64_t From() const { return start_ns; }
  uint64_t Until() const { return last_ns == 0 ? ~uint64_t{0} : std::max(start_ns, last_ns); }
};

// The last time the trace shows its process alive: the end the recorder wrote, else its last record (a killed
// process writes no end).
uint64_t LastSeen(const trace::Trace& trace) {
  uint64_t last = trace.integrity.end_time_ns;
  for (const trace::ApiCall& call : trace.api_calls) last = std::max(last, call.end_ns);
  for (const trace::KernelActivity& kernel : trace.kernels) last = std::max(last, kernel.end_ns);
  for (const trace::Hang& hang : trace.hangs) last = std::max(last, hang.time_ns);
  if (!trace.nvtx.empty()) last = std::max(last, trace.nvtx.back().time_ns);
  if (!trace.probe_events.empty()) last = std::max(last, trace.probe_events.back().time_ns);
  return last;
}

ProcessIdentity IdentityOf(const trace::Trace& trace) {
  const trace::ProcessInfo& process = trace.process;
  ProcessIdentity identity{process.pid,        process.parent_pid, process.hostname, process.rank,
                           process.world_size, process.start_ns,   LastSeen(trace),  ""};
  const std::string* address = trace.environment.Get("MASTER_ADDR");
  const std::string* port = trace.environment.Get("MASTER_PORT");
  if (address != nullptr && port != nullptr) identity.rendezvous = absl::StrCat(*address, ":", *port);
  return identity;
}

// Groups processes into jobs: the ranks of one world size and rendezvous that were alive at the same time (a rank
// without a rendezvous joins every rank of its world size: synthetic and MPI-launched jobs record none), a launcher
// and the processes it started on its host (torchrun's agent, a forked worker; the child started after it), and the
// processes one launcher started.
class JobGroups {
 public:
  explicit JobGroups(const std::vector<ProcessIdentity>& processes) : parent_(processes.size()) {
    for (size_t i = 0; i < parent_.size(); ++i) parent_[i] = i;
    std::map<std::pair<int32_t, std::string>, std::vector<size_t>> rendezvous;
    std::set<int32_t> unnamed;  // the world sizes of ranks without a rendezvous
    std::map<std::pair<std::string, uint32_t>, size_t> by_pid;
    std::map<std::pair<std::string, uint32_t>, size_t> by_parent;
    for (size_t i = 0; i < processes.size(); ++i) {
      const ProcessIdentity& p = processes[i];
      if (p.rank >= 0 && p.world_size > 1) {
        rendezvous[{p.world_size, p.rendezvous}].push_back(i);
        if (p.rendezvous.empty()) unnamed.insert(p.world_size);
      }
      by_pid.emplace(std::make_pair(p.host, p.pid), i);
      if (p.parent_pid != 0) JoinFirst(&by_parent, {p.host, p.parent_pid}, i);
    }
    // The ranks of a world size are one set when one of them named no rendezvous (it pairs with every other).
    std::map<int32_t, std::vector<size_t>> worlds;
    for (const auto& [key, ranks] : rendezvous) {
      if (unnamed.count(key.first) == 0) {
        JoinCoexisting(ranks, processes);
      } else {
        worlds[key.first].insert(worlds[key.first].end(), ranks.begin(), ranks.end());
      }
    }
    for (const auto& [world_size, ranks] : worlds) JoinCoexisting(ranks, processes);
    for (size_t i = 0; i < processes.size(); ++i) {
      const ProcessIdentity& child = processes[i];
      auto launcher = by_pid.find({child.host, child.parent_pid});
      if (launcher == by_pid.end()) continue;
      const ProcessIdentity& parent = processes[launcher->second];
      if (parent.start_ns == 0 || child.start_ns == 0 || parent.start_ns <= child.start_ns) Join(i, launcher->second);
    }
  }
  size_t Of(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

 private:
  // Ranks of one job are alive at the same time: they meet at the rendezvous and at every collective. Two runs that
  // used one MASTER_ADDR:MASTER_PORT ran one after another (the port is taken while a run holds it), so `ranks` are
  // joined where their lives overlap, directly or through others, allowing for hosts' clocks a second apart.
  void JoinCoexisting(std::vector<size_t> ranks, const std::vector<ProcessIdentity>& processes) {
    constexpr uint64_t kClockSkewNs = 1'000'000'000;
    std::sort(ranks.begin(), ranks.end(),
              [&](size_t a, size_t b) { return processes[a].From() < processes[b].From(); });
    size_t first = ranks.front();  // of the overlapping lives seen so far
    uint64_t until = processes[first].Until();
    for (size_t i : ranks) {
      const ProcessIdentity& p = processes[i];
      if (p.From() > until && p.From() - until > kClockSkewNs) {
        first = i;
        until = p.Until();
        continue;
      }
      Join(i, first);
      until = std::max(until, p.Until());
    }
  }
  void Join(size_t a, size_t b) { parent_[Of(a)] = Of(b); }
  // Joins `i` to the first process that had `key`.
  template <typename Key>
  void JoinFirst(std::map<Key, size_t>* firsts, const Key& key, size_t i) {
    auto [it, first] = firsts->emplace(key, i);
    if (!first) Join(i, it->second);
  }
  std::vector<size_t> parent_;
};

// OK when the traces are of one job; else InvalidArgument naming how many jobs and two traces of different ones:
// merging unrelated runs makes one "job" whose verdict belongs to none of them.
absl::Status CheckOneJob(const std::vector<std::string>& files, const std::vector<ProcessIdentity>& processes) {
  JobGroups groups(processes);
  std::vector<bool> seen(processes.size(), false);
  size_t jobs = 0;
  size_t other = 0;
  for (size_t i = 0; i < processes.size(); ++i) {
    const size_t group = groups.Of(i);
    if (seen[group]) continue;
    seen[group] = true;
    if (++jobs == 2) other = i;
  }
  if (jobs < 2) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the ", files.size(), " traces are of ", jobs, " separate jobs, not one: ", files[0], " (pid ",
                   processes[0].pid, ") and ", files[other], " (pid ", processes[other].pid,
                   ") share no launcher, parent process or rank rendezvous in use at the same time; analyze one "
                   "job's traces at a time"));
}

// One trace, read, analyzed and dropped by a worker.
struct AnalyzedTrace {
  absl::Status status;
  ProcessIdentity identity;
  checks::ProcessResult result;
  analysis::StepSelectionCount selection;
  std::vector<std::string> read_warnings;
  std::optional<GpuInfo> gpu;
};

AnalyzedTrace ReadAndAnalyze(const std::string& path, const analysis::AnalysisSettings& settings, bool check_steps,
                             const CheckSettings& checks) {
  AnalyzedTrace out;
  absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path);
  if (!trace.ok()) {
    out.status = trace.status();  // it names the path already
    return out;
  }
  // Damage the reader stepped over goes to stderr and the step's message too (trace-incomplete reports it as well).
  out.read_warnings = trace->read_warnings;
  out.identity = IdentityOf(*trace);
  if (!trace->devices.empty()) out.gpu = trace->devices.front().gpu;
  out.selection = analysis::CountStepSelection(*trace, settings.steps, check_steps);
  out.result = checks::AnalyzeProcess(*trace, settings, BuiltinChecks(), checks.selection, checks.options);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    const size_t before = files.size();
    for (auto it = std::filesystem::recursive_directory_iterator(path, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      if (it->path().extension() == ".gctrace" && it->is_regular_file(error)) files.push_back(it->path().string());
    }
    if (error) return absl::InvalidArgumentError(absl::StrCat("cannot list folder '", path, "': ", error.message()));
    if (files.size() == before) {
      return absl::InvalidArgumentError(absl::StrCat("folder '", path, "' holds no .gctrace file"));
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

absl::Status AnalyzeTraceFilesInto(const std::vector<std::string>& paths, const std::vector<std::string>* stderr_lines,
                                   const IterationFlags& flags, const CheckSettings& checks, Report* report,
                                   TraceOrigin origin) {
  absl::StatusOr<analysis::AnalysisSettings> settings = AnalysisSettingsFrom(flags, checks.options);
  if (!settings.ok()) return settings.status();
  absl::StatusOr<std::vector<std::string>> files = ExpandTracePaths(paths);
  if (!files.ok()) return files.status();
  // The file the report is about, where SARIF points a finding with no line of its own: a folder given (a job's)
  // names its first trace, since code scanning shows a file, not a folder.
  if (std::error_code error; report->subject.empty() || std::filesystem::is_directory(report->subject, error)) {
    report->subject = files->front();
  }
  const auto start = std::chrono::steady_clock::now();
  // Each trace is read, analyzed and dropped by one of a few workers, so memory holds a few traces whatever the job's
  // size. A trace that cannot be read fails the whole analysis before any report is written.
  std::vector<AnalyzedTrace> analyzed(files->size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files->size(); i = next++) {
      analyzed[i] = ReadAndAnalyze((*files)[i], *settings, !flags.step_range.empty(), checks);
    }
  };
  std::vector<std::thread> workers;
  for (size_t w = 1; w < AnalysisThreads(files->size()); ++w) workers.emplace_back(work);
  ShowProgress(absl::StrCat("analyzing ", Plural(files->size(), "trace", "traces")));
  work();
  for (std::thread& worker : workers) worker.join();
  std::vector<checks::ProcessResult> processes;
  std::vector<analysis::StepSelectionCount> selections;
  std::vector<ProcessIdentity> identities;
  size_t warnings = 0;
  for (size_t i = 0; i < analyzed.size(); ++i) {
    AnalyzedTrace& trace = analyzed[i];
    if (!trace.status.ok()) return trace.status;
    identities.push_back(std::move(trace.identity));
    if (!trace.read_warnings.empty()) EndProgress();
    PrintReadWarnings((*files)[i], trace.read_warnings);
    warnings += trace.read_warnings.size();
    if (!report->machine.gpu && trace.gpu) report->machine.gpu = trace.gpu;
    selections.push_back(std::move(trace.selection));
    processes.push_back(std::move(trace.result));
  }
  if (origin == TraceOrigin::kUserPaths) {
    if (absl::Status s = CheckOneJob(*files, identities); !s.ok()) return s;
  }
  analysis::IterationOptions judged = settings->steps;
  if (!flags.region_must_match) judged.region.clear();
  if (absl::Status s = analysis::JudgeStepSelection(selections, judged, !flags.step_range.empty()); !s.ok()) {
    return s;
  }
  // By rank, then pid: the same report whichever order the files were found in.
  std::stable_sort(
      processes.begin(), processes.end(), [](const checks::ProcessResult& a, const checks::ProcessResult& b) {
        return std::make_pair(a.summary.rank, a.summary.pid) < std::make_pair(b.summary.rank, b.summary.pid);
      });
  checks::AnalysisResult result =
      checks::MergeProcesses(std::move(processes), stderr_lines, BuiltinChecks(), checks.selection, checks.options);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report->steps.push_back(
      Step{"analyze", StepStatus::kOk, ms,
           absl::StrCat(Plural(files->size(), "trace", "traces"),
                        warnings ? absl::StrCat(", ", Plural(warnings, "read warning", "read warnings")) : "")});
  AddChecksRun(std::move(result.checks_run), report);
  for (Finding& finding : result.findings) report->findings.push_back(std::move(finding));
  report->metrics.insert(report->metrics.end(), result.metrics.begin(), result.metrics.end());
  report->timeline = std::move(result.timeline);
  report->coverage = std::move(result.coverage);
  report->ranks = std::move(result.ranks);
  return absl::OkStatus();
}

void AddAnalyzeCommand(CLI::App* app, CommandContext* context) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app->add_subcommand("analyze", "Analyze trace files recorded by graphcheck run");
  command
      ->add_option("TRACE", options->traces,
                   "Trace files (one per process), or folders of them: every rank of a job, each node's folder")
      ->required();
  AddIterationFlags(command, &options->iteration);
  command->add_option("--stderr", options->stderr_path,
                      "The program's stderr, saved to a file: known error messages map to checks");
  AddOutputOptions(command, &options->output);
  command->callback([options, context] { context->exit_code = Analyze(*options, *context); });
}

}  // namespace graphcheck
