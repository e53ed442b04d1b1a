// A finding: one diagnosed problem, with where it happened and how to fix it. Findings are data, never errors.
#ifndef GRAPHCHECK_CORE_FINDING_H_
#define GRAPHCHECK_CORE_FINDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/severity.h"

namespace graphcheck {

// One frame of the Python stack of the thread that made a call (recorded when the program is a CPython interpreter).
struct SourceFrame {
  std::string file;      // as the interpreter knows it: "train.py", "/usr/lib/python3/site-packages/torch/..."
  int line = 0;          // 1-based; 0 = unknown
  std::string function;  // qualified name where the interpreter has one ("Model.forward")
  bool user = false;     // the program's own code, not the standard library or an installed package

  bool operator==(const SourceFrame& other) const {
    return file == other.file && line == other.line && function == other.function && user == other.user;
  }
};

// Where a finding points. Runtime findings fill the call/thread/stream/backtrace fields and, for Python programs,
// the Python stack; static (lint) findings fill the file/line/key fields. Every field is optional: empty strings and
// unset optionals are not shown.
struct Location {
  std::string api;                     // e.g. "cudaStreamSynchronize"
  std::optional<uint64_t> thread_id;   // OS thread id
  std::optional<uint64_t> stream_id;   // CUDA stream id as CUPTI reports it
  std::string nvtx_path;               // "train_step/forward/attention"
  std::vector<std::string> backtrace;  // symbolized host frames, innermost first
  std::vector<SourceFrame> python;     // Python frames, innermost first (user frames are the ones to show first)
  std::string torch_op;                // "aten::_local_scalar_dense" (Tensor.item())
  std::string file;                    // config or trace file
  int line = 0;                        // 1-based; 0 = unknown
  int column = 0;                      // 1-based; 0 = unknown
  std::string key;                     // config key or command-line flag
  std::optional<uint32_t> pid;         // process the trace came from
  std::vector<int32_t> ranks;          // a distributed job's ranks the finding holds for, ascending (merged findings)

  bool operator==(const Location& other) const;
};

// The innermost of the program's own Python frames, or null.
const SourceFrame* FirstUserFrame(const std::vector<SourceFrame>& frames);
inline const SourceFrame* FirstUserFrame(const Location& where) { return FirstUserFrame(where.python); }

// "rank 3" or "ranks 0-3,6" of a finding merged across a job's ranks (`ranks` ascending).
std::string RanksText(const std::vector<int32_t>& ranks);

struct Finding {
  std::string check_id;  // stable kebab-case id, e.g. "sync-in-capture"
  Severity severity = Severity::kWarning;
  std::string title;                      // the check's title
  std::string message;                    // what happened, one or two sentences
  std::vector<std::string> evidence;      // facts that support the message ("return code 900 from cudaMemcpyAsync")
  std::vector<std::string> consequences;  // what this root cause went on to break
  Location where;
  std::string fix;  // what to do about it
  // How many times the check saw this problem at this call site: a program that repeats one mistake a million times
  // gets one finding with a count (FoldRepeatedFindings, core/fingerprint.h), not a million findings.
  uint64_t occurrences = 1;
  // A finding the stderr-messages check made from a line of the program's stderr: the line (1-based) and the known
  // text it matched (an index into analysis::StderrRules()), for folding it into the trace's finding of the same
  // cause. Analysis-time only: reports do not carry it (its location says `<stderr>:LINE`), nor does operator==.
  struct StderrMatch {
    size_t line = 0;
    size_t rule = 0;
  };
  std::optional<StderrMatch> stderr_match;

  bool operator==(const Finding& other) const;
};

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_FINDING_H_
