#include "cli/trace_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/trace_analysis.h"
#include "core/exit_code.h"
#include "core/plural.h"
#include "core/utf8.h"
#include "report/chrome_trace.h"
#include "report/output.h"
#include "trace/trace_reader.h"

namespace graphcheck {
namespace {

struct ExportOptions {
  std::vector<std::string> traces;
  std::string output;
};

struct DumpOptions {
  std::string trace;
  size_t limit = 0;
};

// What one shadow comparison's `call` counts.
const char* ShadowSubjectLabel(trace::ShadowSubject subject) {
  switch (subject) {
    case trace::ShadowSubject::kModuleForward:
      return "call";
    case trace::ShadowSubject::kCapturedRegion:
      return "replay";
    case trace::ShadowSubject::kModuleBackward:
      return "backward of call";
    case trace::ShadowSubject::kGradAccumulation:
      return "accumulation of call";
  }
  return "call";
}

int Export(const ExportOptions& options) {
  std::vector<trace::Trace> traces;
  for (const std::string& path : options.traces) {
    absl::StatusOr<trace::Trace> trace = trace::ReadTrace(path);
    if (!trace.ok()) return FailWith(trace.status());
    PrintReadWarnings(path, trace->read_warnings);
    traces.push_back(*std::move(trace));
  }
  std::vector<const trace::Trace*> pointers;
  for (const trace::Trace& t : traces) pointers.push_back(&t);
  // The capture-time context of replayed kernels comes from the analysis layer (report/ sits beside it): one
  // analysis per trace, whose NVTX index is built at its first question.
  std::map<const trace::Trace*, std::unique_ptr<analysis::TraceAnalysis>> analyses;
  const CallLocator locate = [&analyses](const trace::Trace& trace, size_t call) {
    std::unique_ptr<analysis::TraceAnalysis>& analysis = analyses[&trace];
    if (analysis == nullptr) analysis = std::make_unique<analysis::TraceAnalysis>(trace);
    return analysis->Locate(call);
  };
  if (absl::Status status = WriteOutput(options.output, TraceToChromeJson(pointers, locate)); !status.ok()) {
    return FailWith(status);
  }
  return kExitClean;
}

std::string Summary(const std::string& path, const trace::Trace& t, const trace::TraceFileStats& stats) {
  std::string out = absl::StrFormat("trace: %s\nformat: %d.%d, writer pid %d, %s, %s on disk\n", LineText(path),
                                    stats.major_version, stats.minor_version, stats.writer_pid,
                                    Plural(stats.chunks, "chunk", "chunks"), Plural(stats.file_bytes, "byte", "bytes"));
  const trace::ProcessInfo& p = t.process;
  absl::StrAppendFormat(&out, "process: pid %d, parent %d, rank %d, local rank %d, world size %d, host %s\n", p.pid,
                        p.parent_pid, p.rank, p.local_rank, p.world_size, LineText(p.hostname));
  absl::StrAppend(&out, "command: ", LineText(absl::StrJoin(p.command_line, " ")), "\n");
  for (const trace::DeviceInfo& d : t.devices) {
    absl::StrAppendFormat(&out, "device %d: %s (compute capability %d.%d, driver %s)\n", d.index, LineText(d.gpu.name),
                          d.gpu.cc_major, d.gpu.cc_minor, LineText(d.gpu.driver));
  }
  absl::StrAppend(&out, "recorder: ", t.recorder.subscribed ? "subscribed" : "NOT subscribed");
  if (!t.recorder.other_subscriber.empty())
    absl::StrAppend(&out, " (other subscriber: ", LineText(t.recorder.other_subscriber), ")");
  if (!t.recorder.message.empty()) absl::StrAppend(&out, ": ", LineText(t.recorder.message));
  absl::StrAppend(&out, "\nenvironment: ", Plural(t.environment.variables().size(), "variable", "variables"), "\n\n");

  absl::StrAppendFormat(&out, "%-16s %12s %14s %14s\n", "record", "count", "bytes", "bytes/record");
  uint64_t total_records = 0, total_bytes = 0;
  for (size_t type = 0; type < stats.records.size(); ++type) {
    if (stats.records[type] == 0) continue;
    total_records += stats.records[type];
    total_bytes += stats.record_bytes[type];
    absl::StrAppendFormat(&out, "%-16s %12d %14d %14.1f\n", trace::TraceRecordTypeName(type), stats.records[type],
                          stats.record_bytes[type],
                          static_cast<double>(stats.record_bytes[type]) / static_cast<double>(stats.records[type]));
  }
  absl::StrAppendFormat(&out, "%-16s %12d %14d %14.1f\n", "total", total_records, total_bytes,
                        total_records == 0 ? 0.0 : static_cast<double>(total_bytes) / total_records);
  absl::StrAppend(&out, "\nwarnings: ", t.read_warnings.size(), "\n");
  for (const std::string& w : t.read_warnings) absl::StrAppend(&out, "  ", LineText(w), "\n");
  absl::StrAppend(&out, "\ngraph manifests: ", t.graph_manifests.size(), "\n");
  for (const trace::GraphManifest& m : t.graph_manifests) {
    absl::StrAppendFormat(
        &out, "  graph %d at %d tid %d: %s, %s, %s, %s; %s%s; read in %.1f us%s\n", m.graph_id, m.time_ns, m.thread_id,
        Plural(m.kernel_nodes, "kernel", "kernels"), Plural(m.copy_nodes, "copy", "copies"),
        Plural(m.set_nodes, "set", "sets"), Plural(m.other_nodes, "other node", "other nodes"),
        Plural(m.uses.size(), "address", "addresses"),
        m.uses_left_out == 0 ? "" : absl::StrCat(" (", m.uses_left_out, " more left out)"), m.read_ns / 1e3,
        m.unread_nodes == 0 ? std::string()
                            : absl::StrCat("; NOT AUDITED: ", Plural(m.unread_nodes, "node", "nodes"), " unread (",
                                           LineText(t.String(m.unread_reason)), ")"));
  }
  return out;
}

std::string Listing(const trace::Trace& t, size_t limit) {
  std::string out;
  absl::StrAppend(&out, "\napi calls (first ", std::min(limit, t.api_calls.size()), " of ", t.api_calls.size(), "):\n");
  for (size_t i = 0; i < std::min(limit, t.api_calls.size()); ++i) {
    const trace::ApiCall& c = t.api_calls[i];
    const trace::CallDetail& d = t.Detail(c);
    absl::StrAppendFormat(&out, "  %d +%dns tid %d %s [%s] corr %d stream %d rc %d%s%s\n", c.start_ns,
                          c.end_ns - c.start_ns, c.thread_id, t.String(d.name), trace::ApiKindName(c.kind),
                          c.correlation_id, c.stream_id, d.return_code,
                          c.capture_status == trace::CaptureStatus::kNone ? "" : " capturing",
                          d.kernel_name == 0 ? "" : absl::StrCat(" kernel ", LineText(t.String(d.kernel_name))));
  }
  absl::StrAppend(&out, "kernels (first ", std::min(limit, t.kernels.size()), " of ", t.kernels.size(), "):\n");
  for (size_t i = 0; i < std::min(limit, t.kernels.size()); ++i) {
    const trace::KernelActivity& k = t.kernels[i];
    const trace::KernelShape& shape = t.Shape(k);
    absl::StrAppendFormat(&out, "  %d +%dns device %d stream %d corr %d graph %d%s %s\n", k.start_ns,
                          k.end_ns - k.start_ns, shape.device, k.stream_id, k.correlation_id, k.graph_id,
                          k.graph_id == 0 ? "" : absl::StrCat(" node ", shape.graph_node_id),
                          LineText(t.String(shape.name)));
  }
  absl::StrAppend(&out, "nvtx (first ", std::min(limit, t.nvtx.size()), " of ", t.nvtx.size(), "):\n");
  for (size_t i = 0; i < std::min(limit, t.nvtx.size()); ++i) {
    const trace::NvtxEvent& n = t.nvtx[i];
    absl::StrAppendFormat(&out, "  %d tid %d kind %d range %d %s%s\n", n.time_ns, n.thread_id, static_cast<int>(n.kind),
                          n.range_id, n.domain == 0 ? "" : absl::StrCat(LineText(t.String(n.domain)), ": "),
                          LineText(t.String(n.message)));
  }
  absl::StrAppend(&out, "python probe events (first ", std::min(limit, t.probe_events.size()), " of ",
                  t.probe_events.size(), "):\n");
  for (size_t i = 0; i < std::min(limit, t.probe_events.size()); ++i) {
    const trace::ProbeEvent& p = t.probe_events[i];
    absl::StrAppendFormat(&out, "  %d tid %d %s origin %s graph %d pool %d value %d %s %s\n", p.time_ns, p.thread_id,
                          trace::ProbeEventKindName(p.kind), trace::ProbeOriginName(p.origin), p.graph, p.pool, p.value,
                          LineText(t.String(p.type)), LineText(t.String(p.text).substr(0, 200)));
  }
  size_t frees = 0;
  for (const trace::AllocatorEvent& a : t.allocations) frees += a.action == trace::AllocatorEvent::Action::kFree;
  absl::StrAppend(&out, "allocator history: ", Plural(t.allocations.size() - frees, "allocation", "allocations"), ", ",
                  Plural(frees, "free", "frees"), " (first ", std::min(limit, t.allocations.size()), " listed):\n");
  for (size_t i = 0; i < std::min(limit, t.allocations.size()); ++i) {
    const trace::AllocatorEvent& a = t.allocations[i];
    absl::StrAppendFormat(&out, "  %d device %d %s 0x%x %s\n", a.time_ns, a.device,
                          a.action == trace::AllocatorEvent::Action::kAlloc ? "alloc" : "free", a.address,
                          Plural(a.bytes, "byte", "bytes"));
  }
  absl::StrAppend(&out, "shadow comparisons (first ", std::min(limit, t.shadow_comparisons.size()), " of ",
                  t.shadow_comparisons.size(), "):\n");
  for (size_t i = 0; i < std::min(limit, t.shadow_comparisons.size()); ++i) {
    const trace::ShadowComparison& c = t.shadow_comparisons[i];
    absl::StrAppendFormat(&out, "  %d tid %d %s %s %d %s %s (%s) max |graphed - eager| %g at [%d], spread %g%s\n",
                          c.time_ns, c.thread_id, LineText(t.String(c.module_type)), ShadowSubjectLabel(c.subject),
                          c.call, LineText(t.String(c.name)), LineText(t.String(c.dtype)),
                          LineText(t.String(c.precision)), c.max_abs_error, c.worst_index, c.eager_spread,
                          c.random       ? " (random: not compared)"
                          : c.draws == 0 ? ""
                                         : absl::StrCat(" (drew: ", LineText(t.String(c.draws)), ")"));
  }
  for (const trace::Hang& h : t.hangs) {
    absl::StrAppendFormat(&out, "hang: tid %d waited in %s on stream %d since %d, past %d ns; last graph %d\n",
                          h.thread_id, LineText(t.String(h.call)), h.stream_id, h.since_ns, h.timeout_ns,
                          h.last_graph_id);
  }
  for (const trace::ThreadName& thread : t.thread_names) {
    absl::StrAppendFormat(&out, "thread %d: %s\n", thread.thread_id, LineText(t.String(thread.name)));
  }
  absl::StrAppend(&out, "memory activity: ", t.memory.size(), ", graph launches: ", t.graph_launches.size(), "\n");
  for (const trace::GraphManifest& m : t.graph_manifests) {
    absl::StrAppend(&out, "graph ", m.graph_id, " manifest (first ", std::min(limit, m.uses.size()), " of ",
                    Plural(m.uses.size(), "address", "addresses"), "):\n");
    for (size_t i = 0; i < std::min(limit, m.uses.size()); ++i) {
      const trace::GraphMemoryUse& use = m.uses[i];
      absl::StrAppendFormat(&out, "  0x%x %s%s\n", use.address, trace::GraphMemoryAccessName(use.access),
                            use.bytes == 0 ? "" : absl::StrCat(" ", Plural(use.bytes, "byte", "bytes")));
    }
  }
  return out;
}

int Dump(const DumpOptions& options) {
  trace::TraceFileStats stats;
  absl::StatusOr<trace::Trace> trace = trace::ReadTrace(options.trace, &stats);
  if (!trace.ok()) return FailWith(trace.status());
  std::string text = Summary(options.trace, *trace, stats);
  if (options.limit > 0) text += Listing(*trace, options.limit);
  if (absl::Status status = WriteOutput("", text); !status.ok()) return FailWith(status);
  return kExitClean;
}

}  // namespace

void AddTraceCommand(CLI::App* app, CommandContext* context) {
  CLI::App* trace = app->add_subcommand("trace", "Work with recorded trace files");
  trace->require_subcommand(1);

  auto export_options = std::make_shared<ExportOptions>();
  CLI::App* export_command =
      trace->add_subcommand("export", "Convert traces to Chrome trace JSON (open in Perfetto or chrome://tracing)");
  export_command->add_option("TRACE", export_options->traces, "Trace files (one process each)")->required();
  export_command->add_option("-o,--output", export_options->output, "Write the JSON to FILE (default: stdout)")
      ->check(OutputFile());
  export_command->callback([export_options, context] { context->exit_code = Export(*export_options); });

  auto dump_options = std::make_shared<DumpOptions>();
  CLI::App* dump = trace->add_subcommand("dump", "Summarize a trace: record counts and sizes, process, warnings");
  dump->add_option("TRACE", dump_options->trace, "Trace file")->required();
  dump->add_option("--limit", dump_options->limit, "Also list the first N events of each kind")
      ->check(CLI::Validator(
          [](std::string& n) { return !n.empty() && n[0] == '-' ? std::string("must be 0 or more") : std::string(); },
          "N"));
  dump->callback([dump_options, context] { context->exit_code = Dump(*dump_options); });
}

}  // namespace graphcheck
