#include "checks/engine/shadow_verdict.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "checks/engine/numerics_rule.h"
#include "core/numerics_sample.h"

namespace graphcheck::checks {
namespace {

// A replay's tensors are named role first ("parameter model.fc.weight", "state Adam exp_avg of ..."): the role and
// the rest. Optimizer state is judged as a buffer: state the step keeps.
std::pair<TensorRole, std::string> RoleAndName(absl::string_view name) {
  const size_t space = name.find(' ');
  const absl::string_view word = name.substr(0, space);
  const std::string rest(space == absl::string_view::npos ? name : name.substr(space + 1));
  if (word == "output") return {TensorRole::kOutput, rest};
  if (word == "gradient") return {TensorRole::kGradient, rest};
  if (word == "parameter") return {TensorRole::kParameter, rest};
  return {TensorRole::kBuffer, word == "buffer" || word == "state" ? rest : std::string(name)};
}

// The loosest of the precisions a call's tensors were computed in: its rule applies to all of them.
absl::string_view LoosestPrecision(const trace::Trace& trace, const std::vector<const trace::ShadowComparison*>& call) {
  static const std::vector<absl::string_view> kLooser = {"float32", "tf32", "float16", "bfloat16"};
  size_t loosest = 0;
  for (const trace::ShadowComparison* c : call) {
    auto it = std::find(kLooser.begin(), kLooser.end(), trace.String(c->precision));
    if (it != kLooser.end()) loosest = std::max<size_t>(loosest, it - kLooser.begin());
  }
  return kLooser[loosest];
}

std::vector<NumericsSample> Samples(const trace::Trace& trace,
                                    const std::vector<const trace::ShadowComparison*>& call) {
  std::vector<NumericsSample> samples;
  for (const trace::ShadowComparison* c : call) {
    NumericsSample& s = samples.emplace_back();
    static_cast<NumericsFigures&>(s) = *c;
    if (c->subject == trace::ShadowSubject::kModuleForward) {
      s.role = TensorRole::kOutput;
      s.name = std::string(trace.String(c->name));
    } else {
      std::tie(s.role, s.name) = RoleAndName(trace.String(c->name));
    }
    s.dtype = std::string(trace.String(c->dtype));
  }
  return samples;
}

// The rule a call's comparisons of `subject` are judged by.
NumericsRule RuleFor(const trace::Trace& trace, trace::ShadowSubject subject,
                     const std::vector<const trace::ShadowComparison*>& call,
                     const std::vector<NumericsSample>& samples, const BoundOptions& options) {
  switch (subject) {
    case trace::ShadowSubject::kCapturedRegion:
      return NumericsRule::ForReplay(LoosestPrecision(trace, call), samples, options);
    case trace::ShadowSubject::kGradAccumulation:
      return NumericsRule::Exact(
          "accumulation is exact: .grad after the backward must equal .grad before it plus the gradient "
          "AccumulateGrad received, bit for bit");
    case trace::ShadowSubject::kModuleForward:
    case trace::ShadowSubject::kModuleBackward:
      break;
  }
  return NumericsRule(trace.String(call.front()->precision), samples, options);
}

}  // namespace

std::string HostDraws(const trace::Trace& trace, const trace::ShadowComparison& comparison) {
  std::vector<absl::string_view> host;
  for (absl::string_view source : absl::StrSplit(trace.String(comparison.draws), ',', absl::SkipEmpty())) {
    if (source != "cuda") host.push_back(source);
  }
  return absl::StrJoin(host, ",");
}

std::vector<ShadowVerdict> JudgeShadowComparisons(const trace::Trace& trace, trace::ShadowSubject subject,
                                                  bool host_draws, const BoundOptions& options) {
  std::vector<uint64_t> order;
  std::map<uint64_t, std::map<uint32_t, std::vector<const trace::ShadowComparison*>>> calls;
  for (const trace::ShadowComparison& c : trace.shadow_comparisons) {
    if (c.random || c.subject != subject || HostDraws(trace, c).empty() == host_draws) continue;
    if (calls.count(c.module) == 0) order.push_back(c.module);
    calls[c.module][c.call].push_back(&c);
  }
  std::vector<ShadowVerdict> verdicts;
  for (uint64_t owner : order) {
    ShadowVerdict& verdict = verdicts.emplace_back();
    verdict.owner = owner;
    verdict.subject = subject;
    double worst_excess = 0;
    for (const auto& [call, tensors] : calls[owner]) {
      const std::vector<NumericsSample> samples = Samples(trace, tensors);
      const NumericsRule rule = RuleFor(trace, subject, tensors, samples, options);
      const std::vector<SampleMismatch> mismatches = FindMismatches(
          samples, rule, {TensorRole::kOutput, TensorRole::kGradient, TensorRole::kParameter, TensorRole::kBuffer});
      ++verdict.compared;
      if (host_draws && verdict.host_draws.empty()) verdict.host_draws = HostDraws(trace, *tensors.front());
      if (mismatches.empty()) continue;
      ++verdict.differing;
      if (verdict.worst != nullptr && !(mismatches.front().excess > worst_excess)) continue;
      worst_excess = mismatches.front().excess;
      verdict.worst = tensors.front();
      verdict.worst_tensors = static_cast<int>(samples.size());
      verdict.worst_differing = static_cast<int>(mismatches.size());
      verdict.worst_name =
          absl::StrCat(TensorRoleName(mismatches.front().sample->role), " ", mismatches.front().sample->name);
      verdict.table = {rule.Describe()};
      for (std::string& line : MismatchTable(mismatches, 5)) verdict.table.push_back(std::move(line));
    }
  }
  return verdicts;
}

}  // namespace graphcheck::checks
