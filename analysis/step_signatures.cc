#include "analysis/step_signatures.h"

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/plural.h"
#include "trace/api_names.h"

namespace graphcheck::analysis {
namespace {

using trace::ApiCall;
using trace::ApiKind;

bool IsOperation(const trace::Trace& trace, const ApiCall& call) {
  return call.capture_status == trace::CaptureStatus::kNone && trace.Detail(call).return_code == 0 &&
         trace::IsGpuOperation(call.kind);
}

}  // namespace

std::vector<size_t> StepOperations(const trace::Trace& trace, const Iteration& step) {
  std::vector<size_t> operations;
  for (size_t i = step.first_call; i < step.end_call; ++i) {
    if (IsOperation(trace, trace.api_calls[i])) operations.push_back(i);
  }
  return operations;
}

StepSignatures SignSteps(const trace::Trace& trace, const std::vector<Iteration>& steps) {
  StepSignatures signatures;
  for (size_t s = 0; s < steps.size(); ++s) {
    uint64_t sequence = 0;
    uint64_t shapes = 0;
    for (size_t i = steps[s].first_call; i < steps[s].end_call; ++i) {
      const ApiCall& call = trace.api_calls[i];
      if (!IsOperation(trace, call)) continue;
      // Kernel names are interned, so within one trace the string id stands for the name.
      const trace::CallDetail& d = trace.Detail(call);
      sequence = absl::HashOf(sequence, call.kind, d.kernel_name, d.direction);
      shapes = absl::HashOf(shapes, call.kind, d.kernel_name, d.direction, d.grid, d.block, d.bytes);
    }
    signatures.sequences.push_back(sequence);
    signatures.shapes.push_back(shapes);
    signatures.all.push_back(s);
  }
  return signatures;
}

size_t MostCommonStep(const std::vector<uint64_t>& keys, const std::vector<size_t>& among) {
  struct Tally {
    size_t count = 0;
    size_t first = 0;  // earliest step with this key
  };
  absl::flat_hash_map<uint64_t, Tally> tallies;
  for (size_t s : among) {
    Tally& tally = tallies[keys[s]];
    if (tally.count++ == 0) tally.first = s;
  }
  // The most common key; among equally common keys, the one seen first. Its earliest step represents it.
  size_t best = among.front();
  for (size_t s : among) {
    const Tally& candidate = tallies[keys[s]];
    const Tally& current = tallies[keys[best]];
    if (candidate.count > current.count || (candidate.count == current.count && candidate.first < current.first)) {
      best = candidate.first;
    }
  }
  return best;
}

bool TrustedSteps(const Iterations& iterations, size_t steps, size_t with_common_sequence) {
  constexpr size_t kMinCommon = 3;
  return !iterations.eager_by_repetition || (with_common_sequence >= kMinCommon && 2 * with_common_sequence > steps);
}

bool SameOperation(const trace::Trace& trace, const ApiCall& a, const ApiCall& b) {
  const trace::CallDetail& x = trace.Detail(a);
  const trace::CallDetail& y = trace.Detail(b);
  return a.kind == b.kind && x.kernel_name == y.kernel_name && x.direction == y.direction;
}

bool SameShape(const trace::Trace& trace, const ApiCall& a, const ApiCall& b) {
  const trace::CallDetail& x = trace.Detail(a);
  const trace::CallDetail& y = trace.Detail(b);
  return SameOperation(trace, a, b) && x.grid == y.grid && x.block == y.block && x.bytes == y.bytes;
}

size_t FirstDifference(const trace::Trace& trace, const std::vector<size_t>& a, const std::vector<size_t>& b,
                       bool (*same)(const trace::Trace&, const ApiCall&, const ApiCall&)) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && same(trace, trace.api_calls[a[k]], trace.api_calls[b[k]])) ++k;
  return k;
}

std::string DescribeOperation(const trace::Trace& trace, const ApiCall& call, bool with_shape) {
  const trace::CallDetail& d = trace.Detail(call);
  if (call.kind == ApiKind::kKernelLaunch) {
    std::string text = std::string(trace.String(d.kernel_name));
    if (with_shape) {
      absl::StrAppend(&text, " grid (", absl::StrJoin(d.grid, ","), ") block (", absl::StrJoin(d.block, ","), ")");
    }
    return text;
  }
  std::string text = std::string(trace.String(d.name));
  if (with_shape) absl::StrAppend(&text, " ", Plural(d.bytes, "byte", "bytes"));
  return text;
}

}  // namespace graphcheck::analysis
