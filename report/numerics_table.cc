#include "report/numerics_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "report/number_text.h"

namespace graphcheck {
namespace {

double RelativeDifference(const NumericsSample& s) {
  return s.max_abs_error / std::max(std::fabs(s.eager_abs_max), std::numeric_limits<double>::min());
}

}  // namespace

CellTable MakeNumericsTable(const std::vector<NumericsSample>& samples, size_t max_rows) {
  CellTable table;
  table.header = {"tensor",
                  "role",
                  "dtype",
                  "max |graphed - eager|",
                  "relative",
                  "worst element (eager, graphed)",
                  "eager repeat spread",
                  "NaN/Inf (eager, graphed)"};
  std::vector<const NumericsSample*> order;
  for (const NumericsSample& s : samples) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const NumericsSample* a, const NumericsSample* b) {
    const int64_t a_new = a->graphed_nonfinite - a->eager_nonfinite, b_new = b->graphed_nonfinite - b->eager_nonfinite;
    return std::make_tuple(a_new > 0, RelativeDifference(*a)) > std::make_tuple(b_new > 0, RelativeDifference(*b));
  });
  for (size_t i = 0; i < order.size() && i < max_rows; ++i) {
    const NumericsSample& s = *order[i];
    table.rows.push_back({
        s.name,
        std::string(TensorRoleName(s.role)),
        s.dtype,
        NumberText(s.max_abs_error, 3, "", Notation::kSignificant),
        NumberText(RelativeDifference(s), 3, "", Notation::kSignificant),
        s.max_abs_error > 0
            ? absl::StrCat("[", s.worst_index, "] ", NumberText(s.eager_at_worst, 9, "", Notation::kSignificant), ", ",
                           NumberText(s.graphed_at_worst, 9, "", Notation::kSignificant))
            : "equal",
        s.eager_spread < 0 ? "not measured" : NumberText(s.eager_spread, 3, "", Notation::kSignificant),
        absl::StrCat(s.eager_nonfinite, ", ", s.graphed_nonfinite),
    });
  }
  table.omitted = order.size() - table.rows.size();
  return table;
}

}  // namespace graphcheck
