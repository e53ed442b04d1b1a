// The one quantile rule of step and kernel timings, shared by the trace's metrics (analysis/), the report's drawn
// steps and the engine's timings (engine/): the nearest rank, ties to the lower rank, so that the median of an even
// count is the lower middle value (of two steps, the second, warm one rather than the cold first: a program's first
// step carries its first-call work). Always a value some step had.
#ifndef GRAPHCHECK_CORE_QUANTILE_H_
#define GRAPHCHECK_CORE_QUANTILE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace graphcheck {

// The 0-based rank of quantile q (0..1) among n sorted values; n > 0.
inline size_t QuantileRank(size_t n, double q) {
  const double exact = std::clamp(q, 0.0, 1.0) * static_cast<double>(n - 1);
  return static_cast<size_t>(std::max(0.0, std::ceil(exact - 0.5)));
}

// Quantile q of `values`, 0 when there are none.
inline double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const size_t rank = QuantileRank(values.size(), q);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
  return values[rank];
}

}  // namespace graphcheck

#endif  // GRAPHCHECK_CORE_QUANTILE_H_
