// A trace holding `graphcheck run --shadow` comparisons (trace::ShadowComparison), built one tensor at a time, for the
// checks that judge them (numerics-forward, replay-mismatch, rng-frozen-mask). Every comparison's Python stack is the
// probe's frame, then the program's line 42 of /home/me/train.py.
#ifndef GRAPHCHECK_TESTS_CHECKS_ENGINE_SHADOW_TEST_UTIL_H_
#define GRAPHCHECK_TESTS_CHECKS_ENGINE_SHADOW_TEST_UTIL_H_

#include <string>
#include <vector>

#include "analysis/trace_analysis.h"
#include "core/check.h"
#include "core/finding.h"
#include "trace/events.h"

namespace graphcheck::testing_util {

class ShadowTrace {
 public:
  ShadowTrace() {
    trace_.python_stacks.push_back(
        {{{trace_.Intern("/opt/graphcheck/probe/graphcheck_probe/shadow.py"), 300, trace_.Intern("module_call")},
          {trace_.Intern("/home/me/train.py"), 42, trace_.Intern("step")}}});
  }
  // Tensor `name` of call (or replay) `call` of `owner` (a module, or a graph with Region()): graphed differs from
  // eager by `error`, the eager repeat by `spread`.
  ShadowTrace& Compare(uint64_t owner, uint32_t call, double error, double spread = 0, bool random = false,
                       const std::string& name = "output 0") {
    trace::ShadowComparison& c = trace_.shadow_comparisons.emplace_back();
    c.module = owner;
    c.module_type = trace_.Intern(subject_ == trace::ShadowSubject::kCapturedRegion ? "train_step" : "Block");
    c.subject = subject_;
    c.call = call;
    c.name = trace_.Intern(name);
    c.dtype = trace_.Intern("float32");
    c.precision = trace_.Intern("tf32");
    c.stack = 1;
    c.numel = 4096;
    c.max_abs_error = error;
    c.worst_index = 9;
    c.eager_at_worst = 2;
    c.graphed_at_worst = 2 + error;
    c.eager_abs_max = 2;
    c.eager_spread = spread;
    c.random = random;
    c.shadow_ns = 800'000;
    return *this;
  }
  // The last comparison's eager run drew from `sources` ("cpu", "cuda,python-random").
  ShadowTrace& Draws(const std::string& sources) {
    trace_.shadow_comparisons.back().draws = trace_.Intern(sources);
    return *this;
  }
  // Comparisons from here on are of replays of the program's captures.
  ShadowTrace& Region() { return Subject(trace::ShadowSubject::kCapturedRegion); }
  // Comparisons from here on are of `subject`.
  ShadowTrace& Subject(trace::ShadowSubject subject) {
    subject_ = subject;
    return *this;
  }
  trace::Trace& trace() { return trace_; }
  const trace::Trace& trace() const { return trace_; }

  std::vector<Finding> Run(const Check& check, const CheckOptions& options = {}) const {
    const analysis::TraceAnalysis analysis(trace_);
    CheckInputs inputs;
    analysis::AddTrace(analysis, &inputs);
    if (!check.CanRun(inputs)) return {};
    std::vector<Finding> findings;
    check.Run(inputs, BoundOptions(check.info(), options), &findings);
    return findings;
  }

 private:
  trace::Trace trace_;
  trace::ShadowSubject subject_ = trace::ShadowSubject::kModuleForward;
};

}  // namespace graphcheck::testing_util

#endif  // GRAPHCHECK_TESTS_CHECKS_ENGINE_SHADOW_TEST_UTIL_H_
