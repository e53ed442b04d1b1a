// The rule every numerics check applies when it compares graphed against eager (issue measurements on an H100:
// two eager runs of ResNet-18 from the same state differ by up to 16% in loss after 20 SGD steps, yet with
// deterministic kernels they, and the graphed run, are bitwise equal). So:
// - where the engine asked for deterministic kernels and a second eager run reproduced the first bitwise, graphed
//   must equal eager bitwise: any difference is a finding;
// - otherwise a difference counts when it exceeds atol + rtol(precision) x scale + spread-factor x the eager-vs-eager
//   spread measured in the same run: never a fixed tolerance alone, never eager's own noise;
// - but the spread is noise only when the repeat's first step (same state, nothing accumulated yet) agrees with the
//   eager run's within atol + rtol: a first step that already differs means the model keeps state outside its
//   parameters and buffers (a per-call Python counter), which the engine cannot reset and a graph freezes. Then the
//   spread is not used and the evidence says why;
// - a first-step tensor is allowed the largest relative spread that any tensor of its role (outputs, gradients) showed:
//   seen on an H100 with --numerics native, ResNet-18's bn1.bias gradient equal in eager and its repeat but not in the
//   graphed run, because nondeterministic kernels (atomics in convolution and batch-norm backward) touch many tensors
//   and one repeat reproduces some of them by chance.
#ifndef GRAPHCHECK_CHECKS_ENGINE_NUMERICS_RULE_H_
#define GRAPHCHECK_CHECKS_ENGINE_NUMERICS_RULE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/check.h"
#include "engine/run/engine_run.h"

namespace graphcheck::checks {

// The options every numerics check takes, with their defaults.
std::vector<CheckOption> NumericsRuleOptions();

class NumericsRule {
 public:
  NumericsRule(const EngineRun& run, const BoundOptions& options);
  // The rule for the outputs of one graphed call compared under `graphcheck run --shadow` (trace::ShadowComparison):
  // never bitwise (the program chose its kernels); the spread is the second eager forward's on the same input and
  // state, noise only when every output's is within atol + rtol.
  NumericsRule(absl::string_view precision, const std::vector<NumericsSample>& call_outputs,
               const BoundOptions& options);
  // The rule for the tensors one replay of a program's own capture wrote, against its body's call run twice eagerly
  // under `graphcheck run --shadow`: never bitwise; the second eager run's spread is always noise (the probe put back
  // every tensor the call wrote and every random source before each run, so what still differs is the kernels' own
  // nondeterminism), and each role's largest relative spread is allowed every tensor of that role.
  static NumericsRule ForReplay(absl::string_view precision, const std::vector<NumericsSample>& tensors,
                                const BoundOptions& options);
  // The rule for a value that exact arithmetic determines (a .grad after accumulation, against .grad before plus the
  // gradient added): bitwise, for the reason `why` that Describe gives.
  static NumericsRule Exact(std::string why);

  bool bitwise() const { return bitwise_; }
  // The largest |graphed - eager| allowed for values of magnitude `scale` whose eager repeat differed by `spread`
  // (negative: unknown, no repeat ran).
  double Allowed(double scale, double spread) const;
  // The same for a sampled tensor, whose spread is at least its role's largest relative spread times its scale.
  double AllowedFor(const NumericsSample& sample) const;
  // One evidence line: which rule applied and why.
  std::string Describe() const;

 private:
  NumericsRule() = default;
  void SetTolerances(absl::string_view precision, const BoundOptions& options);
  void PoolRoleSpreads(const std::vector<NumericsSample>& samples, const std::vector<TensorRole>& roles);

  bool bitwise_ = false;
  std::string bitwise_reason_;  // Exact's; empty: the engine's deterministic kernels
  std::string precision_;       // "float32", "tf32", "bfloat16", "float16"
  double rtol_ = 0, atol_ = 0, spread_factor_ = 0;
  bool repeat_ran_ = false;
  bool spread_is_noise_ = false;  // the repeat's first step agrees with eager's within atol + rtol
  // Per TensorRole: the largest eager_spread / eager_abs_max over the first step's samples of that role.
  std::map<TensorRole, double> role_relative_spread_;
};

// A sampled tensor whose graphed value differs from eager by more than the rule allows.
struct SampleMismatch {
  const NumericsSample* sample = nullptr;
  double allowed = 0;
  double excess = 0;  // see Excess
};

// How far a difference exceeds what was allowed, for ranking: difference / allowed, or where nothing was allowed
// (bitwise) the difference relative to the values' scale. Within one run every comparison is of the same kind.
double Excess(double difference, double allowed, double scale);

// The samples of `roles` that differ beyond the rule, worst (largest excess) first. Non-finite elements are left to
// numerics-nonfinite: only elements finite in both runs are compared here.
std::vector<SampleMismatch> FindMismatches(const std::vector<NumericsSample>& samples, const NumericsRule& rule,
                                           const std::vector<TensorRole>& roles);
inline std::vector<SampleMismatch> FindMismatches(const EngineRun& run, const NumericsRule& rule,
                                                  const std::vector<TensorRole>& roles) {
  return FindMismatches(run.samples, rule, roles);
}

// Evidence lines, one per mismatching tensor (at most `limit`, then a count of the rest): name, worst element, the
// two values there, the difference and what was allowed.
std::vector<std::string> MismatchTable(const std::vector<SampleMismatch>& mismatches, size_t limit);

// Fills `finding`'s message and evidence for mismatching tensors: "the eager and the graphed run of MODEL differ in N
// of M WHAT" (`one` or `many` by M), the rule, and the table (worst first).
void DescribeMismatches(const EngineRun& run, const NumericsRule& rule, const std::vector<SampleMismatch>& mismatches,
                        TensorRole role, absl::string_view one, absl::string_view many, Finding* finding);

// True when the engine asked for deterministic kernels and the eager repeat equals the eager run bitwise: losses and
// every sample's spread.
bool EagerReproducible(const EngineRun& run);

}  // namespace graphcheck::checks

#endif  // GRAPHCHECK_CHECKS_ENGINE_NUMERICS_RULE_H_
