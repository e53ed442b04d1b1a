#include "core/metrics.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

const Spec* Find(absl::string_view name) {
  // A job's per-process prefix: "pid852." (or "rank0.").
  for (absl::string_view scope : {"pid", "rank"}) {
    if (!absl::StartsWith(name, scope)) continue;
    const size_t dot = name.find('.');
    const absl::string_view number = name.substr(scope.size(), dot == absl::string_view::npos ? 0 : dot - scope.size());
    if (!number.empty() && std::all_of(number.begin(), number.end(), absl::ascii_isdigit)) name.remove_prefix(dot + 1);
  }
  if (!absl::ConsumeSuffix(&name, ".min")) absl::ConsumeSuffix(&name, ".max");
  for (const Spec* spec : All()) {
    if (name == spec->name) return spec;
  }
  // coverage.graphed_kernel_share.ORIGIN and the like: the share's spec.
  const size_t last = name.rfind('.');
  if (last != absl::string_view::npos && absl::StartsWith(name, "coverage.")) return Find(name.substr(0, last));
  return nullptr;
}

}  // namespace graphcheck::metric
