#include "core/metrics.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace graphcheck::metric {

const std::vector<const Spec*>& All() {
  static const std::vector<const Spec*>* const kAll = new std::vector<const Spec*>{
#include "core/metric_list.inc"
  };
  return *kAll;
}

const Metric* FindIn(const std::vector<Metric>& metrics, absl::string_view name) {
  for (const Metric& metric : metrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

namespace {

const Spec* FindExact(absl::string_view name) {
  for (const Spec* spec : All()) {
    if (name == spec->name) return spec;
  }
  return nullptr;
}

}  // namespace

void SplitScopedName(absl::string_view scoped, std::string* name, MetricScope* scope) {
  *scope = MetricScope();
  for (absl::string_view prefix : {"pid", "rank"}) {
    if (!absl::StartsWith(scoped, prefix)) continue;
    const size_t dot = scoped.find('.');
    const absl::string_view number =
        scoped.substr(prefix.size(), dot == absl::string_view::npos ? 0 : dot - prefix.size());
    uint32_t value = 0;
    if (number.empty() || !std::all_of(number.begin(), number.end(), absl::ascii_isdigit)) continue;
    if (prefix == "pid" && absl::SimpleAtoi(number, &value)) scope->pid = value;
    scoped.remove_prefix(dot + 1);
  }
  if (FindExact(scoped) != nullptr) {
    *name = std::string(scoped);
    return;
  }
  if (absl::ConsumeSuffix(&scoped, ".min")) {
    scope->extreme = MetricScope::Extreme::kMin;
  } else if (absl::ConsumeSuffix(&scoped, ".max")) {
    scope->extreme = MetricScope::Extreme::kMax;
  }
  // NAME.ORIGIN of a metric reported per maker of graphs (Spec::by_origin).
  const size_t last = scoped.rfind('.');
  const Spec* shared = last == absl::string_view::npos ? nullptr : FindExact(scoped.substr(0, last));
  if (FindExact(scoped) == nullptr && shared != nullptr && shared->by_origin) {
    scope->origin = std::string(scoped.substr(last + 1));
    scoped = scoped.substr(0, last);
  }
  *name = std::string(scoped);
}

const Spec* Find(absl::string_view name) {
  if (const Spec* spec = FindExact(name)) return spec;
  std::string unscoped;
  MetricScope scope;
  SplitScopedName(name, &unscoped, &scope);
  return FindExact(unscoped);
}

}  // namespace graphcheck::metric
