#include "checks/engine/numerics_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/plural.h"

namespace graphcheck::checks {

std::vector<CheckOption> NumericsRuleOptions() {
  return {
      {"rtol-float32", "1e-4", "relative tolerance for float32 math, when eager is not reproducible", 0, 1},
      {"rtol-tf32", "1e-3", "relative tolerance for float32 models run with TF32 allowed (--numerics native)", 0, 1},
      {"rtol-bfloat16", "1e-2", "relative tolerance under bf16 autocast", 0, 1},
      {"rtol-float16", "5e-3", "relative tolerance under fp16 autocast", 0, 1},
      {"atol", "1e-6", "absolute tolerance added to the relative one", 0, 1e9},
      {"spread-factor", "4", "differences up to this many times the eager-vs-eager spread are eager's own noise", 0,
       1e9},
      {"bitwise",
       "true",
       "when eager reproduces itself bitwise, require graphed to equal it bitwise",
       0,
       1,
       {"true", "false"}},
  };
}

bool EagerReproducible(const EngineRun& run) {
  if (!run.deterministic_settings || run.eager_repeat_losses.empty()) return false;
  if (run.eager_repeat_losses.size() != run.eager_losses.size()) return false;
  for (size_t i = 0; i < run.eager_losses.size(); ++i) {
    // Bitwise: NaN in both places at the same step counts as reproduced.
    const double a = run.eager_losses[i], b = run.eager_repeat_losses[i];
    if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
  }
  return std::all_of(run.samples.begin(), run.samples.end(),
                     [](const NumericsSample& s) { return s.eager_spread == 0; });
}

namespace {

// Whether the first step, where eager and its repeat start from the same state, agrees within atol + rtol: loss and
// outputs. Gradients are left out: a reduction with cancellation (a batch-norm bias's gradient) under nondeterministic
// kernels varies far more than rtol of its scale, while a per-call host value changes the loss and the outputs.
bool FirstStepAgrees(const EngineRun& run, double atol, double rtol) {
  if (run.eager_repeat_losses.empty() || run.eager_losses.empty()) return false;
  const double loss = run.eager_losses[0], repeat = run.eager_repeat_losses[0];
  if (std::isfinite(loss) && !(std::fabs(repeat - loss) <= atol + rtol * std::fabs(loss))) return false;
  return std::all_of(run.samples.begin(), run.samples.end(), [&](const NumericsSample& s) {
    return s.role != TensorRole::kOutput || s.eager_spread <= atol + rtol * s.eager_abs_max;
  });
}

}  // namespace

void NumericsRule::SetTolerances(absl::string_view precision, const BoundOptions& options) {
  precision_ = std::string(precision);
  const std::string rtol_option = precision_ == "bfloat16"  ? "rtol-bfloat16"
                                  : precision_ == "float16" ? "rtol-float16"
                                  : precision_ == "tf32"    ? "rtol-tf32"
                                                            : "rtol-float32";
  rtol_ = options.GetDouble(rtol_option);
  atol_ = options.GetDouble("atol");
  spread_factor_ = options.GetDouble("spread-factor");
}

NumericsRule::NumericsRule(absl::string_view precision, const std::vector<NumericsSample>& call_outputs,
                           const BoundOptions& options) {
  SetTolerances(precision, options);
  repeat_ran_ = std::any_of(call_outputs.begin(), call_outputs.end(),
                            [](const NumericsSample& s) { return s.eager_spread >= 0; });
  spread_is_noise_ = repeat_ran_ && std::all_of(call_outputs.begin(), call_outputs.end(), [&](const NumericsSample& s) {
                       return s.eager_spread >= 0 && s.eager_spread <= atol_ + rtol_ * s.eager_abs_max;
                     });
}

NumericsRule::NumericsRule(const EngineRun& run, const BoundOptions& options) {
  bitwise_ = options.GetBool("bitwise") && EagerReproducible(run);
  repeat_ran_ = !run.eager_repeat_losses.empty();
  SetTolerances(run.compute_dtype == "float32" && !run.deterministic_settings ? "tf32" : run.compute_dtype, options);
  spread_is_noise_ = FirstStepAgrees(run, atol_, rtol_);
  PoolRoleSpreads(run.samples, {TensorRole::kOutput, TensorRole::kGradient});
}

NumericsRule NumericsRule::ForReplay(absl::string_view precision, const std::vector<NumericsSample>& tensors,
                                     const BoundOptions& options) {
  NumericsRule rule;
  rule.SetTolerances(precision, options);
  rule.repeat_ran_ = true;
  rule.spread_is_noise_ = true;
  rule.PoolRoleSpreads(tensors,
                       {TensorRole::kOutput, TensorRole::kGradient, TensorRole::kParameter, TensorRole::kBuffer});
  return rule;
}

NumericsRule NumericsRule::Exact(std::string why) {
  NumericsRule rule;
  rule.bitwise_ = true;
  rule.bitwise_reason_ = std::move(why);
  return rule;
}

void NumericsRule::PoolRoleSpreads(const std::vector<NumericsSample>& samples, const std::vector<TensorRole>& roles) {
  for (const NumericsSample& s : samples) {
    if (std::find(roles.begin(), roles.end(), s.role) == roles.end() || !(s.eager_spread > 0) ||
        !(s.eager_abs_max > 0) || !std::isfinite(s.eager_spread)) {
      continue;
    }
    double& largest = role_relative_spread_[s.role];
    largest = std::max(largest, s.eager_spread / s.eager_abs_max);
  }
}

double NumericsRule::AllowedFor(const NumericsSample& sample) const {
  auto pooled = role_relative_spread_.find(sample.role);
  const double role_spread = pooled == role_relative_spread_.end() ? 0 : pooled->second * sample.eager_abs_max;
  return Allowed(sample.eager_abs_max, std::max(sample.eager_spread, role_spread));
}

double NumericsRule::Allowed(double scale, double spread) const {
  if (bitwise_) return 0;
  return atol_ + rtol_ * std::fabs(scale) + (spread_is_noise_ ? spread_factor_ * std::max(spread, 0.0) : 0.0);
}

std::string NumericsRule::Describe() const {
  if (bitwise_ && !bitwise_reason_.empty()) return bitwise_reason_;
  if (bitwise_) {
    return "deterministic kernels, and a second eager run reproduced the first bitwise: graphed must equal eager "
           "bitwise";
  }
  std::string spread;
  if (!repeat_ran_) {
    spread = " (no eager repeat ran: no spread measured)";
  } else if (spread_is_noise_) {
    spread = absl::StrFormat(" + %g x the eager-vs-eager spread", spread_factor_);
  } else {
    spread =
        " (the eager repeat differs from the eager run from the same state and input: the model "
        "keeps per-call state outside its parameters and buffers, so the spread is not noise and is not used)";
  }
  return absl::StrFormat("allowed difference: %g + %g x |eager| (%s)%s", atol_, rtol_, precision_, spread);
}

double Excess(double difference, double allowed, double scale) {
  if (allowed > 0) return difference / allowed;
  return difference / std::max(std::fabs(scale), std::numeric_limits<double>::min());
}

std::vector<SampleMismatch> FindMismatches(const std::vector<NumericsSample>& samples, const NumericsRule& rule,
                                           const std::vector<TensorRole>& roles) {
  std::vector<SampleMismatch> out;
  for (const NumericsSample& sample : samples) {
    if (std::find(roles.begin(), roles.end(), sample.role) == roles.end()) continue;
    const double allowed = rule.AllowedFor(sample);
    if (!(sample.max_abs_error > allowed)) continue;
    out.push_back({&sample, allowed, Excess(sample.max_abs_error, allowed, sample.eager_abs_max)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SampleMismatch& a, const SampleMismatch& b) { return a.excess > b.excess; });
  return out;
}

std::vector<std::string> MismatchTable(const std::vector<SampleMismatch>& mismatches, size_t limit) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < mismatches.size() && i < limit; ++i) {
    const NumericsSample& s = *mismatches[i].sample;
    lines.push_back(
        absl::StrFormat("%s %s (%s, %s): worst at [%d], eager %.9g, graphed %.9g, difference %.3g (allowed %.3g)",
                        TensorRoleName(s.role), s.name, s.dtype, Plural(s.numel, "element", "elements"), s.worst_index,
                        s.eager_at_worst, s.graphed_at_worst, s.max_abs_error, mismatches[i].allowed));
  }
  if (mismatches.size() > limit) {
    lines.push_back(absl::StrCat("and ", Plural(mismatches.size() - limit, "more tensor", "more tensors")));
  }
  return lines;
}

void DescribeMismatches(const EngineRun& run, const NumericsRule& rule, const std::vector<SampleMismatch>& mismatches,
                        TensorRole role, absl::string_view one, absl::string_view many, Finding* finding) {
  const size_t sampled =
      std::count_if(run.samples.begin(), run.samples.end(), [&](const NumericsSample& s) { return s.role == role; });
  const NumericsSample& worst = *mismatches.front().sample;
  finding->message = absl::StrFormat("The eager and the graphed run of %s differ in %d of %s; the worst is %s.",
                                     run.model, mismatches.size(), Plural(sampled, one, many), worst.name);
  finding->evidence = {
      absl::StrFormat("both runs start from the same parameters, optimizer state, inputs and seed (%s scope, %s)",
                      run.scope, run.compute_dtype),
      rule.Describe()};
  for (std::string& line : MismatchTable(mismatches, 5)) finding->evidence.push_back(std::move(line));
  finding->where.key = worst.name;
}

}  // namespace graphcheck::checks
